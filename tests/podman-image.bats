#!/usr/bin/env bats
# podman 4.3 with ward as its OCI runtime, running an IMAGE (not --rootfs): the root is
# podman's overlay under containers/storage (<graph root>/overlay/<layer>/merged, its
# layers named by overlay/l/ symlinks, the graph root 0700, a volatile overlay for
# `run --rm`). The same steps run under runc as the baseline. The image is built here from
# busybox-static and `podman import`ed into a private storage root and runroot under a temp
# dir (--root/--runroot: nothing touches the host's podman state, no registry).
#
# ward runs under its hardened default tenant with no root_paths: ward.json's
# containers_storage names the private graph root and runroot, and the one root a container
# may have there is its own layer's merged dir (containers.json). ward rebuilds podman's
# overlay with idmapped layers and attaches it from the fd it opened as the host's root.
# Limits the host cannot give, as in podman.bats: --pids-limit 0 and rlimits no higher than
# the host's hard limits.
#
# Pods (`podman pod create` + `podman run --pod`): the infra container (the sandbox) runs this
# image (catatonit, the default infra command, is not installed here: --infra-image IMG
# --infra-command "sleep ..."), on a private CNI network whose only plugin is "loopback"
# (network_config_dir under $PM through CONTAINERS_CONF, with the infra's limits the host can
# give): podman then writes the pod's resolv.conf and hosts in the infra's userdata and
# members bind them, without a bridge, a firewall rule or other host network state. ward takes
# podman's io.kubernetes.cri-o.SandboxID as the pod (as containerd's sandbox-id): a member
# joins the infra's namespaces, user namespace and ID slice, and may bind the infra's
# containers/storage userdata (resolv.conf, hosts, shm) because ward's state says the infra
# is a live ward container of the same tenant and pod whose bundle was its own userdata
# directory. Another pod's member, or a container alone, naming it is refused.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
: "${WARD:=$WARD_REPO/build/ward}"

IMG=localhost/ward-busybox:test

load podman-helpers

setup_file() {
	pm_check_host
	pm_setup
	local r="$PM/img"
	pm_busybox_root "$r"
	printf 'nobody:x:65534:65534:nobody:/:/bin/sh\n' >>"$r/etc/passwd"
	printf 'nobody:x:65534:\n' >>"$r/etc/group"
	# a file of another owner in the image: the idmapped layer shows it as that owner
	echo img >"$r/etc/owned-by-1000"
	chown 1000:1000 "$r/etc/owned-by-1000"
	tar --numeric-owner -C "$r" -cf "$PM/img.tar" .
	# the pods' network: loopback only; podman's default rlimits of 1048576 (an infra's) need
	# CAP_SYS_RESOURCE, and this host has no v2 pids controller
	mkdir -p "$PM/cni"
	echo '{"cniVersion": "0.4.0", "name": "wardlo", "plugins": [{"type": "loopback"}]}' \
		>"$PM/cni/wardlo.conflist"
	printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\npids_limit = 0\n[network]\nnetwork_config_dir = "%s"\n' \
		"$PM/cni" >"$PM/containers.conf"
	export CONTAINERS_CONF=$PM/containers.conf
	echo '{}' >"$PM/cfg/tenants.d/b.json" # a second tenant, for the pod's tenant boundary
	pm runc import "$PM/img.tar" "$IMG" >/dev/null
}

teardown_file() { pm_teardown_file; }

teardown() {
	local b p
	for b in $(runtimes); do
		for p in pa pb; do pm_pod_rm "$b" "$p"; done
	done
	pm_teardown
}

RUNOPTS=(--network none --pids-limit 0 --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

# the host path of a podman container's upper dir (its layer's diff)
upper_of() {
	local layer
	layer=$(jq -r --arg id "$1" '.[] | select(.id == $id) | .layer' \
		"$PM/root/overlay-containers/containers.json")
	[ -n "$layer" ] && echo "$PM/root/overlay/$layer/diff"
}

@test "podman run --rm IMAGE: output, exit status, podman's own files (ward and runc)" {
	local b
	for b in $(runtimes); do
		run pm "$b" run --rm "${RUNOPTS[@]}" --hostname pmhost "$IMG" \
			sh -c 'echo hello; cat /etc/hostname; echo; test -f /run/.containerenv && echo containerenv; readlink /etc/mtab; exit 3'
		echo "$b: $output"
		assert_equal "$status" 3
		assert_line hello
		assert_line pmhost
		assert_line containerenv
		assert_line /proc/mounts
	done
}

@test "podman + ward with an image: the policy applies and the root is idmapped (the image's owners inside, the range's on the host)" {
	run pm "$WARD" run -d "${RUNOPTS[@]}" "$IMG" sleep 1000
	assert_success
	local id=${lines[-1]} upper inside host count
	run pm "$WARD" exec "$id" sh -c 'cat /proc/self/uid_map; grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status
		stat -c "%n %u:%g" / /bin/busybox /etc /etc/mtab /etc/owned-by-1000
		touch /written && chown 1000:1000 /written && echo written'
	assert_success
	read -r inside host count <<<"$(head -n1 <<<"$output")"
	assert_equal "$inside" 0
	[ "$host" -ge 524288 ] || fail "host uid $host is not in ward's pool: $output"
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
	# the image's files and podman's own (/ and etc/mtab, made as the host's root) are the
	# container root's; another owner of the image stays that owner
	assert_line '/ 0:0'
	assert_line '/bin/busybox 0:0'
	assert_line '/etc 0:0'
	assert_line '/etc/mtab 0:0'
	assert_line '/etc/owned-by-1000 1000:1000'
	assert_line written
	# on the host: written into the container's upper dir with host IDs of its range
	upper=$(upper_of "$id")
	[ -n "$upper" ] || fail "no layer of $id in containers.json"
	assert_equal "$(stat -c %u:%g "$upper/written")" "$((host + 1000)):$((host + 1000))"
	assert_equal "$(stat -c %u "$upper/etc/mtab")" "$host"
	# the image's layer is untouched (idmapped, not chowned)
	assert_equal "$(find "$PM/root/overlay" -path '*/diff/bin/busybox' -user 0 | wc -l)" 1
}

@test "podman with an image: run -d, logs, exec, pause, unpause, stop, start again, kill, rm (ward and runc)" {
	local b id
	for b in $(runtimes); do
		run pm "$b" run -d "${RUNOPTS[@]}" "$IMG" sh -c 'echo started; exec sleep 1000'
		assert_success
		id=${lines[-1]}
		run pm "$b" exec "$id" sh -c 'echo exec-$((6*7)) > /keep; cat /keep'
		assert_success
		assert_output exec-42
		run pm "$b" logs "$id"
		assert_output started
		pm_ok "$b" pause "$id"
		pm_status "$b" "$id" paused
		pm_ok "$b" unpause "$id"
		pm_ok "$b" stop -t 0 "$id"
		pm_status "$b" "$id" exited
		# a second create over the same upper dir: what the container wrote is still there
		pm_ok "$b" start "$id"
		run pm "$b" exec "$id" cat /keep
		assert_success
		assert_output exec-42
		pm_end "$b" "$id"
	done
	ward_ids_are
}

@test "podman + ward: a root in another container's storage is refused, naming tenant and rule, and leaves nothing" {
	run pm "$WARD" run -d "${RUNOPTS[@]}" "$IMG" sleep 1000
	assert_success
	local other=${lines[-1]} merged upper before layer_diff
	upper=$(upper_of "$other")
	merged=${upper%/diff}/merged
	before=$(find "$upper" -printf '%p %u:%g %m\n' | sort)
	# another container's merged dir as root (podman --rootfs passes it as root.path)
	run pm "$WARD" run --rm "${RUNOPTS[@]}" --rootfs "$merged" true
	assert_failure
	assert_output --partial 'tenant "default": root_paths: root.path '"$merged"
	assert_output --partial "in containers/storage ($PM/root) but not the merged dir of container"
	# an image layer's diff
	layer_diff=$(dirname "$(find "$PM/root/overlay" -path '*/diff/bin/busybox' | head -n1)")
	layer_diff=${layer_diff%/bin}
	run pm "$WARD" run --rm "${RUNOPTS[@]}" --rootfs "$layer_diff" true
	assert_failure
	assert_output --partial 'tenant "default": root_paths: root.path '"$layer_diff"
	# nothing left: only the other container in ward's state, its upper dir as it was
	ward_ids_are "$other"
	assert_equal "$(find "$upper" -printf '%p %u:%g %m\n' | sort)" "$before"
	run pm "$WARD" rm -f -t 0 "$other"
	assert_success
	ward_ids_are
}

@test "podman + ward: a root.path ward is handed directly that is another container's overlay is refused" {
	run pm "$WARD" run -d "${RUNOPTS[@]}" "$IMG" sleep 1000
	assert_success
	local other=${lines[-1]} mine bundle
	run pm "$WARD" create "${RUNOPTS[@]}" "$IMG" true
	assert_success
	mine=${lines[-1]}
	# a bundle for podman's container id "mine" whose root is the other's overlay
	bundle="$PM/hostile"
	mkdir -p "$bundle"
	chmod 0711 "$bundle"
	"$WARD" spec --bundle "$bundle"
	jq --arg r "$(dirname "$(upper_of "$other")")/merged" '.root.path = $r' \
		"$bundle/config.json" >"$bundle/c" && mv "$bundle/c" "$bundle/config.json"
	run "$PM/ward" create --bundle "$bundle" "$mine"
	assert_failure
	assert_output --partial 'tenant "default": root_paths:'
	assert_output --partial "not the merged dir of container $mine's own layer"
	ward_ids_are "$other"
}

@test "podman + ward: --no-pivot with a root the container's root cannot search is refused with the reason" {
	# podman init: ward creates the container over podman's mounted overlay; the same bundle
	# created again with --no-pivot (after a delete) is refused: its root is attached over
	# the init's / (the graph root is 0700), which --no-pivot cannot use
	run pm "$WARD" create "${RUNOPTS[@]}" "$IMG" true
	assert_success
	local id=${lines[-1]} bundle
	run pm "$WARD" init "$id"
	assert_success
	bundle=$("$WARD" --root "$PM/ward-state" state "$id" | jq -r .bundle)
	run "$PM/ward" delete -f "$id"
	assert_success
	run "$PM/ward" create --no-pivot --bundle "$bundle" "$id"
	assert_failure
	assert_output --partial "--no-pivot: the root is attached over / (its root.path is not searchable by the container's root)"
	ward_ids_are
}

@test "podman + ward: another engine's state root over the same storage cannot name a container id to get its layer (the layer is bound to the pod's IDs)" {
	run pm "$WARD" run -d "${RUNOPTS[@]}" "$IMG" sh -c 'echo secret-a >/root/s; sleep 1000'
	assert_success
	local other=${lines[-1]} upper owner bundle="$PM/engine-b"
	upper=$(upper_of "$other")
	# engine A's container ran in its layer: the upper dir's root is its pod's
	owner=$(stat -c %u "$upper")
	[ "$owner" -ge 65536 ] || fail "upper dir owned by $owner, not by a pod range"
	# engine B: its own ward config (its default tenant "b"), its own state root, the same
	# storage and ID pool; it names engine A's container id, whose layer containers.json
	# lists: the own-layer rule by id alone would give B that layer, mapped to B's IDs
	mkdir -p "$PM/cfg-b/tenants.d" "$PM/ward-state-b" "$bundle"
	jq '.default_tenant = "b"' "$PM/cfg/ward.json" >"$PM/cfg-b/ward.json"
	echo '{}' >"$PM/cfg-b/tenants.d/b.json"
	chmod 0711 "$bundle"
	"$WARD" spec --bundle "$bundle"
	jq --arg r "${upper%/diff}/merged" '.root.path = $r | .process.args = ["cat", "/root/s"]' \
		"$bundle/config.json" >"$bundle/c" && mv "$bundle/c" "$bundle/config.json"
	run "$WARD" --config "$PM/cfg-b" --root "$PM/ward-state-b" run --bundle "$bundle" "$other"
	assert_failure
	refute_output --partial secret-a
	assert_output --partial 'tenant "b": root_paths: root.path '"${upper%/diff}/merged"': the containers/storage layer is owned by '"$owner:$owner"', outside the pod'"'"'s host IDs'
	# nothing left in B's state root; A's container runs on, its upper dir still its pod's
	run "$WARD" --root "$PM/ward-state-b" list -q
	assert_output ""
	assert_equal "$(stat -c %u "$upper")" "$owner"
	ward_ids_are "$other"
	run pm "$WARD" rm -f -t 0 "$other"
	assert_success
}

# pod_up RUNTIME NAME: a running pod on the loopback network, its infra a sleep
pod_up() {
	pm_ok "$1" pod create --network wardlo --infra-image "$IMG" --infra-command "sleep 100000" \
		--name "$2"
	pm_ok "$1" pod start "$2"
}

infra_of() { pm "$1" pod inspect --format '{{.InfraContainerID}}' "$2"; }

@test "podman pod (hardened default tenant): a member runs in the infra's pod and sees its resolv.conf, hosts and /dev/shm (ward and runc)" {
	local b infra pid ud pod
	for b in $(runtimes); do
		pod_up "$b" pa
		infra=$(infra_of "$b" pa)
		pod=$(pm "$b" pod inspect --format '{{.ID}}' pa)
		ud=$PM/runroot/overlay-containers/$infra/userdata
		[ -s "$ud/resolv.conf" ] || fail "podman wrote no resolv.conf for the infra: $(ls -A "$ud")"
		pid=$(pm "$b" inspect --format '{{.State.Pid}}' "$infra")
		pm_ok "$b" exec "$infra" sh -c 'echo shm-of-pa >/dev/shm/mark'
		run pm "$b" run --rm --pod pa "$IMG" sh -c \
			'cat /etc/resolv.conf; echo; cat /etc/hosts; cat /dev/shm/mark; readlink /proc/self/ns/net; readlink /proc/self/ns/user; cat /proc/self/uid_map; grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status'
		echo "$b: $output"
		assert_success
		assert_line "$(head -n1 "$ud/resolv.conf")"
		assert_line --regexp "^127\.0\.0\.1[[:space:]]+pa ${pod:0:12}-infra$"
		assert_line shm-of-pa
		assert_line "$(readlink "/proc/$pid/ns/net")"
		if [ "$b" = "$WARD" ]; then
			# the pod's user namespace (the infra's), its slice of ward's pool, the policy
			local inside host count
			assert_line "$(readlink "/proc/$pid/ns/user")"
			read -r inside host count <<<"$(grep -E '^[[:space:]]*0[[:space:]]' <<<"$output")"
			[ "$host" -ge 524288 ] || fail "host uid $host is not in ward's pool: $output"
			assert_equal "$(awk '{ print $2 }' "/proc/$pid/uid_map")" "$host"
			assert_line --regexp '^Seccomp:[[:space:]]+2$'
			assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
		fi
		pm_pod_rm "$b" pa
	done
	# nothing left: ward's state root, its ID pool, the network namespace podman made
	ward_ids_are
	pool_files_empty
}

@test "podman pod + ward: another pod's member, a container alone and another tenant cannot have the infra's userdata, naming tenant and rule; nothing left behind" {
	local a ud
	pod_up "$WARD" pa
	pod_up "$WARD" pb
	a=$(infra_of "$WARD" pa)
	ud=$PM/runroot/overlay-containers/$a/userdata
	# pb's member naming pa's resolv.conf, and pa's userdata directory
	run pm "$WARD" run --rm --pod pb -v "$ud/resolv.conf:/x:ro" "$IMG" true
	assert_failure
	assert_output --partial "tenant \"default\": host_paths: mounts["
	assert_output --partial "source $ud/resolv.conf is not under an allowed host path (containers/storage:"
	run pm "$WARD" run --rm --pod pb -v "$ud:/x" "$IMG" true
	assert_failure
	assert_output --partial "tenant \"default\": host_paths: mounts["
	assert_output --partial "source $ud is a container runtime's socket or directory (containers/storage:"
	# pa's shm (under the graph root) for a container of no pod
	run pm "$WARD" run --rm --network none -v "$PM/root/overlay-containers/$a/userdata/shm:/x" "$IMG" true
	assert_failure
	assert_output --partial "tenant \"default\": host_paths: mounts["
	assert_output --partial "userdata/shm is a container runtime's socket or directory"
	# a member of pa of another tenant
	run pm "$WARD" run --rm --pod pa --annotation ward.dev/tenant=b "$IMG" true
	assert_failure
	assert_output --partial "pod \"$a\" already has container \"$a\" of tenant \"default\": all containers of a pod belong to one tenant"
	# pa's own member still gets them
	run pm "$WARD" run --rm --pod pa "$IMG" cat /etc/resolv.conf
	assert_success
	pm_pod_rm "$WARD" pa
	pm_pod_rm "$WARD" pb
	ward_ids_are
	pool_files_empty
	run ls "$PM/ward-state"
	assert_output ""
}

@test "podman pod without an infra container (--share none): a member runs as a container alone (ward and runc)" {
	local b
	for b in $(runtimes); do
		pm_ok "$b" pod create --share none --name pa
		run pm "$b" run --rm --pod pa "${RUNOPTS[@]}" "$IMG" sh -c 'echo alone; cat /proc/self/uid_map'
		echo "$b: $output"
		assert_success
		assert_line alone
		pm_pod_rm "$b" pa
	done
	ward_ids_are
	pool_files_empty
}
