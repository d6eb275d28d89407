#!/usr/bin/env bats
# process.terminal with --console-socket: the pty master goes to the socket, the container's
# stdio is the slave; consoleSize; exec --tty.

load helpers

suite_setup() {
	RECVTTY="$WARD_TEST_BIN/recvtty"
	[ -x "$RECVTTY" ] || skip "test helper $RECVTTY is not built (make builds tests/helpers/recvtty.c)"
	SOCK="$BATS_TEST_TMPDIR/console.sock"
}

# start_recvtty [RECVTTY_OPTS...]: listen on $SOCK in the background; output in $TTYOUT.
start_recvtty() {
	TTYOUT="$BATS_TEST_TMPDIR/tty.out"
	timeout 15 "$RECVTTY" "$@" "$SOCK" >"$TTYOUT" 2>"$BATS_TEST_TMPDIR/recvtty.err" </dev/null 3>&- &
	RECV_PID=$!
	on_teardown "kill $RECV_PID"
	retry 200 0.02 test -S "$SOCK"
}

# wait_recvtty: wait for recvtty to see the pty close; the output without CRs in $output.
wait_recvtty() {
	local rc=0
	wait "$RECV_PID" || rc=$?
	[ "$rc" -eq 0 ] || fail "recvtty exited $rc: $(cat "$BATS_TEST_TMPDIR/recvtty.err")"
	output=$(tr -d '\r' <"$TTYOUT")
	mapfile -t lines <<<"$output"
}

terminal_bundle() {
	make_bundle b '.process.terminal = true'
}

@test "terminal: the pty master goes to the console socket; the container's tty is /dev/pts/0" {
	terminal_bundle
	set_args tty
	start_recvtty
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_output /dev/pts/0
}

@test "terminal: create + start with --console-socket; stdin, stdout and stderr are the pty slave" {
	terminal_bundle
	set_cmd 'for n in 0 1 2; do readlink /proc/self/fd/$n; done'
	start_recvtty
	id=$(cid t)
	create_container "$id" --console-socket "$SOCK"
	ward start "$id"
	wait_recvtty
	assert_output "$(printf '/dev/pts/0\n/dev/pts/0\n/dev/pts/0')"
}

@test "terminal: the pty is the controlling terminal of the container's session" {
	terminal_bundle
	# field 7 of /proc/PID/stat is tty_nr (0 = no controlling terminal); 136 = pts major
	set_cmd 'awk "{ print int(\$7 / 256) }" /proc/self/stat'
	start_recvtty
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_output 136
}

@test "terminal: /dev/console is the pty slave (a pts character device)" {
	terminal_bundle
	set_cmd 'stat -c "%F %t" /dev/console'
	start_recvtty
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	# pts major 136 = 0x88
	assert_output "character special file 88"
}

@test "terminal: with a read-only /dev mount /dev/console is still the pty slave and /dev stays read-only (runc's [ro /dev mount])" {
	make_bundle b '.process.terminal = true
		| .mounts |= map(if .destination == "/dev" then .options += ["ro"] else . end)'
	set_cmd 'stat -c "%F %t" /dev/console; grep " /dev " /proc/self/mounts | cut -d" " -f4 | cut -d, -f1'
	start_recvtty
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_line "character special file 88"
	assert_line ro
}

@test "terminal: consoleSize 30x100: recvtty --size sees 30 100 and stty size inside agrees" {
	make_bundle b '.process.terminal = true | .process.consoleSize = {"height": 30, "width": 100}'
	set_args stty size
	start_recvtty --size
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_line --index 0 "30 100"
	assert_line --index 1 "30 100"
}

@test "terminal: input written to the master reaches the container's stdin" {
	terminal_bundle
	set_cmd 'read line; echo "got:$line"'
	start_recvtty --input $'hello-tty\n'
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_line got:hello-tty
}

@test "terminal: run --detach with terminal true and no --console-socket fails clearly, nothing left" {
	terminal_bundle
	set_args sleep 100
	id=$(cid t)
	ward_capture --merged run -d -b "$BUNDLE" "$id"
	assert_failure
	assert_output --regexp 'console.socket'
	assert_nothing_left "$id"
}

@test "terminal: create with terminal true and no --console-socket fails clearly, nothing left" {
	terminal_bundle
	set_args sleep 100
	id=$(cid t)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_output --regexp 'console.socket'
	assert_nothing_left "$id"
}

@test "terminal: --console-socket pointing at no socket fails, nothing left" {
	terminal_bundle
	id=$(cid t)
	ward_capture --merged run -d --console-socket "$BATS_TEST_TMPDIR/no-such.sock" -b "$BUNDLE" "$id"
	assert_failure
	assert_nothing_left "$id"
}

@test "terminal: exec --tty --console-socket gives the exec'd process a pty" {
	make_bundle b
	set_args sleep 1000
	id=$(cid t)
	start_container "$id"
	start_recvtty
	ward exec -d --tty --console-socket "$SOCK" "$id" sh -c 'tty; readlink /proc/self/fd/1' \
		</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1
	wait_recvtty
	assert_line --index 0 --regexp '^/dev/pts/[0-9]+$'
	assert_equal "${lines[1]}" "${lines[0]}"
}

@test "terminal: terminal false keeps the caller's stdio (no pty, no console socket needed)" {
	make_bundle b
	set_cmd 'tty; echo rc=$?'
	run_container
	assert_success
	assert_line "not a tty"
	assert_line rc=1
}

# CVE-2025-52565: binding the pty onto /dev/console must not follow a /dev/console symlink
# (here in a /dev volume, pointing at a procfs file).
@test "terminal: a /dev/console symlink in a /dev volume is not followed when the console is set up" {
	devvol="$BATS_TEST_TMPDIR/devvol"
	mkdir -p "$devvol"
	ln -s /proc/sys/kernel/core_pattern "$devvol/console"
	ln -s pts/ptmx "$devvol/ptmx"
	# what a /dev volume normally holds, so the runtime gets as far as the console
	mknod -m 666 "$devvol/null" c 1 3
	mknod -m 666 "$devvol/zero" c 1 5
	mknod -m 666 "$devvol/urandom" c 1 9
	mknod -m 666 "$devvol/tty" c 5 0
	make_bundle b '.process.terminal = true
		| .mounts = [.mounts[] | select(.destination | IN("/dev", "/dev/pts", "/dev/shm", "/dev/mqueue") | not)]
		| .mounts += [{"destination": "/dev/pts", "type": "devpts", "source": "devpts",
			"options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]}]'
	add_mount "$(jq -nc --arg s "$devvol" '{destination: "/dev", type: "bind", source: $s, options: ["rbind", "rw"]}')"
	config_edit '.mounts = ([.mounts[] | select(.destination == "/dev")] + [.mounts[] | select(.destination != "/dev")])'
	set_cmd 'stat -c "%F" /proc/sys/kernel/core_pattern; tty'
	start_recvtty
	id=$(cid t)
	ward_capture --merged run -d --console-socket "$SOCK" -b "$BUNDLE" "$id"
	if [ "$status" -eq 0 ]; then
		wait_recvtty
		# procfs files are regular files; a pty bound over it would be a character device
		assert_line --index 0 "regular empty file"
	fi
	assert_equal "$(readlink "$devvol/console")" /proc/sys/kernel/core_pattern
	[ "$(stat -c %F /proc/sys/kernel/core_pattern)" = "regular empty file" ]
}

@test "terminal: the pty belongs to process.user.uid (gid tty kept), for run and for exec -t (runc's fixStdioPermissions)" {
	make_bundle b '.process.terminal = true | .process.user = {uid: 1000, gid: 1000}'
	set_cmd 'stat -c "%u %g" "$(tty)"'
	start_recvtty
	id=$(cid t)
	run_detached "$id" --console-socket "$SOCK"
	wait_recvtty
	assert_equal "${lines[0]}" "1000 5"

	make_bundle c
	set_args sleep 1000
	id=$(cid e)
	start_container "$id"
	start_recvtty
	ward exec -d --tty --user 1000:1000 --console-socket "$SOCK" "$id" sh -c 'stat -c "%u %g" "$(tty)"' \
		</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1
	wait_recvtty
	assert_equal "${lines[0]}" "1000 5"
}

@test "terminal: default tenant: exec -t gives a pty owned by the process's uid inside the container, not the overflow uid" {
	ward_specific || skip "ward's tenant policy"
	export WARD_CONFIG=
	make_bundle b
	set_args sleep 1000
	id=$(cid t)
	start_container "$id"
	start_recvtty
	ward exec -d --tty --console-socket "$SOCK" "$id" sh -c 'echo "$(id -u) $(stat -c %u "$(tty)")"' \
		</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1
	wait_recvtty
	read -r uid owner <<<"${lines[0]}"
	[ "$owner" != 65534 ] || fail "the pty is owned by the overflow uid: ${lines[0]}"
	assert_equal "$owner" "$uid"
}
