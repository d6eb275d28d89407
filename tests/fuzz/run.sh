#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/fuzz_NAME.c, built by `make fuzz-build` into
# BUILD/fuzz/fuzz_NAME) and prints TAP, one line per target:
#   ok 1 - fuzz spec: 50000 runs in 9s, no crash
#
# Usage: run.sh --quick|--long BUILD [NAME...]   (default: every tests/fuzz/fuzz_*.c)
#   --quick  the bounded run of `make test`: FUZZ_RUNS inputs (default 50000) or
#            FUZZ_QUICK_TIME seconds (default 12) per target, whichever comes first; new
#            inputs go to a temporary directory, never into the committed corpus.
#   --long   `make fuzz`: FUZZ_TIME seconds per target (default 300); the corpus grows in
#            BUILD/corpus/NAME (seeded from tests/fuzz/corpus/NAME), libFuzzer's output in
#            BUILD/logs/NAME.log.
# tests/fuzz/NAME.dict, where there is one, is the target's libFuzzer dictionary (the keys and
# values its parser knows). Crashing, leaking or hanging inputs are written to BUILD/crashes/NAME-*. A target whose
# program is missing (no clang or libFuzzer: the build failed) is a failure, not a skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-}
build=${2:-}
case "$mode" in --quick | --long) ;; *) echo "usage: $0 --quick|--long BUILD [NAME...]" >&2; exit 2 ;; esac
[ -n "$build" ] || { echo "usage: $0 --quick|--long BUILD [NAME...]" >&2; exit 2; }
shift 2
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
if [ $# -eq 0 ]; then
	set --
	for src in "$here"/fuzz_*.c; do
		n=${src##*/fuzz_}
		set -- "$@" "${n%.c}"
	done
fi

# The largest input each target is given: a few times the biggest realistic file.
max_len() {
	case "$1" in
	spec | policy) echo 16384 ;;
	config | gpu_request) echo 8192 ;;
	*) echo 4096 ;;
	esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
runs=${FUZZ_RUNS:-50000}
quick_time=${FUZZ_QUICK_TIME:-12}
long_time=${FUZZ_TIME:-300}
crashes=$build/crashes
mkdir -p "$crashes" 2>/dev/null

echo "1..$#"
i=0 failed=0
for name in "$@"; do
	i=$((i + 1))
	bin=$build/fuzz/fuzz_$name
	seeds=$here/corpus/$name
	if [ ! -x "$bin" ]; then
		echo "not ok $i - fuzz $name: $bin not built (clang and libclang-rt-14-dev needed: make fuzz-build)"
		failed=$((failed + 1))
		continue
	fi
	if [ "$mode" = --quick ]; then
		log=$(mktemp)
		work=$(mktemp -d)
		limits=(-runs="$runs" -max_total_time="$quick_time")
	else
		mkdir -p "$build/logs"
		log=$build/logs/$name.log
		work=$build/corpus/$name
		mkdir -p "$work"
		limits=(-max_total_time="$long_time")
	fi
	# The first corpus directory receives new inputs; the seeds (and the regression inputs
	# of crashes fixed) are read from the second.
	dict=()
	[ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
	"$bin" "${limits[@]}" "${dict[@]}" -max_len="$(max_len "$name")" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$crashes/$name-" "$work" "$seeds" >"$log" 2>&1
	rc=$?
	[ "$mode" = --quick ] && rm -rf "$work"
	done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		echo "ok $i - fuzz $name: ${done_runs:-?} runs${secs:+ in ${secs}s}, no crash"
	else
		art=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
		echo "not ok $i - fuzz $name: exit status $rc after ${done_runs:-?} runs${art:+, input saved as $art}"
		grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ 0x' "$log" | head -25 | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	[ "$mode" = --quick ] && rm -f "$log"
done
[ "$failed" -eq 0 ]
