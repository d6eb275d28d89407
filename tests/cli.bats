#!/usr/bin/env bats
# Commands other than the lifecycle ones: list, ps, exec, spec, features, --version, --log.

load helpers

# list ----------------------------------------------------------------------------------

@test "list: table header and one row per container with its pid and status" {
	make_bundle b
	set_args sleep 1000
	c1=$(cid one)
	c2=$(cid two)
	create_container "$c1"
	start_container "$c2"
	run ward list
	assert_success
	read -r -a header <<<"${lines[0]}"
	assert_equal "${header[*]}" "ID PID STATUS BUNDLE CREATED OWNER"
	run grep -E "^$c1 +$(init_pid "$c1") +created +$BUNDLE " <<<"$output"
	assert_success
	run ward list
	run grep -E "^$c2 +$(init_pid "$c2") +running +$BUNDLE " <<<"$output"
	assert_success
	run ward list
	[ "${#lines[@]}" -eq 3 ]
}

@test "list -q: only the ids" {
	make_bundle b
	set_args sleep 1000
	c1=$(cid one)
	c2=$(cid two)
	create_container "$c1"
	create_container "$c2"
	run ward list -q
	assert_success
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' "$c1" "$c2" | sort)"
}

@test "list --format json: array of objects with id, pid, status, bundle" {
	make_bundle b
	set_args sleep 1000
	c1=$(cid one)
	start_container "$c1"
	run ward list --format json
	assert_success
	jq -e 'type == "array" and length == 1' <<<"$output" >/dev/null
	[ "$(jq -r '.[0].id' <<<"$output")" = "$c1" ]
	[ "$(jq -r '.[0].pid' <<<"$output")" = "$(init_pid "$c1")" ]
	[ "$(jq -r '.[0].status' <<<"$output")" = running ]
	[ "$(jq -r '.[0].bundle' <<<"$output")" = "$BUNDLE" ]
}

@test "list: an empty state root lists only the header, -q nothing" {
	run ward list
	assert_success
	assert_equal "${#lines[@]}" 1
	run ward list -q
	assert_success
	assert_output ""
}

# ps ------------------------------------------------------------------------------------

@test "ps --format json: the init pid, then also an exec'd process" {
	make_bundle b
	set_args sleep 1000
	id=$(cid p)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward ps --format json "$id"
	assert_success
	assert_equal "$(jq -c . <<<"$output")" "[$pid]"
	ward exec -d --pid-file "$BATS_TEST_TMPDIR/e.pid" "$id" sleep 999 </dev/null >/dev/null 2>&1
	epid=$(cat "$BATS_TEST_TMPDIR/e.pid")
	run ward ps -f json "$id"
	assert_success
	assert_equal "$(jq -c 'sort' <<<"$output")" "$(jq -nc --argjson a "$pid" --argjson b "$epid" '[$a,$b] | sort')"
}

@test "ps: table with a PID column and the init process" {
	make_bundle b
	set_args sleep 1000
	id=$(cid p)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward ps "$id"
	assert_success
	[[ "${lines[0]}" == *PID* ]] || fail "no PID header: ${lines[0]}"
	col=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "PID") print i }' <<<"$output")
	run awk -v c="$col" -v p="$pid" 'NR > 1 && $c == p' <<<"$output"
	assert_success
	assert_output --partial "sleep 1000"
}

# exec ----------------------------------------------------------------------------------

exec_target() {
	make_bundle b '.hostname = "exec-target"'
	share_dir
	set_ns uts
	set_args sleep 1000
	ID=$(cid x)
	start_container "$ID"
}

@test "exec: runs in the container (its rootfs and hostname), prints output, returns the exit status" {
	exec_target
	run --separate-stderr ward exec "$ID" sh -c 'cat /etc/ward-test-rootfs; hostname; exit 7'
	assert_equal "$status" 7
	assert_output "$(printf 'ward-test-rootfs\nexec-target')"
}

@test "exec: the process joins the container's namespaces" {
	exec_target
	pid=$(init_pid "$ID")
	run --separate-stderr ward exec "$ID" sh -c 'for n in mnt pid net ipc uts; do readlink /proc/self/ns/$n; done'
	assert_success
	expected=$(for n in mnt pid net ipc uts; do readlink "/proc/$pid/ns/$n"; done)
	assert_output "$expected"
}

@test "exec --env: the variable is set, and the config's env is inherited" {
	exec_target
	run --separate-stderr ward exec --env FOO=bar --env BAZ="two words" "$ID" sh -c 'echo "$FOO|$BAZ|$PATH"'
	assert_success
	assert_output "bar|two words|/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

@test "exec --env: replaces a variable of the container's env, and of two the last wins (runc)" {
	exec_target
	run --separate-stderr ward exec --env PATH=/bin --env FOO=1 --env FOO=2 "$ID" /bin/sh -c 'echo "$FOO|$PATH"; env | grep -c "^FOO="'
	assert_success
	assert_output "2|/bin
1"
}

@test "exec --cwd: the process starts in the directory" {
	exec_target
	run --separate-stderr ward exec --cwd /etc "$ID" pwd
	assert_success
	assert_output /etc
}

@test "exec --user 1000:1000: id shows uid and gid 1000 and no supplementary root group" {
	exec_target
	run --separate-stderr ward exec --user 1000:1000 "$ID" sh -c 'id -u; id -g; id -G'
	assert_success
	assert_output "$(printf '1000\n1000\n1000')"
}

@test "exec --user 1 is uid 1, not root (crun CVE-2026-30892 class)" {
	exec_target
	run --separate-stderr ward exec --user 1 "$ID" id -u
	assert_success
	assert_output 1
}

@test "exec --additional-gids: supplementary groups are set" {
	exec_target
	run --separate-stderr ward exec --user 1000:1000 -g 10 -g 20 "$ID" id -G
	assert_success
	assert_output "1000 10 20"
}

@test "exec --process FILE: args, env, cwd and user come from the file" {
	exec_target
	jq -n '{terminal: false, user: {uid: 1000, gid: 1001}, args: ["sh", "-c", "echo proc-$X; pwd; id -u; id -g"],
		env: ["X=fromfile", "PATH=/bin"], cwd: "/tmp"}' >"$BATS_TEST_TMPDIR/process.json"
	run --separate-stderr ward exec --process "$BATS_TEST_TMPDIR/process.json" "$ID"
	assert_success
	assert_output "$(printf 'proc-fromfile\n/tmp\n1000\n1001')"
}

@test "exec --detach --pid-file: returns at once; the pid is the exec'd program inside the container" {
	exec_target
	# stdio on files, not under bats' `run`: the detached process must not hold a pipe
	ward exec --detach --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$ID" sleep 777 \
		</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	pid_alive "$pid"
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "sleep 777 " ]
	[ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$(init_pid "$ID")/ns/pid")" ]
	[ "$(readlink "/proc/$pid/ns/mnt")" = "$(readlink "/proc/$(init_pid "$ID")/ns/mnt")" ]
}

@test "exec: a foreground exec killed by SIGKILL inside the container exits 137" {
	exec_target
	run --separate-stderr ward exec "$ID" sh -c 'kill -9 $$'
	assert_equal "$status" 137
}

@test "exec: a missing program fails (exit 255 before the process starts)" {
	exec_target
	run --separate-stderr ward exec "$ID" /no/such/program
	assert_failure
	if ward_specific; then assert_equal "$status" 255; fi
	[ "$(status_of "$ID")" = running ]
}

@test "exec: into a stopped container fails" {
	make_bundle b
	id=$(cid s)
	start_container "$id"
	wait_status "$id" stopped
	run ward exec "$id" echo should-not-run
	assert_failure
	refute_output --partial should-not-run
	assert_output --regexp "stopped|not running"
	if ward_specific; then assert_equal "$status" 255; fi
}

@test "exec: the container's stdio is not the exec's (exec output goes to the exec caller)" {
	exec_target
	run --separate-stderr ward exec "$ID" sh -c 'echo to-exec-stdout'
	assert_output to-exec-stdout
	run container_out "$ID"
	refute_output --partial to-exec-stdout
}

# spec ----------------------------------------------------------------------------------

@test "spec: writes a valid config.json (args, root rootfs, namespaces) and refuses to overwrite it" {
	d="$BATS_TEST_TMPDIR/specdir"
	mkdir -p "$d"
	run bash -c "cd '$d' && '$WARD' spec"
	assert_success
	jq -e '(.ociVersion | type == "string") and (.process.args | length > 0) and .root.path == "rootfs"
		and (.linux.namespaces | map(.type) | index("mount") != null)' "$d/config.json" >/dev/null
	sum=$(sha256sum <"$d/config.json")
	run bash -c "cd '$d' && '$WARD' spec"
	assert_failure
	assert_output --partial config.json
	assert_equal "$(sha256sum <"$d/config.json")" "$sum"
}

@test "spec -b DIR: writes DIR/config.json" {
	d="$BATS_TEST_TMPDIR/specdir"
	other="$BATS_TEST_TMPDIR/elsewhere"
	mkdir -p "$d" "$other"
	run bash -c "cd '$other' && '$WARD' spec -b '$d'"
	assert_success
	jq -e . "$d/config.json" >/dev/null
	[ ! -e "$other/config.json" ]
}

@test "spec, check: an unexpected argument is named with its control characters escaped, nothing written" {
	d="$BATS_TEST_TMPDIR/specdir"
	mkdir -p "$d"
	run "$WARD" spec -b "$d" $'x\ty'
	assert_failure 1
	assert_output --partial 'unexpected argument "x\x09y"'
	[ ! -e "$d/config.json" ]
	run ward check $'x\ty'
	assert_failure 1
	assert_output --partial 'unexpected argument "x\x09y"'
}

@test "spec --rootless: a user namespace with uid/gid mappings for the caller and no network namespace" {
	d="$BATS_TEST_TMPDIR/specdir"
	mkdir -p "$d"
	run "$WARD" spec --rootless -b "$d"
	assert_success
	jq -e '.linux.namespaces | map(.type) | index("user") != null' "$d/config.json" >/dev/null
	jq -e --argjson u "$(id -u)" '.linux.uidMappings | length > 0 and .[0].hostID == $u and .[0].containerID == 0' \
		"$d/config.json" >/dev/null
	jq -e --argjson g "$(id -g)" '.linux.gidMappings | length > 0 and .[0].hostID == $g' "$d/config.json" >/dev/null
	jq -e '.linux.namespaces | map(.type) | index("network") == null' "$d/config.json" >/dev/null
}

@test "spec: the generated config runs as is (with only terminal off and a command)" {
	make_bundle b
	set_cmd 'echo spec-ok'
	run_container
	assert_success
	assert_output spec-ok
}

# features, version, log ----------------------------------------------------------------

@test "features: valid JSON with the six hooks, rro among mountOptions, namespaces incl. user" {
	run --separate-stderr "$WARD" features
	assert_success
	f=$output
	jq -e . <<<"$f" >/dev/null
	jq -e '(.ociVersionMin | type == "string") and (.ociVersionMax | type == "string")' <<<"$f" >/dev/null
	assert_equal "$(jq -c '.hooks | sort' <<<"$f")" \
		'["createContainer","createRuntime","poststart","poststop","prestart","startContainer"]'
	jq -e '.mountOptions | index("rro") != null' <<<"$f" >/dev/null
	jq -e '.linux.namespaces | index("user") != null' <<<"$f" >/dev/null
	if ward_specific; then
		# ward implements the time namespace and every namespace type of the spec
		assert_equal "$(jq -c '.linux.namespaces | sort' <<<"$f")" \
			'["cgroup","ipc","mount","network","pid","time","user","uts"]'
		# what containerd's CRI plugin reads to enable user-namespaced pods
		jq -e '.linux.mountExtensions.idmap.enabled == true' <<<"$f" >/dev/null
		jq -e '.linux.seccomp.enabled == true and (.linux.seccomp.actions | index("SCMP_ACT_ERRNO") != null)' <<<"$f" >/dev/null
		jq -e '.mountOptions | (index("rnosymfollow") != null) and (index("idmap") != null) and (index("nosymfollow") != null)' <<<"$f" >/dev/null
		jq -e '.linux.cgroup.v2 == true' <<<"$f" >/dev/null
		assert_equal "$(jq -r .ociVersionMax <<<"$f")" 1.3.0
	fi
}

@test "--version and -v: print the version, exit 0" {
	run "$WARD" --version
	assert_success
	[ -n "$output" ]
	v=$output
	run "$WARD" -v
	assert_success
	assert_equal "$output" "$v"
	if ward_specific; then
		assert_line --index 0 --regexp '^ward version [0-9]+\.[0-9]+\.[0-9]+'
		assert_output --regexp 'spec: 1\.3\.0'
	fi
}

@test "--log FILE --log-format json: a failing command writes a JSON line with level error" {
	log="$BATS_TEST_TMPDIR/log.json"
	id=$(cid nope)
	run --separate-stderr ward --log "$log" --log-format json state "$id"
	assert_failure
	[ -s "$log" ]
	# every line is one JSON object; the last error line names the cause
	while IFS= read -r l; do
		jq -e 'type == "object" and has("level") and has("msg") and has("time")' <<<"$l" >/dev/null ||
			fail "not a JSON log line: $l"
	done <"$log"
	last=$(jq -c 'select(.level == "error")' "$log" | tail -n1)
	[ -n "$last" ] || fail "no level=error line in $(cat "$log")"
	jq -e '.msg | contains("does not exist")' <<<"$last" >/dev/null
	if ward_specific; then
		# the message is also printed on stderr, one line
		assert_equal "$stderr" "ward: container \"$id\" does not exist"
	fi
}

@test "--log FILE (text): a failing create writes level=error with the cause" {
	make_bundle b
	config_edit '.process.args = ["/no/such/binary"]'
	log="$BATS_TEST_TMPDIR/log.txt"
	id=$(cid nope)
	ward_capture --merged --log "$log" create -b "$BUNDLE" "$id"
	assert_failure
	run grep 'level=error' "$log"
	assert_success
	assert_output --partial /no/such/binary
}

@test "--log-format json with create: the error line a containerd shim would read names the cause" {
	make_bundle b
	config_edit '.process.args = ["/no/such/binary"]'
	log="$BATS_TEST_TMPDIR/log.json"
	id=$(cid nope)
	ward_capture --merged --log "$log" --log-format json create -b "$BUNDLE" "$id"
	assert_failure
	last=$(jq -c 'select(.level == "error")' "$log" | tail -n1)
	jq -e '.msg | contains("/no/such/binary")' <<<"$last" >/dev/null || fail "last error: $last"
	assert_nothing_left "$id"
}

@test "--rootless VALUE is accepted (and ignored)" {
	run "$WARD" --rootless false --root "$STATE" list -q
	assert_success
}

@test "--systemd-cgroup (runc's flag, what containerd passes with SystemdCgroup): accepted; cgroupsPath slice:prefix:name is the cgroup systemd would use" {
	ward_specific || skip "ward's cgroup layout (runc would ask systemd over D-Bus)"
	local slice="wardtest${$}x$BATS_TEST_NUMBER.slice" # no '-': one level, no parent slices
	on_teardown "rmdir '$CG2/$slice'"
	make_bundle b '.linux.cgroupsPath = $p' --arg p "$slice:ward:c$$"
	set_args sleep 1000
	id=$(cid s)
	ward --systemd-cgroup run -d -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1
	grep -qx "$(init_pid "$id")" "$CG2/$slice/ward-c$$.scope/cgroup.procs"
	ward delete -f "$id"
	# runc's rule: with the flag, another form of cgroupsPath is an error naming it
	make_bundle c '.linux.cgroupsPath = "/plain/path"'
	id=$(cid p)
	run ward --systemd-cgroup create -b "$BUNDLE" "$id"
	assert_failure
	assert_one_line "$output"
	assert_output --partial 'linux.cgroupsPath "/plain/path": with --systemd-cgroup it must be of the form slice:prefix:name'
	assert_nothing_left "$id"
}

# create_refused MANAGER TEXT: `ward --cgroup-manager MANAGER create` fails with one line
# that contains TEXT and leaves nothing behind.
create_refused() {
	local id
	id=$(cid "r$1")
	run ward --cgroup-manager "$1" create -b "$BUNDLE" "$id"
	assert_failure
	assert_one_line "$output"
	assert_output --partial "$2"
	assert_nothing_left "$id"
}

@test "--cgroup-manager cgroupfs|disabled (crun's flag) is accepted; systemd is refused with a clear error, nothing left" {
	make_bundle b
	for m in cgroupfs disabled; do
		run ward --cgroup-manager "$m" run -b "$BUNDLE" "$(cid "$m")"
		assert_success
	done
	if ward_specific; then
		create_refused systemd '--cgroup-manager systemd is not supported: ward manages cgroup v2 through cgroupfs'
		run ward --cgroup-manager nope list
		assert_failure
		assert_output --partial 'expected cgroupfs, disabled or systemd'
	fi
}

@test "every command: --help prints its usage (exit 0); an unknown option is named, exit 1" {
	for c in create run start state kill delete gc exec ps pause resume spec update events check audit metrics list; do
		run "$WARD" "$c" --help
		assert_success
		assert_output --partial "usage: ward $c"
		run "$WARD" "$c" --no-such-option x
		assert_failure 1
		assert_output --partial "ward: $c: unknown option '--no-such-option' (see 'ward $c --help')"
	done
}

@test "every command's --help lists its options, and each option listed (long and short) is one the command parses" {
	for c in create run kill delete gc exec ps spec update events check audit metrics list "policy explain"; do
		# shellcheck disable=SC2086 # "policy explain" is two words
		run "$WARD" $c --help
		assert_success
		listed=0
		while IFS= read -r line; do
			[[ $line =~ ^\ \ (-([a-z]),\ |\ \ \ \ )--([a-z0-9-]+)(\ [^ ]+)?\ \  ]] || continue
			short=${BASH_REMATCH[2]} long=${BASH_REMATCH[3]} value=${BASH_REMATCH[4]}
			listed=$((listed + 1))
			# parsed: the error is about the unknown option after it, not about this one
			# shellcheck disable=SC2086
			run "$WARD" $c "--$long${value:+=x}" --no-such-option
			assert_output --partial "unknown option '--no-such-option'"
			if [ -n "$short" ]; then
				# shellcheck disable=SC2086
				run "$WARD" $c "-$short" ${value:+x} --no-such-option
				assert_output --partial "unknown option '--no-such-option'"
			fi
		done <<<"$output"
		[ "$listed" -gt 0 ] || fail "ward $c --help lists no option"
	done
	# the ones the hand-written help texts left out
	run "$WARD" gc --help
	assert_output --partial "  -a, --all  "
	run "$WARD" run --help
	assert_output --partial "  -b, --bundle DIR  "
	assert_output --partial "      --keep  "
	run "$WARD" create --help
	assert_output --partial "      --no-subreaper  "
	run "$WARD" exec --help
	assert_output --partial "      --process-label LABEL  refused: SELinux labels are not supported"
	run "$WARD" update --help
	assert_output --partial "      --cpu-share N  "
	assert_output --partial "      --l3-cache-schema SCHEMA  refused: Intel RDT"
	run "$WARD" delete --help
	assert_output --partial "      --exit-status N  "
	run "$WARD" list --help
	assert_output --partial "  -q, --quiet  "
	run "$WARD" policy explain --help
	assert_output --partial "      --id ID  "
}

@test "--help: each option's help in the column two past the widest option, its further lines in that column" {
	run "$WARD" events --help
	assert_success
	assert_output 'usage: ward events [--stats] [--interval DURATION] ID
      --stats              print the statistics once and exit
      --interval DURATION  time between statistics (Go syntax: 5s, 500ms, 1m;
                           default 5s); also prints {"type":"oom"} on an OOM kill,
                           until the container stops'
	run "$WARD" gc --help
	assert_success
	assert_output "usage: ward gc [-a|--all]
Deletes (as delete -f does) every container whose create died before it finished:
its state directory has no state.json and no live ward holds it. Prints their ids.
  -a, --all  also every stopped container"
}

@test "exec --process-label=LABEL (runc's option, with its value): refused as SELinux, not as an unknown option" {
	run "$WARD" exec --process-label=system_u:system_r:container_t:s0 some-id true
	assert_failure 1
	assert_output --partial "--process-label: SELinux labels are not supported by ward"
}

@test "gpu SUB --help (which gpu's usage errors point to) prints gpu's usage, exit 0" {
	for sub in list release; do
		run "$WARD" gpu "$sub" --help
		assert_success
		assert_output --partial "usage: ward gpu list"
	done
	run "$WARD" gpu list --bogus
	assert_failure
	assert_output --partial "see 'ward gpu list --help'"
}

@test "create: run's own -d and --keep are unknown options to create, named as any other, nothing created" {
	run ward create -d c1
	assert_failure 1
	assert_output --partial "unknown option '-d'"
	run ward create --keep c1
	assert_failure 1
	assert_output --partial "unknown option '--keep'"
	[ ! -e "$STATE/c1" ] || fail "create with an unknown option made state for c1"
}

@test "--cgroup-manager disabled: no cgroup at all; limits refused; a tenant that is not trusted refused naming tenant and rule" {
	ward_specific || skip "ward's rules for --cgroup-manager disabled"
	make_bundle b
	set_args sleep 1000
	id=$(cid d)
	ward --cgroup-manager disabled run -d -b "$BUNDLE" "$id" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/d.err"
	pid=$(init_pid "$id")
	# the init stays in the cgroup of the process that ran create: none was made for it
	assert_equal "$(grep '^0::' "/proc/$pid/cgroup")" "$(grep '^0::' /proc/$$/cgroup)"
	[ ! -e "$CG2/ward/$id" ]
	# the spec's device list cannot be enforced without a cgroup: said, not dropped silently
	grep -q 'linux.resources.devices is not enforced' "$BATS_TEST_TMPDIR/d.err"
	run ward pause "$id"
	assert_failure
	assert_output --partial 'cgroup not exist'
	ward delete -f "$id"
	assert_nothing_left "$id"
	# a limit needs a cgroup: refused, not dropped
	config_edit '.linux.resources.pids = {"limit": 100}'
	create_refused disabled 'linux.resources: with --cgroup-manager disabled the container has no cgroup, so its limits cannot be applied'
	# the built-in configuration's default tenant (not trusted) needs its cgroup
	config_edit 'del(.linux.resources.pids)'
	id=$(cid u)
	run env WARD_CONFIG= WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" --cgroup-manager disabled create -b "$BUNDLE" "$id"
	assert_failure
	assert_output --partial 'tenant "default": rule cgroup: --cgroup-manager disabled is refused'
	assert_nothing_left "$id"
}

@test "--cgroup-manager disabled: empty linux.resources sections (engines send them), rdma devices and weightDevice entries without values set no limit and run; a value is refused by its field" {
	ward_specific || skip "ward's rules for --cgroup-manager disabled"
	make_bundle b
	set_args true
	config_edit '.linux.resources.memory = {} | .linux.resources.cpu = {"cpus": ""} | .linux.resources.pids = {"limit": null} | .linux.resources.blockIO = {"weightDevice": [{"major": 8, "minor": 0}]} | .linux.resources.rdma = {"mlx5_0": {"hcaHandles": null}}'
	run ward --cgroup-manager disabled run -b "$BUNDLE" "$(cid e)"
	assert_success
	config_edit '.linux.resources.cpu = {"shares": 512}'
	create_refused disabled 'its limits cannot be applied (linux.resources.cpu.shares;'
}

@test "--help: usage names the commands, exit 0" {
	run "$WARD" --help
	assert_success
	for c in create start state kill delete run exec ps list pause resume spec features; do
		assert_output --partial "$c"
	done
}
