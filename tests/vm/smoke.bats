#!/usr/bin/env bats
# The VM harness itself (tests/vm/run-vm.sh runs this inside the guest): a real kernel with
# cgroup2 at /sys/fs/cgroup and every controller, securityfs, AppArmor, and ward running a
# busybox container there from the host's build seen through 9p.

load vm-helpers

suite_setup() {
	skip_unless_vm
}

@test "vm: cgroup2 at /sys/fs/cgroup with memory, pids, cpu, io and cpuset enabled for children" {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]
	[ "$CG2" = /sys/fs/cgroup ]
	local c
	for c in memory pids cpu io cpuset; do
		grep -qw "$c" /sys/fs/cgroup/cgroup.controllers || fail "controller $c missing: $(cat /sys/fs/cgroup/cgroup.controllers)"
		grep -qw "$c" /sys/fs/cgroup/cgroup.subtree_control || fail "controller $c not enabled: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
	done
	# no cgroup v1 hierarchy is mounted
	run awk '{ for (i = 7; i < NF; i++) if ($i == "-") { print $(i + 1); break } }' /proc/self/mountinfo
	assert_success
	refute_line cgroup
}

@test "vm: AppArmor is enabled and securityfs is mounted" {
	[ "$(cat /sys/module/apparmor/parameters/enabled)" = Y ]
	[ "$(stat -f -c %T /sys/kernel/security)" = securityfs ]
	grep -qw apparmor /sys/kernel/security/lsm
	[ -e /sys/kernel/security/apparmor/profiles ]
}

@test "vm: bundles live on the ext4 scratch disk, which can be idmapped" {
	# TMPDIR is on the scratch disk: every bundle (and so every rootfs) is on ext4
	[ "$(stat -f -c %T "$BATS_RUN_TMPDIR")" = ext2/ext3 ] || fail "BATS_RUN_TMPDIR on $(stat -f -c %T "$BATS_RUN_TMPDIR")"
	[ "$(stat -f -c %T "$BATS_TEST_TMPDIR")" = ext2/ext3 ]
	run findmnt -n -o SOURCE,FSTYPE --target "$BATS_TEST_TMPDIR"
	assert_output "/dev/vda ext4"
	# The kernel idmaps a mount of it (what ward does for user-namespaced containers), and not
	# one of the guest's tmpfs: Linux 6.1 cannot idmap tmpfs or overlayfs.
	run "$WARD_TEST_BIN/idmap-probe" "$BATS_TEST_TMPDIR"
	assert_success
	assert_output "100000 100000"
	run "$WARD_TEST_BIN/idmap-probe" /dev/shm
	assert_failure 1
	assert_output --partial "mount_setattr: Invalid argument"
}

@test "vm: ward run of a busybox bundle" {
	make_bundle b
	set_cmd 'echo "hello from $(hostname)"; cat /etc/ward-test-rootfs; id -u'
	run_container
	assert_success
	assert_line --index 0 --regexp '^hello from '
	assert_line --index 1 ward-test-rootfs
	assert_line --index 2 0
	assert_nothing_left "$ID"
}

@test "vm: a running container is in the cgroup <cgroup2>/ward/default/<id> (the built-in tenant)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	run_detached "$id"
	wait_status "$id" running
	pid=$(init_pid "$id")
	[ "$pid" -gt 0 ]
	cg="$CG2/ward/default/$id"
	[ -d "$cg" ] || fail "no cgroup $cg; the init is in $(cat "/proc/$pid/cgroup")"
	grep -qx "$pid" "$cg/cgroup.procs" || fail "pid $pid not in $cg: $(cat "$cg/cgroup.procs")"
	[ "$(cat "/proc/$pid/cgroup")" = "0::/ward/default/$id" ] || fail "/proc/$pid/cgroup: $(cat "/proc/$pid/cgroup")"
	ward delete -f "$id"
	wait_gone "$pid"
	assert_no_cgroup "$id" "$cg"
	# the tenant's directory goes with its last container
	[ ! -d "$CG2/ward/default" ] || fail "$CG2/ward/default left after its last container: $(find "$CG2/ward/default" -mindepth 1 -type d)"
	assert_nothing_left "$id"
}
