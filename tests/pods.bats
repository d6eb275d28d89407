#!/usr/bin/env bats
# Kubernetes pods under the tenant policy (built-in configuration, its default tenant), as
# containerd 1.6's CRI plugin shapes them (/work/shared/reference/kubernetes-pods.md), with
# bare bundles: the sandbox joins a network namespace the host made (`ip netns add`, as
# CRI's netns, owned by the host's user namespace) and creates the pod's user namespace
# and its ipc/uts/pid; app containers join the sandbox's net/ipc/uts (and pid) by
# /proc/<sandbox pid>/ns/X and, added by the policy, its user namespace.

WARD_CONFIG=
load helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
}

# make_netns: a network namespace made by the host, as CRI's (removed at teardown). Sets
# NETNS (its name) and NETNS_PATH.
make_netns() {
	NETNS="ward-pod-$$-$BATS_TEST_NUMBER"
	ip netns add "$NETNS" || fail "ip netns add $NETNS"
	on_teardown "ip netns delete $NETNS"
	NETNS_PATH="/run/netns/$NETNS"
	nsenter --net="$NETNS_PATH" ip link set lo up
}

# sandbox_bundle NAME: a pod sandbox (its own sandbox id) joining $NETNS_PATH, with new
# pid/ipc/uts/mount namespaces and no user namespace (the policy adds one). Sets SB.
sandbox_bundle() {
	SB=$(cid "$1")
	make_bundle "$1" '.annotations["io.kubernetes.cri.sandbox-id"] = $s
		| .annotations["io.kubernetes.cri.container-type"] = "sandbox"
		| .annotations["io.kubernetes.cri.sandbox-namespace"] = "default"
		| .linux.namespaces = [{type: "pid"}, {type: "ipc"}, {type: "uts"}, {type: "mount"},
			{type: "network", path: $n}]
		| del(.linux.uidMappings, .linux.gidMappings)' --arg s "$SB" --arg n "$NETNS_PATH"
}

# app_bundle NAME: an app container of pod $SB joining its net/ipc/uts/pid by path, no
# user namespace in its spec (as CRI writes it)
app_bundle() {
	make_bundle "$1" '.annotations["io.kubernetes.cri.sandbox-id"] = $s
		| .annotations["io.kubernetes.cri.container-type"] = "container"
		| .annotations["io.kubernetes.cri.sandbox-namespace"] = "default"
		| .linux.namespaces = [{type: "mount"}, {type: "network", path: "/proc/\($p)/ns/net"},
			{type: "ipc", path: "/proc/\($p)/ns/ipc"}, {type: "uts", path: "/proc/\($p)/ns/uts"},
			{type: "pid", path: "/proc/\($p)/ns/pid"}]
		| del(.hostname, .linux.uidMappings, .linux.gidMappings)' --arg s "$SB" --arg p "$SBPID"
}

# listening ID PORT: poll until something listens on PORT in $NETNS, or container ID is
# no longer running (its program failed): the outcome, not a sleep, decides
listening() {
	local i
	for ((i = 0; i < 200; i++)); do
		nsenter --net="$NETNS_PATH" ss -Hltn "sport = :$2" | grep -q . && return 0
		[ "$(status_of "$1")" = running ] || break
		sleep 0.05
	done
	nsenter --net="$NETNS_PATH" ss -Hltn "sport = :$2" | grep -q .
}

@test "pods: a sandbox joining a netns the host made (ip netns add) starts in its own user namespace" {
	make_netns
	sandbox_bundle sb
	set_args sleep 1000
	start_container "$SB"
	SBPID=$(init_pid "$SB")
	[ "$(readlink "/proc/$SBPID/ns/net")" = "$(nsenter --net="$NETNS_PATH" readlink /proc/self/ns/net)" ] ||
		fail "the sandbox is not in $NETNS"
	[ "$(readlink "/proc/$SBPID/ns/user")" != "$(host_ns user)" ] || fail "no user namespace of its own"
	ward delete -f "$SB"
}

@test "pods: app containers join the sandbox's user namespace, mount /proc and /dev/mqueue, write / of an idmapped root, and own what they create by the pod's range" {
	make_netns
	sandbox_bundle sb
	set_args sleep 1000
	start_container "$SB"
	SBPID=$(init_pid "$SB")
	start=$(awk 'NR == 1 {print $2}' "/proc/$SBPID/uid_map")
	[ "$start" != 0 ] || fail "the sandbox's user namespace maps host 0"
	for n in app1 app2; do
		app_bundle "$n"
		set_cmd 'grep -q " /proc proc " /proc/mounts && grep -q " /dev/mqueue mqueue " /proc/mounts &&
			touch /made-by-app && stat -c %u:%g /made-by-app >/seen && exec sleep 1000'
		id=$(cid "$n")
		start_container "$id"
		wait_file "$BUNDLE/rootfs/made-by-app" || fail "$n: $(container_out "$id")"
		pid=$(init_pid "$id")
		[ "$(readlink "/proc/$pid/ns/user")" = "$(readlink "/proc/$SBPID/ns/user")" ] ||
			fail "$n is not in the sandbox's user namespace"
		[ "$(readlink "/proc/$pid/ns/ipc")" = "$(readlink "/proc/$SBPID/ns/ipc")" ] || fail "$n: ipc"
		# its root is the pod's first host ID; through the idmapped root what it makes is
		# its own (root's inside; on disk the image's owner, as for the sandbox)
		[ "$(awk '/^Uid:/ {print $3}' "/proc/$pid/status")" = "$start" ] ||
			fail "$n: root runs as host uid $(awk '/^Uid:/ {print $3}' "/proc/$pid/status"), not $start"
		wait_file "$BUNDLE/rootfs/seen"
		[ "$(cat "$BUNDLE/rootfs/seen")" = 0:0 ] || fail "$n: /made-by-app is $(cat "$BUNDLE/rootfs/seen") inside"
		[ "$(stat -c %u "$BUNDLE/rootfs/made-by-app")" = "$(stat -c %u "$BUNDLE/rootfs")" ] ||
			fail "$n: on disk not the image root's owner"
	done
	ward delete -f "$(cid app1)"
	ward delete -f "$(cid app2)"
	ward delete -f "$SB"
}

@test "pods: /sys in a joined host-owned netns is that netns's own sysfs, read-only: the host's devices are not seen" {
	make_netns
	nsenter --net="$NETNS_PATH" ip link add ward-pod0 type veth peer name ward-pod1 || fail "ip link add (veth)"
	sandbox_bundle sb
	set_cmd 'grep " /sys " /proc/mounts; if touch /sys/kernel/ward-x 2>/dev/null; then echo WRITABLE; fi; echo NET: $(ls /sys/class/net)'
	run --separate-stderr ward run -b "$BUNDLE" "$SB" </dev/null
	[ "$status" -eq 0 ] || fail "run: $stderr"
	[[ "$output" == *" /sys sysfs ro,"* ]] || fail "/sys is not read-only sysfs: $output"
	[[ "$output" != *WRITABLE* ]] || fail "/sys is writable"
	# the pod's netns's devices, exactly (a bind of the host's /sys would list the host's)
	[[ "$output" == *"NET: lo ward-pod0 ward-pod1"* ]] || fail "/sys/class/net is not the pod's: $output (host: $(ls /sys/class/net | tr '\n' ' '))"
}

@test "pods: no rlimit is raised: a lowered NOFILE hard limit of the caller is not exceeded" {
	# as CRI writes it: no rlimits
	make_bundle nofile 'del(.process.rlimits)'
	set_cmd 'ulimit -Hn'
	ID=$(cid run)
	run --separate-stderr prlimit --nofile=1000:4000 env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" run -b "$BUNDLE" "$ID" </dev/null
	[ "$status" -eq 0 ] || fail "run: $stderr"
	[ "$output" -le 4000 ] || fail "NOFILE hard limit raised to $output"
}

@test "pods: a pod's root binds port 80 in its host-owned netns (ip_unprivileged_port_start=0)" {
	make_netns
	sandbox_bundle sb
	set_args nc -l -p 80
	start_container "$SB"
	listening "$SB" 80 || fail "nothing listens on port 80: $(cat "$BATS_TEST_TMPDIR/$SB.err" "$BATS_TEST_TMPDIR/$SB.out")"
	[ "$(nsenter --net="$NETNS_PATH" cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" = 0 ]
	ward delete -f "$SB"
}

@test "pods: a pod's net sysctls (CRI's safe sysctls) are set in its host-owned netns" {
	make_netns
	sandbox_bundle sb
	config_edit '.linux.sysctl = {"net.ipv4.ip_local_port_range": "40000 50000", "kernel.shm_rmid_forced": "1"}'
	set_cmd 'cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/kernel/shm_rmid_forced'
	run --separate-stderr ward run -b "$BUNDLE" "$SB" </dev/null
	[ "$status" -eq 0 ] || fail "run: $stderr"
	[ "$(echo $output)" = "40000 50000 1" ] || fail "sysctls: $output"
}

cgroup_of() {
	awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup"
}

# kube_cgroup NAME UID PATH: app container NAME of pod $SB recording pod uid UID, with the
# cgroupsPath PATH (ID in it: the container's id). Sets ID.
kube_cgroup() {
	app_bundle "$1"
	ID=$(cid "$1")
	config_edit '.annotations["io.kubernetes.cri.sandbox-uid"] = $u | .linux.cgroupsPath = ($p | sub("ID"; $i))' \
		--arg u "$2" --arg p "$3" --arg i "$ID"
	set_args sleep 1000
}

@test "pods: with kubelet's cgroupsPath (cgroupfs and systemd drivers) a pod's containers stay in its kubelet pod cgroup; another pod's uid goes below /ward/<tenant>/, another pod's sandbox is refused there" {
	local uid="u$$-$RANDOM" other="o$$-$RANDOM" pod slice a b c
	pod="$CG2/kubepods/burstable/pod$uid"
	slice="$CG2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice"
	# kubelet makes the pod cgroup before it asks for the sandbox (and removes it). The
	# CRI suite's kubepods/besteffort and kubepods stay: a CRI run may be using them.
	on_teardown "rmdir '$pod' '$slice' '$CG2/kubepods/burstable' '$CG2/kubepods.slice/kubepods-burstable.slice' '$CG2/kubepods.slice' 2>/dev/null || true"
	mkdir -p "$pod" "$slice"
	make_netns
	sandbox_bundle sb
	config_edit '.annotations["io.kubernetes.cri.sandbox-uid"] = $u | .linux.cgroupsPath = $p' \
		--arg u "$uid" --arg p "/kubepods/burstable/pod$uid/$SB"
	set_args sleep 1000
	run --separate-stderr ward policy explain --id "$SB" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "policy explain: $stderr"
	assert_output --partial "linux.cgroupsPath: /kubepods/burstable/pod$uid/$SB (this pod's kubelet pod cgroup, kept)"
	start_container "$SB"
	SBPID=$(init_pid "$SB")
	assert_equal "$(cgroup_of "$SBPID")" "/kubepods/burstable/pod$uid/$SB"

	# an app container, cgroupfs driver
	kube_cgroup a "$uid" "/kubepods/burstable/pod$uid/ID"
	a=$ID
	start_container "$a"
	assert_equal "$(cgroup_of "$(init_pid "$a")")" "/kubepods/burstable/pod$uid/$a"
	# systemd driver: slice:prefix:name, mapped as systemd places it, in kubelet's slice
	kube_cgroup b "$uid" "kubepods-burstable-pod${uid//-/_}.slice:cri-containerd:ID"
	b=$ID
	start_container "$b"
	assert_equal "$(cgroup_of "$(init_pid "$b")")" \
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice/cri-containerd-$b.scope"
	# another pod's uid, even with the container's own annotation naming it: the uid is
	# the one this pod's sandbox recorded, so the path goes below the tenant's cgroup
	kube_cgroup c "$other" "/kubepods/burstable/pod$other/ID"
	c=$ID
	mkdir -p "$CG2/kubepods/burstable/pod$other"
	on_teardown "rmdir '$CG2/kubepods/burstable/pod$other' 2>/dev/null || true"
	start_container "$c"
	assert_equal "$(cgroup_of "$(init_pid "$c")")" "/ward/default/kubepods/burstable/pod$other/$c"
	[ ! -e "$CG2/kubepods/burstable/pod$other/$c" ] || fail "placed in another pod's kubelet cgroup"
	# a sandbox of another pod recording this pod's uid: the pod cgroup holds this pod's
	# containers, so it is refused, nothing made
	local sb1=$SB
	sandbox_bundle sb2
	config_edit '.annotations["io.kubernetes.cri.sandbox-uid"] = $u | .linux.cgroupsPath = $p' \
		--arg u "$uid" --arg p "/kubepods/burstable/pod$uid/$SB"
	set_args sleep 1000
	run --separate-stderr ward run -b "$BUNDLE" "$SB" </dev/null
	[ "$status" -ne 0 ] || fail "another pod's sandbox was placed in this pod's kubelet cgroup"
	[[ "$stderr" == *"tenant \"default\": cgroup: kubelet's pod cgroup $pod holds container \""*"\" of another pod ($sb1)"* ]] ||
		fail "$stderr"
	[ ! -e "$pod/$SB" ] && [ ! -e "$STATE/$SB" ] || fail "left behind"
	SB=$sb1

	for id in "$c" "$b" "$a" "$SB"; do ward delete -f "$id"; done
	[ ! -e "$pod/$a" ] && [ ! -e "$pod/$SB" ] && [ ! -e "$slice/cri-containerd-$b.scope" ] ||
		fail "a container's cgroup was left in kubelet's pod cgroup"
	[ -d "$pod" ] && [ -d "$slice" ] || fail "kubelet's pod cgroup was removed"
}
