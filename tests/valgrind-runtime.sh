#!/usr/bin/env bash
# ward's commands under valgrind (memcheck): every error or leak fails.
# Containers are created by the same binary outside valgrind where valgrind cannot follow
# (it lacks openat2, fsopen and open_tree); the commands that read, signal and delete them,
# and the parser's error paths, run under valgrind.
# Usage: tests/valgrind-runtime.sh WARD_BINARY   (prints "N passed, N failed")
set -u
ward=$1
tmp=$(mktemp -d /tmp/ward-vg.XXXXXX)
chmod 0755 "$tmp" # the default tenant runs the container as a uid of its own range
trap 'ward_plain delete -f vg1 >/dev/null 2>&1; rm -rf "$tmp"' EXIT
root=$tmp/state
vg() { valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect "$ward" --root "$root" "$@"; }
ward_plain() { "$ward" --root "$root" "$@"; }
passed=0 failed=0
check() { # name, expected exit status, command...
	local name=$1 want=$2 got
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" = "$want" ] && ! grep -q "==[0-9]*==" "$tmp/out"; then
		echo "ok - valgrind: $name"
		passed=$((passed + 1))
	else
		echo "not ok - valgrind: $name (exit $got, want $want)"
		sed 's/^/#   /' "$tmp/out" | head -30
		failed=$((failed + 1))
	fi
}

mkdir -p "$tmp/b/rootfs/bin" "$tmp/b/rootfs/proc" "$tmp/b/rootfs/dev" "$tmp/b/rootfs/sys" "$tmp/b/rootfs/tmp"
cp /bin/busybox "$tmp/b/rootfs/bin/busybox"
ln -s busybox "$tmp/b/rootfs/bin/sh"
ln -s busybox "$tmp/b/rootfs/bin/sleep"
check "spec" 0 vg spec -b "$tmp/b"
jq '.process.terminal=false | .process.args=["sleep","100"]' "$tmp/b/config.json" >"$tmp/c" && mv "$tmp/c" "$tmp/b/config.json"
check "features" 0 vg features
check "version" 0 vg --version
check "list (empty)" 0 vg list
echo '{"ociVersion": "1.3.0", "root": {"path": 3}}' >"$tmp/bad.json"
mkdir -p "$tmp/bad" && cp "$tmp/bad.json" "$tmp/bad/config.json"
check "create: malformed config is refused" 1 vg create -b "$tmp/bad" bad1
check "create: invalid id is refused" 1 vg create -b "$tmp/b" "a/b"
check "state: unknown id" 1 vg state nosuch
mkdir -p "$tmp/conf" && printf '{"lib_dir": "%s"}\n' "$tmp/lib" >"$tmp/conf/ward.json"
check "policy explain (the tenant policy)" 0 vg --config "$tmp/conf" policy explain "$tmp/b"
check "policy explain --json" 0 vg --config "$tmp/conf" policy explain --json "$tmp/b"
jq '.annotations["ward.dev/tenant"] = "nobody"' "$tmp/b/config.json" >"$tmp/bad/config.json"
check "policy explain: unknown tenant refused" 1 vg --config "$tmp/conf" policy explain "$tmp/bad"
ward_plain create -b "$tmp/b" vg1 || echo "# could not create vg1 outside valgrind"
check "state (created)" 0 vg state vg1
check "list (one)" 0 vg list
check "list --format json" 0 vg list --format json
check "ps --format json" 0 vg ps --format json vg1
ward_plain start vg1
check "state (running)" 0 vg state vg1
check "pause" 0 vg pause vg1
check "resume" 0 vg resume vg1
check "delete (running, refused)" 1 vg delete vg1
check "kill KILL" 0 vg kill vg1 KILL
sleep 0.2
check "delete" 0 vg delete vg1
check "delete -f (unknown id)" 0 vg delete -f vg1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
