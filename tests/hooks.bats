#!/usr/bin/env bats
# OCI hooks: order, state on stdin, args, env, namespaces, failures, timeouts.

load helpers

# A hook script at $HOOKDIR/hook.sh, reachable at the same path on the host and inside the
# container (HOOKDIR is bind-mounted at its own path), so every kind can use one path.
# Called as: hook.sh KIND [EXIT_STATUS [SLEEP]]; records into $HOOKDIR:
#   order (one line per call: KIND), KIND.json (stdin), KIND.args, KIND.env, KIND.ns (mnt ns),
#   KIND.rootfs (content of /etc/ward-test-rootfs if visible, i.e. inside the container).
hook_bundle() {
	make_bundle b
	HOOKDIR="$BATS_TEST_TMPDIR/hooks"
	mkdir -p "$HOOKDIR"
	chmod 0777 "$HOOKDIR"
	cat >"$HOOKDIR/hook.sh" <<-EOF
		#!/bin/sh
		d=$HOOKDIR
		kind=\$1
		cat > "\$d/\$kind.json"
		echo "\$kind" >> "\$d/order"
		echo "\$@" > "\$d/\$kind.args"
		env > "\$d/\$kind.env"
		readlink /proc/self/ns/mnt > "\$d/\$kind.ns"
		cat /etc/ward-test-rootfs > "\$d/\$kind.rootfs" 2>/dev/null
		[ -n "\$3" ] && sleep "\$3"
		exit \${2:-0}
	EOF
	chmod 0755 "$HOOKDIR/hook.sh"
	mkdir -p "$BUNDLE/rootfs$HOOKDIR"
	add_mount "$(jq -nc --arg s "$HOOKDIR" '{destination: $s, type: "bind", source: $s, options: ["rbind", "rw"]}')"
}

# hook_entry KIND [EXIT [SLEEP [TIMEOUT]]]: the JSON of one hook entry calling hook.sh.
hook_entry() {
	local kind=$1 ex=${2:-0} sl=${3:-} to=${4:-}
	jq -nc --arg p "$HOOKDIR/hook.sh" --arg k "$kind" --arg e "$ex" --arg s "$sl" --arg t "$to" '
		{path: $p, args: ([$p, $k, $e] + (if $s != "" then [$s] else [] end)),
		 env: ["HOOK_VAR=value-" + $k, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}
		+ (if $t != "" then {timeout: ($t | tonumber)} else {} end)'
}

# set_hook KIND [EXIT [SLEEP [TIMEOUT]]]: append a hook of KIND.
set_hook() {
	config_edit '.hooks[$k] = ((.hooks[$k] // []) + [$h])' --arg k "$1" --argjson h "$(hook_entry "$@")"
}

all_hooks() {
	local k
	for k in prestart createRuntime createContainer startContainer poststart poststop; do set_hook "$k"; done
}

order() { tr '\n' ' ' <"$HOOKDIR/order" 2>/dev/null | sed 's/ $//'; }

@test "hooks: create runs prestart, createRuntime, createContainer in order; start adds startContainer, poststart" {
	hook_bundle
	all_hooks
	set_cmd "echo program >> $HOOKDIR/order; sleep 1000"
	id=$(cid h)
	create_container "$id"
	assert_equal "$(order)" "prestart createRuntime createContainer"
	ward start "$id"
	# poststart has run when start returns; the program runs after startContainer
	retry 100 0.05 grep -qx program "$HOOKDIR/order"
	run order
	assert_output --regexp '^prestart createRuntime createContainer startContainer (program poststart|poststart program)$'
	[ ! -e "$HOOKDIR/poststop.json" ]
}

@test "hooks: poststop runs on delete of a stopped container, not before" {
	hook_bundle
	all_hooks
	id=$(cid h)
	start_container "$id"
	wait_status "$id" stopped
	[ ! -e "$HOOKDIR/poststop.json" ]
	ward delete "$id"
	run order
	assert_output "prestart createRuntime createContainer startContainer poststart poststop"
}

@test "hooks: poststop runs on delete --force of a running container" {
	hook_bundle
	set_hook poststop
	set_args sleep 1000
	id=$(cid h)
	start_container "$id"
	ward delete --force "$id"
	assert_equal "$(order)" poststop
	jq -e --arg id "$id" '.id == $id' "$HOOKDIR/poststop.json" >/dev/null
}

@test "hooks: poststop runs on delete --force of a created (never started) container" {
	hook_bundle
	set_hook poststop
	set_args sleep 1000
	id=$(cid h)
	create_container "$id"
	ward delete --force "$id"
	assert_equal "$(order)" poststop
}

@test "hooks: foreground run runs every hook, poststop after the program exits" {
	hook_bundle
	all_hooks
	set_cmd "echo program >> $HOOKDIR/order"
	run_container
	assert_success
	run order
	assert_output --regexp '^prestart createRuntime createContainer startContainer (program poststart|poststart program) poststop$'
}

@test "hooks: stdin is the state JSON with ociVersion, id, pid, status, bundle (and annotations)" {
	hook_bundle
	config_edit '.annotations = {"org.example.hook": "yes"}'
	all_hooks
	set_args sleep 1000
	id=$(cid h)
	create_container "$id"
	pid=$(init_pid "$id")
	ward start "$id"
	ward delete -f "$id"
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		f="$HOOKDIR/$k.json"
		jq -e . "$f" >/dev/null || fail "$k: stdin is not JSON: $(cat "$f")"
		jq -e --arg id "$id" --arg b "$BUNDLE" '.id == $id and .bundle == $b and (.ociVersion | type == "string")
			and (.status | type == "string")' "$f" >/dev/null || fail "$k: state $(cat "$f")"
		jq -e '.annotations["org.example.hook"] == "yes"' "$f" >/dev/null || fail "$k: no annotations: $(cat "$f")"
	done
	for k in prestart createRuntime createContainer startContainer poststart; do
		[ "$(jq -r .pid "$HOOKDIR/$k.json")" = "$pid" ] || fail "$k: pid $(jq .pid "$HOOKDIR/$k.json") != init pid $pid"
	done
	assert_equal "$(jq -r .status "$HOOKDIR/poststart.json")" running
	assert_equal "$(jq -r .status "$HOOKDIR/poststop.json")" stopped
	if ward_specific; then
		# runtime-tools' hooks_stdin: hooks of create see "created" (crun too; runc: creating)
		for k in prestart createRuntime createContainer; do
			assert_equal "$(jq -r .status "$HOOKDIR/$k.json")" created
		done
	fi
}

@test "hooks: stdin and state carry the config's annotations as written; the tenant is ward's own field" {
	hook_bundle
	config_edit '.annotations = {"org.example.hook": "yes"}'
	set_hook createRuntime
	set_hook poststart
	set_args sleep 1000
	id=$(cid h)
	start_container "$id"
	for f in "$HOOKDIR/createRuntime.json" "$HOOKDIR/poststart.json" <(ward state "$id"); do
		json=$(cat "$f")
		assert_equal "$(jq -c .annotations <<<"$json")" '{"org.example.hook":"yes"}'
		if ward_specific; then
			assert_equal "$(jq -r .tenant <<<"$json")" default
		fi
	done
	ward delete -f "$id"
}

@test "hooks: args (args[0] is argv[0]) and env come from the config; the runtime's env does not leak" {
	hook_bundle
	all_hooks
	id=$(cid h)
	start_container "$id"
	wait_status "$id" stopped
	ward delete "$id"
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		assert_equal "$(cat "$HOOKDIR/$k.args")" "$k 0"
		grep -qx "HOOK_VAR=value-$k" "$HOOKDIR/$k.env" || fail "$k: HOOK_VAR missing: $(cat "$HOOKDIR/$k.env")"
		! grep -q WARD_TEST_TAG "$HOOKDIR/$k.env" || fail "$k: the runtime's environment leaked into the hook"
	done
}

@test "hooks: a hook without env gets a default PATH (runc, crun pass one too), nothing else of the runtime's env" {
	hook_bundle
	all_hooks
	config_edit '.hooks |= map_values(map(del(.env)))'
	id=$(cid h)
	start_container "$id"
	wait_status "$id" stopped
	ward delete "$id"
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		grep -q '^PATH=/' "$HOOKDIR/$k.env" || fail "$k: no PATH: $(cat "$HOOKDIR/$k.env")"
		if ward_specific; then
			# runc 1.1.5 hands its whole environment to a hook without env; ward only PATH
			# (the shell running hook.sh adds PWD and SHLVL)
			assert_equal "$(grep -Ev '^(PWD|SHLVL|_)=' "$HOOKDIR/$k.env")" \
				"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		fi
	done
}

@test "hooks: createRuntime runs in the runtime's mount namespace, createContainer and startContainer in the container's" {
	hook_bundle
	all_hooks
	set_args sleep 1000
	id=$(cid h)
	create_container "$id"
	cmnt=$(readlink "/proc/$(init_pid "$id")/ns/mnt")
	ward start "$id"
	assert_equal "$(cat "$HOOKDIR/createRuntime.ns")" "$(host_ns mnt)"
	assert_equal "$(cat "$HOOKDIR/prestart.ns")" "$(host_ns mnt)"
	assert_equal "$(cat "$HOOKDIR/createContainer.ns")" "$cmnt"
	assert_equal "$(cat "$HOOKDIR/startContainer.ns")" "$cmnt"
	assert_equal "$(cat "$HOOKDIR/poststart.ns")" "$(host_ns mnt)"
	# startContainer runs after pivot_root: it sees the container's rootfs as /
	assert_equal "$(cat "$HOOKDIR/startContainer.rootfs")" ward-test-rootfs
}

@test "hooks: a failing prestart hook fails create: no state, no cgroup, no process, no mount" {
	hook_bundle
	set_hook prestart 3
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid h)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_output --partial hook
	if ward_specific; then
		assert_output --partial "exited with status 3"
	fi
	assert_nothing_left "$id"
	[ ! -e "$SHARED/ran" ]
}

@test "hooks: a failing createRuntime hook fails create and leaves nothing" {
	hook_bundle
	set_hook createRuntime 1
	id=$(cid h)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_nothing_left "$id"
}

@test "hooks: a failing createContainer hook fails create and leaves nothing" {
	hook_bundle
	set_hook createContainer 1
	id=$(cid h)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_nothing_left "$id"
}

@test "hooks: a failing startContainer hook: the program never runs and the container stops" {
	hook_bundle
	set_hook startContainer 1
	share_dir
	set_cmd 'touch /shared/ran'
	id=$(cid h)
	create_container "$id"
	ward start "$id" || true
	wait_status "$id" stopped
	[ -e "$HOOKDIR/startContainer.json" ] || fail "the startContainer hook did not run"
	[ ! -e "$SHARED/ran" ]
	run ward delete -f "$id"
	assert_success
}

# runtime-spec (runtime.md, lifecycle step 7): "If any startContainer hook fails, the runtime
# MUST generate an error, stop the container". The caller of start is who can see the error.
@test "hooks: a failing startContainer hook makes start fail with an error naming the hook" {
	hook_bundle
	set_hook startContainer 1
	id=$(cid h)
	create_container "$id"
	run ward start "$id"
	assert_failure
	assert_output --partial startContainer
}

@test "hooks: a hook running past its timeout fails create quickly and leaves nothing" {
	hook_bundle
	set_hook createRuntime 0 30 1
	id=$(cid h)
	SECONDS=0
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	[ "$SECONDS" -lt 10 ] || fail "create took ${SECONDS}s with a 1 s hook timeout"
	assert_output --regexp 'timeout|timed out'
	assert_nothing_left "$id"
	# the hook process itself was killed
	run pgrep -f "$HOOKDIR/hook.sh"
	assert_failure
}

@test "hooks: a failing poststop hook is only a warning: delete succeeds and removes the state" {
	hook_bundle
	set_hook poststop 1
	id=$(cid h)
	start_container "$id"
	wait_status "$id" stopped
	run ward delete "$id"
	assert_success
	# runtime-spec: "the runtime MUST log a warning"
	assert_output --partial hook
	if ward_specific; then
		assert_output --partial warning
		assert_output --partial poststop
	fi
	assert_nothing_left "$id"
	assert_equal "$(order)" poststop
}

@test "hooks: several hooks of one kind run in config order; a failure stops the rest" {
	hook_bundle
	config_edit '.hooks.createRuntime = [$a, $b, $c]' \
		--argjson a "$(hook_entry first)" --argjson b "$(hook_entry second 1)" --argjson c "$(hook_entry third)"
	id=$(cid h)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_equal "$(order)" "first second"
	assert_nothing_left "$id"
}

@test "hooks: a hook path that does not exist fails create and leaves nothing" {
	hook_bundle
	config_edit '.hooks.createRuntime = [{"path": "/no/such/hook"}]'
	id=$(cid h)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	assert_output --partial /no/such/hook
	assert_nothing_left "$id"
}
