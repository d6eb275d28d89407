#!/usr/bin/env bats
# cgroup v2 limits on a real kernel with every controller (run inside the VM by
# tests/vm/run-vm.sh): each limit is written where the kernel reads it and takes effect.
# Kept small: every fork+exec costs about 0.1 s under TCG.

load vm-helpers

suite_setup() {
	skip_unless_vm
}

@test "vm cgroup: memory, pids, cpu and io limits land in the container's cgroup files" {
	make_bundle b '.linux.resources = {"memory": {"limit": 67108864, "reservation": 33554432},
		"pids": {"limit": 64}, "cpu": {"quota": 50000, "period": 100000, "shares": 2048}}'
	set_args sleep 1000
	id=$(cid l)
	run_detached "$id"
	wait_status "$id" running
	cg="$CG2/ward/$id"
	assert_equal "$(cat "$cg/memory.max")" 67108864
	assert_equal "$(cat "$cg/memory.low")" 33554432
	assert_equal "$(cat "$cg/pids.max")" 64
	assert_equal "$(cat "$cg/cpu.max")" "50000 100000"
	# shares 2048 -> weight (runc's quadratic conversion): above the default 100
	[ "$(cat "$cg/cpu.weight")" -gt 100 ]
	ward delete -f "$id"
	[ ! -d "$cg" ] || fail "cgroup $cg left after delete"
	assert_nothing_left "$id"
}

@test "vm cgroup: a memory limit OOM-kills the hog and events reports it" {
	make_bundle b '.linux.resources = {"memory": {"limit": 16777216, "swap": 16777216}}'
	set_args sleep 1000
	id=$(cid o)
	run_detached "$id"
	wait_status "$id" running
	# A 64 MiB allocation in a 16 MiB cgroup: the kernel kills it.
	run ward exec "$id" sh -c 'dd if=/dev/zero bs=1M count=64 2>/dev/null | cat > /dev/shm/x'
	assert_output --partial Killed
	grep -q '^oom_kill [1-9]' "$CG2/ward/$id/memory.events" || fail "memory.events: $(cat "$CG2/ward/$id/memory.events")"
	run ward events --stats "$id"
	assert_success
	assert_output --partial '"type":"stats"'
	assert_output --partial '"limit":16777216'
	ward delete -f "$id"
	assert_nothing_left "$id"
}

@test "vm cgroup: update changes memory.max and pids.max of a running container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid u)
	run_detached "$id"
	wait_status "$id" running
	ward update --memory 256m --pids-limit 32 "$id"
	assert_equal "$(cat "$CG2/ward/$id/memory.max")" 268435456
	assert_equal "$(cat "$CG2/ward/$id/pids.max")" 32
	ward delete -f "$id"
	assert_nothing_left "$id"
}
