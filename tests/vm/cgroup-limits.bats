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
	cg=$(container_cgroup "$id")
	assert_equal "$(cat "$cg/memory.max")" 67108864
	assert_equal "$(cat "$cg/memory.low")" 33554432
	assert_equal "$(cat "$cg/pids.max")" 64
	assert_equal "$(cat "$cg/cpu.max")" "50000 100000"
	# shares 2048 -> weight (runc's quadratic conversion): above the default 100
	[ "$(cat "$cg/cpu.weight")" -gt 100 ]
	ward delete -f "$id"
	assert_no_cgroup "$id" "$cg"
	assert_nothing_left "$id"
}

@test "vm cgroup: a memory limit OOM-kills the hog; events streams the kill, --stats counts it" {
	make_bundle b '.linux.resources = {"memory": {"limit": 16777216, "swap": 16777216}}'
	add_cgprobe
	set_args sleep 1000
	id=$(cid o)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	# `ward events` follows the container (statistics every 10 minutes: only the first line
	# before the kill) and prints an oom event when the kernel kills inside it.
	ward events --interval 10m "$id" >"$BATS_TEST_TMPDIR/events" 2>&1 </dev/null 3>&- &
	on_teardown "kill $!"
	wait_file "$BATS_TEST_TMPDIR/events" && retry 100 0.1 grep -q '"type":"stats"' "$BATS_TEST_TMPDIR/events"
	# A 64 MiB allocation in a 16 MiB cgroup: the kernel kills it.
	run ward exec "$id" sh -c 'cgprobe memhog 64; echo "status $?"'
	assert_line "status 137"
	refute_line "allocated 64"
	keyed_above "$cg/memory.events" oom_kill 0 || fail "memory.events: $(cat "$cg/memory.events")"
	retry 100 0.1 grep -q '"type":"oom"' "$BATS_TEST_TMPDIR/events" ||
		fail "no oom event from ward events: $(cat "$BATS_TEST_TMPDIR/events")"
	run grep '"type":"oom"' "$BATS_TEST_TMPDIR/events"
	assert_output "{\"type\":\"oom\",\"id\":\"$id\"}"
	run ward events --stats "$id"
	assert_success
	jq -e '.type == "stats" and .data.memory.usage.limit == 16777216
		and .data.memory.usage.failcnt > 0' <<<"$output" >/dev/null || fail "events --stats: $output"
	# the container itself survives the kill of its hog
	assert_equal "$(status_of "$id")" running
	ward delete -f "$id"
	assert_no_cgroup "$id" "$cg"
	assert_nothing_left "$id"
}

@test "vm cgroup: update changes memory.max and pids.max of a running container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid u)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	ward update --memory 256m --pids-limit 32 "$id"
	assert_equal "$(cat "$cg/memory.max")" 268435456
	assert_equal "$(cat "$cg/pids.max")" 32
	ward delete -f "$id"
	assert_nothing_left "$id"
}

@test "vm cgroup: pause and resume through cgroup.freeze, ps from cgroup.procs, kill --all with cgroup.kill" {
	make_bundle b '.linux.resources = {"pids": {"limit": 32}}'
	set_args sh -c 'sleep 1000 & sleep 1000 & wait'
	id=$(cid p)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	retry 50 0.1 test "$(wc -l <"$cg/cgroup.procs")" -ge 3
	ward pause "$id"
	assert_equal "$(status_of "$id")" paused
	keyed_above "$cg/cgroup.events" frozen 0 || fail "cgroup.events: $(cat "$cg/cgroup.events")"
	ward resume "$id"
	assert_equal "$(status_of "$id")" running
	assert_equal "$(keyed_value "$cg/cgroup.events" frozen)" 0
	run ward ps --format json "$id"
	assert_success
	assert_equal "$(jq length <<<"$output")" "$(wc -l <"$cg/cgroup.procs")"
	ward kill --all "$id" KILL
	wait_status "$id" stopped
	assert_equal "$(wc -l <"$cg/cgroup.procs")" 0
	ward delete "$id"
	assert_no_cgroup "$id" "$cg"
	assert_nothing_left "$id"
}
