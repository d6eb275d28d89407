# Shared setup for the suites that tests/vm/run-vm.sh runs inside the VM: `load vm-helpers`
# (it loads the integration helpers, tests/helpers.bash, with the runtime of this checkout
# as the default WARD).
#
# Under TCG every fork+exec costs about 0.1 s, so what the host does in a few hundred small
# processes is done here in one.

# helpers.bash takes the checkout as $BATS_TEST_DIRNAME/..; for tests/vm/x.bats that is tests/.
WARD_VM_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${WARD:=$(dirname "$WARD_VM_TESTS")/build/ward}"
: "${WARD_TEST_BIN:=$(dirname "$WARD_VM_TESTS")/build/tests}"
load "$WARD_VM_TESTS/helpers"

# True inside the guest that run-vm.sh boots (guest-init.sh sets the hostname and mounts
# the results share at /ward-vm/results).
in_ward_vm() {
	[ "$(cat /proc/sys/kernel/hostname)" = ward-vm ] && [ -d /ward-vm/results ]
}

# skip_unless_vm: in setup, skip the test outside the VM (`bats tests/vm/x.bats` on a host
# would test the host's kernel instead).
skip_unless_vm() {
	in_ward_vm || skip "not inside the ward VM (run tests/vm/run-vm.sh)"
}

# build_rootfs as in helpers.bash (same tree: busybox, one relative symlink per applet,
# passwd, group, the marker file), but the ~400 applet links come from one perl process
# instead of one `ln` each (about 40 s under TCG).
build_rootfs() {
	[ -e "$ROOTFS_CACHE/.done" ] && return 0
	(
		flock 9
		[ -e "$ROOTFS_CACHE/.done" ] && exit 0
		set -e
		rm -rf "$ROOTFS_CACHE"
		local r="$ROOTFS_CACHE" d
		mkdir -p "$r"
		for d in bin sbin etc proc sys dev tmp root; do mkdir -p "$r/$d"; done
		chmod 0755 "$r" "$r"/*
		chmod 1777 "$r/tmp"
		chmod 0700 "$r/root"
		cp /bin/busybox "$r/bin/busybox"
		chmod 0755 "$r/bin/busybox"
		# shellcheck disable=SC2046 # one argument per applet
		perl -e 'my $dir = shift; for (@ARGV) { next if $_ eq "busybox";
			symlink("busybox", "$dir/$_") or die "symlink $dir/$_: $!\n" }' \
			"$r/bin" $(/bin/busybox --list)
		printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
			'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$r/etc/passwd"
		printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$r/etc/group"
		echo "ward-test-rootfs" >"$r/etc/ward-test-rootfs"
		touch "$r/.done"
	) 9>"$BATS_RUN_TMPDIR/rootfs.lock"
}
