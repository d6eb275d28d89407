# A private containerd 1.6 with its CRI plugin, driven as kubelet drives it (sourced by
# tests/cri/cri.bats). One containerd for the whole file (setup_file/teardown_file):
#
#   $D              its directory, short (/tmp/wcri.XXXXXX: unix socket paths <= 107 bytes;
#                   CRI_TMPDIR replaces /tmp: the VM suite puts it on its ext4 scratch disk,
#                   where the overlayfs snapshotter's layers can be idmapped)
#   $CRI_SOCK       containerd's gRPC socket ($D/c.sock), which serves CRI v1 too
#   $D/config.toml  root $D/root, state $D/state, CRI: restrict_oom_score_adj (root here lacks
#                   CAP_SYS_RESOURCE), netns under the state dir, streaming server on
#                   127.0.0.1:$STREAM_PORT, runtime handlers "runc" (io.containerd.runc.v2)
#                   and "ward" (io.containerd.ward.v2 = build/containerd-shim-ward-v2 on
#                   containerd's PATH)
#   $D/cni          CNI conf dir: bridge $CNI_BRIDGE + host-local on $CNI_SUBNET (a private
#                   /24 that exists only in this machine's netns), portmap; plugins from
#                   Debian's containernetworking-plugins (/usr/lib/cni); IPAM data in $D
#   $WARD_CONFIG    $D/ward-config: a ward.json that moves lib_dir to $D/ward-lib (ward's ID
#                   pool is $D/ward-lib/idpool2.d), names containerd's root
#                   ($D/root; the state ward takes from the bundle's place) and the
#                   kubelet root dir ($D/kubelet) (ward-tenants(5)), plus "missing_controllers": "warn"
#                   on a hybrid host (no cpu controller in cgroup v2, and CRI gives every
#                   sandbox cpu.shares); no tenants.d, so the shim's ward runs the built-in
#                   default tenant. CRI_WARD_TENANT='<tenant JSON>' (diagnosis only, @D@ = $D)
#                   writes tenants.d/default.json
#                   CRI_WARD_CONTAINER_ANNOTATIONS='"cdi.k8s.io/*"' (TOML strings): the ward
#                   handler's container_annotations, the container annotations containerd 1.6
#                   copies into the OCI spec (none by default; tests/cri/cri-gpu.bats: CDI)
#   $D/kubelet      a kubelet-like root dir: pods/<uid>/volumes/..., and $D/logs/... the
#                   pods' log directories (what kubelet's log reader reads)
#   images          ward.test/pause:latest (/pause: tests/cri/pause.c, static) and
#                   ward.test/busybox:latest (busybox-static), one OCI layout tarball built
#                   here and imported with `ctr -n k8s.io images import`; no registry
#
# The CRI plugin always uses the containerd namespace k8s.io; /run/containerd/{s,runc,ward}
# are host-global in 1.6, so teardown only touches the ids of this containerd's containers.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRI_DIR="$WARD_REPO/tests/cri"
: "${SHIM_DIR:=$WARD_REPO/build}"
PY=/usr/bin/python3
PAUSE_IMAGE=ward.test/pause:latest
IMAGE=ward.test/busybox:latest

# cri ARG...: tests/cri/cri.py ARG... (CRI_WS_UNTIL passed on), through the `cri.py serve`
# process that cri_setup starts (no python start and grpc import per call: seconds each under
# the VM's TCG), or a cri.py of its own when there is none.
cri() {
	local r rc= fd
	if [ -z "${CRI_SERVER_PID:-}" ] || ! kill -0 "$CRI_SERVER_PID" 2>/dev/null; then
		CRI_SOCK="$CRI_SOCK" CRI_GEN="$D/gen" "$PY" "$CRI_DIR/cri.py" "$@"
		return
	fi
	r="$D/cri.r.$BASHPID.$((++CRI_SEQ))"
	mkfifo "$r.rc" || return 1
	printf '%s\0' "${CRI_WS_UNTIL:-}" "$@" >"$r.args"
	exec {fd}<>"$r.rc"
	printf '%s\n' "$r" >"$D/cri.req"
	read -r -t "${CRI_CLIENT_TIMEOUT:-600}" rc <&"$fd"
	exec {fd}<&-
	cat "$r.out" 2>/dev/null
	cat "$r.err" >&2 2>/dev/null
	rm -f "$r.rc" "$r.args" "$r.out" "$r.err"
	[ -n "$rc" ] || echo "cri $1: no answer from the cri.py server (pid $CRI_SERVER_PID, log $D/cri-server.log)" >&2
	return "${rc:-1}"
}

# The cri.py server (cri()): its requests FIFO $D/cri.req, its pid CRI_SERVER_PID.
cri_server_start() {
	mkfifo "$D/cri.req" || return 1
	CRI_SOCK="$CRI_SOCK" CRI_GEN="$D/gen" setsid "$PY" "$CRI_DIR/cri.py" serve "$D/cri.req" \
		>>"$D/cri-server.log" 2>&1 </dev/null 3>&- &
	CRI_SERVER_PID=$!
	CRI_SEQ=0
	export CRI_SERVER_PID CRI_SEQ
}

cri_server_stop() {
	[ -n "${CRI_SERVER_PID:-}" ] && kill "$CRI_SERVER_PID" 2>/dev/null
	CRI_SERVER_PID=
}

cri_write_config() {
	cat >"$D/config.toml" <<-EOF
		version = 2
		root = "$D/root"
		state = "$D/state"
		disabled_plugins = [
		  "io.containerd.snapshotter.v1.btrfs",
		  "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.snapshotter.v1.devmapper",
		  "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.internal.v1.opt",
		  "io.containerd.tracing.processor.v1.otlp",
		]
		[grpc]
		  address = "$CRI_SOCK"
		[ttrpc]
		  address = "$CRI_SOCK.ttrpc"
		[debug]
		  address = "$D/debug.sock"
		  level = "debug"
		[metrics]
		  address = ""
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "$STREAM_PORT"
		  disable_apparmor = true
		  enable_selinux = false
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ward]
		      runtime_type = "io.containerd.ward.v2"
		      container_annotations = [${CRI_WARD_CONTAINER_ANNOTATIONS:-}]
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$D/cni"
		    max_conf_num = 1
	EOF
	mkdir -p "$D/cni" "$D/ipam"
	jq -n --arg br "$CNI_BRIDGE" --arg subnet "$CNI_SUBNET" --arg ipam "$D/ipam" '{
		cniVersion: "0.4.0", name: "wcri",
		plugins: [
		  {type: "bridge", bridge: $br, isGateway: true, ipMasq: false, hairpinMode: true,
		   ipam: {type: "host-local", ranges: [[{subnet: $subnet}]], dataDir: $ipam}},
		  {type: "portmap", capabilities: {portMappings: true}}]}' >"$D/cni/10-wcri.conflist"
	# ward.json moves lib_dir only; on a hybrid host (no cpu controller in the cgroup v2
	# hierarchy) it also says missing_controllers "warn", since CRI gives every sandbox
	# cpu.shares: a host limit, as restrict_oom_score_adj is for runc
	mkdir -p "$D/ward-config" "$D/ward-lib"
	local mc=null
	grep -qw cpu "$(cgroup2_root)/cgroup.controllers" 2>/dev/null || mc='"warn"'
	# containerd's root and the kubelet's root dir are this harness's (as an admin of k3s
	# or RKE2 sets them); containerd's state ward learns from where the bundles are
	jq -n --arg lib "$D/ward-lib" --argjson mc "$mc" --arg root "$D/root" --arg kubelet "$D/kubelet" \
		'{lib_dir: $lib, containerd: {root: $root}, kubelet_root_dir: $kubelet}
		+ (if $mc then {missing_controllers: $mc} else {} end)' >"$D/ward-config/ward.json"
	# CRI_WARD_TENANT (a tenant's JSON, for diagnosis only): tenants.d/default.json
	if [ -n "${CRI_WARD_TENANT:-}" ]; then
		mkdir -p "$D/ward-config/tenants.d"
		printf '%s\n' "$CRI_WARD_TENANT" | sed "s|@D@|$D|g" >"$D/ward-config/tenants.d/default.json"
	fi
}

cgroup2_root() { awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo; }

cri_start() {
	PATH="$SHIM_DIR:$PATH" WARD_CONFIG="$D/ward-config" \
		setsid containerd --config "$D/config.toml" >>"$D/containerd.log" 2>&1 </dev/null &
	echo $! >"$D/containerd.pid"
	local i
	for i in $(seq 1 300); do
		cri call Status >/dev/null 2>&1 && return 0
		kill -0 "$(cat "$D/containerd.pid")" 2>/dev/null || break
		sleep 0.1
	done
	echo "containerd (CRI) did not start; its log:" >&2
	tail -n 40 "$D/containerd.log" >&2
	return 1
}

cri_stop() {
	local pid i
	pid=$(cat "$D/containerd.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	sleep 0.2
}

# The images: one uncompressed layer (busybox-static with its applet links, and /pause), two
# manifests in one OCI layout: ward.test/pause (Cmd /pause) and ward.test/busybox (Cmd /bin/sh).
cri_build_image() {
	local out=$1 w="$BATS_RUN_TMPDIR/cri-image" r L
	rm -rf "$w"
	r="$w/rootfs" L="$w/layout"
	mkdir -p "$r" "$L/blobs/sha256"
	for d in bin sbin etc proc sys dev run tmp root usr/bin usr/sbin var; do mkdir -p "$r/$d"; done
	chmod 0755 "$r" "$r"/*
	chmod 1777 "$r/tmp"
	chmod 0700 "$r/root"
	cp /bin/busybox "$r/bin/busybox"
	chmod 0755 "$r/bin/busybox"
	# the applet links in one process (one `ln` each costs ~40 s under the VM's TCG)
	# shellcheck disable=SC2046 # one argument per applet
	perl -e 'my $dir = shift; for (@ARGV) { next if $_ eq "busybox";
		symlink("busybox", "$dir/$_") or die "symlink $dir/$_: $!\n" }' \
		"$r/bin" $(/bin/busybox --list) || return 1
	# /pause: built by make (build/tests/cri-pause), else here
	if [ -x "${WARD_TEST_BIN:-$WARD_REPO/build/tests}/cri-pause" ]; then
		cp "${WARD_TEST_BIN:-$WARD_REPO/build/tests}/cri-pause" "$r/pause"
	else
		cc -static -O2 -o "$r/pause" "$CRI_DIR/pause.c" || return 1
	fi
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	: >"$r/etc/hosts"
	: >"$r/etc/resolv.conf"
	tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$r" -cf "$w/layer.tar" .
	local diff_id layer arch
	case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
	diff_id=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	blob() { # FILE -> digest; moves FILE into the layout
		local d
		d=$(sha256sum "$1" | cut -d' ' -f1)
		mv "$1" "$L/blobs/sha256/$d"
		echo "$d"
	}
	# manifest CMD-JSON: a config (Entrypoint none, Cmd CMD) and a manifest over the one
	# layer; prints "<digest> <size>" of the manifest
	manifest() {
		local config config_size m
		jq -nc --arg arch "$arch" --arg diff "sha256:$diff_id" --argjson cmd "$1" '{
			architecture: $arch, os: "linux",
			config: {Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
				 Cmd: $cmd, WorkingDir: "/"},
			rootfs: {type: "layers", diff_ids: [$diff]},
			history: [{created_by: "ward tests/cri/harness.bash"}]}' >"$w/config.json"
		config_size=$(stat -c %s "$w/config.json")
		config=$(blob "$w/config.json")
		jq -nc --arg c "sha256:$config" --argjson cs "$config_size" \
			--arg l "sha256:$layer" --argjson ls "$layer_size" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
			config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
			layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]
			}' >"$w/manifest.json"
		m=$(stat -c %s "$w/manifest.json")
		echo "$(blob "$w/manifest.json") $m"
	}
	local layer_size pause_m pause_s box_m box_s
	layer_size=$(stat -c %s "$w/layer.tar")
	layer=$(blob "$w/layer.tar")
	read -r pause_m pause_s <<<"$(manifest '["/pause"]')"
	read -r box_m box_s <<<"$(manifest '["/bin/sh"]')"
	jq -nc --arg arch "$arch" --arg n1 "$PAUSE_IMAGE" --arg m1 "sha256:$pause_m" --argjson s1 "$pause_s" \
		--arg n2 "$IMAGE" --arg m2 "sha256:$box_m" --argjson s2 "$box_s" '
		def entry($n; $m; $s): {mediaType: "application/vnd.oci.image.manifest.v1+json",
			digest: $m, size: $s, platform: {architecture: $arch, os: "linux"},
			annotations: {"org.opencontainers.image.ref.name": "latest",
				      "io.containerd.image.name": $n}};
		{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
		 manifests: [entry($n1; $m1; $s1), entry($n2; $m2; $s2)]}' >"$L/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$L/oci-layout"
	tar --numeric-owner --owner=0 --group=0 -C "$L" -cf "$out" oci-layout index.json blobs
	rm -rf "$w"
}

cri_setup() {
	command -v containerd >/dev/null || skip "containerd is not installed (.ci/install-deps.sh)"
	[ -x /usr/lib/cni/bridge ] || skip "containernetworking-plugins is not installed (.ci/install-deps.sh)"
	"$PY" -c 'import grpc, grpc_tools' 2>/dev/null ||
		skip "python3-grpcio/python3-grpc-tools are not installed (.ci/install-deps.sh)"
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$SHIM_DIR/containerd-shim-ward-v2" ] || fail "$SHIM_DIR/containerd-shim-ward-v2 missing (make builds it)"
	[ -x "$SHIM_DIR/ward" ] || fail "$SHIM_DIR/ward missing (make builds it)"
	D=$(mktemp -d "${CRI_TMPDIR:-/tmp}/wcri.XXXXXX")
	chmod 0711 "$D"
	CRI_SOCK="$D/c.sock"
	# a free port for the streaming server (it must be known: port 0 would end up in the URLs)
	STREAM_PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# a bridge and a /24 of this run (two runs side by side must not share them)
	CNI_BRIDGE="wcri$(($$ % 100000))"
	CNI_SUBNET="10.88.$(($$ % 250 + 1)).0/24"
	WARD_CONFIG="$D/ward-config"
	export D CRI_SOCK STREAM_PORT CNI_BRIDGE CNI_SUBNET WARD_CONFIG
	mkdir -p "$D/kubelet/pods" "$D/logs" "$D/gen"
	cri_write_config
	cri_server_start || fail "cannot start the cri.py server"
	cri_build_image "$D/image.tar" || fail "building the test image failed"
	cri_start || fail "containerd did not start"
	ctr -a "$CRI_SOCK" -n k8s.io images import "$D/image.tar" >"$D/import.out" 2>&1 ||
		fail "image import failed: $(cat "$D/import.out")"
	cri call ListImages | grep -qF "$PAUSE_IMAGE" || fail "$PAUSE_IMAGE not visible to CRI"
}

# Processes of containerd shims serving this containerd (-address $CRI_SOCK).
# One find for the executables and bash builtins for the command lines: a readlink per
# process costs seconds under the VM's TCG, and teardown polls this.
cri_shim_pids() {
	local p a args
	for p in $(find /proc -mindepth 2 -maxdepth 2 -name exe -lname '*/containerd-shim-*' 2>/dev/null); do
		p=${p%/exe}
		mapfile -d '' args <"$p/cmdline" 2>/dev/null || continue
		for a in "${args[@]}"; do
			[ "$a" = "$CRI_SOCK" ] && echo "${p#/proc/}" && break
		done
	done
	true
}

# The ids of every container (sandboxes too) containerd ever made here: its bundles, and
# those recorded by the suite.
cri_known_ids() {
	{
		ls "$D/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null
		cat "$D/ids" 2>/dev/null
	} | sort -u
}

# Remove the pod-level cgroups (<hierarchy>/kubepods/besteffort/pod<uid>) of the pods made
# here, and their parents once empty, as kubelet does: rmdir only, so what a runtime left in
# them stays (and the suite reports it).
kubelet_cgroup_cleanup() {
	local uid h
	[ -s "$D/uids" ] || return 0
	for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
		[ -d "$h/kubepods" ] || continue
		while read -r uid; do
			[ -n "$uid" ] && rmdir "$h/kubepods/besteffort/pod$uid" 2>/dev/null
		done <"$D/uids"
		rmdir "$h/kubepods/besteffort" "$h/kubepods" 2>/dev/null
	done
	true
}

cri_teardown() {
	[ -n "${D:-}" ] && [ -d "$D" ] || return 0
	local pid id s i f
	# the shim sockets (a SIGKILLed shim cannot remove its own)
	for f in "$D"/state/io.containerd.runtime.v2.task/*/*/address; do
		[ -e "$f" ] && sed 's|^unix://||' "$f" >>"$D/sockets" && echo >>"$D/sockets"
	done
	cri_known_ids >"$D/ids.all"
	cri_stop
	cri_server_stop
	for pid in $(cri_shim_pids); do kill -9 "$pid" 2>/dev/null; done
	for i in $(seq 1 50); do
		[ -z "$(cri_shim_pids)" ] && break
		sleep 0.1
	done
	while read -r id; do
		[ -n "$id" ] || continue
		if [ -d "/run/containerd/ward/k8s.io/$id" ]; then
			"$SHIM_DIR/ward" --root /run/containerd/ward/k8s.io delete -f "$id" >/dev/null 2>&1
			rm -rf "/run/containerd/ward/k8s.io/$id"
		fi
		if [ -d "/run/containerd/runc/k8s.io/$id" ]; then
			runc --root /run/containerd/runc/k8s.io delete -f "$id" >/dev/null 2>&1
			rm -rf "/run/containerd/runc/k8s.io/$id"
		fi
	done <"$D/ids.all"
	kubelet_cgroup_cleanup
	for i in 1 2 3; do
		awk -v d="$D/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r s; do umount -l "$s" 2>/dev/null; done
	done
	sort -u "$D/sockets" 2>/dev/null | while read -r s; do
		case "$s" in /run/containerd/s/*) [ -S "$s" ] && rm -f "$s" ;; esac
	done
	ip link del "$CNI_BRIDGE" 2>/dev/null
	rm -rf "$D"
}
