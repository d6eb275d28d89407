#!/usr/bin/env bats
# Container lifecycle: create, start, state, run, kill, delete, pause/resume.

load helpers

# A container program that records that it ran, then waits for the test to let it exit.
ran_then_wait_for_go() {
	set_cmd 'touch /shared/ran; while [ ! -e /shared/go ]; do sleep 0.05; done; echo bye; exit 0'
}

@test "create: status created, init alive, the program has not run; start runs it; exit stops it; delete removes the state" {
	make_bundle b
	share_dir
	ran_then_wait_for_go
	id=$(cid c)

	create_container "$id"
	run state_json "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = created ]
	pid=$(jq -r .pid <<<"$output")
	[ "$pid" -gt 0 ]
	pid_alive "$pid"
	# The program would create /shared/ran at once; give a broken runtime time to run it.
	sleep 0.3
	[ ! -e "$SHARED/ran" ] || fail "the container program ran before start"
	[ "$(status_of "$id")" = created ]

	ward start "$id"
	wait_file "$SHARED/ran"
	[ "$(status_of "$id")" = running ]
	[ "$(init_pid "$id")" = "$pid" ]

	touch "$SHARED/go"
	wait_status "$id" stopped
	[ "$(init_pid "$id")" = 0 ]
	wait_gone "$pid"
	run container_out "$id"
	assert_output bye

	run ward delete "$id"
	assert_success
	[ ! -e "$STATE/$id" ]
	run ward state "$id"
	assert_failure
	assert_output --partial "does not exist"
}

@test "create: the container program only starts after start, also when start comes much later" {
	make_bundle b
	share_dir
	set_cmd 'date +%s > /shared/ran'
	id=$(cid c)
	create_container "$id"
	sleep 1
	[ ! -e "$SHARED/ran" ]
	ward start "$id"
	wait_file "$SHARED/ran"
	wait_status "$id" stopped
}

@test "start: a second start fails and the container is unaffected" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward start "$id"
	assert_failure
	if ward_specific; then
		assert_output --partial "cannot start a container that has already started"
	fi
	[ "$(status_of "$id")" = running ]
	[ "$(init_pid "$id")" = "$pid" ]
}

@test "start: on a stopped container fails" {
	make_bundle b
	id=$(cid c)
	start_container "$id"
	wait_status "$id" stopped
	run ward start "$id"
	assert_failure
	[ "$(status_of "$id")" = stopped ]
}

@test "run: foreground run returns the container's exit status and its output" {
	make_bundle b
	set_cmd 'echo out-line; exit 42'
	run_container
	assert_equal "$status" 42
	assert_output out-line
}

@test "run: foreground run of a container killed by SIGKILL exits 137 (128+9)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	ward run -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/run.out" 2>&1 3>&- &
	bg=$!
	wait_status "$id" running
	ward kill "$id" KILL
	rc=0
	wait "$bg" || rc=$?
	assert_equal "$rc" 137
}

@test "run: foreground run deletes the container afterwards (no --keep)" {
	make_bundle b
	run_container
	assert_success
	run ward state "$ID"
	assert_failure
	assert_output --partial "does not exist"
	[ ! -e "$STATE/$ID" ]
}

@test "run --keep: the stopped container stays until delete" {
	make_bundle b
	set_cmd 'exit 3'
	run_container --keep
	assert_equal "$status" 3
	[ "$(status_of "$ID")" = stopped ]
	ward delete "$ID"
	[ ! -e "$STATE/$ID" ]
}

@test "run --detach: returns at once with the container running and its output on run's stdout" {
	make_bundle b
	set_cmd 'echo detached-hello; exec sleep 1000'
	id=$(cid d)
	run_detached "$id"
	[ "$(status_of "$id")" = running ]
	retry 100 0.05 grep -q detached-hello "$BATS_TEST_TMPDIR/$id.out"
	pid=$(init_pid "$id")
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 1000 " ]
}

@test "create --pid-file: the file holds the init pid reported by state" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	create_container "$id" --pid-file "$BATS_TEST_TMPDIR/init.pid"
	[ -s "$BATS_TEST_TMPDIR/init.pid" ]
	run cat "$BATS_TEST_TMPDIR/init.pid"
	assert_output "$(init_pid "$id")"
	pid_alive "$output"
}

@test "run --detach --pid-file: the file holds the pid of the container program" {
	make_bundle b
	set_args sleep 1000
	id=$(cid d)
	run_detached "$id" --pid-file "$BATS_TEST_TMPDIR/d.pid"
	pid=$(cat "$BATS_TEST_TMPDIR/d.pid")
	[ "$pid" = "$(init_pid "$id")" ]
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 1000 " ]
}

# Kill ----------------------------------------------------------------------------------

# The container's pid 1 records the signals it gets (pid 1 ignores signals it has no
# handler for, so the traps are what proves delivery).
trap_signals() {
	share_dir
	set_cmd 'for s in TERM USR1 USR2 HUP; do trap "echo $s >> /shared/sig" $s; done
		touch /shared/ready; while :; do sleep 0.05; done'
}

@test "kill: default signal is SIGTERM" {
	make_bundle b
	trap_signals
	id=$(cid k)
	start_container "$id"
	wait_file "$SHARED/ready"
	ward kill "$id"
	retry 100 0.05 grep -qx TERM "$SHARED/sig"
	run cat "$SHARED/sig"
	assert_output TERM
}

@test "kill: signals by name (TERM, SIGUSR1, HUP) and by number (12 = SIGUSR2)" {
	make_bundle b
	trap_signals
	id=$(cid k)
	start_container "$id"
	wait_file "$SHARED/ready"
	ward kill "$id" TERM
	retry 100 0.05 grep -qx TERM "$SHARED/sig"
	ward kill "$id" SIGUSR1
	retry 100 0.05 grep -qx USR1 "$SHARED/sig"
	ward kill "$id" HUP
	retry 100 0.05 grep -qx HUP "$SHARED/sig"
	ward kill "$id" 12
	retry 100 0.05 grep -qx USR2 "$SHARED/sig"
	run cat "$SHARED/sig"
	assert_output "$(printf 'TERM\nUSR1\nHUP\nUSR2')"
	[ "$(status_of "$id")" = running ]
}

@test "kill: SIGKILL stops the container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	pid=$(init_pid "$id")
	ward kill "$id" SIGKILL
	wait_status "$id" stopped
	wait_gone "$pid"
}

@test "kill: KILL by short name stops the container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	ward kill "$id" KILL
	wait_status "$id" stopped
}

@test "kill: signal 9 by number stops the container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	ward kill "$id" 9
	wait_status "$id" stopped
}

@test "kill: an unknown signal name fails and the container keeps running" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	run ward kill "$id" NOSUCHSIG
	assert_failure
	[ "$(status_of "$id")" = running ]
}

@test "kill ID 0: a liveness check, succeeds while the container runs and fails once it stopped" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	run ward kill "$id" 0
	assert_success
	[ "$(status_of "$id")" = running ]
	ward kill "$id" KILL
	wait_status "$id" stopped
	run ward kill "$id" 0
	assert_failure
}

@test "kill --all: every process of the container is killed" {
	make_bundle b
	share_dir
	set_cmd 'sleep 1000 & sleep 1001 & touch /shared/ready; wait'
	id=$(cid k)
	start_container "$id"
	wait_file "$SHARED/ready"
	run ward ps --format json "$id"
	assert_success
	mapfile -t pids < <(jq -r '.[]' <<<"$output")
	[ "${#pids[@]}" -eq 3 ] || fail "expected 3 processes, got: $output"
	ward kill --all "$id" KILL
	for p in "${pids[@]}"; do wait_gone "$p"; done
	wait_status "$id" stopped
}

@test "kill: KILL on a created (never started) container stops it; its program never runs" {
	make_bundle b
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid k)
	create_container "$id"
	pid=$(init_pid "$id")
	ward kill "$id" KILL
	wait_gone "$pid"
	wait_status "$id" stopped
	[ ! -e "$SHARED/ran" ]
	ward delete "$id"
	[ ! -e "$STATE/$id" ]
}

@test "kill: on a stopped container fails with 'container not running'" {
	make_bundle b
	id=$(cid k)
	start_container "$id"
	wait_status "$id" stopped
	run ward kill "$id" KILL
	assert_failure
	assert_output --partial "container not running"
}

# Delete --------------------------------------------------------------------------------

@test "delete: a running container is refused with 'that is not stopped' and keeps running" {
	make_bundle b
	set_args sleep 1000
	id=$(cid r)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward delete "$id"
	assert_failure
	assert_output --partial "that is not stopped"
	if ward_specific; then
		assert_output "ward: cannot delete container \"$id\" that is not stopped: running"
	fi
	[ "$(status_of "$id")" = running ]
	pid_alive "$pid"
	[ -e "$STATE/$id" ]
}

# runc destroys a created (never started) container on a plain delete, and containerd's
# shim relies on it (createdState.Delete calls `delete` without --force).
@test "delete: a created container is removed without --force and its program never runs" {
	make_bundle b
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid c)
	create_container "$id"
	pid=$(init_pid "$id")
	run ward delete "$id"
	assert_success
	wait_gone "$pid"
	assert_nothing_left "$id"
	[ ! -e "$SHARED/ran" ]
}

@test "delete --force: running container is killed and removed" {
	make_bundle b
	set_args sleep 1000
	id=$(cid r)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward delete --force "$id"
	assert_success
	wait_gone "$pid"
	assert_nothing_left "$id"
}

@test "delete -f: created container is killed and removed; its program never runs" {
	make_bundle b
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid c)
	create_container "$id"
	pid=$(init_pid "$id")
	run ward delete -f "$id"
	assert_success
	wait_gone "$pid"
	assert_nothing_left "$id"
	[ ! -e "$SHARED/ran" ]
}

@test "delete -f: stopped container is removed" {
	make_bundle b
	id=$(cid s)
	start_container "$id"
	wait_status "$id" stopped
	run ward delete -f "$id"
	assert_success
	assert_nothing_left "$id"
}

@test "delete: a stopped container is removed without --force" {
	make_bundle b
	id=$(cid s)
	start_container "$id"
	wait_status "$id" stopped
	run ward delete "$id"
	assert_success
	assert_nothing_left "$id"
}

@test "delete -f: an unknown id succeeds (exit 0)" {
	run ward delete -f "$(cid never-created)"
	assert_success
}

@test "unknown id: state, start, kill, delete, pause, resume, ps, exec fail with 'does not exist'" {
	id=$(cid missing)
	for cmd in state start kill delete pause resume ps; do
		run ward "$cmd" "$id"
		assert_failure
		assert_output --partial "does not exist"
		if ward_specific; then
			assert_output "ward: container \"$id\" does not exist"
		fi
	done
	run ward exec "$id" true
	assert_failure
	assert_output --partial "does not exist"
	if ward_specific; then assert_equal "$status" 255; fi
}

# State ---------------------------------------------------------------------------------

@test "state: JSON has ociVersion, id, pid, status, bundle, rootfs, created, owner and the config's annotations" {
	make_bundle b '.annotations = {"org.example.key": "v1", "org.example.other": "v2"}'
	set_args sleep 1000
	id=$(cid s)
	before=$(date -u +%s)
	create_container "$id"
	run ward state "$id"
	assert_success
	json=$output
	jq -e . <<<"$json" >/dev/null
	[ -n "$(jq -r .ociVersion <<<"$json")" ]
	[ "$(jq -r .id <<<"$json")" = "$id" ]
	[ "$(jq -r .pid <<<"$json")" -gt 0 ]
	[ "$(jq -r .status <<<"$json")" = created ]
	[ "$(jq -r .bundle <<<"$json")" = "$BUNDLE" ]
	[ "$(jq -r .rootfs <<<"$json")" = "$BUNDLE/rootfs" ]
	created=$(jq -r .created <<<"$json")
	[[ "$created" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]] ||
		fail "created is not RFC 3339: $created"
	t=$(date -u -d "$created" +%s)
	[ "$t" -ge $((before - 1)) ]
	[ "$t" -le $(($(date -u +%s) + 1)) ]
	jq -e 'has("owner") and (.owner | type == "string")' <<<"$json" >/dev/null
	[ "$(jq -c '.annotations | with_entries(select(.key | startswith("ward.dev/") | not))' <<<"$json")" = '{"org.example.key":"v1","org.example.other":"v2"}' ]
	# runc-shaped: 2-space indentation
	[[ "$(sed -n 2p <<<"$json")" =~ ^\ \ \" ]] || fail "state is not indented with 2 spaces: $json"
}

@test "state: status follows the process: created, running, stopped with pid 0" {
	make_bundle b
	share_dir
	ran_then_wait_for_go
	id=$(cid s)
	create_container "$id"
	[ "$(status_of "$id")" = created ]
	ward start "$id"
	[ "$(status_of "$id")" = running ]
	touch "$SHARED/go"
	wait_status "$id" stopped
	[ "$(state_field "$id" pid)" = 0 ]
}

@test "state: a container whose init was killed from outside the runtime reads stopped" {
	make_bundle b
	set_args sleep 1000
	id=$(cid s)
	start_container "$id"
	pid=$(init_pid "$id")
	kill -9 "$pid"
	wait_gone "$pid"
	wait_status "$id" stopped
	[ "$(state_field "$id" pid)" = 0 ]
}

@test "state dir layout: <root>/<id>/state.json and exec.fifo until start" {
	make_bundle b
	set_args sleep 1000
	id=$(cid s)
	create_container "$id"
	[ -f "$STATE/$id/state.json" ]
	[ -p "$STATE/$id/exec.fifo" ]
	if ward_specific; then
		[ -f "$STATE/$id/config.json" ] || fail "ward keeps the spec as created in <root>/<id>/config.json"
		jq -e . "$STATE/$id/config.json" >/dev/null
		# It is the typed spec serialized (spec_json.h), not the text the pod wrote: the
		# bundle's relative root.path is kept resolved, as create used it.
		[ "$(jq -r .root.path "$BUNDLE/config.json")" = rootfs ]
		[ "$(jq -r .root.path "$STATE/$id/config.json")" = "$BUNDLE/rootfs" ] ||
			fail "state config.json root.path: $(jq -c .root "$STATE/$id/config.json")"
	fi
	ward start "$id"
	[ ! -e "$STATE/$id/exec.fifo" ]
	[ -f "$STATE/$id/state.json" ]
}

@test "create reads the bundle's config.json once and writes the effective spec to state once" {
	# issue 15: the spec is read and parsed once per create (effective.c), the typed
	# spec is handed on, and the state dir's copy is written once from it. Counted on the
	# create process's own openat calls (strace without -f: the init reads no spec).
	command -v strace >/dev/null || skip "strace is not installed"
	ward_specific || skip "ward's own reads"
	make_bundle b
	set_args sleep 1000
	id=$(cid s)
	strace -qq -e trace=openat -o "$BATS_TEST_TMPDIR/trace" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" create -b "$BUNDLE" "$id" </dev/null
	reads=$(grep -c '"config.json", O_RDONLY' "$BATS_TEST_TMPDIR/trace" || true)
	writes=$(grep -c '"config.json", O_WRONLY' "$BATS_TEST_TMPDIR/trace" || true)
	[ "$reads" = 1 ] || fail "config.json read $reads times: $(grep config.json "$BATS_TEST_TMPDIR/trace")"
	[ "$writes" = 1 ] || fail "config.json written $writes times: $(grep config.json "$BATS_TEST_TMPDIR/trace")"
	[ "$(ward state "$id" | jq -r .status)" = created ]
}

@test "the init reads the bounding set once: one PR_CAPBSET_READ per capability" {
	# caps.c: the set read once is what the drops go by (was a second read before each
	# drop). Counted over run's processes (strace -f: the init applies the capabilities;
	# run returns once the container has exited).
	command -v strace >/dev/null || skip "strace is not installed"
	ward_specific || skip "ward's own syscalls"
	make_bundle b
	set_cmd 'grep ^CapBnd /proc/self/status'
	id=$(cid s)
	strace -f -qq -e trace=prctl -o "$BATS_TEST_TMPDIR/trace" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/out"
	# the process that drops (libcap's start-up probe in each exec of ward reads a few too)
	init=$(awk '/PR_CAPBSET_DROP/ {print $1; exit}' "$BATS_TEST_TMPDIR/trace")
	[ -n "$init" ] || fail "nothing dropped from the bounding set"
	reads=$(grep -c "^$init .*PR_CAPBSET_READ" "$BATS_TEST_TMPDIR/trace" || true)
	last=$(cat /proc/sys/kernel/cap_last_cap)
	[ "$reads" -le $((last + 1)) ] || fail "$reads reads of the bounding set for $((last + 1)) capabilities"
	bnd=$(awk '/^CapBnd/ {print $2}' "$BATS_TEST_TMPDIR/out")
	[ -n "$bnd" ] && [ "$bnd" != "$(awk '/^CapBnd/ {print $2}' /proc/self/status)" ] ||
		fail "the container's bounding set ($bnd) is the host's"
}

@test "a container that joins no namespace is cloned straight into its new namespaces: one clone3, no stage process" {
	# init.h: the runtime clones the init into all its new namespaces at once (clone3 with
	# the CLONE_NEW* flags) when nothing is joined by path and no time namespace is new.
	# Counted over run's processes (strace -f; run returns once the container exited).
	command -v strace >/dev/null || skip "strace is not installed"
	ward_specific || skip "ward's own syscalls"
	make_bundle b
	set_ns user
	config_edit '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	set_cmd 'echo "pid=$$ $(awk "{print \$2}" /proc/self/uid_map)"'
	id=$(cid s)
	strace -f -qq -e trace=clone,clone3,fork,vfork -o "$BATS_TEST_TMPDIR/trace" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/out"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/out")" "pid=1 100000"
	# the init, and the shell's command substitution inside the container
	clones=$(grep -E 'clone3?\(|fork\(' "$BATS_TEST_TMPDIR/trace" | grep -c CLONE_NEWUSER || true)
	[ "$clones" = 1 ] || fail "not one clone into the namespaces: $(cat "$BATS_TEST_TMPDIR/trace")"
	grep -E 'clone3?\(' "$BATS_TEST_TMPDIR/trace" | grep CLONE_NEWUSER | grep -q CLONE_NEWPID ||
		fail "not cloned into its pid namespace: $(cat "$BATS_TEST_TMPDIR/trace")"
	# no stage 1 in between: the runtime's only child is the init
	runtime=$(awk '/CLONE_NEWUSER/ {print $1; exit}' "$BATS_TEST_TMPDIR/trace")
	children=$(grep -cE "^$runtime +(clone3?|fork)\(" "$BATS_TEST_TMPDIR/trace" || true)
	[ "$children" = 1 ] || fail "run made $children processes: $(cat "$BATS_TEST_TMPDIR/trace")"
}

@test "a container with a new time namespace still gets its offsets (the two-stage path)" {
	ward_specific || skip "ward's stages"
	[ -e /proc/self/ns/time ] || skip "no time namespaces"
	make_bundle b
	set_ns time
	config_edit '.linux.timeOffsets = {boottime: {secs: 86400, nanosecs: 0}}'
	set_cmd 'cut -d. -f1 /proc/uptime'
	run_container
	assert_success
	host=$(cut -d. -f1 /proc/uptime)
	[ "$output" -ge $((host + 86000)) ] || fail "uptime $output, host's $host: no offset"
}

# Pause / resume ------------------------------------------------------------------------

counter_container() {
	share_dir
	set_cmd 'i=0; while :; do i=$((i+1)); echo $i > /shared/count.tmp; mv /shared/count.tmp /shared/count; sleep 0.02; done'
}

@test "pause: state paused and the container's counter stops; resume: running and it advances" {
	make_bundle b
	counter_container
	id=$(cid p)
	start_container "$id"
	wait_file "$SHARED/count"
	ward pause "$id"
	[ "$(status_of "$id")" = paused ]
	if ward_specific; then
		[ "$(cat "$CG2/ward/$id/cgroup.freeze")" = 1 ]
		retry 50 0.05 grep -qx 'frozen 1' "$CG2/ward/$id/cgroup.events"
	fi
	sleep 0.1 # let the last write settle
	c1=$(cat "$SHARED/count")
	sleep 0.5
	c2=$(cat "$SHARED/count")
	assert_equal "$c2" "$c1"

	ward resume "$id"
	[ "$(status_of "$id")" = running ]
	retry 100 0.05 sh -c "[ \"\$(cat '$SHARED/count')\" -gt $c2 ]"
}

@test "pause: a stopped container cannot be paused; resume of a running one fails" {
	make_bundle b
	set_args sleep 1000
	id=$(cid p)
	start_container "$id"
	run ward resume "$id"
	assert_failure
	[ "$(status_of "$id")" = running ]
	ward kill "$id" KILL
	wait_status "$id" stopped
	run ward pause "$id"
	assert_failure
	assert_output --partial "not running"
}

@test "delete --force: a paused container is killed and removed" {
	make_bundle b
	counter_container
	id=$(cid p)
	start_container "$id"
	pid=$(init_pid "$id")
	ward pause "$id"
	[ "$(status_of "$id")" = paused ]
	run ward delete -f "$id"
	assert_success
	wait_gone "$pid"
	assert_nothing_left "$id"
}

@test "kill: SIGKILL reaches a paused container" {
	make_bundle b
	set_args sleep 1000
	id=$(cid p)
	start_container "$id"
	pid=$(init_pid "$id")
	ward pause "$id"
	ward kill "$id" KILL
	ward resume "$id" 2>/dev/null || true
	wait_gone "$pid"
	wait_status "$id" stopped
}
