#!/usr/bin/env bats
# Choosing a tenant (security issue 5): a pod whose annotations reach config.json must not
# pick a more trusted tenant than its Kubernetes namespace gives it.
#   - a namespace mapped in ward.json "namespaces" gives its tenant, full stop;
#   - the namespace annotations must agree, and an empty one is an error, not "default";
#   - an unmapped namespace chooses by annotation only from its ward.json tenant_choice set;
#   - a bare bundle (no namespace annotation: ward run, ctr run) still chooses, unless
#     tenant_choice "" restricts it.
# Each test has its own configuration directory and ID pool.

WARD_CONFIG=
load ../helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	export WARD_CONFIG=$CONF
	# tenant names no other test run on this machine uses (cgroup dirs are global)
	A="a$$-$BATS_TEST_NUMBER"
	INFRA="infra$$-$BATS_TEST_NUMBER"
	printf '{}\n' >"$CONF/tenants.d/$A.json"
	printf '{"trusted": true}\n' >"$CONF/tenants.d/$INFRA.json"
	global '{}'
}

# global JSON: ward.json = JSON + our lib_dir, with $A and $INFRA substituted for "A", "INFRA"
global() {
	jq --arg lib "$LIB" --arg a "$A" --arg i "$INFRA" \
		'walk(if . == "A" then $a elif . == "INFRA" then $i else . end)
		| with_entries(.key |= (if . == "A" then $a elif . == "INFRA" then $i else . end))
		| . + {lib_dir: $lib}' <<<"$1" >"$CONF/ward.json"
}

# pod NAME JQ: a bundle whose annotations JQ sets ($a, $i: the tenants' names)
pod() {
	make_bundle "$1" "$2" --arg a "$A" --arg i "$INFRA"
}

# tenant_of: the tenant `ward policy explain` chooses for $BUNDLE (fails the test if refused)
tenant_of() {
	run --separate-stderr ward policy explain --json "$BUNDLE"
	[ "$status" -eq 0 ] || fail "explain refused: $stderr"
	jq -r .tenant <<<"$output"
}

# refused TEXT: `ward run` of $BUNDLE fails with one line containing TEXT, leaving nothing
refused() {
	run_container
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *"$1"* ]] || fail "expected '$1' in: $stderr"
	assert_nothing_left "$ID"
	[ -z "$(pool_allocs)" ] || fail "ID pool: $(pool_allocs)"
}

@test "a pod of a mapped namespace cannot name another tenant, not even a trusted one" {
	global '{"namespaces": {"team-a": "A"}}'
	pod b '.annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["ward.dev/tenant"] = $i'
	refused "annotation ward.dev/tenant=$INFRA: pods of namespace team-a belong to tenant $A (ward.json namespaces)"
	run --separate-stderr ward policy explain --json "$BUNDLE"
	assert_failure
	# naming its own tenant is fine
	pod c '.annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["ward.dev/tenant"] = $a'
	[ "$(tenant_of)" = "$A" ]
	# io.kubernetes.pod.namespace is a namespace annotation too
	pod d '.annotations["io.kubernetes.pod.namespace"] = "team-a" | .annotations["ward.dev/tenant"] = $i'
	refused "pods of namespace team-a belong to tenant $A"
}

@test "conflicting or empty namespace annotations are refused, not mapped or defaulted" {
	global '{"namespaces": {"team-a": "A"}}'
	pod b '.annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["io.kubernetes.pod.namespace"] = "other"'
	refused "annotations io.kubernetes.cri.sandbox-namespace=team-a and io.kubernetes.pod.namespace=other disagree"
	pod c '.annotations["io.kubernetes.cri.sandbox-namespace"] = ""
		| .annotations["ward.dev/tenant"] = $i'
	refused "annotation io.kubernetes.cri.sandbox-namespace: the Kubernetes namespace is empty"
	# both present and equal: fine
	pod d '.annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["io.kubernetes.pod.namespace"] = "team-a"'
	[ "$(tenant_of)" = "$A" ]
}

@test "tenant_choice: an unmapped namespace chooses only from its set; without an entry it cannot choose" {
	global '{"tenant_choice": {"lab": ["A"]}}'
	pod b '.annotations["io.kubernetes.cri.sandbox-namespace"] = "lab" | .annotations["ward.dev/tenant"] = $a'
	[ "$(tenant_of)" = "$A" ]
	[[ "$(ward policy explain --json "$BUNDLE" | jq -r .why)" == *"tenant_choice \"lab\""* ]] ||
		fail "why: $(ward policy explain --json "$BUNDLE")"
	pod c '.annotations["io.kubernetes.cri.sandbox-namespace"] = "lab" | .annotations["ward.dev/tenant"] = $i'
	refused "annotation ward.dev/tenant=$INFRA: pods of namespace lab may choose only $A (ward.json tenant_choice \"lab\")"
	pod d '.annotations["io.kubernetes.cri.sandbox-namespace"] = "other" | .annotations["ward.dev/tenant"] = $a'
	refused "pods of namespace other may not choose a tenant"
	# without the annotation: the default tenant
	pod e '.annotations["io.kubernetes.cri.sandbox-namespace"] = "other"'
	[ "$(tenant_of)" = default ]
	# "*": every unmapped namespace without its own entry
	global '{"tenant_choice": {"lab": ["A"], "*": ["INFRA"]}}'
	pod f '.annotations["io.kubernetes.cri.sandbox-namespace"] = "other" | .annotations["ward.dev/tenant"] = $i'
	[ "$(tenant_of)" = "$INFRA" ]
	pod g '.annotations["io.kubernetes.cri.sandbox-namespace"] = "lab" | .annotations["ward.dev/tenant"] = $i'
	refused "pods of namespace lab may choose only $A"
	# a set for a mapped namespace makes no sense: the configuration is refused
	global '{"namespaces": {"lab": "A"}, "tenant_choice": {"lab": ["A"]}}'
	refused 'tenant_choice: namespace "lab" is mapped to tenant'
}

@test "a bare bundle (no namespace annotation) still chooses its tenant; tenant_choice \"\" restricts it" {
	pod b '.annotations["ward.dev/tenant"] = $a'
	set_args sh -c 'cat /proc/self/uid_map'
	run_container
	assert_success
	[ "$(awk '{print $2}' <<<"$output")" -ge 524288 ] || fail "uid_map: $output"
	pod c '.annotations["ward.dev/tenant"] = $i'
	[ "$(tenant_of)" = "$INFRA" ]
	global '{"tenant_choice": {"": ["A"]}}'
	pod d '.annotations["ward.dev/tenant"] = $a'
	[ "$(tenant_of)" = "$A" ]
	pod e '.annotations["ward.dev/tenant"] = $i'
	refused "annotation ward.dev/tenant=$INFRA: a pod without a namespace annotation may choose only $A"
}
