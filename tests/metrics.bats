#!/usr/bin/env bats
# ward metrics on the host: running containers appear with their tenant and CRI labels, the
# figures agree with the cgroup files they come from (where the host has them: a hybrid
# host's v2 hierarchy has no controllers, and then the figure must be absent, not 0), and
# the output is valid Prometheus text exposition. Real controllers: tests/vm/metrics.bats.

WARD_CONFIG=
load helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	mkdir -p "$CONF/tenants.d"
	# pods of the unmapped namespace team-a may name their tenant
	printf '{"lib_dir": "%s", "tenant_choice": {"team-a": "*"}}\n' "$BATS_TEST_TMPDIR/lib" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
	# tenant names no other test run on this machine uses (cgroup dirs are global)
	TN="m$$-$BATS_TEST_NUMBER"
	printf '{}\n' >"$CONF/tenants.d/$TN.json"
}

# exposition_ok < TEXT: every line is # HELP, # TYPE (counter or gauge, once per name) or a
# sample of the family typed last: name{label="value",...} number, values escaped.
exposition_ok() {
	awk '
	function bad(why) { printf "line %d: %s: %s\n", NR, why, $0; err = 1; exit 1 }
	/^# HELP / { if ($3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) bad("HELP name"); next }
	/^# TYPE / {
		if (NF != 4 || $3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/ || $4 !~ /^(counter|gauge)$/) bad("TYPE")
		if ($3 in typed) bad("family typed twice")
		typed[$3] = 1; family = $3; next
	}
	/^#/ { next }
	{
		s = $0
		if (!match(s, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) bad("metric name")
		name = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1)
		if (name != family) bad("sample outside its family " family)
		if (substr(s, 1, 1) == "{") {
			lab = "^[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\\\\\"n])*\""
			s = substr(s, 2)
			while (substr(s, 1, 1) != "}") {
				if (!match(s, lab)) bad("label")
				s = substr(s, RLENGTH + 1)
				if (substr(s, 1, 1) == ",") s = substr(s, 2)
				else if (substr(s, 1, 1) != "}") bad("label separator")
			}
			s = substr(s, 2)
		}
		if (s !~ /^ (-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[+-]Inf)$/) bad("value")
		samples++
	}
	END { if (!err && !samples) { print "no samples"; exit 1 } }'
}

# value NAME LABELS: the value of the sample NAME{LABELS} in $output ("" if none).
value() {
	awk -v want="$1{$2}" 'index($0, want " ") == 1 { print $NF }' <<<"$output"
}

usage_usec() {
	awk '$1 == "usage_usec" { print $2 }' "$1/cpu.stat"
}

@test "metrics: a running container appears with tenant, namespace, pod and container labels; figures agree with its cgroup" {
	make_bundle b '.annotations["ward.dev/tenant"] = $tn
		| .annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"
		| .annotations["io.kubernetes.cri.sandbox-name"] = "web-0"
		| .annotations["io.kubernetes.cri.container-name"] = "nginx"' --arg tn "$TN"
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	cg="$CG2/ward/$TN/$id"
	[ -d "$cg" ] || fail "no cgroup $cg"
	before=$(usage_usec "$cg")
	run ward metrics
	after=$(usage_usec "$cg")
	assert_success
	exposition_ok <<<"$output" || fail "not valid exposition: $(exposition_ok <<<"$output")"
	L="scope=\"container\",tenant=\"$TN\",namespace=\"team-a\",pod=\"web-0\",container=\"nginx\",id=\"$id\""
	assert_equal "$(value ward_container_info "$L,status=\"running\"")" 1
	assert_equal "$(value ward_cgroup_found "$L")" 1
	assert_equal "$(value ward_cgroup_found "scope=\"tenant\",tenant=\"$TN\"")" 1
	# cpu.stat usage is core cgroup v2: always there; ward read it between our two reads
	cpu=$(value ward_cpu_seconds_total "$L")
	[ -n "$cpu" ] || fail "no ward_cpu_seconds_total{$L}"
	awk -v c="$cpu" -v b="$before" -v a="$after" 'BEGIN { exit !(c * 1e6 >= b - 0.5 && c * 1e6 <= a + 0.5) }' ||
		fail "cpu seconds $cpu not within cpu.stat usage_usec $before..$after"
	# pids: the figure is pids.current when the host has it, else absent and said so
	if [ -e "$cg/pids.current" ]; then
		assert_equal "$(value ward_pids_current "$L")" "$(cat "$cg/pids.current")"
	else
		assert_equal "$(value ward_pids_current "$L")" ""
		assert_equal "$(value ward_cgroup_controller_missing "$L,controller=\"pids\"")" 1
	fi
	if [ -e "$cg/memory.current" ]; then
		[ -n "$(value ward_memory_current_bytes "$L")" ] || fail "no memory figure"
	else
		assert_equal "$(value ward_memory_current_bytes "$L")" ""
		assert_equal "$(value ward_oom_kills_total "$L")" ""
		assert_equal "$(value ward_cgroup_controller_missing "$L,controller=\"memory\"")" 1
	fi
	# the tenant's GPU count is there even without GPUs: a real 0
	assert_equal "$(value ward_tenant_gpus_leased "tenant=\"$TN\"")" 0
	ward delete -f "$id"
	run ward metrics
	assert_success
	[[ "$output" != *"id=\"$id\""* ]] || fail "deleted container still reported"
}

@test "metrics --tenant: only that tenant's containers; no CRI annotations: container is the id" {
	other="${TN}o"
	printf '{}\n' >"$CONF/tenants.d/$other.json"
	make_bundle a '.annotations["ward.dev/tenant"] = $tn' --arg tn "$TN"
	set_args sleep 1000
	mine=$(cid mine)
	start_container "$mine"
	make_bundle b '.annotations["ward.dev/tenant"] = $tn' --arg tn "$other"
	set_args sleep 1000
	theirs=$(cid theirs)
	start_container "$theirs"
	run ward metrics --tenant "$TN"
	assert_success
	exposition_ok <<<"$output" || fail "not valid exposition: $(exposition_ok <<<"$output")"
	L="scope=\"container\",tenant=\"$TN\",namespace=\"\",pod=\"\",container=\"$mine\",id=\"$mine\""
	assert_equal "$(value ward_container_info "$L,status=\"running\"")" 1
	[[ "$output" != *"$theirs"* ]] || fail "another tenant's container in --tenant output"
	[[ "$output" != *"tenant=\"$other\""* ]] || fail "another tenant in --tenant output"
	run ward metrics
	assert_success
	[[ "$output" == *"id=\"$theirs\""* ]] || fail "without --tenant, every tenant's containers"
	run ward metrics --tenant ../x
	assert_failure
	run ward metrics extra
	assert_failure
}
