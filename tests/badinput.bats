#!/usr/bin/env bats
# Bad input: every case exits non-zero with a one-line error naming the field or the id, and
# leaves nothing behind (no state dir, no cgroup, no process, no mount).
# The exact wording (field paths such as "process.cwd") is ward's: checked under ward_specific.

load helpers

# create_fails: `ward create` of $BUNDLE must fail and leave nothing. Sets ID, $stderr, $output.
create_fails() {
	ID=$(cid bad)
	ward_capture create -b "$BUNDLE" "$ID"
	[ "$status" -ne 0 ] || fail "create succeeded"
	[ "$status" -ne 0 ] && [ -z "$output" ] || fail "create printed on stdout: $output"
	assert_nothing_left "$ID"
}

# ward_error_names TEXT...: (ward only) stderr is one line "ward: ..." containing each TEXT.
ward_error_names() {
	ward_specific || return 0
	assert_one_line "$stderr"
	[[ "$stderr" == "ward: "* ]] || fail "error does not start with 'ward: ': $stderr"
	local t
	for t in "$@"; do
		[[ "$stderr" == *"$t"* ]] || fail "error does not name '$t': $stderr"
	done
}

@test "bad input: malformed JSON in config.json" {
	make_bundle b
	printf '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	create_fails
	ward_error_names config.json
}

@test "bad input: config.json is not an object" {
	make_bundle b
	echo '[1, 2]' >"$BUNDLE/config.json"
	create_fails
	ward_error_names config.json
}

@test "bad input: missing process.args" {
	make_bundle b 'del(.process.args)'
	create_fails
	ward_error_names process.args
}

@test "bad input: process.args is not an array" {
	make_bundle b '.process.args = "sh -c true"'
	create_fails
	ward_error_names process.args
}

@test "bad input: process.args is empty" {
	make_bundle b '.process.args = []'
	create_fails
	ward_error_names process.args
}

@test "bad input: process.args holds a number" {
	make_bundle b '.process.args = ["sh", 5]'
	create_fails
	ward_error_names 'process.args[1]'
}

@test "bad input: relative process.cwd" {
	make_bundle b '.process.cwd = "tmp"'
	create_fails
	ward_error_names process.cwd
}

@test "bad input: unknown namespace type" {
	make_bundle b '.linux.namespaces += [{"type": "bogusns"}]'
	create_fails
	n=$(jq '.linux.namespaces | length - 1' "$BUNDLE/config.json")
	ward_error_names "linux.namespaces[$n].type" bogusns
}

@test "bad input: relative namespace path" {
	make_bundle b
	set_ns network "relative/netns"
	create_fails
	n=$(jq '.linux.namespaces | map(.type) | index("network")' "$BUNDLE/config.json")
	ward_error_names "linux.namespaces[$n].path"
}

@test "bad input: namespace path that does not exist" {
	make_bundle b
	set_ns network "$BATS_TEST_TMPDIR/no-such-netns"
	create_fails
	ward_error_names no-such-netns
}

@test "bad input: namespace path of the wrong type (an ipc ns given as network)" {
	make_bundle b
	set_ns network /proc/self/ns/ipc
	create_fails
	ward_error_names network
}

@test "bad input: duplicate namespace type" {
	make_bundle b '.linux.namespaces += [{"type": "pid"}, {"type": "pid"}]'
	create_fails
	ward_error_names linux.namespaces pid
}

@test "bad input: nonexistent rootfs" {
	make_bundle b '.root.path = "/no/such/rootfs-dir"'
	create_fails
	ward_error_names /no/such/rootfs-dir
}

@test "bad input: missing root" {
	make_bundle b 'del(.root)'
	create_fails
	ward_error_names root
}

@test "bad input: process.user.uid is a string" {
	make_bundle b '.process.user.uid = "0"'
	create_fails
	ward_error_names process.user.uid
}

@test "bad input: process.user.uid is negative" {
	make_bundle b '.process.user.uid = -1'
	create_fails
	ward_error_names process.user.uid
}

@test "bad input: unknown rlimit type" {
	make_bundle b '.process.rlimits = [{"type": "RLIMIT_BOGUS", "soft": 1, "hard": 1}]'
	create_fails
	ward_error_names 'process.rlimits[0]' RLIMIT_BOGUS
}

@test "bad input: duplicate rlimit type (runtime-spec: MUST error)" {
	make_bundle b '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 10, "hard": 10}, {"type": "RLIMIT_NOFILE", "soft": 20, "hard": 20}]'
	create_fails
	ward_error_names RLIMIT_NOFILE
}

@test "bad input: rlimit soft above hard" {
	make_bundle b '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 200, "hard": 100}]'
	create_fails
	ward_error_names 'process.rlimits[0]'
}

@test "bad input: relative hook path" {
	make_bundle b '.hooks.createRuntime = [{"path": "bin/hook"}]'
	create_fails
	ward_error_names 'hooks.createRuntime[0].path'
}

@test "bad input: mount without destination" {
	make_bundle b '.mounts += [{"type": "tmpfs", "source": "tmpfs"}]'
	create_fails
	n=$(jq '.mounts | length - 1' "$BUNDLE/config.json")
	ward_error_names "mounts[$n].destination"
}

@test "bad input: a mount the kernel refuses in the init (tmpfs size=bogus): its error, not the channel's" {
	# The init fails at its mounts, with messages of the runtime unread or before the
	# runtime's next one: either way create reports why.
	make_bundle b '.mounts += [{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs",
		"options": ["nosuid", "size=bogus"]}]'
	for i in 1 2 3 4 5; do
		create_fails
		ward_error_names /mnt size=bogus
	done
}

@test "bad input: unknown ioPriority class" {
	make_bundle b '.process.ioPriority = {"class": "IOPRIO_CLASS_BOGUS", "priority": 0}'
	create_fails
	ward_error_names process.ioPriority IOPRIO_CLASS_BOGUS
}

@test "bad input: unknown scheduler policy" {
	make_bundle b '.process.scheduler = {"policy": "SCHED_BOGUS"}'
	create_fails
	ward_error_names process.scheduler SCHED_BOGUS
}

@test "bad input: unknown personality domain" {
	make_bundle b '.linux.personality = {"domain": "LINUX_BOGUS"}'
	create_fails
	ward_error_names linux.personality LINUX_BOGUS
}

@test "bad input: an AppArmor profile ward cannot apply is refused, not skipped" {
	make_bundle b '.process.apparmorProfile = "tenant-strict"'
	create_fails
	ward_error_names process.apparmorProfile tenant-strict
}

@test "bad input: SELinux labels are refused, not skipped" {
	make_bundle b '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
	create_fails
	ward_error_names process.selinuxLabel
	make_bundle b2 '.linux.mountLabel = "system_u:object_r:container_file_t:s0"'
	create_fails
	ward_error_names linux.mountLabel
}

@test "bad input: exec --process with an AppArmor profile is refused; the container runs on" {
	make_bundle b
	set_args sleep 1000
	id=$(cid ex)
	ward_capture run -d -b "$BUNDLE" "$id"
	assert_success
	printf '%s' '{"args":["true"],"cwd":"/","apparmorProfile":"x"}' >"$BATS_TEST_TMPDIR/p.json"
	ward_capture exec --process "$BATS_TEST_TMPDIR/p.json" "$id"
	assert_failure
	[[ "$stderr" == *"apparmorProfile"* ]] || fail "error does not name the field: $stderr"
	[ "$(ward state "$id" | jq -r .status)" = running ]
}

@test "bad input: a program that does not exist fails create (or start) and leaves nothing" {
	make_bundle b '.process.args = ["/no/such/program"]'
	ID=$(cid bad)
	ward_capture run -b "$BUNDLE" "$ID" </dev/null
	assert_failure
	[[ "$stderr" == *"/no/such/program"* ]] || fail "error does not name the program: $stderr"
	ward_error_names /no/such/program
	assert_nothing_left "$ID"
}

@test "bad input: a linux.resources value out of range fails create at parse, as config.json's" {
	# linux.resources is typed with the spec: the value is refused with the parse of
	# config.json, before the policy or anything else runs (before: when the cgroup was
	# written, without the "config.json:" of a spec error).
	make_bundle b '.linux.resources.memory = {"limit": -5}'
	create_fails
	ward_error_names "config.json: linux.resources.memory.limit: -5 is not a limit (-1 or > 0)"
}

@test "bad input: policy explain refuses a linux.resources value create refuses" {
	# explain shows the typed effective spec create keeps: one that does not parse is
	# refused as create refuses it (before, explain printed it).
	make_bundle b '.linux.resources.cpu = {"quota": -5}'
	ward_capture policy explain "$BUNDLE"
	assert_failure
	ward_error_names "config.json: linux.resources.cpu.quota: -5 is not a quota (-1 or > 0)"
}

@test "bad input: a linux.resources.devices rule of the wrong type fails create at parse" {
	make_bundle b '.linux.resources.devices = [{"allow": "yes", "access": "rwm"}]'
	create_fails
	ward_error_names "config.json: linux.resources.devices[0].allow"
}

@test "bad input: missing config.json" {
	make_bundle b
	rm "$BUNDLE/config.json"
	create_fails
	ward_error_names config.json
}

@test "bad input: bundle directory does not exist" {
	ID=$(cid bad)
	ward_capture create -b "$BATS_TEST_TMPDIR/no-such-bundle" "$ID" </dev/null
	assert_failure
	assert_nothing_left "$ID"
	ward_error_names no-such-bundle
}

# Ids ------------------------------------------------------------------------------------

@test "bad input: ids with '/', '..', '.', a space, a newline, or empty are refused as invalid" {
	make_bundle b
	for bad in "a/b" ".." "." "../escape" "has space" $'new\nline' ""; do
		ward_capture create -b "$BUNDLE" "$bad" </dev/null
		[ "$status" -ne 0 ] || fail "create accepted id '$bad'"
		[[ "$stderr" == *"invalid container ID format"* || "$bad" == "" ]] ||
			fail "id '$bad': error lacks 'invalid container ID format': $stderr"
		ward_error_names "invalid container ID format"
	done
	# nothing was created anywhere: the state root is empty and no escape dir appeared
	[ -z "$(ls -A "$STATE")" ]
	[ ! -e "$BATS_TEST_TMPDIR/escape" ]
	[ ! -e "$STATE/a" ]
}

@test "bad input: an over-long id (1024 chars) is refused or works, never half-created" {
	make_bundle b
	long=$(printf 'x%.0s' $(seq 1 1024))
	ward_capture create -b "$BUNDLE" "$long" </dev/null
	if [ "$status" -eq 0 ]; then
		ward delete -f "$long"
	fi
	[ -z "$(ls -A "$STATE")" ]
}

@test "bad input: duplicate id: the second create fails with 'already exists', the first is unaffected" {
	make_bundle b
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid dup)
	create_container "$id"
	pid=$(init_pid "$id")
	ward_capture create -b "$BUNDLE" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"container with given ID already exists"* ]] || fail "stderr: $stderr"
	ward_error_names "$id"
	[ "$(status_of "$id")" = created ]
	[ "$(init_pid "$id")" = "$pid" ]
	pid_alive "$pid"
	# and it still works
	ward start "$id"
	wait_file "$SHARED/ran"
}

@test "bad input: duplicate id with run: the running container is unaffected" {
	make_bundle b
	set_args sleep 1000
	id=$(cid dup)
	start_container "$id"
	pid=$(init_pid "$id")
	ward_capture run -d -b "$BUNDLE" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"already exists"* ]] || fail "stderr: $stderr"
	[ "$(status_of "$id")" = running ]
	[ "$(init_pid "$id")" = "$pid" ]
}

# CLI ------------------------------------------------------------------------------------

@test "bad input: unknown command" {
	run --separate-stderr ward frobnicate
	assert_failure
	[[ "$stderr" == *frobnicate* ]] || fail "error does not name the command: $stderr"
	ward_error_names frobnicate
}

@test "bad input: unknown flag" {
	make_bundle b
	id=$(cid bad)
	ward_capture create --frobnicate -b "$BUNDLE" "$id"
	assert_failure
	[[ "$stderr" == *frobnicate* ]] || fail "error does not name the flag: $stderr"
	ward_error_names frobnicate
	assert_nothing_left "$id"
}

@test "bad input: unknown global flag" {
	run --separate-stderr "$WARD" --frobnicate list
	assert_failure
	[[ "$stderr" == *frobnicate* ]] || fail "error does not name the flag: $stderr"
	ward_error_names frobnicate
}

@test "bad input: missing id argument for create, start, state, kill, delete" {
	make_bundle b
	for cmd in create start state kill delete; do
		run --separate-stderr ward "$cmd"
		[ "$status" -ne 0 ] || fail "$cmd without an id succeeded"
	done
	[ -z "$(ls -A "$STATE")" ]
}

@test "bad input: --pid-file in a directory that does not exist fails create and leaves nothing" {
	make_bundle b
	create_fails_pidfile() {
		ID=$(cid bad)
		ward_capture create --pid-file "$BATS_TEST_TMPDIR/no/such/dir/pid" -b "$BUNDLE" "$ID" </dev/null
	}
	create_fails_pidfile
	assert_failure
	assert_nothing_left "$ID"
}

@test "bad input: --preserve-fds with a non-number" {
	make_bundle b
	id=$(cid bad)
	ward_capture create --preserve-fds abc -b "$BUNDLE" "$id" </dev/null
	assert_failure
	assert_nothing_left "$id"
}

@test "bad input: kill with an invalid signal number" {
	make_bundle b
	set_args sleep 1000
	id=$(cid k)
	start_container "$id"
	run --separate-stderr ward kill "$id" 999
	assert_failure
	[ "$(status_of "$id")" = running ]
}
