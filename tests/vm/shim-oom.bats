#!/usr/bin/env bats
# containerd-shim-ward-v2 publishes /tasks/oom from the container's cgroup v2 memory.events on
# a real kernel (inside the VM of tests/vm/run-vm.sh; on the development host the memory
# controller is on cgroup v1, so the shim has no memory.events to watch there).
#
# This test drives the shim as containerd would, without containerd (whose setup in the guest
# costs a minute or more under TCG; tests/vm/cri.bats runs it, and checks there that CRI
# reports the OOM kill as reason OOMKilled): `start` in the bundle, then the Task API over
# ttrpc with tests/helpers/shim-client (as tests/shim.bats does on the host). With no
# containerd listening on TTRPC_ADDRESS, the shim falls back to its -publish-binary for every
# event (`<bin> --address A publish --topic T --namespace NS`, the Any on stdin), one event
# finished before the next: a script here logs them in the order the shim published them.

load vm-helpers

SHIM=$(dirname "$WARD")/containerd-shim-ward-v2
SHIM_CLIENT=$WARD_TEST_BIN/shim-client

suite_setup() {
	skip_unless_vm
	[ -x "$SHIM" ] || fail "no $SHIM (make builds it beside ward)"
	[ -x "$SHIM_CLIENT" ] || fail "no $SHIM_CLIENT (make test-vm builds the helpers)"
}

# task METHOD ARGS...: shim-client on $SOCK under `run`, bounded.
task() {
	run timeout 30 "$SHIM_CLIENT" "$SOCK" "$@"
}

field() {
	printf '%s\n' "$output" | sed -n "s/^$1=//p"
}

# The topics published so far, one a line, in order.
topics() {
	cut -d' ' -f1 "$EVDIR/log" 2>/dev/null
}

# has_topic T [N]: at least N (default 1) events on topic T were published.
has_topic() {
	[ "$(topics | grep -cxF -- "$1")" -ge "${2:-1}" ]
}

shim_log() {
	echo "shim log:"
	cat "$BATS_TEST_TMPDIR/shim.log" 2>/dev/null
	echo "events: $(topics | tr '\n' ' ')"
}

@test "vm shim: an OOM kill in the container is published as /tasks/oom, before its /tasks/exit" {
	NS="shimoom-$$"
	EVDIR="$BATS_TEST_TMPDIR/events"
	mkdir -p "$EVDIR"
	# the stand-in for `containerd publish`: the topic and the file holding the event's Any
	cat >"$BATS_TEST_TMPDIR/publish" <<-EOF
		#!/bin/sh
		f=\$(mktemp "$EVDIR/event.XXXXXX") || exit 1
		cat >"\$f"
		echo "\$5 \$f \$*" >>"$EVDIR/log"
	EOF
	chmod 0755 "$BATS_TEST_TMPDIR/publish"
	# 16 MiB of memory and no swap. The first hog is a subshell: the kernel kills it (the
	# largest process of the cgroup) and the container lives on, so /tasks/oom comes from
	# the inotify watch. Then the init itself hogs on /tmp/go and dies of the OOM kill.
	make_bundle b '.linux.resources = {"memory": {"limit": 16777216, "swap": 16777216}}'
	set_cmd '(x=a; while :; do x=$x$x; done); echo first-hog-gone
		while [ ! -e /tmp/go ]; do sleep 0.1; done; x=a; while :; do x=$x$x; done'
	CID=$(cid o)
	mkfifo "$BUNDLE/log"
	cat "$BUNDLE/log" >"$BATS_TEST_TMPDIR/shim.log" 2>/dev/null </dev/null 3>&- &
	on_teardown "kill $! 2>/dev/null"
	run --separate-stderr env TTRPC_ADDRESS="$BATS_TEST_TMPDIR/no-containerd.sock" \
		bash -c 'cd "$1" && shift && exec "$@" </dev/null 3>&-' _ "$BUNDLE" "$SHIM" \
		-namespace "$NS" -address "$BATS_TEST_TMPDIR/containerd.sock" \
		-publish-binary "$BATS_TEST_TMPDIR/publish" -id "$CID" -debug start
	[ "$status" -eq 0 ] || fail "shim start: $output $stderr"
	SOCK=${output#unix://}
	on_teardown "rm -f '$SOCK'"
	on_teardown "'$WARD' --root /run/containerd/ward/$NS delete -f $CID >/dev/null 2>&1; rm -rf /run/containerd/ward/$NS"
	task connect "$CID"
	shim_pid=$(field shim_pid)
	[ -n "$shim_pid" ] || fail "connect: $output"
	on_teardown "kill -9 $shim_pid 2>/dev/null"
	: >"$BATS_TEST_TMPDIR/$CID.out"
	task create "$CID" "$BUNDLE" stdout="$BATS_TEST_TMPDIR/$CID.out"
	[ "$status" -eq 0 ] || fail "create: $output; $(shim_log)"
	pid=$(field pid)
	cg=$CG2$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	assert_equal "$(cat "$cg/memory.max")" 16777216
	task start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output; $(shim_log)"

	# the subshell is killed; the shim publishes /tasks/oom while the task runs on
	retry 300 0.1 has_topic /tasks/oom ||
		fail "no /tasks/oom; memory.events: $(cat "$cg/memory.events"); $(shim_log)"
	keyed_above "$cg/memory.events" oom_kill 0 || fail "memory.events: $(cat "$cg/memory.events")"
	wait_output "$CID" first-hog-gone
	task state "$CID"
	assert_equal "$(field status)" running
	# Stats, read by the shim from this cgroup: the limit, the usage, memory.stat's figures
	task stats "$CID"
	[ "$status" -eq 0 ] || fail "stats: $output; $(shim_log)"
	assert_equal "$(field memory.usage_limit)" 16777216
	[ "$(field memory.usage)" -gt 0 ] && [ "$(field memory.anon)" -gt 0 ] ||
		fail "stats: $output; memory.stat: $(cat "$cg/memory.stat")"
	run topics
	refute_line /tasks/exit
	# the event names the container: TaskOOM{container_id} in an Any
	f=$(awk '$1 == "/tasks/oom" { print $2; exit }' "$EVDIR/log")
	grep -qaF containerd.events.TaskOOM "$f" || fail "oom event: $(od -c "$f" | head)"
	grep -qaF "$CID" "$f" || fail "oom event without $CID: $(od -c "$f" | head)"
	grep -qF -- "--namespace $NS" "$EVDIR/log" || fail "publish args: $(cat "$EVDIR/log")"

	# now the init hogs: it is OOM-killed (137), and the kill goes out before the exit
	touch "$BUNDLE/rootfs/tmp/go"
	task wait "$CID"
	[ "$status" -eq 0 ] || fail "wait: $output; $(shim_log)"
	assert_equal "$(field exit_status)" 137
	[ "$(keyed_value "$cg/memory.events" oom_kill)" -ge 2 ] ||
		fail "memory.events: $(cat "$cg/memory.events")"
	retry 100 0.1 has_topic /tasks/exit || fail "no /tasks/exit; $(shim_log)"
	run topics
	assert_equal "$(printf '%s\n' "$output" | tr '\n' ' ')" \
		"/tasks/create /tasks/start /tasks/oom /tasks/oom /tasks/exit "

	task delete "$CID"
	[ "$status" -eq 0 ] || fail "delete: $output; $(shim_log)"
	assert_equal "$(field exit_status)" 137
	retry 100 0.1 has_topic /tasks/delete || fail "no /tasks/delete; $(shim_log)"
	[ ! -d "$cg" ] || fail "cgroup $cg left behind"
	task shutdown "$CID"
	wait_gone "$shim_pid" 10
	# the shim watched this cgroup's memory.events, and warned about nothing OOM-related
	# (its one warning: containerd unreachable, events go through the publish binary)
	grep -qF "watching $cg/memory.events" "$BATS_TEST_TMPDIR/shim.log" || fail "$(shim_log)"
	! grep -iE '(warning|error).*(oom|memory\.events)' "$BATS_TEST_TMPDIR/shim.log" ||
		fail "$(shim_log)"
}
