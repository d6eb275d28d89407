#!/usr/bin/env bats
# GPUs on a fake GPU host (tests/gpu/fixture.bash): a container sees and can open only the
# GPUs its tenant owns, whatever it asks; leases are exclusive between tenants; a GPU's
# memory is wiped (stub libcuda) before another tenant gets it, and a failed wipe ends in
# quarantine. The device nodes are real (mknod) without a driver: open() gives ENXIO when
# the container's device program allows the node, EPERM when it does not.

WARD_CONFIG=
load helpers
load gpu/fixture

suite_setup() {
	[ -x "$(dirname "$WARD")/ward-gpu-hook" ] || fail "ward-gpu-hook not built"
	[ -f "$WARD_TEST_BIN/gpu/libcuda.so.1" ] || fail "stub libcuda not built"
	gpu_fixture
}

teardown() {
	ward_teardown
	local rc=$?
	gpu_fixture_teardown
	return $rc
}

# open_probe PATH...: inside the container, "PATH: <error>" for each node
OPEN_PROBE='for n in "$@"; do printf "%s: " "$n"; cat "$n" 2>&1 </dev/null | head -1; echo; done'

@test "gpu list: the fake host's GPUs, their tenants, all free" {
	run ward gpu list
	assert_success
	assert_line --regexp "^$GPU0 +$BUS0 +$TA +free"
	assert_line --regexp "^$GPU1 +$BUS1 +$TB +free"
	assert_line --regexp "^$GPU2 +$BUS2 +$TA,$TB +free|^$GPU2 +$BUS2 +$TB,$TA +free"
	run ward gpu list --json
	assert_success
	[ "$(jq length <<<"$output")" = 3 ]
	[ "$(jq -r '.[0].minor' <<<"$output")" = 0 ]
}

@test "tenant a, NVIDIA_VISIBLE_DEVICES=all: only a's GPUs and the control nodes, rw; others absent" {
	gpu_bundle b "$TA" "$(visible all)"
	set_cmd 'ls /dev | grep nvidia | sort | tr "\n" " "; echo; ls /proc/driver/nvidia/gpus | tr "\n" " "; echo; grep ModifyDeviceFiles /proc/driver/nvidia/params; cat /dev/nvidia0 2>&1 | head -1; cat /dev/nvidia2 2>&1 | head -1; cat /dev/nvidiactl 2>&1 | head -1; cat /dev/nvidia-uvm 2>&1 | head -1; grep " /dev/nvidia0 " /proc/mounts'
	run_container
	assert_success
	assert_line --index 0 "nvidia-uvm nvidia-uvm-tools nvidia0 nvidia2 nvidiactl "
	assert_line --index 1 "$BUS0 $BUS2 "
	assert_line --index 2 --regexp 'ModifyDeviceFiles: +0'
	# no driver behind the nodes: "No such device or address" means the device program let
	# the open through
	assert_line --index 3 --partial 'No such device or address'
	assert_line --index 4 --partial 'No such device or address'
	assert_line --index 5 --partial 'No such device or address'
	assert_line --index 6 --partial 'No such device or address'
	# bound from the host read-only, nosuid, noexec
	assert_line --index 7 --regexp 'ro,nosuid.*noexec|ro,.*nosuid,.*noexec'
}

@test "a node of another GPU smuggled into the container cannot be opened (device program)" {
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	# an attacker who got hold of GPU 1's node (b's GPU) inside the container
	"$WARD_TEST_BIN/bind-into" "$pid" "$GPUDEV/nvidia1" /dev/stolen
	run ward exec "$id" sh -c 'cat /dev/stolen 2>&1 | head -1; cat /dev/nvidia0 2>&1 | head -1'
	assert_line --index 0 --partial 'Operation not permitted'
	assert_line --index 1 --partial 'No such device or address'
	# the container cannot make nodes either
	run ward exec "$id" mknod /tmp/n c 195 1
	assert_failure
}

@test "cross-tenant request: b asking for a's GPU is refused, naming the GPU and the tenant; nothing left" {
	gpu_bundle b "$TB" "$(visible "$GPU0")"
	id=$(cid c)
	ward_capture create -b "$BUNDLE" "$id"
	[ "$status" -ne 0 ] || fail "create succeeded"
	[[ "$stderr" == *"$GPU0"* ]] || fail "$stderr"
	[[ "$stderr" == *"not assigned to tenant \"$TB\""* ]] || fail "$stderr"
	assert_nothing_left "$id"
	[ "$(ledger_state "$GPU0")" = free ]
	# unknown GPUs and other vendors' CDI kinds too
	gpu_bundle b2 "$TA" "$(visible GPU-99999999-9999-4999-8999-999999999999)"
	ward_capture create -b "$BUNDLE" "$(cid d)"
	[ "$status" -ne 0 ] && [[ "$stderr" == *"no such GPU"* ]] || fail "$stderr"
	gpu_bundle b3 "$TA" '.annotations["cdi.k8s.io/x"] = "vendor.com/fpga=0"'
	ward_capture create -b "$BUNDLE" "$(cid e)"
	[ "$status" -ne 0 ] && [[ "$stderr" == *"cdi.k8s.io/x"* ]] || fail "$stderr"
}

@test "CDI annotation and index requests resolve to the tenant's GPU; 'none' injects no GPU" {
	gpu_bundle b "$TB" '.annotations["cdi.k8s.io/nvidia-device-plugin_x"] = "nvidia.com/gpu='"$GPU2"'"'
	set_cmd 'ls /dev | grep nvidia | sort | tr "\n" " "'
	run_container
	assert_success
	assert_output "nvidia-uvm nvidia-uvm-tools nvidia2 nvidiactl "
	gpu_bundle b2 "$TB" "$(visible 1)"
	set_cmd 'ls /dev | grep nvidia | sort | tr "\n" " "'
	run_container
	assert_output "nvidia-uvm nvidia-uvm-tools nvidia1 nvidiactl "
	gpu_bundle b3 "$TB" "$(visible none)"
	set_cmd 'ls /dev | grep -c nvidia; ls /proc/driver/nvidia 2>&1 | head -1'
	run_container
	[ "$(head -1 <<<"$output")" = 0 ] || fail "$output"
}

@test "a privileged pod still gets only its tenant's GPUs" {
	gpu_bundle b "$TA" "$(visible all) | .process.capabilities.bounding += [\"CAP_SYS_ADMIN\"] | .process.capabilities.effective += [\"CAP_SYS_ADMIN\"]"
	set_cmd 'ls /dev | grep nvidia | sort | tr "\n" " "'
	run_container
	assert_success
	assert_output "nvidia-uvm nvidia-uvm-tools nvidia0 nvidia2 nvidiactl "
}

@test "wipe: a's secret in the shared GPU is gone (every byte zero) before b can lease it" {
	gpu_bundle b "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	a=$(cid a)
	start_container "$a"
	[ "$(ledger_state "$GPU2")" = leased ]
	# while a holds it, b is refused, naming the tenant that holds it
	gpu_bundle bb "$TB" "$(visible "$GPU2")"
	ward_capture create -b "$BUNDLE" "$(cid b1)"
	[ "$status" -ne 0 ] || fail "b leased a GPU a holds"
	[[ "$stderr" == *"$GPU2"*"leased by tenant \"$TA\""* ]] || fail "$stderr"
	plant "$GPU2" "tenant-a-secret-key"
	grep -q tenant-a-secret-key "$(mem_file "$GPU2")"
	run ward delete -f "$a"
	assert_success
	all_zero "$(mem_file "$GPU2")" || fail "GPU memory not wiped: $(tr -d '\0' <"$(mem_file "$GPU2")" | head -c 80)"
	[ "$(ledger_state "$GPU2")" = free ]
	run ward gpu list
	assert_line --regexp "^$GPU2 .* free +last wipe: ok"
	# now b gets it
	set_cmd 'ls /dev | grep nvidia2'
	run_container
	assert_success
	assert_output nvidia2
}

@test "a wipe that cannot verify the memory quarantines the GPU: refused to everyone until released" {
	gpu_bundle b "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	a=$(cid a)
	start_container "$a"
	plant "$GPU2" "tenant-a-secret"
	echo "memset_noop 1" >"$GPUFIX/cuda/stub/knobs"
	run ward delete -f "$a"
	[ "$(ledger_state "$GPU2")" = quarantined ]
	grep -q tenant-a-secret "$(mem_file "$GPU2")"
	gpu_bundle bb "$TB" "$(visible "$GPU2")"
	ward_capture create -b "$BUNDLE" "$(cid b1)"
	[ "$status" -ne 0 ] || fail "a quarantined GPU was leased"
	[[ "$stderr" == *"$GPU2"*quarantined* ]] || fail "$stderr"
	rm "$GPUFIX/cuda/stub/knobs"
	run ward gpu release "$GPU2"
	assert_success
	[ "$(ledger_state "$GPU2")" = free ]
	all_zero "$(mem_file "$GPU2")" || fail "released without a new wipe"
}

@test "two tenants under two state roots (--root) cannot both lease one GPU: the ledger is the host's" {
	gpu_bundle b "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	a=$(cid a)
	start_container "$a"
	plant "$GPU2" "tenant-a-secret"
	# tenant b's runtime keeps its containers in another state root
	STATE2=$BATS_TEST_TMPDIR/state2
	mkdir -p "$STATE2"
	b=$(cid b)
	on_teardown "env WARD_TEST_TAG=$TAG $WARD --root $STATE2 delete -f $b 2>/dev/null"
	gpu_bundle bb "$TB" "$(visible "$GPU2")"
	set_args true
	run --separate-stderr env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE2" run -b "$BUNDLE" "$b" </dev/null
	[ "$status" -ne 0 ] || fail "tenant b got the GPU tenant a holds under another state root"
	[[ "$stderr" == *"GPU \"$GPU2\": leased by tenant \"$TA\" (container $a)"* ]] || fail "$stderr"
	[ ! -e "$STATE2/$b" ] || fail "state of $b left behind"
	# a's GPU is untouched: still leased to a, its memory not wiped under it
	[ "$(ledger_state "$GPU2")" = leased ]
	grep -q tenant-a-secret "$(mem_file "$GPU2")" || fail "a's GPU memory was wiped while a ran"
	[ -e "$GPUFIX/lib/gpu/ledger.json" ] || fail "no ledger in lib_dir"
	[ ! -e "$STATE/@gpu" ] && [ ! -e "$STATE2/@gpu" ] || fail "a ledger in a state root"
	ward delete -f "$a"
	[ "$(ledger_state "$GPU2")" = free ]
	all_zero "$(mem_file "$GPU2")" || fail "not wiped after a"
}

@test "gpu release of a quarantined GPU: wipes it first; refuses while the wipe fails; --force frees it unwiped, saying so" {
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	set_args true
	a=$(cid a)
	start_container "$a"
	plant "$GPU0" "tenant-a-secret"
	echo "memset_noop 1" >"$GPUFIX/cuda/stub/knobs"
	ward delete -f "$a" || true
	[ "$(ledger_state "$GPU0")" = quarantined ]
	# the wipe still fails: refused, the GPU stays quarantined, the secret is still there
	run --separate-stderr ward gpu release "$GPU0"
	assert_failure
	[[ "$stderr" == *"GPU \"$GPU0\" not released: its memory was not wiped"* ]] || fail "$stderr"
	[ "$(ledger_state "$GPU0")" = quarantined ]
	grep -q tenant-a-secret "$(mem_file "$GPU0")"
	# --force: free without a wipe, with a warning that says so
	run --separate-stderr ward gpu release --force "$GPU0"
	assert_success
	[[ "$stderr" == *"released without a wipe"*"memory was not wiped"* ]] || fail "$stderr"
	[ "$(ledger_state "$GPU0")" = free ]
	# quarantined again; once the wipe works, release wipes it and frees it
	start_container "$(cid a2)"
	ward delete -f "$(cid a2)" || true
	[ "$(ledger_state "$GPU0")" = quarantined ]
	rm "$GPUFIX/cuda/stub/knobs"
	run --separate-stderr ward gpu release "$GPU0"
	assert_success
	[ "$(ledger_state "$GPU0")" = free ]
	all_zero "$(mem_file "$GPU0")" || fail "released without being wiped"
}

@test "memory held by another process at wipe time ends in quarantine" {
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	set_args true
	a=$(cid a)
	start_container "$a"
	echo "busy_bytes $((16 << 20))" >"$GPUFIX/cuda/stub/knobs"
	ward delete -f "$a" || true
	[ "$(ledger_state "$GPU0")" = quarantined ]
	run ward gpu list --json
	jq -e --arg u "$GPU0" '.[] | select(.uuid == $u) | .reason' <<<"$output" >/dev/null
}

@test "a failed create gives its GPUs back clean (free, not dirty)" {
	gpu_bundle b "$TA" "$(visible "$GPU0") | .process.args = [\"/no/such/binary\"]"
	id=$(cid c)
	ward_capture run -b "$BUNDLE" "$id"
	[ "$status" -ne 0 ] || fail "run succeeded"
	[ "$(ledger_state "$GPU0")" = free ]
	run ward gpu list --json
	[ "$(jq -r --arg u "$GPU0" '.[] | select(.uuid == $u) | .holders | length' <<<"$output")" = 0 ]
}

@test "concurrent creates of two tenants never lease one GPU to both" {
	gpu_bundle ba "$TA" "$(visible "$GPU2")"
	set_args sleep 1000
	A=$BUNDLE
	gpu_bundle bb "$TB" "$(visible "$GPU2")"
	set_args sleep 1000
	B=$BUNDLE
	local i ids=()
	for i in 1 2 3; do
		ids+=("$(cid a$i)" "$(cid b$i)")
	done
	for i in 1 2 3; do
		ward create -b "$A" "$(cid a$i)" </dev/null >/dev/null 2>&1 &
		ward create -b "$B" "$(cid b$i)" </dev/null >/dev/null 2>&1 &
	done
	wait
	run ward gpu list --json
	tenant=$(jq -r --arg u "$GPU2" '.[] | select(.uuid == $u) | .tenant' <<<"$output")
	[ "$tenant" = "$TA" ] || [ "$tenant" = "$TB" ] || fail "no tenant holds it: $output"
	other=$TA
	[ "$tenant" = "$TA" ] && other=$TB
	# no container of the other tenant was created
	for i in 1 2 3; do
		if [ "$other" = "$TA" ]; then c=$(cid a$i); else c=$(cid b$i); fi
		[ -z "$(status_of "$c")" ] || fail "$c of $other exists too"
	done
}

@test "hostile image: LD_PRELOAD in the env and a symlinked /dev do not steer the hook" {
	gcc -shared -fPIC -o "$BATS_TEST_TMPDIR/evil.so" -x c - <<EOF
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	close(open("$BATS_TEST_TMPDIR/PWNED", O_CREAT | O_WRONLY, 0644));
}
EOF
	gpu_bundle b "$TA" "$(visible "$GPU0") | .process.env += [\"LD_PRELOAD=$BATS_TEST_TMPDIR/evil.so\"]"
	cp "$BATS_TEST_TMPDIR/evil.so" "$BUNDLE/rootfs/evil.so"
	set_cmd 'ls /dev | grep nvidia0'
	run_container
	assert_success
	assert_output nvidia0
	[ ! -e "$BATS_TEST_TMPDIR/PWNED" ] || fail "the hook loaded the container's LD_PRELOAD"
	# the hook runs with a fixed environment, whatever the pod says
	run ward policy explain --json "$BUNDLE"
	assert_success
	[ "$(jq -c '[.effective.hooks.createRuntime[] | select(.args[0] == "ward-gpu-hook")][0].env' <<<"$output")" = '["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]' ] || fail "$output"
	# /dev in the image a symlink to a host directory: nodes land in the container's /dev
	gpu_bundle b2 "$TA" "$(visible "$GPU0")"
	mkdir -p "$BATS_TEST_TMPDIR/hostdir"
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "$BATS_TEST_TMPDIR/hostdir" "$BUNDLE/rootfs/dev"
	set_cmd 'ls /dev | grep nvidia0'
	run_container
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/hostdir")" ] || fail "wrote into the host: $(ls "$BATS_TEST_TMPDIR/hostdir")"
}

@test "policy explain shows the GPU hooks, the device rules (rw, no mknod) and the lease (ward.gpus)" {
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	run ward policy explain --json "$BUNDLE"
	assert_success
	spec=$(jq .effective <<<"$output")
	[ "$(jq -r '.ward.gpus' <<<"$spec")" = "$GPU0" ]
	[ "$(jq -r '.annotations["ward.dev/gpus"]' <<<"$spec")" = null ]
	jq -e '.linux.resources.devices[] | select(.major == 195 and .minor == 0 and .access == "rw")' <<<"$spec" >/dev/null
	jq -e '.linux.resources.devices[] | select(.major == 195 and .minor == 255 and .access == "rw")' <<<"$spec" >/dev/null
	! jq -e '.linux.resources.devices[] | select(.major == 195 and .minor == 1)' <<<"$spec" >/dev/null || fail "GPU 1 allowed"
	[ "$(jq -r '[.hooks.createRuntime[] | select(.args[0] == "ward-gpu-hook")][0].args[1]' <<<"$spec")" = inject ]
	[ "$(jq -r '[.hooks.poststop[] | select(.args[0] == "ward-gpu-hook")][0].args[1]' <<<"$spec")" = release ]
	# explain leases nothing
	[ "$(ledger_state "$GPU0")" = free ]
	# a pod cannot pre-set the lease: its annotation stays its own, the lease is ward's
	gpu_bundle b2 "$TA" '.annotations["ward.dev/gpus"] = "'"$GPU1"'"'
	run ward policy explain --json "$BUNDLE"
	[ "$(jq -r '.effective.ward.gpus' <<<"$output")" = null ]
	[ "$(jq -r '.effective.annotations["ward.dev/gpus"]' <<<"$output")" = "$GPU1" ]
	# a container asking for no GPU has /proc/driver masked; one with GPUs gets the hook's
	jq -e '.effective.linux.maskedPaths | index("/proc/driver")' <<<"$output" >/dev/null
	! jq -e '.linux.maskedPaths | index("/proc/driver")' <<<"$spec" >/dev/null || fail "masked with GPUs"
}

@test "MIG device from a CDI spec: the parent node and its two capability nodes; CDI libraries read-only" {
	MIG=MIG-aaaaaaaa-aaaa-5aaa-8aaa-aaaaaaaaaaaa
	printf 'config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu0/gi2/access 21\n' \
		>"$GPUFIX/proc/driver/nvidia-caps/mig-minors"
	mkdir -p "$GPUDEV/nvidia-caps" "$GPUFIX/driverlib"
	mknod -m 666 "$GPUDEV/nvidia-caps/nvidia-cap12" c "$CAPS_MAJOR" 12
	mknod -m 666 "$GPUDEV/nvidia-caps/nvidia-cap13" c "$CAPS_MAJOR" 13
	mknod -m 666 "$GPUDEV/nvidia-caps/nvidia-cap21" c "$CAPS_MAJOR" 21
	echo "driver library" >"$GPUFIX/driverlib/libcuda.so.550"
	# the MIG device as CUDA shows it (its own memory), for the wipe at delete
	printf '%s %s\n' "$MIG" "$GPU_MEM" >>"$GPUFIX/cuda/stub/gpus"
	jq -n --arg mig "$MIG" --arg lib "$GPUFIX/driverlib/libcuda.so.550" '{
		cdiVersion: "0.5.0", kind: "nvidia.com/gpu",
		devices: [{name: $mig, containerEdits: {deviceNodes: [
			{path: "/dev/nvidia0"}, {path: "/dev/nvidia-caps/nvidia-cap12"},
			{path: "/dev/nvidia-caps/nvidia-cap13"}]}}],
		containerEdits: {mounts: [{hostPath: $lib, containerPath: "/usr/lib/libcuda.so.1"}]}}' \
		>"$GPUFIX/cdi/nvidia.json"
	run ward gpu list --json
	assert_success
	[ "$(jq -r --arg m "$MIG" '.[] | select(.uuid == $m) | .mig' <<<"$output")" = true ] || fail "$output"
	gpu_bundle b "$TA" "$(visible "$MIG")"
	set_cmd 'find /dev -name "nvidia*" | sort | tr "\n" " "; echo; cat /dev/nvidia-caps/nvidia-cap13 2>&1 | head -1; cat /usr/lib/libcuda.so.1; echo x >/usr/lib/libcuda.so.1 2>&1 || echo read-only'
	run_container
	assert_success
	assert_line --index 0 "/dev/nvidia-caps /dev/nvidia-caps/nvidia-cap12 /dev/nvidia-caps/nvidia-cap13 /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia0 /dev/nvidiactl "
	assert_line --index 1 --partial 'No such device or address'
	assert_line --index 2 "driver library"
	assert_line --index 3 read-only
	# another GI's capability node is not allowed by the device program
	run ward policy explain --json "$BUNDLE"
	! jq -e '.effective.linux.resources.devices[] | select(.major == '"$CAPS_MAJOR"' and .minor == 21)' <<<"$output" >/dev/null || fail "cap 21 allowed"
	jq -e '.effective.linux.resources.devices[] | select(.major == '"$CAPS_MAJOR"' and .minor == 13 and .access == "rw")' <<<"$output" >/dev/null
	# the whole GPU and its MIG device together: the shared parent node is bound once
	gpu_bundle b3 "$TA" "$(visible "$GPU0,$MIG")"
	set_cmd 'grep -c " /dev/nvidia0 " /proc/mounts; ls /dev/nvidia-caps | tr "\n" " "'
	run_container
	assert_success
	assert_line --index 0 1
	assert_line --index 1 "nvidia-cap12 nvidia-cap13 "
	# b does not own GPU 0: its MIG device is not b's either
	gpu_bundle b2 "$TB" "$(visible "$MIG")"
	ward_capture create -b "$BUNDLE" "$(cid c2)"
	[ "$status" -ne 0 ] && [[ "$stderr" == *"$MIG"*"not assigned to tenant \"$TB\""* ]] || fail "$stderr"
}

# own_bundle: a bundle of tenant a (not trusted) with GPU 0, its own seccomp filter, an
# annotation of its own, and createRuntime and poststop hooks (allow-listed for a) that keep
# their stdin in $HOOKDIR/KIND.json. The policy adds an ID range and an idmapped root.
own_bundle() {
	HOOKDIR="$BATS_TEST_TMPDIR/hooks"
	mkdir -p "$HOOKDIR"
	printf '#!/bin/sh\ncat >"%s/$1.json"\n' "$HOOKDIR" >"$HOOKDIR/hook.sh"
	chmod 0755 "$HOOKDIR/hook.sh"
	jq --arg h "$HOOKDIR/hook.sh" '.hooks = [$h]' "$GPUFIX/conf/tenants.d/$TA.json" >"$HOOKDIR/t.json"
	mv "$HOOKDIR/t.json" "$GPUFIX/conf/tenants.d/$TA.json"
	gpu_bundle b "$TA" "$(visible "$GPU0")"
	config_edit '.annotations["org.example.team"] = "infra"
		| .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
			syscalls: [{names: ["swapon"], action: "SCMP_ACT_ERRNO"}]}
		| .hooks = {createRuntime: [{path: $h, args: [$h, "createRuntime"]}],
			poststop: [{path: $h, args: [$h, "poststop"]}]}' --arg h "$HOOKDIR/hook.sh"
}

@test "state and hooks' stdin carry only the pod's annotations; ward's record is its own (GPUs, IDs, idmapped root, pod seccomp, exit status)" {
	own_bundle
	want=$(jq -cS .annotations "$BUNDLE/config.json")
	set_args sleep 1000
	id=$(cid c)
	create_container "$id"
	run ward state "$id"
	assert_success
	assert_equal "$(jq -cS .annotations <<<"$output")" "$want"
	assert_equal "$(jq -r .ward.gpus <<<"$output")" "$GPU0"
	assert_equal "$(jq -r .ward.rootfsIdmap <<<"$output")" true
	[[ "$(jq -r .ward.ids <<<"$output")" == "pod:$TA/$id "* ]] || fail "ids: $output"
	assert_equal "$(jq -cS .annotations "$HOOKDIR/createRuntime.json")" "$want"
	# the effective spec: the pod's filter is ward's record, not an annotation
	jq -e '.ward.podSeccomp.syscalls[0].names == ["swapon"]' "$STATE/$id/config.json" >/dev/null ||
		fail "$(cat "$STATE/$id/config.json")"
	assert_equal "$(jq -cS .annotations "$STATE/$id/config.json" | jq -c 'del(.["ward.dev/tenant"])')" \
		"$(jq -c 'del(.["ward.dev/tenant"])' <<<"$want")"
	ward start "$id"
	# the exit status as the shim passes it (delete -f: no wait for the init to end)
	ward delete -f --exit-status 3 "$id"
	assert_equal "$(jq -cS .annotations "$HOOKDIR/poststop.json")" "$want"
	assert_equal "$(jq -r .ward.exitStatus "$HOOKDIR/poststop.json")" 3
	[ "$(ledger_state "$GPU0")" != leased ] || fail "GPU 0 still leased"
}

@test "a container of the previous ward (its record in annotations) still execs and deletes" {
	own_bundle
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	# what the previous ward wrote: the record as ward.dev/ annotations, no "ward" objects
	jq -c '.annotations += {"ward.dev/ids": .ward.ids, "ward.dev/gpus": .ward.gpus,
		"ward.dev/rootfs-idmap": "true"} | del(.ward)' "$STATE/$id/state.json" >"$BATS_TEST_TMPDIR/s"
	jq -c '.annotations += {"ward.dev/ids": .ward.ids, "ward.dev/gpus": .ward.gpus,
		"ward.dev/rootfs-idmap": "true", "ward.dev/pod-seccomp": (.ward.podSeccomp | tojson)}
		| del(.ward)' "$STATE/$id/config.json" >"$BATS_TEST_TMPDIR/c"
	cp "$BATS_TEST_TMPDIR/s" "$STATE/$id/state.json"
	cp "$BATS_TEST_TMPDIR/c" "$STATE/$id/config.json"
	run ward state "$id"
	assert_success
	assert_equal "$(jq -r .ward.gpus <<<"$output")" "$GPU0"
	run ward exec "$id" true
	assert_success
	ward delete -f "$id"
	[ ! -e "$STATE/$id" ]
	[ "$(ledger_state "$GPU0")" != leased ] || fail "GPU 0 still leased"
}
