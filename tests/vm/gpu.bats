#!/usr/bin/env bats
# GPU injection on a real cgroup v2 kernel (run inside the VM by tests/vm/run-vm.sh), on the
# fake GPU host of tests/gpu.bats (mknod'd nodes on the ext4 scratch disk, fixture /proc
# tree, stub libcuda): the container's device program, attached to its own cgroup2 cgroup
# with every controller enabled, lets the tenant's GPU nodes open (ENXIO: no driver) and
# refuses another GPU's node smuggled in (EPERM); the wipe leaves the memory zero.

load vm-helpers
load ../gpu/fixture

suite_setup() {
	skip_unless_vm
	gpu_fixture
}

teardown() {
	ward_teardown
	local rc=$?
	gpu_fixture_teardown
	return $rc
}

@test "vm gpu: only the tenant's nodes open; another GPU's node smuggled in is refused; memory wiped at delete" {
	gpu_bundle b "$TA" "$(visible all)"
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	# its cgroup is in the real v2 hierarchy, with a device program attached
	[ -d "$CG2/ward/$TA/$id" ] || fail "no cgroup $CG2/ward/$TA/$id"
	"$WARD_TEST_BIN/bind-into" "$pid" "$GPUDEV/nvidia1" /dev/stolen
	plant "$GPU0" "tenant-a-secret"
	run ward exec "$id" sh -c 'ls /dev | grep nvidia | sort | tr "\n" " "; echo
		for n in /dev/nvidia0 /dev/nvidia2 /dev/nvidiactl /dev/nvidia-uvm /dev/stolen; do
			cat $n 2>&1 | head -1; done'
	assert_success
	assert_line --index 0 "nvidia-uvm nvidia-uvm-tools nvidia0 nvidia2 nvidiactl "
	assert_line --index 1 --partial 'No such device or address'
	assert_line --index 2 --partial 'No such device or address'
	assert_line --index 3 --partial 'No such device or address'
	assert_line --index 4 --partial 'No such device or address'
	assert_line --index 5 --partial 'Operation not permitted'
	ward delete -f "$id"
	all_zero "$(mem_file "$GPU0")" || fail "GPU 0 memory not wiped"
	[ "$(ledger_state "$GPU0")" = free ]
}
