# A fake GPU host for tests/gpu.bats: three GPUs in a fixture /proc tree, real character
# nodes (mknod, no driver behind them: opening one gives ENXIO when the device program lets
# it through, EPERM when it does not), a CDI dir, the stub libcuda.so.1 (tests/gpu/
# stub-libcuda.c) with one memory file per GPU, and a ward configuration: tenant a owns GPU 0
# and the shared GPU 2, tenant b owns GPU 1 and GPU 2.

GPU0=GPU-11111111-1111-4111-8111-111111111111
GPU1=GPU-22222222-2222-4222-8222-222222222222
GPU2=GPU-33333333-3333-4333-8333-333333333333
BUS0=0000:3b:00.0
BUS1=0000:5e:00.0
BUS2=0000:86:00.0
UVM_MAJOR=509
CAPS_MAJOR=235
GPU_MEM=$((64 << 20)) # bytes of stub device memory per GPU

gpu_info() { # uuid bus minor
	printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 150\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' "$1" "$2" "$3"
}

# gpu_fixture: builds it all under $GPUFIX, sets WARD_CONFIG to its configuration.
gpu_fixture() {
	GPUFIX=$BATS_TEST_TMPDIR/gpuhost
	local p=$GPUFIX/proc d
	mkdir -p "$p/driver/nvidia/gpus" "$p/driver/nvidia-caps" "$GPUFIX/cdi" "$GPUFIX/cuda/stub" \
		"$GPUFIX/conf/tenants.d"
	printf 'Character devices:\n  1 mem\n195 nvidia\n%s nvidia-uvm\n%s nvidia-caps\n\nBlock devices:\n  7 loop\n' \
		"$UVM_MAJOR" "$CAPS_MAJOR" >"$p/devices"
	printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n' >"$p/driver/nvidia/version"
	printf 'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n' >"$p/driver/nvidia/params"
	printf 'config 1\nmonitor 2\n' >"$p/driver/nvidia-caps/mig-minors"
	local i uuids=("$GPU0" "$GPU1" "$GPU2") buses=("$BUS0" "$BUS1" "$BUS2")
	for i in 0 1 2; do
		mkdir -p "$p/driver/nvidia/gpus/${buses[i]}"
		gpu_info "${uuids[i]}" "${buses[i]}" "$i" >"$p/driver/nvidia/gpus/${buses[i]}/information"
		printf '%s %s\n' "${uuids[i]}" "$GPU_MEM" >>"$GPUFIX/cuda/stub/gpus"
	done
	# device nodes need a filesystem without nodev
	GPUDEV=$GPUFIX/dev
	mkdir -p "$GPUDEV"
	if findmnt -n -o OPTIONS --target "$GPUDEV" | grep -qw nodev; then
		GPUDEV=/run/ward-gpu-test.$$.$BATS_TEST_NUMBER
		mkdir -p "$GPUDEV"
		mount -t tmpfs -o mode=755 ward-gpu-test "$GPUDEV"
	fi
	for i in 0 1 2; do mknod -m 666 "$GPUDEV/nvidia$i" c 195 "$i"; done
	mknod -m 666 "$GPUDEV/nvidiactl" c 195 255
	mknod -m 666 "$GPUDEV/nvidia-uvm" c "$UVM_MAJOR" 0
	mknod -m 666 "$GPUDEV/nvidia-uvm-tools" c "$UVM_MAJOR" 1
	cp "$WARD_TEST_BIN/gpu/libcuda.so.1" "$GPUFIX/cuda/libcuda.so.1"
	GPUHOOK=$(dirname "$WARD")/ward-gpu-hook
	jq -n --arg proc "$p" --arg dev "$GPUDEV" --arg cdi "$GPUFIX/cdi" --arg hook "$GPUHOOK" \
		--arg cuda "$GPUFIX/cuda/libcuda.so.1" --arg lib "$GPUFIX/lib" '{
		lib_dir: $lib, default_tenant: null, apparmor: "optional",
		gpu: {proc_root: $proc, dev_root: $dev, cdi_dirs: [$cdi], hook: $hook,
		      libcuda: $cuda, wipe_timeout: 30, wipe_slack_mb: 4, wipe_held_max_mb: 4}}' >"$GPUFIX/conf/ward.json"
	TA="ga$$n$BATS_TEST_NUMBER"
	TB="gb$$n$BATS_TEST_NUMBER"
	printf '{"gpus": ["%s", "%s"], "privileged": true}\n' "$GPU0" "$BUS2" >"$GPUFIX/conf/tenants.d/$TA.json"
	printf '{"gpus": ["1", "%s"]}\n' "$GPU2" >"$GPUFIX/conf/tenants.d/$TB.json"
	export WARD_CONFIG=$GPUFIX/conf
}

gpu_fixture_teardown() {
	if [ -n "${GPUDEV:-}" ] && [[ "$GPUDEV" == /run/ward-gpu-test.* ]]; then
		umount "$GPUDEV" 2>/dev/null
		rmdir "$GPUDEV" 2>/dev/null
	fi
	return 0
}

# gpu_bundle NAME TENANT [JQ_FILTER]: a bundle of TENANT
gpu_bundle() {
	local name=$1 tenant=$2
	shift 2
	make_bundle "$name" ".annotations[\"ward.dev/tenant\"] = \"$tenant\" ${1:+| $1}"
}

# visible DEVICES: NVIDIA_VISIBLE_DEVICES in the bundle's env (jq filter part)
visible() {
	printf '.process.env += ["NVIDIA_VISIBLE_DEVICES=%s"]' "$1"
}

mem_file() { echo "$GPUFIX/cuda/stub/mem-$1"; }

# plant UUID TEXT: a tenant's secret, all over the GPU's memory
plant() {
	local f
	f=$(mem_file "$1")
	yes "$2" | head -c "$GPU_MEM" >"$f"
}

# all_zero FILE: every byte is zero
all_zero() {
	cmp -s -n "$GPU_MEM" "$1" /dev/zero
}

ledger_state() { # uuid
	jq -r --arg u "$1" '.[] | select(.uuid == $u) | .state' < <(ward gpu list --json)
}
