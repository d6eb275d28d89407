#!/usr/bin/env bash
# ward demo (make demo): build a plain busybox bundle with `ward spec`, show what the tenant
# policy makes of it (`ward policy explain`), run it with `ward run` under the built-in
# default tenant, let the container describe its own isolation, and look at it from the host
# while it waits. Usage: tests/demo.sh WARD_BINARY
#
# Nothing in the bundle asks for hardening: the user namespace and its host ID range, the
# seccomp filter, the capability bound, no_new_privs, the masked paths and the cgroup below
# the tenant's all come from the policy. The demo does not depend on /etc/ward: WARD_CONFIG
# points at a temporary configuration directory whose ward.json only moves lib_dir (the ID
# pool) to a temporary directory, so the built-in default tenant applies as it is.
set -euo pipefail

WARD=${1:?usage: tests/demo.sh WARD_BINARY}
[ -x "$WARD" ] || { echo "demo: $WARD is not an executable (run 'make' first)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (namespaces, mounts, cgroups); try: sudo make demo" >&2; exit 1; }
command -v jq >/dev/null || { echo "demo: jq not found (.ci/install-deps.sh installs it)" >&2; exit 1; }
BUSYBOX=/bin/busybox
if [ ! -x "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	echo "demo: $BUSYBOX must be the statically linked busybox (apt-get install busybox-static)" >&2
	exit 1
fi
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

id=ward-demo-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/ward-demo.XXXXXX")
# Parts of the container's set-up run as its root, an unprivileged host uid: it must be able
# to reach the rootfs.
chmod 0755 "$work"
bundle=$work/bundle
conf=$work/config
lib=$work/lib
log=$work/output
fifo=$work/release

mkdir -p "$conf"
printf '{"lib_dir": "%s"}\n' "$lib" >"$conf/ward.json"
export WARD_CONFIG=$conf

cleanup() {
	exec 3>&-
	"$WARD" delete -f "$id" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bold() { if [ -t 1 ]; then printf '\033[1m%s\033[0m\n' "$*"; else printf '%s\n' "$*"; fi; }

# --- rootfs: static busybox, its applet links, a passwd for names -----------------------
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/etc" \
	"$bundle/rootfs/"{proc,sys,dev,tmp,run}
cp "$BUSYBOX" "$bundle/rootfs/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$bundle/rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$bundle/rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$bundle/rootfs/etc/group"

# --- what the container runs: it reports on itself, then waits for the host ----------------
# HOST_NS (set below) holds the host's namespace links, to tell "new" from "shared".
read -r -d '' SCRIPT <<'EOF' || true
section() { echo; echo "== $*"; }
section "identity"
echo "id:       $(id)"
echo "hostname: $(hostname)"
echo "uid_map:  $(cat /proc/self/uid_map | tr -s ' ' | sed 's/^ //')   (container-id host-id count)"
echo "gid_map:  $(cat /proc/self/gid_map | tr -s ' ' | sed 's/^ //')"

section "namespaces (compared with the host's)"
for ns in /proc/self/ns/*; do
	name=${ns##*/}
	case $name in *_for_children) continue ;; esac
	link=$(readlink "$ns")
	case " $HOST_NS " in
	*" $link "*) verdict=shared ;;
	*) verdict=new ;;
	esac
	printf 'ns %-7s %-6s %s\n' "$name" "$verdict" "$link"
done

section "process security (/proc/self/status)"
grep -E '^(Seccomp|Seccomp_filters|NoNewPrivs|CapEff|CapBnd):' /proc/self/status
names="chown dac_override dac_read_search fowner fsetid kill setgid setuid setpcap linux_immutable
net_bind_service net_broadcast net_admin net_raw ipc_lock ipc_owner sys_module sys_rawio
sys_chroot sys_ptrace sys_pacct sys_admin sys_boot sys_nice sys_resource sys_time sys_tty_config
mknod lease audit_write audit_control setfcap mac_override mac_admin syslog wake_alarm
block_suspend audit_read perfmon bpf checkpoint_restore"
eff=$((0x$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)))
set -- $names
bit=0 held=
for n; do
	[ $(((eff >> bit) & 1)) -eq 1 ] && held="$held cap_$n"
	bit=$((bit + 1))
done
echo "CapEff decoded:${held:- (none)}"
printf 'AppArmor: '
cat /proc/self/attr/apparmor/current 2>/dev/null || echo "none (AppArmor is not enabled on this host)"
printf 'seccomp check, unshare(CLONE_NEWUSER): '
unshare -U true 2>&1 && echo "allowed (!)"
printf 'read-only root check, touch /probe: '
touch /probe 2>&1 && echo "writable (!)"

section "masked and read-only paths"
echo "/proc/keys: $(wc -c </proc/keys) bytes (masked)"
printf 'read-only /proc/sys check, write kernel/domainname: '
{ echo x >/proc/sys/kernel/domainname; } 2>&1 && echo "written (!)"

section "files"
echo "/bin/busybox owner inside: uid $(stat -c %u /bin/busybox)"
echo demo >/dev/shm/written-by-root && echo "/dev/shm/written-by-root owner inside: uid $(stat -c %u /dev/shm/written-by-root)"

section "cgroup (/proc/self/cgroup: its own cgroup namespace, so its cgroup is its /)"
grep '^0::' /proc/self/cgroup

section "mounts (mount point, type, options)"
awk '{ for (i = 7; $i != "-"; i++); printf "%-22s %-8s %s\n", $5, $(i + 1), $6 }' /proc/self/mountinfo

section "processes (pid 1 is this script's shell)"
ps -o pid,user,comm

section "waiting for the host to look (stdin)"
read -r _ || true
exit 0
EOF

# --- config.json: `ward spec`, the script, and CAP_NET_RAW as containerd asks for it -------
"$WARD" spec -b "$bundle"
host_ns=$(for ns in /proc/self/ns/*; do readlink "$ns"; done | tr '\n' ' ')
jq --arg script "$SCRIPT" --arg hostns "HOST_NS=$host_ns" '
	.process.terminal = false
	| .process.args = ["/bin/sh", "-c", $script]
	| .process.env += [$hostns]
	| .hostname = "ward-demo"
	| .process.capabilities |= with_entries(.value += ["CAP_NET_RAW"])
	' "$bundle/config.json" >"$work/config.json"
mv "$work/config.json" "$bundle/config.json"

bold "ward demo: a plain busybox bundle, run with '$(basename "$WARD") run' under the built-in default tenant"
echo "  bundle $bundle: busybox-static rootfs, config from '$(basename "$WARD") spec' with this script as the"
echo "  process, hostname ward-demo, and CAP_NET_RAW added (containerd's default set asks for it)."
echo "  No user namespace, seccomp filter or cgroup path in it: the tenant policy adds them."
echo "  WARD_CONFIG=$conf: a ward.json with only lib_dir=$lib (independent of /etc/ward)."

# --- what the policy makes of it ---------------------------------------------------------
echo
bold "$(basename "$WARD") policy explain --id $id $bundle (summary)"
"$WARD" policy explain --json --id "$id" "$bundle" >"$work/explain.json"
jq -r '
	"  tenant:   \(.tenant) (\(.why); \(.tenant_config.defined_in))",
	"  pod:      \(.pod)",
	"  host IDs: \(.ids.start)-\(.ids.start + .ids.size - 1) (\(.ids.owner // "fixed range"))",
	"  changes:", (.changes[] | "    - " + .)' "$work/explain.json"

# --- run: the container reports, waits on stdin; the host looks, then releases it ----------
echo
bold "$(basename "$WARD") run -b $bundle $id"
mkfifo "$fifo"
"$WARD" run --pid-file "$work/pid" -b "$bundle" "$id" <"$fifo" >"$log" 2>&1 &
runner=$!
exec 3>"$fifo"
for ((i = 0; i < 300; i++)); do
	grep -q '^== waiting for the host' "$log" && break
	kill -0 "$runner" 2>/dev/null || break
	sleep 0.05
done
cat "$log"
shown=$(wc -l <"$log")
host_cgroup='' host_uid='' pool_during=''
if grep -q '^== waiting for the host' "$log" && pid=$(cat "$work/pid" 2>/dev/null); then
	host_uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" || true)
	host_cgroup=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" || true)
	pool_during=$(for f in "$lib"/idpool2.d/[0-9]*; do [ -s "$f" ] && jq -cs 'reduce .[1:][] as $l (.[0]; if $l.add then .users += [$l.add] else .users -= [$l.remove] end)' "$f"; done || true)
	echo
	echo "== the host's view of pid 1 (host pid $pid)"
	echo "process uid on the host:       $host_uid"
	echo "cgroup on the host:            $host_cgroup ($([ -d "$CG2$host_cgroup" ] && echo "$CG2$host_cgroup exists"))"
	echo "ID pool ($lib/idpool2.d):"
	echo "  $pool_during"
	echo "/bin/busybox owner on disk:    uid $(stat -c %u "$bundle/rootfs/bin/busybox") (idmapped rootfs: nothing chowned)"
	echo "/dev/shm/written-by-root:      uid $(stat -c %u "/proc/$pid/root/dev/shm/written-by-root") on the host (the container's own tmpfs)"
fi
exec 3>&- # EOF on the container's stdin: its script exits
status=0
wait "$runner" || status=$?
tail -n +"$((shown + 1))" "$log"

# --- summary -----------------------------------------------------------------------------
field() { sed -n "s|^$1:[[:space:]]*||p" "$log" | head -n 1; }
if ! grep -q '^== identity' "$log"; then
	summary="  exit status:       $status (the container did not run its script; see the error above)"
else summary=$(
	echo "  exit status:       $status"
	echo "  tenant:            $(jq -r '"\(.tenant) (\(.tenant_config.defined_in))"' "$work/explain.json")"
	echo "  container root:    uid_map $(field uid_map | awk '{ print $1 " -> host " $2 ", " $3 " ids" }'), host uid $host_uid, hostname $(field hostname)"
	echo "  new namespaces:    $(awk '$1 == "ns" && $3 == "new" { printf "%s ", $2 }' "$log")"
	echo "  shared with host:  $(awk '$1 == "ns" && $3 == "shared" { printf "%s ", $2 }' "$log")"
	echo "  seccomp:           mode $(field Seccomp) (2 = filter), NoNewPrivs $(field NoNewPrivs)"
	echo "  capabilities:      $(field 'CapEff decoded')"
	echo "  /proc/keys:        $(field /proc/keys)"
	echo "  cgroup (host):     ${host_cgroup:-?}"
	echo "  root filesystem:   $(awk '$1 == "/" { split($3, o, ","); print o[1] }' "$log" | head -n 1), idmapped"
); fi
# `ward run` deleted the container when its process exited: check, then remove the rest.
pool_after=$(find "$lib/idpool2.d" -mindepth 1 -name '[0-9]*' -size +0 2>/dev/null | wc -l)
left=()
"$WARD" state "$id" >/dev/null 2>&1 && left+=("container $id")
[ -n "$host_cgroup" ] && [ -d "$CG2$host_cgroup" ] && left+=("cgroup $CG2$host_cgroup")
[ "$pool_after" = 0 ] || left+=("ID pool allocations: $pool_after")
cleanup
trap - EXIT
[ -e "$work" ] && left+=("$work")
if [ ${#left[@]} -gt 0 ]; then
	cleaned="INCOMPLETE: left behind: ${left[*]}"
	status=1
else
	cleaned="container $id deleted with its cgroup, its ID range back in the pool (0 allocations), $work removed"
fi
echo
bold "summary"
printf '%s\n' "$summary"
echo "  clean-up:          $cleaned"
exit "$status"
