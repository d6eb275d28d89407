#!/usr/bin/env bats
# A tenant's cgroup budget on a real kernel (run inside the VM by tests/vm/run-vm.sh): the
# budget in tenants.d/<name>.json "cgroup" is written to <v2>/ward/<tenant>, the tenant's pods
# live below it and share it, another tenant's pods do not, and the tenant's directory goes
# with its last container. Configuration format: ward-tenants(5) / docs of `ward --config`.

load vm-helpers

suite_setup() {
	skip_unless_vm
	CONF="$BATS_TEST_TMPDIR/conf"
	mkdir -p "$CONF/tenants.d"
	# The ID pool under the test's directory, not the guest's /var/lib/ward.
	jq -n --arg lib "$BATS_TEST_TMPDIR/lib" '{lib_dir: $lib}' >"$CONF/ward.json"
	echo '{"cgroup": {"memory": {"limit": 67108864}}}' >"$CONF/tenants.d/a.json"
	echo '{}' >"$CONF/tenants.d/b.json"
}

@test "vm tenant: the memory budget caps the tenant's pods together, not another tenant's" {
	# Two pods of tenant a, 40 MiB each: together they cannot have 80 MiB under the 64 MiB
	# budget. A pod of tenant b (no budget) allocates 100 MiB.
	local a1 a2 b1 cg_a1 cg_a2 cg_b1
	for spec in "a1 a 40" "a2 a 40" "b1 b 100"; do
		read -r name tenant mib <<<"$spec"
		make_bundle "$name" '.annotations["ward.dev/tenant"] = $t' --arg t "$tenant"
		add_cgprobe
		set_cmd "cgprobe memhog $mib; echo \"memhog exited \$?\"; exec sleep 1000"
		id=$(cid "$name")
		ward --config "$CONF" run -d -b "$BUNDLE" "$id" </dev/null >"$BATS_TEST_TMPDIR/$id.out" \
			2>"$BATS_TEST_TMPDIR/$id.err" || fail "ward --config run -d $id: $(cat "$BATS_TEST_TMPDIR/$id.err")"
		wait_status "$id" running
		printf -v "$name" %s "$id"
		printf -v "cg_$name" %s "$(container_cgroup "$id")"
		# one at a time: a1 holds its 40 MiB before a2 asks for its own
		[ "$name" != a1 ] || wait_output "$id" 'allocated 40|memhog exited'
	done
	# Each pod in its tenant's cgroup, the budget on the tenant's.
	assert_equal "$cg_a1" "$CG2/ward/a/$a1"
	assert_equal "$cg_a2" "$CG2/ward/a/$a2"
	assert_equal "$cg_b1" "$CG2/ward/b/$b1"
	assert_equal "$(cat "$CG2/ward/a/memory.max")" 67108864
	assert_equal "$(cat "$CG2/ward/b/memory.max")" max
	# b's pod got its 100 MiB.
	wait_output "$b1" 'allocated 100|memhog exited'
	run container_out "$b1"
	assert_output "allocated 100"
	# a's second pod pushed the tenant into its budget: the kernel OOM-killed a hog in a
	# (the larger one, whichever pod it is), so never both hold their 40 MiB.
	retry 300 0.1 keyed_above "$CG2/ward/a/memory.events" oom_kill 0 ||
		fail "no OOM kill in tenant a: memory.events $(cat "$CG2/ward/a/memory.events"); a1: $(container_out "$a1"); a2: $(container_out "$a2")"
	keyed_above "$CG2/ward/a/memory.events" max 0 || fail "memory.events: $(cat "$CG2/ward/a/memory.events")"
	wait_output "$a2" 'allocated 40|memhog exited'
	out_a="$(container_out "$a1") / $(container_out "$a2")"
	[[ "$out_a" == *"memhog exited 137"* ]] || fail "no hog of tenant a was killed: $out_a"
	[ "$(grep -c . "$cg_a1/cgroup.procs" "$cg_a2/cgroup.procs" | awk -F: '{ n += $2 } END { print n }')" -ge 2 ] ||
		fail "the pods' inits were killed, not a hog"
	[ "$(cat "$CG2/ward/a/memory.current")" -le 67108864 ]
	# b's memory is b's: no OOM kill there.
	assert_equal "$(keyed_value "$CG2/ward/b/memory.events" oom_kill)" 0

	# The tenant's directory stays while one of its containers does, and goes with the last.
	ward --config "$CONF" delete -f "$a1"
	assert_no_cgroup "$a1" "$cg_a1"
	[ -d "$CG2/ward/a" ] || fail "$CG2/ward/a removed while $a2 still runs"
	ward --config "$CONF" delete -f "$a2"
	assert_no_cgroup "$a2" "$cg_a2"
	[ ! -d "$CG2/ward/a" ] || fail "$CG2/ward/a left after its last container: $(find "$CG2/ward/a" -mindepth 1 -type d)"
	ward --config "$CONF" delete -f "$b1"
	[ ! -d "$CG2/ward/b" ] || fail "$CG2/ward/b left after its last container"
}
