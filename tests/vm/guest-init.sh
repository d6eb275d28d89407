#!/bin/sh
# shellcheck shell=dash # busybox ash: POSIX sh plus local
# The guest side of tests/vm/run-vm.sh. run-vm.sh copies this script into the initramfs as
# /init, next to a static busybox (/bin/busybox) and the modules listed in /modules/order.
# It runs as PID 1 twice, always under that busybox's sh:
#
# stage 1 (initramfs): load the virtio/9p/overlay/virtio-blk/ext4 modules, mount the host's
#   root (9p tag "hostroot", read-only) as the lower layer of an overlay whose upper layer is
#   a tmpfs, mount a tmpfs at /ward-vm in it (this script, busybox), the host's results dir
#   (9p tag "wardresults", read-write) at /ward-vm/results and the ext4 scratch disk
#   (/dev/vda, made by run-vm.sh) at /scratch, then switch_root into the overlay.
# stage 2 (overlay root): mount proc, sys, devtmpfs, devpts, cgroup2 at /sys/fs/cgroup (every
#   controller enabled in the root's cgroup.subtree_control), securityfs, a tmpfs on /run (/tmp
#   stays the overlay's; the suites' TMPDIR is /scratch/tmp on the ext4 disk, so every bundle
#   is on a filesystem the 6.1 kernel can idmap); read the job that run-vm.sh left in the
#   results dir; run `bats --tap` on its suites (or, in exec mode, the job's command); write
#   the TAP (or the command's output), the exit status and timings to the results dir (and the
#   output to the console between markers, in case the results share fails); power off.
#
# The job (written by run-vm.sh into the results dir):
#   job.env     shell assignments: WARD, WARD_TEST_BIN, WARD_VM_REPO, WARD_VM_FILTER,
#               WARD_VM_MODE (bats or exec)
#   job.suites  one .bats path (host path, seen through the 9p root) per line
#   job.cmd     exec mode: the program and its arguments, one per line
# The results (read by run-vm.sh):
#   tap         bats' (or the command's) stdout and stderr (written as they run: partial
#               after a hang)
#   status      their exit status, written last; its presence means the run completed
#   guest.log   what stage 2 did, for diagnostics
#   timing      "boot S" (guest uptime when stage 2 started) and "suite S" (bats' run time)
#
# If anything goes wrong, PID 1 powers off (or exits: the kernel panics, panic=-1 reboots and
# qemu's -no-reboot ends qemu); run-vm.sh then reports the run as failed.

# stage 2 runs the initramfs' busybox, copied to /ward-vm (the host's /bin/busybox may differ)
BB=/ward-vm/busybox
[ -x "$BB" ] || BB=/bin/busybox

say() { echo "ward-vm: $*" >/dev/console 2>/dev/null || echo "ward-vm: $*"; }

halt_now() {
	$BB sync
	$BB poweroff -f
	# not reached; if it is, PID 1 exiting panics the kernel and qemu exits (-no-reboot)
	exit 1
}

die() {
	say "FATAL: $*"
	[ -d /ward-vm/results ] && echo "FATAL: $*" >>/ward-vm/results/guest.log 2>/dev/null
	halt_now
}

# ---------------------------------------------------------------------------------------
stage1() {
	export PATH=/bin
	$BB mkdir -p /proc /sys /dev /lower /rw /newroot
	$BB mount -t proc proc /proc
	$BB mount -t sysfs sysfs /sys
	$BB mount -t devtmpfs devtmpfs /dev 2>/dev/null
	exec </dev/console >/dev/console 2>&1
	say "stage 1: kernel $($BB uname -r), uptime $($BB cut -d' ' -f1 /proc/uptime) s"

	local m
	for m in $($BB cat /modules/order); do
		# already there (built in, or loaded as a dependency by the kernel): fine
		[ -d "/sys/module/$m" ] && continue
		$BB insmod "/modules/$m.ko" || die "insmod $m failed"
	done

	$BB mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower ||
		die "cannot mount the host root (9p tag hostroot)"
	$BB mount -t tmpfs -o mode=0755 ward-vm-rw /rw || die "tmpfs for the overlay"
	$BB mkdir -p /rw/upper /rw/work
	$BB mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
		die "cannot mount the overlay root"

	$BB mkdir -p /newroot/ward-vm
	$BB mount -t tmpfs -o mode=0755 ward-vm /newroot/ward-vm || die "tmpfs /ward-vm"
	$BB mkdir -p /newroot/ward-vm/results /newroot/ward-vm/tmp
	$BB chmod 1777 /newroot/ward-vm/tmp
	$BB mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=512000 wardresults /newroot/ward-vm/results ||
		die "cannot mount the results dir (9p tag wardresults)"
	$BB cp /init /newroot/ward-vm/init

	# The scratch disk: virtio_blk probes synchronously, but give udev-less devtmpfs a moment.
	local i=0
	while ! [ -b /dev/vda ] && [ $i -lt 50 ]; do
		$BB usleep 100000
		i=$((i + 1))
	done
	[ -b /dev/vda ] || die "no scratch disk /dev/vda (virtio-blk)"
	$BB mkdir -p /newroot/scratch
	$BB mount -t ext4 -o noatime,nodiscard /dev/vda /newroot/scratch ||
		die "cannot mount the ext4 scratch disk /dev/vda at /scratch"
	$BB mkdir -p /newroot/scratch/tmp
	$BB chmod 1777 /newroot/scratch/tmp
	$BB cp $BB /newroot/ward-vm/busybox

	$BB umount /proc /sys
	$BB mount --move /dev /newroot/dev 2>/dev/null || $BB umount /dev
	# shellcheck disable=SC2093 # exec returns only when switch_root cannot run
	exec $BB switch_root /newroot /ward-vm/busybox sh /ward-vm/init stage2
	die "switch_root failed"
}

# ---------------------------------------------------------------------------------------
stage2() {
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root LANG=C.UTF-8 TERM=dumb
	$BB mount -t proc proc /proc
	$BB mount -t sysfs sysfs /sys
	$BB grep -q '^[^ ]* /dev ' /proc/mounts || $BB mount -t devtmpfs devtmpfs /dev
	exec </dev/console >/dev/console 2>&1
	R=/ward-vm/results
	local boot
	boot=$($BB cut -d' ' -f1 /proc/uptime)
	say "stage 2: overlay root up at $boot s"
	log() { echo "$*" >>$R/guest.log; }
	log "kernel $($BB uname -r); stage 2 at uptime $boot s"

	$BB mkdir -p /dev/pts /dev/shm /dev/mqueue
	# devtmpfs has no /dev/fd (bash process substitution needs it) nor stdio links
	$BB ln -sfn /proc/self/fd /dev/fd
	$BB ln -sf /proc/self/fd/0 /dev/stdin
	$BB ln -sf /proc/self/fd/1 /dev/stdout
	$BB ln -sf /proc/self/fd/2 /dev/stderr
	$BB mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts /dev/pts
	$BB mount -t tmpfs -o mode=1777,nosuid,nodev shm /dev/shm
	$BB mount -t mqueue mqueue /dev/mqueue 2>/dev/null
	$BB mount -t tmpfs -o mode=0755,nosuid,nodev run /run
	$BB mkdir -p /run/lock
	$BB mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || die "mount cgroup2 at /sys/fs/cgroup"
	local c
	for c in $($BB cat /sys/fs/cgroup/cgroup.controllers); do
		echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control || log "cannot enable controller $c"
	done
	log "cgroup2 controllers: $($BB cat /sys/fs/cgroup/cgroup.subtree_control)"
	$BB mount -t securityfs securityfs /sys/kernel/security || log "cannot mount securityfs"
	log "lsm: $($BB cat /sys/kernel/security/lsm 2>/dev/null)"
	$BB hostname ward-vm
	$BB ip link set lo up 2>/dev/null
	# /etc/mtab as a booted system has it
	[ -e /etc/mtab ] || $BB ln -s ../proc/self/mounts /etc/mtab

	if ! [ -r $R/job.env ] || ! [ -r $R/job.suites ]; then die "no job in $R"; fi
	# shellcheck disable=SC1091 # written by run-vm.sh
	. $R/job.env
	export WARD WARD_TEST_BIN
	log "scratch: $($BB grep ' /scratch ' /proc/mounts)"
	export TMPDIR=/scratch/tmp BATS_TMPDIR=/scratch/tmp
	cd "${WARD_VM_REPO:-/}" || die "cannot cd to $WARD_VM_REPO"

	local s t0 t1 rc=0
	if [ "${WARD_VM_MODE:-bats}" = exec ]; then
		set --
		while IFS= read -r s; do
			set -- "$@" "$s"
		done <$R/job.cmd
		log "exec $*"
		t0=$($BB cut -d' ' -f1 /proc/uptime)
		"$@" >$R/tap 2>&1 </dev/null || rc=$?
		finish
	fi

	# bats' arguments: the options, then one suite per line of job.suites
	set -- --tap --timing
	[ -n "${WARD_VM_FILTER:-}" ] && set -- "$@" --filter "$WARD_VM_FILTER"
	while IFS= read -r s; do
		[ -n "$s" ] && set -- "$@" "$s"
	done <$R/job.suites
	log "WARD=$WARD"
	log "bats $*"

	t0=$($BB cut -d' ' -f1 /proc/uptime)
	bats "$@" >$R/tap 2>&1 </dev/null || rc=$?
	finish
}

# The end of stage 2: timings, the output on the console, the status, power-off. Uses boot,
# t0, rc and R of stage2.
finish() {
	local t1
	t1=$($BB cut -d' ' -f1 /proc/uptime)
	printf 'boot %s\nsuite %s\n' "$boot" "$($BB awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" >$R/timing
	echo "WARD-VM-TAP-BEGIN"
	$BB cat $R/tap
	echo "WARD-VM-TAP-END status=$rc"
	echo "$rc" >$R/status.tmp && $BB mv $R/status.tmp $R/status
	log "${WARD_VM_MODE:-bats} exited with status $rc after $t1 s of uptime"
	$BB sync
	cd /
	$BB umount $R 2>/dev/null
	$BB umount /scratch 2>/dev/null
	halt_now
}

case "${1:-}" in
stage2) stage2 ;;
*) stage1 ;;
esac
