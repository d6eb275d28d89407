#!/usr/bin/env bats
# AppArmor on a real kernel (run inside the VM by tests/vm/run-vm.sh): ward loads its
# embedded ward-default profile when the kernel does not have it, the container's processes
# (init and `ward exec`) run under it, and it denies what it says it denies.
#
# To show that AppArmor is what denies (not seccomp, a missing capability or file
# permissions), the tenant here has no seccomp filter for ordinary pods and an allow-all
# filter for privileged ones, the pod has CAP_SYS_ADMIN and CAP_NET_RAW in its user
# namespace, and every probe runs twice in the same container: in a `ward exec` process
# under ward-default, and as the control, unconfined, through nsenter from the host into all
# of the container's namespaces as its root (the kernel lets that identity do it). Kept to
# one container start: every fork+exec costs ~0.1 s under TCG.

load vm-helpers
load "$WARD_VM_TESTS/podman-helpers"

PROFILE_SRC="$WARD_VM_TESTS/../runtime/apparmor/ward-default"
AA_PROFILES=/sys/kernel/security/apparmor/profiles

suite_setup() {
	skip_unless_vm
	# The tenant: no seccomp (privileged pods: allow-all), AppArmor required, ward-default;
	# a pod may name its own profile (for the refusal tests).
	local cfg="$BATS_TEST_TMPDIR/config"
	mkdir -p "$cfg/tenants.d"
	echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$cfg/allow-all.json"
	jq -n --arg lib "$BATS_TEST_TMPDIR/lib" '{lib_dir: $lib, apparmor: "required"}' >"$cfg/ward.json"
	jq -n --arg sc "$cfg/allow-all.json" '{seccomp: "unconfined", seccomp_privileged: $sc,
		privileged: true, apparmor: "ward-default", allow_pod_apparmor: true}' \
		>"$cfg/tenants.d/default.json"
	export WARD_CONFIG="$cfg"
}

aa_loaded() {
	grep -q "^$1 (" "$AA_PROFILES"
}

# Unload ward-default (ward must load it again by itself).
aa_unload_default() {
	if aa_loaded ward-default; then
		apparmor_parser -R "$PROFILE_SRC" || fail "apparmor_parser -R ward-default failed"
	fi
	! aa_loaded ward-default || fail "ward-default still loaded after apparmor_parser -R"
}

# One line per probe, "NAME: ok" or "NAME: <the error's last part>" (strerror).
PROBES='
p() { n=$1; shift; if o=$("$@" 2>&1); then echo "$n: ok"; else echo "$n: ${o##*: }"; fi; }
p sysrq-write sh -c "echo h > /proc/sysrq-trigger"
p core-pattern-write sh -c "echo core > /proc/sys/kernel/core_pattern"
p core-pattern-read cat /proc/sys/kernel/core_pattern
p kcore-read cat /proc/kcore
p sys-security-list ls /sys/kernel/security
p sys-firmware-list ls /sys/firmware
p mount-tmpfs sh -c "mount -t tmpfs probe /tmp && umount /tmp"
p change-profile-current sh -c "echo changeprofile unconfined > /proc/self/attr/current"
p change-profile-apparmor sh -c "echo changeprofile unconfined > /proc/self/attr/apparmor/current"
p change-profile-exec sh -c "echo exec unconfined > /proc/self/attr/exec"
socket-probe alg packet raw tcp udp unix
'

@test "vm apparmor: ward-default is loaded when missing; init and ward exec run under it; it denies mount, AF_ALG, packet and raw sockets, profile changes, core_pattern and kcore" {
	aa_unload_default
	# AF_ALG for the control (the container cannot load modules)
	modprobe algif_hash || fail "modprobe algif_hash"
	core_pattern=$(cat /proc/sys/kernel/core_pattern)

	make_bundle b '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN", "CAP_NET_RAW"])'
	cp "$WARD_TEST_BIN/socket-probe" "$BUNDLE/rootfs/bin/socket-probe"
	set_args sleep 1000
	id=$(cid aa)
	run_detached "$id"
	wait_status "$id" running

	# Loaded by ward, in enforce mode; the init (seen from the host) is under it.
	run grep '^ward-default ' "$AA_PROFILES"
	assert_output "ward-default (enforce)"
	pid=$(init_pid "$id")
	assert_equal "$(cat "/proc/$pid/attr/current")" "ward-default (enforce)"

	# A ward exec process: the container's profile, named or not (the apparmor subdir
	# of attr is this LSM's own view); the tenant refuses any other.
	run ward exec "$id" cat /proc/self/attr/current
	assert_success
	assert_output "ward-default (enforce)"
	run ward exec --apparmor ward-default "$id" cat /proc/self/attr/apparmor/current
	assert_success
	assert_output "ward-default (enforce)"
	ward_capture exec --apparmor unconfined "$id" true
	assert_failure
	[[ "$stderr" == *'profile "ward-default", not "unconfined"'* ]] || fail "unexpected error: $stderr"

	# The probes under ward-default, then the control: unconfined, as the container's root
	# with every capability in its user namespace, no seccomp.
	run ward exec "$id" sh -c "$PROBES"
	confined=("${lines[@]}")
	printf "confined: %s\n" "${confined[@]}"
	run nsenter -t "$pid" -a -r -w sh -c "$PROBES"
	control=("${lines[@]}")
	printf "control:  %s\n" "${control[@]}"
	assert_equal "$(nsenter -t "$pid" -a -r -w cat /proc/self/attr/current)" "unconfined"

	probe() { # probe NAME SET: that probe's line in confined or control
		local -n set=$2
		printf '%s\n' "${set[@]}" | grep "^$1: " || echo "$1: (no output)"
	}
	# Denied by AppArmor: the control succeeds, ward-default gets EACCES.
	for n in core-pattern-read kcore-read sys-security-list sys-firmware-list mount-tmpfs alg packet raw; do
		[ "$(probe $n control)" = "$n: ok" ] || fail "control: $(probe $n control)"
		case "$(probe $n confined)" in
		"$n: Permission denied" | "$n: EACCES (Permission denied)") ;;
		*) fail "ward-default: expected EACCES, got $(probe $n confined)" ;;
		esac
	done
	# Denied under ward-default (in a user namespace file permissions and the read-only
	# /proc/sys mount deny them as well, so there is no control to compare with).
	for n in sysrq-write core-pattern-write; do
		[ "$(probe $n confined)" != "$n: ok" ] || fail "ward-default let $n through"
	done
	assert_equal "$(cat /proc/sys/kernel/core_pattern)" "$core_pattern"
	# A confined process cannot leave its profile; the control may (it is unconfined).
	for n in change-profile-current change-profile-apparmor change-profile-exec; do
		[ "$(probe $n confined)" != "$n: ok" ] || fail "ward-default let $n through"
	done
	# Normal sockets work under ward-default.
	for n in tcp udp unix; do
		assert_equal "$(probe $n confined)" "$n: ok"
	done

	# After a refused change the process is still confined, and so is what it execs.
	run ward exec "$id" sh -c 'echo "exec unconfined" > /proc/self/attr/exec 2>/dev/null
		echo "changeprofile unconfined" > /proc/self/attr/current 2>/dev/null
		cat /proc/self/attr/current; exec cat /proc/self/attr/current'
	assert_success
	assert_equal "${lines[0]}" "ward-default (enforce)"
	assert_equal "${lines[1]}" "ward-default (enforce)"

	# A normal workload: files in the rootfs, a pipeline, the init's environ (a ptrace read
	# check: allowed among the container's own processes), a signal to the init.
	run ward exec "$id" sh -c 'set -e; mkdir -p /root/work; echo hello > /root/work/f
		cat /root/work/f | tr a-z A-Z | sed s/L/l/g; wc -c < /root/work/f
		tr "\0" "\n" < /proc/1/environ | grep -c "^WARD_TEST_TAG="; kill -0 1 && echo signal-ok'
	assert_success
	assert_equal "${lines[0]}" "HEllO"
	assert_equal "${lines[1]}" "6"
	assert_equal "${lines[2]}" "1"
	assert_equal "${lines[3]}" "signal-ok"

	# Signals from the runtime (unconfined) reach the confined init.
	ward kill "$id" KILL
	wait_status "$id" stopped
	ward delete "$id"
	assert_nothing_left "$id"
}

@test "vm apparmor: a profile the kernel lacks is refused by name, ward-default without apparmor_parser is refused clearly; nothing is left" {
	make_bundle b '.process.apparmorProfile = "ward-no-such-profile"'
	id=$(cid np)
	ward_capture create -b "$BUNDLE" "$id"
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *'process.apparmorProfile "ward-no-such-profile": AppArmor profile "ward-no-such-profile" is not loaded'* ]] ||
		fail "unexpected error: $stderr"
	assert_nothing_left "$id"

	# ward-default missing and apparmor_parser gone (the guest's root is an overlay).
	aa_unload_default
	parser=$(command -v apparmor_parser)
	mv "$parser" "$parser.hidden"
	on_teardown "mv '$parser.hidden' '$parser'"
	config_edit '.process.apparmorProfile = "ward-default"'
	id=$(cid nparser)
	ward_capture create -b "$BUNDLE" "$id"
	mv "$parser.hidden" "$parser"
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *'load the ward-default profile: apparmor_parser is not installed'* ]] ||
		fail "unexpected error: $stderr"
	assert_nothing_left "$id"
	! aa_loaded ward-default
}

@test "vm apparmor: an older ward-default in the kernel is replaced by this ward's, once" {
	# An "older" ward-default: same name, complain mode, not this ward's text; no stamp.
	aa_unload_default
	printf 'profile ward-default flags=(complain) {\n  file,\n}\n' | apparmor_parser -r ||
		fail "could not load the stand-in profile"
	grep -qx 'ward-default (complain)' "$AA_PROFILES" || fail "$(grep ward-default "$AA_PROFILES")"
	rm -f /run/ward/apparmor-ward-default.*
	make_bundle b '.process.apparmorProfile = "ward-default"'
	set_args cat /proc/self/attr/current
	id=$(cid up)
	ward_capture run -b "$BUNDLE" "$id"
	assert_success
	assert_output 'ward-default (enforce)'
	grep -qx 'ward-default (enforce)' "$AA_PROFILES" || fail "$(grep ward-default "$AA_PROFILES")"
	ls /run/ward/apparmor-ward-default.* >/dev/null || fail "no stamp written"
	assert_nothing_left "$id"
}

# podman asks, on every exec, the AppArmor profile it asked for at create; the tenant
# replaced that one with its own at create (allow_pod_apparmor off), and the state keeps
# what was asked: an exec asking it runs under the container's profile, any other is refused.
@test "vm apparmor: an exec asking for the profile the pod asked at create runs under the container's; another is refused naming tenant and rule" {
	local t="$WARD_CONFIG/tenants.d/default.json"
	jq '.allow_pod_apparmor = false' "$t" >"$t.new" && mv "$t.new" "$t"
	make_bundle b '.process.apparmorProfile = "containers-default-0.50.1"'
	set_args sleep 1000
	id=$(cid asked)
	run_detached "$id"
	wait_status "$id" running
	pid=$(init_pid "$id")
	assert_equal "$(cat "/proc/$pid/attr/current")" "ward-default (enforce)"

	# --apparmor (runc's flag), and a process.json carrying it (what podman passes)
	run ward exec --apparmor containers-default-0.50.1 "$id" cat /proc/self/attr/current
	assert_success
	assert_output "ward-default (enforce)"
	jq '.process | .args = ["cat", "/proc/self/attr/apparmor/current"]' "$BUNDLE/config.json" \
		>"$BATS_TEST_TMPDIR/process.json"
	run ward exec --process "$BATS_TEST_TMPDIR/process.json" "$id"
	assert_success
	assert_output "ward-default (enforce)"

	# any other profile: refused, naming the tenant and the rule
	ward_capture exec --apparmor ward-other "$id" true
	assert_failure
	[[ "$stderr" == *"tenant \"default\": apparmor: exec processes run under the container's profile \"ward-default\", not \"ward-other\""* ]] ||
		fail "unexpected error: $stderr"

	ward kill "$id" KILL
	wait_status "$id" stopped
	ward delete "$id"
	assert_nothing_left "$id"
}

@test "vm apparmor: podman exec under the default tenant runs under ward-default (podman asks its own profile on every exec)" {
	command -v podman >/dev/null || skip "podman is not installed"
	pm_setup
	on_teardown pm_teardown_file
	pm_busybox_root "$PM/rootfs"
	jq -n --arg r "$PM/rootfs" '{root_paths: [$r]}' >"$PM/cfg/tenants.d/default.json"
	run pm "$WARD" run -d --network none --rootfs "$PM/rootfs" sleep 1000
	assert_success
	local pmid=${lines[-1]}
	run pm "$WARD" inspect --format '{{.AppArmorProfile}}' "$pmid"
	assert_success
	[ -n "$output" ] && [ "$output" != ward-default ] || fail "podman asked for \"$output\""
	run pm "$WARD" exec "$pmid" cat /proc/self/attr/current
	assert_success
	assert_output "ward-default (enforce)"
	pm_end "$WARD" "$pmid"
	ward_ids_are
}
