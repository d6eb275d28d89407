#!/usr/bin/env bash
# ward demo: build a busybox bundle, harden it, run it with `ward run`, and let the container
# describe its own isolation (make demo). Usage: tests/demo.sh WARD_BINARY
#
# The hardening (user namespace, seccomp, capabilities, no_new_privs, read-only root) is asked
# for explicitly in this bundle's config.json; a tenant policy will apply it by default later.
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

HOST_ID=100000 # container uid/gid 0 is this host id; 65536 ids are mapped
NIDS=65536
CAPS='["CAP_KILL","CAP_NET_BIND_SERVICE"]'
id=ward-demo-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/ward-demo.XXXXXX")
chmod 0755 "$work" # container root is host uid 100000: it must be able to reach the rootfs
bundle=$work/bundle
log=$work/output

cleanup() {
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

# --- what the container runs: it reports on itself -----------------------------------------
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
printf 'seccomp check, unshare(CLONE_NEWUSER): '
unshare -U true 2>&1 && echo "allowed (!)"
printf 'read-only root check, touch /probe: '
touch /probe 2>&1 && echo "writable (!)"

section "cgroup (/proc/self/cgroup)"
cat /proc/self/cgroup

section "mounts (mount point, type, options)"
awk '{ for (i = 7; $i != "-"; i++); printf "%-22s %-8s %s\n", $5, $(i + 1), $6 }' /proc/self/mountinfo

section "processes (pid 1 is this script's shell)"
ps -o pid,user,comm
exit 0
EOF

# --- config.json: `ward spec`, then the hardening this demo asks for ------------------------
"$WARD" spec -b "$bundle"
host_ns=$(for ns in /proc/self/ns/*; do readlink "$ns"; done | tr '\n' ' ')
seccomp='{
  "defaultAction": "SCMP_ACT_ALLOW",
  "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
  "syscalls": [
    { "names": ["keyctl", "add_key", "request_key", "unshare", "setns", "mount", "umount2",
                "pivot_root", "bpf", "perf_event_open", "kexec_load", "open_by_handle_at"],
      "action": "SCMP_ACT_ERRNO", "errnoRet": 1 }
  ]
}'
jq --arg script "$SCRIPT" --arg hostns "HOST_NS=$host_ns" \
	--argjson caps "$CAPS" --argjson seccomp "$seccomp" \
	--argjson hid "$HOST_ID" --argjson n "$NIDS" '
	.process.terminal = false
	| .process.args = ["/bin/sh", "-c", $script]
	| .process.env += [$hostns]
	| .process.noNewPrivileges = true
	| .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps,
	                           inheritable: [], ambient: []}
	| .hostname = "ward-demo"
	| .root.readonly = true
	| .linux.namespaces = ([.linux.namespaces[] | select(.type != "user" and .type != "cgroup")]
	                       + [{type: "user"}, {type: "cgroup"}])
	| .linux.uidMappings = [{containerID: 0, hostID: $hid, size: $n}]
	| .linux.gidMappings = [{containerID: 0, hostID: $hid, size: $n}]
	| .linux.seccomp = $seccomp
	' "$bundle/config.json" >"$work/config.json"
mv "$work/config.json" "$bundle/config.json"

# --- run ---------------------------------------------------------------------------------
bold "ward demo: one busybox container, run with '$(basename "$WARD") run', describing its own isolation"
echo "  bundle $bundle: busybox-static rootfs, config from '$(basename "$WARD") spec' plus:"
echo "  user namespace (container 0-$((NIDS - 1)) = host $HOST_ID-$((HOST_ID + NIDS - 1))), hostname ward-demo,"
echo "  seccomp (allow by default; keyctl, add_key, request_key, unshare, mount, ... fail with EPERM),"
echo "  capabilities $(jq -r 'join(", ")' <<<"$CAPS"), noNewPrivileges, read-only root."
echo "  Note: this bundle asks for the hardening explicitly; a tenant policy will make it the default in a later release."

status=0
"$WARD" run -b "$bundle" "$id" </dev/null 2>&1 | tee "$log" || status=${PIPESTATUS[0]}

# --- summary -----------------------------------------------------------------------------
field() { sed -n "s/^$1:[[:space:]]*//p" "$log" | head -n 1; }
if ! grep -q '^== identity' "$log"; then
	summary="  exit status:       $status (the container did not run its script; see the error above)"
else summary=$(
	echo "  exit status:       $status"
	echo "  container root:    uid_map $(field uid_map | awk '{ print $1 " -> host " $2 ", " $3 " ids" }'), hostname $(field hostname)"
	echo "  new namespaces:    $(awk '$1 == "ns" && $3 == "new" { printf "%s ", $2 }' "$log")"
	echo "  shared with host:  $(awk '$1 == "ns" && $3 == "shared" { printf "%s ", $2 }' "$log")"
	echo "  seccomp:           mode $(field Seccomp) (2 = filter), NoNewPrivs $(field NoNewPrivs)"
	echo "  capabilities:      $(field 'CapEff decoded')"
	echo "  root filesystem:   $(awk '$1 == "/" { split($3, o, ","); print o[1] }' "$log" | head -n 1)"
); fi
cleanup
if "$WARD" state "$id" >/dev/null 2>&1 || [ -e "$work" ]; then
	cleaned="INCOMPLETE: check '$WARD state $id' and $work"
	status=1
else
	cleaned="container $id deleted, $work removed"
fi
echo
bold "summary"
printf '%s\n' "$summary"
echo "  clean-up:          $cleaned"
exit "$status"
