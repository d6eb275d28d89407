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
# The VM suites run ward as a Debian 12 host would, under the built-in configuration (empty
# WARD_CONFIG): every container of the default tenant in a user namespace with an idmapped
# rootfs (the reason the bundles are on the ext4 scratch disk), seccomp and AppArmor. A suite
# may set WARD_CONFIG before loading this file; tests of other tenants pass --config.
: "${WARD_CONFIG=}"
export WARD_CONFIG
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

# ---------------------------------------------------------------------------------------
# Cgroups of running containers, wherever the runtime puts them (<v2>/ward/<id>, or
# <v2>/ward/<tenant>/<id> with the tenant layer).

# container_cgroup ID: the cgroup v2 directory of the container's init, from /proc.
container_cgroup() {
	local pid rel
	pid=$(init_pid "$1") || return 1
	if [ -z "$pid" ] || [ "$pid" -le 0 ]; then
		echo "container $1 has no init pid" >&2
		return 1
	fi
	rel=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	[ -n "$rel" ] || { echo "no cgroup v2 line in /proc/$pid/cgroup" >&2; return 1; }
	echo "$CG2$rel"
}

# assert_no_cgroup ID [DIR...]: no cgroup directory named ID anywhere under <v2>, and none
# of the DIRs (the paths the container had while it ran).
assert_no_cgroup() {
	local id=$1 d left
	shift
	for d in "$@"; do
		[ ! -d "$d" ] || fail "cgroup $d left behind (processes: $(tr '\n' ' ' <"$d/cgroup.procs" 2>/dev/null))"
	done
	left=$(find "$CG2" -mindepth 1 -type d -name "$id" 2>/dev/null)
	[ -z "$left" ] || fail "cgroup left behind: $left"
}

# keyed_value FILE KEY: the value of "KEY VALUE" in a cgroup file (cpu.stat, pids.events,
# memory.events); empty if absent.
keyed_value() {
	awk -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null
}

# keyed_above FILE KEY MIN: true when KEY's value in FILE is greater than MIN (for retry).
keyed_above() {
	local v
	v=$(keyed_value "$1" "$2")
	[ -n "$v" ] && [ "$v" -gt "$3" ]
}

# The major:minor of the ext4 scratch disk that holds the bundles.
scratch_devno() {
	stat -c '%Hd:%Ld' "$BATS_RUN_TMPDIR"
}

# The static in-container helper (tests/helpers/cgprobe.c) into $BUNDLE's /bin.
add_cgprobe() {
	[ -x "$WARD_TEST_BIN/cgprobe" ] || fail "no $WARD_TEST_BIN/cgprobe (make test-vm builds it)"
	cp "$WARD_TEST_BIN/cgprobe" "$BUNDLE/rootfs/bin/cgprobe"
	chmod 0755 "$BUNDLE/rootfs/bin/cgprobe"
}

# wait_output ID REGEX [SECONDS]: poll the container's stdout file (run_detached,
# create_container) until a line matches REGEX (default timeout 30 s: TCG is slow).
wait_output() {
	local id=$1 re=$2 t=${3:-30} i
	for ((i = 0; i < t * 10; i++)); do
		grep -qE "$re" "$BATS_TEST_TMPDIR/$id.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "container $id: no output line matching '$re' after ${t}s; stdout: $(cat "$BATS_TEST_TMPDIR/$id.out" 2>/dev/null)" >&2
	return 1
}

# ---------------------------------------------------------------------------------------
# Fewer jq runs. jq 1.6 parses its builtins at every start: about 0.6 s under TCG, where the
# helpers of helpers.bash run it a few times per bundle and on every poll of a container's
# state. Same functions, same results, in bash (state fields) or one jq run per bundle.

# json_string STRING: STRING as a JSON string literal. Substitutions, not a loop over the
# characters: bats' DEBUG trap runs before every command of a test, ~10 ms each under TCG.
json_string() {
	local s=$1 c code
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	if [[ $s == *[$'\001'-$'\037']* ]]; then
		for ((code = 1; code < 32; code++)); do
			printf -v c '%b' "\\$(printf %03o "$code")"
			[[ $s == *"$c"* ]] && s=${s//"$c"/$(printf '\\u%04x' "$code")}
		done
	fi
	printf '"%s"' "$s"
}

# json_array ARG...: as in helpers.bash.
json_array() {
	local a sep='' out='['
	for a in "$@"; do
		out+=$sep$(json_string "$a")
		sep=,
	done
	printf '%s]\n' "$out"
}

# make_bundle NAME [JQ_FILTER [JQ_ARGS...]]: as in helpers.bash, with the base edits and
# JQ_FILTER in one jq run (JQ_FILTER must not use $tag).
make_bundle() {
	local name=$1 filter='.'
	shift
	if [ $# -gt 0 ]; then
		filter=$1
		shift
	fi
	BUNDLE="$BATS_TEST_TMPDIR/$name"
	mkdir -p "$BUNDLE"
	chmod 0755 "$BUNDLE"
	cp -a "$ROOTFS_CACHE" "$BUNDLE/rootfs"
	rm -f "$BUNDLE/rootfs/.done"
	"$WARD" spec -b "$BUNDLE" || fail "$WARD spec -b $BUNDLE failed"
	# shellcheck disable=SC2016 # $tag is jq's
	config_edit '.process.terminal = false | .root.readonly = false | .process.args = ["true"]
		| .process.env += ["WARD_TEST_TAG=" + $tag] | ('"$filter"')' --arg tag "$TAG" "$@"
}

# set_args ARG...: process.args = the arguments (one jq run).
set_args() {
	config_edit ".process.args = $(json_array "$@")"
}

# state_value ID KEY: a top-level string or number of `ward state ID` (status, pid).
state_value() {
	local json re
	json=$(ward state "$1" 2>/dev/null) || return 1
	re="\"$2\"[[:space:]]*:[[:space:]]*\"?([^\",}[:space:]]*)"
	[[ $json =~ $re ]] || return 1
	printf '%s\n' "${BASH_REMATCH[1]}"
}

status_of() { state_value "$1" status; }
init_pid() { state_value "$1" pid; }
