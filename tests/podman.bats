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

setup_file() {
	command -v podman >/dev/null || skip "podman is not installed (.ci/install-deps.sh installs it)"
	command -v runc >/dev/null || skip "runc is not installed (the baseline)"
	[ "$(id -u)" = 0 ] || skip "needs root"
	PM=$(mktemp -d /tmp/wpm.XXXXXX)
	chmod 0711 "$PM"
	export PM
	local r="$PM/rootfs" a
	mkdir -p "$r"/{bin,etc,proc,sys,dev,tmp,root,run}
	cp /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	chmod 0755 "$r" "$r"/*
	chmod 1777 "$r/tmp"
	mkdir -p "$PM/cfg/tenants.d" "$PM/lib" "$PM/ward-state"
	jq -n --arg lib "$PM/lib" --arg root "$PM/root" --arg run "$PM/runroot" \
		'{lib_dir: $lib, containers_storage: {root: $root, runroot: $run}}' >"$PM/cfg/ward.json"
	jq -n --arg r "$r" '{root_paths: [$r]}' >"$PM/cfg/tenants.d/default.json"
	# podman 4.3 drops --runtime-flag from the delete its cleanup runs: ward's config dir and
	# state root come from a wrapper (as /etc/ward and /run/ward would by default)
	printf '#!/bin/sh\nexec %q --config %q --root %q "$@"\n' "$WARD" "$PM/cfg" "$PM/ward-state" \
		>"$PM/ward"
	chmod 0755 "$PM/ward"
}

teardown_file() {
	[ -n "${PM:-}" ] && [ -d "$PM" ] || return 0
	local b
	for b in "$WARD" runc; do
		pm "$b" rm -af -t 0 >/dev/null 2>&1
	done
	"$WARD" --root "$PM/ward-state" list -q 2>/dev/null | while read -r id; do
		"$WARD" --root "$PM/ward-state" delete -f "$id" >/dev/null 2>&1
	done
	# podman's storage mounts (shm, overlay) and the netns file
	local i s
	for i in 1 2 3; do
		awk -v d="$PM/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r s; do umount -l "$s" 2>/dev/null; done
	done
	rm -rf "$PM"
}

teardown() {
	local b
	for b in "$WARD" runc; do pm "$b" rm -af -t 0 >/dev/null 2>&1; done
	true
}

# pm RUNTIME ARGS...: podman with the private storage and RUNTIME (ward: the wrapper with
# this file's config dir and state root)
pm() {
	local rt=$1
	shift
	[ "$rt" = "$WARD" ] && rt=$PM/ward
	timeout 60 podman --root "$PM/root" --runroot "$PM/runroot" --cgroup-manager cgroupfs \
		--events-backend none --runtime "$rt" "$@"
}

# the run options every test uses
RUNOPTS=(--pids-limit 0 --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

runtimes() { echo "$WARD" "$(command -v runc)"; }

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
		run pm "$b" start "$id"
		assert_success
		run pm "$b" exec "$id" sh -c 'echo exec-$((6*7))'
		assert_success
		assert_output exec-42
		run pm "$b" pause "$id"
		assert_success
		run pm "$b" inspect --format '{{.State.Status}}' "$id"
		assert_output paused
		run pm "$b" unpause "$id"
		assert_success
		run pm "$b" inspect --format '{{.State.Status}}' "$id"
		assert_output running
		run pm "$b" kill "$id"
		assert_success
		run pm "$b" wait "$id"
		assert_success
		run pm "$b" rm "$id"
		assert_success
	done
	# nothing left in ward's state root
	run "$WARD" --root "$PM/ward-state" list -q
	assert_output ""
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
