#!/usr/bin/env bats
# process: args, env, cwd, user, umask, rlimits, capabilities, noNewPrivileges, oomScoreAdj,
# ioPriority, scheduler, personality.

load helpers

# Capability bit masks as /proc/PID/status prints them.
capmask() {
	local m=0 c
	for c in "$@"; do m=$((m | (1 << c))); done
	printf '%016x' "$m"
}

@test "process.args: arguments reach the program unchanged (spaces, quotes, empty, leading dash)" {
	make_bundle b
	set_args sh -c 'for a in "$@"; do echo "[$a]"; done' argv0 "two words" "" "-n" "it's" '$HOME'
	run_container
	assert_success
	assert_output "$(printf '[two words]\n[]\n[-n]\n[it'"'"'s]\n[$HOME]')"
}

@test "process.args: the program is looked up in the container's PATH" {
	make_bundle b '.process.env = ["PATH=/sbin:/bin"]'
	set_args busybox echo found-via-path
	run_container
	assert_success
	assert_output found-via-path
}

@test "process.env: exactly the configured environment plus HOME (nothing from the runtime's own)" {
	make_bundle b '.process.env = ["PATH=/bin", "A=1", "B=with space", "EMPTY="]'
	set_args env
	export WARD_TEST_LEAK=leak
	run_container
	unset WARD_TEST_LEAK
	assert_success
	assert_equal "$(sort <<<"$output")" "$(printf 'A=1\nB=with space\nEMPTY=\nHOME=/root\nPATH=/bin' | sort)"
}

@test "process.env: HOME is set for the user when the config has none" {
	make_bundle b '.process.env = ["PATH=/bin"]'
	set_cmd 'echo "home=$HOME"'
	run_container
	assert_success
	assert_output home=/root
}

@test "process.cwd: the program starts in cwd, created if missing" {
	make_bundle b '.process.cwd = "/var/lib/work"'
	set_args pwd
	run_container
	assert_success
	assert_output /var/lib/work
	[ -d "$BUNDLE/rootfs/var/lib/work" ]
}

@test "process.user: uid, gid and additionalGids (id -u, -g, -G)" {
	make_bundle b '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [10, 20, 1001]}'
	set_cmd 'id -u; id -g; id -G'
	run_container
	assert_success
	assert_line --index 0 1000
	assert_line --index 1 1001
	# supplementary groups are exactly the additional ones (order as the kernel keeps them)
	assert_equal "$(tr ' ' '\n' <<<"${lines[2]}" | sort -n | uniq | tr '\n' ' ')" "10 20 1001 "
}

@test "process.user: no supplementary groups unless asked (root's groups are not inherited)" {
	make_bundle b '.process.user = {"uid": 1000, "gid": 1000}'
	set_cmd 'grep -E "^(Uid|Gid|Groups):" /proc/self/status'
	run_container
	assert_success
	assert_line --regexp '^Uid:[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000$'
	assert_line --regexp '^Gid:[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000$'
	assert_line --regexp '^Groups:[[:space:]]*$'
}

@test "process.user.umask: umask builtin prints the configured mask, new files get it" {
	make_bundle b '.process.user.umask = 23'
	set_cmd 'umask; touch /tmp/f; stat -c %a /tmp/f'
	run_container
	assert_success
	assert_output "$(printf '0027\n640')"
}

@test "process.rlimits: RLIMIT_NOFILE soft/hard lower than the host's are applied" {
	host_hard=$(ulimit -Hn)
	[ "$host_hard" = unlimited ] || [ "$host_hard" -ge 2000 ] || skip "host RLIMIT_NOFILE hard limit $host_hard < 2000"
	make_bundle b '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 777, "hard": 1999}]'
	set_cmd 'ulimit -n; ulimit -Hn'
	run_container
	assert_success
	assert_output "$(printf '777\n1999')"
}

@test "process.rlimits: several limits (NOFILE, CORE, NPROC) apply together" {
	make_bundle b '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 512, "hard": 512},
		{"type": "RLIMIT_CORE", "soft": 0, "hard": 0}, {"type": "RLIMIT_NPROC", "soft": 4000, "hard": 4000}]'
	set_cmd 'grep -E "^Max (open files|core file size|processes)" /proc/self/limits | tr -s " "'
	run_container
	assert_success
	assert_line "Max open files 512 512 files "
	assert_line "Max core file size 0 0 bytes "
	assert_line "Max processes 4000 4000 processes "
}

@test "process.rlimits: raising the hard limit above the host's (no CAP_SYS_RESOURCE here) fails create with the cause" {
	host_hard=$(ulimit -Hn)
	[ "$host_hard" != unlimited ] || skip "host RLIMIT_NOFILE hard limit is unlimited"
	make_bundle b
	config_edit '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": ($h + 1), "hard": ($h + 1)}]' --argjson h "$host_hard"
	set_cmd 'ulimit -Hn'
	run_container
	if [ "$status" -eq 0 ]; then
		# only possible if this root can raise limits after all
		assert_output "$((host_hard + 1))"
	else
		assert_output ""
		[[ "$stderr" == *RLIMIT_NOFILE* || "$stderr" == *rlimit* ]] || fail "error does not name the rlimit: $stderr"
	fi
}

@test "process.capabilities: only CAP_CHOWN and CAP_KILL in bounding/effective/permitted, none inheritable/ambient" {
	make_bundle b '.process.capabilities = {"bounding": ["CAP_CHOWN", "CAP_KILL"], "effective": ["CAP_CHOWN", "CAP_KILL"],
		"permitted": ["CAP_CHOWN", "CAP_KILL"], "inheritable": [], "ambient": []}'
	set_cmd 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	run_container
	assert_success
	m=$(capmask 0 5)
	assert_output "$(printf 'CapInh:\t%s\nCapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t%s\nCapAmb:\t%s' 0000000000000000 "$m" "$m" "$m" 0000000000000000)"
}

@test "process.capabilities: the capability sets take effect (chown works with CAP_CHOWN, not without)" {
	make_bundle b '.process.capabilities = {"bounding": ["CAP_CHOWN"], "effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN"]}'
	set_cmd 'touch /tmp/f; chown 1234 /tmp/f && echo chown-ok'
	run_container
	assert_success
	assert_output chown-ok

	make_bundle b2 '.process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}'
	set_cmd 'touch /tmp/f; chown 1234 /tmp/f 2>&1; echo rc=$?'
	run_container
	assert_success
	assert_line rc=1
	assert_output --partial "Operation not permitted"
}

@test "process.capabilities: ambient CAP_NET_BIND_SERVICE survives for a non-root user" {
	make_bundle b '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities = {"bounding": ["CAP_NET_BIND_SERVICE", "CAP_KILL"], "effective": ["CAP_NET_BIND_SERVICE"],
			"permitted": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"], "ambient": ["CAP_NET_BIND_SERVICE"]}'
	set_cmd 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	run_container
	assert_success
	m=$(capmask 10)
	assert_output "$(printf 'CapInh:\t%s\nCapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t%s\nCapAmb:\t%s' "$m" "$m" "$m" "$(capmask 5 10)" "$m")"
}

@test "process.capabilities: a non-root user without ambient caps has empty effective/permitted sets" {
	make_bundle b '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities = {"bounding": ["CAP_CHOWN"], "effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN"]}'
	set_cmd 'grep -E "^Cap(Prm|Eff):" /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'CapPrm:\t0000000000000000\nCapEff:\t0000000000000000')"
}

@test "process.capabilities: an unknown capability name is ignored (runtime-spec 1.1), the known ones apply" {
	make_bundle b '.process.capabilities = {"bounding": ["CAP_KILL", "CAP_NO_SUCH_CAP"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}'
	set_cmd 'grep CapBnd /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'CapBnd:\t%s' "$(capmask 5)")"
}

@test "process.noNewPrivileges true: NoNewPrivs 1; false: 0" {
	make_bundle b '.process.noNewPrivileges = true'
	set_cmd 'grep NoNewPrivs /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'NoNewPrivs:\t1')"

	make_bundle b2 '.process.noNewPrivileges = false'
	set_cmd 'grep NoNewPrivs /proc/self/status'
	run_container
	assert_success
	assert_output "$(printf 'NoNewPrivs:\t0')"
}

@test "process.oomScoreAdj: 500 shows in /proc/self/oom_score_adj" {
	make_bundle b '.process.oomScoreAdj = 500'
	set_cmd 'cat /proc/self/oom_score_adj'
	run_container
	assert_success
	assert_output 500
}

@test "process.oomScoreAdj: the runtime's own score is not changed by it" {
	before=$(cat /proc/self/oom_score_adj)
	make_bundle b '.process.oomScoreAdj = 700'
	set_cmd 'cat /proc/self/oom_score_adj'
	run_container
	assert_success
	assert_output 700
	assert_equal "$(cat /proc/self/oom_score_adj)" "$before"
}

@test "process.ioPriority: IOPRIO_CLASS_IDLE shows in ionice" {
	make_bundle b '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE", "priority": 0}'
	set_cmd 'ionice -p $$'
	run_container
	assert_success
	assert_output --regexp '^idle'
}

@test "process.ioPriority: IOPRIO_CLASS_BE priority 6" {
	make_bundle b '.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 6}'
	set_cmd 'ionice -p $$'
	run_container
	assert_success
	assert_output --regexp '^best-effort: prio 6$'
}

@test "process.scheduler: SCHED_BATCH with nice 5 (policy 3 in /proc/self/stat field 41, nice in field 19)" {
	make_bundle b '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 5}'
	# comm (field 2) is "sh" here, without spaces, so awk's fields are the kernel's
	set_cmd 'awk "{ print \$41, \$19 }" /proc/self/stat'
	run_container
	assert_success
	assert_output "3 5"
}

@test "process.scheduler: SCHED_IDLE (policy 5)" {
	make_bundle b '.process.scheduler = {"policy": "SCHED_IDLE"}'
	set_cmd 'awk "{ print \$41 }" /proc/self/stat'
	run_container
	assert_success
	assert_output 5
}

@test "linux.personality: LINUX32 makes uname -m print i686" {
	make_bundle b '.linux.personality = {"domain": "LINUX32"}'
	set_args uname -m
	run_container
	assert_success
	assert_output i686
}

@test "linux.personality: LINUX keeps x86_64" {
	[ "$(uname -m)" = x86_64 ] || skip "host is $(uname -m), not x86_64"
	make_bundle b '.linux.personality = {"domain": "LINUX"}'
	set_args uname -m
	run_container
	assert_success
	assert_output x86_64
}

@test "linux.sysctl: a namespaced sysctl (net.ipv4.ip_forward in a new netns) is set inside only" {
	host_val=$(cat /proc/sys/net/ipv4/ip_forward)
	make_bundle b '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234"}'
	set_ns network
	set_ns ipc
	set_cmd 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmni'
	run_container
	assert_success
	assert_output "$(printf '1\n1234')"
	assert_equal "$(cat /proc/sys/net/ipv4/ip_forward)" "$host_val"
}

@test "process: the container program leads its own session (setsid)" {
	make_bundle b
	set_ns pid
	set_cmd 'awk "{ print \$6 }" /proc/self/stat; echo $$'
	run_container
	assert_success
	# awk's session id is the shell's pid (1): the runtime called setsid for the container
	assert_output "$(printf '1\n1')"
}
