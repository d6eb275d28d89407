#!/usr/bin/env bats
# The tenant layer on the host: configuration, tenant selection, ID ranges, idmapped
# mounts, the policy's refusals, cgroup layout, `policy explain`. Each test runs with its own
# configuration directory (so /etc/ward on the machine does not matter) and its own ID pool.

WARD_CONFIG=
load helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
	# a tenant name no other test run on this machine uses (cgroup dirs are global)
	TN="t$$-$BATS_TEST_NUMBER"
}

# tenant NAME JSON: write tenants.d/NAME.json
tenant() {
	printf '%s\n' "$2" >"$CONF/tenants.d/$1.json"
}

# ward.json with extra keys merged in
global() {
	jq --arg lib "$LIB" ". + {lib_dir: \$lib}" <<<"$1" >"$CONF/ward.json"
}

host_uid_map() {
	cat "/proc/$1/uid_map"
}

# in_pool OWNER: the pool has an allocation for OWNER
in_pool() {
	pool_owners | grep -qxF "$1"
}

# sandbox_then_member_spec A: start sandbox A (its bundle names it as its own sandbox; pid
# in $pa), then make $BUNDLE a member's: A's user and ipc namespaces joined by path.
sandbox_then_member_spec() {
	make_bundle b '.annotations["io.kubernetes.cri.sandbox-id"] = $p' --arg p "$1"
	set_args sleep 1000
	start_container "$1"
	pa=$(ward state "$1" | jq -r .pid)
	config_edit 'del(.linux.uidMappings, .linux.gidMappings)
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "user" and .type != "ipc")]
			+ [{type: "user", path: "/proc/\($p)/ns/user"}, {type: "ipc", path: "/proc/\($p)/ns/ipc"}]' --arg p "$pa"
}

@test "default tenant: container root is not host root; the rootfs is idmapped, nothing chowned" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(ward state "$id" | jq -r .pid)
	read -r inside host size < <(host_uid_map "$pid")
	[ "$inside" = 0 ] && [ "$size" = 65536 ] || fail "uid_map: $(host_uid_map "$pid")"
	[ "$host" -ge 524288 ] || fail "container root is host uid $host"
	[ "$(awk '{print $2}' "/proc/$pid/gid_map")" = "$host" ]
	# the container's init runs as the tenant's host uid
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" = "$host" ]
	# root inside owns the image's files and can write to them; on disk they stay uid 0
	run ward exec "$id" sh -c 'stat -c %u /bin/busybox; echo hi >/root/written; stat -c %u /root/written'
	assert_success
	assert_output $'0\n0'
	[ "$(stat -c %u "$BUNDLE/rootfs/bin/busybox")" = 0 ]
	[ "$(stat -c %u "$BUNDLE/rootfs/root/written")" = 0 ]
	# a file on a filesystem the container mounted itself belongs to the tenant's range
	ward exec "$id" sh -c 'echo x >/dev/shm/mine'
	owner=$(stat -c %u "/proc/$pid/root/dev/shm/mine")
	[ "$owner" -ge "$host" ] && [ "$owner" -lt $((host + 65536)) ] || fail "owned by $owner"
}

@test "default tenant: ambient capabilities go with the inheritable set the policy clears, and the warning says so" {
	make_bundle b '.process.capabilities.inheritable = ["CAP_KILL"] | .process.capabilities.ambient = ["CAP_KILL"]'
	set_cmd 'grep -E "^Cap(Inh|Amb):" /proc/self/status'
	run_container
	assert_success
	assert_line --regexp '^CapInh:[[:space:]]+0+$'
	assert_line --regexp '^CapAmb:[[:space:]]+0+$'
	# (the first create of a boot also warns that the host has no AppArmor)
	! grep -q 'not in both permitted and inheritable' <<<"$stderr" || fail "a bare warning: $stderr"
	[[ "$stderr" == *'warning: process.capabilities.ambient: ["CAP_KILL"] dropped: the tenant policy cleared the inheritable set (CVE-2022-29162)'* ]] ||
		fail "the warning does not say the policy cleared the inheritable set: $stderr"
}

@test "default tenant: no new privileges, bounded capabilities, seccomp filter, masked paths" {
	make_bundle b '.process.capabilities.bounding += ["CAP_NET_RAW", "CAP_MKNOD"]'
	set_cmd 'grep -E "^(NoNewPrivs|Seccomp|CapBnd|CapInh):" /proc/self/status; cat /proc/keys | wc -l; [ ! -e /proc/kcore ] || wc -c </proc/kcore; [ ! -e /proc/sysrq-trigger ] || { echo x >/proc/sysrq-trigger && echo WROTE; }; touch /proc/sys/kernel/ward-test 2>/dev/null && echo WROTE; true'
	run_container
	assert_success
	assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	assert_line --regexp '^CapInh:[[:space:]]+0+$'
	bnd=$(awk '/^CapBnd:/ {print $2}' <<<"$output")
	# CAP_NET_RAW is bit 13, CAP_MKNOD bit 27: dropped although the spec asked for them
	(((0x$bnd >> 13) & 1)) && fail "CAP_NET_RAW kept: $bnd"
	(((0x$bnd >> 27) & 1)) && fail "CAP_MKNOD kept: $bnd"
	refute_line WROTE
	# /proc/keys is masked (empty); /proc/kcore too where the kernel has one
	assert_line --index 4 0
	[ "${#lines[@]}" -le 6 ] || fail "$output"
	[ "${lines[5]:-0}" = 0 ] || fail "kcore readable: $output"
}

@test "ID ranges: pods get disjoint ranges, returned to the pool when the pod goes" {
	make_bundle b
	set_args sleep 1000
	a=$(cid a)
	b=$(cid b)
	start_container "$a"
	start_container "$b"
	ha=$(awk '{print $2}' "/proc/$(ward state "$a" | jq -r .pid)/uid_map")
	hb=$(awk '{print $2}' "/proc/$(ward state "$b" | jq -r .pid)/uid_map")
	[ "$ha" != "$hb" ] || fail "both pods map to $ha"
	[ $((ha > hb ? ha - hb : hb - ha)) -ge 65536 ] || fail "ranges overlap: $ha $hb"
	in_pool "pod:default/$a" || fail "pool: $(pool_owners)"
	in_pool "pod:default/$b" || fail "pool: $(pool_owners)"
	ward delete -f "$a"
	! in_pool "pod:default/$a" || fail "pool: $(pool_owners)"
	in_pool "pod:default/$b" || fail "pool: $(pool_owners)"
}

@test "ID pool: a container joining a pod appends a line to the pod's file (same inode, no rename); idpool.json is the marker an older ward refuses" {
	a=$(cid a)
	b=$(cid b)
	sandbox_then_member_spec "$a"
	f=$(grep -l "\"pod:default/$a\"" "$LIB"/idpool2.d/[0-9]*) || fail "no file for pod:default/$a: $(ls -A "$LIB/idpool2.d")"
	ino=$(stat -c %i "$f")
	start_container "$b"
	[ "$(stat -c %i "$f")" = "$ino" ] || fail "the pod's file was replaced"
	[ "$(tail -n 1 "$f")" = "{\"add\":\"$b\"}" ] || fail "$(cat "$f")"
	ward delete -f "$b"
	[ "$(tail -n 1 "$f")" = "{\"remove\":\"$b\"}" ] || fail "$(cat "$f")"
	assert_equal "$(cat "$LIB/idpool.json")" '{"version": 2, "allocations": "idpool2.d"}'
	ward delete -f "$a"
	[ ! -s "$f" ] || fail "freed pod's file not emptied: $(cat "$f")"
}

@test "ID ranges: containers of one pod share its range; a per-tenant range is shared by the tenant" {
	tenant t '{"ids": "tenant"}'
	# the pod: sandbox a (its own sandbox id) and b, which joins a's user and ipc namespaces
	a=$(cid a)
	b=$(cid b)
	sandbox_then_member_spec "$a"
	start_container "$b"
	ha=$(awk '{print $2}' "/proc/$pa/uid_map")
	hb=$(awk '{print $2}' "/proc/$(ward state "$b" | jq -r .pid)/uid_map")
	[ "$ha" = "$hb" ] || fail "one pod, two ranges: $ha $hb"
	ward delete -f "$b"
	in_pool "pod:default/$a" || fail "pool: $(pool_owners)"
	ward delete -f "$a"
	! in_pool "pod:default/$a" || fail "pool: $(pool_owners)"

	make_bundle c '.annotations["ward.dev/tenant"] = "t"'
	set_args sleep 1000
	c1=$(cid c1)
	c2=$(cid c2)
	start_container "$c1"
	start_container "$c2"
	h1=$(awk '{print $2}' "/proc/$(ward state "$c1" | jq -r .pid)/uid_map")
	h2=$(awk '{print $2}' "/proc/$(ward state "$c2" | jq -r .pid)/uid_map")
	[ "$h1" = "$h2" ] || fail "one tenant, two ranges: $h1 $h2"
}

@test "ID ranges: concurrent creates of many pods never overlap" {
	make_bundle b
	set_args sleep 1000
	local ids=() i
	for i in 1 2 3 4 5 6; do ids+=("$(cid p$i)"); done
	for i in "${ids[@]}"; do create_container "$i" & done
	wait
	run bash -c "for i in ${ids[*]}; do awk '{print \$2}' /proc/\$($WARD --root $STATE state \$i | jq -r .pid)/uid_map; done | sort -n"
	assert_success
	[ "${#lines[@]}" = 6 ] || fail "$output"
	for ((i = 1; i < 6; i++)); do
		[ $((lines[i] - lines[i - 1])) -ge 65536 ] || fail "overlap: $output"
	done
}

@test "fixed ranges: the tenant's range is used; overlapping tenant ranges are a config error" {
	tenant a '{"ids": {"start": 2000000, "size": 65536}}'
	make_bundle b '.annotations["ward.dev/tenant"] = "a"'
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	[ "$(awk '{print $2}' "/proc/$(ward state "$id" | jq -r .pid)/uid_map")" = 2000000 ]
	ward delete -f "$id"
	tenant b '{"ids": {"start": 2030000, "size": 65536}}'
	run_container
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *'tenants "a" (tenants.d/a.json) and "b" (tenants.d/b.json): ID ranges'*overlap* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "tenant selection: annotation, Kubernetes namespace mapping, default; unknown tenant refused" {
	tenant a '{}'
	global '{"namespaces": {"team-a": "a"}}'
	make_bundle b '.annotations["io.kubernetes.cri.sandbox-namespace"] = "team-a"'
	run ward policy explain --json "$BUNDLE"
	assert_success
	[ "$(jq -r .tenant <<<"$output")" = a ]
	[[ "$(jq -r .why <<<"$output")" == *"sandbox-namespace=team-a"* ]]
	make_bundle c '.annotations["ward.dev/tenant"] = "nope"'
	run_container
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *'unknown tenant "nope"'* ]] || fail "$stderr"
	assert_nothing_left "$ID"
	[ -z "$(pool_owners)" ] || fail "pool: $(pool_owners)"
	global '{"default_tenant": null}'
	make_bundle d
	run_container
	assert_failure
	[[ "$stderr" == *"no default tenant is configured"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

@test "tenant selection: the containers of one pod belong to one tenant" {
	tenant a '{}'
	tenant b '{}'
	a=$(cid a)
	make_bundle pa '.annotations["io.kubernetes.cri.sandbox-id"] = $p | .annotations["ward.dev/tenant"] = "a"' --arg p "$a"
	set_args sleep 1000
	start_container "$a"
	make_bundle pb '.annotations["io.kubernetes.cri.sandbox-id"] = $p | .annotations["ward.dev/tenant"] = "b"' --arg p "$a"
	run_container
	assert_failure
	[[ "$stderr" == *"pod \"$a\" already has container \"$a\" of tenant \"a\""* ]] || fail "$stderr"
	[ ! -e "$STATE/$ID" ] && [ ! -d "$CG2/ward/b" ] || fail "left behind"
	! in_pool "pod:b/$a" || fail "pool: $(pool_owners)"
}

@test "policy refusals name the tenant and the rule, and leave nothing behind" {
	tenant "$TN" '{"host_paths": ["/srv/ward-test-allowed"]}'
	local cases=(
		'.mounts += [{"destination": "/h", "type": "bind", "source": "/etc", "options": ["rbind"]}] => host_paths: mounts[7] (/h): source /etc is not under an allowed host path'
		'.mounts += [{"destination": "/h", "type": "bind", "source": "/", "options": ["rbind"]}] => binding the host'"'"'s / is never allowed'
		'.linux.namespaces |= map(select(.type != "network")) => host_namespaces: the pod shares the host'"'"'s network namespace (hostNetwork)'
		'.linux.namespaces |= map(select(.type != "pid")) => host_namespaces: the pod shares the host'"'"'s pid namespace (hostPID)'
		'.process.capabilities.bounding += ["CAP_SYS_MODULE"] => capabilities: process.capabilities.bounding: CAP_SYS_MODULE is not allowed'
		'.process.capabilities.bounding += ["CAP_SYS_ADMIN"] => privileged: the pod asks for CAP_SYS_ADMIN'
		'.linux.devices = [{"path": "/dev/sda", "type": "b", "major": 8, "minor": 0}] => devices: linux.devices[0]: /dev/sda (b 8:0)'
		'.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] | .linux.gidMappings = .linux.uidMappings => ids: linux.uidMappings[0]: host IDs 0-65535 are outside'
		'.mounts += [{"destination": "/t", "type": "tmpfs", "source": "tmpfs", "uidMappings": [{"containerID": 0, "hostID": 0, "size": 1}], "gidMappings": [{"containerID": 0, "hostID": 0, "size": 1}]}] => ids: mounts[7] (/t): uidMappings[0]: host IDs 0-0 are outside'
		'.linux.sysctl = {"kernel.core_pattern": "|/tmp/x"} => sysctl: linux.sysctl: "kernel.core_pattern"'
		'.mounts += [{"destination": "/d", "type": "ext4", "source": "/dev/vda"}] => filesystem type "ext4" is not allowed'
		'.annotations["ward.dev/seccomp"] = "unconfined" => seccomp: annotation ward.dev/seccomp=unconfined'
		'.root.path = "/" => root: root.path / is the host'"'"'s /'
		'.root.path = "/etc" => root: root.path /etc is the host'"'"'s /etc'
	)
	local c filter want n=0
	for c in "${cases[@]}"; do
		filter=${c%% => *}
		want=${c#* => }
		n=$((n + 1))
		make_bundle "b$n" ".annotations[\"ward.dev/tenant\"] = \"$TN\" | $filter"
		run_container
		[ "$status" != 0 ] || fail "not refused: $filter"
		assert_one_line "$stderr"
		[[ "$stderr" == *"tenant \"$TN\": "* && "$stderr" == *"$want"* ]] || fail "for $filter: $stderr"
		assert_nothing_left "$ID"
		[ ! -d "$CG2/ward/$TN" ] || fail "tenant cgroup left after: $filter"
	done
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "host paths: binds under the tenant's prefix are idmapped; a symlink out of it is refused" {
	allowed="$BATS_TEST_TMPDIR/allowed"
	mkdir -p "$allowed/data"
	echo host >"$allowed/data/f"
	ln -s /etc "$allowed/escape"
	tenant a "{\"host_paths\": [\"$allowed\"]}"
	make_bundle b '.annotations["ward.dev/tenant"] = "a" | .mounts += [{"destination": "/data", "type": "bind", "source": $src, "options": ["rbind"]}]' --arg src "$allowed/data"
	set_cmd 'stat -c %u /data/f; cat /data/f; echo new >/data/g'
	run_container
	assert_success
	assert_output $'0\nhost'
	[ "$(stat -c %u "$allowed/data/g")" = 0 ]
	make_bundle c '.annotations["ward.dev/tenant"] = "a" | .mounts += [{"destination": "/x", "type": "bind", "source": $src, "options": ["rbind"]}]' --arg src "$allowed/escape"
	run_container
	assert_failure
	[[ "$stderr" == *"source /etc is not under an allowed host path"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
}

# cri_sandbox ID CTD UID: config.json edits making $BUNDLE the CRI sandbox ID of pod UID, with
# containerd's binds from CTD (CTD/state: /dev/shm, CTD/root: /etc/hostname) and the kubelet's
# from CTD/kubelet (a pod volume).
cri_sandbox() {
	config_edit '.annotations += {"io.kubernetes.cri.container-type": "sandbox",
		"io.kubernetes.cri.sandbox-id": $id, "io.kubernetes.cri.sandbox-uid": $uid,
		"io.kubernetes.cri.sandbox-namespace": "team-a", "io.kubernetes.cri.sandbox-name": "p"}
		| .mounts += [
		{destination: "/dev/shm", type: "bind", source: ($c + "/state/io.containerd.grpc.v1.cri/sandboxes/" + $id + "/shm"), options: ["rbind", "rw"]},
		{destination: "/etc/hostname", type: "bind", source: ($c + "/root/io.containerd.grpc.v1.cri/sandboxes/" + $id + "/hostname"), options: ["rbind", "ro"]},
		{destination: "/vol", type: "bind", source: ($c + "/kubelet/pods/" + $uid + "/volumes/v"), options: ["rbind", "rw"]}]' \
		--arg id "$1" --arg c "$2" --arg uid "$3"
}

# cri_dirs CTD ID UID: containerd's and the kubelet's directories of pod ID (uid UID) under CTD.
cri_dirs() {
	mkdir -p "$1/state/io.containerd.grpc.v1.cri/sandboxes/$2/shm" \
		"$1/root/io.containerd.grpc.v1.cri/sandboxes/$2" "$1/kubelet/pods/$3/volumes/v"
	echo "host-$2" >"$1/root/io.containerd.grpc.v1.cri/sandboxes/$2/hostname"
}

@test "pod-own host paths under another containerd root/state and kubelet root (ward.json, or the bundle's place); another pod's refused" {
	ctd="$BATS_TEST_TMPDIR/k3s"
	id=$(cid sb)
	other=$(cid other)
	cri_dirs "$ctd" "$id" uid-1
	cri_dirs "$ctd" "$other" uid-2
	global "{\"containerd\": {\"root\": \"$ctd/root\", \"state\": \"$ctd/state\"}, \"kubelet_root_dir\": \"$ctd/kubelet\"}"
	# 1. the layout from ward.json: the pod's own shm, hostname and volume are bound
	make_bundle b
	cri_sandbox "$id" "$ctd" uid-1
	set_cmd 'cat /etc/hostname; echo in >/dev/shm/f; echo v >/vol/g'
	run --separate-stderr ward run -b "$BUNDLE" "$id" </dev/null
	assert_success
	assert_output "host-$id"
	[ "$(cat "$ctd/state/io.containerd.grpc.v1.cri/sandboxes/$id/shm/f")" = in ]
	[ "$(cat "$ctd/kubelet/pods/uid-1/volumes/v/g")" = v ]
	assert_nothing_left "$id"
	# 2. another pod's directories are refused, under either dir
	make_bundle c
	cri_sandbox "$id" "$ctd" uid-1
	config_edit '.mounts[-3].source |= sub("/sandboxes/[^/]*/"; "/sandboxes/" + $o + "/")' --arg o "$other"
	run --separate-stderr ward run -b "$BUNDLE" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"tenant \"default\": host_paths: "*"source $ctd/state/io.containerd.grpc.v1.cri/sandboxes/$other/shm is a container runtime's socket or directory"* ]] || fail "$stderr"
	assert_nothing_left "$id"
	make_bundle d
	cri_sandbox "$id" "$ctd" uid-1
	config_edit '.mounts[-1].source |= sub("/pods/uid-1/"; "/pods/uid-2/")'
	run --separate-stderr ward run -b "$BUNDLE" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"host_paths: "*"source $ctd/kubelet/pods/uid-2/volumes/v is not under an allowed host path"* ]] || fail "$stderr"
	assert_nothing_left "$id"
	# 3. no ward.json key: containerd's state is where the bundle is
	# (<state>/io.containerd.runtime.v2.task/<ns>/<id>); the config.json cannot say so
	global '{}'
	make_bundle "k3s/state/io.containerd.runtime.v2.task/k8s.io/$id"
	cri_sandbox "$id" "$ctd" uid-1
	config_edit '.mounts |= map(select(.destination == "/dev/shm"))'
	set_cmd 'echo again >/dev/shm/f'
	run --separate-stderr ward run -b "$BUNDLE" "$id" </dev/null
	assert_success
	[ "$(cat "$ctd/state/io.containerd.grpc.v1.cri/sandboxes/$id/shm/f")" = again ]
	assert_nothing_left "$id"
	# ... only the bundle's own pod: another pod's shm is still refused
	config_edit '.mounts[-1].source |= sub("/sandboxes/[^/]*/"; "/sandboxes/" + $o + "/")' --arg o "$other"
	run --separate-stderr ward run -b "$BUNDLE" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"source $ctd/state/io.containerd.grpc.v1.cri/sandboxes/$other/shm is a container runtime's socket or directory"* ]] || fail "$stderr"
	assert_nothing_left "$id"
	# ... and a bundle elsewhere (the same config.json, another directory) gets nothing
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
	cp -a "$BUNDLE" "$BATS_TEST_TMPDIR/elsewhere/$id"
	config_edit '.mounts[-1].source |= sub("/sandboxes/[^/]*/"; "/sandboxes/" + $i + "/")' --arg i "$id"
	cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/elsewhere/$id/config.json"
	run --separate-stderr ward run -b "$BATS_TEST_TMPDIR/elsewhere/$id" "$id" </dev/null
	assert_failure
	[[ "$stderr" == *"source $ctd/state/io.containerd.grpc.v1.cri/sandboxes/$id/shm is not under an allowed host path"* ]] || fail "$stderr"
	assert_nothing_left "$id"
}

@test "pod-own host paths: a container of a pod gets the pod uid its sandbox recorded, not one it names" {
	ctd="$BATS_TEST_TMPDIR/k3s"
	mkdir -p "$ctd/kubelet/pods/uid-1/volumes/v" "$ctd/kubelet/pods/uid-2/volumes/v"
	global "{\"kubelet_root_dir\": \"$ctd/kubelet\"}"
	sb=$(cid sb)
	make_bundle sb '.annotations += {"io.kubernetes.cri.sandbox-id": $s,
		"io.kubernetes.cri.container-type": "sandbox", "io.kubernetes.cri.sandbox-uid": "uid-1"}' --arg s "$sb"
	set_args sleep 1000
	start_container "$sb"
	pid=$(init_pid "$sb")
	# an app container of the pod (it joins the pod's namespaces) naming pod uid-2
	make_bundle app '.annotations += {"io.kubernetes.cri.sandbox-id": $s,
		"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.sandbox-uid": "uid-2"}
		| del(.hostname) | del(.linux.uidMappings, .linux.gidMappings)
		| .mounts += [{destination: "/vol", type: "bind", source: ($k + "/pods/uid-2/volumes/v"), options: ["rbind"]}]' \
		--arg s "$sb" --arg k "$ctd/kubelet"
	set_ns user "/proc/$pid/ns/user"
	set_ns ipc "/proc/$pid/ns/ipc"
	set_ns uts "/proc/$pid/ns/uts"
	set_args true
	app=$(cid app)
	run --separate-stderr ward run -b "$BUNDLE" "$app" </dev/null
	assert_failure
	[[ "$stderr" == *"host_paths: mounts["*"source $ctd/kubelet/pods/uid-2/volumes/v is not under an allowed host path"* ]] || fail "$stderr"
	[ ! -e "$STATE/$app" ] || fail "state of $app left"
	# the pod's own uid (the sandbox's) is its own, whatever the container's annotation says
	config_edit '.mounts[-1].source = ($k + "/pods/uid-1/volumes/v")' --arg k "$ctd/kubelet"
	run --separate-stderr ward run -b "$BUNDLE" "$app" </dev/null
	assert_success
	ward delete -f "$sb"
}

@test "cgroups: a container is placed at <v2>/ward/<tenant>/<id>; the tenant dir goes with its last container" {
	tenant "$TN" '{}'
	make_bundle b '.annotations["ward.dev/tenant"] = $tn' --arg tn "$TN"
	set_args sleep 1000
	c1=$(cid c1)
	c2=$(cid c2)
	start_container "$c1"
	start_container "$c2"
	pid=$(ward state "$c1" | jq -r .pid)
	grep -qx "0::/ward/$TN/$c1" "/proc/$pid/cgroup" || fail "$(cat /proc/$pid/cgroup)"
	[ -d "$CG2/ward/$TN/$c2" ]
	ward delete -f "$c1"
	[ -d "$CG2/ward/$TN" ] || fail "tenant dir removed while a container is left"
	ward delete -f "$c2"
	[ ! -d "$CG2/ward/$TN" ] || fail "tenant dir left after the last container"
}

@test "cgroups: a tenant budget needing a controller the host lacks is refused, or warns with missing_controllers warn" {
	has_controller() { grep -qw "$1" "$CG2/cgroup.controllers"; }
	has_controller memory && skip "memory controller available: tested in the VM"
	tenant "$TN" '{"cgroup": {"memory": {"limit": 67108864}}}'
	make_bundle b '.annotations["ward.dev/tenant"] = $tn' --arg tn "$TN"
	run_container
	assert_failure
	[[ "$stderr" == *"tenant \"$TN\": cgroup budget: linux.resources.memory.limit: the memory controller is not available"* ]] || fail "$stderr"
	assert_nothing_left "$ID"
	[ ! -d "$CG2/ward/$TN" ]
	global '{"missing_controllers": "warn"}'
	set_args sleep 1000
	id=$(cid w)
	ward_capture create -b "$BUNDLE" "$id"
	[ "$status" = 0 ] || fail "$stderr"
	run ward state "$id"
	[[ "$(jq -r '.ward.unenforced' <<<"$output")" == *"tenant budget linux.resources.memory.limit (memory)"* ]] || fail "$output"
	run ward events --stats "$id"
	assert_success
	[ "$(jq -r '.data.unenforced[0]' <<<"$output")" = "tenant budget linux.resources.memory.limit (memory)" ] || fail "$output"
}

@test "policy explain prints the tenant, why, the changes and the effective spec create runs" {
	# an rlimit of 2^64-1 (Go's RLIM_INFINITY): explain writes the integer, as create does
	make_bundle b '.process.rlimits += [{"type": "RLIMIT_CORE", "hard": 1234567, "soft": 0}]'
	set_args sleep 1000
	sed -i 's/"hard": *1234567/"hard": 18446744073709551615/' "$BUNDLE/config.json" # jq would round it
	grep -q 18446744073709551615 "$BUNDLE/config.json"
	run ward policy explain "$BUNDLE"
	assert_success
	assert_line "tenant: default (no tenant annotation: default tenant)"
	assert_line --partial "added a user namespace"
	assert_line "effective config.json:"
	refute_output --partial 'u64:'
	run ward policy explain --json --id x1 "$BUNDLE"
	assert_success
	refute_output --partial 'u64:'
	jq -S '.effective | del(.ward.ids)' <<<"$output" >"$BATS_TEST_TMPDIR/explained"
	[ -z "$(pool_owners)" ] || fail "explain kept an ID allocation: $(pool_owners)"
	id=$(cid c)
	start_container "$id"
	jq -S 'del(.ward.ids) | .linux.cgroupsPath |= sub("/[^/]*$"; "/x1")' "$STATE/$id/config.json" >"$BATS_TEST_TMPDIR/ran"
	diff -u "$BATS_TEST_TMPDIR/explained" "$BATS_TEST_TMPDIR/ran"
	# exec reads that state back: the unlimited core limit reaches the container
	run ward exec "$id" sh -c 'ulimit -Hc'
	assert_success
	assert_output unlimited
}

@test "trusted tenant: pods run as their spec says (no user namespace added)" {
	tenant infra '{"trusted": true}'
	make_bundle b '.annotations["ward.dev/tenant"] = "infra"'
	set_cmd 'cat /proc/self/uid_map'
	run_container
	assert_success
	assert_output --regexp '^ +0 +0 +4294967295$'
	run ward policy explain "$BUNDLE"
	assert_line --partial 'is trusted'
}

@test "--config wins over WARD_CONFIG; a missing --config directory is an error" {
	other="$BATS_TEST_TMPDIR/other"
	mkdir -p "$other/tenants.d"
	echo '{"trusted": true}' >"$other/tenants.d/default.json"
	make_bundle b
	run "$WARD" --root "$STATE" --config "$other" policy explain "$BUNDLE"
	assert_success
	assert_line --partial "is trusted"
	run "$WARD" --root "$STATE" --config "$BATS_TEST_TMPDIR/none" policy explain "$BUNDLE"
	assert_failure
	assert_output --partial "configuration directory $BATS_TEST_TMPDIR/none"
}

@test "exec: processes stay within the container's policy (capabilities, no_new_privs)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward exec "$id" grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
	assert_success
	assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	run ward exec --cap CAP_SYS_ADMIN "$id" true
	assert_failure
	assert_output --partial 'tenant "default": capabilities: CAP_SYS_ADMIN is not in the container'"'"'s bounding set'
}

@test "update: a tenant's container keeps its policy's device rules" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	# what containerd's CRI plugin sends with every UpdateContainerResources: deny-all and
	# the defaults, with the limits
	run ward update -r - "$id" <<<'{"devices": [{"allow": false, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 5, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 8, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 9, "access": "rwm"},
		{"allow": true, "type": "c", "major": 5, "minor": 0, "access": "rwm"},
		{"allow": true, "type": "c", "major": 5, "minor": 1, "access": "rwm"},
		{"allow": true, "type": "c", "major": 136, "access": "rwm"}],
		"pids": {"limit": -1}}'
	assert_success
	run ward exec "$id" sh -c 'head -c1 /dev/zero | wc -c'
	assert_success
	assert_output 1
	# narrower: deny-all alone (the defaults stay, as at create)
	run ward update -r - "$id" <<<'{"devices": [{"allow": false, "access": "rwm"}]}'
	assert_success
	# wider: refused, naming the tenant and the rule
	run ward update -r - "$id" <<<'{"devices": [{"allow": true, "access": "rwm"}]}'
	assert_failure
	assert_output --partial 'tenant "default": devices: linux.resources.devices allows a device the container'"'"'s policy does not'
	run ward update -r - "$id" <<<'{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "b", "major": 8, "minor": 0, "access": "r"}]}'
	assert_failure
	assert_output --partial 'update can keep or narrow its device rules, never widen them'
	run ward exec "$id" sh -c 'head -c1 /dev/zero | wc -c'
	assert_output 1
	run ward update -r - "$id" <<<'{"pids": {"limit": -1}}'
	assert_success
}

@test "a rootfs reached through a symlink runs under the policy (idmapped at its real path)" {
	make_bundle b
	mv "$BUNDLE/rootfs" "$BUNDLE/real-rootfs"
	ln -s real-rootfs "$BUNDLE/rootfs"
	set_cmd 'stat -c %u /bin/busybox'
	run_container
	assert_success
	assert_output 0
}

@test "exec: containerd's default capabilities the tenant lacks are dropped, not refused" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward exec --cap CAP_NET_RAW --cap CAP_MKNOD "$id" grep CapBnd /proc/self/status
	assert_success
	bnd=$(awk '{print $2}' <<<"$output")
	(((0x$bnd >> 13) & 1)) && fail "CAP_NET_RAW granted: $bnd"
	(((0x$bnd >> 27) & 1)) && fail "CAP_MKNOD granted: $bnd"
	true
}

@test "exec: a capability refused after one dropped is refused cleanly (the dropped name is freed once)" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward exec --cap CAP_MKNOD --cap CAP_SYS_ADMIN "$id" true
	assert_failure
	[ "$status" -eq 255 ] || fail "exit status $status, not 255 (crashed?)"
	assert_output --partial 'tenant "default": capabilities: CAP_SYS_ADMIN is not in the container'"'"'s bounding set'
	refute_output --partial 'free()'
}

# assert_nothing_left_in_state ID: no state, cgroup or process of ID (mounts of the test's own
# overlay stay until the test unmounts them)
assert_nothing_left_in_state() {
	[ ! -e "$STATE/$1" ] || fail "state dir $STATE/$1 left behind"
	for cg in "$CG2/ward/$1" "$CG2"/ward/*/"$1"; do
		[ ! -d "$cg" ] || fail "cgroup $cg left behind"
	done
	[ -z "$(tagged_pids)" ] || fail "processes left behind: $(tagged_pids)"
}

# overlay_rootfs [OPTIONS]: $BUNDLE/rootfs becomes an overlay (as containerd mounts it): the
# image in $BUNDLE/layer (lower), a fresh snapshot dir $BUNDLE/snap/{fs,work}.
overlay_rootfs() {
	mv "$BUNDLE/rootfs" "$BUNDLE/layer"
	mkdir -p "$BUNDLE/rootfs" "$BUNDLE/snap/fs" "$BUNDLE/snap/work"
	mount -t overlay overlay \
		-o "lowerdir=$BUNDLE/layer,upperdir=$BUNDLE/snap/fs,workdir=$BUNDLE/snap/work${1:+,$1}" \
		"$BUNDLE/rootfs"
	on_teardown "umount $BUNDLE/rootfs 2>/dev/null || true"
}

@test "overlayfs root (containerd's): rebuilt with idmapped layers; root owns the image, writes land in the tenant's range" {
	make_bundle b
	overlay_rootfs
	set_cmd 'stat -c "%u:%g" / /bin/busybox /etc; echo hi >/new && echo x >/etc/changed && mkdir /tmp/d && echo wrote; cat /proc/self/uid_map'
	run_container
	assert_success
	assert_line --index 0 0:0
	assert_line --index 1 0:0
	assert_line --index 2 0:0
	assert_line --index 3 wrote
	read -r _ host _ <<<"${lines[4]}"
	[ "$host" -ge 524288 ] || fail "container root is host uid $host"
	# copy-up and new files are the tenant's on disk; the image's layer is untouched
	[ "$(stat -c %u:%g "$BUNDLE/snap/fs/new")" = "$host:$host" ]
	[ "$(stat -c %u "$BUNDLE/snap/fs/etc/changed")" = "$host" ]
	[ "$(stat -c %u "$BUNDLE/snap/fs/tmp/d")" = "$host" ]
	[ ! -e "$BUNDLE/layer/new" ] && [ "$(stat -c %u "$BUNDLE/layer/bin/busybox")" = 0 ]
	# the fresh upper dir was given to the container's root
	[ "$(stat -c %u "$BUNDLE/snap/fs")" = "$host" ]
	umount "$BUNDLE/rootfs"
	assert_nothing_left "$ID"
}

@test "overlayfs root: a used upper dir keeps its owner; a directory inside an overlay is refused with the reason" {
	make_bundle b
	overlay_rootfs
	mkdir "$BUNDLE/snap/fs/kept"
	set_cmd 'stat -c %u /kept'
	run_container
	assert_success
	assert_output 65534 # host root's, unmapped: ward chowns only a fresh upper dir
	[ "$(stat -c %u "$BUNDLE/snap/fs")" = 0 ]
	# root.path a directory of the overlay, not its mount point
	config_edit '.root.path = "rootfs/kept"'
	run_container
	assert_failure
	assert_output ""
	[[ "$stderr" == *"overlay with idmapped layers: a directory inside an overlay, not its mount point"* ]] ||
		fail "stderr: $stderr"
	assert_nothing_left_in_state "$ID"
	# nor a bind mount of that directory: rebuilding would hand over the whole overlay
	mkdir "$BUNDLE/bound"
	mount --bind "$BUNDLE/rootfs/kept" "$BUNDLE/bound"
	on_teardown "umount $BUNDLE/bound 2>/dev/null || true"
	config_edit '.root.path = "bound"'
	run_container
	assert_failure
	[[ "$stderr" == *"overlay with idmapped layers: a bind mount of a directory inside an overlay"* ]] ||
		fail "stderr: $stderr"
	umount "$BUNDLE/bound" "$BUNDLE/rootfs"
	assert_nothing_left "$ID"
}

@test "overlayfs root with index=on: a second mount of its upper dir is refused; create says so and leaves nothing" {
	make_bundle b
	overlay_rootfs index=on
	set_cmd 'true'
	run_container
	assert_failure
	assert_output ""
	[[ "$stderr" == *"its upper dir is in use by the overlay mounted at the root (overlayfs with index=on allows one mount of it"* ]] ||
		fail "stderr: $stderr"
	# the fresh upper dir, given to the range for a moment, is the host root's again
	[ "$(stat -c %u:%g "$BUNDLE/snap/fs")" = 0:0 ]
	umount "$BUNDLE/rootfs"
	assert_nothing_left "$ID"
}
