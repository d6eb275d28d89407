#!/usr/bin/env bats
# Every field of config.json has a policy decision (runtime/lib/policy_fields.c,
# docs/policy.md): for a non-trusted tenant, a field ward's policy does not know is refused
# with its path (default deny, never passed through), and so are the fields it refuses or
# bounds itself. Each refusal is one line naming the tenant, the rule and the field, and
# leaves nothing behind. A trusted tenant's pod runs as its spec says. Own configuration
# directory and ID pool, as tests/tenancy.bats.
#
# Run alone: bats tests/security/fields.bats (or make test-integration T=fields).

export WARD_CONFIG=
: "${WARD:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/ward}"
: "${WARD_TEST_BIN:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/tests}"
load ../helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
	# a tenant name no other test run on this machine uses (cgroup dirs are global)
	TN="f$$-$BATS_TEST_NUMBER"
}

tenant() {
	printf '%s\n' "$2" >"$CONF/tenants.d/$1.json"
}

# refused FILTER WANT...: a pod of tenant $TN edited by FILTER is refused by create with one
# line that names the tenant and holds every WANT; nothing is left behind.
refused() {
	local filter=$1 w id
	shift
	make_bundle "b$RANDOM" ".annotations[\"ward.dev/tenant\"] = \"$TN\" | $filter"
	id=$(cid c)
	ward_capture create -b "$BUNDLE" "$id"
	[ "$status" != 0 ] || {
		ward delete -f "$id" >/dev/null 2>&1
		fail "not refused: $filter"
	}
	assert_one_line "$stderr"
	[[ "$stderr" == *"tenant \"$TN\": "* ]] || fail "for $filter: $stderr"
	for w in "$@"; do
		[[ "$stderr" == *"$w"* ]] || fail "for $filter: want \"$w\", got: $stderr"
	done
	assert_nothing_left "$id"
	[ ! -d "$CG2/ward/$TN" ] || fail "tenant cgroup left after: $filter"
}

@test "fields: a field the policy has no decision for is refused with its path, nothing left" {
	tenant "$TN" '{}'
	local none="ward's policy has no decision for this field (refused for non-trusted tenants)"
	refused '.linux.fooBar = {"x": 1}' "fields: linux.fooBar: $none"
	refused '.process.fooBar = true' "fields: process.fooBar: $none"
	refused '.mounts[2].fooBar = "x"' "fields: mounts[2].fooBar: $none"
	refused '.linux.resources.memory.fooBar = 1' "fields: linux.resources.memory.fooBar: $none"
	refused '.hooks.preStart = [{"path": "/bin/true"}]' "fields: hooks.preStart: $none"
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "fields: refused and bounded fields of the policy table are refused with the rule" {
	tenant "$TN" '{}'
	refused '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 1}' \
		"scheduler: process.scheduler.policy: real-time policies"
	refused '.process.ioPriority = {"class": "IOPRIO_CLASS_RT", "priority": 0}' \
		"ioPriority: process.ioPriority.class"
	refused '.process.oomScoreAdj = -1000' "oomScoreAdj: process.oomScoreAdj: below -998"
	refused '.linux.rootfsPropagation = "rshared"' "rootfsPropagation: linux.rootfsPropagation"
	refused '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/run/x.sock"}' \
		"seccomp: linux.seccomp.listenerPath"
	refused '.annotations["ward.dev/exit-status"] = "0"' \
		"annotations: annotations.ward.dev/exit-status"
	refused '.linux.resources.unified = {"cgroup.procs": "1"}' \
		"cgroup: linux.resources.unified.cgroup.procs"
	refused '.linux.resources.memory.disableOOMKiller = true' \
		"cgroup: linux.resources.memory.disableOOMKiller"
	refused '.solaris = {"milestone": "x"}' "fields: solaris:"
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "fields: policy explain names the refused field too" {
	tenant "$TN" '{}'
	make_bundle b '.annotations["ward.dev/tenant"] = "'"$TN"'" | .linux.fooBar = 1'
	run --separate-stderr ward policy explain "$BUNDLE"
	[ "$status" != 0 ] || fail "explain accepted it: $output"
	[[ "$stderr" == *"tenant \"$TN\": fields: linux.fooBar: ward's policy has no decision"* ]] ||
		fail "$stderr"
}

@test "fields: a trusted tenant's pod runs as its spec says (no field check)" {
	tenant "$TN" '{"trusted": true}'
	make_bundle b '.annotations["ward.dev/tenant"] = "'"$TN"'" | .linux.fooBar = 1
		| .process.scheduler = {"policy": "SCHED_BATCH"}'
	run_container
	[ "$status" = 0 ] || fail "status $status: $stderr"
	assert_nothing_left "$ID"
}

@test "fields: exec --process into a non-trusted tenant's container gets the same decisions" {
	tenant "$TN" '{}'
	make_bundle b '.annotations["ward.dev/tenant"] = "'"$TN"'"'
	set_args sleep 1000
	id=$(cid ex)
	ward_capture run -d -b "$BUNDLE" "$id"
	assert_success
	local p="$BATS_TEST_TMPDIR/p.json" c want
	local cases=(
		'{"args":["true"],"cwd":"/","fooBar":1} => tenant "'"$TN"'": fields: process.fooBar: ward'"'"'s policy has no decision for this field'
		'{"args":["true"],"cwd":"/","scheduler":{"policy":"SCHED_FIFO","priority":1}} => tenant "'"$TN"'": scheduler: process.scheduler.policy'
		'{"args":["true"],"cwd":"/","oomScoreAdj":-1000} => tenant "'"$TN"'": oomScoreAdj: process.oomScoreAdj'
	)
	for c in "${cases[@]}"; do
		printf '%s' "${c%% => *}" >"$p"
		want=${c#* => }
		ward_capture exec --process "$p" "$id"
		[ "$status" != 0 ] || fail "not refused: ${c%% => *}"
		[[ "$stderr" == *"$want"* ]] || fail "want \"$want\", got: $stderr"
	done
	printf '%s' '{"args":["true"],"cwd":"/","oomScoreAdj":500,"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]}' >"$p"
	ward_capture exec --process "$p" "$id"
	[ "$status" = 0 ] || fail "a plain exec process was refused: $stderr"
	[ "$(ward state "$id" | jq -r .status)" = running ]
}
