# Shared setup for the bats integration suites (bats-core >= 1.8).
#
# Environment:
#   WARD           runtime binary under test (default: build/ward of this checkout).
#                  Any runtime with runc's CLI works: WARD=$(command -v runc) bats tests/x.bats
#   WARD_TEST_BIN  directory of the test helper binaries (recvtty), default build/tests.
#
# Every test gets its own state root ($STATE), its own bundles under $BATS_TEST_TMPDIR and
# container ids that include $BATS_TEST_NUMBER and $$, so tests and suites never collide.
# teardown deletes every container of the test and then checks that nothing is left behind:
# no state dir, no cgroup dir, no process, no mount mentioning the test's directory.
#
# Assertions that only hold for ward (exact error wording naming the field, the features
# document, state dir and cgroup layout) are wrapped in `if ward_specific; then ... fi`:
# they are skipped over (not the whole test) when WARD is another runtime such as runc.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

WARD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${WARD:=$WARD_REPO/build/ward}"
: "${WARD_TEST_BIN:=$WARD_REPO/build/tests}"
export WARD WARD_TEST_BIN

# Tenancy: the runtime-core suites test the OCI engine itself, as runc's suites do, under a
# tenant the admin trusts (tests/fixtures/config-trusted: pods run as their spec says).
# Suites that test ward's tenant policy set WARD_CONFIG= (empty: the built-in, hardened
# configuration) or their own directory before loading this file, or pass --config.
: "${WARD_CONFIG=$WARD_REPO/tests/fixtures/config-trusted}"
export WARD_CONFIG

# ---------------------------------------------------------------------------------------
# Runtime identity

# 0 when the runtime under test is ward (the default), 1 for another runtime (runc, crun).
# WARD_IMPL=ward|runc|crun overrides the detection from --version.
ward_specific() {
	if [ -z "${WARD_IMPL:-}" ]; then
		case "$("$WARD" --version 2>/dev/null | head -n1)" in
		runc*) WARD_IMPL=runc ;;
		crun*) WARD_IMPL=crun ;;
		*) WARD_IMPL=ward ;;
		esac
	fi
	[ "$WARD_IMPL" = ward ]
}

# The cgroup v2 mount point of the host (/sys/fs/cgroup or /sys/fs/cgroup/unified).
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

# ---------------------------------------------------------------------------------------
# Root filesystem: busybox, built once per bats run.

ROOTFS_CACHE="$BATS_RUN_TMPDIR/rootfs-cache"

build_rootfs() {
	[ -e "$ROOTFS_CACHE/.done" ] && return 0
	(
		flock 9
		[ -e "$ROOTFS_CACHE/.done" ] && exit 0
		set -e
		rm -rf "$ROOTFS_CACHE"
		local r="$ROOTFS_CACHE"
		mkdir -p "$r"
		for d in bin sbin etc proc sys dev tmp root; do mkdir -p "$r/$d"; done
		chmod 0755 "$r" "$r"/*
		chmod 1777 "$r/tmp"
		chmod 0700 "$r/root"
		cp /bin/busybox "$r/bin/busybox"
		chmod 0755 "$r/bin/busybox"
		local applet
		for applet in $(/bin/busybox --list); do
			[ "$applet" = busybox ] && continue
			ln -s busybox "$r/bin/$applet"
		done
		cat >"$r/etc/passwd" <<-'EOF'
			root:x:0:0:root:/root:/bin/sh
			nobody:x:65534:65534:nobody:/nonexistent:/bin/false
		EOF
		cat >"$r/etc/group" <<-'EOF'
			root:x:0:
			nogroup:x:65534:
		EOF
		echo "ward-test-rootfs" >"$r/etc/ward-test-rootfs"
		touch "$r/.done"
	) 9>"$BATS_RUN_TMPDIR/rootfs.lock"
}

# ---------------------------------------------------------------------------------------
# Per-test state

# Unique container id: cid NAME -> w<test number>-<bats pid>-NAME. Remembered for teardown.
cid() {
	local id="w${BATS_TEST_NUMBER}-$$-$1"
	echo "$id" >>"$BATS_TEST_TMPDIR/.ids"
	echo "$id"
}

# The runtime with this test's state root. The unique WARD_TEST_TAG in the runtime's
# environment (inherited by everything it forks until the container's execve, where the
# config's env, which carries the same tag, takes over) lets teardown find leftovers.
ward() {
	env WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" "$@"
}

# Register a command to run (eval'd, last registered first) before teardown's checks.
on_teardown() {
	printf '%s\n' "$*" >>"$BATS_TEST_TMPDIR/.cleanups"
}

setup() {
	[ -x "$WARD" ] || fail "WARD=$WARD is not an executable (build ward with make, or set WARD)"
	build_rootfs
	TAG="wt-${BATS_TEST_NUMBER}-$$-$RANDOM$RANDOM"
	STATE="$BATS_TEST_TMPDIR/state"
	mkdir -p "$STATE"
	: >"$BATS_TEST_TMPDIR/.ids"
	# Container processes may run as other users (user namespaces, --user 1000): let them
	# traverse down to the bundles.
	chmod a+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR" 2>/dev/null || true
	if declare -F suite_setup >/dev/null; then suite_setup; fi
}

teardown() {
	if declare -F suite_teardown >/dev/null; then suite_teardown || true; fi
	ward_teardown
}

# Processes carrying this test's tag (runtime processes and container processes).
tagged_pids() {
	grep -lsxzF "WARD_TEST_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}

ward_teardown() {
	local problems=() id ids=() pid left i line
	# Test-specific cleanups (unmount holders, kill helpers), last registered first.
	if [ -s "$BATS_TEST_TMPDIR/.cleanups" ]; then
		while IFS= read -r line; do
			eval "$line" >/dev/null 2>&1 || true
		done < <(tac "$BATS_TEST_TMPDIR/.cleanups")
	fi
	[ -n "${STATE:-}" ] || return 0
	# Every container of this test: whatever list shows, every state dir, every id handed out.
	local pids=()
	mapfile -t ids < <({
		ward list -q 2>/dev/null
		ls -1 "$STATE" 2>/dev/null | grep -vx @gpu
		cat "$BATS_TEST_TMPDIR/.ids" 2>/dev/null
	} | sort -u | grep -v '^$')
	for id in "${ids[@]}"; do
		pid=$(ward state "$id" 2>/dev/null </dev/null | jq -r '.pid // 0' 2>/dev/null)
		[ -n "$pid" ] && [ "$pid" != 0 ] && pids+=("$pid")
		ward delete -f "$id" >/dev/null 2>&1 </dev/null || true
	done
	# Processes: the inits seen above and anything carrying the tag; give killed ones a
	# moment to go away.
	for ((i = 0; i < 50; i++)); do
		left=$(tagged_pids)
		for pid in "${pids[@]}"; do pid_alive "$pid" && left="$left $pid"; done
		[ -z "${left// /}" ] && break
		sleep 0.1
	done
	if [ -n "${left// /}" ]; then
		for pid in $left; do
			problems+=("process left: pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
			kill -9 "$pid" 2>/dev/null || true
		done
	fi
	for id in "${ids[@]}"; do
		[ -e "$STATE/$id" ] && problems+=("state dir left: $STATE/$id")
		local cg
		for cg in "$CG2/ward/$id" "$CG2"/ward/*/"$id" "$CG2/$id" /sys/fs/cgroup/*/"$id" /sys/fs/cgroup/*/ward/"$id"; do
			[ -d "$cg" ] || continue
			problems+=("cgroup dir left: $cg (processes: $(tr '\n' ' ' <"$cg/cgroup.procs" 2>/dev/null))")
			# anything still in the test's cgroup is the test's: kill it so the next test starts clean
			for pid in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
			retry 20 0.05 rmdir "$cg" 2>/dev/null || true
		done
	done
	# (@gpu/ holds the GPU lease ledger: state of the root, not of a container)
	if [ -n "$(ls -A "$STATE" 2>/dev/null | grep -vx @gpu)" ]; then
		problems+=("state root not empty: $(ls -A "$STATE" | tr '\n' ' ')")
	fi
	if grep -F "$BATS_TEST_TMPDIR" /proc/self/mountinfo >/dev/null; then
		problems+=("mounts left on the host: $(grep -F "$BATS_TEST_TMPDIR" /proc/self/mountinfo | awk '{print $5}' | tr '\n' ' ')")
		grep -F "$BATS_TEST_TMPDIR" /proc/self/mountinfo | awk '{print $5}' | sort -r |
			while read -r m; do umount -l "$m" 2>/dev/null; done
	fi
	if [ ${#problems[@]} -gt 0 ]; then
		printf 'teardown: %s\n' "${problems[@]}" >&2
		return 1
	fi
}

# ---------------------------------------------------------------------------------------
# Bundles

# make_bundle NAME [JQ_FILTER [JQ_ARGS...]]: $BATS_TEST_TMPDIR/NAME with a fresh copy of the
# busybox rootfs and a config.json from `$WARD spec`, made non-interactive and writable
# (terminal false, root.readonly false, args ["true"]), then edited with JQ_FILTER.
# Sets BUNDLE.
make_bundle() {
	local name=$1
	shift
	BUNDLE="$BATS_TEST_TMPDIR/$name"
	mkdir -p "$BUNDLE"
	chmod 0755 "$BUNDLE"
	cp -a "$ROOTFS_CACHE" "$BUNDLE/rootfs"
	rm -f "$BUNDLE/rootfs/.done"
	"$WARD" spec -b "$BUNDLE" || fail "$WARD spec -b $BUNDLE failed"
	config_edit '.process.terminal = false | .root.readonly = false | .process.args = ["true"]
		| .process.env += ["WARD_TEST_TAG=" + $tag]' --arg tag "$TAG"
	if [ $# -gt 0 ]; then config_edit "$@"; fi
}

# config_edit JQ_FILTER [JQ_OPTIONS...]: edit $BUNDLE/config.json in place
# (options such as --arg NAME VALUE, --argjson NAME JSON).
config_edit() {
	local filter=$1
	shift
	jq "$@" "$filter" "$BUNDLE/config.json" >"$BUNDLE/config.json.new" ||
		fail "jq filter failed: $filter"
	mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# set_args ARG...: process.args = the arguments.
set_args() {
	config_edit '.process.args = $a' --argjson a "$(json_array "$@")"
}

# json_array ARG...: a JSON array of the arguments as strings (any characters, leading "-" ok).
json_array() {
	local i=0 opts=() a
	for a in "$@"; do
		opts+=(--arg "a$i" "$a")
		i=$((i + 1))
	done
	jq -nc "${opts[@]}" '$ARGS.named | to_entries | sort_by(.key[1:] | tonumber) | map(.value)'
}

# set_cmd SCRIPT: process.args = ["sh", "-c", SCRIPT].
set_cmd() {
	set_args sh -c "$1"
}

# add_mount JSON_OBJECT: append one entry to mounts.
add_mount() {
	config_edit '.mounts += [$m]' --argjson m "$1"
}

# share_dir [DEST]: a host dir (world-writable) bind-mounted read-write into the container
# at DEST (default /shared). Sets SHARED to the host path.
share_dir() {
	local dest=${1:-/shared}
	SHARED="$BATS_TEST_TMPDIR/shared-$(basename "$BUNDLE")"
	mkdir -p "$SHARED" "$BUNDLE/rootfs$dest"
	chmod 0777 "$SHARED"
	add_mount "$(jq -nc --arg s "$SHARED" --arg d "$dest" \
		'{destination: $d, type: "bind", source: $s, options: ["rbind", "rw"]}')"
}

# set_ns TYPE [PATH]: make sure linux.namespaces has TYPE (with PATH if given).
set_ns() {
	if [ -n "${2:-}" ]; then
		config_edit '.linux.namespaces = ([.linux.namespaces[] | select(.type != $t)] + [{type: $t, path: $p}])' \
			--arg t "$1" --arg p "$2"
	else
		config_edit '.linux.namespaces = ([.linux.namespaces[] | select(.type != $t)] + [{type: $t}])' \
			--arg t "$1"
	fi
}

# drop_ns TYPE: remove TYPE from linux.namespaces.
drop_ns() {
	config_edit '.linux.namespaces = [.linux.namespaces[] | select(.type != $t)]' --arg t "$1"
}

# userns_map: a new user namespace mapping container 0..65535 to host 100000..165535.
userns_map() {
	set_ns user
	config_edit '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
}

# ---------------------------------------------------------------------------------------
# Running containers

# run_container [RUN_OPTS...]: `ward run` in the foreground of $BUNDLE under bats' `run`,
# stdout in $output/$lines, stderr in $stderr, exit status in $status. Sets ID.
run_container() {
	ID=$(cid run)
	run --separate-stderr ward run -b "$BUNDLE" "$@" "$ID" </dev/null
	# shown by bats only if the test fails
	[ -z "$stderr" ] || printf 'stderr of run %s (status %s): %s\n' "$ID" "$status" "$stderr" >&2
}

# ward_capture [--merged] ARGS...: like `run [--separate-stderr] ward ARGS...` but with the
# runtime's stdio on files, so a container it leaves behind (create, run -d) holds no pipe of
# bats. Sets $status, $output, $lines, $stderr; with --merged, stderr is in $output too.
ward_capture() {
	local out="$BATS_TEST_TMPDIR/capture.out" err="$BATS_TEST_TMPDIR/capture.err"
	status=0
	if [ "$1" = --merged ]; then
		shift
		ward "$@" </dev/null >"$out" 2>&1 3>&- || status=$?
		: >"$err"
	else
		ward "$@" </dev/null >"$out" 2>"$err" 3>&- || status=$?
	fi
	output=$(cat "$out")
	stderr=$(cat "$err")
	mapfile -t lines <"$out"
	[ -z "$stderr" ] || printf 'stderr of ward %s (status %s): %s\n' "$*" "$status" "$stderr" >&2
}

# create_container ID [CREATE_OPTS...]: `ward create` of $BUNDLE with the container's stdio
# on files ($BATS_TEST_TMPDIR/ID.out, ID.err), so no pipe of bats is held open.
create_container() {
	local id=$1
	shift
	if ! ward create -b "$BUNDLE" "$@" "$id" </dev/null >"$BATS_TEST_TMPDIR/$id.out" \
		2>"$BATS_TEST_TMPDIR/$id.err"; then
		echo "create $id failed:" >&2
		cat "$BATS_TEST_TMPDIR/$id.err" >&2
		return 1
	fi
}

# start_container ID [CREATE_OPTS...]: create + start.
start_container() {
	create_container "$@" || return 1
	ward start "$1" || {
		echo "start $1 failed" >&2
		return 1
	}
}

# run_detached ID [RUN_OPTS...]: `ward run -d` with the container's stdio on files.
run_detached() {
	local id=$1
	shift
	if ! ward run -d -b "$BUNDLE" "$@" "$id" </dev/null >"$BATS_TEST_TMPDIR/$id.out" \
		2>"$BATS_TEST_TMPDIR/$id.err"; then
		echo "run -d $id failed:" >&2
		cat "$BATS_TEST_TMPDIR/$id.err" >&2
		return 1
	fi
}

# The container's stdout/stderr (created with create_container/run_detached).
container_out() { cat "$BATS_TEST_TMPDIR/$1.out"; }

state_json() { ward state "$1"; }
state_field() { ward state "$1" | jq -r ".$2"; }
status_of() { ward state "$1" 2>/dev/null | jq -r .status; }
init_pid() { ward state "$1" | jq -r .pid; }

# retry N DELAY CMD...: run CMD until it succeeds, at most N times.
retry() {
	local n=$1 delay=$2 i
	shift 2
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep "$delay"
	done
	"$@"
}

# wait_status ID STATUS [SECONDS]: poll state until STATUS (default timeout 10 s).
wait_status() {
	local id=$1 want=$2 t=${3:-10} i got
	for ((i = 0; i < t * 20; i++)); do
		got=$(status_of "$id")
		[ "$got" = "$want" ] && return 0
		sleep 0.05
	done
	echo "container $id: status '$got', expected '$want'" >&2
	return 1
}

# wait_file PATH [SECONDS]: poll until PATH exists (default timeout 10 s).
wait_file() {
	local p=$1 t=${2:-10} i
	for ((i = 0; i < t * 20; i++)); do
		[ -e "$p" ] && return 0
		sleep 0.05
	done
	echo "timed out waiting for $p" >&2
	return 1
}

# wait_gone PID [SECONDS]: poll until the process is gone (zombies count as gone).
wait_gone() {
	local pid=$1 t=${2:-10} i
	for ((i = 0; i < t * 20; i++)); do
		pid_alive "$pid" || return 0
		sleep 0.05
	done
	echo "process $pid still alive" >&2
	return 1
}

pid_alive() {
	[ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# The host's view of a namespace: "net:[4026531992]".
host_ns() { readlink "/proc/self/ns/$1"; }

# pool_allocs: the ID pool of $LIB, one allocation a line as JSON ({"owner": ..., "start": N,
# "size": ..., "users": [...]}), from idpool2.d (one file per record: a first line, then a
# log of users added and removed, applied here; an empty file is a free record). Nothing
# when there is none.
pool_allocs() {
	local f
	for f in "$LIB"/idpool2.d/[0-9]*; do
		[ -s "$f" ] && jq -cs 'reduce .[1:][] as $l (.[0];
			if $l.add then .users += [$l.add] else .users -= [$l.remove] end)' "$f"
	done
	return 0
}

# The owners of the ID pool's allocations, one a line.
pool_owners() {
	pool_allocs | jq -r .owner
}

# One line of text: check that an error output is a single line.
assert_one_line() {
	local n
	n=$(printf '%s' "$1" | grep -c '')
	[ "$n" -eq 1 ] || fail "expected a one-line error, got $n lines: $1"
}

# assert_nothing_left ID: no state dir, no cgroup dir, no process, no mount of this test.
assert_nothing_left() {
	local id=$1 cg left
	[ ! -e "$STATE/$id" ] || fail "state dir $STATE/$id left behind: $(ls -A "$STATE/$id")"
	for cg in "$CG2/ward/$id" "$CG2"/ward/*/"$id" "$CG2/$id" /sys/fs/cgroup/*/"$id"; do
		[ ! -d "$cg" ] || fail "cgroup $cg left behind"
	done
	local i
	for ((i = 0; i < 40; i++)); do
		left=$(tagged_pids)
		[ -z "$left" ] && break
		sleep 0.05
	done
	[ -z "$left" ] || fail "processes left behind: $left"
	! grep -F "$BATS_TEST_TMPDIR" /proc/self/mountinfo || fail "mounts left behind"
}
