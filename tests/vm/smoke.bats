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

@test "vm: the suites' temporary files are on the guest's tmpfs" {
	[ "$(stat -f -c %T "$BATS_RUN_TMPDIR")" = tmpfs ]
	[ "$(stat -f -c %T "$BATS_TEST_TMPDIR")" = tmpfs ]
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

@test "vm: a running container is in the cgroup <cgroup2>/ward/<id>" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	run_detached "$id"
	wait_status "$id" running
	pid=$(init_pid "$id")
	[ "$pid" -gt 0 ]
	[ -d "$CG2/ward/$id" ] || fail "no cgroup $CG2/ward/$id"
	grep -qx "$pid" "$CG2/ward/$id/cgroup.procs" || fail "pid $pid not in $CG2/ward/$id: $(cat "$CG2/ward/$id/cgroup.procs")"
	[ "$(cat "/proc/$pid/cgroup")" = "0::/ward/$id" ] || fail "/proc/$pid/cgroup: $(cat "/proc/$pid/cgroup")"
	ward delete -f "$id"
	wait_gone "$pid"
	[ ! -d "$CG2/ward/$id" ] || fail "cgroup $CG2/ward/$id left after delete"
	assert_nothing_left "$id"
}
