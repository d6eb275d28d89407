# Shared by tests/podman.bats and tests/podman-image.bats: podman 4.3 with a private storage
# root and runroot under a temp dir $PM (nothing touches the host's podman state),
# --cgroup-manager cgroupfs and --events-backend none, with ward (through a wrapper that
# adds this suite's config dir and state root) or runc as its runtime.

# pm_check_host: skip unless podman, runc (the baseline) and root are there.
pm_check_host() {
	command -v podman >/dev/null || skip "podman is not installed (.ci/install-deps.sh installs it)"
	command -v runc >/dev/null || skip "runc is not installed (the baseline)"
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# pm_busybox_root DIR: a busybox-static root filesystem with root's passwd and group.
pm_busybox_root() {
	local r=$1 a
	mkdir -p "$r"/{bin,etc,proc,sys,dev,tmp,root,run}
	cp /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	chmod 0755 "$r" "$r"/*
	chmod 1777 "$r/tmp"
}

# pm_setup: $PM (exported), ward.json naming $PM's storage (containers_storage) and
# lib_dir, the default tenant's file (no grants), ward's state root and the wrapper $PM/ward.
pm_setup() {
	PM=$(mktemp -d "${TMPDIR:-/tmp}/wpm.XXXXXX")
	chmod 0711 "$PM"
	export PM
	mkdir -p "$PM/cfg/tenants.d" "$PM/lib" "$PM/ward-state"
	jq -n --arg lib "$PM/lib" --arg root "$PM/root" --arg run "$PM/runroot" \
		'{lib_dir: $lib, containers_storage: {root: $root, runroot: $run}}' >"$PM/cfg/ward.json"
	echo '{}' >"$PM/cfg/tenants.d/default.json"
	# podman 4.3 drops --runtime-flag from the delete its cleanup runs: ward's config dir and
	# state root come from a wrapper (as /etc/ward and /run/ward would by default)
	printf '#!/bin/sh\nexec %q --config %q --root %q "$@"\n' "$WARD" "$PM/cfg" "$PM/ward-state" \
		>"$PM/ward"
	chmod 0755 "$PM/ward"
}

# pm_teardown_file: every container and image gone, ward's state emptied, podman's storage
# mounts (shm, overlay, a netns file) unmounted, $PM removed.
pm_teardown_file() {
	[ -n "${PM:-}" ] && [ -d "$PM" ] || return 0
	local b i s
	for b in "$WARD" runc; do
		pm "$b" rm -af -t 0 >/dev/null 2>&1
	done
	pm runc rmi -af >/dev/null 2>&1
	"$WARD" --root "$PM/ward-state" list -q 2>/dev/null | while read -r id; do
		"$WARD" --root "$PM/ward-state" delete -f "$id" >/dev/null 2>&1
	done
	for i in 1 2 3; do
		awk -v d="$PM/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r s; do umount -l "$s" 2>/dev/null; done
	done
	rm -rf "$PM"
}

# pm_teardown: no container of either runtime left after a test.
pm_teardown() {
	local b
	for b in "$WARD" runc; do pm "$b" rm -af -t 0 >/dev/null 2>&1; done
	true
}

# pm RUNTIME ARGS...: podman with the private storage and RUNTIME (ward: the wrapper)
pm() {
	local rt=$1
	shift
	[ "$rt" = "$WARD" ] && rt=$PM/ward
	timeout 60 podman --root "$PM/root" --runroot "$PM/runroot" --cgroup-manager cgroupfs \
		--events-backend none --runtime "$rt" "$@"
}

runtimes() { echo "$WARD" "$(command -v runc)"; }

# pm_ok RUNTIME ARGS...: pm succeeds (its output in $output, $lines)
pm_ok() {
	run pm "$@"
	assert_success
}

# pm_status RUNTIME ID STATUS: podman says the container is STATUS
pm_status() {
	run pm "$1" inspect --format '{{.State.Status}}' "$2"
	assert_output "$3"
}

# pm_end RUNTIME ID: kill, wait and rm it, each succeeding
pm_end() {
	pm_ok "$1" kill "$2"
	pm_ok "$1" wait "$2"
	pm_ok "$1" rm "$2"
}

# ward_ids_are [ID...]: the containers in ward's state root, one per line (none: empty)
ward_ids_are() {
	run "$WARD" --root "$PM/ward-state" list -q
	if [ $# = 0 ]; then assert_output ""; else assert_output "$(printf '%s\n' "$@")"; fi
}

# pm_pod_rm RUNTIME POD: the pod and its containers removed, and podman's pod cgroup dirs
# under libpod_parent with them. podman 4.3 with cgroupfs on this hybrid host also makes its
# pod's directories under /sys/fs/cgroup/{hugetlb,net_cls,...}, plain tmpfs directories
# where no such hierarchy is mounted, and then fails to remove them ("directory not empty",
# with runc as with ward): real cgroups are rmdir'd (empty by then), those are removed.
pm_pod_rm() {
	local rt=$1 pod=$2 id d
	id=$(pm "$rt" pod inspect --format '{{.ID}}' "$pod" 2>/dev/null) || return 0
	pm "$rt" pod rm -f -t 0 "$pod" >/dev/null 2>&1 || true
	for d in /sys/fs/cgroup/*/libpod_parent/"$id"; do
		[ -d "$d" ] || continue
		case $(stat -f -c %T "$d") in
		cgroupfs | cgroup2fs) find "$d" -depth -type d -exec rmdir {} \; ;;
		tmpfs) rm -rf "$d" ;;
		esac
	done
	true
}

# pool_files_empty: every allocation of ward's ID pool under $PM/lib is free (an empty file)
pool_files_empty() {
	local f
	for f in "$PM"/lib/idpool.d/*; do
		[ -e "$f" ] || continue
		[ ! -s "$f" ] || fail "ID pool allocation $f left: $(cat "$f")"
	done
}
