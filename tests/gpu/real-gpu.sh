#!/usr/bin/env bash
# End-to-end check of ward's GPU scrubber on a real NVIDIA GPU (no CUDA toolkit needed: only
# the driver's libcuda.so.1, gcc and the ward checkout):
#   1. tenant A fills all the VRAM it can allocate with a 64-bit pattern and exits;
#   2. ward's wipe (gpu-hooks/wipe.c via tests/gpu/wipe-run) scrubs the GPU;
#   3. tenant B allocates all it can and scans for the pattern;
#   4. cuMemsetD32 bandwidth on a 1 GiB buffer, to compare with the wipe's throughput.
# Prints a summary table; exits 0 when the wipe succeeded and tenant B found no pattern,
# 1 otherwise, 0 with "SKIP" on a machine without an NVIDIA GPU.
#
#   bash tests/gpu/real-gpu.sh
#
# Environment: WARD_GPU_UUID (default: CUDA device 0), LIBCUDA (default libcuda.so.1),
# CC (default gcc), WARD_GPU_DRYRUN=1 (skip the device checks: with LIBCUDA pointing at the
# stub, build/tests/gpu/libcuda.so.1, to test this script without a GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
libcuda=${LIBCUDA:-libcuda.so.1}
cc=${CC:-gcc}
pattern=5741524453454352 # "WARDSECR"

skip() {
	echo "SKIP: $*"
	exit 0
}
if [ "${WARD_GPU_DRYRUN:-0}" != 1 ]; then
	[ -e /dev/nvidiactl ] || skip "no /dev/nvidiactl (no NVIDIA driver loaded)"
	if [[ $libcuda != /* ]] && ! /sbin/ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$libcuda "; then
		skip "no $libcuda in the dynamic linker cache"
	fi
	[[ $libcuda != /* ]] || [ -e "$libcuda" ] || skip "no $libcuda"
fi
command -v "$cc" >/dev/null || { echo "real-gpu.sh: $cc not found" >&2; exit 1; }

work=$(mktemp -d /tmp/ward-real-gpu.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$repo"
# Built straight from the sources (wipe.c needs only util.c and err.c of libward), so the
# machine needs no libseccomp/jansson/libnl headers; same code as `make build/tests/gpu/wipe-run`.
"$cc" -O2 -std=gnu11 -Wall -Wextra -Werror -o "$work/tenant" tests/gpu/tenant.c -ldl
"$cc" -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -iquote runtime/lib -iquote gpu-hooks \
	-o "$work/wipe-run" tests/gpu/wipe-run.c gpu-hooks/wipe.c runtime/lib/util.c \
	runtime/lib/err.c -ldl

# key=value output of a command -> value of key
val() { sed -n "s/^$1=//p" "$2" | head -1; }
tenant() { LIBCUDA=$libcuda CUDA_VISIBLE_DEVICES=$uuid "$work/tenant" "$@"; }

uuid=${WARD_GPU_UUID:-}
if [ -z "$uuid" ]; then
	LIBCUDA=$libcuda "$work/tenant" uuid >"$work/uuid.out"
	uuid=$(val uuid "$work/uuid.out")
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$uuid" 2>/dev/null || echo "?")
minor=
for f in /proc/driver/nvidia/gpus/*/information; do
	[ -r "$f" ] || continue
	if grep -qi "GPU UUID:.*$uuid" "$f"; then
		minor=$(sed -n 's/^Device Minor:[[:space:]]*//p' "$f")
	fi
done
echo "# GPU $uuid ($name), minor ${minor:-?}, driver $(cat /sys/module/nvidia/version 2>/dev/null || echo '?')"

echo "# 1. tenant A fills its VRAM with $pattern"
tenant fill "$pattern" | tee "$work/a.out"

echo "# 2. ward wipe"
rdev_args=()
[ -z "$minor" ] || rdev_args=(--rdev "195:$minor")
busy_note=
set +e
"$work/wipe-run" --uuid "$uuid" --libcuda "$libcuda" "${rdev_args[@]}" | tee "$work/wipe.out"
set -e
busy=$(val busy_pid "$work/wipe.out")
if [ "${busy:-0}" -gt 0 ]; then
	# On a bare host nvidia-persistenced keeps the device node open: note it and wipe anyway.
	busy_note="pid $busy ($(cat "/proc/$busy/comm" 2>/dev/null || echo '?')) holds /dev/nvidia$minor; wiped without the busy check"
	echo "# busy check: $busy_note"
	set +e
	"$work/wipe-run" --uuid "$uuid" --libcuda "$libcuda" | tee "$work/wipe.out"
	set -e
fi

echo "# 3. tenant B scans all the VRAM it can allocate"
tenant scan "$pattern" | tee "$work/b.out"

# 1 GiB, or a quarter of the device for a small one (the stub in a dry run)
bw_mib=$(awk -v t="$(val total "$work/b.out")" 'BEGIN { m = int(t / 4 / 1048576); print (m > 1024 || m < 1) ? 1024 : m }')
echo "# 4. cuMemsetD32 bandwidth, $bw_mib MiB buffer"
tenant bw "$bw_mib" | tee "$work/bw.out"

gib() { awk -v b="${1:-0}" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }
wipe_ok=$(val ok "$work/wipe.out")
wipe_gbps=$(val gbps "$work/wipe.out")
memset_gbps=$(val memset_gbps "$work/bw.out")
found=$(val pattern_words "$work/b.out")
ratio=$(awk -v w="${wipe_gbps:-0}" -v m="${memset_gbps:-0}" 'BEGIN { if (m > 0) printf "%.0f%%", 100 * w / m; else print "?" }')
verdict=PASS
[ "$wipe_ok" = 1 ] && [ "${found:-1}" = 0 ] || verdict=FAIL

echo
echo "== ward GPU wipe: $uuid ($name) =="
printf '%-34s %s\n' \
	"total (cuMemGetInfo)" "$(gib "$(val total "$work/wipe.out")")" \
	"tenant A filled" "$(gib "$(val filled "$work/a.out")") in $(val chunks "$work/a.out") chunks" \
	"wipe ok" "$wipe_ok $(val reason "$work/wipe.out")" \
	"wipe: free at start" "$(gib "$(val free_start "$work/wipe.out")")" \
	"wipe: bytes zeroed" "$(gib "$(val bytes "$work/wipe.out")")" \
	"wipe: residue before memset" "$(val residue "$work/wipe.out") bytes in samples (0: driver scrubbed on free)" \
	"wipe: time" "$(val seconds "$work/wipe.out") s" \
	"wipe throughput" "$wipe_gbps GB/s (alloc + probe + memset + verify)" \
	"cuMemsetD32 bandwidth ($bw_mib MiB)" "$memset_gbps GB/s" \
	"wipe / memset" "$ratio (target >= 80%)" \
	"tenant B scanned" "$(gib "$(val scanned "$work/b.out")")" \
	"tenant B pattern words found" "$found (non-zero words: $(val nonzero_words "$work/b.out"))" \
	"busy check" "${busy_note:-no other process on the device}" \
	"verdict" "$verdict"
[ "$verdict" = PASS ]
