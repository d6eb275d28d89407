# Kubelet-like CRI steps shared by tests/cri/cri.bats (on the host) and tests/vm/cri.bats
# (in the VM of tests/vm/run-vm.sh, where cgroup v2 has every controller): the step runner
# (step HANDLER NAME: ok, a KNOWN skip, a host skip or not ok), the objects kubelet makes
# (pods, containers, ExecSync), and the steps both suites run: ContainerStats,
# UpdateContainerResources, OOM, StopContainer with a grace period, teardown. Loaded after
# tests/cri/harness.bash; the suite declares KNOWN (see tests/cri/cri.bats).
#
#   MAIN_POD_CONTAINERS  the containers of the main pod (default "c1 c2"; the VM suite
#                        makes c1 only)

# ---------------------------------------------------------------------------------------
# Step runner

die() {
	printf '%s\n' "$*" >&2
	exit 1
}

# step HANDLER NAME: runs step_NAME HANDLER in a subshell and decides ok / skip / not ok.
step() {
	local h=$1 name=$2 out rc known entry cause re line
	out=$( (step_"$name" "$h") 2>&1) && rc=0 || rc=$?
	known=${KNOWN["$h:$name"]:-${KNOWN["$h:*"]:-}}
	[ "$name" = teardown ] && known=${KNOWN["$h:$name"]:-}
	if [ "$rc" = 0 ]; then
		[ -n "${KNOWN["$h:$name"]:-}" ] &&
			echo "# $h:$name passes now: remove its KNOWN entry (${known%%|*})" >&3
		return 0
	fi
	printf '%s\n' "$out"
	while IFS= read -r entry; do
		[ -n "$entry" ] || continue
		cause=${entry%%|*} re=${entry#*|}
		line=$(grep -m1 -oE -- "$re" <<<"$out") && skip "known ($cause): $line"
	done <<<"$known"
	line=$(grep -m1 -oE '^HOSTSKIP: .*' <<<"$out") && skip "host: ${line#HOSTSKIP: }"
	fail "$h: $name failed (exit $rc)"
}

# v2_has CONTROLLER: the cgroup v2 hierarchy offers it (not so on a hybrid host)
v2_has() { grep -qw "$1" "$(cgroup2_root)/cgroup.controllers" 2>/dev/null; }

host_skip() {
	echo "HOSTSKIP: $*"
	exit 1
}

# ---------------------------------------------------------------------------------------
# Kubelet-like objects

# pod_config NAME [JQ]: a PodSandboxConfig as kubelet (cgroupfs driver) writes it: uid, log
# directory $D/logs/<ns>_<name>_<uid>, cgroup parent /kubepods/besteffort/pod<uid>, hostname,
# pod network, shareProcessNamespace, RuntimeDefault seccomp, unless JQ changes it; kept in
# $D/pods/NAME.json for CreateContainer.
pod_config() {
	local name=$1 jqf=${2:-.} uid
	uid=$(cat /proc/sys/kernel/random/uuid)
	echo "$uid" >>"$D/uids"
	mkdir -p "$D/pods" "$D/logs/default_${name}_$uid" "$D/kubelet/pods/$uid"
	jq -c --arg n "$name" --arg uid "$uid" --arg logs "$D/logs/default_${name}_$uid" -n '{
		metadata: {name: $n, uid: $uid, namespace: "default", attempt: 0},
		hostname: $n, log_directory: $logs,
		labels: {"io.kubernetes.pod.name": $n, "io.kubernetes.pod.namespace": "default",
			 "io.kubernetes.pod.uid": $uid},
		annotations: {"kubernetes.io/config.source": "api"},
		dns_config: {servers: ["10.96.0.10"], searches: ["default.svc.cluster.local"]},
		linux: {cgroup_parent: ("/kubepods/besteffort/pod" + $uid), security_context: {
			namespace_options: {network: "POD", pid: "POD", ipc: "POD"},
			seccomp: {profile_type: "RuntimeDefault"}}}} | '"$jqf" >"$D/pods/$name.json"
}

# run_pod HANDLER NAME [JQ]: RunPodSandbox; prints the sandbox id.
run_pod() {
	local h=$1 name=$2 out id
	pod_config "$name" "${3:-.}"
	out=$(cri call RunPodSandbox "$(jq -c --arg h "$h" '{config: ., runtime_handler: $h}' "$D/pods/$name.json")" 2>&1) ||
		die "RunPodSandbox $name ($h): $out"
	id=$(jq -r .pod_sandbox_id <<<"$out")
	echo "$id" >>"$D/ids"
	# the pod's shim socket, which teardown checks is gone
	sed 's|^unix://||; $a\' "$D/state/io.containerd.runtime.v2.task/k8s.io/$id/address" >>"$D/sockets" 2>/dev/null
	echo "$id" >"$D/pods/$name.id"
	echo "$id"
}

# run_ctr POD CNAME CMD-JSON [JQ]: CreateContainer + StartContainer (as kubelet: image by
# name, log path <cname>/<attempt>.log, RuntimeDefault seccomp); prints the container id.
run_ctr() {
	local pod=$1 cname=$2 cmd=$3 jqf=${4:-.} sid cfg out id
	sid=$(cat "$D/pods/$pod.id")
	cfg=$(jq -c --arg n "$cname" --arg img "$IMAGE" --argjson cmd "$cmd" -n '{
		metadata: {name: $n, attempt: 0}, image: {image: $img}, command: $cmd,
		log_path: ($n + "/0.log"),
		labels: {"io.kubernetes.container.name": $n},
		envs: [{key: "POD_TEST", value: "1"}],
		linux: {resources: {cpu_shares: 2, oom_score_adj: 1000},
			security_context: {seccomp: {profile_type: "RuntimeDefault"},
					   namespace_options: {network: "POD", pid: "POD", ipc: "POD"},
					   masked_paths: ["/proc/kcore", "/proc/keys"],
					   readonly_paths: ["/proc/sys", "/proc/sysrq-trigger"]}}} | '"$jqf")
	out=$(cri call CreateContainer "$(jq -c --arg s "$sid" --argjson c "$cfg" \
		'{pod_sandbox_id: $s, config: $c, sandbox_config: .}' "$D/pods/$pod.json")" 2>&1) ||
		die "CreateContainer $cname: $out"
	id=$(jq -r .container_id <<<"$out")
	echo "$id" >>"$D/ids"
	out=$(cri call StartContainer "{\"container_id\": \"$id\"}" 2>&1) || die "StartContainer $cname: $out"
	echo "$id"
}

# exec_req CID CMD...: an ExecSyncRequest (jq's --args would take "-c" for its own option)
exec_req() {
	local id=$1
	shift
	printf '%s\n' "$@" | jq -R . | jq -sc --arg id "$id" '{container_id: $id, cmd: ., timeout: 30}'
}

# xs CID CMD...: ExecSync; prints stdout; fails (with stderr and exit code) unless it exits 0.
xs() {
	local id=$1 out
	shift
	out=$(cri call ExecSync "$(exec_req "$id" "$@")") || die "ExecSync $*: $out"
	[ "$(jq .exit_code <<<"$out")" = 0 ] || die "ExecSync $*: exit $(jq .exit_code <<<"$out"): $(jq -r .stderr <<<"$out")"
	jq -r .stdout <<<"$out"
}

# xs_rc CID CMD...: ExecSync; prints the exit code.
xs_rc() {
	local id=$1 out
	shift
	out=$(cri call ExecSync "$(exec_req "$id" "$@")") || die "ExecSync $*: $out"
	jq .exit_code <<<"$out"
}

rm_pod() {
	local sid
	sid=$(cat "$D/pods/$1.id" 2>/dev/null) || return 0
	cri call StopPodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || die "StopPodSandbox $1"
	cri call RemovePodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || die "RemovePodSandbox $1"
	rm -f "$D/pods/$1.id"
}

SLEEP='["sleep","3600"]'

# main_pod HANDLER: the pod most steps use (pod network, shared PID namespace, containers c1
# and c2 running sleep, or those of MAIN_POD_CONTAINERS), made on first use; later steps
# reuse it. Prints nothing.
main_pod() {
	local h=$1 c
	[ -e "$D/pods/main-$h.done" ] && return 0
	run_pod "$h" "main-$h" >/dev/null
	for c in ${MAIN_POD_CONTAINERS:-c1 c2}; do
		run_ctr "main-$h" "$c" "$SLEEP" >"$D/pods/main-$h.$c" || exit 1
	done
	touch "$D/pods/main-$h.done"
}
c1() { cat "$D/pods/main-$1.c1"; }
c2() { cat "$D/pods/main-$1.c2"; }

# ---------------------------------------------------------------------------------------
# Steps that both suites run (step_NAME HANDLER)

# no_v2_memory HANDLER WHAT: ward on a host whose cgroup v2 lacks the memory controller (a
# hybrid host, where ward puts pods): a host skip that points at the VM suite
no_v2_memory() {
	[ "$1" = ward ] && ! v2_has memory &&
		host_skip "hybrid cgroups: no memory controller in cgroup v2, where ward puts pods: $2; tested in the VM (tests/vm/cri.bats)"
	return 0
}

step_stats() {
	local h=$1 out
	main_pod "$h"
	out=$(cri call ContainerStats "{\"container_id\": \"$(c1 "$h")\"}") || die "ContainerStats: $out"
	jq -e '.stats.cpu.timestamp != "0" and (.stats.cpu.usage_core_nano_seconds.value | tonumber) > 0' \
		<<<"$out" >/dev/null || die "ContainerStats without cpu usage: $out"
	if ! jq -e '.stats.memory.timestamp != "0" and (.stats.memory.working_set_bytes.value | tonumber) > 0' \
		<<<"$out" >/dev/null; then
		echo "ContainerStats without memory usage: $out"
		no_v2_memory "$h" "memory stats are 0"
		exit 1
	fi
}

# UpdateContainerResources lowers c1's memory limit to 64 MiB: the limit is visible from
# inside (cgroup v1 memory controller or cgroup v2 memory.max), and an ExecSync that
# allocates beyond it is OOM-killed (exit 137) while c1 runs on
step_update() {
	local h=$1 out rc st
	main_pod "$h"
	out=$(cri call UpdateContainerResources "$(jq -nc --arg id "$(c1 "$h")" '{container_id: $id, linux: {cpu_shares: 512, cpu_period: 100000, cpu_quota: 50000, memory_limit_in_bytes: 67108864}}')") ||
		die "UpdateContainerResources: $out"
	out=$(xs "$(c1 "$h")" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max 2>/dev/null || true') || exit 1
	if [ "$out" != 67108864 ]; then
		echo "memory limit inside: '$out'"
		no_v2_memory "$h" "the memory limit is not applied (missing_controllers: warn)"
		exit 1
	fi
	rc=$(xs_rc "$(c1 "$h")" sh -c 'x=a; while :; do x=$x$x; done') || exit 1
	[ "$rc" = 137 ] || die "an allocation beyond the updated limit ended with exit $rc, not 137 (OOM kill)"
	st=$(cri call ContainerStatus "{\"container_id\": \"$(c1 "$h")\"}") || die "$st"
	[ "$(jq -r .status.state <<<"$st")" = CONTAINER_RUNNING ] || die "c1 after the OOM kill of its exec: $st"
}

# a container with a memory limit that allocates beyond it: OOM-killed, and CRI reports
# reason OOMKilled (from the shim's /tasks/oom event) and exit code 137
step_oom() {
	local h=$1 id st
	# without a memory controller nothing would stop the allocation
	no_v2_memory "$h" "no memory limit, no OOM kill"
	[ "$h" = ward ] || v2_has memory || [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
		host_skip "no memory controller"
	main_pod "$h"
	id=$(run_ctr "main-$h" oom '["sh","-c","echo up; x=a; while :; do x=$x$x; done"]' \
		'.linux.resources.memory_limit_in_bytes = 33554432') || exit 1
	st=$(cri wait-container "$id" CONTAINER_EXITED 120) || die "the oom container did not exit: $st"
	[ "$(jq -r .reason <<<"$st")" = OOMKilled ] && [ "$(jq .exit_code <<<"$st")" = 137 ] ||
		die "oom container: reason $(jq -r .reason <<<"$st"), exit code $(jq .exit_code <<<"$st"): $st"
	cri call RemoveContainer "{\"container_id\": \"$id\"}" >/dev/null || die "RemoveContainer oom"
}

step_stop_grace() {
	local h=$1 id st t0 t1
	main_pod "$h"
	# a TERM handler: stops at once with its own exit code (42, not 137: no SIGKILL), long
	# before the grace period
	id=$(run_ctr "main-$h" graceful '["sh","-c","trap \"echo got-TERM; exit 42\" TERM; echo up; while :; do sleep 0.1; done"]') || exit 1
	cri wait-container "$id" CONTAINER_RUNNING 30 >/dev/null || die "graceful not running"
	local log i
	log="$(jq -r .log_directory "$D/pods/main-$h.json")/graceful/0.log"
	for i in $(seq 1 100); do grep -q ' up$' "$log" 2>/dev/null && break; sleep 0.1; done
	cri call StopContainer "{\"container_id\": \"$id\", \"timeout\": 30}" >/dev/null || die "StopContainer graceful"
	st=$(cri call ContainerStatus "{\"container_id\": \"$id\"}")
	[ "$(jq -r .status.state <<<"$st")" = CONTAINER_EXITED ] && [ "$(jq .status.exit_code <<<"$st")" = 42 ] ||
		die "graceful: $st"
	grep -q 'got-TERM' "$log" || die "no TERM in the log: $(cat "$log")"
	# TERM ignored: SIGKILL once the grace period (1 s) is over
	id=$(run_ctr "main-$h" stubborn '["sh","-c","trap \"\" TERM; while :; do sleep 0.1; done"]') || exit 1
	cri wait-container "$id" CONTAINER_RUNNING 30 >/dev/null || die "stubborn not running"
	t0=$(date +%s%N)
	cri call StopContainer "{\"container_id\": \"$id\", \"timeout\": 1}" >/dev/null || die "StopContainer stubborn"
	t1=$(date +%s%N)
	st=$(cri call ContainerStatus "{\"container_id\": \"$id\"}")
	[ "$(jq -r .status.state <<<"$st")" = CONTAINER_EXITED ] && [ "$(jq .status.exit_code <<<"$st")" = 137 ] ||
		die "stubborn: $st"
	[ $(((t1 - t0) / 1000000)) -ge 1000 ] || die "stubborn was killed before its grace period"
	for id in $(jq -r '.containers[] | select(.metadata.name == "graceful" or .metadata.name == "stubborn") | .id' \
		<<<"$(cri call ListContainers)"); do
		cri call RemoveContainer "{\"container_id\": \"$id\"}" >/dev/null
	done
}


# remove every pod of the handler, then nothing may be left: pods, containers, netns, mounts,
# cgroups, ward's ID slices and state, runc's state, shims
step_teardown() {
	local h=$1 sid id left i
	for sid in $(cri call ListPodSandbox | jq -r --arg h "$h" '.items[] | select(.runtime_handler == $h) | .id'); do
		cri call StopPodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || die "StopPodSandbox $sid"
		cri call RemovePodSandbox "{\"pod_sandbox_id\": \"$sid\"}" >/dev/null || die "RemovePodSandbox $sid"
	done
	rm -f "$D"/pods/*-"$h".id
	# kubelet removes the pod cgroups once the pods are gone
	kubelet_cgroup_cleanup
	left=$(find /sys/fs/cgroup -mindepth 1 -type d -name 'pod*' 2>/dev/null | grep -F -f "$D/uids")
	[ -z "$left" ] || die "pod cgroups left: $left"
	left=$(cri call ListPodSandbox | jq -r '.items[] | "\(.id) \(.runtime_handler)"')
	[ -z "$left" ] || die "pods left: $left"
	left=$(cri call ListContainers | jq -r '.containers[] | .id')
	[ -z "$left" ] || die "containers left: $left"
	left=$(ls "$D/state/io.containerd.grpc.v1.cri/netns" 2>/dev/null)
	[ -z "$left" ] || die "netns left: $left"
	left=$(awk -v d="$D/state/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo)
	[ -z "$left" ] || die "mounts left: $left"
	left=$(ls "$D/ipam/wcri" 2>/dev/null | grep -v -e '^lock$' -e '^last_reserved_ip')
	[ -z "$left" ] || die "CNI addresses left: $left"
	for i in $(seq 1 100); do
		[ -z "$(cri_shim_pids)" ] && break
		sleep 0.1
	done
	[ -z "$(cri_shim_pids)" ] || die "shims left: $(cri_shim_pids)"
	left=$(sort -u "$D/sockets" 2>/dev/null | while read -r s; do [ -e "$s" ] && echo "$s"; done)
	[ -z "$left" ] || die "shim sockets left: $left"
	left=
	cri_known_ids >"$D/ids.now"
	for id in $(cat "$D/ids.now"); do
		[ -e "/run/containerd/ward/k8s.io/$id" ] && left+=" ward-state:$id"
		[ -e "/run/containerd/runc/k8s.io/$id" ] && left+=" runc-state:$id"
	done
	[ -z "$left" ] || die "left behind:$left"
	if [ -s "$D/ids.now" ]; then
		# any cgroup (v1 hierarchies and v2, wherever a runtime puts it), mount or process
		# that names one of the ids
		left=$(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | grep -F -f "$D/ids.now")
		[ -z "$left" ] || die "cgroups left: $left"
		left=$(grep -F -f "$D/ids.now" /proc/self/mountinfo)
		[ -z "$left" ] || die "mounts left: $left"
	fi
	if [ -d "$D/ward-lib/idpool2.d" ]; then
		left=$(find "$D/ward-lib/idpool2.d" -mindepth 1 -name '[0-9]*' -size +0)
		[ -z "$left" ] || die "ID slices left in $D/ward-lib/idpool2.d: $left"
	fi
}
