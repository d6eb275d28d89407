#!/usr/bin/env bats
# linux.seccomp: actions, errnoRet, defaultErrnoRet, argument conditions, exec, bad profiles.

load helpers

# set_seccomp JSON: linux.seccomp = JSON.
set_seccomp() {
	config_edit '.linux.seccomp = $s' --argjson s "$1"
}

# Every x86-64 syscall name from the kernel headers (for allow-list profiles).
all_syscalls() {
	local h=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
	[ -r "$h" ] || skip "$h is missing (linux-libc-dev), needed to build an allow-list profile"
	sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/\1/p' "$h"
}

@test "seccomp: mkdir -> SCMP_ACT_ERRNO errnoRet 1: mkdir fails with 'Operation not permitted', the rest works" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	set_cmd 'mkdir /tmp/x 2>&1; echo rc=$?; touch /tmp/y && echo touch-ok; [ -d /tmp/x ] || echo no-dir'
	run_container
	assert_success
	assert_output "$(printf "mkdir: can't create directory '/tmp/x': Operation not permitted\nrc=1\ntouch-ok\nno-dir")"
}

@test "seccomp: errnoRet picks the errno (28 = ENOSPC)" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 28}]}'
	set_cmd 'mkdir /tmp/x 2>&1'
	run_container
	assert_output --partial "No space left on device"
}

@test "seccomp: SCMP_ACT_ERRNO without errnoRet returns EPERM" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
	set_cmd 'mkdir /tmp/x 2>&1'
	run_container
	assert_output --partial "Operation not permitted"
}

@test "seccomp: defaultAction SCMP_ACT_ERRNO with defaultErrnoRet 38 (ENOSYS) for what the allow-list lacks" {
	make_bundle b
	allow=$(all_syscalls | grep -vxE 'mkdir|mkdirat' | jq -R . | jq -sc .)
	config_edit '.linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38,
		"syscalls": [{"names": $a, "action": "SCMP_ACT_ALLOW"}]}' --argjson a "$allow"
	set_cmd 'mkdir /tmp/x 2>&1; echo rc=$?; echo still-running'
	run_container
	assert_success
	assert_line --partial "Function not implemented"
	assert_line rc=1
	assert_line still-running
}

@test "seccomp: an args condition (kill with sig == SIGUSR1 denied, other signals allowed)" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
		"args": [{"index": 1, "value": 10, "op": "SCMP_CMP_EQ"}]}]}'
	set_cmd 'trap "" USR1 USR2; kill -USR1 $$ 2>&1; echo usr1=$?; kill -USR2 $$ 2>&1; echo usr2=$?'
	run_container
	assert_success
	assert_line --partial "Operation not permitted"
	assert_line usr1=1
	assert_line usr2=0
}

@test "seccomp: SCMP_CMP_GE condition (kill with sig >= 12 denied)" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
		"args": [{"index": 1, "value": 12, "op": "SCMP_CMP_GE"}]}]}'
	set_cmd 'trap "" USR1 USR2 TERM; kill -USR1 $$; echo usr1=$?; kill -USR2 $$ 2>/dev/null; echo usr2=$?; kill -TERM $$ 2>/dev/null; echo term=$?'
	run_container
	assert_success
	assert_output "$(printf 'usr1=0\nusr2=1\nterm=1')"
}

@test "seccomp: /proc/self/status shows Seccomp 2 (filter mode) with a profile, 0 without" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO"}]}'
	set_cmd 'grep -E "^Seccomp:" /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'Seccomp:\t2')"

	make_bundle b2 'del(.linux.seccomp)'
	set_cmd 'grep -E "^Seccomp:" /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'Seccomp:\t0')"
}

@test "seccomp: SCMP_ACT_KILL_PROCESS kills the caller with SIGSYS (status 159 = 128+31)" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
	set_cmd 'mkdir /tmp/x; echo rc=$?'
	run_container
	assert_success
	assert_output rc=159
}

@test "seccomp: unknown syscall names in a rule are skipped, the known ones are filtered" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["no_such_syscall_ward", "mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	set_cmd 'mkdir /tmp/x 2>&1; echo rc=$?'
	run_container
	assert_success
	assert_line rc=1
}

@test "seccomp: the filter also applies to exec'd processes" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	set_args sleep 1000
	id=$(cid s)
	start_container "$id"
	run ward exec "$id" sh -c 'grep -E "^Seccomp:" /proc/self/status; mkdir /tmp/x 2>&1; echo rc=$?'
	assert_success
	assert_line "$(printf 'Seccomp:\t2')"
	assert_line --partial "Operation not permitted"
	assert_line rc=1
}

@test "seccomp: architectures and SECCOMP_FILTER_FLAG_LOG are accepted" {
	make_bundle b
	set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"flags": ["SECCOMP_FILTER_FLAG_LOG"], "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
	set_cmd 'mkdir /tmp/x 2>/dev/null; echo rc=$?'
	run_container
	assert_success
	assert_output rc=1
}

# profile_refused JSON [TEXT...]: create with linux.seccomp = JSON fails and leaves nothing;
# the error has each TEXT: "any:TEXT" from every runtime, plain TEXT from ward (one line).
profile_refused() {
	local json=$1 t
	shift
	make_bundle b
	set_seccomp "$json"
	id=$(cid s)
	ward_capture --merged create -b "$BUNDLE" "$id"
	assert_failure
	for t in "$@"; do
		case $t in
		any:*) assert_output --partial "${t#any:}" ;;
		*) ! ward_specific || assert_output --partial "$t" ;;
		esac
	done
	! ward_specific || assert_one_line "$output"
	assert_nothing_left "$id"
}

@test "seccomp: an invalid action name fails create with an error naming the field; nothing left" {
	profile_refused '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_BOGUS"}]}' \
		any:SCMP_ACT_BOGUS 'linux.seccomp.syscalls[0].action'
}

@test "seccomp: a profile libseccomp cannot compile (one syscall, one condition, two actions) fails create naming the syscall; nothing left" {
	profile_refused '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 1, "value": 1, "op": "SCMP_CMP_EQ"}]},
		{"names": ["mkdir"], "action": "SCMP_ACT_KILL_PROCESS", "args": [{"index": 1, "value": 1, "op": "SCMP_CMP_EQ"}]}]}' \
		seccomp 'add rule for mkdir'
}

@test "seccomp: an invalid defaultAction fails create naming linux.seccomp.defaultAction; nothing left" {
	profile_refused '{"defaultAction": "SCMP_ACT_NOPE"}' any:SCMP_ACT_NOPE 'linux.seccomp.defaultAction'
}

@test "seccomp: an invalid operator fails create naming the field; nothing left" {
	profile_refused '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 1, "value": 10, "op": "SCMP_CMP_WHATEVER"}]}]}' \
		any:SCMP_CMP_WHATEVER 'linux.seccomp.syscalls[0].args[0].op'
}

@test "seccomp: an argument index above 5 fails create; nothing left" {
	profile_refused '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
		"args": [{"index": 6, "value": 10, "op": "SCMP_CMP_EQ"}]}]}' \
		'linux.seccomp.syscalls[0].args[0].index'
}

@test "seccomp: a syscall newer than the profile (numbered above all it names) gets ENOSYS, not the default EPERM; a known one not allowed still EPERM (runc, crun)" {
	make_bundle b '.linux.seccomp = $p[0]' --slurpfile p "$WARD_REPO/seccomp-profiles/default.json"
	cp "$WARD_TEST_BIN/ward-probe" "$BUNDLE/rootfs/bin/ward-probe"
	# 1000: no syscall on any architecture yet; 246: kexec_load on x86-64, not in the profile
	set_cmd 'ward-probe --syscall 1000; ward-probe --syscall 246'
	run_container
	assert_success
	assert_equal "${lines[0]}" ENOSYS
	assert_equal "${lines[1]}" EPERM
}
