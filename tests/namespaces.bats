#!/usr/bin/env bats
# linux.namespaces: new ones, joined ones (by path), and what each one shows inside.

load helpers

# ns_inside NSNAME...: run the container printing `readlink /proc/self/ns/X` for each.
ns_inside() {
	local script="" n
	for n in "$@"; do script="$script readlink /proc/self/ns/$n;"; done
	set_cmd "$script"
	run_container
	assert_success
}

# A new namespace of TYPE (config name) is a different namespace (NSNAME in /proc) from the host's.
check_new_ns() {
	local type=$1 nsname=$2
	make_bundle b
	set_ns "$type"
	ns_inside "$nsname"
	[[ "$output" == "$nsname:["* ]] || fail "unexpected readlink output: $output"
	[ "$output" != "$(host_ns "$nsname")" ] || fail "$type namespace is the host's: $output"
}

@test "namespaces: new pid namespace differs from the host's" {
	check_new_ns pid pid
}

@test "namespaces: new network namespace differs from the host's" {
	check_new_ns network net
}

@test "namespaces: new ipc namespace differs from the host's" {
	check_new_ns ipc ipc
}

@test "namespaces: new uts namespace differs from the host's" {
	check_new_ns uts uts
}

@test "namespaces: new mount namespace differs from the host's" {
	check_new_ns mount mnt
}

@test "namespaces: new cgroup namespace differs from the host's and shows the container's cgroup as /" {
	check_new_ns cgroup cgroup
	set_cmd 'cat /proc/self/cgroup'
	run_container
	assert_success
	# every hierarchy line ends in ":/": the container's cgroup is its namespace root
	run grep -v ':/$' <<<"$output"
	assert_failure
}

@test "namespaces: new user namespace differs from the host's" {
	make_bundle b
	userns_map
	ns_inside user
	[[ "$output" == "user:["* ]]
	[ "$output" != "$(host_ns user)" ]
}

@test "namespaces: new time namespace differs from the host's" {
	make_bundle b
	set_ns time
	ns_inside time
	[[ "$output" == "time:["* ]]
	[ "$output" != "$(host_ns time)" ]
}

@test "namespaces: without a network/ipc/uts entry the container shares the host's" {
	make_bundle b
	drop_ns network
	drop_ns ipc
	drop_ns uts
	config_edit 'del(.hostname)'
	ns_inside net ipc uts
	assert_equal "$output" "$(printf '%s\n%s\n%s' "$(host_ns net)" "$(host_ns ipc)" "$(host_ns uts)")"
}

# runtime-spec config-linux.md: "If a namespace type is not specified in the namespaces
# array, the container MUST inherit the runtime namespace of that type."
@test "namespaces: without a cgroup entry the container shares the host's cgroup namespace" {
	make_bundle b
	drop_ns cgroup
	ns_inside cgroup
	assert_output "$(host_ns cgroup)"
}

@test "namespaces: without a time entry the container shares the host's time namespace" {
	make_bundle b
	drop_ns time
	ns_inside time
	assert_output "$(host_ns time)"
}

@test "namespaces: join a network namespace by path (a bind-mounted holder)" {
	holder="$BATS_TEST_TMPDIR/netns-holder"
	touch "$holder"
	unshare --net="$holder" true
	on_teardown umount "$holder"
	make_bundle b
	set_ns network "$holder"
	ns_inside net
	assert_output "net:[$(stat -L -c %i "$holder")]"
	[ "$output" != "$(host_ns net)" ]
}

@test "namespaces: a joined network namespace keeps its configuration (an address set in the holder is visible)" {
	holder="$BATS_TEST_TMPDIR/netns-holder"
	touch "$holder"
	unshare --net="$holder" true
	on_teardown umount "$holder"
	nsenter --net="$holder" ip addr add 10.99.0.1/32 dev lo
	make_bundle b
	set_ns network "$holder"
	set_cmd 'ip -o addr show lo'
	run_container
	assert_success
	assert_output --partial "inet 10.99.0.1/32"
}

@test "namespaces: join another container's uts and ipc namespaces by /proc/PID/ns path" {
	make_bundle holder '.hostname = "holder-host"'
	set_ns uts
	set_ns ipc
	set_args sleep 1000
	h=$(cid holder)
	start_container "$h"
	hpid=$(init_pid "$h")

	make_bundle joiner 'del(.hostname)'
	set_ns uts "/proc/$hpid/ns/uts"
	set_ns ipc "/proc/$hpid/ns/ipc"
	set_cmd 'readlink /proc/self/ns/uts; readlink /proc/self/ns/ipc; hostname'
	run_container
	assert_success
	assert_equal "$output" "$(printf '%s\n%s\nholder-host' "$(readlink "/proc/$hpid/ns/uts")" "$(readlink "/proc/$hpid/ns/ipc")")"
}

@test "namespaces: join another container's pid namespace: its processes are visible" {
	make_bundle holder
	set_args sleep 4242
	h=$(cid holder)
	start_container "$h"
	hpid=$(init_pid "$h")

	make_bundle joiner
	set_ns pid "/proc/$hpid/ns/pid"
	set_cmd 'readlink /proc/self/ns/pid; ps -o pid,args | grep "sleep 4242" | grep -v grep'
	run_container
	assert_success
	assert_line --index 0 "$(readlink "/proc/$hpid/ns/pid")"
	assert_line --index 1 --regexp '^ *1 +sleep 4242$'
}

@test "namespaces: lo is UP in a new network namespace" {
	make_bundle b
	set_ns network
	set_cmd 'ip -o link show lo; cat /sys/class/net/lo/flags'
	run_container
	assert_success
	assert_line --index 0 --regexp '<[^>]*\bUP\b[^>]*>'
	# IFF_UP is bit 0 of the interface flags
	flags=${lines[1]}
	(((flags & 1) == 1)) || fail "lo flags $flags lack IFF_UP"
}

@test "namespaces: a new network namespace holds only lo" {
	make_bundle b
	set_ns network
	set_cmd 'ls /sys/class/net'
	run_container
	assert_success
	assert_output lo
}

@test "namespaces: hostname and domainname are set in the new uts namespace, the host's are unchanged" {
	host_hostname=$(cat /proc/sys/kernel/hostname)
	host_domain=$(cat /proc/sys/kernel/domainname)
	make_bundle b '.hostname = "ward-box" | .domainname = "ward.example"'
	set_ns uts
	set_cmd 'hostname; cat /proc/sys/kernel/domainname'
	run_container
	assert_success
	assert_output "$(printf 'ward-box\nward.example')"
	assert_equal "$(cat /proc/sys/kernel/hostname)" "$host_hostname"
	assert_equal "$(cat /proc/sys/kernel/domainname)" "$host_domain"
}

@test "namespaces: in a new pid namespace the container program is pid 1 and sees only its own processes" {
	make_bundle b
	set_ns pid
	# the glob is expanded by the shell itself (no child exists yet): only pid 1 is there
	set_cmd 'echo $$; echo /proc/[0-9]*'
	run_container
	assert_success
	assert_output "$(printf '1\n/proc/1')"
}

@test "namespaces: user namespace: uid_map and gid_map inside show the mapping" {
	make_bundle b
	userns_map
	set_cmd 'cat /proc/self/uid_map; cat /proc/self/gid_map'
	run_container
	assert_success
	assert_equal "$(tr -s ' ' <<<"$output" | sed 's/^ //')" "$(printf '0 100000 65536\n0 100000 65536')"
}

@test "namespaces: user namespace: container root writes files owned by the mapped host uid" {
	make_bundle b
	userns_map
	share_dir
	set_cmd 'id -u; touch /shared/written-by-container'
	run_container
	assert_success
	assert_output 0
	assert_equal "$(stat -c %u:%g "$SHARED/written-by-container")" 100000:100000
}

@test "namespaces: user namespace: an exec'd process joins it (same uid_map, uid 0 inside)" {
	make_bundle b
	userns_map
	set_args sleep 1000
	id=$(cid u)
	start_container "$id"
	run --separate-stderr ward exec "$id" sh -c 'readlink /proc/self/ns/user; cat /proc/self/uid_map; id -u'
	assert_success
	assert_line --index 0 "$(readlink "/proc/$(init_pid "$id")/ns/user")"
	assert_equal "$(tr -s ' ' <<<"${lines[1]}" | sed 's/^ //')" "0 100000 65536"
	assert_line --index 2 0
}

@test "namespaces: user namespace: container root has no power over host-root files" {
	make_bundle b
	userns_map
	share_dir
	echo secret >"$SHARED/root-only"
	chmod 0600 "$SHARED/root-only"
	set_cmd 'cat /shared/root-only; echo rc=$?'
	run_container
	assert_success
	assert_output --partial "rc=1"
	refute_output --partial secret
}

@test "namespaces: time namespace: boottime offset shows in /proc/uptime" {
	make_bundle b '.linux.timeOffsets = {"boottime": {"secs": 864000, "nanosecs": 0}, "monotonic": {"secs": 86400, "nanosecs": 0}}'
	set_ns time
	set_cmd 'cut -d" " -f1 /proc/uptime'
	host_before=$(cut -d' ' -f1 /proc/uptime)
	run_container
	host_after=$(cut -d' ' -f1 /proc/uptime)
	assert_success
	inside=${output%%.*}
	[ "$inside" -ge $((${host_before%%.*} + 864000)) ] && [ "$inside" -le $((${host_after%%.*} + 864001)) ] ||
		fail "uptime inside $output, host $host_before..$host_after, expected +864000"
}

@test "namespaces: time namespace without offsets: uptime equals the host's" {
	make_bundle b
	set_ns time
	set_cmd 'cut -d" " -f1 /proc/uptime'
	host_before=$(cut -d' ' -f1 /proc/uptime)
	run_container
	assert_success
	inside=${output%%.*}
	[ "$inside" -ge "${host_before%%.*}" ]
	[ "$inside" -le $((${host_before%%.*} + 30)) ]
}

@test "namespaces: joining another user namespace's ipc namespace is refused naming it, its owner and the fix; nothing is left" {
	make_bundle a
	userns_map
	set_args sleep 1000
	# untagged, so that assert_nothing_left below looks at b's processes only
	config_edit '.process.env |= map(select(startswith("WARD_TEST_TAG=") | not))'
	a=$(cid a)
	run_detached "$a"
	pa=$(init_pid "$a")
	# b has a user namespace of its own: a's ipc namespace (owned by a's) is not b's
	make_bundle b
	userns_map
	config_edit '.linux.uidMappings[0].hostID = 300000 | .linux.gidMappings[0].hostID = 300000'
	set_ns ipc "/proc/$pa/ns/ipc"
	id=$(cid b)
	ward_capture run -b "$BUNDLE" "$id"
	assert_failure
	if ward_specific; then
		assert_one_line "$stderr"
		# refused before anything is made (its /dev/mqueue could not be mounted there)
		[[ "$stderr" == *"tenant \"default\": namespaces: "*"(/dev/mqueue, type mqueue): the ipc namespace /proc/$pa/ns/ipc joined by path belongs to a user namespace that is not the container's"*"join the user namespace that owns it"* ]] ||
			fail "no hint: $stderr"
	fi
	assert_nothing_left "$id"
	# joining a's user namespace as well is the fix
	make_bundle c
	set_ns ipc "/proc/$pa/ns/ipc"
	set_ns user "/proc/$pa/ns/user"
	config_edit 'del(.linux.uidMappings, .linux.gidMappings)'
	run_container
	assert_success
}

@test "namespaces: a user namespace without a cgroup namespace gets its own cgroup bound at a cgroup mount (runc's fallback), read-only as asked" {
	if ! ward_specific && [ "$CG2" != /sys/fs/cgroup ]; then
		skip "on this hybrid host runc mounts the cgroup v1 hierarchies at /sys/fs/cgroup"
	fi
	make_bundle b
	userns_map
	drop_ns cgroup
	set_cmd 'ls /sys/fs/cgroup/cgroup.procs; grep " /sys/fs/cgroup " /proc/self/mountinfo; touch /sys/fs/cgroup/x 2>/dev/null && echo WROTE; true'
	run_container
	assert_success
	assert_line /sys/fs/cgroup/cgroup.procs
	refute_line WROTE
	# the container's own cgroup (ward's layout: <v2>/ward/ID), read-only
	if ward_specific; then
		assert_line --regexp " /ward/$ID /sys/fs/cgroup ro,.* - cgroup2 "
	fi
}
