#!/usr/bin/env bats
# The audit trail (man 8 ward-audit-hook): one JSON line per lifecycle event in a root-owned
# per-tenant log, written by ward itself for every container (create, start, exit, delete,
# exec, refused: no hook process; ward-audit-hook writes the same lines for engines that
# register it as an OCI hook); never reachable from a container; a log that cannot be
# written fails the operation; `ward audit` reads it back. Own configuration directory, own
# audit directory and ID pool per test.

WARD_CONFIG=
load helpers
load gpu/fixture

suite_setup() {
	[ -x "$(dirname "$WARD")/ward-audit-hook" ] || fail "ward-audit-hook not built"
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	AUD="$BATS_TEST_TMPDIR/audit"
	mkdir -p "$CONF/tenants.d"
	global '{}'
	export WARD_CONFIG=$CONF
	TN="t$$-$BATS_TEST_NUMBER"
	tenant "$TN" '{}'
}

tenant() {
	printf '%s\n' "$2" >"$CONF/tenants.d/$1.json"
}

# ward.json: our lib_dir and audit_dir plus the given keys; pods of the unmapped namespace
# team-a may name their tenant (tenant_choice)
global() {
	jq --arg lib "$LIB" --arg aud "$AUD" '{tenant_choice: {"team-a": "*"}} + . + {lib_dir: $lib, audit_dir: $aud}' <<<"$1" >"$CONF/ward.json"
}

# events TENANT: the event names of TENANT's log, space-separated
events() {
	jq -r .event "$AUD/$1.log" | tr '\n' ' '
}

# line TENANT EVENT: the first line of EVENT in TENANT's log
line() {
	jq -c --arg e "$2" 'select(.event == $e)' "$AUD/$1.log" | head -1
}

# no_container_left ID: no state dir, no cgroup (the tests that mount a log filesystem)
no_container_left() {
	[ ! -e "$STATE/$1" ] || fail "state dir $STATE/$1 left behind"
	[ -z "$(find "$CG2/ward" -name "$1" -type d 2>/dev/null)" ] || fail "cgroup of $1 left behind"
}

# run_id NAME: `ward run` of $BUNDLE as container $(cid NAME) under bats' `run`; sets ID
run_id() {
	ID=$(cid "$1")
	run --separate-stderr ward run -b "$BUNDLE" "$ID" </dev/null
}

pod_bundle() {
	make_bundle "$1" '.annotations["ward.dev/tenant"] = $t
		| .annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["io.kubernetes.cri.sandbox-name"] = "web"
		| .annotations["io.kubernetes.cri.sandbox-uid"] = "uid-123"' --arg t "${2:-$TN}"
}

@test "lifecycle: create, start, exec, exit, delete lines in order, with the container's facts" {
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	run ward exec "$id" echo hello
	assert_success
	assert_output hello
	ward kill "$id" KILL
	wait_status "$id" stopped
	ward delete "$id"
	[ "$(events "$TN")" = "create start exec exit delete " ] || fail "events: $(events "$TN")"
	# the directory and the log are root's alone
	[ "$(stat -c '%u %a' "$AUD")" = "0 700" ] || fail "audit dir: $(stat -c '%u %a' "$AUD")"
	[ "$(stat -c '%u %a' "$AUD/$TN.log")" = "0 600" ] || fail "log: $(stat -c '%u %a' "$AUD/$TN.log")"
	c=$(line "$TN" create)
	jq -e --arg id "$id" --arg t "$TN" --arg b "$BUNDLE" --argjson pid "$pid" '
		.tenant == $t and .container == $id and .bundle == $b and .pid == $pid
		and .pod == {namespace: "team-a", name: "web", uid: "uid-123"}
		and .seccomp == "default" and .host_ids.start >= 524288 and .host_ids.size == 65536
		and (.capabilities | index("CAP_KILL")) and (.capabilities | index("CAP_SYS_ADMIN") | not)
		and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{9}Z$"))
		and has("apparmor")' <<<"$c" || fail "create: $c"
	# the AppArmor profile and the capabilities are the effective spec's
	eff=$(ward policy explain --json "$BUNDLE" | jq -c .effective.process)
	[ "$(jq -c .apparmor <<<"$c")" = "$(jq -c .apparmorProfile <<<"$eff")" ] || fail "apparmor: $c vs $eff"
	[ "$(jq -c .capabilities <<<"$c")" = "$(jq -c .capabilities.bounding <<<"$eff")" ] || fail "caps: $c vs $eff"
	s=$(line "$TN" start)
	jq -e --arg id "$id" --argjson pid "$pid" '.container == $id and .pid == $pid' <<<"$s" || fail "start: $s"
	e=$(line "$TN" exec)
	jq -e --arg id "$id" '.container == $id and .args == ["echo", "hello"] and .user == {uid: 0, gid: 0}
		and .tty == false and .pod.name == "web"' <<<"$e" || fail "exec: $e"
	x=$(line "$TN" exit)
	# a plain `ward delete` does not know the init's exit status (whoever reaped the init
	# did): the line says so with null
	jq -e --arg id "$id" '.container == $id and has("exit_status") and .exit_status == null' <<<"$x" || fail "exit: $x"
	d=$(line "$TN" delete)
	jq -e --arg id "$id" '.container == $id and .seccomp == "default"' <<<"$d" || fail "delete: $d"
	# times are in order
	[ "$(jq -r .time "$AUD/$TN.log" | sort -c && echo sorted)" = sorted ]
}

@test "exit status: ward run records the init's; ward delete --exit-status (the shim) passes it on" {
	pod_bundle b
	set_cmd 'exit 3'
	run_container
	[ "$status" -eq 3 ] || fail "run exited $status"
	x=$(line "$TN" exit)
	jq -e --arg id "$ID" '.container == $id and .exit_status == 3' <<<"$x" || fail "exit: $x"
	set_args sleep 1000
	id=$(cid d)
	start_container "$id"
	ward kill "$id" KILL
	wait_status "$id" stopped
	# what the shim does: it reaped the init (SIGKILL: 128 + 9)
	ward delete --exit-status 137 "$id"
	x=$(grep '"event":"exit"' "$AUD/$TN.log" | tail -1)
	jq -e --arg id "$id" '.container == $id and .exit_status == 137' <<<"$x" || fail "exit: $x"
	run ward delete --exit-status 300 "$id"
	assert_failure
}

@test "exit and delete lines: one open of the log and one write for both, in that order, no time zone database read" {
	# The end of a container writes its two lines together (audit.c: one open, one write of
	# both lines), not two opens of the log. Counted on delete's own syscalls (strace
	# without -f: the poststop hooks are none here).
	command -v strace >/dev/null || skip "strace is not installed"
	pod_bundle b
	set_args sleep 1000
	id=$(cid e)
	start_container "$id"
	ward kill "$id" KILL
	wait_status "$id" stopped
	strace -qq -s 65536 -e trace=openat,write -o "$BATS_TEST_TMPDIR/trace" \
		env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" delete --exit-status 137 "$id" </dev/null
	opens=$(grep -c "\"$TN.log\", O_WRONLY" "$BATS_TEST_TMPDIR/trace" || true)
	[ "$opens" = 1 ] || fail "$TN.log opened $opens times: $(grep -F "$TN.log" "$BATS_TEST_TMPDIR/trace")"
	# the lines' UTC times need no time zone database (util.c: rfc3339_at)
	! grep -F '"/etc/localtime"' "$BATS_TEST_TMPDIR/trace" || fail "delete read the time zone database"
	grep -q '^write([0-9]*, "{\\"time\\".*\\"event\\":\\"exit\\".*\\n{\\"time\\".*\\"event\\":\\"delete\\"' "$BATS_TEST_TMPDIR/trace" ||
		fail "exit and delete not in one write: $(grep '^write' "$BATS_TEST_TMPDIR/trace")"
	[ "$(jq -r --arg id "$id" 'select(.container == $id) | .event' "$AUD/$TN.log" | tr '\n' ' ')" = "create start exit delete " ] ||
		fail "lines: $(grep -F "$id" "$AUD/$TN.log")"
	x=$(line "$TN" exit)
	jq -e --arg id "$id" '.container == $id and .exit_status == 137' <<<"$x" || fail "exit: $x"
	jq -e --arg id "$id" 'select(.container == $id and .event == "delete") | has("exit_status") | not' "$AUD/$TN.log" ||
		fail "delete line carries exit_status"
}

@test "the host ID range in the create line is the container's uid_map" {
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	host=$(awk '{print $2}' "/proc/$(init_pid "$id")/uid_map")
	[ "$(line "$TN" create | jq .host_ids.start)" = "$host" ]
}

@test "trusted tenant: audited too (its pod's own seccomp)" {
	tenant trusted '{"trusted": true}'
	pod_bundle b trusted
	run_container
	assert_success
	[ "$(events trusted)" = "create start exit delete " ] || fail "events: $(events trusted)"
	jq -e --arg id "$ID" '.container == $id and .seccomp == "pod" and .tenant == "trusted"' \
		<<<"$(line trusted create)"
}

@test "privileged pod asking CAP_SYS_ADMIN only inheritable: the line names the profile it runs under" {
	# the policy clears the inheritable set, so the effective spec no longer looks
	# privileged; the pod still gets the tenant's privileged profile, and the line says so
	tenant "$TN" '{"privileged": true}'
	pod_bundle b
	config_edit '.process.capabilities.inheritable = ["CAP_SYS_ADMIN"]'
	run ward policy explain --json "$BUNDLE"
	assert_success
	jq -e '[.effective.process.capabilities[][]] | index("CAP_SYS_ADMIN") | not' <<<"$output" ||
		fail "effective spec: $output"
	run_container
	assert_success
	jq -e --arg id "$ID" '.container == $id and .seccomp == "privileged"' \
		<<<"$(line "$TN" create)" || fail "create: $(line "$TN" create)"
}

@test "in-process: the lifecycle lines with no audit hook in the effective spec, none run" {
	# a hook that would fail if anything ran it: the lines must be ward's own
	global '{"audit_hook": "/nonexistent/ward-audit-hook"}'
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	! grep -q ward-audit-hook "$STATE/$id/config.json" || fail "an audit hook in the effective spec"
	jq -e '(.hooks // {}) | [.createRuntime, .poststart, .poststop] | map(. // []) | add
		| length == 0' "$STATE/$id/config.json" || fail "hooks: $(jq -c .hooks "$STATE/$id/config.json")"
	pid=$(init_pid "$id")
	ward kill "$id" KILL
	wait_status "$id" stopped
	ward delete --exit-status 137 "$id"
	[ "$(events "$TN")" = "create start exit delete " ] || fail "events: $(events "$TN")"
	# the hook's fields, in the hook's order; a pid while the init lives (create, start),
	# none after (the poststop state of a stopped container has pid 0)
	for e in create start exit delete; do
		l=$(line "$TN" "$e")
		x='["time","event","tenant","container","bundle","pod","host_ids","apparmor","capabilities","seccomp"'
		case $e in
		create | start) x+=',"pid"]' p=$pid ;;
		exit) x+=',"exit_status"]' p=null ;;
		delete) x+=']' p=null ;;
		esac
		[ "$(jq -c keys_unsorted <<<"$l")" = "$x" ] || fail "$e: $l"
		jq -e --arg id "$id" --argjson pid "$p" '.container == $id and .pid == $pid
			and .seccomp == "default" and .pod.uid == "uid-123"' <<<"$l" || fail "$e: $l"
	done
	[ "$(line "$TN" exit | jq .exit_status)" = 137 ]
}

@test "in-process: a start line that cannot be written stops the container (as the hook did)" {
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	create_container "$id"
	pid=$(init_pid "$id")
	chown 1000 "$AUD"
	run --separate-stderr ward start "$id"
	chown 0 "$AUD"
	assert_failure
	[[ "$stderr" == *"audit directory $AUD: owned by uid 1000"* ]] || fail "$stderr"
	[ "$(ward state "$id" | jq -r .status)" = stopped ] || fail "still $(ward state "$id" | jq -r .status)"
	[ ! -e "/proc/$pid" ] || [ "$(awk '{print $3}' "/proc/$pid/stat")" = Z ] || fail "init $pid alive"
	ward delete "$id"
	[ "$(events "$TN")" = "create exit delete " ] || fail "events: $(events "$TN")"
}

@test "policy refusal: a refused line with the reason, in the tenant's log or _unknown.log" {
	pod_bundle b
	add_mount '{"destination": "/h", "type": "bind", "source": "/etc", "options": ["rbind"]}'
	run_container
	assert_failure
	assert_one_line "$stderr"
	[ "$(events "$TN")" = "refused " ] || fail "events: $(events "$TN")"
	r=$(line "$TN" refused)
	jq -e --arg id "$ID" --arg b "$BUNDLE" '.container == $id and .bundle == $b
		and (.error | contains("host_paths")) and (.error | contains("/etc"))
		and .pod.namespace == "team-a"' <<<"$r" || fail "refused: $r"
	assert_nothing_left "$ID"
	# a tenant that does not exist: the line goes to _unknown.log, tenant null
	make_bundle c '.annotations["ward.dev/tenant"] = "nope"'
	run_container
	assert_failure
	r=$(line _unknown refused)
	jq -e --arg id "$ID" '.container == $id and .tenant == null
		and (.error | contains("unknown tenant \"nope\""))' <<<"$r" || fail "refused: $r"
}

@test "the audit log is out of a container's reach: binds of it are refused, it is not inside" {
	# even a tenant whose host_paths cover the audit directory's parent
	tenant "$TN" "{\"host_paths\": [\"$BATS_TEST_TMPDIR\"]}"
	mkdir -p "$AUD" && chmod 0700 "$AUD"
	n=0
	for src in "$AUD" "$BATS_TEST_TMPDIR"; do
		n=$((n + 1))
		pod_bundle "b$n"
		add_mount "$(jq -nc --arg s "$src" '{destination: "/a", type: "bind", source: $s, options: ["rbind"]}')"
		run_container
		assert_failure
		[[ "$stderr" == *"host_paths"*"is ward's own data"* ]] || fail "bind of $src: $stderr"
		assert_nothing_left "$ID"
	done
	# inside a running container: neither the configured path nor /var/log/ward exists, and
	# nothing written there lands in the log
	pod_bundle c
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	before=$(wc -l <"$AUD/$TN.log")
	run ward exec "$id" sh -c "ls -d '$AUD' /var/log/ward 2>&1; echo forged >>'$AUD/$TN.log' 2>&1; echo forged >>/var/log/ward/$TN.log 2>&1; echo done"
	assert_success
	assert_line --partial "$AUD: No such file or directory"
	assert_line --partial "/var/log/ward: No such file or directory"
	assert_line done
	! grep -q forged "$AUD/$TN.log"
	# the exec itself is the one new line
	[ "$(wc -l <"$AUD/$TN.log")" = $((before + 1)) ]
}

@test "fail closed: an audit directory that is not root's, a symlink or read-only makes create fail" {
	pod_bundle b
	mkdir -p "$AUD"
	chown 1000:1000 "$AUD"
	chmod 0700 "$AUD"
	run_container
	assert_failure
	[[ "$stderr" == *"audit directory $AUD: owned by uid 1000, not root (refused)"* ]] || fail "$stderr"
	no_container_left "$ID"
	[ ! -e "$AUD/$TN.log" ]

	chown 0:0 "$AUD"
	chmod 0777 "$AUD"
	run_container
	assert_failure
	[[ "$stderr" == *"audit directory $AUD: writable by group or others"* ]] || fail "$stderr"
	no_container_left "$ID"

	rm -rf "$AUD"
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$AUD"
	run_container
	assert_failure
	[[ "$stderr" == *"audit directory $AUD: is a symbolic link (refused)"* ]] || fail "$stderr"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	no_container_left "$ID"

	rm "$AUD"
	mkdir -m 0700 "$AUD"
	mount --bind "$AUD" "$AUD"
	on_teardown umount "$AUD"
	mount -o remount,bind,ro "$AUD"
	run_container
	assert_failure
	[[ "$stderr" == *"audit log $AUD/$TN.log"*"Read-only file system"* ]] || fail "$stderr"
	no_container_left "$ID"
}

@test "exec: the line's tenant and pod are the state's, not the annotations of the state's config.json" {
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	# what create resolved is in state.json; the effective spec's annotations are the pod's
	# words, never read back: rewriting them changes nothing in the line
	cfg="$STATE/$id/config.json"
	jq -c '.annotations["ward.dev/tenant"] = "other" | .annotations["io.kubernetes.cri.sandbox-name"] = "forged"' \
		"$cfg" >"$cfg.new"
	mv "$cfg.new" "$cfg"
	run ward exec "$id" true
	assert_success
	[ ! -e "$AUD/other.log" ] || fail "written to other.log: $(cat "$AUD/other.log")"
	e=$(line "$TN" exec)
	jq -e --arg id "$id" '.container == $id and .pod == {namespace: "team-a", name: "web", uid: "uid-123"}' \
		<<<"$e" || fail "exec: $e"
}

@test "fail closed: an exec that cannot be audited does not run" {
	pod_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	chown 1000 "$AUD"
	run --separate-stderr ward exec "$id" touch /ran
	assert_failure
	[[ "$stderr" == *"exec in \"$id\" refused: audit: audit directory $AUD: owned by uid 1000"* ]] || fail "$stderr"
	[ ! -e "$BUNDLE/rootfs/ran" ] || fail "the exec ran"
	chown 0 "$AUD"
}

@test "a failed write is reported: a full log filesystem fails create with ENOSPC" {
	pod_bundle b
	mkdir -p "$AUD"
	mount -t tmpfs -o size=4k,mode=0700 tmpfs "$AUD"
	on_teardown umount "$AUD"
	head -c 4096 /dev/zero >"$AUD/filler" || true
	run_container
	assert_failure
	[[ "$stderr" == *"audit log $AUD/$TN.log: write: No space left on device"* ]] || fail "$stderr"
	no_container_left "$ID"
}

@test "ward audit: --tenant, --container, --since, --json filter and print the lines" {
	tenant other '{}'
	pod_bundle a
	run_id a
	assert_success
	a=$ID
	pod_bundle o other
	run_id o
	assert_success
	o=$ID
	run ward audit
	assert_success
	[ "${#lines[@]}" = 8 ] || fail "$output"
	# time event tenant container details, every tenant, in time order
	assert_line --index 0 --regexp "^[0-9-]+T[0-9:.]+Z create $TN $a .*bundle=$BATS_TEST_TMPDIR/a .*seccomp=default"
	assert_line --index 4 --regexp "^[0-9-]+T[0-9:.]+Z create other $o "
	run ward audit --tenant other
	assert_success
	[ "${#lines[@]}" = 4 ] && [[ "$output" != *" $TN "* ]] || fail "$output"
	run ward audit --container "$a" --json
	assert_success
	[ "$(jq -r .event <<<"$output" | tr '\n' ' ')" = "create start exit delete " ] || fail "$output"
	[ "$(jq -r .container <<<"$output" | sort -u)" = "$a" ]
	# --json prints the lines as written
	[ "$output" = "$(grep -F "\"container\":\"$a\"" "$AUD/$TN.log")" ]
	run ward audit --since 1h
	assert_success
	[ "${#lines[@]}" = 8 ]
	run ward audit --since "$(date -u -d '+1 min' +%Y-%m-%dT%H:%M:%SZ)"
	assert_success
	assert_output ''
	# since the first line of the second container: its lines only
	t=$(jq -r 'select(.container == $o) | .time' --arg o "$o" "$AUD/other.log" | head -1)
	run ward audit --since "$t" --json
	assert_success
	[ "$(jq -r .container <<<"$output" | sort -u)" = "$o" ] || fail "$output"
	run ward audit --since yesterday
	assert_failure
	[[ "$output" == *'"yesterday": expected an RFC 3339 time'* ]] || fail "$output"
	run ward audit --tenant nobody
	assert_success
	assert_output ''
}

@test "GPUs: gpu-lease after inject, gpu-wipe with bytes, time and result (ok, then quarantined)" {
	[ -x "$(dirname "$WARD")/ward-gpu-hook" ] || fail "ward-gpu-hook not built"
	gpu_fixture
	on_teardown gpu_fixture_teardown
	jq --arg aud "$AUD" '. + {audit_dir: $aud}' "$GPUFIX/conf/ward.json" >"$GPUFIX/conf/w.json"
	mv "$GPUFIX/conf/w.json" "$GPUFIX/conf/ward.json"
	gpu_bundle b "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	a=$(cid a)
	start_container "$a"
	plant "$GPU2" "secret"
	ward delete -f "$a"
	[ "$(events "$TA")" = "gpu-lease create start gpu-wipe exit delete " ] || fail "events: $(events "$TA")"
	jq -e --arg id "$a" --arg g "$GPU2" '.container == $id and .gpus == [$g] and .pid > 0' \
		<<<"$(line "$TA" gpu-lease)" || fail "$(line "$TA" gpu-lease)"
	jq -e --arg id "$a" --arg g "$GPU2" '.gpus == [$g] and .container == $id' <<<"$(line "$TA" create)"
	w=$(line "$TA" gpu-wipe)
	jq -e --arg id "$a" --arg g "$GPU2" --argjson m "$GPU_MEM" '.container == $id and .gpu == $g
		and .result == "ok" and .bytes > 0 and .total == $m and .seconds >= 0 and .gbps >= 0
		and .reason == null' <<<"$w" || fail "gpu-wipe: $w"
	# a wipe that cannot verify: quarantined, with the reason
	gpu_bundle c "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	c=$(cid c)
	start_container "$c"
	plant "$GPU2" "secret"
	echo "memset_noop 1" >"$GPUFIX/cuda/stub/knobs"
	ward delete -f "$c" || true
	w=$(jq -c --arg id "$c" 'select(.event == "gpu-wipe" and .container == $id)' "$AUD/$TA.log")
	jq -e '.result == "quarantined" and (.reason | length > 0)' <<<"$w" || fail "gpu-wipe: $w"
	rm "$GPUFIX/cuda/stub/knobs"
	ward gpu release "$GPU2"
}
