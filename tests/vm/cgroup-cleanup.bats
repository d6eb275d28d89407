#!/usr/bin/env bats
# No cgroup directory outlives its container on a real kernel with every controller (run
# inside the VM by tests/vm/run-vm.sh): after delete of a stopped container, delete --force
# of a running one with children or with a sub-cgroup of its own, and a create that fails
# after the cgroup was made.

load vm-helpers

suite_setup() {
	skip_unless_vm
}

@test "vm cgroup cleanup: none left after delete, delete --force, or a failed create" {
	make_bundle b '.linux.resources = {"pids": {"limit": 16}, "memory": {"limit": 67108864}}'

	# A container that ran to completion keeps its cgroup until delete.
	set_args true
	stopped=$(cid stopped)
	create_container "$stopped"
	cg_stopped=$(container_cgroup "$stopped")
	[ -d "$cg_stopped" ] || fail "no cgroup $cg_stopped after create"
	ward start "$stopped"
	wait_status "$stopped" stopped
	ward delete "$stopped"
	assert_no_cgroup "$stopped" "$cg_stopped"

	# A running container with children: delete --force kills them all, then the cgroup goes.
	set_cmd 'sleep 1000 & sleep 1000 & exec sleep 1000'
	running=$(cid running)
	run_detached "$running"
	wait_status "$running" running
	cg_running=$(container_cgroup "$running")
	retry 50 0.1 test "$(cat "$cg_running/pids.current")" -eq 3 ||
		fail "expected 3 processes in $cg_running: $(cat "$cg_running/cgroup.procs")"
	ward delete --force "$running"
	assert_no_cgroup "$running" "$cg_running"

	# Failed creates: the kernel refuses a limit (the guest has CPUs 0 and 1, not 7) after the
	# cgroup was made; the kernel refuses a mount (tmpfs size=bogus) in the init, after it
	# joined the cgroup.
	config_edit '.linux.resources.cpu = {"cpus": "7"} | .process.args = ["true"]'
	badcpu=$(cid badcpu)
	ward_capture create -b "$BUNDLE" "$badcpu"
	[ "$status" -ne 0 ] || fail "create with cpu.cpus 7 succeeded on a 2-CPU guest"
	[[ "$stderr" == *cpus* ]] || fail "the error does not name the cpus: $stderr"
	assert_no_cgroup "$badcpu"
	[ ! -e "$STATE/$badcpu" ] || fail "state left after a failed create"

	config_edit 'del(.linux.resources.cpu) | .mounts += [{"destination": "/mnt", "type": "tmpfs",
		"source": "tmpfs", "options": ["nosuid", "size=bogus"]}]'
	badmount=$(cid badmount)
	ward_capture create -b "$BUNDLE" "$badmount"
	[ "$status" -ne 0 ] || fail "create with a tmpfs size=bogus succeeded"
	[[ "$stderr" == */mnt* ]] || fail "the error does not name the mount: $stderr"
	assert_no_cgroup "$badmount"
	[ ! -e "$STATE/$badmount" ] || fail "state left after a failed create"
	assert_nothing_left "$running"
}

@test "vm cgroup cleanup: delete --force removes a sub-cgroup the workload made in its own" {
	make_bundle b
	set_cmd 'sleep 1000 & exec sleep 1000'
	id=$(cid nested)
	run_detached "$id"
	wait_status "$id" running
	cg=$(container_cgroup "$id")
	retry 50 0.1 test "$(grep -c . "$cg/cgroup.procs")" -eq 2 || fail "processes: $(cat "$cg/cgroup.procs")"
	# What a delegated workload (systemd, a nested runtime) does: a child cgroup with one of
	# its processes in it.
	child=$(grep -vx "$(init_pid "$id")" "$cg/cgroup.procs")
	mkdir "$cg/sub"
	# should delete fail, the next tests still start clean
	on_teardown "kill -9 \$(cat '$cg/sub/cgroup.procs'); sleep 0.5; rmdir '$cg/sub'"
	echo "$child" >"$cg/sub/cgroup.procs"
	run ward delete --force "$id"
	assert_success
	assert_no_cgroup "$id" "$cg" "$cg/sub"
	assert_nothing_left "$id"
}
