#!/usr/bin/env bash
# Functions of runtime/, shim/, hooks/ and gpu-hooks/ that no program uses (make dead-code).
# Not a test: it lists, for a person to judge, and exits 0.
#
# Every program (ward, containerd-shim-ward-v2, ward-gpu-hook, ward-net-hook,
# ward-audit-hook) is linked again from build/ with every object of libward.a (and
# libwardshim.a) pulled in and --gc-sections --print-gc-sections: a function whose section
# every program drops is used by none of them. A function the compiler inlined into its
# callers in the same file is dropped too; those are shown apart ("used in its own file
# only": static candidates), found by its name appearing in its file outside the definition.
#
#   tests/dead-code.sh [BUILD]    (default build; run `make all` first)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
B=${1:-build}
LIBS=(-lseccomp -lcap -ljansson -lnl-route-3 -lnl-3 -lpthread -lm)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$B"/libward.a "$B"/libwardshim.a "$B"/shim/main.o; do
	[ -e "$f" ] || { echo "dead-code: $f missing: run make all first" >&2; exit 2; }
done

# link NAME OBJS...: the "file function" pairs of our objects whose .text section is dropped
link() {
	local name=$1
	shift
	gcc -pie -Wl,--gc-sections -Wl,--print-gc-sections -o "$tmp/$name" "$@" 2>&1 |
		sed -n "s/.*removing unused section '\.text\.\([^']*\)' in file '\([^']*\)'.*/\2 \1/p" |
		grep -v 'proto-c/' |
		sed -E 's/^[^ ]*\(([^)]*)\)/\1/; s/^[^ ]*\/([^ /]*) /\1 /; s/ unlikely\./ /' |
		sort -u >"$tmp/$name.gc"
}
WA=-Wl,--whole-archive NA=-Wl,--no-whole-archive
link ward "$B"/runtime/*.o "$WA" "$B/libward.a" "$NA" "${LIBS[@]}"
link shim "$B"/shim/main.o "$WA" "$B/libwardshim.a" "$B/libward.a" "$NA" -lprotobuf-c "${LIBS[@]}"
link gpu "$B"/gpu-hooks/*.o "$WA" "$B/libward.a" "$NA" "${LIBS[@]}" -ldl
link net "$B"/hooks/net*.o "$WA" "$B/libward.a" "$NA" "${LIBS[@]}"
link audit "$B"/hooks/audit*.o "$WA" "$B/libward.a" "$NA" "${LIBS[@]}"
comm -12 "$tmp/ward.gc" "$tmp/shim.gc" | comm -12 - "$tmp/gpu.gc" | comm -12 - "$tmp/net.gc" |
	comm -12 - "$tmp/audit.gc" >"$tmp/dead"

set +e +o pipefail # a name no file has is an answer here, not an error
mapfile -t srcs < <(git ls-files 'runtime/*.c' 'shim/*.c' 'hooks/*.c' 'gpu-hooks/*.c')
while read -r _ fn; do
	src=$(grep -lE "^[a-z].*[ *]$fn\(" "${srcs[@]}" | head -1 || true)
	[ -n "$src" ] || continue
	others=$(grep -lw "$fn" "${srcs[@]}" | grep -vx "$src" || true)
	own=$(grep -cw "$fn" "$src")
	tests=$(grep -rlw "$fn" tests | tr '\n' ' ')
	if [ "$own" -gt 1 ]; then
		echo "used in its own file only: $src $fn${tests:+ (tests: $tests)}"
	elif [ -n "$others" ]; then
		echo "DEAD (named in ${others//$'\n'/ }): $src $fn${tests:+ (tests: $tests)}"
	else
		echo "DEAD: $src $fn${tests:+ (only tests: $tests)}"
	fi
done <"$tmp/dead" | sort
