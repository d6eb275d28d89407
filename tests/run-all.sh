#!/usr/bin/env bash
# Runs the C unit tests (TAP), the short fuzz run (tests/fuzz/run.sh --quick, one TAP line
# per target; with --fuzz BUILD, the directory `make fuzz-build` fills) and the bats suites
# (TAP) and prints one closing line:
#   N passed, N failed[, N skipped]
# Usage: run-all.sh [--unit-only|--bats-only|--fuzz-only] [--fuzz BUILD] [--filter REGEX] UNIT_BIN...
set -u
here=$(cd "$(dirname "$0")" && pwd)
mode=all filter= fuzz_build=
while [ $# -gt 0 ]; do
	case "$1" in
	--unit-only) mode=unit; shift ;;
	--bats-only) mode=bats; shift ;;
	--fuzz-only) mode=fuzz; shift ;;
	--fuzz) fuzz_build=$2; shift 2 ;;
	--filter) filter=$2; shift 2 ;;
	*) break ;;
	esac
done
passed=0 failed=0 skipped=0
failures=()

count_tap() { # $1 = label, stdin = TAP; sets tap_seen (results) and tap_plan (1..N, or "")
	local label=$1 line
	tap_seen=0 tap_plan=
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"ok "*"# skip"*|"ok "*"# SKIP"*) skipped=$((skipped + 1)) tap_seen=$((tap_seen + 1)) ;;
		"ok "*) passed=$((passed + 1)) tap_seen=$((tap_seen + 1)) ;;
		"not ok "*) failed=$((failed + 1)) tap_seen=$((tap_seen + 1)); failures+=("$label: ${line#not ok }") ;;
		1..[0-9]*) tap_plan=${line#1..} ;;
		esac
	done
}

# A unit test program that crashes or exits non-zero, or whose plan does not match what it
# printed, is a failure even if every line it printed was "ok".
unit_verdict() { # $1 = label, $2 = exit status
	if [ "$2" != 0 ]; then
		failed=$((failed + 1)); failures+=("$1: exited with status $2")
		echo "not ok - $1 exited with status $2"
	elif [ -z "$tap_plan" ] || [ "$tap_plan" != "$tap_seen" ]; then
		failed=$((failed + 1)); failures+=("$1: plan 1..${tap_plan:-?} but $tap_seen results")
		echo "not ok - $1: plan 1..${tap_plan:-?} but $tap_seen results"
	fi
}

if [ "$mode" = all ] || [ "$mode" = unit ]; then
	for t in "$@"; do
		echo "# unit: $(basename "$t")"
		out=$(mktemp)
		if [ -n "${WARD_VALGRIND:-}" ]; then
			valgrind -q --error-exitcode=99 --leak-check=full "$t" >"$out" 2>&1
		else
			"$t" >"$out" 2>&1
		fi
		rc=$?
		count_tap "$(basename "$t")" <"$out"
		rm -f "$out"
		unit_verdict "$(basename "$t")" "$rc"
	done
fi

# The fuzz targets: a missing program (no clang or libFuzzer) is a failure, never a skip.
if [ "$mode" = fuzz ] || { [ "$mode" = all ] && [ -n "$fuzz_build" ]; }; then
	if [ -z "$fuzz_build" ]; then
		echo "run-all: --fuzz-only needs --fuzz BUILD" >&2
		exit 2
	fi
	echo "# fuzz: tests/fuzz (libFuzzer, bounded)"
	before=$failed fuzz_rc=$(mktemp)
	count_tap fuzz < <(bash "$here/fuzz/run.sh" --quick "$fuzz_build" 2>&1; echo $? >"$fuzz_rc")
	rc=$(cat "$fuzz_rc"); rm -f "$fuzz_rc"
	if [ "${rc:-1}" != 0 ] && [ "$failed" -eq "$before" ]; then
		failed=$((failed + 1)); failures+=("fuzz: run.sh exited with status ${rc:-?}")
	elif [ -z "$tap_plan" ] || [ "$tap_plan" != "$tap_seen" ]; then
		failed=$((failed + 1)); failures+=("fuzz: plan 1..${tap_plan:-?} but $tap_seen results")
	fi
fi

if [ "$mode" = all ] || [ "$mode" = bats ]; then
	if ! command -v bats >/dev/null; then
		echo "# bats not installed: integration tests not run" >&2
		failed=$((failed + 1)); failures+=("bats missing")
	else
		mapfile -t suites < <(ls "$here"/*.bats "$here"/security/*.bats "$here"/containerd/*.bats "$here"/cri/*.bats 2>/dev/null | sort)
		for s in "${suites[@]}"; do
			name=$(basename "$s" .bats)
			if [ -n "$filter" ] && ! [[ "$name" =~ $filter ]]; then continue; fi
			echo "# bats: $name"
			count_tap "$name" < <(bats --tap "$s" 2>&1)
		done
		# The VM suites (tests/vm/*.bats): a real kernel under qemu with cgroup2 and AppArmor.
		# Skipped when qemu or a kernel image is missing, or when WARD_SKIP_VM is set.
		vm=$here/vm/run-vm.sh
		if [ -f "$vm" ] && { [ -z "$filter" ] || [[ vm =~ $filter ]]; }; then
			if [ -n "${WARD_SKIP_VM:-}" ]; then
				echo "# vm: skipped (WARD_SKIP_VM is set)"
			elif ! why=$(bash "$vm" --check); then
				echo "# vm: skipped: $why"
			else
				echo "# vm: tests/vm (qemu)"
				before=$failed vm_rc=$(mktemp)
				count_tap vm < <(bash "$vm" 2>&1; echo $? >"$vm_rc")
				rc=$(cat "$vm_rc"); rm -f "$vm_rc"
				if [ "${rc:-1}" != 0 ] && [ "$failed" -eq "$before" ]; then
					failed=$((failed + 1)); failures+=("vm: run-vm.sh exited with status ${rc:-?}")
				fi
			fi
		fi
	fi
fi

if [ ${#failures[@]} -gt 0 ]; then
	echo "# failures:"
	printf '#   %s\n' "${failures[@]}"
fi
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
