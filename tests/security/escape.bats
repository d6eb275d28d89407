#!/usr/bin/env bats
# The escape battery: ward-probe (tests/security/probe.c) attempts ~70 container escape
# techniques from inside real ward containers, and every one of them must fail:
#   - in a container of the built-in default tenant (no --config, a plain bundle), and
#   - in a privileged pod: a tenant with "privileged": true and a spec that asks for
#     everything (every capability in every set, no masks, no read-only paths, no seccomp,
#     rw /sys, host devices), as a Kubernetes privileged pod does.
# The probe runs every technique in one container start per flavour (cached for this file);
# one bats test per technique group reads that output, so a failure names its group.
# Host-side tests check the ID mappings from outside, and a self-test runs the probe on the
# host as root, where the attacks must work: the probe is not a no-op. That self-test does
# touch the host, harmlessly: it writes core_pattern, kernel.panic and a THP/sysfs knob back
# with their own values, prints the SysRq help ('h') where /proc/sysrq-trigger exists, moves
# a short-lived probe child into its parent cgroup, and mounts only in private mount
# namespaces.
#
# Run alone: make build/tests/ward-probe && bats tests/security/escape.bats
# (or make test-integration T=escape). Each flavour's full probe output is kept in
# $BATS_FILE_TMPDIR/battery-FLAVOUR.log (bats --no-tempdir-cleanup to look at it).

# The built-in, hardened configuration (helpers.bash would pick the trusted fixture).
export WARD_CONFIG=
: "${WARD:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/ward}"
: "${WARD_TEST_BIN:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/tests}"
load ../helpers

PROBE="$WARD_TEST_BIN/ward-probe"

# Every capability of Linux 5.9+ (CAP_CHECKPOINT_RESTORE = 40).
ALL_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_DAC_READ_SEARCH","CAP_FOWNER","CAP_FSETID",
 "CAP_KILL","CAP_SETGID","CAP_SETUID","CAP_SETPCAP","CAP_LINUX_IMMUTABLE",
 "CAP_NET_BIND_SERVICE","CAP_NET_BROADCAST","CAP_NET_ADMIN","CAP_NET_RAW","CAP_IPC_LOCK",
 "CAP_IPC_OWNER","CAP_SYS_MODULE","CAP_SYS_RAWIO","CAP_SYS_CHROOT","CAP_SYS_PTRACE",
 "CAP_SYS_PACCT","CAP_SYS_ADMIN","CAP_SYS_BOOT","CAP_SYS_NICE","CAP_SYS_RESOURCE",
 "CAP_SYS_TIME","CAP_SYS_TTY_CONFIG","CAP_MKNOD","CAP_LEASE","CAP_AUDIT_WRITE",
 "CAP_AUDIT_CONTROL","CAP_SETFCAP","CAP_MAC_OVERRIDE","CAP_MAC_ADMIN","CAP_SYSLOG",
 "CAP_WAKE_ALARM","CAP_BLOCK_SUSPEND","CAP_AUDIT_READ","CAP_PERFMON","CAP_BPF",
 "CAP_CHECKPOINT_RESTORE"]'

suite_setup() {
	[ -x "$PROBE" ] || fail "$PROBE is missing: build it with 'make build/tests/ward-probe'"
	[ "$(id -u)" -eq 0 ] || skip "the escape battery runs as root"
}

# ---------------------------------------------------------------------------------------
# Host fixtures the probe looks for from inside: a file with random content, a SysV shm
# segment with a known key, a process with a unique argv[0], and the host's namespaces.
# Sets PROBE_ENV (NAME=VALUE...). Cleaned up by teardown.
host_fixtures() {
	local text="ward-sentinel-$RANDOM$RANDOM$RANDOM" key id marker
	SENTINEL="$BATS_TEST_TMPDIR/host-sentinel-$RANDOM"
	echo "$text" >"$SENTINEL"
	chmod 0644 "$SENTINEL"
	key=$((0x57000000 + (RANDOM << 8) + RANDOM % 256))
	id=$("$PROBE" --make-shm "$key") || fail "could not create the host shm segment"
	on_teardown "ipcrm -m $id"
	marker="ward-probe-marker-$RANDOM$RANDOM"
	# not under bats' fds: the marker must not keep bats waiting
	(exec -a "$marker" sleep 600) </dev/null >/dev/null 2>&1 3>&- &
	MARKER_PID=$!
	on_teardown "kill $MARKER_PID"
	PROBE_ENV=(
		"WARD_PROBE_SENTINEL=$SENTINEL"
		"WARD_PROBE_SENTINEL_TEXT=$text"
		"WARD_PROBE_SHM_KEY=$key"
		"WARD_PROBE_MARKER=$marker"
		"WARD_PROBE_HOST_NS=$("$PROBE" --host-ns)"
	)
}

# probe_bundle NAME: a bundle with the probe at /bin/ward-probe and PROBE_ENV in its env.
probe_bundle() {
	make_bundle "$1"
	cp "$PROBE" "$BUNDLE/rootfs/bin/ward-probe"
	chmod 0755 "$BUNDLE/rootfs/bin/ward-probe"
	config_edit '.process.env += $e' --argjson e "$(json_array "${PROBE_ENV[@]}")"
}

# config_dir NAME TENANT=JSON...: a config dir with its own ID pool under the file's tmpdir
# (not /var/lib/ward), and the given tenants. Prints its path.
config_dir() {
	local d="$BATS_FILE_TMPDIR/config-$1" t
	shift
	mkdir -p "$d/tenants.d" "$BATS_FILE_TMPDIR/lib-${d##*/}"
	jq -n --arg lib "$BATS_FILE_TMPDIR/lib-${d##*/}" '{lib_dir: $lib}' >"$d/ward.json"
	for t in "$@"; do
		printf '%s\n' "${t#*=}" >"$d/tenants.d/${t%%=*}.json"
	done
	echo "$d"
}

# The pod spec of a Kubernetes privileged pod, in tenant "p".
privileged_spec() {
	local devs='[]' p t
	for p in /dev/kmsg /dev/vda /dev/sda /dev/nvme0n1 /dev/fuse; do
		[ -e "$p" ] || continue
		t=c
		[ -b "$p" ] && t=b
		devs=$(jq -c --arg p "$p" --arg t "$t" --argjson ma "$((0x$(stat -c %t "$p")))" \
			--argjson mi "$((0x$(stat -c %T "$p")))" \
			'. + [{path: $p, type: $t, major: $ma, minor: $mi, fileMode: 438, uid: 0, gid: 0}]' <<<"$devs")
	done
	config_edit '.annotations["ward.dev/tenant"] = "p"
		| .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps,
			inheritable: $caps, ambient: $caps}
		| .process.noNewPrivileges = false
		| .linux.maskedPaths = [] | .linux.readonlyPaths = []
		| del(.linux.seccomp)
		| .linux.devices = $devs
		| .linux.resources.devices = [{allow: true, access: "rwm"}]
		| .mounts = [.mounts[] | if (.type == "sysfs" or .type == "cgroup")
			then .options = ([.options[] | select(. != "ro")] + ["rw"]) else . end]' \
		--argjson caps "$ALL_CAPS" --argjson devs "$devs"
}

# containerd's default capability set: what every CRI pod asks for.
CRI_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
 "CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
 "CAP_KILL","CAP_AUDIT_WRITE"]'

# battery FLAVOUR: the probe's TAP output for every technique, in $output. One container
# start per flavour for this file (cached):
#   default          built-in default tenant, the bundle as `ward spec` writes it
#   pod              built-in default tenant, containerd's default capabilities
#   privileged       a privileged pod (privileged_spec) of a tenant that allows them
#   default-exec, privileged-exec
#                    the probe started by `ward exec` in a running container of that kind
#                    (its pid 1 is `ward-probe --sleep`)
battery() {
	local flavour=$1 cache="$BATS_FILE_TMPDIR/battery-$1.tap" cfg=() id e envs=()
	if [ ! -s "$cache" ]; then
		host_fixtures
		probe_bundle "$flavour"
		case $flavour in
		privileged*)
			privileged_spec
			cfg=(--config "$(config_dir priv 'p={"privileged": true}')")
			;;
		pod)
			config_edit '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}' \
				--argjson c "$CRI_CAPS"
			;;
		esac
		id=$(cid "$flavour")
		case $flavour in
		*-exec)
			set_args /bin/ward-probe --sleep
			ward "${cfg[@]}" run -d -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/$id.out" \
				2>"$BATS_TEST_TMPDIR/$id.err" ||
				fail "$flavour: run -d failed: $(cat "$BATS_TEST_TMPDIR/$id.err")"
			for e in "${PROBE_ENV[@]}"; do envs+=(--env "$e"); done
			run --separate-stderr ward "${cfg[@]}" exec "${envs[@]}" "$id" /bin/ward-probe all </dev/null
			;;
		*)
			set_args /bin/ward-probe all
			run --separate-stderr ward "${cfg[@]}" run -b "$BUNDLE" "$id" </dev/null
			;;
		esac
		[[ "$output" == 1..* ]] ||
			fail "$flavour: the probe did not run (status $status): stderr: $stderr, stdout: $output"
		printf '%s\n' "$output" >"$cache"
		{
			echo "# $flavour container: ward stderr: ${stderr:-(none)}"
			sed 's/^/# /' "$cache"
		} >"$BATS_FILE_TMPDIR/battery-$flavour.log"
	fi
	output=$(cat "$cache")
}

# assert_group FLAVOUR GROUP: every technique of GROUP reported "blocked" in FLAVOUR's run.
assert_group() {
	local flavour=$1 group=$2 names t bad=() line
	battery "$flavour"
	mapfile -t names < <("$PROBE" --list | awk -v g="$group" '$2 == g { print $1 }')
	[ ${#names[@]} -gt 0 ] || fail "the probe has no technique group '$group'"
	for t in "${names[@]}"; do
		line=$(grep -E "^(not )?ok [0-9]+ - ${t}[:# ]" <<<"$output") || line="(no result line for $t)"
		[[ "$line" =~ ^ok\ [0-9]+\ -\ $t:\ blocked ]] || bad+=("$line")
	done
	if [ ${#bad[@]} -gt 0 ]; then
		printf '%s: not blocked (or not run) in the %s container:\n' "$group" "$flavour" >&2
		printf '  %s\n' "${bad[@]}" >&2
		fail "$group: ${#bad[@]} of ${#names[@]} techniques were not blocked ($flavour)"
	fi
}

# ---------------------------------------------------------------------------------------
# The probe itself

@test "probe: at least 30 techniques, each in a group, names unique" {
	run "$PROBE" --list
	assert_success
	[ "${#lines[@]}" -ge 30 ] || fail "only ${#lines[@]} techniques"
	[ "$(awk '{ print $1 }' <<<"$output" | sort | uniq -d)" = "" ] || fail "duplicate names"
	run awk 'NF != 2' <<<"$output"
	assert_output ""
}

# Not a no-op: as host root, outside any container, the attacks work. Techniques that the
# host kernel itself refuses even to root (no CONFIG_*, no AppArmor) are printed, not asserted.
@test "probe self-test: run on the host as root, the attacks succeed" {
	host_fixtures
	export "${PROBE_ENV[@]}"
	local must=(userns_unshare userns_clone userns_clone3 mount_proc mount_tmpfs mount_sysfs
		fsopen_cgroup fsopen_cgroup_userns open_tree_clone cgroup1_release_agent keyctl_join
		add_key bpf_prog_load bpf_map_create socket_packet dev_host_nodes write_core_pattern
		write_proc_sys read_masked fd_leak proc_root_escape sysv_ipc_host host_pids ptrace_host
		personality gain_ids root_is_host_root open_by_handle_at swapon acct settime
		syslog_read)
	# fd 7: an inherited descriptor for fd_leak to find
	run bash -c '"$0" all 7</etc/hostname' "$PROBE"
	local host_run=$output t
	[ "$status" -eq 1 ] || fail "the probe found nothing to report on the host (status $status)"
	for t in "${must[@]}"; do
		grep -qE "^not ok [0-9]+ - $t: SUCCEEDED" <<<"$host_run" ||
			fail "on the host, $t did not succeed: $(grep -E " - ${t}[:# ]" <<<"$host_run")"
	done

	# chroot escapes need a chroot: a jail whose cwd or root fd leads out
	local jail="$BATS_TEST_TMPDIR/jail"
	mkdir -p "$jail/tmp"
	run "$PROBE" --chroot "$jail" chroot_escape
	assert_output --partial "not ok 1 - chroot_escape: SUCCEEDED"
	run bash -c 'cd "$1" && "$0" --chroot-keep-cwd "$2" cwd_outside' "$PROBE" "$BATS_TEST_TMPDIR" "$jail"
	assert_output --partial "not ok 1 - cwd_outside: SUCCEEDED"

	# masks and read-only paths made the way runtimes make them, in a private mount namespace
	local masks='mount --bind /dev/null /proc/keys && mount --bind /proc/sys /proc/sys &&
		mount -o remount,bind,ro /proc/sys'
	local mask_tech=(umount_mask_keys umount_readonly remount_rw)
	if [ -e /proc/kcore ]; then
		masks+=' && mount --bind /dev/null /proc/kcore'
		mask_tech+=(umount_mask_kcore)
	fi
	run unshare -m --propagation private sh -c "$masks && exec \"\$0\" \"\$@\"" "$PROBE" "${mask_tech[@]}"
	for t in "${mask_tech[@]}"; do
		assert_output --regexp "not ok [0-9]+ - $t: SUCCEEDED"
	done

	# host namespaces in sight from new namespaces: /proc/1/ns/* leads back
	run unshare --net --ipc --uts "$PROBE" setns_host
	assert_output --partial "not ok 1 - setns_host: SUCCEEDED: joined host namespaces"

	# The rest, for the record: what this host's kernel refuses even to root.
	local names
	mapfile -t names < <("$PROBE" --list | awk '{ print $1 }')
	for t in "${names[@]}"; do
		case " ${must[*]} ${mask_tech[*]} chroot_escape cwd_outside setns_host " in
		*" $t "*) continue ;;
		esac
		line=$(grep -E " - ${t}[:# ]" <<<"$host_run")
		[[ "$line" == "not ok"* ]] && continue
		echo "# host: $t fails even for host root here (informative): ${line#*: }" >&3
	done
}

# The same inside a ward container, with the policy out of the way: the trusted fixture
# config (pods run exactly as their spec says), no user namespace, every capability, no
# seccomp, no masks. The probe must see the attacks work there too, or a "blocked" in the
# tests below could come from the probe failing inside containers.
@test "probe control: in a ward container without the tenant policy, the attacks succeed" {
	host_fixtures
	probe_bundle control
	config_edit '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}
		| del(.linux.seccomp) | .linux.maskedPaths = [] | .linux.readonlyPaths = []
		| .linux.resources.devices = [{allow: true, access: "rwm"}]' --argjson c "$ALL_CAPS"
	set_args /bin/ward-probe all
	id=$(cid control)
	run --separate-stderr ward --config "$BATS_TEST_DIRNAME/../fixtures/config-trusted" run -b "$BUNDLE" "$id" </dev/null
	[[ "$output" == 1..* ]] || fail "the probe did not run (status $status): $stderr"
	printf '%s\n' "$output" >"$BATS_FILE_TMPDIR/battery-control.log"
	local t
	for t in root_is_host_root userns_unshare mount_tmpfs keyctl_join add_key bpf_map_create \
		socket_packet read_masked open_by_handle_at syslog_read gain_ids settime; do
		grep -qE "^not ok [0-9]+ - $t: SUCCEEDED" <<<"$output" ||
			fail "without the policy, $t did not succeed in the container: $(grep -E " - ${t}[:# ]" <<<"$output")"
	done
	# and the namespaces still hold: the host's processes and IPC stay out of sight
	assert_line --regexp '^ok [0-9]+ - host_pids: blocked'
	assert_line --regexp '^ok [0-9]+ - sysv_ipc_host: blocked'
}

# ---------------------------------------------------------------------------------------
# (a) a container of the built-in default tenant

@test "default tenant: userns: nested user namespaces (unshare, clone, clone3) fail" {
	assert_group default userns
}

@test "default tenant: mount: proc, tmpfs, sysfs, debugfs, securityfs, bpf, fsopen (CVE-2022-0185), open_tree, cgroup v1 release_agent (CVE-2022-0492), remount rw, umount fail" {
	assert_group default mount
}

@test "default tenant: kernel: keyctl, add_key, bpf prog/map, perf_event_open, io_uring, userfaultfd fail" {
	assert_group default kernel
}

@test "default tenant: socket: AF_PACKET, AF_VSOCK, AF_ALG (also via i386 socket/socketcall) fail" {
	assert_group default socket
}

@test "default tenant: device: mknod b 8 0 / c 1 1 and host device nodes fail" {
	assert_group default device
}

@test "default tenant: knob: sysrq-trigger, core_pattern, uevent_helper, modprobe, /proc/sys, /sys writes fail" {
	assert_group default knob
}

@test "default tenant: mask: /proc/kcore, /proc/keys masked, masks cannot be unmounted" {
	assert_group default mask
}

@test "default tenant: escape: no leaked fd, cwd inside, /proc/*/exe not writable, no chroot or /proc/PID/root way to a host file" {
	assert_group default escape
}

@test "default tenant: host: no host SysV IPC, pids, ptrace, interfaces, namespaces" {
	assert_group default host
}

@test "default tenant: ids: AppArmor label change, personality, uid_map, IDs beyond the map, root is not host root" {
	assert_group default ids
}

@test "default tenant: cgroup: parent cgroup and own limits are not writable" {
	assert_group default cgroup
}

@test "default tenant: syscall: open_by_handle_at, kexec, modules, swapon, acct, settime, ioperm, fanotify, syslog fail" {
	assert_group default syscall
}

# ---------------------------------------------------------------------------------------
# (b) a privileged pod: every capability, no masks asked for, in a tenant that allows it

@test "privileged pod: userns: nested user namespaces (unshare, clone, clone3) fail" {
	assert_group privileged userns
}

@test "privileged pod: mount: proc, tmpfs, sysfs, debugfs, securityfs, bpf, fsopen (CVE-2022-0185), open_tree, cgroup v1 release_agent (CVE-2022-0492), remount rw, umount fail" {
	assert_group privileged mount
}

@test "privileged pod: kernel: keyctl, add_key, bpf prog/map, perf_event_open, io_uring, userfaultfd fail" {
	assert_group privileged kernel
}

@test "privileged pod: socket: AF_PACKET, AF_VSOCK, AF_ALG (also via i386 socket/socketcall) fail" {
	assert_group privileged socket
}

@test "privileged pod: device: mknod b 8 0 / c 1 1 and host device nodes (asked for in linux.devices) fail" {
	assert_group privileged device
}

@test "privileged pod: knob: sysrq-trigger, core_pattern, uevent_helper, modprobe, /proc/sys, /sys writes fail" {
	assert_group privileged knob
}

@test "privileged pod: mask: /proc/kcore, /proc/keys masked although the spec asks for none; masks cannot be unmounted" {
	assert_group privileged mask
}

@test "privileged pod: escape: no leaked fd, cwd inside, /proc/*/exe not writable, no chroot or /proc/PID/root way to a host file" {
	assert_group privileged escape
}

@test "privileged pod: host: no host SysV IPC, pids, ptrace, interfaces, namespaces" {
	assert_group privileged host
}

@test "privileged pod: ids: AppArmor label change, personality, uid_map, IDs beyond the map, root is not host root" {
	assert_group privileged ids
}

@test "privileged pod: cgroup: parent cgroup and own limits are not writable" {
	assert_group privileged cgroup
}

@test "privileged pod: syscall: open_by_handle_at, kexec, modules, swapon, acct, settime, ioperm, fanotify, syslog fail" {
	assert_group privileged syscall
}

# ---------------------------------------------------------------------------------------
# More ways in: a CRI pod's capabilities, and `ward exec` (its own code path: setns, fds,
# seccomp and capabilities applied again). One test each, every group.

assert_all_groups() {
	local g failed=()
	battery "$1" # once, outside the subshells
	for g in $("$PROBE" --list | awk '{ print $2 }' | sort -u); do
		( assert_group "$1" "$g" ) || failed+=("$g")
	done
	[ ${#failed[@]} -eq 0 ] || fail "$1: groups with techniques not blocked: ${failed[*]}"
}

@test "default tenant, containerd's default capabilities (NET_RAW, MKNOD, SETUID, SYS_CHROOT, ...): every technique fails" {
	assert_all_groups pod
}

@test "default tenant, ward exec: every technique fails in an exec'd process" {
	assert_all_groups default-exec
}

@test "privileged pod, ward exec: every technique fails in an exec'd process" {
	assert_all_groups privileged-exec
}

# ---------------------------------------------------------------------------------------
# (c) from the host: ID mappings

# id_ranges PID: the host ranges of PID's uid_map and gid_map, one "START END" (end
# exclusive) per line.
id_ranges() {
	awk '{ print $2, $2 + $3 }' "/proc/$1/uid_map" "/proc/$1/gid_map"
}

# ranges_disjoint PID PID: no uid/gid range of one overlaps one of the other.
ranges_disjoint() {
	local s1 e1 s2 e2
	while read -r s1 e1; do
		while read -r s2 e2; do
			if [ "$s1" -lt "$e2" ] && [ "$s2" -lt "$e1" ]; then
				echo "pid $1 [$s1, $e1) overlaps pid $2 [$s2, $e2)" >&2
				return 1
			fi
		done < <(id_ranges "$2")
	done < <(id_ranges "$1")
}

@test "host: containers of tenants a and b (and two pods of a) get disjoint ID ranges at or above 524288" {
	local cfg a1 a2 b1 pid_a1 pid_a2 pid_b1 s e
	cfg=$(config_dir ab 'a={}' 'b={}')
	make_bundle a1 '.annotations["ward.dev/tenant"] = "a" | .process.args = ["sleep", "1000"]'
	a1=$(cid a1)
	ward --config "$cfg" run -d -b "$BUNDLE" "$a1" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/a1.err" ||
		fail "run a1: $(cat "$BATS_TEST_TMPDIR/a1.err")"
	make_bundle a2 '.annotations["ward.dev/tenant"] = "a" | .process.args = ["sleep", "1000"]'
	a2=$(cid a2)
	ward --config "$cfg" run -d -b "$BUNDLE" "$a2" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/a2.err" ||
		fail "run a2: $(cat "$BATS_TEST_TMPDIR/a2.err")"
	make_bundle b1 '.annotations["ward.dev/tenant"] = "b" | .process.args = ["sleep", "1000"]'
	b1=$(cid b1)
	ward --config "$cfg" run -d -b "$BUNDLE" "$b1" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/b1.err" ||
		fail "run b1: $(cat "$BATS_TEST_TMPDIR/b1.err")"
	pid_a1=$(init_pid "$a1") pid_a2=$(init_pid "$a2") pid_b1=$(init_pid "$b1")
	for pid in "$pid_a1" "$pid_a2" "$pid_b1"; do
		echo "pid $pid uid_map: $(cat "/proc/$pid/uid_map") gid_map: $(cat "/proc/$pid/gid_map")"
		# a user namespace of its own, not the host's identity map
		[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] ||
			fail "pid $pid runs in the host user namespace"
		while read -r s e; do
			[ "$s" -ge 524288 ] || fail "pid $pid: a host range starts at $s (< 524288)"
			[ $((e - s)) -le 65536 ] || fail "pid $pid: a range of $((e - s)) IDs (> 65536)"
		done < <(id_ranges "$pid")
	done
	ranges_disjoint "$pid_a1" "$pid_b1" || fail "tenants a and b overlap"
	ranges_disjoint "$pid_a2" "$pid_b1" || fail "tenants a and b overlap"
	ranges_disjoint "$pid_a1" "$pid_a2" || fail "two pods of tenant a overlap (ids: pod)"
}

@test "host: the default tenant's container root is a host uid/gid at or above 524288, never 0" {
	make_bundle b '.process.args = ["sleep", "1000"]'
	id=$(cid d)
	run_detached "$id"
	pid=$(init_pid "$id")
	run awk '/^(Uid|Gid):/ { print $1, $2, $3, $4, $5 }' "/proc/$pid/status"
	echo "$output"
	for f in 2 3 4 5; do
		for kind in Uid: Gid:; do
			v=$(awk -v k="$kind" -v f="$f" '$1 == k { print $f }' "/proc/$pid/status")
			[ "$v" -ge 524288 ] || fail "container root's host $kind field $f is $v"
		done
	done
	# the whole map: host 0 is nowhere in it
	run awk '$2 == 0' "/proc/$pid/uid_map" "/proc/$pid/gid_map"
	assert_output ""
}

@test "host: a file the container writes in its own tmpfs belongs on the host to a uid/gid of the tenant's range" {
	cfg=$(config_dir t 't={}')
	make_bundle b '.annotations["ward.dev/tenant"] = "t"'
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "size=1m"]}'
	mkdir -p "$BUNDLE/rootfs/scratch"
	set_cmd 'echo mine > /scratch/f && touch /scratch/done && exec sleep 1000'
	id=$(cid t)
	ward --config "$cfg" run -d -b "$BUNDLE" "$id" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/t.err" ||
		fail "run: $(cat "$BATS_TEST_TMPDIR/t.err")"
	pid=$(init_pid "$id")
	wait_file "/proc/$pid/root/scratch/done"
	read -r uid gid < <(stat -c '%u %g' "/proc/$pid/root/scratch/f")
	read -r _ ustart usize < <(head -n1 "/proc/$pid/uid_map")
	read -r _ gstart gsize < <(head -n1 "/proc/$pid/gid_map")
	echo "file: uid $uid gid $gid; uid_map start $ustart size $usize; gid_map start $gstart size $gsize"
	[ "$ustart" -ge 524288 ] || fail "uid range starts at $ustart"
	[ "$uid" -ge "$ustart" ] && [ "$uid" -lt $((ustart + usize)) ] || fail "host uid $uid is outside the tenant's range"
	[ "$gid" -ge "$gstart" ] && [ "$gid" -lt $((gstart + gsize)) ] || fail "host gid $gid is outside the tenant's range"
	# container root wrote it: the first ID of the range
	assert_equal "$uid" "$ustart"
}
