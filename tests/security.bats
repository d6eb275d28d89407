#!/usr/bin/env bats
# File descriptor hygiene, CVE-2024-21626 (leaked fd as cwd), CVE-2019-5736 (overwriting the
# runtime binary through /proc/PID/exe), and a few privilege checks.

load helpers

# Run `ward ARGS...` with extra inherited descriptors (7 read, 8 write, 9 a directory) that a
# careless runtime would hand to the container. Sets $output, $stderr, $status. Not under
# bats' `run`: stdio are files, so a created container holds no pipe of bats.
ward_with_fds() {
	local out="$BATS_TEST_TMPDIR/wwf.out" err="$BATS_TEST_TMPDIR/wwf.err"
	echo secret >"$BATS_TEST_TMPDIR/inherited-file"
	status=0
	bash -c 'f=$0 d=$1; shift; "$@" 7<"$f" 8>>"$f" 9<"$d"' \
		"$BATS_TEST_TMPDIR/inherited-file" "$BATS_TEST_TMPDIR" env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" "$@" \
		</dev/null >"$out" 2>"$err" 3>&- || status=$?
	output=$(cat "$out")
	stderr=$(cat "$err")
	[ "$status" -eq 0 ] || echo "ward $*: status $status, stderr: $stderr" >&2
}

@test "fds: the container program sees only 0 1 2 (ls adds its own 3), none of the caller's or the runtime's" {
	make_bundle b
	set_cmd 'ls /proc/self/fd | tr "\n" " "'
	id=$(cid f)
	ward_with_fds run -b "$BUNDLE" "$id"
	assert_success
	assert_output "0 1 2 3 "
}

@test "fds: a started container's pid 1 holds exactly fds 0 1 2" {
	make_bundle b
	set_args sleep 1000
	id=$(cid f)
	echo x >"$BATS_TEST_TMPDIR/f"
	# create with extra inherited fds, start without them
	ward_with_fds create -b "$BUNDLE" "$id"
	assert_success
	ward start "$id"
	pid=$(init_pid "$id")
	run ls "/proc/$pid/fd"
	assert_equal "$(tr '\n' ' ' <<<"$output")" "0 1 2 "
}

@test "fds: in a created container the init's extra fds are O_CLOEXEC and none is a directory (no leaked host dir)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid f)
	ward_with_fds create -b "$BUNDLE" "$id"
	assert_success
	pid=$(init_pid "$id")
	for fd in $(ls "/proc/$pid/fd"); do
		[ "$fd" -le 2 ] && continue
		target=$(readlink "/proc/$pid/fd/$fd")
		flags=$(awk '/^flags:/ { print $2 }' "/proc/$pid/fdinfo/$fd")
		# O_CLOEXEC = 02000000 (octal)
		(((8#$flags & 8#2000000) != 0)) || fail "fd $fd -> $target of the created init is not O_CLOEXEC (flags $flags)"
		[ ! -d "/proc/$pid/fd/$fd" ] || fail "fd $fd of the created init is a directory: $target"
		[[ "$target" != *inherited-file* ]] || fail "fd $fd is the caller's inherited file"
	done
}

@test "fds: an exec'd process sees only 0 1 2 (ls adds its own 3)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid f)
	start_container "$id"
	ward_with_fds exec "$id" sh -c 'ls /proc/self/fd | tr "\n" " "'
	assert_success
	assert_output "0 1 2 3 "
}

@test "fds: --preserve-fds 1 passes exactly fd 3 to the container" {
	make_bundle b
	echo preserved-content >"$BATS_TEST_TMPDIR/preserved"
	set_cmd 'cat <&3; ls /proc/self/fd | tr "\n" " "'
	id=$(cid f)
	run --separate-stderr bash -c '"$@" 3<"$0" 4<"$0"' "$BATS_TEST_TMPDIR/preserved" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run --preserve-fds 1 -b "$BUNDLE" "$id"
	assert_success
	assert_line --index 0 preserved-content
	# 0 1 2, the preserved 3, and ls's own directory fd 4; never the unpreserved 4
	assert_line --index 1 "0 1 2 3 4 "
}

# run_activated LISTEN_PID: `ward run` of $BUNDLE with LISTEN_FDS=1 and that LISTEN_PID ('$$':
# the runtime's own pid, since bash execs env and env execs ward), fds 3 and 4 open on a file.
run_activated() {
	run --separate-stderr bash -c "LISTEN_FDS=1 LISTEN_PID=$1"' exec "$@" 3<"$0" 4<"$0"' "$BATS_TEST_TMPDIR/sock" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run -b "$BUNDLE" "$(cid "a$RANDOM")"
}

@test "fds: socket activation (LISTEN_FDS, LISTEN_PID = the runtime's pid) passes fds 3.. with LISTEN_FDS=N LISTEN_PID=1, as runc; another LISTEN_PID passes nothing" {
	make_bundle b
	echo activated >"$BATS_TEST_TMPDIR/sock"
	set_cmd 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3; ls /proc/self/fd | tr "\n" " "'
	run_activated '$$'
	assert_success
	assert_line --index 0 "1 1"
	assert_line --index 1 activated
	# 0 1 2, the activation fd 3 and ls's own 4; never the runtime's 4
	assert_line --index 2 "0 1 2 3 4 "
	set_cmd 'echo "[$LISTEN_FDS]"; ls /proc/self/fd | tr "\n" " "'
	run_activated 1
	assert_success
	assert_line --index 0 "[]"
	assert_line --index 1 "0 1 2 3 "
}

# CVE-2024-21626 --------------------------------------------------------------------------

# A file on the host that a process escaping to the host's root would find at .$HOSTMARKER
setup_marker() {
	HOSTMARKER="$BATS_TEST_TMPDIR/host-marker-$RANDOM"
	echo host >"$HOSTMARKER"
}

ESCAPE_CHECK='cd ../../../../../../../../../..; if [ -e ".$HOSTMARKER" ]; then echo ESCAPED; fi; echo cwd=$(readlink /proc/self/cwd)'

@test "CVE-2024-21626: process.cwd /proc/self/fd/N (N = 3..10) fails or stays inside the container" {
	setup_marker
	make_bundle b
	config_edit '.process.env += ["HOSTMARKER=" + $m]' --arg m "$HOSTMARKER"
	set_cmd "$ESCAPE_CHECK"
	for n in 3 4 5 6 7 8 9 10; do
		config_edit '.process.cwd = $c' --arg c "/proc/self/fd/$n"
		run_container
		refute_output --partial ESCAPED
		if [ "$status" -eq 0 ]; then
			# the cwd it got is a path inside the container, not a host directory
			[[ "$output" != *"/sys/fs/cgroup"* && "$output" != *"$BATS_RUN_TMPDIR"* ]] ||
				fail "cwd /proc/self/fd/$n: the container started in a host directory: $output"
		fi
	done
}

@test "CVE-2024-21626: exec --cwd /proc/self/fd/N (N = 3..10) fails or stays inside the container" {
	setup_marker
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	for n in 3 4 5 6 7 8 9 10; do
		run --separate-stderr ward exec --env HOSTMARKER="$HOSTMARKER" --cwd "/proc/self/fd/$n" "$id" sh -c "$ESCAPE_CHECK"
		refute_output --partial ESCAPED
		if [ "$status" -eq 0 ]; then
			[[ "$output" != *"/sys/fs/cgroup"* && "$output" != *"$BATS_RUN_TMPDIR"* ]] ||
				fail "exec --cwd /proc/self/fd/$n started in a host directory: $output"
		fi
	done
}

@test "CVE-2024-21626: the container's cwd cannot reach the host root through .. (plain cwd /)" {
	setup_marker
	make_bundle b
	config_edit '.process.env += ["HOSTMARKER=" + $m]' --arg m "$HOSTMARKER"
	set_cmd "$ESCAPE_CHECK"
	run_container
	assert_success
	assert_output cwd=/
}

# CVE-2019-5736 ---------------------------------------------------------------------------

@test "CVE-2019-5736: a created container's init (the runtime) runs from a read-only mount or a sealed memfd; writing /proc/PID/exe fails, also once it exited" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	sum=$(sha256sum <"$WARD")
	create_container "$id"
	pid=$(init_pid "$id")
	exe=$(readlink "/proc/$pid/exe")
	if ward_specific; then
		# a detached read-only clone of the binary's mount (its root: "/"), else a memfd
		[[ "$exe" == / || "$exe" == *memfd:* ]] || fail "init exe is $exe, not a read-only clone or a memfd"
	fi
	run bash -c "echo x >> /proc/$pid/exe"
	assert_failure
	run bash -c "exec 5</proc/$pid/exe && echo x >> /proc/self/fd/5"
	assert_failure
	run bash -c "dd if=/dev/zero of=/proc/$pid/exe bs=1 count=1 conv=notrunc 2>&1"
	assert_failure
	# the exe held past the init's end (no longer busy): still not writable
	exec 7<"/proc/$pid/exe"
	ward delete -f "$id"
	run bash -c "echo x >> /proc/self/fd/7"
	exec 7<&-
	assert_failure
	assert_equal "$(sha256sum <"$WARD")" "$sum"
}

# cfg_dir DIR LIB [TRUSTED]: a configuration directory with lib_dir LIB and a default
# tenant, untrusted (the built-in rules; host_paths: the test's directory) or trusted.
cfg_dir() {
	mkdir -p "$1/tenants.d"
	jq -n --arg l "$2" '{lib_dir: $l}' >"$1/ward.json"
	if [ "${3:-}" = trusted ]; then
		echo '{"trusted": true}' >"$1/tenants.d/default.json"
	else
		jq -n --arg p "$BATS_TEST_TMPDIR" '{host_paths: [$p]}' >"$1/tenants.d/default.json"
	fi
}

# runtime_copy: $WARD becomes a copy in the test's directory (with the hooks it registers),
# root-owned 0755, so a test may change its owner or mode.
runtime_copy() {
	mkdir "$BATS_TEST_TMPDIR/bin"
	cp "$WARD" "$BATS_TEST_TMPDIR/bin/runtime-copy"
	cp "$(dirname "$WARD")/ward-audit-hook" "$BATS_TEST_TMPDIR/bin/"
	chmod 0755 "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/bin"
	WARD="$BATS_TEST_TMPDIR/bin/runtime-copy"
}

# the init of container ID runs from a read-only clone or a memfd (ward re-executed)
assert_reexec() {
	local exe
	exe=$(readlink "/proc/$(init_pid "$1")/exe")
	[[ "$exe" == / || "$exe" == *memfd:* ]] || fail "${2:-}: init exe is $exe, not a read-only clone or a memfd"
}

# The attack of CVE-2019-5736 from inside: a container whose pid 1 tries to write every
# non-busybox exe it sees (directly and through a kept fd after the process exits) while
# `ward exec` runs '#!/proc/self/exe'. On a copy of the runtime: if it is vulnerable, only
# the copy is damaged.
self_exe_attack() {
	runtime_copy
	sum=$(sha256sum <"$WARD")
	make_bundle b
	share_dir
	printf '#!/proc/self/exe\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 0755 "$BUNDLE/rootfs/bin/evil"
	# The attacker (pid 1): for 4 s, open every process whose exe is not busybox and try to
	# write to it, directly and through a kept fd after the process exits.
	set_cmd 'end=$(( $(date +%s) + 4 )); touch /shared/ready
		while [ $(date +%s) -lt $end ]; do
			for p in /proc/[0-9]*; do
				e=$(readlink $p/exe 2>/dev/null) || continue
				case "$e" in */busybox|"") continue;; esac
				echo "saw $e" >> /shared/log
				exec 5<$p/exe 2>/dev/null || continue
				for i in 1 2 3 4 5 6 7 8 9 10; do
					echo "#pwned" >> /proc/self/fd/5 2>/dev/null && echo WROTE >> /shared/log
					sleep 0.01
				done
				exec 5<&-
			done
		done; echo done >> /shared/log'
	id=$(cid c)
	start_container "$id"
	wait_file "$SHARED/ready"
	for i in 1 2 3 4 5; do
		ward exec "$id" /bin/evil </dev/null >/dev/null 2>&1 || true
	done
	wait_status "$id" stopped 15
	run cat "$SHARED/log"
	refute_output --partial WROTE
	assert_equal "$(sha256sum <"$WARD")" "$sum"
}

@test "CVE-2019-5736: a container rewriting /proc/<runtime>/exe during exec of '#!/proc/self/exe' cannot touch the runtime binary (a trusted tenant: ward runs from a read-only clone)" {
	self_exe_attack
}

@test "CVE-2019-5736: the same attack under an untrusted default tenant (no re-exec: the container's user namespace maps none of the binary's owners)" {
	# the built-in default tenant, but for the test's shared directory; a fresh lib_dir
	cfg_dir "$BATS_TEST_TMPDIR/cfg" "$BATS_TEST_TMPDIR/lib"
	export WARD_CONFIG="$BATS_TEST_TMPDIR/cfg"
	chmod 0755 "$BATS_TEST_TMPDIR"
	self_exe_attack
}

# With only untrusted tenants ward leaves the re-exec out (selfexe.h): the kernel keeps the
# binary from every ID a container maps. Shown from those IDs; and the re-exec comes back
# for a binary a container's IDs could own.
@test "CVE-2019-5736: under an untrusted default tenant the init runs the binary itself, which no ID of the container can write" {
	cfg_dir "$BATS_TEST_TMPDIR/cfg" "$BATS_TEST_TMPDIR/lib"
	export WARD_CONFIG="$BATS_TEST_TMPDIR/cfg"
	runtime_copy
	sum=$(sha256sum <"$WARD")
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	create_container "$id"
	pid=$(init_pid "$id")
	if ward_specific; then
		assert_equal "$(readlink "/proc/$pid/exe")" "$WARD"
	fi
	read -r _ host _ <"/proc/$pid/uid_map"
	[ "$host" -ge 524288 ] || fail "container root is host uid $host"
	# the directory is reachable for that uid: a file of its own there is writable
	install -o "$host" -g "$host" -m 0644 /dev/null "$BATS_TEST_TMPDIR/bin/own"
	setpriv --reuid="$host" --regid="$host" --clear-groups sh -c "echo x >> $BATS_TEST_TMPDIR/bin/own"
	for uid in "$host" $((host + 1000)); do
		run setpriv --reuid="$uid" --regid="$uid" --clear-groups sh -c "echo x >> $WARD"
		assert_failure
		assert_output --partial "Permission denied"
		run setpriv --reuid="$uid" --regid="$uid" --clear-groups sh -c "echo x >> /proc/$pid/exe"
		assert_failure
	done
	ward delete -f "$id"
	assert_equal "$(sha256sum <"$WARD")" "$sum"
}

@test "CVE-2019-5736: a runtime binary owned by an ID of the pool, or writable by its group or others, is run from a read-only clone again under an untrusted tenant" {
	ward_specific || skip "ward's re-exec decision"
	cfg_dir "$BATS_TEST_TMPDIR/cfg" "$BATS_TEST_TMPDIR/lib"
	export WARD_CONFIG="$BATS_TEST_TMPDIR/cfg"
	runtime_copy
	make_bundle b
	set_args sleep 1000
	for owner in 600000:0 0:600000 0:0+gw 0:0+ow; do
		chown "${owner%+*}" "$WARD"
		chmod 0755 "$WARD"
		[[ "$owner" != *+gw ]] || chmod g+w "$WARD"
		[[ "$owner" != *+ow ]] || chmod o+w "$WARD"
		id=$(cid c)
		create_container "$id"
		assert_reexec "$id" "binary $owner"
		ward delete -f "$id"
	done
}

@test "CVE-2019-5736: after a create under a trusted tenant, the re-exec stays for the rest of the boot once the configuration trusts no one; a lib_dir an older ward used re-execs this boot" {
	ward_specific || skip "ward's re-exec decision"
	runtime_copy
	make_bundle b
	set_args sleep 1000
	cfg_dir "$BATS_TEST_TMPDIR/trusted" "$BATS_TEST_TMPDIR/lib" trusted
	cfg_dir "$BATS_TEST_TMPDIR/untrusted" "$BATS_TEST_TMPDIR/lib"
	cfg_dir "$BATS_TEST_TMPDIR/fresh" "$BATS_TEST_TMPDIR/lib-fresh"
	cfg_dir "$BATS_TEST_TMPDIR/older" "$BATS_TEST_TMPDIR/lib-older"
	mkdir -p "$BATS_TEST_TMPDIR/lib-older/idpool.d"
	# a fresh lib_dir, nothing trusted: the binary itself
	WARD_CONFIG="$BATS_TEST_TMPDIR/fresh" create_container c1
	assert_equal "$(readlink "/proc/$(init_pid c1)/exe")" "$WARD"
	# an older ward's lib_dir (no record of ours): this boot re-execs
	WARD_CONFIG="$BATS_TEST_TMPDIR/older" create_container c2
	assert_reexec c2 "lib_dir an older ward used"
	# the trusted tenant's container (host root), then the trust removed: still re-exec
	WARD_CONFIG="$BATS_TEST_TMPDIR/trusted" create_container c3
	assert_reexec c3 "trusted"
	WARD_CONFIG="$BATS_TEST_TMPDIR/untrusted" create_container c4
	assert_reexec c4 "untrusted after a trusted create this boot"
	for id in c1 c2 c3 c4; do ward delete -f "$id"; done
}

@test "CVE-2019-5736: exec into a container whose user namespace maps the binary's owner re-executes, also under a configuration that trusts no one" {
	ward_specific || skip "ward's re-exec decision"
	command -v strace >/dev/null || skip "strace is not installed"
	runtime_copy
	make_bundle b
	set_args sleep 1000
	cfg_dir "$BATS_TEST_TMPDIR/trusted" "$BATS_TEST_TMPDIR/lib" trusted
	cfg_dir "$BATS_TEST_TMPDIR/fresh" "$BATS_TEST_TMPDIR/lib-fresh"
	WARD_CONFIG="$BATS_TEST_TMPDIR/trusted" start_container host-root
	WARD_CONFIG="$BATS_TEST_TMPDIR/fresh" start_container guarded
	for id in host-root guarded; do
		WARD_CONFIG="$BATS_TEST_TMPDIR/fresh" strace -f -qq -e trace=execve,execveat -o "$BATS_TEST_TMPDIR/$id.trace" \
			"$WARD" --root "$STATE" exec "$id" true
	done
	grep -Eq '^[0-9]+ +execveat\(' "$BATS_TEST_TMPDIR/host-root.trace" ||
		fail "exec into a container mapping host root did not re-exec: $(cat "$BATS_TEST_TMPDIR/host-root.trace")"
	! grep -Eq '^[0-9]+ +execveat\(' "$BATS_TEST_TMPDIR/guarded.trace" ||
		fail "exec into a guarded container re-executed: $(cat "$BATS_TEST_TMPDIR/guarded.trace")"
	for id in host-root guarded; do ward delete -f "$id"; done
}

@test "CVE-2019-5736: the runtime binary on disk is unchanged by a full run/exec/delete cycle" {
	sum=$(sha256sum <"$WARD")
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	ward exec "$id" true
	ward delete -f "$id"
	assert_equal "$(sha256sum <"$WARD")" "$sum"
}

@test "groups: the runtime's supplementary groups never reach the container, also in a joined user namespace where setgroups is denied" {
	make_bundle b
	set_cmd 'grep ^Groups: /proc/self/status'
	# a new user namespace (ward's own maps)
	id=$(cid g)
	setpriv --groups 4242 "$WARD" --root "$STATE" run -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/new.out"
	assert_equal "$(tr -s '\t ' ' ' <"$BATS_TEST_TMPDIR/new.out" | sed 's/ $//')" "Groups:"
	ward_specific || return 0
	# a user namespace joined by path, made with setgroups denied
	unshare --user --setgroups deny sleep 1000 &
	holder=$!
	on_teardown "kill $holder 2>/dev/null || true"
	retry 50 0.1 bash -c "[ \"\$(readlink /proc/$holder/ns/user)\" != \"\$(readlink /proc/self/ns/user)\" ]"
	echo "0 200000 65536" >"/proc/$holder/uid_map"
	echo "0 200000 65536" >"/proc/$holder/gid_map"
	assert_equal "$(cat "/proc/$holder/setgroups")" deny
	set_ns user "/proc/$holder/ns/user"
	config_edit 'del(.linux.uidMappings, .linux.gidMappings)'
	id=$(cid g)
	setpriv --groups 4242 "$WARD" --root "$STATE" run -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/joined.out"
	assert_equal "$(tr -s '\t ' ' ' <"$BATS_TEST_TMPDIR/joined.out" | sed 's/ $//')" "Groups:"
}

# CVE-2025-31133 --------------------------------------------------------------------------

# A /dev volume whose "null" is a symlink to /proc/sys/kernel/core_pattern: a runtime that
# masks with a bind of "/dev/null" without checking it is char 1:3 binds core_pattern over
# the masked path (writable for the container). Nothing here writes core_pattern.
@test "CVE-2025-31133: a /dev/null symlink in a /dev volume cannot turn maskedPaths into a bind of core_pattern" {
	host_pattern=$(cat /proc/sys/kernel/core_pattern)
	devvol="$BATS_TEST_TMPDIR/devvol"
	mkdir -p "$devvol"
	ln -s /proc/sys/kernel/core_pattern "$devvol/null"
	make_bundle b '.linux.maskedPaths = ["/proc/timer_list", "/proc/keys"]
		| .mounts = [.mounts[] | select(.destination | IN("/dev", "/dev/pts", "/dev/shm", "/dev/mqueue") | not)]'
	add_mount "$(jq -nc --arg s "$devvol" '{destination: "/dev", type: "bind", source: $s, options: ["rbind", "rw"]}')"
	set_cmd 'echo "timer_list=$(wc -c < /proc/timer_list)"; echo "keys=$(wc -c < /proc/keys)"'
	run_container
	if [ "$status" -eq 0 ]; then
		# masked means empty; core_pattern's content here means the symlink was followed
		assert_line timer_list=0
		assert_line keys=0
	else
		refute_output --partial timer_list=
	fi
	assert_equal "$(cat /proc/sys/kernel/core_pattern)" "$host_pattern"
	assert_equal "$(readlink "$devvol/null")" /proc/sys/kernel/core_pattern
}

# Privileges ------------------------------------------------------------------------------

@test "privileges: mknod of a block device inside the default container fails" {
	make_bundle b
	set_cmd 'mknod /tmp/sda b 8 0 2>&1; echo rc=$?'
	run_container
	assert_success
	assert_line rc=1
	assert_output --partial "Operation not permitted"
}

@test "privileges: the default container cannot mount or remount (no CAP_SYS_ADMIN)" {
	make_bundle b
	set_cmd 'mount -t tmpfs tmpfs /tmp 2>/dev/null; echo rc=$?; awk "\$5 == \"/tmp\"" /proc/self/mountinfo | wc -l
		mount -o remount,rw /proc/sys 2>/dev/null; echo rc2=$?; echo 1 > /proc/sys/kernel/ns_last_pid 2>/dev/null; echo rc3=$?'
	run_container
	assert_success
	refute_line rc=0
	assert_line --index 1 0
	refute_line rc2=0
	refute_line rc3=0
}

@test "privileges: the default container cannot write the cgroup filesystem (CVE-2023-25809 class)" {
	make_bundle b
	set_cmd 'mkdir /sys/fs/cgroup/escape 2>/dev/null; echo mkdir=$?; echo $$ > /sys/fs/cgroup/cgroup.procs 2>/dev/null; echo procs=$?
		echo 1 > /sys/fs/cgroup/cgroup.freeze 2>/dev/null; echo freeze=$?'
	run_container
	assert_success
	refute_line mkdir=0
	refute_line freeze=0
	[ ! -e "$CG2/escape" ]
	[ ! -e "$CG2/ward/escape" ]
}

@test "privileges: CapInh is empty in the default container and in exec --cap (CVE-2022-29162)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	run grep CapInh "/proc/$pid/status"
	assert_output "$(printf 'CapInh:\t0000000000000000')"
	run --separate-stderr ward exec --cap CAP_CHOWN "$id" grep CapInh /proc/self/status
	assert_success
	assert_output "$(printf 'CapInh:\t0000000000000000')"
}

@test "privileges: a new pid namespace shows no host process (only the shell and ls)" {
	make_bundle b
	set_ns pid
	set_cmd 'ls -d /proc/[0-9]* | wc -l'
	run_container
	assert_success
	# the shell and ls only
	[ "$output" -le 3 ]
}
