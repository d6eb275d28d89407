#!/usr/bin/env bats
# containerd-shim-ward-v2 end to end: a private containerd 1.6 (tests/containerd/harness.bash)
# runs a locally built busybox image with `--runtime io.containerd.ward.v2` through ctr.
# Not part of `make test` (tests/run-all.sh does not look in tests/containerd/); run with
#   bats tests/containerd/e2e.bats
# E2E_RUNTIME=io.containerd.runc.v2 runs the same tests against runc's shim (the
# ward-specific ones skip), which checks the suite itself.

load harness

setup_file() {
	ctd_setup
}

teardown_file() {
	ctd_teardown
}

teardown() {
	local id
	ctd_note_sockets
	for id in $(c container ls -q 2>/dev/null); do remove_container "$id"; done
	if [ -n "${EVENTS_PID:-}" ]; then kill "$EVENTS_PID" 2>/dev/null; wait "$EVENTS_PID" 2>/dev/null; fi
	true
}

ward_only() {
	[ "$RUNTIME" = io.containerd.ward.v2 ] || skip "ward-specific (runtime $RUNTIME)"
}

@test "ctr run --rm: output of the container" {
	run c run --rm --runtime "$RUNTIME" "$IMAGE" t-hello echo hello
	assert_success
	assert_output hello
	# --rm removed task and container
	assert_equal "$(c container ls -q | grep -cxF t-hello)" 0
}

@test "ctr run --rm: the exit status propagates" {
	run c run --rm --runtime "$RUNTIME" "$IMAGE" t-exit sh -c 'echo out; exit 3'
	assert_equal "$status" 3
	assert_output out
}

@test "ctr run: stdin reaches the container" {
	# (with io.containerd.runc.v2, ctr 1.6's stdin EOF never reaches the container: cat
	# waits forever; ward's shim hands the FIFO to the container directly)
	[ "$RUNTIME" = io.containerd.ward.v2 ] || skip "runc's shim keeps stdin open"
	run bash -c 'echo piped | timeout 30 ctr -a "$1" -n "$2" run --rm --runtime "$3" "$4" t-stdin cat' _ \
		"$CTD_SOCK" "$CTD_NS" "$RUNTIME" "$IMAGE"
	assert_success
	assert_output piped
}

@test "the tenant policy applies inside: host uid range >= 524288, seccomp filter" {
	ward_only
	run c run --rm --runtime "$RUNTIME" "$IMAGE" t-policy sh -c 'cat /proc/self/uid_map; grep ^Seccomp: /proc/self/status; grep ^NoNewPrivs: /proc/self/status'
	assert_success
	# uid_map: inside-id host-id count; one line, 0 -> a host range of the pool
	local inside host count
	read -r inside host count <<<"$(head -n1 <<<"$output")"
	assert_equal "$inside" 0
	[ "$host" -ge 524288 ] || fail "host uid $host is not in ward's pool (>= 524288): $output"
	[ "$count" -ge 1 ] && [ "$count" -le 65536 ] || fail "uid_map count $count: $output"
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
}

@test "runtime options: --runtime-config-path selects the ward configuration" {
	ward_only
	# runtimeoptions.v1.Options{config_path} (CRI: runtimes.ward.options.ConfigPath) names a
	# ward configuration directory; here its default tenant has a fixed host ID range
	local cfg="$CTD/ward-config-fixed"
	mkdir -p "$cfg/tenants.d" "$CTD/ward-lib-fixed"
	jq -n --arg lib "$CTD/ward-lib-fixed" '{lib_dir: $lib}' >"$cfg/ward.json"
	jq -n '{idmap_rootfs: false, ids: {start: 3276800, size: 65536}}' >"$cfg/tenants.d/default.json"
	run c run --rm --runtime "$RUNTIME" --runtime-config-path "$cfg" "$IMAGE" t-opts cat /proc/self/uid_map
	assert_success
	assert_output --regexp '^[[:space:]]*0[[:space:]]+3276800[[:space:]]+65536$'
	# without it, the shim's environment ($WARD_CONFIG) applies: a pool range, not that one
	run c run --rm --runtime "$RUNTIME" "$IMAGE" t-noopts cat /proc/self/uid_map
	assert_success
	refute_output --partial 3276800
}

@test "an image root idmapped layer by layer: the image's files are root's inside, root can write them" {
	ward_only
	# the harness's tenants run with "idmap_rootfs": false; this one with ward's default
	local cfg="$CTD/ward-config-idmap"
	mkdir -p "$cfg/tenants.d" "$CTD/ward-lib-idmap"
	jq -n --arg lib "$CTD/ward-lib-idmap" '{lib_dir: $lib}' >"$cfg/ward.json"
	echo '{}' >"$cfg/tenants.d/default.json"
	run c run --rm --runtime "$RUNTIME" --runtime-config-path "$cfg" "$IMAGE" t-idmap sh -c 'stat -c %u:%g / /bin/busybox; echo hi >/new && mkdir /newdir && echo x >/bin/changed && echo wrote; cat /proc/self/uid_map'
	assert_success
	assert_line --index 0 0:0
	assert_line --index 1 0:0
	assert_line --index 2 wrote
	local inside host count
	read -r inside host count <<<"${lines[3]}"
	[ "$inside" = 0 ] && [ "$host" -ge 524288 ] || fail "uid_map: ${lines[3]}"
}

@test "ctr run -d, task exec: output and exit status of the exec" {
	run run_detached t-exec sleep 600
	assert_success
	wait_task_status t-exec RUNNING
	run c task exec --exec-id e1 t-exec echo hi
	assert_success
	assert_output hi
	run c task exec --exec-id e2 t-exec sh -c 'exit 5'
	assert_equal "$status" 5
	# the exec ran in the container: same mount namespace as the init process
	run c task exec --exec-id e3 t-exec readlink /proc/1/exe
	assert_success
	assert_output /bin/busybox
	# an exec id still running is refused a second time
	c task exec --exec-id e4 t-exec sleep 600 >/dev/null 2>&1 3>&- &
	sleep 1
	run c task exec --exec-id e4 t-exec true
	assert_failure
	wait_task_status t-exec RUNNING
}

@test "ctr task exec -t: a terminal inside the container" {
	run_detached t-tty sleep 600
	wait_task_status t-tty RUNNING
	# ctr wants a terminal on its stdin: script(1) gives it one
	run script -qec "timeout --foreground 30 ctr -a '$CTD_SOCK' -n '$CTD_NS' task exec -t --exec-id tty1 t-tty sh -c 'tty; test -t 0 && echo is-a-tty'" /dev/null
	assert_success
	assert_output --regexp '/dev/pts/[0-9]+'
	assert_line --partial is-a-tty
}

@test "ctr run -t: a terminal for the init process" {
	run script -qec "timeout --foreground 30 ctr -a '$CTD_SOCK' -n '$CTD_NS' run --rm -t --runtime '$RUNTIME' '$IMAGE' t-runtty sh -c 'test -t 1 && echo tty-ok; exit 4'" /dev/null
	assert_equal "$status" 4
	assert_output --partial tty-ok
}

@test "ctr task kill -s SIGTERM: the signal reaches the init process" {
	run_detached t-kill sh -c 'trap "exit 7" TERM; while :; do sleep 0.1; done'
	wait_task_status t-kill RUNNING
	sleep 0.5 # the trap is set
	run c task kill -s SIGTERM t-kill
	assert_success
	wait_task_status t-kill STOPPED
	# ctr task rm reports the task's exit status
	run c task rm t-kill
	assert_success
	assert_output --partial 'exit code 7'
	run task_status t-kill
	assert_output ""
}

@test "ctr task kill -a -s SIGKILL, task rm, container rm" {
	run_detached t-killall sleep 600
	wait_task_status t-killall RUNNING
	local pid
	pid=$(task_pid t-killall)
	[ "$pid" -gt 1 ] || fail "no pid for t-killall"
	kill -0 "$pid"
	run c task kill -a -s SIGKILL t-killall
	assert_success
	wait_task_status t-killall STOPPED
	! kill -0 "$pid" 2>/dev/null || fail "pid $pid still alive"
	run c task rm t-killall
	assert_success
	assert_output --partial 'exit code 137'
	run c container rm t-killall
	assert_success
	[ ! -e "$(bundle_of t-killall)" ] || fail "bundle $(bundle_of t-killall) left behind"
}

@test "ctr task pause / resume: the processes are frozen and thawed" {
	# the count is written to a temp file and renamed, so a read never sees a half-written
	# (truncated) file, frozen or not
	run_detached t-pause sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.1; done'
	wait_task_status t-pause RUNNING
	local pid a b i
	pid=$(task_pid t-pause)
	for ((i = 0; i < 100; i++)); do
		[ -s "/proc/$pid/root/tmp/count" ] && break
		sleep 0.1
	done
	run c task pause t-pause
	assert_success
	wait_task_status t-pause PAUSED
	a=$(cat "/proc/$pid/root/tmp/count")
	[[ "$a" =~ ^[0-9]+$ ]] || fail "count while paused: '$a'"
	sleep 1
	b=$(cat "/proc/$pid/root/tmp/count")
	assert_equal "$b" "$a"
	# the kernel agrees: the init process is in a frozen cgroup
	run cgroup_frozen "$pid"
	assert_output frozen
	run c task resume t-pause
	assert_success
	wait_task_status t-pause RUNNING
	# thawed: the count moves on (bounded wait, not a fixed sleep)
	for ((i = 0; i < 100; i++)); do
		b=$(cat "/proc/$pid/root/tmp/count")
		[ "$b" -gt "$a" ] && break
		sleep 0.1
	done
	[ "$b" -gt "$a" ] || fail "count $a -> $b after resume"
}

@test "ctr task exec of a missing binary fails at once and leaves no exec behind" {
	run run_detached t-noexec sleep 600
	assert_success
	wait_task_status t-noexec RUNNING
	local start=$SECONDS
	# before the fix the shim never ended the exec and ctr waited (containerd: 60 s)
	CTR_TIMEOUT=20 run c task exec --exec-id e1 t-noexec /nonexistent
	assert_failure
	[ "$status" -ne 124 ] || fail "ctr task exec of /nonexistent hung"
	[ $((SECONDS - start)) -lt 20 ]
	assert_output --partial nonexistent
	# the exec is gone from the shim: its id can be used again
	run c task exec --exec-id e1 t-noexec echo hi
	assert_success
	assert_output hi
	wait_task_status t-noexec RUNNING
}

@test "ctr task ps: the container's processes" {
	run_detached t-ps sh -c 'sleep 600 & sleep 700 & wait'
	wait_task_status t-ps RUNNING
	local pid
	pid=$(task_pid t-ps)
	sleep 0.5
	run c task ps t-ps
	assert_success
	assert_line --regexp "^$pid[[:space:]]"
	# the two sleeps, by host pid
	local p n=0
	for p in $(echo "$output" | awk 'NR > 1 { print $1 }'); do
		[ "$p" = "$pid" ] && continue
		grep -q '^sleep$' "/proc/$p/comm" 2>/dev/null && n=$((n + 1))
	done
	assert_equal "$n" 2
}

@test "ctr task metrics: cgroup statistics of the container" {
	run_detached t-metrics sleep 600
	wait_task_status t-metrics RUNNING
	run c task metrics t-metrics
	assert_success
	assert_line --regexp '^ID[[:space:]]+TIMESTAMP'
	assert_line --regexp "^t-metrics[[:space:]]"
	assert_output --regexp 'memory\.usage_in_bytes|memory\.(current|usage)'
	run c task metrics --format json t-metrics
	assert_success
	# what the cgroup v2 hierarchy offers is reported: pids.current counts the sleep where
	# the pids controller is on cgroup v2 (on a hybrid host it may be bound to v1); CPU usage
	# (cpu.stat) is always there
	local cg2 v
	cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	if [ "$RUNTIME" != io.containerd.ward.v2 ] && [ "$cg2" != /sys/fs/cgroup ]; then
		return 0 # runc reports cgroup v1 metrics on a hybrid host
	fi
	if grep -qw pids "$cg2/cgroup.controllers"; then
		v=$(jq -r '.pids.current // empty' <<<"$output")
		[ -n "$v" ] && [ "$v" -ge 1 ] || fail "no pids.current in: $output"
	fi
	if grep -qw memory "$cg2/cgroup.controllers"; then
		v=$(jq -r '.memory.usage // empty' <<<"$output")
		[ -n "$v" ] && [ "$v" -ge 1 ] || fail "no memory.usage in: $output"
	fi
	v=$(jq -r '.cpu.usage_usec // empty' <<<"$output")
	[ -n "$v" ] && [ "$v" -ge 1 ] || fail "no cpu.usage_usec in: $output"
}

@test "ctr events: /tasks/create, /tasks/start, /tasks/exit, /tasks/delete in order" {
	c events >"$CTD/events.$BATS_TEST_NUMBER" 2>&1 &
	EVENTS_PID=$!
	sleep 0.5
	run c run --rm --runtime "$RUNTIME" "$IMAGE" t-events sh -c 'exit 2'
	assert_equal "$status" 2
	sleep 1
	kill "$EVENTS_PID"
	wait "$EVENTS_PID" 2>/dev/null || true
	EVENTS_PID=
	local topics
	# lines: DATE TIME +0000 UTC NAMESPACE TOPIC JSON
	topics=$(grep -F '"t-events"' "$CTD/events.$BATS_TEST_NUMBER" | awk '{ print $6 }' | grep '^/tasks/' | uniq)
	assert_equal "$(tr '\n' ' ' <<<"$topics")" "/tasks/create /tasks/start /tasks/exit /tasks/delete "
	# the exit event carries the status
	run grep -F /tasks/exit "$CTD/events.$BATS_TEST_NUMBER"
	assert_output --partial '"exit_status":2'
}

@test "ctr events: exec-added, exec-started, paused, resumed" {
	run_detached t-ev2 sleep 600
	wait_task_status t-ev2 RUNNING
	c events >"$CTD/events.$BATS_TEST_NUMBER" 2>&1 &
	EVENTS_PID=$!
	sleep 0.5
	c task exec --exec-id x1 t-ev2 true
	c task pause t-ev2
	c task resume t-ev2
	sleep 1
	local f="$CTD/events.$BATS_TEST_NUMBER"
	run grep -F t-ev2 "$f"
	assert_line --partial /tasks/exec-added
	assert_line --partial /tasks/exec-started
	assert_line --partial /tasks/paused
	assert_line --partial /tasks/resumed
	# exec exit: /tasks/exit with id x1
	assert_line --regexp '/tasks/exit .*"id":"x1"'
}

@test "containers with the same io.kubernetes.cri.sandbox-id share one shim process" {
	# t-pod1 is the pod's sandbox (its own sandbox id); t-pod2 joins it (its user and ipc
	# namespaces), as ward requires of a container naming another container's sandbox id
	run c run -d --runtime "$RUNTIME" --annotation io.kubernetes.cri.sandbox-id=t-pod1 "$IMAGE" t-pod1 sleep 600
	assert_success
	wait_task_status t-pod1 RUNNING
	local p1
	p1=$(c task ls | awk '$1 == "t-pod1" { print $2 }')
	run c run -d --runtime "$RUNTIME" --annotation io.kubernetes.cri.sandbox-id=t-pod1 \
		--with-ns "user:/proc/$p1/ns/user" --with-ns "ipc:/proc/$p1/ns/ipc" "$IMAGE" t-pod2 sleep 600
	assert_success
	run c run -d --runtime "$RUNTIME" "$IMAGE" t-solo sleep 600
	assert_success
	wait_task_status t-pod1 RUNNING
	wait_task_status t-pod2 RUNNING
	wait_task_status t-solo RUNNING
	local a1 a2 a3
	a1=$(cat "$(bundle_of t-pod1)/address")
	a2=$(cat "$(bundle_of t-pod2)/address")
	a3=$(cat "$(bundle_of t-solo)/address")
	assert_equal "$a1" "$a2"
	[ "$a1" != "$a3" ] || fail "t-solo shares the pod's shim ($a3)"
	# the socket containerd-shim-runc-v2 would use: sha256(<address>/<ns>/<group>)
	assert_equal "$a1" "unix:///run/containerd/s/$(printf '%s/%s/%s' "$CTD_SOCK" "$CTD_NS" t-pod1 | sha256sum | cut -d' ' -f1)"
	# one serving process for the pod (started for t-pod1), none of its own for t-pod2
	run shim_pid_of t-pod1
	assert_success
	assert_equal "$(wc -l <<<"$output")" 1
	run shim_pid_of t-pod2
	assert_output ""
	# both containers' processes are children of that shim's tree (subreaper)
	local shim
	shim=$(shim_pid_of t-pod1)
	# removing one container leaves the shim serving the other
	remove_container t-pod1
	kill -0 "$shim" || fail "the pod's shim exited with t-pod2 still running"
	run c task exec --exec-id after t-pod2 echo still-served
	assert_success
	assert_output still-served
	remove_container t-pod2
	local i
	for i in $(seq 1 50); do kill -0 "$shim" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$shim" 2>/dev/null || fail "the pod's shim $shim still runs after its last container"
}

@test "containerd restart: a running task survives and is served again" {
	run_detached t-restart sleep 600
	wait_task_status t-restart RUNNING
	local pid shim
	pid=$(task_pid t-restart)
	shim=$(shim_pid_of t-restart)
	ctd_restart
	wait_task_status t-restart RUNNING
	assert_equal "$(task_pid t-restart)" "$pid"
	assert_equal "$(shim_pid_of t-restart)" "$shim"
	run c task exec --exec-id after-restart t-restart echo reconnected
	assert_success
	assert_output reconnected
	run c task kill -s SIGKILL t-restart
	assert_success
	wait_task_status t-restart STOPPED
}

@test "shim SIGKILLed: task rm -f and container rm clean up" {
	run_detached t-shimkill sleep 600
	wait_task_status t-shimkill RUNNING
	local pid shim bundle
	pid=$(task_pid t-shimkill)
	shim=$(shim_pid_of t-shimkill)
	bundle=$(bundle_of t-shimkill)
	[ -n "$shim" ] || fail "no shim process for t-shimkill"
	ctd_note_sockets
	kill -9 "$shim"
	local i
	for i in $(seq 1 50); do kill -0 "$shim" 2>/dev/null || break; sleep 0.1; done
	# containerd notices, runs `<shim> delete`, which force-deletes the container
	c task rm -f t-shimkill || true
	run c container rm t-shimkill
	assert_success
	for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$pid" 2>/dev/null || fail "container process $pid survived"
	[ ! -e "$bundle" ] || fail "bundle $bundle left behind"
	run grep -F "$bundle" /proc/self/mountinfo
	assert_output ""
	if [ "$RUNTIME" = io.containerd.ward.v2 ]; then
		[ ! -e "$WARD_SHIM_ROOT/$CTD_NS/t-shimkill" ] || fail "ward state left: $WARD_SHIM_ROOT/$CTD_NS/t-shimkill"
	fi
	assert_equal "$(c container ls -q | grep -cxF t-shimkill)" 0
}

@test "garbage on the shim's socket does not kill it" {
	command -v python3 >/dev/null || skip "needs python3 (to write to a unix socket)"
	run_detached t-garbage sleep 600
	wait_task_status t-garbage RUNNING
	local sock shim
	sock=$(sed 's|^unix://||' "$(bundle_of t-garbage)/address")
	shim=$(shim_pid_of t-garbage)
	[ -S "$sock" ] || fail "no socket $sock"
	[ -n "$shim" ] || fail "no shim process for t-garbage"
	python3 - "$sock" <<-'EOF'
		import os, socket, sys
		path = sys.argv[1]
		payloads = [
		    os.urandom(4096),
		    b"\xff\xff\xff\xff" + b"\x00\x00\x00\x01\x01\x00" + b"x" * 64,   # huge length
		    b"\x00\x00\x00\x05\x00\x00\x00\x01\x01\x00" + b"\xff" * 5,       # bad protobuf
		    b"\x00\x00\x00\x00\x00\x00\x00\x03\x07\x00",                    # unknown type
		    b"\x00\x00",                                                   # truncated header
		]
		for p in payloads:
		    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		    s.connect(path)
		    try:
		        s.sendall(p)
		        s.settimeout(1)
		        try:
		            s.recv(4096)
		        except (socket.timeout, ConnectionResetError):
		            pass
		    finally:
		        s.close()
		# many idle connections opened and dropped
		conns = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(64)]
		for s in conns:
		    s.connect(path)
		for s in conns:
		    s.close()
	EOF
	kill -0 "$shim" || fail "the shim died"
	run c task exec --exec-id after-garbage t-garbage echo alive
	assert_success
	assert_output alive
	assert_equal "$(task_status t-garbage)" RUNNING
}
