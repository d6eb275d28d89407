#!/usr/bin/env bats
# GPU pods through containerd 1.6's CRI plugin, as kubelet runs them with a device plugin's
# allocation (Kubernetes issue, item 11), on the fake GPU host of tests/gpu/fixture.bash.
#
# The CRI containerd of tests/cri/harness.bash, with ward's ward.json pointing at the fake
# GPU host ("gpu": proc_root, dev_root, cdi_dirs, libcuda, hook) and mapping Kubernetes
# namespaces to tenants: gpu-a -> tenant "ka" (owns GPU 0 only), gpu-b -> tenant "kb" (owns
# GPU 1 only). The ward handler passes container annotations "cdi.k8s.io/*" into the OCI spec
# (container_annotations: containerd 1.6 has no CDI devices in CRI, enable_cdi is 1.7's), as a
# device plugin's CDI annotation arrives with containerd 1.6.
#
# CRI adds no device nodes to unprivileged pods: the GPU nodes a container sees come from
# ward's GPU hook (dev_root), nowhere else.
#
# Run alone: make test-integration T=cri-gpu

load harness
load ../gpu/fixture

KA=ka
KB=kb

setup_file() {
	# ward.json's container annotations for the ward handler, set before containerd starts
	export CRI_WARD_CONTAINER_ANNOTATIONS='"cdi.k8s.io/*"'
	cri_setup
	[ -x "$SHIM_DIR/ward-gpu-hook" ] || fail "$SHIM_DIR/ward-gpu-hook missing (make builds it)"
	[ -f "$WARD_REPO/build/tests/gpu/libcuda.so.1" ] || fail "stub libcuda not built (make test-integration builds it)"
	# the fake GPU host under $D, its "gpu" object merged into the harness's ward.json
	local harness_config=$WARD_CONFIG
	BATS_TEST_TMPDIR=$D BATS_TEST_NUMBER=0 WARD=$SHIM_DIR/ward WARD_TEST_BIN=$WARD_REPO/build/tests gpu_fixture
	export GPUFIX GPUDEV
	WARD_CONFIG=$harness_config
	export WARD_CONFIG
	jq --slurpfile g "$GPUFIX/conf/ward.json" --arg ka "$KA" --arg kb "$KB" \
		'. + {gpu: $g[0].gpu, namespaces: {"gpu-a": $ka, "gpu-b": $kb}}' \
		"$WARD_CONFIG/ward.json" >"$WARD_CONFIG/ward.json.new"
	mv "$WARD_CONFIG/ward.json.new" "$WARD_CONFIG/ward.json"
	mkdir -p "$WARD_CONFIG/tenants.d"
	printf '{"gpus": ["%s"]}\n' "$GPU0" >"$WARD_CONFIG/tenants.d/$KA.json"
	printf '{"gpus": ["%s"]}\n' "$GPU1" >"$WARD_CONFIG/tenants.d/$KB.json"
	"$SHIM_DIR/ward" gpu list >"$D/gpu-list.out" 2>&1 || fail "ward gpu list: $(cat "$D/gpu-list.out")"
}

teardown_file() {
	cri_teardown
	gpu_fixture_teardown
}

# a step that failed leaves no pod for the next one
teardown() {
	local f
	for f in "$D"/pods/*.id; do
		[ -e "$f" ] || continue
		f=${f##*/}
		rm_pod "${f%.id}"
	done
}

die() {
	printf '%s\n' "$*" >&2
	return 1
}

gward() { "$SHIM_DIR/ward" "$@"; }

gpu_state() { # uuid: its state in the ledger of the harness's ward configuration
	gward gpu list --json | jq -r --arg u "$1" '.[] | select(.uuid == $u) | .state'
}

# pod_config NAME NAMESPACE: a PodSandboxConfig as kubelet writes it (tests/cri/cri.bats),
# in the Kubernetes namespace NAMESPACE
pod_config() {
	local name=$1 ns=$2 uid
	uid=$(cat /proc/sys/kernel/random/uuid)
	echo "$uid" >>"$D/uids"
	mkdir -p "$D/pods" "$D/logs/${ns}_${name}_$uid" "$D/kubelet/pods/$uid"
	jq -c --arg n "$name" --arg ns "$ns" --arg uid "$uid" --arg logs "$D/logs/${ns}_${name}_$uid" -n '{
		metadata: {name: $n, uid: $uid, namespace: $ns, attempt: 0},
		hostname: $n, log_directory: $logs,
		labels: {"io.kubernetes.pod.name": $n, "io.kubernetes.pod.namespace": $ns,
			 "io.kubernetes.pod.uid": $uid},
		annotations: {"kubernetes.io/config.source": "api"},
		linux: {cgroup_parent: ("/kubepods/besteffort/pod" + $uid), security_context: {
			namespace_options: {network: "POD", pid: "POD", ipc: "POD"},
			seccomp: {profile_type: "RuntimeDefault"}}}}' >"$D/pods/$name.json"
}

# run_pod HANDLER NAME NAMESPACE: RunPodSandbox
run_pod() {
	local h=$1 name=$2 out id
	pod_config "$name" "$3"
	out=$(cri call RunPodSandbox "$(jq -c --arg h "$h" '{config: ., runtime_handler: $h}' "$D/pods/$name.json")" 2>&1) ||
		die "RunPodSandbox $name ($h): $out" || return 1
	id=$(jq -r .pod_sandbox_id <<<"$out")
	echo "$id" >>"$D/ids"
	sed 's|^unix://||; $a\' "$D/state/io.containerd.runtime.v2.task/k8s.io/$id/address" >>"$D/sockets" 2>/dev/null
	echo "$id" >"$D/pods/$name.id"
}

# create_ctr POD CNAME JQ: CreateContainer of a sleeping busybox, as kubelet with the device
# plugin's allocation merged in by JQ (envs, annotations); prints the container id, or the
# CRI error on stderr (exit 1)
create_ctr() {
	local pod=$1 cname=$2 jqf=$3 sid cfg out id
	sid=$(cat "$D/pods/$pod.id")
	cfg=$(jq -c --arg n "$cname" --arg img "$IMAGE" -n '{
		metadata: {name: $n, attempt: 0}, image: {image: $img}, command: ["sleep", "3600"],
		log_path: ($n + "/0.log"), labels: {"io.kubernetes.container.name": $n},
		envs: [], annotations: {},
		linux: {security_context: {seccomp: {profile_type: "RuntimeDefault"},
			namespace_options: {network: "POD", pid: "POD", ipc: "POD"}}}} | '"$jqf")
	out=$(cri call CreateContainer "$(jq -c --arg s "$sid" --argjson c "$cfg" \
		'{pod_sandbox_id: $s, config: $c, sandbox_config: .}' "$D/pods/$pod.json")" 2>&1) ||
		die "CreateContainer $cname: $out" || return 1
	id=$(jq -r .container_id <<<"$out")
	echo "$id" >>"$D/ids"
	echo "$id"
}

run_ctr() {
	local id out
	id=$(create_ctr "$@") || return 1
	out=$(cri call StartContainer "{\"container_id\": \"$id\"}" 2>&1) || die "StartContainer $2: $out" || return 1
	echo "$id"
}

# xs CID SCRIPT: ExecSync sh -c SCRIPT; prints stdout
xs() {
	local out
	out=$(cri call ExecSync "$(jq -nc --arg id "$1" --arg s "$2" '{container_id: $id, cmd: ["sh", "-c", $s], timeout: 30}')") ||
		die "ExecSync $2: $out" || return 1
	jq -r .stdout <<<"$out"
}

rm_pod() {
	local sid
	sid=$(cat "$D/pods/$1.id" 2>/dev/null) || return 0
	cri call StopPodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || return 1
	cri call RemovePodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || return 1
	rm -f "$D/pods/$1.id"
}

# what a container sees of the GPUs: its nvidia nodes, then an open of nvidia0 and nvidia1
# ("No such device or address": the device program let the open through to the driverless
# node; "No such file": not there)
PROBE='echo "nodes: $(ls /dev | grep nvidia | sort | tr "\n" " ")"; for n in nvidia0 nvidia1 nvidiactl; do printf "%s: " $n; cat /dev/$n 2>&1 </dev/null | head -1; echo; done'

visible_env() { printf '.envs += [{key: "NVIDIA_VISIBLE_DEVICES", value: "%s"}]' "$1"; }

@test "cri-gpu: the fake GPU host under the harness's config: ka owns GPU 0, kb GPU 1, all free" {
	run gward gpu list
	assert_success
	assert_line --regexp "^$GPU0 +$BUS0 +$KA +free"
	assert_line --regexp "^$GPU1 +$BUS1 +$KB +free"
}

@test "cri-gpu runc (baseline): NVIDIA_VISIBLE_DEVICES alone injects no device (runc has no GPU hook)" {
	run_pod runc base gpu-a
	c=$(run_ctr base c "$(visible_env "$GPU0")")
	run xs "$c" "$PROBE"
	assert_success
	assert_line --index 0 "nodes: "
	assert_line --index 1 "nvidia0: cat: can't open '/dev/nvidia0': No such file or directory"
	rm_pod base
	[ "$(gpu_state "$GPU0")" = free ]
}

@test "cri-gpu ward: NVIDIA_VISIBLE_DEVICES=<ka's GPU> in a gpu-a pod: exactly GPU 0's node and the control nodes; leased to ka" {
	run_pod ward env-a gpu-a
	c=$(run_ctr env-a c "$(visible_env "$GPU0")")
	run xs "$c" "$PROBE"
	assert_success
	assert_line --index 0 "nodes: nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl "
	assert_line --index 1 "nvidia0: cat: can't open '/dev/nvidia0': No such device or address"
	assert_line --index 2 "nvidia1: cat: can't open '/dev/nvidia1': No such file or directory"
	assert_line --index 3 "nvidiactl: cat: can't open '/dev/nvidiactl': No such device or address"
	run gward gpu list
	assert_line --regexp "^$GPU0 +$BUS0 +$KA +leased"
	# a secret of ka's in GPU 0's memory, for the wipe after the pod goes
	plant "$GPU0" "tenant-ka-secret"
	rm_pod env-a
	# (d) the pod is gone: the GPU is free again, its memory wiped by the stub wipe
	[ "$(gpu_state "$GPU0")" = free ] || fail "$(gward gpu list)"
	run gward gpu list
	assert_line --regexp "^$GPU0 .* free +last wipe: ok"
	all_zero "$(mem_file "$GPU0")" || fail "GPU 0 not wiped after the pod"
}

@test "cri-gpu ward: the CDI annotation (cdi.k8s.io/..., passed by container_annotations) in a gpu-a pod: exactly GPU 0" {
	run_pod ward cdi-a gpu-a
	c=$(run_ctr cdi-a c ".annotations[\"cdi.k8s.io/nvidia-device-plugin_c\"] = \"nvidia.com/gpu=$GPU0\"")
	run xs "$c" "$PROBE"
	assert_success
	assert_line --index 0 "nodes: nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl "
	assert_line --index 2 "nvidia1: cat: can't open '/dev/nvidia1': No such file or directory"
	[ "$(gpu_state "$GPU0")" = leased ]
	rm_pod cdi-a
	[ "$(gpu_state "$GPU0")" = free ] || fail "$(gward gpu list)"
}

@test "cri-gpu ward: a gpu-b pod (tenant kb) asking for ka's GPU is refused, naming the GPU and the tenant; CRI reports it" {
	run_pod ward env-b gpu-b
	# containerd 1.6's CreateContainer only records the container: the task, and so ward's
	# create and its policy, comes with StartContainer, which reports ward's error
	run run_ctr env-b c "$(visible_env "$GPU0")"
	assert_failure
	assert_output --partial "StartContainer c:"
	assert_output --partial "$GPU0"
	assert_output --partial "not assigned to tenant \"$KB\""
	echo "# refused: $output" >&3
	# nothing of the refused container is left in ward's state (containerd's record of the
	# created container stays until RemovePodSandbox, as with any failed start)
	id=$(tail -n 1 "$D/ids")
	[ ! -e "/run/containerd/ward/k8s.io/$id" ] || fail "ward state of the refused $id left"
	run run_ctr env-b c2 ".annotations[\"cdi.k8s.io/nvidia-device-plugin_c2\"] = \"nvidia.com/gpu=$GPU0\""
	assert_failure
	assert_output --partial "$GPU0"
	assert_output --partial "not assigned to tenant \"$KB\""
	[ "$(gpu_state "$GPU0")" = free ]
	# kb's own GPU it gets
	c=$(run_ctr env-b c3 "$(visible_env "$GPU1")")
	run xs "$c" 'ls /dev | grep nvidia | sort | tr "\n" " "'
	assert_output "nvidia-uvm nvidia-uvm-tools nvidia1 nvidiactl "
	rm_pod env-b
	[ "$(gpu_state "$GPU1")" = free ] || fail "$(gward gpu list)"
	[ "$(gpu_state "$GPU0")" = free ]
}

@test "cri-gpu: all pods gone, nothing left (shims, runtime state, cgroups, mounts); every GPU free" {
	kubelet_cgroup_cleanup || true # (rmdir of a hierarchy without the pod fails; the find below judges)
	[ -z "$(cri call ListPodSandbox | jq -r '.items[] | .id')" ] || fail "pods left"
	[ -z "$(cri call ListContainers | jq -r '.containers[] | .id')" ] || fail "containers left"
	for i in $(seq 1 100); do
		[ -z "$(cri_shim_pids)" ] && break
		sleep 0.1
	done
	[ -z "$(cri_shim_pids)" ] || fail "shims left: $(cri_shim_pids)"
	cri_known_ids >"$D/ids.now"
	[ -s "$D/ids.now" ] || fail "no ids recorded"
	left=
	for id in $(cat "$D/ids.now"); do
		[ -e "/run/containerd/ward/k8s.io/$id" ] && left+=" ward-state:$id"
		[ -e "/run/containerd/runc/k8s.io/$id" ] && left+=" runc-state:$id"
	done
	[ -z "$left" ] || fail "left behind:$left"
	left=$(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | grep -F -f "$D/ids.now" -f "$D/uids") || true
	[ -z "$left" ] || fail "cgroups left: $left"
	left=$(grep -F -f "$D/ids.now" /proc/self/mountinfo) || true
	[ -z "$left" ] || fail "mounts left: $left"
	run gward gpu list --json
	assert_success
	[ "$(jq -r '[.[] | .state] | unique | join(",")' <<<"$output")" = free ] || fail "$output"
}
