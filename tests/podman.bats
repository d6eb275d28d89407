#!/usr/bin/env bats
# podman 4.3 with ward as its OCI runtime (`podman --runtime $WARD`), end to end, and the
# same steps with runc as the baseline. podman runs a busybox rootfs dir (--rootfs) with a
# private storage root and runroot under a temp dir (nothing touches the host's storage),
# --cgroup-manager cgroupfs, --events-backend none and --network none (no host network
# state: no bridge, no firewall rules) or a network namespace made here (a path: podman's
# netns is joined before ward creates the user namespace).
#
# ward runs under its hardened default tenant (a config dir of this file: root_paths allows
# the rootfs dir, containers_storage names the private root and runroot, so podman's
# per-container files there - hosts, hostname, resolv.conf, .containerenv - are the
# container's own). Limits the host cannot give: --pids-limit 0 (no pids controller in a
# hybrid host's v2 hierarchy; a test checks the error saying so) and rlimits no higher
# than the host's hard limits (this host's root lacks CAP_SYS_RESOURCE: runc fails too).

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
: "${WARD:=$WARD_REPO/build/ward}"

load podman-helpers

setup_file() {
	pm_check_host
	pm_setup
	pm_busybox_root "$PM/rootfs"
	jq -n --arg r "$PM/rootfs" '{root_paths: [$r]}' >"$PM/cfg/tenants.d/default.json"
}

teardown_file() { pm_teardown_file; }

teardown() { pm_teardown; }

# the run options every test uses
RUNOPTS=(--pids-limit 0 --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

@test "podman run --rm: output, exit status, podman's own files (hosts, hostname, .containerenv)" {
	local b
	for b in $(runtimes); do
		run pm "$b" run --rm --network none "${RUNOPTS[@]}" --hostname pmhost \
			--rootfs "$PM/rootfs" sh -c 'echo hello; cat /etc/hostname; echo; grep -c pmhost /etc/hosts; test -f /run/.containerenv && echo containerenv; exit 3'
		echo "$b: $output"
		assert_equal "$status" 3
		assert_line hello
		assert_line pmhost
		assert_line containerenv
	done
}

@test "podman + ward: the tenant policy applies (a pool uid range, seccomp, no new privileges)" {
	run pm "$WARD" run --rm --network none "${RUNOPTS[@]}" --rootfs "$PM/rootfs" \
		sh -c 'cat /proc/self/uid_map; grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status'
	assert_success
	local inside host count
	read -r inside host count <<<"$(head -n1 <<<"$output")"
	assert_equal "$inside" 0
	[ "$host" -ge 524288 ] || fail "host uid $host is not in ward's pool: $output"
	assert_line --regexp '^Seccomp:[[:space:]]+2$'
	assert_line --regexp '^NoNewPrivs:[[:space:]]+1$'
}

@test "podman: create, start, exec, pause, unpause, stop, rm (ward and runc)" {
	local b id
	for b in $(runtimes); do
		run pm "$b" create --network none "${RUNOPTS[@]}" --rootfs "$PM/rootfs" sleep 1000
		assert_success
		id=${lines[-1]}
		pm_ok "$b" start "$id"
		run pm "$b" exec "$id" sh -c 'echo exec-$((6*7))'
		assert_success
		assert_output exec-42
		pm_ok "$b" pause "$id"
		pm_status "$b" "$id" paused
		pm_ok "$b" unpause "$id"
		pm_status "$b" "$id" running
		pm_end "$b" "$id"
	done
	# nothing left in ward's state root
	ward_ids_are
}

@test "podman: a network namespace podman joins by path (made here) is the container's" {
	touch "$PM/netns"
	unshare --net="$PM/netns" true
	local b want
	want=net:[$(stat -L -c %i "$PM/netns")]
	for b in $(runtimes); do
		run pm "$b" run --rm --network "ns:$PM/netns" "${RUNOPTS[@]}" --rootfs "$PM/rootfs" \
			readlink /proc/self/ns/net
		echo "$b: $output"
		assert_success
		assert_line "$want"
	done
	umount "$PM/netns"
}

@test "podman + ward: another container's userdata is refused, naming the tenant and the rule" {
	run pm "$WARD" create --network none "${RUNOPTS[@]}" --rootfs "$PM/rootfs" true
	assert_success
	local other=${lines[-1]}
	run pm "$WARD" run --rm --network none "${RUNOPTS[@]}" \
		-v "$PM/runroot/overlay-containers/$other/userdata:/other" --rootfs "$PM/rootfs" true
	assert_failure
	assert_output --partial 'tenant "default": host_paths:'
	assert_output --partial "$PM/runroot/overlay-containers/$other/userdata is a container runtime's socket or directory"
}

@test "podman + ward: a bundle elsewhere naming a podman container's id does not get its userdata (another engine's state root over the same storage), naming tenant and rule" {
	run pm "$WARD" create --network none "${RUNOPTS[@]}" --rootfs "$PM/rootfs" sleep 1000
	assert_success
	local x=${lines[-1]} b=$PM/bundle-b ud src want rc
	pm_ok "$WARD" start "$x" # podman writes hosts, hostname at start
	ud=$PM/runroot/overlay-containers/$x/userdata
	mkdir -p "$b" "$PM/state-b"
	for src in "$ud" "$ud/hosts" "$PM/root/overlay-containers/$x/userdata/shm"; do
		rm -f "$b/config.json"
		"$WARD" spec -b "$b"
		jq --arg r "$PM/rootfs" --arg s "$src" '.root.path = $r | .process.args = ["true"] |
			.process.terminal = false |
			.mounts += [{destination: "/x", type: "bind", source: $s, options: ["rbind"]}]' \
			"$b/config.json" >"$b/c.json"
		mv "$b/c.json" "$b/config.json"
		# engine B: ward with its own state root, the id of podman's container (its output
		# to a file: a container made would hold a pipe open)
		rc=0
		"$WARD" --config "$PM/cfg" --root "$PM/state-b" create --bundle "$b" "$x" \
			</dev/null >"$b/out" 2>&1 || rc=$?
		"$WARD" --config "$PM/cfg" --root "$PM/state-b" delete -f "$x" >/dev/null 2>&1 || true
		output=$(cat "$b/out")
		[ "$rc" != 0 ] || fail "engine B made container $x binding $src"
		assert_output --partial 'tenant "default": host_paths: mounts['
		want="is a container runtime's socket or directory"
		[ -d "$src" ] || want="is not under an allowed host path"
		assert_output --partial "source $src $want (containers/storage: a container's userdata is its own when its bundle is that directory"
		run ls -A "$PM/state-b"
		assert_output ""
	done
	pm_end "$WARD" "$x"
}

@test "podman + ward: the default pids-limit on a host without the v2 pids controller says what to do" {
	grep -qw pids "$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)/cgroup.controllers" 2>/dev/null &&
		skip "the pids controller is available in the cgroup v2 hierarchy"
	run pm "$WARD" run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		--rootfs "$PM/rootfs" true
	assert_failure
	assert_output --partial "linux.resources.pids.limit: the pids controller is not available"
	assert_output --partial '(podman: --pids-limit 0)'
	assert_output --partial '"missing_controllers": "warn"'
}

@test "podman: its default rlimits (RLIMIT_NOFILE/NPROC 1048576) run (ward raises the init's hard limits from the host side, as runc does)" {
	# a host whose root cannot raise a hard limit (no CAP_SYS_RESOURCE: runc fails as well)
	local hard
	hard=$(ulimit -Hn)
	[ "$hard" = unlimited ] ||
		bash -c "ulimit -Hn $((hard + 1))" 2>/dev/null ||
		skip "this host's root cannot raise a hard rlimit (no CAP_SYS_RESOURCE)"
	local b
	for b in $(runtimes); do
		run pm "$b" run --rm --network none --pids-limit 0 --rootfs "$PM/rootfs" sh -c 'ulimit -Hn'
		echo "$b: $output"
		assert_success
		assert_line 1048576
	done
}
