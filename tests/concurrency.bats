#!/usr/bin/env bats
# Many runtime invocations at once on one state root: no lost containers, no corrupt state.

load helpers

# Run "$@" in the background with stdio on files and without bats' fd 3; pid appended to PIDS.
bg() {
	local name=$1
	shift
	"$@" </dev/null >"$BATS_TEST_TMPDIR/bg.$name.out" 2>&1 3>&- &
	PIDS+=($!)
}

# wait_all: wait for every pid in PIDS; sets FAILED to the number that exited non-zero.
wait_all() {
	local p
	FAILED=0
	for p in "${PIDS[@]}"; do
		wait "$p" || FAILED=$((FAILED + 1))
	done
	PIDS=()
}

@test "concurrency: 50 parallel creates on one root all succeed; list shows 50; parallel start; parallel delete leaves nothing" {
	make_bundle b
	set_args sleep 1000
	ids=()
	for i in $(seq 1 50); do ids+=("$(cid "c$i")"); done
	PIDS=()
	for id in "${ids[@]}"; do bg "create-$id" ward create -b "$BUNDLE" "$id"; done
	wait_all
	if [ "$FAILED" -ne 0 ]; then
		grep -h . "$BATS_TEST_TMPDIR"/bg.create-*.out | sort | uniq -c | head >&2
		fail "$FAILED of 50 parallel creates failed"
	fi
	run ward list -q
	assert_success
	assert_equal "${#lines[@]}" 50
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' "${ids[@]}" | sort)"
	run ward list --format json
	assert_equal "$(jq '[.[] | select(.status == "created")] | length' <<<"$output")" 50

	for id in "${ids[@]}"; do bg "start-$id" ward start "$id"; done
	wait_all
	[ "$FAILED" -eq 0 ] || fail "$FAILED of 50 parallel starts failed"
	run ward list --format json
	assert_equal "$(jq '[.[] | select(.status == "running")] | length' <<<"$output")" 50

	pids=$(jq -r '.[].pid' <<<"$output")
	for id in "${ids[@]}"; do bg "delete-$id" ward delete -f "$id"; done
	wait_all
	[ "$FAILED" -eq 0 ] || fail "$FAILED of 50 parallel deletes failed"
	run ward list -q
	assert_output ""
	for p in $pids; do wait_gone "$p"; done
	for id in "${ids[@]}"; do assert_nothing_left "$id"; done
}

@test "concurrency: state racing delete never prints a partial or corrupt state" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	# three readers, each calling state until it has seen the container gone 5 times in a
	# row (at most 1000 calls), recording every answer
	for r in 1 2 3; do
		(
			gone=0
			for i in $(seq 1 1000); do
				out=$(ward state "$id" 2>&1) && rc=0 || rc=$?
				printf '%s\n' "$rc" >"$BATS_TEST_TMPDIR/r$r.$i.rc"
				printf '%s\n' "$out" >"$BATS_TEST_TMPDIR/r$r.$i.out"
				if [ "$rc" -ne 0 ]; then gone=$((gone + 1)); else gone=0; fi
				[ "$gone" -ge 5 ] && break
			done
		) </dev/null >/dev/null 2>&1 3>&- &
		readers+=($!)
	done
	# let the readers get going before the delete
	retry 100 0.02 test -e "$BATS_TEST_TMPDIR/r3.3.rc"
	run ward delete -f "$id"
	assert_success
	for p in "${readers[@]}"; do wait "$p"; done
	ok=0 gone=0
	for f in "$BATS_TEST_TMPDIR"/r*.*.rc; do
		o=${f%.rc}.out
		if [ "$(cat "$f")" = 0 ]; then
			jq -e --arg id "$id" '.id == $id and (.status | IN("running", "stopped", "created", "paused"))' "$o" >/dev/null ||
				fail "state succeeded with bad JSON: $(cat "$o")"
			ok=$((ok + 1))
		else
			grep -q "does not exist" "$o" || fail "state failed without 'does not exist': $(cat "$o")"
			gone=$((gone + 1))
		fi
	done
	echo "ok=$ok gone=$gone" >&2
	[ "$ok" -gt 0 ] && [ "$gone" -gt 0 ] # the delete happened while the readers ran
	assert_nothing_left "$id"
}

@test "concurrency: 10 parallel creates of the same id: exactly one wins, the others say 'already exists'" {
	make_bundle b
	set_args sleep 1000
	id=$(cid same)
	PIDS=()
	for i in $(seq 1 10); do bg "same-$i" ward create -b "$BUNDLE" "$id"; done
	wait_all
	assert_equal "$FAILED" 9
	run grep -l "already exists" "$BATS_TEST_TMPDIR"/bg.same-*.out
	assert_equal "${#lines[@]}" 9
	[ "$(status_of "$id")" = created ]
	# exactly one init process exists for it
	pid=$(init_pid "$id")
	pid_alive "$pid"
	run ward list -q
	assert_output "$id"
}

@test "concurrency: 20 parallel execs into one container all run and return their own output" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	PIDS=()
	for i in $(seq 1 20); do bg "exec-$i" ward exec "$id" sh -c "echo exec-$i; exit $((i % 3))"; done
	local i=1 p rc
	for p in "${PIDS[@]}"; do
		rc=0
		wait "$p" || rc=$?
		assert_equal "$rc" $((i % 3))
		assert_equal "$(cat "$BATS_TEST_TMPDIR/bg.exec-$i.out")" "exec-$i"
		i=$((i + 1))
	done
	[ "$(status_of "$id")" = running ]
}

@test "concurrency: list --format json stays valid JSON while containers come and go" {
	make_bundle b
	set_args sleep 1000
	(
		for i in $(seq 1 15); do
			id="w${BATS_TEST_NUMBER}-$$-churn$i"
			echo "$id" >>"$BATS_TEST_TMPDIR/.ids"
			ward run -d -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1
			ward delete -f "$id" >/dev/null 2>&1
		done
	) </dev/null >/dev/null 2>&1 3>&- &
	churn=$!
	n=0
	while kill -0 "$churn" 2>/dev/null; do
		out=$(ward list --format json)
		jq -e 'type == "array" or . == null' <<<"$out" >/dev/null || fail "list printed invalid JSON: $out"
		n=$((n + 1))
	done
	wait "$churn"
	[ "$n" -gt 0 ]
	run ward list -q
	assert_output ""
}

@test "concurrency: kill and delete -f racing on a running container both end cleanly" {
	make_bundle b
	set_args sleep 1000
	for round in 1 2 3; do
		id=$(cid "r$round")
		start_container "$id"
		pid=$(init_pid "$id")
		PIDS=()
		bg "kill-$round" ward kill "$id" KILL
		bg "del-$round" ward delete -f "$id"
		wait_all
		# delete -f must succeed; kill may fail (the container may be gone already)
		run cat "$BATS_TEST_TMPDIR/bg.del-$round.out"
		wait_gone "$pid"
		assert_nothing_left "$id"
	done
}
