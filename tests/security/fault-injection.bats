#!/usr/bin/env bats
# Crash safety: `ward create` and `ward delete` killed (SIGKILL) right after each step that
# leaves something on the host, then `ward delete -f` (or `ward gc`): nothing may be left,
# not the state dir, a cgroup, a process, a mount, an ID-pool hold, a GPU lease or a netns.
# The kill points are ward's own (runtime/lib/fault.c: WARD_FAULT_KILL=POINT kills ward
# there; WARD_FAULT_KILL=list lists them all), so a new point is tested here without
# changing this file. Also: concurrent creates of one pod by two tenants (the pod lock).
#
# Each test has its own configuration (the built-in policy, a private lib_dir: the ID pool
# under $LIB is this test's alone), so ID-pool checks are exact. The GPU test runs on the
# fake GPU host of tests/gpu/fixture.bash.
#
# Run alone: make test-integration T=fault-injection

: "${WARD:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/ward}"
: "${WARD_TEST_BIN:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/tests}"
export WARD_CONFIG=
load ../helpers
load ../gpu/fixture

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
}

teardown() {
	ward_teardown
	local rc=$?
	gpu_fixture_teardown
	return $rc
}

# points PREFIX: ward's kill points that start with PREFIX (create. or delete.)
points() {
	WARD_FAULT_KILL=list "$WARD" | grep "^$1"
}

# kill_at POINT ARGS...: ward ARGS with WARD_FAULT_KILL=POINT; it must die of SIGKILL.
# Output goes to a file: a killed create's children must not hold a pipe of ours.
# With --maybe, a point this bundle does not pass (success) is fine too.
kill_at() {
	local maybe=false point rc=0
	[ "$1" != --maybe ] || { maybe=true && shift; }
	point=$1
	shift
	WARD_FAULT_KILL=$point ward "$@" </dev/null >"$BATS_TEST_TMPDIR/killed.out" 2>&1 || rc=$?
	[ "$rc" = 137 ] || { $maybe && [ "$rc" = 0 ]; } ||
		fail "ward $* with WARD_FAULT_KILL=$point: status $rc, not 137 (SIGKILL): $(cat "$BATS_TEST_TMPDIR/killed.out")"
}

# undo_killed ID: what an admin does after a create of ID died: delete -f, or (a create
# killed before its state dir got its name: there is no ID to delete) gc
undo_killed() {
	if [ -e "$STATE/$1" ]; then
		run -0 ward delete -f "$1"
	else
		ls -A "$STATE" | grep -q '^@new-' || fail "no state dir for $1 after the kill"
		run -0 ward gc
	fi
}

# pool_mentions ID: the ID pool (this test's lib_dir) has an owner or user naming ID
pool_mentions() {
	pool_allocs | grep -qF "$1"
}

# clean ID POINT: nothing of container ID is left on the host
clean() {
	local id=$1 point=$2
	[ ! -e "$STATE/$id" ] || fail "$point: state dir left: $(ls -A "$STATE/$id")"
	[ -z "$(ls -A "$STATE" | grep -vx @gpu)" ] || fail "$point: state root not empty: $(ls -A "$STATE")"
	! pool_mentions "$id" || fail "$point: ID pool still names $id: $(pool_allocs)"
	! ip netns list 2>/dev/null | grep -qF "$id" || fail "$point: netns left: $(ip netns list)"
	! grep -qw nsfs <(grep -F "$id" /proc/self/mountinfo) || fail "$point: nsfs mount left"
	assert_nothing_left "$id"
}

@test "kill points: ward lists them, create's and delete's" {
	run -0 env WARD_FAULT_KILL=list "$WARD"
	for p in create.statedir create.intent create.ids create.cgroup create.fork create.devices create.state \
		delete.kill delete.cgroup delete.ids delete.state; do
		assert_line "$p"
	done
}

@test "create killed at every kill point: delete -f removes all it left (state, cgroup, processes, mounts, ID slice)" {
	make_bundle b
	set_args sleep 1000
	local p n=0
	for p in $(points create.); do
		[ "$p" != create.gpus ] || continue # no GPUs here: the GPU test below
		id=$(cid "c$n")
		n=$((n + 1))
		kill_at "$p" create -b "$BUNDLE" "$id"
		undo_killed "$id"
		clean "$id" "$p"
	done
	[ "$n" -ge 10 ] || fail "only $n create kill points"
}

@test "a killed create: plain delete names it a failed create and suggests -f; list skips it" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	kill_at create.cgroup create -b "$BUNDLE" "$id"
	[ -d "$(jq -r .cgroup "$STATE/$id/intent.json")" ] || fail "intent names no cgroup that exists"
	pool_mentions "$id" || fail "the killed create held no ID slice: nothing tested"
	run -1 ward delete "$id"
	assert_output --partial "container \"$id\" is a failed create"
	assert_output --partial "ward delete -f $id"
	run -0 ward list -q
	refute_output --partial "$id"
	run -0 ward delete -f "$id"
	clean "$id" create.cgroup
}

@test "create writes its intent once per allocation step: 3 times for a pod of its own" {
	# intent.h: the intent names what is about to be allocated before each allocation. For
	# a default-tenant container of a pod of its own: the pod and the ID-pool owner (one
	# write: nothing is allocated between them), the cgroup (with the acquired range), and
	# "ran" before the fork. Was 5 writes (the owner and the range each on their own).
	command -v strace >/dev/null || skip "strace is not installed"
	make_bundle b
	set_args sleep 1000
	id=$(cid s)
	strace -qq -s 4096 -e trace=openat,write -o "$BATS_TEST_TMPDIR/trace" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" create -b "$BUNDLE" "$id" </dev/null
	writes=$(grep -c '"intent.json.tmp", O_WRONLY' "$BATS_TEST_TMPDIR/trace" || true)
	[ "$writes" = 3 ] || fail "intent.json written $writes times"
	first=$(grep -m1 -A1 '"intent.json.tmp", O_WRONLY' "$BATS_TEST_TMPDIR/trace" | tail -1)
	[[ "$first" == *'\"ids\":{\"owner\":\"pod:'* ]] || fail "first intent names no ID-pool owner: $first"
	jq -e '.ids.owner and .ids.start > 0 and .ids.size > 0 and .cgroup and .ran' "$STATE/$id/intent.json" ||
		fail "intent: $(cat "$STATE/$id/intent.json")"
	[ "$(ward state "$id" | jq -r .status)" = created ]
}

@test "a create killed right after its first intent: the intent names the ID-pool owner, delete -f releases nothing held" {
	# The first intent names the pod and the ID-pool owner together (nothing is allocated
	# between them); a release of a user the pool does not hold is a no-op.
	make_bundle b
	set_args sleep 1000
	id=$(cid i)
	kill_at create.intent create -b "$BUNDLE" "$id"
	jq -e '.ids.owner | startswith("pod:")' "$STATE/$id/intent.json" ||
		fail "intent: $(cat "$STATE/$id/intent.json")"
	! pool_mentions "$id" || fail "the ID slice is held before the acquire: $(pool_allocs)"
	run -0 ward delete -f "$id"
	clean "$id" create.intent
	# the next create of that pod acquires its slice as ever
	start_container "$id"
	pool_mentions "$id" || fail "no ID slice after the create"
}

@test "delete killed at every kill point: a second delete -f finishes the job" {
	make_bundle b
	set_args sleep 1000
	local p n=0
	for p in $(points delete.); do
		id=$(cid "d$n")
		n=$((n + 1))
		start_container "$id"
		pool_mentions "$id" || fail "$p: the container holds no ID slice: nothing tested"
		kill_at "$p" delete -f "$id"
		run -0 ward delete -f "$id"
		clean "$id" "$p"
	done
	[ "$n" -ge 5 ] || fail "only $n delete kill points"
}

@test "ward gc removes what killed creates left and nothing else; --all takes stopped ones too" {
	make_bundle b
	set_args sleep 1000
	live=$(cid live)
	start_container "$live"
	make_bundle s
	set_args true
	stopped=$(cid stopped)
	start_container "$stopped"
	wait_status "$stopped" stopped
	BUNDLE="$BATS_TEST_TMPDIR/b"
	local p ids=()
	# (from the hooks on, state.json exists: a created container, not gc's to take; before,
	# while the init makes its mounts, the state is written aside only: create.saved)
	for p in create.newdir create.statedir create.ids create.cgroup create.fork create.pid \
		create.mounts create.saved; do
		id=$(cid "k-${p#create.}")
		kill_at "$p" create -b "$BUNDLE" "$id"
		ids+=("$id")
	done
	run -0 ward gc
	! ls -A "$STATE" | grep '^@new-' || fail "gc left a state dir that never got its name"
	for id in "${ids[@]}"; do
		[[ $id == *-k-newdir ]] || assert_line "$id" # (that one never had its name)
		[ ! -e "$STATE/$id" ] || fail "gc left $STATE/$id"
		! pool_mentions "$id" || fail "gc left the ID slice of $id"
		for cg in "$CG2/ward/$id" "$CG2"/ward/*/"$id"; do
			[ ! -d "$cg" ] || fail "gc left cgroup $cg"
		done
	done
	refute_line "$live"
	refute_line "$stopped"
	[ "$(status_of "$live")" = running ] || fail "gc touched the running container"
	[ "$(status_of "$stopped")" = stopped ] || fail "gc removed a stopped one without --all"
	run -0 ward gc --all
	assert_output "$stopped"
	[ ! -e "$STATE/$stopped" ]
	[ "$(status_of "$live")" = running ]
}

@test "GPUs: create and delete killed at every kill point: the lease is given back (clean before anything ran)" {
	[ -x "$(dirname "$WARD")/ward-gpu-hook" ] || fail "ward-gpu-hook not built"
	[ -f "$WARD_TEST_BIN/gpu/libcuda.so.1" ] || fail "stub libcuda not built"
	gpu_fixture
	LIB=$GPUFIX/lib
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	set_args sleep 1000
	local p n=0 st before_fork=true
	for p in $(points create.) $(points delete.); do
		id=$(cid "g$n")
		n=$((n + 1))
		if [[ $p == delete.* ]]; then
			start_container "$id"
			kill_at "$p" delete -f "$id"
		else
			kill_at "$p" create -b "$BUNDLE" "$id"
		fi
		if [ "$p" = create.gpus ]; then # the lease the kill leaves is there to give back
			run -0 ward gpu list --json
			jq -e --arg u "$GPU0" --arg c "$id" '.[] | select(.uuid == $u) | .holders[] | select(. == $c or (type == "object" and .container == $c))' <<<"$output" >/dev/null ||
				fail "$p: $GPU0 is not leased to $id: $output"
		fi
		undo_killed "$id"
		clean "$id" "$p"
		run -0 ward gpu list --json
		[ "$(jq -r --arg u "$GPU0" '.[] | select(.uuid == $u) | .holders | length' <<<"$output")" = 0 ] ||
			fail "$p: $GPU0 still has holders: $output"
		st=$(ledger_state "$GPU0")
		[ "$p" = create.fork ] && before_fork=false
		if $before_fork; then
			[ "$st" = free ] || fail "$p: nothing ran, yet $GPU0 is $st"
		else
			[ "$st" = free ] || [ "$st" = dirty ] || fail "$p: $GPU0 is $st"
			[ "$st" = free ] || run -0 ward gpu release "$GPU0"
		fi
	done
	[ "$n" -ge 15 ] || fail "only $n kill points"
}

# blocked_on_flock PID: PID waits for an flock (a "->" entry of /proc/locks)
blocked_on_flock() {
	grep -qE "^[0-9]+: -> FLOCK +ADVISORY +WRITE +$1 " /proc/locks
}

@test "create SIGKILLed from outside while it holds an ID slice: delete -f gives the slice back" {
	# No kill point: the create is held (deterministically) on the GPU ledger's lock, after it
	# took its ID slice and before it leased, and killed there from outside.
	[ -f "$WARD_TEST_BIN/gpu/libcuda.so.1" ] || fail "stub libcuda not built"
	gpu_fixture
	LIB=$GPUFIX/lib
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	set_args sleep 1000
	id=$(cid c)
	mkdir -p -m 0700 "$LIB/gpu"
	exec {lk}>"$LIB/gpu/ledger.lock"
	flock -x "$lk"
	# (not through the ward function: $! must be ward's pid)
	env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" create -b "$BUNDLE" "$id" </dev/null \
		>"$BATS_TEST_TMPDIR/c.out" 2>&1 {lk}>&- &
	cpid=$!
	local blocked=true
	retry 200 0.05 blocked_on_flock "$cpid" || blocked=false
	kill -9 "$cpid"
	wait "$cpid" || true
	exec {lk}>&-
	$blocked || fail "create never waited for the ledger lock: $(cat "$BATS_TEST_TMPDIR/c.out")"
	pool_mentions "$id" || fail "no ID slice taken before the GPU lease: $(pool_allocs)"
	run -0 ward delete -f "$id"
	! pool_mentions "$id" || fail "the ID slice of the killed create is still held: $(pool_allocs)"
	clean "$id" killed
	[ "$(ledger_state "$GPU0")" = free ] || fail "$GPU0: $(ledger_state "$GPU0")"
}

@test "delete -f of a create killed before it made its cgroup never kills another container's processes in it" {
	printf '{"trusted": true}\n' >"$CONF/tenants.d/tr$$.json"
	make_bundle a ".annotations[\"ward.dev/tenant\"] = \"tr$$\" | .linux.cgroupsPath = \"/ward-fi-$$-$BATS_TEST_NUMBER-a\""
	set_args sleep 1000
	a=$(cid a)
	start_container "$a"
	pid=$(init_pid "$a")
	# A create naming a's cgroup as its own is refused before it names anything.
	make_bundle b ".annotations[\"ward.dev/tenant\"] = \"tr$$\" | .linux.cgroupsPath = \"/ward-fi-$$-$BATS_TEST_NUMBER-a\""
	b=$(cid b)
	ward_capture create -b "$BUNDLE" "$b"
	[ "$status" = 1 ] && [[ "$stderr" == *"one container's cgroup is never inside another's"* ]] ||
		fail "status $status: $stderr"
	[ ! -e "$STATE/$b" ] || fail "state dir of $b left"
	# b's cgroup, named in its intent but not made when it was killed, is then made by
	# someone else and holds a's init: delete -f of b leaves it alone.
	make_bundle b2 ".annotations[\"ward.dev/tenant\"] = \"tr$$\" | .linux.cgroupsPath = \"/ward-fi-$$-$BATS_TEST_NUMBER-b\""
	set_args sleep 1000
	kill_at create.cgroup-named create -b "$BUNDLE" "$b"
	[ "$(jq -r .cgroup "$STATE/$b/intent.json")" = "$CG2/ward-fi-$$-$BATS_TEST_NUMBER-b" ] ||
		fail "intent: $(cat "$STATE/$b/intent.json")"
	mkdir "$CG2/ward-fi-$$-$BATS_TEST_NUMBER-b"
	on_teardown "rmdir $CG2/ward-fi-$$-$BATS_TEST_NUMBER-b"
	echo "$pid" >"$CG2/ward-fi-$$-$BATS_TEST_NUMBER-b/cgroup.procs"
	run -0 ward delete -f "$b"
	[ ! -e "$STATE/$b" ] || fail "state dir of $b left"
	pid_alive "$pid" || fail "delete -f of $b killed $a's init"
	echo "$pid" >"$CG2/ward-fi-$$-$BATS_TEST_NUMBER-a/cgroup.procs"
	[ "$(status_of "$a")" = running ]
	ward delete -f "$a"
	rmdir "$CG2/ward-fi-$$-$BATS_TEST_NUMBER-b" 2>/dev/null || true
	[ ! -d "$CG2/ward-fi-$$-$BATS_TEST_NUMBER-a" ] || fail "cgroup left"
}

@test "network hook: create killed at every kill point: delete -f takes the veth and the address back" {
	NET_HOOK=$(dirname "$WARD")/ward-net-hook
	[ -x "$NET_HOOK" ] || fail "ward-net-hook not built"
	# the hook works in a network namespace of the test's, standing in for the host's
	NS="wfi-$BATS_TEST_NUMBER-$$"
	ip netns add "$NS"
	on_teardown "ip netns del $NS"
	local netstate="$BATS_TEST_TMPDIR/netstate" hook
	hook() {
		jq -nc --arg p "$NET_HOOK" --arg c "$1" --arg ns "/run/netns/$NS" --arg d "$netstate" \
			'{path: $p, args: [$p, $c, "--bridge", "wfi0", "--subnet", "10.203.78.0/24",
				"--host-netns", $ns, "--state-dir", $d], timeout: 20}'
	}
	printf '{"trusted": true}\n' >"$CONF/tenants.d/tr$$.json"
	make_bundle b ".annotations[\"ward.dev/tenant\"] = \"tr$$\"
		| .hooks.createRuntime = [\$up] | .hooks.poststop = [\$down]" \
		--argjson up "$(hook up)" --argjson down "$(hook down)"
	set_args sleep 1000
	local p n=0 hooked=0
	for p in $(points create.); do
		[ "$p" != create.gpus ] || continue
		id=$(cid "n$n")
		n=$((n + 1))
		kill_at --maybe "$p" create -b "$BUNDLE" "$id" # (a trusted pod: no ID slice)
		[ -z "$(ip -n "$NS" -o link show | grep ' wv')" ] || hooked=$((hooked + 1))
		undo_killed "$id"
		clean "$id" "$p"
		[ -z "$(ip -n "$NS" -o link show | grep ' wv')" ] || fail "$p: veth left: $(ip -n "$NS" -o link show)"
		[ -z "$(jq -r '.leases // {} | keys[]' "$netstate/wfi0.json" 2>/dev/null)" ] ||
			fail "$p: address lease left: $(cat "$netstate/wfi0.json")"
	done
	[ "$hooked" -ge 3 ] || fail "the hook had run at only $hooked kill points: nothing tested"
}

@test "pod lock: two tenants creating into one pod at once never both get in (15 rounds)" {
	# The pod's sandbox (a trusted tenant's) and a container of another tenant that names
	# it, created at the same moment: whichever comes second must see the first.
	printf '{"trusted": true}\n' >"$CONF/tenants.d/tr$$.json"
	printf '{}\n' >"$CONF/tenants.d/un$$.json"
	local r a b ra rb
	for r in $(seq 1 15); do
		a=$(cid "a$r")
		b=$(cid "b$r")
		make_bundle "a$r" ".annotations[\"io.kubernetes.cri.sandbox-id\"] = \"$a\" | .annotations[\"ward.dev/tenant\"] = \"tr$$\""
		set_args sleep 1000
		ba=$BUNDLE
		make_bundle "b$r" ".annotations[\"io.kubernetes.cri.sandbox-id\"] = \"$a\" | .annotations[\"ward.dev/tenant\"] = \"un$$\""
		set_args sleep 1000
		bb=$BUNDLE
		ward create -b "$ba" "$a" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/a.err" &
		pa=$!
		ward create -b "$bb" "$b" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/b.err" &
		pb=$!
		ra=0 rb=0
		wait "$pa" || ra=$?
		wait "$pb" || rb=$?
		[ "$ra" != 0 ] || [ "$rb" != 0 ] || fail "round $r: both tenants got into pod $a"
		[ "$rb" != 0 ] || fail "round $r: $b got in, $a did not: $(cat "$BATS_TEST_TMPDIR/a.err")"
		grep -qE "already has container|does not join pod" "$BATS_TEST_TMPDIR/b.err" ||
			fail "round $r: $(cat "$BATS_TEST_TMPDIR/b.err")"
		ward delete -f "$b"
		ward delete -f "$a"
	done
}
