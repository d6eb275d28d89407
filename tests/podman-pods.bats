#!/usr/bin/env bats
# podman 4.3 pods (`podman pod create` + `podman run --pod`) with ward as the OCI runtime,
# under the hardened default tenant, and the same steps with runc as the baseline.
#
# A pod's infra container (the sandbox) is made from a local busybox image (catatonit, the
# default infra command, is not installed here: --infra-image IMG --infra-command "sleep"),
# imported into a private storage root and runroot as in podman-image.bats. The pod's network
# is a private CNI network whose only plugin is "loopback" (network_config_dir under $PM via
# CONTAINERS_CONF): podman then writes the pod's resolv.conf and hosts in the infra's userdata
# and members bind them, without a bridge, firewall rule or any other host network state.
#
# ward takes podman's io.kubernetes.cri-o.SandboxID as the pod (as containerd's sandbox-id): a
# member joins the infra's namespaces and user namespace, shares its ID slice, and may bind
# the infra's containers/storage userdata (resolv.conf, hosts, shm) because ward's state says
# the infra is a live ward container of the same tenant and pod whose bundle was its own
# userdata directory. Another pod's member, or a container alone, naming it is refused.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
: "${WARD:=$WARD_REPO/build/ward}"

IMG=localhost/ward-busybox:pods

load podman-helpers

setup_file() {
	pm_check_host
	pm_setup
	pm_busybox_root "$PM/img"
	tar --numeric-owner -C "$PM/img" -cf "$PM/img.tar" .
	# the pods' network: loopback only; the infra's limits the host can give (podman's
	# default rlimits of 1048576 need CAP_SYS_RESOURCE, and this host has no v2 pids)
	mkdir -p "$PM/cni"
	echo '{"cniVersion": "0.4.0", "name": "wardlo", "plugins": [{"type": "loopback"}]}' \
		>"$PM/cni/wardlo.conflist"
	printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\npids_limit = 0\n[network]\nnetwork_config_dir = "%s"\n' \
		"$PM/cni" >"$PM/containers.conf"
	export CONTAINERS_CONF=$PM/containers.conf
	# a second tenant, for the tenant-boundary test
	echo '{}' >"$PM/cfg/tenants.d/b.json"
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
