#!/usr/bin/env bats
# Hostile bundles: symlinks and ".." in the rootfs or in mount destinations that try to make
# the runtime mount or create things on the host. Either the container starts with the
# mount inside its rootfs, or create fails; in both cases the host is untouched.

load helpers

# A host directory that must stay empty and unmounted. Sets TARGET.
host_target() {
	TARGET="$BATS_TEST_TMPDIR/host-target-$RANDOM"
	mkdir -p "$TARGET"
	chmod 0755 "$TARGET"
}

# assert_host_untouched DIR: DIR is empty, not a mount point, no host mount mentions it.
assert_host_untouched() {
	local d=$1
	[ -z "$(ls -A "$d")" ] || fail "host dir $d was written to: $(ls -A "$d")"
	! mountpoint -q "$d" || fail "host dir $d became a mount point"
	! grep -F "$d" /proc/self/mountinfo || fail "host mountinfo mentions $d"
}

# Run the container; if it started, the output must show the tmpfs at the in-rootfs path.
# Args: IN_CONTAINER_PATH.
run_and_expect_tmpfs_inside() {
	local p=$1
	set_cmd "awk '\$5 == \"$p\" { print \$9 }' /proc/self/mountinfo; touch $p/inside-marker && echo wrote"
	run_container
	if [ "$status" -eq 0 ]; then
		assert_output "$(printf 'tmpfs\nwrote')"
	else
		# refusing the bundle is fine; it must not have half-run
		refute_output --partial wrote
	fi
}

@test "hostile: rootfs/mnt -> absolute host path; tmpfs at /mnt lands inside the rootfs, host dir untouched" {
	host_target
	make_bundle b
	ln -s "$TARGET" "$BUNDLE/rootfs/mnt"
	add_mount '{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_and_expect_tmpfs_inside "$TARGET"
	assert_host_untouched "$TARGET"
	# the container's write (if it ran) went to its own tmpfs, not the rootfs copy of the path
	[ ! -e "$BUNDLE/rootfs$TARGET/inside-marker" ]
}

@test "hostile: rootfs/mnt -> ../../../../host path (relative escape); host dir untouched" {
	host_target
	make_bundle b
	ln -s "../../../../../../../../../..$TARGET" "$BUNDLE/rootfs/mnt"
	add_mount '{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_and_expect_tmpfs_inside "$TARGET"
	assert_host_untouched "$TARGET"
}

@test "hostile: destination with ../../../ resolves inside the rootfs; host dir untouched" {
	host_target
	make_bundle b
	add_mount "$(jq -nc --arg d "/../../../../../../../..$TARGET" '{destination: $d, type: "tmpfs", source: "tmpfs", options: ["size=1m"]}')"
	run_and_expect_tmpfs_inside "$TARGET"
	assert_host_untouched "$TARGET"
}

@test "hostile: a symlink chain (mnt -> /l1, l1 -> ../../l2, l2 -> host path) stays inside; host dir untouched" {
	host_target
	make_bundle b
	ln -s /l1 "$BUNDLE/rootfs/mnt"
	ln -s ../../../l2 "$BUNDLE/rootfs/l1"
	ln -s "$TARGET" "$BUNDLE/rootfs/l2"
	add_mount '{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_and_expect_tmpfs_inside "$TARGET"
	assert_host_untouched "$TARGET"
}

@test "hostile: bind mount whose destination is a symlink to a host path; the host dir gets no bind" {
	host_target
	src="$BATS_TEST_TMPDIR/bind-src"
	mkdir -p "$src"
	echo from-src >"$src/file"
	make_bundle b
	ln -s "$TARGET" "$BUNDLE/rootfs/data"
	add_mount "$(jq -nc --arg s "$src" '{destination: "/data", type: "bind", source: $s, options: ["rbind", "ro"]}')"
	set_cmd "cat $TARGET/file"
	run_container
	if [ "$status" -eq 0 ]; then assert_output from-src; fi
	assert_host_untouched "$TARGET"
}

@test "hostile: rootfs/dev -> host dir; /dev setup (tmpfs, devices, symlinks) never touches the host" {
	host_target
	make_bundle b '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3, "fileMode": 438}]'
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s "$TARGET" "$BUNDLE/rootfs/dev"
	set_cmd 'ls -A /dev'
	run_container
	if [ "$status" -eq 0 ]; then
		assert_line null
		assert_line mynull
	fi
	assert_host_untouched "$TARGET"
}

@test "hostile: rootfs/dev -> /dev (the host's /dev); the host /dev is unchanged" {
	before=$(ls -A /dev | sort)
	before_mounts=$(awk '$5 ~ "^/dev" { print $5, $9 }' /proc/self/mountinfo | sort)
	make_bundle b '.linux.devices = [{"path": "/dev/ward-test-dev", "type": "c", "major": 1, "minor": 3, "fileMode": 438}]'
	rm -rf "$BUNDLE/rootfs/dev"
	ln -s /dev "$BUNDLE/rootfs/dev"
	set_cmd 'ls -A /dev'
	run_container
	[ ! -e /dev/ward-test-dev ] || {
		rm -f /dev/ward-test-dev
		fail "the runtime created /dev/ward-test-dev on the host"
	}
	assert_equal "$(ls -A /dev | sort)" "$before"
	assert_equal "$(awk '$5 ~ "^/dev" { print $5, $9 }' /proc/self/mountinfo | sort)" "$before_mounts"
}

@test "hostile: rootfs/proc -> host dir; proc is mounted inside or create fails, host dir untouched" {
	host_target
	make_bundle b
	rmdir "$BUNDLE/rootfs/proc"
	ln -s "$TARGET" "$BUNDLE/rootfs/proc"
	set_cmd 'cat /proc/self/comm'
	run_container
	assert_host_untouched "$TARGET"
}

@test "hostile: a bind-mount source given as a symlink inside the bundle is the symlink's target on the host side only" {
	# The source is resolved on the host (that is the caller's choice); the destination must
	# still be resolved inside the rootfs.
	host_target
	src="$BATS_TEST_TMPDIR/real-src"
	mkdir -p "$src"
	echo real >"$src/f"
	ln -s "$src" "$BATS_TEST_TMPDIR/src-link"
	make_bundle b
	add_mount "$(jq -nc --arg s "$BATS_TEST_TMPDIR/src-link" '{destination: "/data", type: "bind", source: $s, options: ["rbind"]}')"
	set_cmd 'cat /data/f'
	run_container
	assert_success
	assert_output real
}

@test "hostile: a mount destination through a symlinked parent dir (rootfs/etc2 -> host path, dest /etc2/x)" {
	host_target
	make_bundle b
	ln -s "$TARGET" "$BUNDLE/rootfs/etc2"
	add_mount '{"destination": "/etc2/x", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	run_and_expect_tmpfs_inside "$TARGET/x"
	assert_host_untouched "$TARGET"
}

@test "hostile: maskedPaths and readonlyPaths through symlinks to host paths do not touch the host" {
	host_target
	echo keep >"$TARGET/file"
	make_bundle b '.linux.maskedPaths = ["/m"] | .linux.readonlyPaths = ["/r"]'
	ln -s "$TARGET" "$BUNDLE/rootfs/m"
	ln -s "$TARGET/file" "$BUNDLE/rootfs/r"
	set_cmd 'true'
	run_container
	assert_equal "$(ls -A "$TARGET")" file
	assert_equal "$(cat "$TARGET/file")" keep
	! mountpoint -q "$TARGET"
	! grep -F "$TARGET" /proc/self/mountinfo
	# the host file is still writable (no read-only bind leaked onto it)
	echo more >>"$TARGET/file"
}

@test "hostile: linux.devices path with ../ cannot create a node outside the rootfs" {
	host_target
	make_bundle b
	config_edit '.linux.devices = [{"path": ("/dev/../../../../../../../.." + $t + "/evil"), "type": "c", "major": 1, "minor": 3, "fileMode": 438}]' \
		--arg t "$TARGET"
	set_cmd 'true'
	run_container
	assert_host_untouched "$TARGET"
}
