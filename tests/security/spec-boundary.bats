#!/usr/bin/env bats
# What a pod's config.json may make ward do on the host, for every tenant:
#   - OCI hooks run on the host as root: a pod may name only the programs of its tenant's
#     "hooks" allow-list (tenants.d), none by default;
#   - linux.cgroupsPath, whatever its form (absolute, relative, "..", ':', systemd's
#     slice:prefix:name), lands below /ward/<tenant>/ and never inside another container's
#     cgroup, or is refused;
#   - a sysctl whose namespace the spec does not create (or joins the host's) is refused,
#     for trusted tenants too: it would be written into the host's namespace;
#   - config.json and its annotations are size-capped before they are read whole.
# Each test runs under the built-in, hardened configuration (WARD_CONFIG=), a private
# configuration directory, or the trusted fixture, and checks that nothing is left.
#
# Run alone: make test-integration T=spec-boundary

export WARD_CONFIG=
: "${WARD:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/ward}"
load ../helpers

TRUSTED="$WARD_REPO/tests/fixtures/config-trusted"

suite_setup() {
	[ "$(id -u)" -eq 0 ] || skip "runs containers as root"
	MARKER="$BATS_TEST_TMPDIR/hook-ran"
	HOOKDIR="$BATS_TEST_TMPDIR/hooks"
	mkdir -p "$HOOKDIR/sub"
	chmod 0755 "$HOOKDIR" "$HOOKDIR/sub"
	# A hook that leaves a mark on the host (it runs as host root if it runs at all).
	for h in "$HOOKDIR/mark" "$HOOKDIR/sub/mark" "$BATS_TEST_TMPDIR/evil"; do
		printf '#!/bin/sh\necho "$0" >>%s\n' "$MARKER" >"$h"
		chmod 0755 "$h"
	done
}

# private_tenant JSON: a configuration directory with one tenant, $TN, made of JSON, and
# the bundle's pods assigned to it (call after make_bundle).
private_tenant() {
	CONF="$BATS_TEST_TMPDIR/conf"
	TN="t$$-$BATS_TEST_NUMBER"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$BATS_TEST_TMPDIR/lib" >"$CONF/ward.json"
	printf '%s\n' "$1" >"$CONF/tenants.d/$TN.json"
	export WARD_CONFIG=$CONF
	config_edit '.annotations["ward.dev/tenant"] = $t' --arg t "$TN"
	on_teardown "rmdir '$CG2/ward/$TN'"
}

# The container's cgroup v2 path, as the host sees it.
cgroup_of() {
	awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup"
}

# ---- hooks -----------------------------------------------------------------------------

@test "hooks: a pod hook of any kind is refused for the default tenant; it never runs on the host" {
	local kind n=0
	for kind in prestart createRuntime createContainer startContainer poststart poststop; do
		n=$((n + 1))
		make_bundle "b$n"
		config_edit '.hooks[$k] = [{"path": $p}]' --arg k "$kind" --arg p "$BATS_TEST_TMPDIR/evil"
		run_container
		[ "$status" -ne 0 ] || fail "a $kind hook was accepted"
		assert_one_line "$stderr"
		[[ "$stderr" == *"tenant \"default\": hooks: hooks.$kind[0]: $BATS_TEST_TMPDIR/evil is not in the tenant's hook allow-list (tenants.d/default.json \"hooks\")"* ]] ||
			fail "$kind: $stderr"
		[ ! -e "$MARKER" ] || fail "the $kind hook ran on the host: $(cat "$MARKER")"
		assert_nothing_left "$ID"
	done
	# policy explain says the same, and runs nothing either
	run --separate-stderr ward policy explain "$BUNDLE"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"hooks: hooks.poststop[0]: $BATS_TEST_TMPDIR/evil is not in the tenant's hook allow-list"* ]] || fail "$stderr"
	[ ! -e "$MARKER" ]
}

@test "hooks: an allow-listed hook runs and policy explain shows it; others, '..', sub-directories and LD_PRELOAD are refused" {
	make_bundle b
	private_tenant "{\"hooks\": [\"$HOOKDIR/\", \"/usr/bin/true\"]}"
	config_edit '.hooks.prestart = [{"path": $p}] | .hooks.poststop = [{"path": "/usr/bin/true"}]' \
		--arg p "$HOOKDIR/mark"
	run --separate-stderr ward policy explain "$BUNDLE"
	assert_success
	assert_output --partial "hooks.prestart[0]: $HOOKDIR/mark kept (in the tenant's hook allow-list)"
	assert_output --partial "hooks.poststop[0]: /usr/bin/true kept (in the tenant's hook allow-list)"
	[ ! -e "$MARKER" ] || fail "policy explain ran a hook"
	run_container
	assert_success
	[ "$(cat "$MARKER")" = "$HOOKDIR/mark" ] || fail "the allowed hook did not run once: $(cat "$MARKER" 2>&1)"
	rm -f "$MARKER"

	local cases=(
		"$HOOKDIR/sub/mark => $HOOKDIR/sub/mark is not in the tenant's hook allow-list (tenants.d/$TN.json \"hooks\")"
		"$HOOKDIR/../evil => $HOOKDIR/../evil is not an absolute path without \".\", \"..\" or empty components"
		"$HOOKDIR/./mark => is not an absolute path without"
		"$BATS_TEST_TMPDIR/evil => $BATS_TEST_TMPDIR/evil is not in the tenant's hook allow-list"
		"/usr/bin/true/ => is not an absolute path without"
	)
	local c path want
	for c in "${cases[@]}"; do
		path=${c%% => *}
		want=${c#* => }
		config_edit '.hooks = {"prestart": [{"path": $p}]}' --arg p "$path"
		run_container
		[ "$status" -ne 0 ] || fail "accepted: $path"
		assert_one_line "$stderr"
		[[ "$stderr" == *"tenant \"$TN\": hooks: hooks.prestart[0]: "* && "$stderr" == *"$want"* ]] ||
			fail "$path: $stderr"
		assert_nothing_left "$ID"
	done
	config_edit '.hooks = {"createRuntime": [{"path": $p, "env": ["LD_PRELOAD=/tmp/x.so"]}]}' --arg p "$HOOKDIR/mark"
	run_container
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"tenant \"$TN\": hooks: hooks.createRuntime[0] ($HOOKDIR/mark): env[0]: LD_PRELOAD is not passed"* ]] || fail "$stderr"
	[ ! -e "$MARKER" ] || fail "a refused hook ran: $(cat "$MARKER")"
	assert_nothing_left "$ID"
}

# ---- cgroupsPath -------------------------------------------------------------------------

@test "cgroupsPath: /x:y, ../../x, a/../../b and a//b are refused; /ward/<other tenant>/c stays below /ward/default/" {
	local id p n=0
	for p in "/x-$$:y" "../../x-$$" "a/../../b-$$" "a-$$//b"; do
		n=$((n + 1))
		make_bundle "b$n"
		config_edit '.linux.cgroupsPath = $p' --arg p "$p"
		run_container
		[ "$status" -ne 0 ] || fail "cgroupsPath $p was accepted"
		assert_one_line "$stderr"
		[[ "$stderr" == *"tenant \"default\": cgroup: linux.cgroupsPath \"$p\": "* ]] || fail "$p: $stderr"
		assert_nothing_left "$ID"
		[ ! -e "$CG2/x-$$:y" ] && [ ! -e "$CG2/x-$$" ] && [ ! -e "$CG2/b-$$" ] ||
			fail "a cgroup was made outside /ward/default for $p"
	done
	make_bundle c
	set_args sleep 1000
	id=$(cid c)
	config_edit '.linux.cgroupsPath = $p' --arg p "/ward/other-$$/$id"
	on_teardown "ward delete -f '$id'; rmdir '$CG2/ward/default/ward/other-$$' '$CG2/ward/default/ward'"
	start_container "$id"
	assert_equal "$(cgroup_of "$(init_pid "$id")")" "/ward/default/ward/other-$$/$id"
	[ ! -e "$CG2/ward/other-$$" ] || fail "a cgroup was made in another tenant's place"
}

@test "cgroupsPath: systemd's slice:prefix:name is mapped below /ward/<tenant>/ as systemd would place it" {
	local id uid=$$x$RANDOM want
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	config_edit '.linux.cgroupsPath = $p' --arg p "kubepods-besteffort-pod$uid.slice:cri-containerd:$id"
	want="/ward/default/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$uid.slice/cri-containerd-$id.scope"
	on_teardown "ward delete -f '$id'; rmdir '$CG2/ward/default/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$uid.slice'"
	run --separate-stderr ward policy explain "$BUNDLE"
	assert_success
	assert_output --partial "linux.cgroupsPath: $want (systemd kubepods-besteffort-pod$uid.slice:cri-containerd:$id"
	start_container "$id"
	assert_equal "$(cgroup_of "$(init_pid "$id")")" "$want"
	[ ! -e "$CG2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$uid.slice" ] ||
		fail "placed at the root's kubepods.slice"
	# any other form with ':' is refused
	make_bundle b2
	config_edit '.linux.cgroupsPath = "a:b"'
	run_container
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"tenant \"default\": cgroup: linux.cgroupsPath \"a:b\": expected systemd's slice:prefix:name form"* ]] || fail "$stderr"
	[ ! -e "$STATE/$ID" ] || fail "state left behind"
}

@test "cgroupsPath: a container's cgroup inside, or around, another container's is refused" {
	local a b
	make_bundle b
	set_args sleep 1000
	a=$(cid a)
	config_edit '.linux.cgroupsPath = $p' --arg p "pod-$$/$a"
	b=$(cid b)
	on_teardown "ward delete -f '$a'; ward delete -f '$b'; rmdir '$CG2/ward/default/pod-$$'"
	start_container "$a"
	# inside it: its kill --all and delete would reach the new one
	make_bundle b2
	config_edit '.linux.cgroupsPath = $p' --arg p "pod-$$/$a/in"
	run_container
	[ "$status" -ne 0 ] || fail "a cgroup inside another container's was accepted"
	[[ "$stderr" == *"container \"$a\" has the cgroup $CG2/ward/default/pod-$$/$a"* ]] || fail "$stderr"
	[ ! -e "$STATE/$ID" ] && [ ! -e "$CG2/ward/default/pod-$$/$a/in" ] || fail "left behind"
	# around it: the new one's kill --all would reach the first
	config_edit '.linux.cgroupsPath = $p' --arg p "pod-$$"
	run_container
	[ "$status" -ne 0 ] || fail "a cgroup around another container's was accepted"
	[[ "$stderr" == *"container \"$a\" has the cgroup"* ]] || fail "$stderr"
	[ ! -e "$STATE/$ID" ] || fail "state left behind"
	# a sibling is fine (a Kubernetes pod's containers)
	set_args sleep 1000
	config_edit '.linux.cgroupsPath = $p' --arg p "pod-$$/$b"
	start_container "$b"
	assert_equal "$(cgroup_of "$(init_pid "$b")")" "/ward/default/pod-$$/$b"
	[ "$(status_of "$a")" = running ]
}

# ---- sysctls -----------------------------------------------------------------------------

# sysctl_refused CONFIG TENANT: fs.mqueue.msg_max without an IPC namespace, and
# net.ipv4.ping_group_range without a network namespace or in the host's, are refused; the
# host's values do not change.
sysctl_refused() {
	local conf=$1 tenant=$2 mq ping n=0 c filter want
	mq=$(cat /proc/sys/fs/mqueue/msg_max)
	ping=$(cat /proc/sys/net/ipv4/ping_group_range)
	# restored whatever happens (a runtime that writes them would change the host's)
	on_teardown "echo '$mq' >/proc/sys/fs/mqueue/msg_max"
	on_teardown "printf '%s\n' '$ping' >/proc/sys/net/ipv4/ping_group_range"
	local cases=(
		".linux.namespaces |= map(select(.type != \"ipc\")) | .linux.sysctl = {\"fs.mqueue.msg_max\": \"$((mq + 7))\"}"
		'.linux.namespaces |= map(select(.type != "network")) | .linux.sysctl = {"net.ipv4.ping_group_range": "0 2147483647"}'
		'.linux.namespaces |= map(if .type == "network" then .path = "/proc/'"$$"'/ns/net" else . end) | .linux.sysctl = {"net.ipv4.ping_group_range": "0 2147483647"}'
	)
	for filter in "${cases[@]}"; do
		n=$((n + 1))
		make_bundle "$tenant$n" "$filter"
		WARD_CONFIG=$conf run_container
		[ "$status" -ne 0 ] || fail "tenant $tenant: accepted: $filter"
		assert_one_line "$stderr"
		# (the default tenant's policy refuses the host namespace itself first)
		[[ "$stderr" == *"linux.sysctl"*"fs.mqueue.msg_max"* || "$stderr" == *"linux.sysctl"*"net.ipv4.ping_group_range"* ||
			("$tenant" = default && "$stderr" == *'tenant "default": host_namespaces: '*) ]] ||
			fail "tenant $tenant: $filter: $stderr"
		assert_nothing_left "$ID"
		assert_equal "$(cat /proc/sys/fs/mqueue/msg_max)" "$mq"
		assert_equal "$(cat /proc/sys/net/ipv4/ping_group_range)" "$ping"
	done
	# kernel.* outside the IPC and UTS names is not namespaced at all
	make_bundle "$tenant-core" '.linux.sysctl = {"kernel.core_pattern": "|/tmp/x"}'
	WARD_CONFIG=$conf run_container
	[ "$status" -ne 0 ]
	[[ "$stderr" == *'linux.sysctl'*'"kernel.core_pattern"'* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "sysctl: one of a namespace the spec does not create is refused for a trusted tenant and the default tenant; the host's values stay" {
	sysctl_refused "$TRUSTED" trusted
	[[ "$stderr" == *"is not a namespaced sysctl: it would be set on the host"* ]] || fail "$stderr"
	sysctl_refused "" default
}

@test "sysctl: a trusted pod's sysctls of its own new namespaces are still set, inside only" {
	local ping
	ping=$(cat /proc/sys/net/ipv4/ping_group_range)
	make_bundle b '.linux.sysctl = {"net.ipv4.ping_group_range": "0 0", "fs.mqueue.msg_max": "17"}'
	set_cmd 'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/fs/mqueue/msg_max'
	WARD_CONFIG=$TRUSTED run_container
	assert_success
	assert_equal "$(echo $output)" "0 0 17"
	assert_equal "$(cat /proc/sys/net/ipv4/ping_group_range)" "$ping"
}

# ---- size caps ---------------------------------------------------------------------------

@test "size: a 5 MB config.json is refused before it is read, in little memory, for every tenant" {
	make_bundle b
	head -c 5000000 /dev/zero | tr '\0' a >"$BATS_TEST_TMPDIR/big"
	config_edit '.annotations["big"] = $v' --rawfile v "$BATS_TEST_TMPDIR/big"
	rm -f "$BATS_TEST_TMPDIR/big"
	local conf rss id
	for conf in "" "$TRUSTED"; do
		id=$(cid "c${conf:+t}")
		WARD_CONFIG=$conf /usr/bin/time -f 'maxrss=%M' -o "$BATS_TEST_TMPDIR/time" \
			env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run -b "$BUNDLE" "$id" \
			</dev/null >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" && fail "accepted"
		assert_one_line "$(cat "$BATS_TEST_TMPDIR/err")"
		grep -q "config.json: 50[0-9]* bytes, over the 4 MiB cap of a spec" "$BATS_TEST_TMPDIR/err" ||
			fail "$(cat "$BATS_TEST_TMPDIR/err")"
		rss=$(sed -n 's/^maxrss=//p' "$BATS_TEST_TMPDIR/time")
		[ "$rss" -lt 12000 ] || fail "ward used $rss KiB for a spec it refuses"
		assert_nothing_left "$id"
	done
	run --separate-stderr ward policy explain "$BUNDLE"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"over the 4 MiB cap of a spec"* ]] || fail "$stderr"
}

@test "size: an annotation over 64 KiB, or annotations over 256 KiB in all, are refused naming them" {
	local conf
	head -c 70000 /dev/zero | tr '\0' a >"$BATS_TEST_TMPDIR/v70k"
	head -c 60000 /dev/zero | tr '\0' b >"$BATS_TEST_TMPDIR/v60k"
	for conf in "" "$TRUSTED"; do
		make_bundle "one${conf:+t}"
		config_edit '.annotations["example.com/big"] = $v' --rawfile v "$BATS_TEST_TMPDIR/v70k"
		WARD_CONFIG=$conf run_container
		[ "$status" -ne 0 ] || fail "a 70000-byte annotation was accepted"
		assert_one_line "$stderr"
		[[ "$stderr" == *"config.json: annotations.example.com/big: 70000 bytes, over the 64 KiB cap of one annotation"* ]] || fail "$stderr"
		assert_nothing_left "$ID"
		make_bundle "all${conf:+t}"
		config_edit '.annotations += {a1: $v, a2: $v, a3: $v, a4: $v, a5: $v}' --rawfile v "$BATS_TEST_TMPDIR/v60k"
		WARD_CONFIG=$conf run_container
		[ "$status" -ne 0 ] || fail "300 KB of annotations were accepted"
		[[ "$stderr" == *"config.json: annotations: 3000"*" bytes of keys and values, over the 256 KiB cap of all annotations"* ]] || fail "$stderr"
		assert_nothing_left "$ID"
	done
	# just under the caps: runs
	make_bundle ok
	config_edit '.annotations += {a1: $v, a2: $v, a3: $v, a4: $v}' --rawfile v "$BATS_TEST_TMPDIR/v60k"
	run_container
	assert_success
}

# ---- mount propagation -------------------------------------------------------------------

@test "mounts: a shared or rshared mount is refused for the default tenant (its mounts would reach the host); rslave runs" {
	make_bundle b
	mkdir -p "$BUNDLE/vol"
	local prop
	for prop in rshared shared; do
		config_edit '.mounts += [{"destination": "/v", "type": "bind", "source": "vol", "options": ["rbind", $p]}]' --arg p "$prop"
		ward_capture create -b "$BUNDLE" "$(cid "c-$prop")"
		[ "$status" -ne 0 ] || fail "created with $prop"
		assert_one_line "$stderr"
		[[ "$stderr" == *"tenant \"default\": mounts: mounts["*"] (/v): shared propagation (\"$prop\") would carry the pod's mounts to the host"* ]] || fail "$stderr"
		[ ! -e "$STATE/$(cid "c-$prop")" ] || fail "state left"
		config_edit 'del(.mounts[-1])'
	done
	config_edit '.mounts += [{"destination": "/v", "type": "bind", "source": "vol", "options": ["rbind", "rslave"]}]'
	set_args true
	run -0 ward run -b "$BUNDLE" "$(cid ok)"
}

@test "rlimits: one the tenant has no cap for stays within the runtime's hard limit (RLIMIT_RTPRIO 99 would be real-time scheduling)" {
	local hard
	hard=$(ulimit -Hr)
	[ "$hard" != unlimited ] && [ "$hard" -lt 99 ] || skip "this runtime's own RLIMIT_RTPRIO hard limit is $hard"
	make_bundle b
	config_edit '.process.rlimits = [{"type": "RLIMIT_RTPRIO", "soft": 99, "hard": 99}]'
	set_cmd 'grep "Max realtime priority" /proc/self/limits'
	run --separate-stderr ward run -b "$BUNDLE" "$(cid rt)" </dev/null
	[ "$status" -eq 0 ] || fail "run: $stderr"
	[[ "$output" =~ ^Max\ realtime\ priority\ +$hard\ +$hard\  ]] || fail "limits inside: $output (runtime's hard: $hard)"
}
