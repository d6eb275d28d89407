#!/usr/bin/env bats
# Pod identity (security issue 6a): the ID-pool owner of a pod-mode tenant's container is
# "pod:<tenant>/<sandbox id>", so a container that names another pod's
# io.kubernetes.cri.sandbox-id would share that pod's ID slice. ward accepts a sandbox id
# other than the container's own only when the container really is in that pod: the
# sandbox container exists in the same state root, runs, and the container joins at least
# one of its ipc, uts or network namespaces (as CRI's app containers do, by
# /proc/<pause pid>/ns/X).

WARD_CONFIG=
load ../helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
}

# users OWNER: the containers using OWNER's allocation
pool_users() {
	pool_allocs | jq -r --arg o "$1" 'select(.owner == $o) | .users[]'
}

host_uid() { awk '{print $2}' "/proc/$1/uid_map"; }

# start_sandbox NAME: a running pod sandbox (its own sandbox id); sets SB and SBPID
start_sandbox() {
	SB=$(cid "$1")
	make_bundle "$1" '.annotations["io.kubernetes.cri.sandbox-id"] = $s
		| .annotations["io.kubernetes.cri.container-type"] = "sandbox"' --arg s "$SB"
	set_args sleep 1000
	start_container "$SB"
	SBPID=$(init_pid "$SB")
}

# app_bundle NAME SANDBOX: an app container of pod SANDBOX (no namespace of it joined yet)
app_bundle() {
	make_bundle "$1" '.annotations["io.kubernetes.cri.sandbox-id"] = $s
		| .annotations["io.kubernetes.cri.container-type"] = "container" | del(.hostname)' --arg s "$2"
	set_args sleep 1000
}

# join_pod PID NS...: join the user namespace (the pod's, as ward's pods will) and the
# given namespaces of PID by /proc path, as CRI's app containers do
join_pod() {
	local pid=$1 ns
	shift
	set_ns user "/proc/$pid/ns/user"
	config_edit 'del(.linux.uidMappings, .linux.gidMappings)'
	for ns in "$@"; do set_ns "$ns" "/proc/$pid/ns/$ns"; done
}

# refused ID TEXT: `ward create` of $BUNDLE as ID fails with one line containing TEXT and
# leaves nothing of ID (state, cgroup, pool users; the pod's processes run on)
refused() {
	ward_capture create -b "$BUNDLE" "$1"
	[ "$status" -ne 0 ] || fail "created $1"
	assert_one_line "$stderr"
	[[ "$stderr" == *"$2"* ]] || fail "expected '$2' in: $stderr"
	[ ! -e "$STATE/$1" ] || fail "state dir of $1 left behind"
	[ -z "$(find "$CG2" -name "$1" -type d 2>/dev/null)" ] || fail "cgroup of $1 left behind"
	! pool_allocs | grep -qF "\"$1\"" || fail "$1 is a pool user: $(pool_allocs)"
}

@test "a container naming another pod's sandbox id is refused unless it joins the pod's namespaces; one that joins ipc and uts shares the pod's slice" {
	start_sandbox sb
	# an intruder: names the pod, joins nothing of it
	app_bundle intruder "$SB"
	x=$(cid intruder)
	refused "$x" "container \"$x\": annotation io.kubernetes.cri.sandbox-id=$SB: the container does not join pod $SB's namespaces"
	[ "$(pool_users "pod:default/$SB")" = "$SB" ] || fail "pool: $(pool_allocs)"
	# joining the pod's user namespace alone is not joining the pod (and a uts namespace
	# of its own is not the pod's)
	app_bundle intruder2 "$SB"
	join_pod "$SBPID"
	set_ns uts /proc/self/ns/uts
	refused "$(cid intruder2)" "does not join pod $SB's namespaces"
	# an app container as CRI makes it: joins the sandbox's ipc and uts by /proc path
	app_bundle app "$SB"
	join_pod "$SBPID" ipc uts
	a=$(cid app)
	start_container "$a"
	apid=$(init_pid "$a")
	[ "$(readlink "/proc/$apid/ns/ipc")" = "$(readlink "/proc/$SBPID/ns/ipc")" ]
	[ "$(host_uid "$apid")" = "$(host_uid "$SBPID")" ] || fail "not the pod's slice: $(host_uid "$apid") vs $(host_uid "$SBPID")"
	[ "$(pool_users "pod:default/$SB" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$SB" "$a" | sort | tr '\n' ' ')" ] ||
		fail "pool: $(pool_allocs)"
}

@test "a sandbox id that names no running sandbox is refused: missing, stopped, or itself in another pod" {
	app_bundle b "no-such-pod"
	refused "$(cid b)" "annotation io.kubernetes.cri.sandbox-id=no-such-pod: the container does not join pod no-such-pod's namespaces (no such container in this state root)"
	[ -z "$(pool_owners)" ] || fail "pool: $(pool_owners)"
	# a stopped sandbox: its namespaces are gone, and so is the pod
	start_sandbox sb1
	ward kill "$SB" KILL
	wait_status "$SB" stopped
	app_bundle c "$SB"
	join_pod "$SBPID" ipc
	# (refused by its pid's namespace files being gone, or by the sandbox's state)
	refused "$(cid c)" ""
	[[ "$stderr" == *"(the sandbox container is not running)"* ]] ||
		[[ "$stderr" == *"/proc/$SBPID/ns/ipc: No such file or directory"* ]] || fail "$stderr"
	# a container of a pod is not a sandbox of its own
	start_sandbox sb2
	app_bundle d "$SB"
	join_pod "$SBPID" ipc
	d=$(cid d)
	start_container "$d"
	app_bundle e "$d"
	join_pod "$(init_pid "$d")" ipc
	refused "$(cid e)" "that container is not a pod sandbox"
}

@test "podman's io.kubernetes.cri-o.SandboxID: an intruder naming a running pod without joining it is a container alone (its own slice, not the pod's); one that joins the pod's ipc and uts is a member" {
	start_sandbox sb
	# an intruder: names the pod in CRI-O's/podman's key, joins nothing of it
	make_bundle intr '.annotations["io.kubernetes.cri-o.SandboxID"] = $s | del(.hostname)' --arg s "$SB"
	set_args sleep 1000
	x=$(cid intr)
	start_container "$x"
	[ "$(host_uid "$(init_pid "$x")")" != "$(host_uid "$SBPID")" ] || fail "the intruder has the pod's slice"
	[ "$(pool_users "pod:default/$SB")" = "$SB" ] || fail "pool: $(pool_allocs)"
	[ "$(pool_users "pod:default/$x")" = "$x" ] || fail "the intruder is not alone: $(pool_allocs)"
	[ "$(jq -r '.pod.id // empty' "$STATE/$x/state.json")" != "$SB" ] || fail "the intruder's state names the pod"
	# a member as podman makes it: joins the infra's ipc and uts by /proc path
	make_bundle mem '.annotations["io.kubernetes.cri-o.SandboxID"] = $s | del(.hostname)' --arg s "$SB"
	set_args sleep 1000
	join_pod "$SBPID" ipc uts
	m=$(cid mem)
	start_container "$m"
	[ "$(host_uid "$(init_pid "$m")")" = "$(host_uid "$SBPID")" ] || fail "the member has not the pod's slice"
	[ "$(pool_users "pod:default/$SB" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$SB" "$m" | sort | tr '\n' ' ')" ] ||
		fail "pool: $(pool_allocs)"
}

@test "a pod member binds its sandbox's containers/storage userdata files only when the sandbox's bundle was that userdata directory" {
	local st="$BATS_TEST_TMPDIR/storage"
	mkdir -p "$st/root" "$st/run"
	jq --arg r "$st/root" --arg u "$st/run" '.containers_storage = {root: $r, runroot: $u}' \
		"$CONF/ward.json" >"$CONF/ward.json.new"
	mv "$CONF/ward.json.new" "$CONF/ward.json"
	chmod 0755 "$BATS_TEST_TMPDIR" "$st" "$st/root" "$st/run"
	# a sandbox whose bundle is elsewhere, with userdata files in the storage all the same
	start_sandbox sb
	mkdir -p "$st/run/overlay-containers/$SB/userdata"
	echo "127.0.0.1 sb" >"$st/run/overlay-containers/$SB/userdata/hosts"
	make_bundle m '.annotations["io.kubernetes.cri-o.SandboxID"] = $s | del(.hostname)' --arg s "$SB"
	set_args sleep 1000
	join_pod "$SBPID" ipc uts
	add_mount "$(jq -nc --arg s "$st/run/overlay-containers/$SB/userdata/hosts" \
		'{destination: "/etc/hosts", type: "bind", source: $s, options: ["rbind", "ro"]}')"
	refused "$(cid m)" 'tenant "default": host_paths:'
	# a sandbox whose bundle is its userdata directory (podman's layout): its member may
	sb2=$(cid sb2)
	ud="$st/root/overlay-containers/$sb2/userdata"
	make_bundle sb2 '.annotations["io.kubernetes.cri.sandbox-id"] = $s
		| .annotations["io.kubernetes.cri.container-type"] = "sandbox"' --arg s "$sb2"
	set_args sleep 1000
	mkdir -p "$(dirname "$ud")" "$st/run/overlay-containers/$sb2/userdata"
	cp -a "$BUNDLE" "$ud"
	echo "127.0.0.1 sb2" >"$st/run/overlay-containers/$sb2/userdata/hosts"
	ward create -b "$ud" "$sb2" </dev/null >/dev/null
	ward start "$sb2"
	make_bundle m2 '.annotations["io.kubernetes.cri-o.SandboxID"] = $s | del(.hostname)' --arg s "$sb2"
	set_cmd 'cat /etc/hosts'
	join_pod "$(init_pid "$sb2")" ipc uts
	add_mount "$(jq -nc --arg s "$st/run/overlay-containers/$sb2/userdata/hosts" \
		'{destination: "/etc/hosts", type: "bind", source: $s, options: ["rbind", "ro"]}')"
	run_container
	assert_success
	assert_output "127.0.0.1 sb2"
	# never the directory itself
	make_bundle m3 '.annotations["io.kubernetes.cri-o.SandboxID"] = $s | del(.hostname)' --arg s "$sb2"
	set_args sleep 1000
	join_pod "$(init_pid "$sb2")" ipc uts
	add_mount "$(jq -nc --arg s "$st/run/overlay-containers/$sb2/userdata" \
		'{destination: "/ud", type: "bind", source: $s, options: ["rbind"]}')"
	refused "$(cid m3)" 'tenant "default": host_paths:'
	ward delete -f "$sb2"
}
