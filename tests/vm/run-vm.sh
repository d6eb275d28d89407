#!/usr/bin/env bash
# Runs bats suites inside a real kernel: Debian's linux-image-amd64 under qemu (TCG), with
# cgroup2 (every controller) at /sys/fs/cgroup, securityfs and AppArmor, the host's root
# shared read-only over 9p below a tmpfs overlay, and an ext4 scratch disk at /scratch that
# holds TMPDIR (so every bundle is on ext4: the 6.1 kernel cannot idmap tmpfs or overlayfs
# mounts, and ward runs containers in user namespaces with idmapped rootfs). The TAP of the
# suites comes back on stdout.
#
# Usage: tests/vm/run-vm.sh [--check] [SUITE.bats...]      (default: tests/vm/*.bats)
#        tests/vm/run-vm.sh --exec PROGRAM [ARG...]
#   --check   print why the VM suite cannot run here (not installed) and exit 1, else exit 0
#   --exec    run PROGRAM ARG... in the guest instead of bats (same environment, cwd = the
#             checkout); its stdout and stderr come back on stdout, its exit status is
#             this script's (tests/bench/run-latency-vm uses it)
#
# Output: "# ..." comment lines, then the suites' TAP ("ok N ..." / "not ok N ..."). When
# the guest does not report a result (no boot, crash, hang killed by the timeout), a
# "not ok" line says so, followed by the end of the guest's console as comments.
# Exit status: 0 when every test passed, 1 otherwise. When qemu-system-x86_64, a kernel
# image with its modules, a static busybox or mkfs.ext4 is missing, it prints
# "# vm: skipped: ..." and exits 0 (nothing counted); a WARD_VM_* setting naming something
# missing is a failure.
#
# Environment:
#   WARD              runtime binary used inside the guest (default build/ward); the guest sees
#                     the host's files at the same paths, except /proc, /sys, /dev and /run
#   WARD_TEST_BIN     test helper binaries (default build/tests)
#   WARD_VM_TIMEOUT   seconds before a guest is killed (default 1500; the other suites of
#                     tests/vm take about 4 minutes on a 2-core host, cri.bats about 4 more)
#   WARD_VM_KERNEL    kernel image (default: newest /boot/vmlinuz-* with /lib/modules/<ver>)
#   WARD_VM_MODULES   its modules dir (default /lib/modules/<ver>, <ver> from the image's name)
#   WARD_VM_BUSYBOX   static busybox for the initramfs (default /bin/busybox, busybox-static)
#   WARD_VM_CACHE     where the initramfs is cached (default build/vm-cache of this checkout)
#   WARD_VM_FILTER    passed to bats --filter (test names) inside the guest
#   WARD_VM_QEMU      qemu binary (default qemu-system-x86_64)
#   WARD_VM_QEMU_ARGS extra qemu arguments (word-split; e.g. "-drive file=disk.img,if=virtio")
#   WARD_VM_APPEND    extra kernel command line (e.g. "loglevel=7")
#   WARD_VM_SCRATCH_SIZE  size of the sparse ext4 scratch image (default 1G; truncate -s syntax)
#   WARD_VM_KEEP=1    keep the run's work dir (console log, results, scratch image) and print
#                     its path
#
# The scratch disk: a sparse image in the run's work dir, made by mkfs.ext4 on every run
# (no journal: nothing on it outlives the run, and journal writes cost under TCG), attached
# as a virtio disk (/dev/vda in the guest) and mounted at /scratch by guest-init.sh.
#
# The initramfs (busybox, tests/vm/guest-init.sh as /init, the virtio/9p/overlay/virtio-blk/
# ext4 modules in modules.dep order, decompressed) is rebuilt when the kernel, its
# modules.dep, busybox, guest-init.sh or this script change.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# crc32c_generic: ext4 and jbd2 ask the crypto API for "crc32c" (a softdep in modules.softdep,
# and crc32c-intel needs SSE4.2, which the qemu64 CPU lacks); there is no modprobe in the
# initramfs to load it on demand, so it goes before ext4.
MODULES_WANTED=(virtio_pci 9pnet_virtio 9p overlay virtio_blk crc32c_generic ext4)

# ---------------------------------------------------------------------------------------
# What is needed, and where it is

# Set KERNEL, KVER, MODDIR, or fail with a reason on stdout.
find_kernel() {
	local k v
	if [ -n "${WARD_VM_KERNEL:-}" ]; then
		KERNEL=$WARD_VM_KERNEL
		[ -r "$KERNEL" ] || { echo "WARD_VM_KERNEL=$KERNEL is not readable"; return 2; }
		KVER=$(basename "$KERNEL")
		KVER=${KVER#vmlinuz-}
		MODDIR=${WARD_VM_MODULES:-/lib/modules/$KVER}
		[ -r "$MODDIR/modules.dep" ] || { echo "no $MODDIR/modules.dep for $KERNEL (set WARD_VM_MODULES)"; return 2; }
		return 0
	fi
	for k in $(printf '%s\n' /boot/vmlinuz-* | sort -rV); do
		v=${k#/boot/vmlinuz-}
		if [ -r "$k" ] && [ -r "/lib/modules/$v/modules.dep" ]; then
			KERNEL=$k KVER=$v MODDIR=/lib/modules/$v
			return 0
		fi
	done
	echo "no kernel image: no /boot/vmlinuz-* with /lib/modules/<version> (apt-get install linux-image-amd64)"
	return 1
}

find_qemu() {
	QEMU=${WARD_VM_QEMU:-qemu-system-x86_64}
	command -v "$QEMU" >/dev/null && return 0
	echo "$QEMU not found (apt-get install qemu-system-x86)"
	[ -z "${WARD_VM_QEMU:-}" ] || return 2
	return 1
}

find_busybox() {
	BUSYBOX=${WARD_VM_BUSYBOX:-/bin/busybox}
	local bad=1
	[ -z "${WARD_VM_BUSYBOX:-}" ] || bad=2
	if ! [ -x "$BUSYBOX" ]; then
		echo "no $BUSYBOX (apt-get install busybox-static)"
		return $bad
	fi
	if ! LC_ALL=C ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic executable'; then
		echo "$BUSYBOX is not statically linked (apt-get install busybox-static)"
		return $bad
	fi
}

find_mkfs() {
	MKFS=$(PATH=$PATH:/usr/sbin:/sbin command -v mkfs.ext4) && return 0
	echo "no mkfs.ext4 for the scratch disk (apt-get install e2fsprogs)"
	return 1
}

# All of the above; the first reason on stdout. Status 1: something is not installed (the
# suite is skipped); 2: a WARD_VM_* setting is wrong (the run fails).
available() {
	find_qemu && find_kernel && find_busybox && find_mkfs
}

reason=$(available)
avail=$?
mode=bats
case "${1:-}" in
--exec)
	mode='exec'
	shift
	[ $# -gt 0 ] || { echo "run-vm.sh: --exec needs a program" >&2; exit 2; }
	;;
esac
if [ "${1:-}" = --check ]; then
	[ "$avail" = 1 ] && { echo "$reason"; exit 1; }
	exit 0
fi
case "$avail" in
0) available >/dev/null ;; # set the variables in this shell
1) echo "# vm: skipped: $reason"; exit 0 ;;
*) echo "not ok 1 vm: $reason"; exit 1 ;;
esac

# ---------------------------------------------------------------------------------------
# Reporting

VM_TIMEOUT=${WARD_VM_TIMEOUT:-1500}
# Print one "not ok" line (counted as a failure) and the reason, then exit 1.
vm_fail() {
	echo "not ok 1 vm: $*"
	exit 1
}
comment() { sed 's/^/# /'; }

command -v bats >/dev/null || vm_fail "bats is not installed on the host (the guest runs the host's bats)"

# ---------------------------------------------------------------------------------------
# Initramfs

CACHE=${WARD_VM_CACHE:-$repo/build/vm-cache}
mkdir -p "$CACHE" || vm_fail "cannot create the cache dir $CACHE"

# add_module PATH: copy (decompressed) into $INITRD_DIR/modules, append to the load order.
declare -A mod_seen=()
mod_order=()
add_module() {
	local rel=$1 src name
	src=$MODDIR/$rel
	name=$(basename "$rel")
	name=${name%%.ko*}
	name=${name//-/_}
	[ -n "${mod_seen[$name]:-}" ] && return 0
	mod_seen[$name]=1
	case "$src" in
	*.ko) cp "$src" "$INITRD_DIR/modules/$name.ko" ;;
	*.ko.xz) xz -dc "$src" >"$INITRD_DIR/modules/$name.ko" ;;
	*.ko.zst) zstd -qdc "$src" >"$INITRD_DIR/modules/$name.ko" ;;
	*.ko.gz) gzip -dc "$src" >"$INITRD_DIR/modules/$name.ko" ;;
	*) echo "unknown module file $src" >&2; return 1 ;;
	esac || { echo "cannot copy or decompress $src" >&2; return 1; }
	mod_order+=("$name")
}

# want_module NAME: NAME and its dependencies from modules.dep, dependencies first (as
# modprobe: the dependency list reversed). Built-in modules need nothing.
want_module() {
	local want=$1 line alt deps i
	alt=${want//_/-}
	line=$(grep -E "(^|/)($want|$alt)\.ko(\.[a-z]+)?:" "$MODDIR/modules.dep" | head -n1)
	if [ -z "$line" ]; then
		if grep -qE "(^|/)($want|$alt)\.ko\$" "$MODDIR/modules.builtin" 2>/dev/null; then
			return 0
		fi
		echo "module $want not found in $MODDIR/modules.dep" >&2
		return 1
	fi
	read -r -a deps <<<"${line#*:}"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		add_module "${deps[$i]}" || return 1
	done
	add_module "${line%%:*}"
}

build_initramfs() { # $1 = output file
	local out=$1 m cpio_cmd
	INITRD_DIR=$(mktemp -d "$CACHE/build.XXXXXX") || return 1
	mkdir -p "$INITRD_DIR"/{bin,dev,modules,proc,sys,lower,rw,newroot}
	cp "$BUSYBOX" "$INITRD_DIR/bin/busybox"
	ln -s busybox "$INITRD_DIR/bin/sh"
	cp "$here/guest-init.sh" "$INITRD_DIR/init"
	chmod 0755 "$INITRD_DIR/init" "$INITRD_DIR/bin/busybox"
	mknod -m 0600 "$INITRD_DIR/dev/console" c 5 1 2>/dev/null || true
	mknod -m 0666 "$INITRD_DIR/dev/null" c 1 3 2>/dev/null || true
	for m in "${MODULES_WANTED[@]}"; do
		want_module "$m" || return 1
	done
	printf '%s\n' "${mod_order[@]}" >"$INITRD_DIR/modules/order"
	if command -v cpio >/dev/null; then cpio_cmd=(cpio --quiet); else cpio_cmd=("$BUSYBOX" cpio); fi
	# uncompressed: nothing to inflate at boot under TCG
	(cd "$INITRD_DIR" && find . -mindepth 1 | LC_ALL=C sort | "${cpio_cmd[@]}" -o -H newc -R 0:0) >"$out.tmp" ||
		return 1
	mv "$out.tmp" "$out"
	rm -rf "$INITRD_DIR"
}

key=$({
	echo "$KERNEL $KVER $MODDIR"
	sha256sum "$KERNEL" "$MODDIR/modules.dep" "$BUSYBOX" "$here/guest-init.sh" "$here/run-vm.sh" | cut -d' ' -f1
	echo "${MODULES_WANTED[*]}"
} | sha256sum | cut -c1-16)
INITRD=$CACHE/initramfs-$KVER-$key.cpio
if ! [ -s "$INITRD" ]; then
	(
		flock 9
		[ -s "$INITRD" ] && exit 0
		rm -rf "$CACHE"/build.* "$CACHE"/initramfs-*.cpio*
		build_initramfs "$INITRD" 2>&1
	) 9>"$CACHE/.lock" >"$CACHE/build.log" || {
		echo "# vm: building the initramfs failed:"
		comment <"$CACHE/build.log"
		vm_fail "cannot build the initramfs for $KERNEL"
	}
fi

# ---------------------------------------------------------------------------------------
# The job

: "${WARD:=$repo/build/ward}"
: "${WARD_TEST_BIN:=$repo/build/tests}"
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }
WARD=$(abs "$WARD")
WARD_TEST_BIN=$(abs "$WARD_TEST_BIN")
[ -x "$WARD" ] || vm_fail "WARD=$WARD is not an executable (build ward with make, or set WARD)"

suites=()
if [ "$mode" = exec ]; then
	: # "$@" is the program and its arguments
elif [ $# -eq 0 ]; then
	for s in "$here"/*.bats; do [ -e "$s" ] && suites+=("$s"); done
	[ ${#suites[@]} -gt 0 ] || vm_fail "no suites in $here"
else
	for s in "$@"; do
		[ -r "$s" ] || vm_fail "no suite $s"
		suites+=("$(cd "$(dirname "$s")" && pwd)/$(basename "$s")")
	done
fi
# The guest mounts its own /proc, /sys, /dev and /run over the host's.
for p in "$WARD" "$repo" ${suites[@]+"${suites[@]}"}; do
	case "$(realpath -m "$p")/" in
	/proc/* | /sys/* | /dev/* | /run/*) vm_fail "$p is under /proc, /sys, /dev or /run, which the guest does not see" ;;
	esac
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ward-vm.XXXXXX") || vm_fail "mktemp failed"
RESULTS=$WORK/results
mkdir -p "$RESULTS"

sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	echo "WARD=$(sq "$WARD")"
	echo "WARD_TEST_BIN=$(sq "$WARD_TEST_BIN")"
	echo "WARD_VM_REPO=$(sq "$repo")"
	echo "WARD_VM_FILTER=$(sq "${WARD_VM_FILTER:-}")"
	echo "WARD_VM_MODE=$mode"
} >"$RESULTS/job.env"
if [ "$mode" = exec ]; then
	for a in "$@"; do
		case "$a" in *$'\n'*) vm_fail "--exec: an argument contains a newline" ;; esac
	done
	printf '%s\n' "$@" >"$RESULTS/job.cmd"
	: >"$RESULTS/job.suites"
else
	printf '%s\n' "${suites[@]}" >"$RESULTS/job.suites"
fi

# The scratch disk: sparse, a fresh ext4 every run. Full inode-table and no lazy init, so
# the guest kernel starts no ext4lazyinit thread (mke2fs zeroes the sparse file by punching
# holes: instant).
SCRATCH=$WORK/scratch.img
truncate -s "${WARD_VM_SCRATCH_SIZE:-1G}" "$SCRATCH" ||
	vm_fail "cannot create the scratch image $SCRATCH (WARD_VM_SCRATCH_SIZE=${WARD_VM_SCRATCH_SIZE:-1G})"
"$MKFS" -q -F -L wardscratch -m 0 -O ^has_journal -E lazy_itable_init=0,lazy_journal_init=0 \
	"$SCRATCH" >"$WORK/mkfs.log" 2>&1 || {
	comment <"$WORK/mkfs.log"
	vm_fail "mkfs.ext4 of the scratch image failed"
}

# ---------------------------------------------------------------------------------------
# Boot

qpid=
cleanup() {
	local i
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
		kill -TERM "$qpid" 2>/dev/null # timeout passes it on to qemu
		for ((i = 0; i < 50; i++)); do
			kill -0 "$qpid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$qpid" 2>/dev/null # timeout's own process group: qemu with it
		kill -KILL "$qpid" 2>/dev/null
		wait "$qpid" 2>/dev/null
	fi
	# qemu itself, should it have outlived timeout
	if [ -s "$WORK/qemu.pid" ]; then
		local p
		p=$(cat "$WORK/qemu.pid" 2>/dev/null)
		if [ -n "$p" ] && [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$(command -v "$QEMU")" ]; then
			kill -KILL "$p" 2>/dev/null
		fi
	fi
	qpid=
	if [ -n "${WARD_VM_KEEP:-}" ]; then
		echo "# vm: work dir kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo "not ok 1 vm: interrupted"; exit 130' INT TERM HUP

q() { printf '%s' "${1//,/,,}"; } # a value inside a qemu option list
# panic=-1 + -no-reboot: a guest whose init dies ends qemu at once instead of hanging.
# tsc=reliable: TCG's TSC is the host's, stable across vCPUs; without it the guest falls back
# to the HPET, an emulated MMIO read per clock_gettime. mitigations=off: no page-table
# isolation (every CR3 switch is a TLB flush under TCG). cgroup_no_v1=all: every controller
# stays free for the cgroup2 hierarchy that guest-init.sh mounts.
cmdline="console=ttyS0 loglevel=4 panic=-1 oops=panic edd=off rdinit=/init tsc=reliable mitigations=off cgroup_no_v1=all apparmor=1 ${WARD_VM_APPEND:-}"
# shellcheck disable=SC2054 # commas inside qemu's option values
qemu_args=(
	# One TCG thread for both vCPUs: measured faster than MTTCG on a 2-core host, where the
	# vCPU threads compete with qemu's 9p I/O (smoke suite 55 s instead of 80 s).
	-accel tcg,thread=single -cpu qemu64 -smp 2 -m 2048
	-nographic -nodefaults -no-user-config -no-reboot
	-serial "file:$WORK/console.log" -monitor none
	-kernel "$KERNEL" -initrd "$INITRD" -append "$cmdline"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$(q "$RESULTS"),mount_tag=wardresults,security_model=none"
	# cache=unsafe: the image is thrown away after the run, flushes need not reach the host
	-drive "file=$(q "$SCRATCH"),if=virtio,format=raw,cache=unsafe,discard=unmap"
	-pidfile "$WORK/qemu.pid"
)
# shellcheck disable=SC2206 # word-split on purpose
[ -n "${WARD_VM_QEMU_ARGS:-}" ] && qemu_args+=($WARD_VM_QEMU_ARGS)

echo "# vm: kernel $KVER ($KERNEL), $("$QEMU" --version | head -n1 | sed 's/ (.*//'), TCG, timeout ${VM_TIMEOUT}s"
if [ "$mode" = exec ]; then
	echo "# vm: WARD=$WARD; command: $*"
else
	echo "# vm: WARD=$WARD; suites: ${suites[*]##*/}"
fi
t0=$(date +%s.%N)
timeout -k 10 "$VM_TIMEOUT" "$QEMU" "${qemu_args[@]}" </dev/null >"$WORK/qemu.out" 2>&1 &
qpid=$!
# Should this script be killed outright (no trap runs), qemu goes too, not at the timeout.
(
	while kill -0 $$ 2>/dev/null && kill -0 "$qpid" 2>/dev/null; do sleep 1; done
	if ! kill -0 $$ 2>/dev/null; then
		kill -KILL -- "-$qpid" "$qpid"
		[ -n "${WARD_VM_KEEP:-}" ] || rm -rf "$WORK"
	fi
) </dev/null >/dev/null 2>&1 &
wait "$qpid"
qrc=$?
qpid=
t1=$(date +%s.%N)
elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

# ---------------------------------------------------------------------------------------
# Results

status=
[ -s "$RESULTS/status" ] && status=$(cat "$RESULTS/status")
if [ -r "$RESULTS/timing" ]; then
	read -r _ boot <<<"$(grep '^boot ' "$RESULTS/timing")"
	read -r _ suite <<<"$(grep '^suite ' "$RESULTS/timing")"
	echo "# vm: guest booted in ${boot}s (kernel to overlay root), $([ "$mode" = exec ] && echo "the command" || echo suites) ran ${suite}s, qemu ${elapsed}s in all"
fi

# Why the guest reported no status.
no_status_why() {
	local w
	case "$qrc" in
	124 | 137) w="the guest did not finish within WARD_VM_TIMEOUT=${VM_TIMEOUT}s and was killed" ;;
	0) w="the guest stopped (power-off, reboot or panic) without reporting a result" ;;
	*) w="qemu exited with status $qrc before the guest reported a result" ;;
	esac
	grep -q 'Kernel panic' "$WORK/console.log" 2>/dev/null && w="$w (the guest kernel panicked)"
	printf '%s' "$w"
}

# The end of the console and the guest's log, as comments.
guest_diagnostics() {
	if [ -s "$WORK/qemu.out" ]; then
		echo "# qemu output:"
		tail -n 20 "$WORK/qemu.out" | comment
	fi
	echo "# end of the guest console (WARD_VM_KEEP=1 keeps the whole log):"
	tail -n 40 "$WORK/console.log" 2>/dev/null | tr -d '\r' |
		sed -E 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' | comment
	[ -r "$RESULTS/guest.log" ] && { echo "# guest.log:"; comment <"$RESULTS/guest.log"; }
}

if [ "$mode" = exec ]; then
	[ -r "$RESULTS/tap" ] && cat "$RESULTS/tap"
	if [ -z "$status" ]; then
		echo "run-vm.sh: $(no_status_why)"
		guest_diagnostics
		exit 1
	fi
	exit "$status"
fi

tap_lines() { # the TAP: from the results share, else from the console markers
	if [ -r "$RESULTS/tap" ]; then
		cat "$RESULTS/tap"
	elif grep -q '^WARD-VM-TAP-BEGIN' "$WORK/console.log" 2>/dev/null; then
		sed -n '/^WARD-VM-TAP-BEGIN/,/^WARD-VM-TAP-END/{/^WARD-VM-TAP-/d;p}' "$WORK/console.log" | tr -d '\r'
	fi
}
if [ -z "$status" ] && grep -q '^WARD-VM-TAP-END status=' "$WORK/console.log" 2>/dev/null; then
	status=$(sed -n 's/^WARD-VM-TAP-END status=\([0-9]*\).*/\1/p' "$WORK/console.log" | tail -n1)
fi

tap=$(tap_lines)
[ -n "$tap" ] && printf '%s\n' "$tap"
nfail=$(printf '%s\n' "$tap" | grep -c '^not ok ')
nok=$(printf '%s\n' "$tap" | grep -c '^ok ')

why=
if [ -z "$status" ]; then
	why=$(no_status_why)
elif [ "$status" != 0 ] && [ "$nfail" -eq 0 ]; then
	why="bats exited with status $status in the guest (no failing test reported)"
elif [ "$nok" -eq 0 ] && [ "$nfail" -eq 0 ]; then
	why="the guest ran no test"
fi
if [ -n "$why" ]; then
	echo "not ok $((nok + nfail + 1)) vm: $why"
	guest_diagnostics
	exit 1
fi
[ "$nfail" -eq 0 ] && [ "$status" = 0 ]
