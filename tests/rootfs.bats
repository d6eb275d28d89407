#!/usr/bin/env bats
# The container's filesystem: root.readonly, mounts and their options, propagation, /dev,
# linux.devices, maskedPaths, readonlyPaths, --no-pivot.

load helpers

# mountinfo_line MOUNTPOINT: shell snippet printing the container's mountinfo line(s) for it.
mi() { echo "awk '\$5 == \"$1\"' /proc/self/mountinfo"; }

# A host directory that is a mount point with a tmpfs submount at sub/ holding sub/marker.
# Sets HOSTDIR. Unmounted at teardown.
host_dir_with_submount() {
	HOSTDIR="$BATS_TEST_TMPDIR/hostdir"
	mkdir -p "$HOSTDIR/sub"
	echo top >"$HOSTDIR/top-file"
	mount -t tmpfs -o size=1m tmpfs "$HOSTDIR/sub"
	on_teardown umount -l "$HOSTDIR/sub"
	echo sub >"$HOSTDIR/sub/marker"
}

@test "root.readonly: / is read-only (touch fails with EROFS), a tmpfs /tmp stays writable" {
	make_bundle b '.root.readonly = true'
	add_mount '{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}'
	set_cmd 'touch /newfile 2>&1; echo rc=$?; touch /tmp/ok && echo tmp-ok'
	run_container
	assert_success
	assert_line --partial "Read-only file system"
	assert_line rc=1
	assert_line tmp-ok
	[ ! -e "$BUNDLE/rootfs/newfile" ]
}

@test "root.readonly false: / is writable and writes land in the bundle's rootfs" {
	make_bundle b
	set_cmd 'echo hi > /written && echo ok'
	run_container
	assert_success
	assert_output ok
	assert_equal "$(cat "$BUNDLE/rootfs/written")" hi
}

@test "mounts: bind ro: the content is visible, writes fail with EROFS, the host dir is unchanged" {
	src="$BATS_TEST_TMPDIR/ro-src"
	mkdir -p "$src"
	echo content >"$src/file"
	make_bundle b
	add_mount "$(jq -nc --arg s "$src" '{destination: "/data", type: "bind", source: $s, options: ["bind", "ro"]}')"
	set_cmd 'cat /data/file; touch /data/new 2>&1; echo rc=$?; echo x >> /data/file; echo rc2=$?'
	run_container
	assert_success
	assert_line content
	assert_line --partial "Read-only file system"
	assert_line rc=1
	assert_line rc2=1
	[ ! -e "$src/new" ]
	assert_equal "$(cat "$src/file")" content
}

@test "mounts: bind rw: the container's writes show on the host" {
	make_bundle b
	share_dir /data
	set_cmd 'echo from-container > /data/out'
	run_container
	assert_success
	assert_equal "$(cat "$SHARED/out")" from-container
}

@test "mounts: bind of a file onto a file" {
	src="$BATS_TEST_TMPDIR/single-file"
	echo one-file >"$src"
	make_bundle b
	add_mount "$(jq -nc --arg s "$src" '{destination: "/etc/injected", type: "bind", source: $s, options: ["bind", "ro"]}')"
	set_cmd 'cat /etc/injected; [ -f /etc/injected ] && echo is-file'
	run_container
	assert_success
	assert_output "$(printf 'one-file\nis-file')"
}

@test "mounts: rbind brings submounts along, bind does not" {
	host_dir_with_submount
	make_bundle b
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/rb", type: "bind", source: $s, options: ["rbind"]}')"
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/b", type: "bind", source: $s, options: ["bind"]}')"
	set_cmd 'cat /rb/top-file /rb/sub/marker; cat /b/top-file; ls -A /b/sub | wc -l'
	run_container
	assert_success
	assert_output "$(printf 'top\nsub\ntop\n0')"
}

@test "mounts: tmpfs with size and mode options (mountinfo and stat agree)" {
	make_bundle b
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "noexec", "size=1m", "mode=1770"]}'
	set_cmd "$(mi /scratch); stat -c %a /scratch"
	run_container
	assert_success
	assert_line --index 0 --regexp ' - tmpfs '
	assert_line --index 0 --regexp 'size=1024k'
	assert_line --index 0 --regexp 'mode=1770'
	assert_line --index 0 --regexp ' [^ ]*nosuid[^ ]* '
	assert_line --index 0 --regexp ' [^ ]*noexec[^ ]* '
	assert_line --index 1 1770
}

@test "mounts: tmpfs size is enforced (writing past 1m fails with ENOSPC)" {
	make_bundle b
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	set_cmd 'dd if=/dev/zero of=/scratch/big bs=64k count=64 2>&1; echo rc=$?'
	run_container
	assert_success
	assert_output --partial "No space left on device"
	assert_line rc=1
}

@test "mounts: proc, sysfs and mqueue of the default spec are mounted with their types" {
	make_bundle b
	set_cmd "$(mi /proc); $(mi /sys); $(mi /dev/mqueue)"
	run_container
	assert_success
	assert_line --index 0 --regexp ' - proc '
	assert_line --index 1 --regexp ' - sysfs '
	assert_line --index 2 --regexp ' - mqueue '
}

@test "mounts: noexec on a tmpfs prevents executing a copied binary" {
	make_bundle b
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["noexec"]}'
	set_cmd 'cp /bin/busybox /scratch/bb; /scratch/bb true 2>&1; echo rc=$?'
	run_container
	assert_success
	assert_output --partial "Permission denied"
	assert_line rc=126
}

@test "mounts: cgroup at /sys/fs/cgroup is visible (cgroup2 showing the container's own cgroup)" {
	make_bundle b
	set_ns cgroup
	set_cmd "$(mi /sys/fs/cgroup); ls /sys/fs/cgroup | head -n 50"
	run_container
	assert_success
	[ -n "${lines[0]}" ] || fail "nothing mounted at /sys/fs/cgroup: $output"
	if ward_specific; then
		# ward mounts cgroup2 (also on this hybrid host), in the container's cgroup namespace
		assert_line --index 0 --regexp ' - cgroup2 '
		assert_line cgroup.procs
	fi
}

@test "mounts: cgroup2 in a cgroup namespace lists only the container's processes" {
	if ! ward_specific; then
		skip "ward-specific: on this hybrid host runc mounts cgroup v1 hierarchies at /sys/fs/cgroup"
	fi
	make_bundle b
	set_ns cgroup
	set_ns pid
	set_cmd 'cat /sys/fs/cgroup/cgroup.procs'
	run_container
	assert_success
	# the shell (pid 1) and cat
	[ "${lines[0]}" = 1 ]
	[ "${#lines[@]}" -le 2 ]
}

@test "mounts: nosymfollow: symlinks on the mount are not followed (readlink still works)" {
	make_bundle b
	add_mount '{"destination": "/nsf", "type": "tmpfs", "source": "tmpfs", "options": ["nosymfollow"]}'
	set_cmd 'ln -s /etc/ward-test-rootfs /nsf/link; readlink /nsf/link; cat /nsf/link 2>&1; echo rc=$?; '"$(mi /nsf)"
	run_container
	assert_success
	assert_line --index 0 /etc/ward-test-rootfs
	refute_line ward-test-rootfs
	assert_line rc=1
	assert_line --regexp 'nosymfollow'
}

@test "mounts: rro makes submounts read-only too" {
	host_dir_with_submount
	make_bundle b
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/rro", type: "bind", source: $s, options: ["rbind", "rro"]}')"
	set_cmd 'cat /rro/sub/marker; touch /rro/sub/new 2>&1; echo sub-rc=$?; touch /rro/new 2>&1; echo top-rc=$?'
	run_container
	assert_success
	assert_line sub
	assert_line sub-rc=1
	assert_line top-rc=1
	assert_line --partial "Read-only file system"
	[ ! -e "$HOSTDIR/sub/new" ]
	[ ! -e "$HOSTDIR/new" ]
	# the host's submount is still writable
	touch "$HOSTDIR/sub/host-write"
}

# Propagation ----------------------------------------------------------------------------

# A host dir that is a shared mount (its own peer group), unmounted at teardown. Sets HOSTDIR.
shared_host_dir() {
	HOSTDIR="$BATS_TEST_TMPDIR/shared-src"
	mkdir -p "$HOSTDIR"
	mount --bind "$HOSTDIR" "$HOSTDIR"
	mount --make-shared "$HOSTDIR"
	on_teardown umount -R -l "$HOSTDIR"
	mkdir -p "$HOSTDIR/late"
}

@test "mounts: rslave: a host mount made after start propagates into the container" {
	shared_host_dir
	make_bundle b
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/prop", type: "bind", source: $s, options: ["rbind", "rslave"]}')"
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward exec "$id" sh -c "$(mi /prop)"
	assert_output --regexp ' master:[0-9]+ '
	mount -t tmpfs -o size=1m tmpfs "$HOSTDIR/late"
	echo late >"$HOSTDIR/late/marker"
	run ward exec "$id" cat /prop/late/marker
	assert_success
	assert_output late
}

@test "mounts: rprivate: a host mount made after start does not propagate into the container" {
	shared_host_dir
	make_bundle b
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/prop", type: "bind", source: $s, options: ["rbind", "rprivate"]}')"
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	run ward exec "$id" sh -c "$(mi /prop)"
	refute_output --regexp 'master:|shared:'
	mount -t tmpfs -o size=1m tmpfs "$HOSTDIR/late"
	echo late >"$HOSTDIR/late/marker"
	run ward exec "$id" sh -c 'ls -A /prop/late | wc -l'
	assert_success
	assert_output 0
}

@test "mounts: rshared: the mount is shared inside the container (mountinfo shared:N)" {
	shared_host_dir
	make_bundle b
	add_mount "$(jq -nc --arg s "$HOSTDIR" '{destination: "/prop", type: "bind", source: $s, options: ["rbind", "rshared"]}')"
	set_cmd "$(mi /prop)"
	run_container
	assert_success
	assert_output --regexp ' shared:[0-9]+ '
}

@test "rootfsPropagation shared: the container's / is a shared mount (mountinfo shared:N)" {
	make_bundle b '.linux.rootfsPropagation = "shared"'
	set_cmd "$(mi /)"
	run_container
	assert_success
	assert_output --regexp ' shared:[0-9]+ '
}

@test "rootfsPropagation private: the container's / has no propagation tags" {
	make_bundle b '.linux.rootfsPropagation = "private"'
	set_cmd "$(mi /)"
	run_container
	assert_success
	assert_output --regexp ' - '
	refute_output --regexp 'shared:|master:|unbindable'
}

@test "rootfsPropagation unbindable: the container runs and its / is unbindable" {
	make_bundle b '.linux.rootfsPropagation = "unbindable"'
	set_cmd "$(mi /)"
	run_container
	assert_success
	assert_output --regexp ' unbindable '
}

@test "rootfsPropagation slave: the container runs and its / is not shared" {
	make_bundle b '.linux.rootfsPropagation = "slave"'
	set_cmd "$(mi /)"
	run_container
	assert_success
	assert_output --regexp ' - '
	refute_output --regexp 'shared:'
}

@test "rootfsPropagation shared: nothing the container mounts leaks to the host" {
	make_bundle b '.linux.rootfsPropagation = "shared"'
	add_mount '{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
	set_cmd 'echo ok'
	run_container
	assert_success
	run grep -F "$BUNDLE" /proc/self/mountinfo
	assert_failure
}

# /dev -------------------------------------------------------------------------------------

@test "/dev: default content: null zero full random urandom tty ptmx pts shm fd stdin stdout stderr" {
	make_bundle b
	set_cmd 'cd /dev && for f in null zero full random urandom tty ptmx pts shm fd stdin stdout stderr; do
		[ -e $f ] || [ -L $f ] || echo missing $f; done
		for f in null zero full random urandom tty; do stat -c "%n %F %t:%T" $f; done
		readlink /dev/fd; readlink /dev/stdin; readlink /dev/stdout; readlink /dev/stderr
		[ -L /dev/ptmx ] && readlink /dev/ptmx || stat -c "%n %F %t:%T" /dev/ptmx
		'"$(mi /dev/pts)"
	run_container
	assert_success
	refute_output --partial missing
	assert_line "null character special file 1:3"
	assert_line "zero character special file 1:5"
	assert_line "full character special file 1:7"
	assert_line "random character special file 1:8"
	assert_line "urandom character special file 1:9"
	assert_line "tty character special file 5:0"
	assert_line /proc/self/fd
	assert_line /proc/self/fd/0
	assert_line /proc/self/fd/1
	assert_line /proc/self/fd/2
	assert_line --regexp '^(pts/ptmx|/dev/pts/ptmx|ptmx character special file 5:2)$'
	assert_line --regexp ' - devpts '
}

@test "/dev: the devices work: null swallows, zero reads zeros, full gives ENOSPC, urandom reads" {
	make_bundle b
	set_cmd 'echo x > /dev/null && echo null-ok; head -c 8 /dev/zero | od -An -tx1 | tr -d " "
		dd if=/dev/zero of=/dev/full bs=1 count=1 2>&1; echo full-rc=$?; head -c 16 /dev/urandom | wc -c'
	run_container
	assert_success
	assert_line null-ok
	assert_line 0000000000000000
	assert_line --partial "No space left on device"
	assert_line full-rc=1
	assert_line 16
}

@test "/dev: no host devices (disk, kmsg, mem) are in the container's /dev" {
	make_bundle b
	set_cmd 'ls -A /dev'
	run_container
	assert_success
	for dev in vda sda mem kmem kmsg port fuse loop0 tty0 console; do
		refute_line "$dev"
	done
	# and the host /dev has some of them, so the check above means something
	[ -e /dev/kmsg ]
	[ -e /dev/vda ]
}

@test "linux.devices: a char device 1:3 at /dev/mynull with the spec's mode and owner, usable" {
	make_bundle b '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3, "fileMode": 432, "uid": 0, "gid": 0}]'
	set_cmd 'stat -c "%F %t:%T %a %u:%g" /dev/mynull; echo data > /dev/mynull && echo write-ok; wc -c < /dev/mynull'
	run_container
	assert_success
	assert_output "$(printf 'character special file 1:3 660 0:0\nwrite-ok\n0')"
}

@test "linux.devices: /dev/fuse c 10:229 is created with its numbers and mode" {
	make_bundle b '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]'
	# stat prints major:minor in hex: 10:229 = a:e5
	set_cmd 'stat -c "%F %t:%T %a" /dev/fuse'
	run_container
	assert_success
	assert_output "character special file a:e5 666"
}

@test "linux.devices: a device in a subdirectory of /dev (/dev/sub/dir/null2) is created with its parents" {
	make_bundle b '.linux.devices = [{"path": "/dev/sub/dir/null2", "type": "c", "major": 1, "minor": 3, "fileMode": 438}]'
	set_cmd 'stat -c "%F %t:%T" /dev/sub/dir/null2; echo x > /dev/sub/dir/null2 && echo ok'
	run_container
	assert_success
	assert_output "$(printf 'character special file 1:3\nok')"
}

# maskedPaths / readonlyPaths ----------------------------------------------------------------

# This kernel has no /proc/kcore (nor sysrq-trigger): masking it must be a no-op, not an error.
@test "maskedPaths: /proc files read empty, masked directories show empty, a missing /proc/kcore is fine" {
	make_bundle b '.linux.maskedPaths = ["/proc/kcore", "/proc/timer_list", "/proc/keys", "/proc/acpi", "/sys/firmware", "/masked-dir"]'
	mkdir -p "$BUNDLE/rootfs/masked-dir"
	echo secret >"$BUNDLE/rootfs/masked-dir/secret"
	set_cmd 'echo kcore=$(cat /proc/kcore 2>/dev/null | wc -c); wc -c < /proc/timer_list; wc -c < /proc/keys
		ls -A /proc/acpi | wc -l; ls -A /sys/firmware | wc -l; ls -A /masked-dir | wc -l
		cat /masked-dir/secret 2>&1; cat /proc/self/comm'
	run_container
	assert_success
	assert_line --index 0 kcore=0
	assert_line --index 1 0
	assert_line --index 2 0
	assert_line --index 3 0
	assert_line --index 4 0
	assert_line --index 5 0
	refute_line secret
	assert_line --index 7 cat
	# the host still has the content
	[ "$(wc -c </proc/timer_list)" -gt 0 ]
	[ -n "$(ls -A /sys/firmware)" ]
}

# One empty read-only tmpfs serves every masked directory (a bind of the first on the rest):
# each of them refuses writes, a root in the container included.
@test "maskedPaths: every masked directory refuses writes (EROFS), the first and the binds of it alike" {
	make_bundle b '.linux.maskedPaths = ["/proc/acpi", "/sys/firmware", "/masked-dir", "/masked-two"]'
	mkdir -p "$BUNDLE/rootfs/masked-dir" "$BUNDLE/rootfs/masked-two"
	set_cmd 'for d in /proc/acpi /sys/firmware /masked-dir /masked-two; do
		touch $d/x 2>&1 | grep -c "Read-only file system"; mkdir $d/y 2>/dev/null && echo made; done
		grep -cE " /(proc/acpi|sys/firmware|masked-dir|masked-two) ro[, ].* - tmpfs " /proc/self/mountinfo'
	run_container
	assert_success
	assert_equal "$output" "$(printf '1\n1\n1\n1\n4')"
	[ ! -e "$BUNDLE/rootfs/masked-dir/x" ] && [ ! -e "$BUNDLE/rootfs/masked-two/y" ]
}

@test "maskedPaths: a masked file cannot be written (masking is not a writable bind)" {
	make_bundle b '.linux.maskedPaths = ["/etc/masked-file"]'
	echo orig >"$BUNDLE/rootfs/etc/masked-file"
	set_cmd 'echo overwrite > /etc/masked-file; cat /etc/masked-file | wc -c'
	run_container
	assert_success
	assert_line 0
	assert_equal "$(cat "$BUNDLE/rootfs/etc/masked-file")" orig
}

@test "readonlyPaths: /proc/sys writes fail with EROFS, a read-only rootfs dir refuses writes, others stay writable" {
	make_bundle b '.linux.readonlyPaths = ["/proc/sys", "/ro-dir"]'
	set_ns uts
	mkdir -p "$BUNDLE/rootfs/ro-dir" "$BUNDLE/rootfs/rw-dir"
	set_cmd 'echo evil > /proc/sys/kernel/hostname 2>&1; echo sys-rc=$?; touch /ro-dir/x 2>&1; echo ro-rc=$?; touch /rw-dir/x && echo rw-ok'
	run_container
	assert_success
	assert_line sys-rc=1
	assert_line ro-rc=1
	assert_line rw-ok
	assert_output --partial "Read-only file system"
	[ ! -e "$BUNDLE/rootfs/ro-dir/x" ]
}

# Writing back the value read cannot change the host even if the write went through.
@test "readonlyPaths: the default spec keeps /proc/sys read-only (kernel.core_pattern write fails)" {
	make_bundle b
	set_cmd 'cat /proc/sys/kernel/core_pattern > /tmp/cp; cat /tmp/cp > /proc/sys/kernel/core_pattern; echo rc=$?'
	run_container
	assert_success
	assert_line rc=1
	[[ "$stderr" == *"Read-only file system"* || "$stderr" == *"Permission denied"* ]]
}

# --no-pivot -------------------------------------------------------------------------------

@test "--no-pivot: the container runs and sees its rootfs as /" {
	make_bundle b
	set_cmd 'cat /etc/ward-test-rootfs; ls /; '"$(mi /)"
	run_container --no-pivot
	assert_success
	assert_line --index 0 ward-test-rootfs
	assert_line bin
	assert_line proc
	# the host's / (with /work and /usr/lib) is not visible
	refute_line work
	refute_line usr
}

@test "--no-pivot: create/start path works too, and the host is not affected" {
	make_bundle b
	share_dir
	set_cmd 'cat /etc/ward-test-rootfs > /shared/out'
	id=$(cid np)
	start_container "$id" --no-pivot
	wait_status "$id" stopped
	assert_equal "$(cat "$SHARED/out")" ward-test-rootfs
}

@test "rootfs: a read-only /dev mount (runc's [ro /dev mount]): the submounts below it are made, /dev stays read-only" {
	make_bundle b '.mounts |= map(if .destination == "/dev" then .options += ["ro"] else . end)'
	set_cmd 'grep -E " /dev(/pts|/shm|/mqueue)? " /proc/self/mounts | cut -d" " -f2,4 | cut -d, -f1; touch /dev/x 2>/dev/null && echo WROTE; echo >/dev/null && echo null-ok'
	run_container
	assert_success
	assert_line --regexp '^/dev ro$'
	assert_line --regexp '^/dev/pts rw$'
	assert_line null-ok
	refute_line WROTE
}

@test "rootfs: --no-pivot: a process in the container cannot mount a fresh /proc from a nested user namespace (the host's /proc is not reachable) (runc)" {
	# CAP_SETFCAP: what unshare -r needs to map uid 0 (runc's no_pivot.bats does the same)
	make_bundle b '.process.capabilities.bounding += ["CAP_SETFCAP"]
		| .process.capabilities.permitted += ["CAP_SETFCAP"]
		| .process.capabilities.effective += ["CAP_SETFCAP"]'
	mkdir -p "$BUNDLE/rootfs/tmp/p"
	set_cmd 'unshare -mrpf sh -c "echo in-userns; mount -t proc proc /tmp/p && echo MOUNTED" 2>&1; ls /proc/self/ >/dev/null && echo proc-ok'
	run_container --no-pivot
	assert_success
	assert_line in-userns
	assert_line proc-ok
	refute_line MOUNTED
}
