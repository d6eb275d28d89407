#!/usr/bin/env bats
# cgroup v2 limits take effect on a real kernel (run inside the VM by tests/vm/run-vm.sh,
# -smp 2, bundles on the ext4 scratch disk): a fork bomb meets pids.max, a busy loop meets
# cpu.max on the one CPU of its cpuset, direct reads of the scratch disk meet io.max, huge
# page mappings meet hugetlb.2MB.max. Each test starts one container and checks everything
# about it at once (every fork+exec costs about 0.1 s under TCG).

load vm-helpers

suite_setup() {
	skip_unless_vm
}

@test "vm cgroup: a pids limit stops a fork bomb and the guest stays responsive" {
	make_bundle b '.linux.resources = {"pids": {"limit": 24}}'
	# The classic bomb, in the background of the container's init, which then waits.
	set_cmd 'echo bombing; bomb() { bomb | bomb & }; bomb; exec sleep 1000'
	id=$(cid p)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	assert_equal "$(cat "$cg/pids.max")" 24
	# The kernel refuses forks beyond the limit: pids.events counts them.
	retry 200 0.1 keyed_above "$cg/pids.events" max 0 ||
		fail "pids.events: $(cat "$cg/pids.events"), pids.current $(cat "$cg/pids.current")"
	sleep 1 # the bomb keeps trying
	[ "$(cat "$cg/pids.current")" -le 24 ] || fail "pids.current $(cat "$cg/pids.current") above 24"
	assert_equal "$(status_of "$id")" running
	# The guest is still responsive: a new guest process starts and ends at once, and so do
	# the runtime's own commands.
	local t0 t1
	t0=$EPOCHREALTIME
	run timeout 20 sh -c 'echo alive; grep -c . /proc/loadavg'
	t1=$EPOCHREALTIME
	assert_success
	assert_line --index 0 alive
	(( ${t1/./} - ${t0/./} < 5000000 )) || fail "a guest command took $(( (${t1/./} - ${t0/./}) / 1000 )) ms while the bomb ran"
	run ward events --stats "$id"
	assert_success
	jq -e '.data.pids.limit == 24 and .data.pids.current <= 24' <<<"$output" >/dev/null ||
		fail "events --stats: $output"
	assert_equal "$(head -n1 "$BATS_TEST_TMPDIR/$id.out")" bombing
	# delete --force ends the bomb, however fast it forks, and its cgroup.
	ward delete -f "$id"
	assert_no_cgroup "$id" "$cg"
	assert_nothing_left "$id"
}

@test "vm cgroup: cpu.max throttles a busy loop pinned by cpu.cpus to CPU 1" {
	[ "$(nproc --all)" -ge 2 ] || fail "the VM has $(nproc --all) CPU(s); run-vm.sh starts it with -smp 2"
	make_bundle b '.linux.resources = {"cpu": {"quota": 10000, "period": 100000, "cpus": "1"}}'
	set_cmd 'grep Cpus_allowed_list /proc/self/status; while :; do :; done'
	id=$(cid c)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	pid=$(init_pid "$id")
	assert_equal "$(cat "$cg/cpu.max")" "10000 100000"
	assert_equal "$(cat "$cg/cpuset.cpus")" 1
	# Inside, the process may run on CPU 1 only ...
	wait_output "$id" Cpus_allowed_list
	run container_out "$id"
	assert_line --regexp $'^Cpus_allowed_list:\t1$'
	# ... and it does: the kernel scheduled it there.
	run grep Cpus_allowed_list "/proc/$pid/status"
	assert_output --regexp $'Cpus_allowed_list:\t1$'
	# The loop is throttled: periods in which it hit the quota, and about 10% of a CPU over
	# two seconds (unthrottled it takes the whole CPU).
	local u0 u1 t0 t1 pct
	u0=$(keyed_value "$cg/cpu.stat" usage_usec) t0=$EPOCHREALTIME
	sleep 2
	u1=$(keyed_value "$cg/cpu.stat" usage_usec) t1=$EPOCHREALTIME
	pct=$(( (u1 - u0) * 100 / (${t1/./} - ${t0/./}) ))
	[ "$pct" -le 30 ] || fail "the loop used ${pct}% of a CPU under a 10% quota"
	keyed_above "$cg/cpu.stat" nr_throttled 0 || fail "cpu.stat: $(cat "$cg/cpu.stat")"
	awk '{ exit !($39 == 1) }' "/proc/$pid/stat" || fail "init ran last on CPU $(awk '{ print $39 }' "/proc/$pid/stat")"
	run ward events --stats "$id"
	assert_success
	jq -e '.data.cpu.throttling.throttledPeriods > 0' <<<"$output" >/dev/null || fail "events --stats: $output"
	ward delete -f "$id"
	assert_no_cgroup "$id" "$cg"
}

@test "vm cgroup: io.max throttles direct reads of the scratch disk; io.weight from blockIO.weight" {
	devno=$(scratch_devno)
	make_bundle b '.linux.resources.blockIO = {"weight": 500,
		"throttleReadBpsDevice": [{"major": $maj, "minor": $min, "rate": 1048576}]}' \
		--argjson maj "${devno%:*}" --argjson min "${devno#*:}"
	# 3 MiB in the rootfs, on the scratch disk; read back with O_DIRECT: every byte from the
	# disk, at the 1 MiB/s the cgroup allows.
	dd if=/dev/zero of="$BUNDLE/rootfs/data" bs=1M count=3 status=none
	sync "$BUNDLE/rootfs/data"
	# sh -c SCRIPT DEVNO: $0 is the device
	set_args sh -c 'cat /sys/fs/cgroup/io.max /sys/fs/cgroup/io.weight
		a=$(cut -d" " -f1 /proc/uptime)
		dd if=/data of=/dev/null bs=256k iflag=direct 2>/dev/null || echo "dd failed"
		b=$(cut -d" " -f1 /proc/uptime)
		echo "elapsed $(awk -v a=$a -v b=$b "BEGIN { print b - a }")"
		grep "^$0 " /sys/fs/cgroup/io.stat' "$devno"
	run_container
	assert_success
	assert_line "$devno rbps=1048576 wbps=max riops=max wiops=max"
	# blkio weight 500 -> io.weight 1 + (500 - 10) * 9999 / 990 (runc's conversion)
	assert_line "default $((1 + (500 - 10) * 9999 / 990))"
	refute_line "dd failed"
	elapsed=$(sed -n 's/^elapsed //p' <<<"$output")
	# 3 MiB at 1 MiB/s: about 3 s (unthrottled: well under a second, even under TCG)
	awk -v e="$elapsed" 'BEGIN { exit !(e >= 2.0) }' || fail "3 MiB read in ${elapsed}s despite rbps=1048576"
	rbytes=$(grep "^$devno " <<<"$output" | tr ' ' '\n' | sed -n 's/^rbytes=//p')
	[ "${rbytes:-0}" -ge 3145728 ] || fail "io.stat rbytes ${rbytes:-none}: the reads did not reach the disk"
	assert_nothing_left "$ID"
}

@test "vm cgroup: hugetlb.2MB.max allows one 2 MiB huge page and refuses two" {
	local old
	old=$(cat /proc/sys/vm/nr_hugepages)
	on_teardown "echo $old >/proc/sys/vm/nr_hugepages"
	echo 4 >/proc/sys/vm/nr_hugepages
	[ "$(awk '$1 == "HugePages_Free:" { print $2 }' /proc/meminfo)" -ge 2 ] ||
		fail "cannot reserve huge pages: $(grep Huge /proc/meminfo)"
	# Without a limit, two pages map (the guest has them).
	run "$WARD_TEST_BIN/cgprobe" hugetlb 2
	assert_success
	assert_output "mapped 2"
	make_bundle b '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 2097152}]'
	add_cgprobe
	set_cmd 'cat /sys/fs/cgroup/hugetlb.2MB.max; cgprobe hugetlb 1; echo "rc=$?"; cgprobe hugetlb 2; echo "rc=$?"'
	run_container
	assert_success
	assert_line --index 0 2097152
	assert_line --index 1 "mapped 1"
	assert_line --index 2 rc=0
	# refused at mmap (the reservation limit) or at the fault of the second page
	assert_line --index 3 --regexp '^(mmap: Cannot allocate memory|SIGBUS at page 1)$'
	assert_line --index 4 --regexp '^rc=[12]$'
	assert_nothing_left "$ID"
}
