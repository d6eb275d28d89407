# A private containerd 1.6 for end-to-end tests of containerd-shim-ward-v2 (sourced by
# tests/containerd/e2e.bats). One containerd per bats file (setup_file/teardown_file):
#
#   $CTD            its directory, short (/tmp/wctd.XXXXXX: unix socket paths <= 107 bytes)
#   $CTD_SOCK       gRPC socket        $CTD/c.sock        (ttrpc: $CTD/c.sock.ttrpc)
#   $CTD_NS         containerd namespace of this file (wardtest-<pid>)
#   $CTD_LOG        containerd's log (debug level: shim stderr, via the bundle's log fifo,
#                   lands here too)
#   $WARD_CONFIG    ward's configuration for the shim (containerd passes its environment to
#                   shims): default tenant with "idmap_rootfs": false (the fallback; one
#                   e2e test runs the idmapped overlay root) and lib_dir under $CTD
#   $IMAGE          ward.test/busybox:latest, built locally as an OCI layout tarball
#   $E2E_TENANT     the default tenant's JSON (default {"idmap_rootfs": false})
#   $RUNTIME        io.containerd.ward.v2 (E2E_RUNTIME=io.containerd.runc.v2 runs the same
#                   suite against runc's shim, to check the suite itself)
#
# containerd finds containerd-shim-ward-v2 on its PATH: $SHIM_DIR (build/) goes first.
# No CRI plugin (disabled: containerd starts in well under a second without it).
# Teardown stops containerd, SIGKILLs the shims started for $CTD_SOCK, force-deletes what ward
# still has under /run/containerd/ward/$CTD_NS, unmounts everything under $CTD, removes the
# shim sockets of this containerd and $CTD.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${SHIM_DIR:=$WARD_REPO/build}"
SHIM="$SHIM_DIR/containerd-shim-ward-v2"
: "${E2E_RUNTIME:=io.containerd.ward.v2}"
RUNTIME=$E2E_RUNTIME
IMAGE=ward.test/busybox:latest
WARD_SHIM_ROOT=/run/containerd/ward

# ---------------------------------------------------------------------------------------
# containerd

ctd_write_config() {
	cat >"$CTD/config.toml" <<-EOF
		version = 2
		root = "$CTD/root"
		state = "$CTD/state"
		disabled_plugins = [
		  "io.containerd.grpc.v1.cri",
		  "io.containerd.snapshotter.v1.btrfs",
		  "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.snapshotter.v1.devmapper",
		  "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.internal.v1.opt",
		  "io.containerd.tracing.processor.v1.otlp",
		]
		[grpc]
		  address = "$CTD_SOCK"
		[ttrpc]
		  address = "$CTD_SOCK.ttrpc"
		[debug]
		  address = "$CTD/debug.sock"
		  level = "debug"
		[metrics]
		  address = ""
	EOF
}

# ward's configuration as the shim (and the ward it runs) sees it.
ctd_write_ward_config() {
	mkdir -p "$CTD/ward-config/tenants.d" "$CTD/ward-lib"
	jq -n --arg lib "$CTD/ward-lib" '{lib_dir: $lib}' >"$CTD/ward-config/ward.json"
	local tenant='{"idmap_rootfs": false}'
	printf '%s\n' "${E2E_TENANT:-$tenant}" >"$CTD/ward-config/tenants.d/default.json"
}

# Start containerd in the background (own session) and wait until it answers.
ctd_start() {
	PATH="$SHIM_DIR:$PATH" WARD_CONFIG="$CTD/ward-config" \
		setsid containerd --config "$CTD/config.toml" >>"$CTD_LOG" 2>&1 </dev/null &
	echo $! >"$CTD/containerd.pid"
	local i
	for i in $(seq 1 100); do
		ctr -a "$CTD_SOCK" version >/dev/null 2>&1 && return 0
		kill -0 "$(cat "$CTD/containerd.pid")" 2>/dev/null || break
		sleep 0.1
	done
	echo "containerd did not start; its log:" >&2
	tail -n 40 "$CTD_LOG" >&2
	return 1
}

# Stop containerd (SIGTERM, then SIGKILL after 10 s). Shims keep running.
ctd_stop() {
	local pid
	pid=$(cat "$CTD/containerd.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || return 0
	local i
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	sleep 0.2
}

ctd_restart() {
	ctd_stop
	ctd_start
}

# ctr against the private containerd, in this file's namespace.
c() { timeout "${CTR_TIMEOUT:-30}" ctr -a "$CTD_SOCK" -n "$CTD_NS" "$@"; }

ctd_setup() {
	command -v containerd >/dev/null || skip "containerd is not installed (.ci/install-deps.sh)"
	[ "$(id -u)" = 0 ] || skip "needs root"
	if [ "$RUNTIME" = io.containerd.ward.v2 ]; then
		[ -x "$SHIM" ] || fail "$SHIM missing (make builds it)"
		[ -x "$SHIM_DIR/ward" ] || fail "$SHIM_DIR/ward missing (make builds it)"
	fi
	CTD=$(mktemp -d /tmp/wctd.XXXXXX)
	chmod 0711 "$CTD"
	CTD_SOCK="$CTD/c.sock"
	CTD_NS="wardtest-$$"
	CTD_LOG="$CTD/containerd.log"
	WARD_CONFIG="$CTD/ward-config"
	export CTD CTD_SOCK CTD_NS CTD_LOG WARD_CONFIG
	ctd_write_config
	ctd_write_ward_config
	ctd_start
	build_image "$CTD/image.tar"
	c image import "$CTD/image.tar" >"$CTD/import.out" 2>&1 ||
		fail "image import failed: $(cat "$CTD/import.out")"
	c image ls -q | grep -qxF "$IMAGE" || fail "image $IMAGE not imported: $(c image ls)"
}

# Processes of the shim binary that serve this containerd (-address $CTD_SOCK).
ctd_shim_pids() {
	local p exe want="" base
	[ -x "$SHIM" ] && want=$(readlink -f "$SHIM")
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		base=${exe##*/}
		[ "$exe" = "$want" ] || [[ "$base" == containerd-shim-* ]] || continue
		tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$CTD_SOCK" && echo "${p#/proc/}"
	done
}

# The shim process whose first container (-id) is $1.
shim_pid_of() {
	local p
	for p in $(ctd_shim_pids); do
		tr '\0' '\n' <"/proc/$p/cmdline" | grep -A1 -xE -- '-{1,2}id' | tail -n1 |
			grep -qxF -- "$1" && echo "$p"
	done
	true
}

# cgroup_frozen PID: "frozen" if PID's cgroup is frozen (cgroup v2 cgroup.freeze, or the v1
# freezer on a hybrid host), else "thawed".
cgroup_frozen() {
	local cg2 v2 v1
	cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	v2=$(awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup")
	v1=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$1/cgroup")
	if [ -n "$cg2" ] && [ "$(cat "$cg2$v2/cgroup.freeze" 2>/dev/null)" = 1 ]; then
		echo frozen
	elif [ -n "$v1" ] && [ "$(cat "/sys/fs/cgroup/freezer$v1/freezer.state" 2>/dev/null)" = FROZEN ]; then
		echo frozen
	else
		echo thawed
	fi
}

# Remember the shim sockets of the bundles that exist now (a SIGKILLed shim cannot remove
# its socket; teardown removes the dead ones).
ctd_note_sockets() {
	local f a
	for f in "$CTD"/state/io.containerd.runtime.v2.task/*/*/address; do
		a=$(cat "$f" 2>/dev/null) || continue # one line, no newline
		echo "${a#unix://}" >>"$CTD/sockets"
	done
	true
}

ctd_teardown() {
	[ -n "${CTD:-}" ] && [ -d "$CTD" ] || return 0
	local pid id s i
	# the shim sockets this containerd's shims listened on (before bundles go away)
	ctd_note_sockets
	ctd_stop
	for pid in $(ctd_shim_pids); do kill -9 "$pid" 2>/dev/null; done
	for i in $(seq 1 50); do
		[ -z "$(ctd_shim_pids)" ] && break
		sleep 0.1
	done
	# containers the killed shims left behind
	if [ -d "$WARD_SHIM_ROOT/$CTD_NS" ]; then
		for id in $(ls "$WARD_SHIM_ROOT/$CTD_NS"); do
			"$SHIM_DIR/ward" --root "$WARD_SHIM_ROOT/$CTD_NS" delete -f "$id" >/dev/null 2>&1
		done
		rm -rf "${WARD_SHIM_ROOT:?}/$CTD_NS"
	fi
	if [ -d "/run/containerd/runc/$CTD_NS" ]; then
		for id in $(ls "/run/containerd/runc/$CTD_NS"); do
			runc --root "/run/containerd/runc/$CTD_NS" delete -f "$id" >/dev/null 2>&1 ||
				"$SHIM_DIR/ward" --root "/run/containerd/runc/$CTD_NS" delete -f "$id" >/dev/null 2>&1
		done
		rm -rf "/run/containerd/runc/$CTD_NS"
	fi
	# every mount under $CTD, deepest first
	for i in 1 2 3; do
		awk -v d="$CTD/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r s; do umount -l "$s" 2>/dev/null; done
	done
	sort -u "$CTD/sockets" 2>/dev/null | while read -r s; do
		case "$s" in /run/containerd/s/*) [ -S "$s" ] && rm -f "$s" ;; esac
	done
	rm -rf "$CTD"
}

# ---------------------------------------------------------------------------------------
# The image: an OCI image layout tarball (oci-layout, index.json, blobs/sha256/) with one
# gzip layer (a busybox-static root filesystem with its applet links), built with tar, gzip,
# sha256sum and jq. Cached per bats run.

oci_arch() {
	case "$(uname -m)" in
	x86_64) echo amd64 ;;
	aarch64) echo arm64 ;;
	armv7l) echo arm ;;
	*) uname -m ;;
	esac
}

# blob FILE: move FILE into the layout's blobs/sha256 under its digest; prints the digest.
oci_blob() {
	local d
	d=$(sha256sum "$1" | cut -d' ' -f1)
	mv "$1" "$L/blobs/sha256/$d"
	echo "$d"
}

build_image() {
	local out=$1 cache="$BATS_RUN_TMPDIR/oci-busybox.tar"
	if [ ! -e "$cache" ]; then
		local w="$BATS_RUN_TMPDIR/oci-build" r L applet
		rm -rf "$w"
		r="$w/rootfs" L="$w/layout"
		mkdir -p "$r" "$L/blobs/sha256"
		for d in bin sbin etc proc sys dev run tmp root usr/bin usr/sbin var; do mkdir -p "$r/$d"; done
		chmod 0755 "$r" "$r"/*
		chmod 1777 "$r/tmp"
		chmod 0700 "$r/root"
		cp /bin/busybox "$r/bin/busybox"
		chmod 0755 "$r/bin/busybox"
		for applet in $(/bin/busybox --list); do
			[ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
		done
		printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
		printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
		: >"$r/etc/hosts"
		: >"$r/etc/resolv.conf"
		tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$r" -cf "$w/layer.tar" .
		local diff_id layer layer_size config config_size manifest manifest_size
		diff_id=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
		gzip -n -9 "$w/layer.tar"
		layer_size=$(stat -c %s "$w/layer.tar.gz")
		layer=$(oci_blob "$w/layer.tar.gz")
		jq -nc --arg arch "$(oci_arch)" --arg diff "sha256:$diff_id" '{
			architecture: $arch, os: "linux",
			config: {Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
				 Cmd: ["/bin/sh"], WorkingDir: "/"},
			rootfs: {type: "layers", diff_ids: [$diff]},
			history: [{created_by: "ward tests/containerd/harness.bash"}]}' >"$w/config.json"
		config_size=$(stat -c %s "$w/config.json")
		config=$(oci_blob "$w/config.json")
		jq -nc --arg c "sha256:$config" --argjson cs "$config_size" \
			--arg l "sha256:$layer" --argjson ls "$layer_size" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
			config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
			layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $l, size: $ls}]
			}' >"$w/manifest.json"
		manifest_size=$(stat -c %s "$w/manifest.json")
		manifest=$(oci_blob "$w/manifest.json")
		jq -nc --arg m "sha256:$manifest" --argjson ms "$manifest_size" --arg arch "$(oci_arch)" \
			--arg name "$IMAGE" '{
			schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
			manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
				     digest: $m, size: $ms, platform: {architecture: $arch, os: "linux"},
				     annotations: {"org.opencontainers.image.ref.name": "latest",
						   "io.containerd.image.name": $name}}]}' >"$L/index.json"
		echo '{"imageLayoutVersion":"1.0.0"}' >"$L/oci-layout"
		tar --numeric-owner --owner=0 --group=0 -C "$L" -cf "$cache.tmp" oci-layout index.json blobs
		mv "$cache.tmp" "$cache"
		rm -rf "$w"
	fi
	cp "$cache" "$out"
}

# ---------------------------------------------------------------------------------------
# Task helpers

# The status column of `ctr task ls` for $1 (RUNNING, PAUSED, STOPPED, ...), empty if none.
task_status() { c task ls | awk -v id="$1" '$1 == id { print $3 }'; }
task_pid() { c task ls | awk -v id="$1" '$1 == id { print $2 }'; }

# wait_task_status ID STATUS [SECONDS]
wait_task_status() {
	local i n=$((${3:-10} * 10))
	for i in $(seq 1 "$n"); do
		[ "$(task_status "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	echo "task $1: status '$(task_status "$1")', expected $2" >&2
	return 1
}

# run_detached ID CMD...: `ctr run -d` with the runtime under test.
run_detached() {
	local id=$1
	shift
	c run -d --runtime "$RUNTIME" "$IMAGE" "$id" "$@"
}

# Remove a task and its container whatever state they are in.
remove_container() {
	c task kill -a -s SIGKILL "$1" >/dev/null 2>&1
	local i
	for i in $(seq 1 50); do
		case "$(task_status "$1")" in "" | STOPPED) break ;; esac
		sleep 0.1
	done
	c task rm -f "$1" >/dev/null 2>&1
	c container rm "$1" >/dev/null 2>&1
	true
}

# The bundle containerd made for container $1.
bundle_of() { echo "$CTD/state/io.containerd.runtime.v2.task/$CTD_NS/$1"; }
