#!/usr/bin/env bats
# Kubernetes pods through containerd 1.6's CRI plugin on a kernel whose cgroup v2 has every
# controller (the VM of tests/vm/run-vm.sh): the steps of tests/cri/cri.bats that a hybrid
# host cannot show for ward (memory stats, a memory limit applied by an update, OOM), with
# StopContainer's grace period, each once with "runc" (the baseline) and once with "ward"
# (the built-in default tenant), in one containerd. The harness (tests/cri/harness.bash: a
# private containerd, CNI, the images) and the steps (tests/cri/kubelet.bash) are those of
# the host suite; here $D lives on the ext4 scratch disk (CRI_TMPDIR), so the overlayfs
# snapshotter's layers are on a filesystem the 6.1 kernel can idmap (ward rebuilds the
# rootfs overlay from idmapped layers), and each pod has one container (c1: TCG is slow).
#
# Pod network: the host suite's CNI chain (bridge + host-local, portmap), unchanged; the
# guest kernel loads bridge, veth and the netfilter modules on demand with the shared root's
# modprobe and /lib/modules. portmap has no port mappings to set up here.

load ../cri/harness
load ../cri/kubelet

declare -gA KNOWN=()
MAIN_POD_CONTAINERS=c1

setup_file() {
	[ "$(cat /proc/sys/kernel/hostname)" = ward-vm ] && [ -d /ward-vm/results ] ||
		skip "not inside the ward VM (run tests/vm/run-vm.sh tests/vm/cri.bats)"
	export CRI_TMPDIR=${TMPDIR:-/tmp}
	SHIM_DIR=$(dirname "$WARD")
	export SHIM_DIR MAIN_POD_CONTAINERS
	local t0=$SECONDS
	cri_setup
	echo "# vm cri: containerd with CRI, CNI and the images ready in $((SECONDS - t0)) s" >&3
}

teardown_file() {
	[ -n "${D:-}" ] && cri_teardown
	true
}

@test "vm cri runc: ContainerStats: memory working set and cpu usage" { step runc stats; }
@test "vm cri runc: UpdateContainerResources: memory.max inside, allocation beyond it killed" { step runc update; }
@test "vm cri runc: OOM kill: reason OOMKilled, exit code 137" { step runc oom; }
@test "vm cri runc: StopContainer with a grace period" { step runc stop_grace; }
@test "vm cri runc: teardown leaves nothing behind" { step runc teardown; }

@test "vm cri ward: ContainerStats: memory working set and cpu usage" { step ward stats; }
@test "vm cri ward: UpdateContainerResources: memory.max inside, allocation beyond it killed" { step ward update; }
@test "vm cri ward: OOM kill: reason OOMKilled, exit code 137" { step ward oom; }
@test "vm cri ward: StopContainer with a grace period" { step ward stop_grace; }
@test "vm cri ward: teardown leaves nothing behind" { step ward teardown; }
