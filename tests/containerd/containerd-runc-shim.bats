#!/usr/bin/env bats
# containerd-shim-runc-v2 with ward as its runc binary (BinaryName = "ward" in containerd's
# runc options; here `ctr run --runc-binary $WARD`): how clusters swap runtimes and how
# Docker reaches one. A private containerd (tests/containerd/harness.bash) runs a locally
# built busybox image under ward's built-in default tenant ({"idmap_rootfs": true}: the runc
# shim's overlay at <bundle>/rootfs is rebuilt with idmapped layers). Every step runs with
# runc too (the baseline: E2E_BINARY=runc runs the whole file against runc).

load harness

setup_file() {
	export E2E_RUNTIME=io.containerd.runc.v2
	RUNTIME=io.containerd.runc.v2
	export E2E_TENANT='{}'
	ctd_setup
}

teardown_file() {
	ctd_teardown
}

teardown() {
	local id
	ctd_note_sockets
	for id in $(c container ls -q 2>/dev/null); do remove_container "$id"; done
	true
}

WARD_BIN=${WARD:-$WARD_REPO/build/ward}

# binaries: ward, and runc as the baseline
binaries() { echo "$WARD_BIN" "$(command -v runc)"; }

# runb BINARY ID CMD...: ctr run -d through the runc shim with BINARY as its runc
runb() {
	local b=$1 id=$2
	shift 2
	c run -d --runtime io.containerd.runc.v2 --runc-binary "$b" "$IMAGE" "$id" "$@"
}

@test "runc shim + ward: run --rm prints the output and propagates the exit status" {
	local b
	for b in $(binaries); do
		run c run --rm --runtime io.containerd.runc.v2 --runc-binary "$b" "$IMAGE" t-hello sh -c 'echo hello; exit 3'
		echo "$b: $output"
		assert_equal "$status" 3
		assert_output hello
	done
}

@test "runc shim + ward: the tenant policy applies (pool uid range, seccomp) and the idmapped overlay root" {
	run c run --rm --runtime io.containerd.runc.v2 --runc-binary "$WARD_BIN" "$IMAGE" t-policy \
		sh -c 'cat /proc/self/uid_map; grep ^Seccomp: /proc/self/status; stat -c "%u:%g" /bin/busybox; echo x >/bin/new && stat -c "new %u" /bin/new'
	assert_success
	local inside host count
	read -r inside host count <<<"$(head -n1 <<<"$output")"
	assert_equal "$inside" 0
	[ "$host" -ge 524288 ] || fail "host uid $host is not in ward's pool: $output"
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	# the image's files show with their owners (idmapped layers), root can write (copy-up)
	assert_line 0:0
	assert_line "new 0"
}

@test "runc shim + ward: create, start, exec, pause, resume, kill, delete (runc the same)" {
	local b id n=0
	for b in $(binaries); do
		n=$((n + 1))
		id=t-life$n
		run runb "$b" "$id" sleep 1000
		assert_success
		wait_task_status "$id" RUNNING
		run c task exec --exec-id e1 "$id" sh -c 'echo in-$((6*7))'
		assert_success
		assert_output in-42
		run c task pause "$id"
		assert_success
		wait_task_status "$id" PAUSED
		[ "$(cgroup_frozen "$(task_pid "$id")")" = frozen ] || fail "$b: not frozen"
		run c task resume "$id"
		assert_success
		wait_task_status "$id" RUNNING
		run c task ps "$id"
		assert_success
		assert_output --partial "$(task_pid "$id")"
		run c task kill -s SIGKILL "$id"
		assert_success
		wait_task_status "$id" STOPPED
		run c task rm "$id"
		assert_success
		run c container rm "$id"
		assert_success
		[ -z "$(task_status "$id")" ] || fail "$b: task $id still listed"
		# nothing left in the binary's state root (the shim's --root)
		[ ! -e "/run/containerd/runc/$CTD_NS/$id" ] || fail "$b: state of $id left behind"
	done
}

@test "runc shim + ward: the missing-container errors containerd matches" {
	local b root
	for b in $(binaries); do
		root=$(mktemp -d "$CTD/root.XXXXXX")
		for cmd in "state" "kill" "delete" "start" "pause" "resume" "ps"; do
			run "$b" --root "$root" $cmd t-none
			echo "$b $cmd: $output"
			assert_failure
			assert_output --regexp 'not found|does not exist'
		done
		rm -rf "$root"
	done
}
