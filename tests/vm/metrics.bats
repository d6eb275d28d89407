#!/usr/bin/env bats
# ward metrics on a real kernel with every controller (run inside the VM by
# tests/vm/run-vm.sh): after a workload that burns CPU and allocates memory, each figure
# agrees with the cgroup file it comes from, read just before and just after `ward metrics`
# (the workload is idle by then, so the files stand still); an OOM kill is counted.

load vm-helpers

suite_setup() {
	skip_unless_vm
}

# value NAME LABELS: the value of the sample NAME{LABELS} in $output ("" if none).
value() {
	awk -v want="$1{$2}" 'index($0, want " ") == 1 { print $NF }' <<<"$output"
}

# snapshot CG: the figures ward reads, from the files themselves, one per line
snapshot() {
	awk '$1 == "usage_usec" || $1 == "throttled_usec" || $1 == "nr_throttled" { print $1, $2 }' "$1/cpu.stat"
	echo "memory.current $(cat "$1/memory.current")"
	echo "memory.peak $(cat "$1/memory.peak")"
	echo "oom_kill $(keyed_value "$1/memory.events" oom_kill)"
	echo "pids.current $(cat "$1/pids.current")"
	awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] } }
		END { printf "rbytes %d\nwbytes %d\n", s["rbytes"], s["wbytes"] }' "$1/io.stat"
}

# near NAME LABELS FILE_VALUE_BEFORE FILE_VALUE_AFTER SCALE: the sample, times SCALE, lies
# between the two readings of the file (tolerance: half a unit of the file's figure).
near() {
	local v
	v=$(value "$1" "$2")
	[ -n "$v" ] || fail "no $1{$2} in: $output"
	awk -v v="$v" -v b="$3" -v a="$4" -v s="$5" 'BEGIN { x = v * s; exit !(x >= b - 0.5 && x <= a + 0.5) }' ||
		fail "$1{$2} = $v, the cgroup file read $3 before and $4 after"
}

fig() { awk -v k="$2" '$1 == k { print $2 }' <<<"$1"; }

@test "vm metrics: CPU, memory, pids and IO figures agree with the cgroup files after a workload" {
	make_bundle b '.annotations["io.kubernetes.cri.sandbox-namespace"] = "ns1"
		| .annotations["io.kubernetes.cri.sandbox-name"] = "pod1"
		| .annotations["io.kubernetes.cri.container-name"] = "burner"
		| .linux.resources = {"cpu": {"quota": 400000, "period": 100000},
			"memory": {"limit": 268435456}, "pids": {"limit": 128}, "blockIO": {"weight": 500}}'
	add_cgprobe
	# (ward enables a controller for a container whose limits need it: a limit of each kind)
	# ~2 s of busy loop, then 32 MiB allocated and held while the shell sleeps
	set_cmd "timeout 2 sh -c 'while :; do :; done'; echo burned; cgprobe memhog 32"
	id=$(cid m)
	run_detached "$id"
	wait_output "$id" "allocated 32" 60
	cg=$(container_cgroup "$id")
	tcg="$CG2/ward/default"
	sleep 0.5 # let the page cache and kernel stacks settle
	before=$(snapshot "$cg")
	tbefore=$(snapshot "$tcg")
	run ward metrics
	after=$(snapshot "$cg")
	tafter=$(snapshot "$tcg")
	assert_success
	L="scope=\"container\",tenant=\"default\",namespace=\"ns1\",pod=\"pod1\",container=\"burner\",id=\"$id\""
	T="scope=\"tenant\",tenant=\"default\""
	# the burn really used CPU: at least 1 s of the 2
	[ "$(fig "$before" usage_usec)" -gt 1000000 ] || fail "cpu.stat: $before"
	near ward_cpu_seconds_total "$L" "$(fig "$before" usage_usec)" "$(fig "$after" usage_usec)" 1e6
	near ward_cpu_throttled_seconds_total "$L" "$(fig "$before" throttled_usec)" "$(fig "$after" throttled_usec)" 1e6
	near ward_cpu_throttled_periods_total "$L" "$(fig "$before" nr_throttled)" "$(fig "$after" nr_throttled)" 1
	[ "$(fig "$before" memory.current)" -gt 33554432 ] || fail "memory.current below 32 MiB: $before"
	near ward_memory_current_bytes "$L" "$(fig "$before" memory.current)" "$(fig "$after" memory.current)" 1
	near ward_memory_peak_bytes "$L" "$(fig "$before" memory.peak)" "$(fig "$after" memory.peak)" 1
	assert_equal "$(value ward_oom_kills_total "$L")" 0
	near ward_pids_current "$L" "$(fig "$before" pids.current)" "$(fig "$after" pids.current)" 1
	near ward_io_read_bytes_total "$L" "$(fig "$before" rbytes)" "$(fig "$after" rbytes)" 1
	near ward_io_write_bytes_total "$L" "$(fig "$before" wbytes)" "$(fig "$after" wbytes)" 1
	# the tenant's cgroup holds the container: its own figures, at least the container's
	near ward_cpu_seconds_total "$T" "$(fig "$tbefore" usage_usec)" "$(fig "$tafter" usage_usec)" 1e6
	near ward_memory_current_bytes "$T" "$(fig "$tbefore" memory.current)" "$(fig "$tafter" memory.current)" 1
	# every controller is there: nothing reported missing
	[[ "$output" != *ward_cgroup_controller_missing* ]] || fail "$(grep controller_missing <<<"$output")"
	ward delete -f "$id"
}

@test "vm metrics: an OOM kill is counted as in memory.events" {
	make_bundle b '.linux.resources = {"memory": {"limit": 16777216, "swap": 16777216}}'
	add_cgprobe
	set_args sleep 1000
	id=$(cid o)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	run ward metrics
	L="scope=\"container\",tenant=\"default\",namespace=\"\",pod=\"\",container=\"$id\",id=\"$id\""
	assert_equal "$(value ward_oom_kills_total "$L")" 0
	run ward exec "$id" sh -c 'cgprobe memhog 64; echo "status $?"'
	assert_line "status 137"
	keyed_above "$cg/memory.events" oom_kill 0 || fail "memory.events: $(cat "$cg/memory.events")"
	run ward metrics
	assert_success
	assert_equal "$(value ward_oom_kills_total "$L")" "$(keyed_value "$cg/memory.events" oom_kill)"
	ward delete -f "$id"
}
