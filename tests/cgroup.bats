#!/usr/bin/env bats
# cgroup v2 resources: the device program (eBPF), linux.resources -> cgroup files, missing
# controllers on a hybrid host, update and events.
#
# On this project's build host cgroup v2 is hybrid: memory, cpu, cpuset, pids and io are
# bound to cgroup v1, so $CG2 offers only hugetlb (and misc where built). Tests that need a
# controller check $CG2/cgroup.controllers and take the path that applies; the VM harness
# (tests/vm/) runs them with every controller.

load helpers

has_controller() { grep -qw "$1" "$CG2/cgroup.controllers"; }

# A container allowed to mknod (no user namespace: ward spec's default).
mknod_bundle() {
	make_bundle b '.process.capabilities.bounding += ["CAP_MKNOD"]
		| .process.capabilities.effective += ["CAP_MKNOD"]
		| .process.capabilities.permitted += ["CAP_MKNOD"]'
}

# ---- the device program --------------------------------------------------------------

@test "devices: a mknod'ed c 1:1 (/dev/mem) node cannot be opened; /dev/null, zero, urandom work" {
	mknod_bundle
	set_cmd "echo x > /dev/null && echo null-ok; head -c 3 /dev/zero | wc -c; head -c 5 /dev/urandom | wc -c
		mknod /tmp/mem c 1 1 && echo mknod-ok
		cat /tmp/mem > /dev/null"
	run_container
	assert_failure
	assert_line null-ok
	assert_line 3
	assert_line 5
	# mknod is allowed (runc/crun do the same); opening the node is not
	assert_line mknod-ok
	[[ "$stderr" == *"/tmp/mem"*"Operation not permitted"* ]] || fail "open of c 1:1 was not refused: $stderr"
}

@test "devices: containerd's deny-all plus ward's defaults: /dev/ptmx opens" {
	make_bundle b
	set_cmd 'exec 3<>/dev/ptmx && echo ptmx-ok'
	run_container
	assert_success
	assert_line ptmx-ok
}

@test "devices: an allow rule for c 1:7 opens a node c 1:7; a rule for c 4095:0 r lets read through and not write" {
	mknod_bundle
	# c 1:7 (/dev/full) is in ward's default list anyway; c 4095:0 has no driver, so an
	# open the program allows fails with ENXIO from the kernel, one it denies with EPERM.
	config_edit '.linux.resources.devices += [
		{"allow": true, "type": "c", "major": 1, "minor": 7, "access": "rwm"},
		{"allow": true, "type": "c", "major": 4095, "minor": 0, "access": "r"}]'
	set_cmd 'mknod /tmp/full c 1 7; echo x > /tmp/full; echo "full rc=$?"
		mknod /tmp/nodrv c 4095 0
		cat /tmp/nodrv; echo x > /tmp/nodrv'
	run_container
	assert_line "full rc=1"
	[[ "$stderr" == *"No space left on device"* ]] || fail "writing c 1:7 should give ENOSPC: $stderr"
	[[ "$stderr" == *"can't open '/tmp/nodrv': No such device or address"* ]] || fail "read of c 4095:0 should pass the program: $stderr"
	[[ "$stderr" == *"can't create /tmp/nodrv: Operation not permitted"* ]] || fail "write of c 4095:0 should be denied: $stderr"
}

@test "devices: without linux.resources.devices only ward's defaults are allowed" {
	mknod_bundle
	config_edit 'del(.linux.resources)'
	set_cmd 'echo x > /dev/null && echo null-ok; mknod /tmp/nodrv c 4095 0; cat /tmp/nodrv'
	run_container
	assert_line null-ok
	[[ "$stderr" == *"'/tmp/nodrv': Operation not permitted"* ]] || fail "c 4095:0 not denied: $stderr"
}

@test "devices: an allow-all rule lets every device through the program" {
	mknod_bundle
	config_edit '.linux.resources.devices += [{"allow": true, "access": "rwm"}]'
	set_cmd 'mknod /tmp/nodrv c 4095 0; cat /tmp/nodrv'
	run_container
	[[ "$stderr" == *"'/tmp/nodrv': No such device or address"* ]] || fail "allow-all did not allow: $stderr"
}

@test "devices: in a user namespace the bind-mounted default devices still work" {
	make_bundle b
	userns_map
	set_cmd 'echo x > /dev/null && echo null-ok; head -c 2 /dev/zero | wc -c'
	run_container
	assert_success
	assert_line null-ok
	assert_line 2
}

@test "devices: a bad rule fails create naming the field, nothing left behind" {
	make_bundle b '.linux.resources.devices += [{"allow": true, "type": "p", "access": "rwm"}]'
	run_container
	assert_failure
	if ward_specific; then
		[[ "$stderr" == *"linux.resources.devices[1].type"* ]] || fail "$stderr"
	fi
	assert_nothing_left "$ID"
}

@test "update --resources replaces the device program and keeps the default allow list" {
	mknod_bundle
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	ward exec "$id" mknod /tmp/nodrv c 4095 0
	run --separate-stderr ward exec "$id" cat /tmp/nodrv
	[[ "$stderr" == *"Operation not permitted"* ]] || fail "before update: $stderr"

	ward update -r - "$id" <<<'{"devices": [{"allow": false, "access": "rwm"},
		{"allow": true, "type": "c", "major": 4095, "minor": 0, "access": "rw"}]}'
	run --separate-stderr ward exec "$id" cat /tmp/nodrv
	[[ "$stderr" == *"No such device or address"* ]] || fail "after update: $stderr"
	run ward exec "$id" sh -c 'echo x > /dev/null && head -c 1 /dev/urandom | wc -c'
	assert_success
	assert_output 1
	if command -v bpftool >/dev/null; then
		[ "$(bpftool cgroup show "$CG2/ward/$id" | grep -c device)" -eq 1 ]
	fi

	# A request without "devices" leaves the program alone.
	ward update -r - "$id" <<<'{"cpu": {"shares": 1024}}'
	run --separate-stderr ward exec "$id" cat /tmp/nodrv
	[[ "$stderr" == *"No such device or address"* ]] || fail "after a devices-less update: $stderr"

	# Back to deny-all.
	ward update -r - "$id" <<<'{"devices": [{"allow": false, "access": "rwm"}]}'
	run --separate-stderr ward exec "$id" cat /tmp/nodrv
	[[ "$stderr" == *"Operation not permitted"* ]] || fail "after the second update: $stderr"
}

@test "update: the flags get linux.resources' checks on the struct, before anything is written" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	ward_capture update --cpu-quota -5 "$id"
	assert_failure
	[[ "$stderr" == *"linux.resources.cpu.quota: -5 is not a quota (-1 or > 0)"* ]] || fail "$stderr"
	ward_capture update --blkio-weight 5 "$id"
	assert_failure
	[[ "$stderr" == *"linux.resources.blockIO.weight: 5 is not in 10..1000"* ]] || fail "$stderr"
	ward_capture update --memory-swap 64m "$id"
	assert_failure
	[[ "$stderr" == *"linux.resources.memory.swap: unable to set a swap limit without a memory limit"* ]] ||
		fail "$stderr"
	ward_capture update --cpu-shares -2 "$id"
	assert_failure
	[[ "$stderr" == *'--cpu-shares: "-2" is not a non-negative number'* ]] || fail "$stderr"
	echo '{"memory": {"limit": -5}}' >"$BATS_TEST_TMPDIR/res.json"
	ward_capture update -r "$BATS_TEST_TMPDIR/res.json" "$id"
	assert_failure
	[[ "$stderr" == *"linux.resources.memory.limit: -5 is not a limit (-1 or > 0)"* ]] || fail "$stderr"
	# Values a new cgroup has anyway need no controller: the flags apply.
	ward update --cpu-shares 1024 --cpu-quota -1 --pids-limit -1 "$id"
	[ "$(ward state "$id" | jq -r .status)" = running ]
}

# ---- limits, missing controllers -----------------------------------------------------

@test "resources: containerd's default block runs on this host (defaults need no controller)" {
	make_bundle b '.linux.resources = {"devices": [{"allow": false, "access": "rwm"}],
		"memory": {}, "cpu": {"shares": 1024}, "pids": {"limit": -1}}'
	set_cmd 'echo ran'
	run_container
	assert_success
	assert_output ran
	[ -z "$stderr" ] || fail "unexpected warnings: $stderr"
}

@test "resources: a memory limit needs the memory controller: create fails naming it, or the limit is set" {
	make_bundle b '.linux.resources.memory = {"limit": 67108864}'
	if has_controller memory; then
		set_args sleep 1000
		id=$(cid c)
		start_container "$id"
		[ "$(cat "$CG2/ward/$id/memory.max")" = 67108864 ]
		grep -qw memory "$CG2/ward/cgroup.subtree_control"
		return
	fi
	run_container
	assert_failure
	assert_one_line "$stderr"
	if ward_specific; then
		[[ "$stderr" == *"linux.resources.memory.limit: the memory controller is not available in the cgroup v2 hierarchy at $CG2"* ]] ||
			fail "error does not name the field and controller: $stderr"
		if grep -qE '^memory[[:space:]]+[1-9]' /proc/cgroups; then
			[[ "$stderr" == *"bound to cgroup v1"* ]] || fail "no hybrid hint: $stderr"
		fi
		# and what to do about it
		[[ "$stderr" == *'to run without this limit, leave it unset or set "missing_controllers": "warn" in ward.json'* ]] ||
			fail "error does not say what to do: $stderr"
	fi
	assert_nothing_left "$ID"
	[ ! -d "$CG2/ward/$ID" ]
}

# A configuration like the trusted test one, with missing_controllers set.
missing_config() {
	MISSING_CONFIG="$BATS_TEST_TMPDIR/config-$1"
	mkdir -p "$MISSING_CONFIG/tenants.d"
	cp "$WARD_REPO/tests/fixtures/config-trusted/tenants.d/default.json" "$MISSING_CONFIG/tenants.d/"
	printf '{"missing_controllers": "%s"}\n' "$1" >"$MISSING_CONFIG/ward.json"
}

@test "resources: missing_controllers warn runs the container, warns once per limit, and the state says so" {
	has_controller memory && has_controller pids && skip "memory and pids are available here"
	make_bundle b '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 50}'
	set_args sleep 1000
	missing_config warn
	id=$(cid c)
	WARD_CONFIG=$MISSING_CONFIG ward_capture create -b "$BUNDLE" "$id"
	[ "$status" = 0 ] || fail "create failed: $stderr"
	if ! has_controller memory; then
		[[ "$stderr" == *"linux.resources.memory.limit: the memory controller is not available"* ]] || fail "$stderr"
	fi
	if ! has_controller pids; then
		[[ "$stderr" == *"linux.resources.pids.limit: the pids controller is not available"* ]] || fail "$stderr"
	fi
	[[ "$stderr" == *"(missing_controllers: warn)"* ]] || fail "$stderr"
	run ward state "$id"
	assert_success
	unenforced=$(jq -r '.ward.unenforced' <<<"$output")
	[[ "$unenforced" == *"linux.resources.pids.limit (pids)"* ]] || fail "state: $output"
}

@test "resources: missing_controllers with an unknown value is a configuration error naming the file" {
	make_bundle b
	missing_config sometimes
	WARD_CONFIG=$MISSING_CONFIG run_container
	assert_failure
	[[ "$stderr" == *"ward.json:1: missing_controllers: expected \"error\" or \"warn\""* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "resources: hugepageLimits -> hugetlb.2MB.max (+rsvd), the controller enabled in the parent" {
	has_controller hugetlb || skip "no hugetlb controller in cgroup v2"
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	make_bundle b '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	[ "$(cat "$CG2/ward/$id/hugetlb.2MB.max")" = 4194304 ]
	[ "$(cat "$CG2/ward/$id/hugetlb.2MB.rsvd.max")" = 4194304 ]
	grep -qw hugetlb "$CG2/ward/cgroup.subtree_control"
	grep -qw hugetlb "$CG2/cgroup.subtree_control"

	ward update -r - "$id" <<<'{"hugepageLimits": [{"pageSize": "2MB", "limit": 2097152}]}'
	[ "$(cat "$CG2/ward/$id/hugetlb.2MB.max")" = 2097152 ]
}

@test "resources: an unknown hugepage size fails create naming the field" {
	has_controller hugetlb || skip "no hugetlb controller in cgroup v2"
	make_bundle b '.linux.resources.hugepageLimits = [{"pageSize": "4MB", "limit": 1}]'
	run_container
	assert_failure
	[[ "$stderr" == *"linux.resources.hugepageLimits[0]: hugetlb.4MB.max"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "resources: unified cgroup.max.descendants is written; unified cgroup.procs is refused" {
	make_bundle b '.linux.resources.unified = {"cgroup.max.descendants": "3"}'
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	[ "$(cat "$CG2/ward/$id/cgroup.max.descendants")" = 3 ]
	ward delete -f "$id"

	make_bundle b2 '.linux.resources.unified = {"cgroup.procs": "1"}'
	run_container
	assert_failure
	[[ "$stderr" == *"linux.resources.unified.cgroup.procs"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "resources: a unified key with a path is refused" {
	make_bundle b '.linux.resources.unified = {"../../cgroup.procs": "1"}'
	run_container
	assert_failure
	[[ "$stderr" == *"linux.resources.unified"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

# ---- update --------------------------------------------------------------------------

@test "update: flags follow the missing-controller rule; defaults are fine; a stopped container is refused" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward update --cpu-shares 1024 --pids-limit -1 --memory -1 "$id"
	assert_success
	if ! has_controller memory; then
		run ward update --memory 512m "$id"
		assert_failure
		assert_output --partial "linux.resources.memory.limit: the memory controller"
		missing_config warn
		WARD_CONFIG=$MISSING_CONFIG run ward update --memory 512m "$id"
		assert_success
		assert_output --partial "not applied"
	else
		ward update --memory 512m --memory-swap 1g "$id"
		[ "$(cat "$CG2/ward/$id/memory.max")" = 536870912 ]
		[ "$(cat "$CG2/ward/$id/memory.swap.max")" = 536870912 ] || [ ! -e "$CG2/ward/$id/memory.swap.max" ]
	fi
	run ward update --memory lots "$id"
	assert_failure
	assert_output --partial "--memory"
	run ward update -r - "$id" <<<'{"memory": '
	assert_failure
	assert_output --partial "invalid JSON"
	ward kill "$id" KILL
	wait_status "$id" stopped
	run ward update --cpu-shares 1024 "$id"
	assert_failure
	assert_output --partial "container not running"
	run ward update --cpu-shares 1024 nosuch
	assert_failure
	assert_output --partial "does not exist"
}

@test "update: -r takes precedence over the flags (runc semantics)" {
	has_controller hugetlb || skip "no hugetlb controller in cgroup v2"
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages"
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	# --memory would fail on a hybrid host; with -r it is ignored
	ward update --memory 1g -r - "$id" <<<'{"hugepageLimits": [{"pageSize": "2MB", "limit": 2097152}]}'
	[ "$(cat "$CG2/ward/$id/hugetlb.2MB.max")" = 2097152 ]
}

# ---- events --------------------------------------------------------------------------

@test "events --stats prints one runc-shaped stats object with the id" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run --separate-stderr ward events --stats "$id"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	jq -e --arg id "$id" '.type == "stats" and .id == $id and (.data.cpu.usage.total | type == "number")
		and (.data.cpu.usage.user | type == "number") and (.data.cpu.usage.kernel | type == "number")' \
		<<<"$output" >/dev/null || fail "unexpected stats: $output"
	if has_controller memory; then
		jq -e '.data.memory.usage.usage > 0' <<<"$output" >/dev/null
	else
		jq -e '.data.memory == null' <<<"$output" >/dev/null || fail "memory stats without the controller"
	fi
	if has_controller pids; then
		jq -e '.data.pids.current >= 1' <<<"$output" >/dev/null
	else
		jq -e '.data.pids == null' <<<"$output" >/dev/null
	fi
}

@test "events: stats every interval until the container stops, then exit 0" {
	make_bundle b
	set_args sleep 1.2
	id=$(cid c)
	start_container "$id"
	run --separate-stderr timeout 10 "$WARD" --root "$STATE" events --interval 300ms "$id"
	assert_success
	[ "${#lines[@]}" -ge 2 ] || fail "expected several stats lines: $output"
	for l in "${lines[@]}"; do
		jq -e --arg id "$id" '.type == "stats" and .id == $id' <<<"$l" >/dev/null || fail "bad line: $l"
	done
}

@test "events: a stopped container is refused; a bad interval is a usage error" {
	make_bundle b
	id=$(cid c)
	start_container "$id"
	wait_status "$id" stopped
	run ward events --stats "$id"
	assert_failure
	assert_output --partial "container not running"
	run ward events --interval 0s "$id"
	assert_failure
	assert_output --partial "--interval"
	run ward events --interval soon "$id"
	assert_failure
}

@test "events: an OOM kill is reported as {\"type\":\"oom\"}" {
	has_controller memory || skip "no memory controller in cgroup v2 (hybrid host)"
	make_bundle b '.linux.resources.memory = {"limit": 16777216, "swap": 16777216}'
	set_args sh -c 'sleep 1; head -c 100000000 /dev/zero | tail > /dev/null; sleep 1'
	id=$(cid c)
	start_container "$id"
	run --separate-stderr timeout 20 "$WARD" --root "$STATE" events --interval 10s "$id"
	assert_success
	printf '%s\n' "${lines[@]}" | jq -se --arg id "$id" 'any(.[]; .type == "oom" and .id == $id)' >/dev/null ||
		fail "no oom event: $output"
}

@test "create and run refuse a cgroup that is frozen (cgroup.freeze 1) instead of hanging; nothing is left (runc 1.1.5 hangs; later runc and crun refuse it)" {
	local cg="$CG2/ward-frozen-$$-$BATS_TEST_NUMBER"
	mkdir "$cg"
	on_teardown "rmdir '$cg'"
	echo 1 >"$cg/cgroup.freeze"
	make_bundle b '.linux.cgroupsPath = $p' --arg p "/$(basename "$cg")"
	for cmd in create run; do
		id=$(cid "$cmd")
		# a hang is a failure too: 20 s is far more than a create takes
		status=0
		timeout -k 5 20 env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" "$cmd" -b "$BUNDLE" "$id" \
			</dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 || status=$?
		[ "$status" -ne 0 ] || fail "$cmd into a frozen cgroup succeeded: $(cat "$BATS_TEST_TMPDIR/out")"
		[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "$cmd into a frozen cgroup hung"
		if ward_specific; then
			grep -q "cgroup $cg is frozen" "$BATS_TEST_TMPDIR/out" || fail "unclear error: $(cat "$BATS_TEST_TMPDIR/out")"
		fi
		ward delete -f "$id" 2>/dev/null || true
		[ ! -e "$STATE/$id" ] || fail "state dir left"
	done
	[ "$(cat "$cg/cgroup.freeze")" = 1 ] # ward did not thaw someone else's cgroup
	[ -z "$(cat "$cg/cgroup.procs")" ]
}

# n_procs_is CGROUP OP N: the number of processes in CGROUP compares to N (test's OP).
n_procs_is() { [ "$(wc -l <"$1/cgroup.procs")" "$2" "$3" ]; }

@test "exec whose container's cgroup is frozen after exec's paused check gives up naming the cgroup instead of hanging, and kills what it started; --ignore-paused waits for the resume (runc)" {
	ward_specific || skip "runc 1.1.5 waits for ever"
	make_bundle b
	set_args sleep 1000
	id=$(cid e)
	run_detached "$id"
	cg="$CG2$(sed -n 's/^0:://p' "/proc/$(init_pid "$id")/cgroup")"
	[ -e "$cg/cgroup.freeze" ]
	# --process from a FIFO: exec opens it after its paused check, so the freeze below is
	# exactly in the window a `ward pause` could hit
	mkfifo "$BATS_TEST_TMPDIR/proc.fifo"
	jq '.process | .args = ["sh", "-c", "touch /exec-ran"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/proc.json"
	(
		status=0
		timeout -k 5 30 env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" exec --process "$BATS_TEST_TMPDIR/proc.fifo" "$id" \
			</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1 || status=$?
		echo "$status" >"$BATS_TEST_TMPDIR/exec.rc"
	) 3>&- &
	exec 5>"$BATS_TEST_TMPDIR/proc.fifo" # returns once exec has opened it
	echo 1 >"$cg/cgroup.freeze"
	retry 200 0.05 grep -qx 'frozen 1' "$cg/cgroup.events"
	cat "$BATS_TEST_TMPDIR/proc.json" >&5
	exec 5>&-
	wait
	rc=$(cat "$BATS_TEST_TMPDIR/exec.rc")
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "exec into a frozen cgroup hung"
	[ "$rc" -ne 0 ] || fail "exec succeeded: $(cat "$BATS_TEST_TMPDIR/exec.out")"
	grep -q "cgroup $cg was frozen (the container was paused) while the process was being started" "$BATS_TEST_TMPDIR/exec.out" ||
		fail "unclear error: $(cat "$BATS_TEST_TMPDIR/exec.out")"
	echo 0 >"$cg/cgroup.freeze"
	# what that exec started was killed: after the thaw only the init is left, and the
	# command never ran
	retry 200 0.05 n_procs_is "$cg" -eq 1
	ward exec "$id" true
	[ ! -e "$BUNDLE/rootfs/exec-ran" ] || fail "the abandoned exec ran after the thaw"

	# --ignore-paused: waits while paused, runs once resumed
	ward pause "$id"
	(
		status=0
		timeout -k 5 30 env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" exec --ignore-paused "$id" echo ok \
			</dev/null >"$BATS_TEST_TMPDIR/ip.out" 2>&1 || status=$?
		echo "$status" >"$BATS_TEST_TMPDIR/ip.rc"
	) 3>&- &
	# its joiner is in the frozen cgroup before the resume
	retry 200 0.05 n_procs_is "$cg" -ge 2
	[ ! -e "$BATS_TEST_TMPDIR/ip.rc" ]
	ward resume "$id"
	wait
	[ "$(cat "$BATS_TEST_TMPDIR/ip.rc")" = 0 ] || fail "exec --ignore-paused: $(cat "$BATS_TEST_TMPDIR/ip.out")"
	[ "$(cat "$BATS_TEST_TMPDIR/ip.out")" = ok ]
}

@test "create whose cgroup is frozen half-way (by a createRuntime hook) fails with an error naming it instead of waiting for ever; nothing is left" {
	ward_specific || skip "runc 1.1.5 waits for ever"
	local cg="$CG2/ward-fz-$$-$BATS_TEST_NUMBER"
	make_bundle b '.linux.cgroupsPath = $p' --arg p "/$(basename "$cg")"
	printf '#!/bin/sh\necho 1 > %s/cgroup.freeze\n' "$cg" >"$BATS_TEST_TMPDIR/freeze.sh"
	chmod 0755 "$BATS_TEST_TMPDIR/freeze.sh"
	config_edit '.hooks.createRuntime = [{path: $p}]' --arg p "$BATS_TEST_TMPDIR/freeze.sh"
	id=$(cid c)
	status=0
	timeout -k 5 30 env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" create -b "$BUNDLE" "$id" \
		</dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 || status=$?
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "create hung"
	[ "$status" -ne 0 ] || fail "create succeeded"
	grep -q "cgroup $cg was frozen while the container was being created" "$BATS_TEST_TMPDIR/out" ||
		fail "unclear error: $(cat "$BATS_TEST_TMPDIR/out")"
	assert_nothing_left "$id"
	[ ! -e "$cg" ] || fail "the cgroup ward made is left"
}

@test "delete waits for the cgroup to empty on cgroup.events, not in 1 ms rmdir steps (strace: no sleeps, no rmdir loop)" {
	ward_specific || skip "ward's teardown"
	command -v strace >/dev/null || skip "no strace on this host"
	# No pid namespace: init exits and leaves 8 processes in the cgroup; delete -f kills
	# them (cgroup.kill) and has to wait for them to leave before its rmdir can work.
	make_bundle b
	drop_ns pid
	set_cmd 'for i in 1 2 3 4 5 6 7 8; do sleep 1000 & done; exit 0'
	local n id cg sc="$BATS_TEST_TMPDIR/strace" sleeps=0 rmdirs=0 s r
	for n in 1 2 3 4 5 6 7 8; do
		id=$(cid "d$n")
		run_detached "$id"
		wait_status "$id" stopped
		cg=$(find "$CG2/ward" -name "$id" -type d)
		[ -n "$cg" ] && [ -n "$(cat "$cg/cgroup.procs")" ] || fail "no processes left in $id's cgroup"
		strace -f -c -o "$sc" -e trace=rmdir,nanosleep,clock_nanosleep \
			env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" delete -f "$id" ||
			fail "delete -f $id failed"
		s=$(awk '$NF ~ /nanosleep$/ { n += $4 } END { print n + 0 }' "$sc")
		r=$(awk '$NF == "rmdir" && NF == 6 { n += $5 } END { print n + 0 }' "$sc")
		sleeps=$((sleeps + s))
		rmdirs=$((rmdirs + r))
		[ ! -e "$STATE/$id" ] || fail "state of $id left"
		[ -z "$(find "$CG2/ward" -name "$id" -type d)" ] || fail "cgroup of $id left"
	done
	echo "# 8 deletes: $sleeps sleeps, $rmdirs failed rmdirs" >&3
	# The old code slept 1 ms between rmdir attempts whenever the killed processes were
	# still on their way out; the new one sleeps only on an empty-but-busy cgroup.
	[ "$sleeps" -eq 0 ] || fail "delete slept $sleeps times waiting for the cgroup"
	# one EBUSY (before the wait) per delete at most
	[ "$rmdirs" -le 8 ] || fail "$rmdirs failed rmdirs in 8 deletes"
}
