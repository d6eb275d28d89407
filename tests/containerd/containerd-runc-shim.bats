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
