#!/usr/bin/env bats
# ward check: what the host supports, and whether the configured policy can be enforced.
# Expectations are derived from the host itself (AppArmor enabled or not, controllers in the
# cgroup v2 hierarchy), so the suite says the truth on any host; on the reference host
# (no AppArmor, hybrid cgroups with no controllers in v2) every branch that fails is taken.

load helpers

suite_setup() {
	ward_specific || skip "ward check is ward's own command"
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	HOST_APPARMOR=no
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] &&
		[ -d /sys/kernel/security/apparmor ]; then
		HOST_APPARMOR=yes
	fi
	HOST_MEMORY=no
	grep -qw memory "$CG2/cgroup.controllers" && HOST_MEMORY=yes
	true
}

# ward.json with our lib_dir plus the given keys (a JSON object's inner text).
ward_json() {
	jq -n --arg lib "$LIB" "{lib_dir: \$lib} + {${1:-}}" >"$CONF/ward.json"
}

check() {
	ward --config "$CONF" check "$@"
}

@test "check: default configuration: lists every item, AppArmor and memory as the host has them, exit 0" {
	ward_json
	run check
	assert_success
	assert_line --regexp '^user namespaces: yes \(max_user_namespaces [0-9]+, a child unshared one\)$'
	assert_line --regexp "^AppArmor: $HOST_APPARMOR"
	assert_line --regexp "^cgroup v2: yes \($CG2"
	assert_line --regexp "^cgroup controller memory: $HOST_MEMORY"
	for c in cpu pids io cpuset hugetlb; do
		want=no
		grep -qw "$c" "$CG2/cgroup.controllers" && want=yes
		assert_line --regexp "^cgroup controller $c: $want"
	done
	assert_line --regexp '^seccomp filters: yes'
	assert_line --regexp '^seccomp action SCMP_ACT_ERRNO: yes'
	assert_line --regexp '^seccomp filter flags: .*TSYNC'
	assert_line --regexp '^BPF device programs: yes \(loaded and attached to a test cgroup\)'
	assert_line --regexp "^ID pool: yes \($LIB, 0 allocations\)"
	# a missing item says what it disables
	if [ "$HOST_APPARMOR" = no ]; then
		assert_line --regexp '^AppArmor: no \(.*\); disables AppArmor profiles'
		assert_line --regexp '^warning: AppArmor is not enabled'
	fi
	if [ "$HOST_MEMORY" = no ]; then
		assert_line --regexp '^cgroup controller memory: no \(.*\); disables memory limits'
	fi
	n=$(grep -c '^warning: ' <<<"$output" || true)
	assert_equal "${lines[-1]}" "verdict: the configured policy can be enforced on this host ($n warning$([ "$n" = 1 ] || echo s))"
	# nothing is left behind: the test cgroup is gone, the lib dir was not created
	run ls "$CG2"
	refute_output --partial ward-check.
	[ ! -e "$LIB" ]
}

@test "check: built-in configuration (no config dir) can be enforced" {
	[ ! -e /etc/ward ] || skip "/etc/ward exists on this host"
	run env -u WARD_CONFIG WARD_TEST_TAG="$TAG" "$WARD" --root "$STATE" check
	assert_success
	assert_line 'configuration: built-in'
	assert_line --regexp '^verdict: the configured policy can be enforced'
}

@test "check: idmapped mounts are probed on the filesystems that matter, with their type" {
	ward_json
	run check
	assert_success
	fstype=$(findmnt -n -o FSTYPE -T /tmp)
	target=$(findmnt -n -o TARGET -T /tmp)
	assert_line --regexp "^idmapped mounts: $fstype \($target\) for temporary files /tmp: (yes|no \(.+\))"
	# the state root and the lib dir do not exist yet: probed where they will be created
	assert_line --regexp "^idmapped mounts: [a-z0-9]+ \(.*\) for state root $STATE: "
	assert_line --regexp "^idmapped mounts: [a-z0-9]+ \(.*\) for ID pool $LIB, probed at $BATS_TEST_TMPDIR: "
	# a filesystem without idmap support is reported as such, with the reason, and warned
	run ward --config "$CONF" --root /proc/ward-check-test check
	assert_success
	assert_line --regexp '^idmapped mounts: proc \(/proc\) for state root /proc/ward-check-test, probed at /proc: no \(proc does not support idmapped mounts .*\); disables idmapped rootfs'
	assert_line --regexp '^warning: no idmapped mounts on proc \(/proc/ward-check-test, state root\)'
}

@test "check: apparmor \"required\" without AppArmor on the host: cannot enforce, names AppArmor" {
	ward_json '"apparmor": "required"'
	run check
	if [ "$HOST_APPARMOR" = yes ]; then
		assert_success
		return
	fi
	assert_failure 1
	assert_line --regexp '^cannot enforce: AppArmor is "required" \(.*ward.json\) but not enabled on this host'
	n=$(grep -c '^warning: ' <<<"$output" || true)
	assert_equal "${lines[-1]}" "verdict: the configured policy CANNOT be enforced on this host (1 problem, $n warning$([ "$n" = 1 ] || echo s))"
}

@test "check: a tenant's memory budget without the memory controller: cannot enforce, names tenant and controller" {
	ward_json
	echo '{"cgroup": {"memory": {"limit": 1073741824}}}' >"$CONF/tenants.d/team-a.json"
	run check
	if [ "$HOST_MEMORY" = yes ]; then
		assert_success
		return
	fi
	assert_failure 1
	assert_line --regexp '^cannot enforce: tenant "team-a" \(tenants.d/team-a.json\): budget cgroup.memory.limit needs the memory controller'
	[[ "${lines[-1]}" == "verdict: the configured policy CANNOT be enforced on this host (1 problem"* ]]
	# a budget equal to the kernel default needs no controller
	echo '{"cgroup": {"pids": {"limit": 0}}}' >"$CONF/tenants.d/team-a.json"
	run check
	assert_success
}

@test "check: missing_controllers \"warn\": the budget becomes a warning, exit 0" {
	ward_json '"missing_controllers": "warn"'
	echo '{"cgroup": {"memory": {"limit": 1073741824}}}' >"$CONF/tenants.d/team-a.json"
	run check
	assert_success
	if [ "$HOST_MEMORY" = no ]; then
		assert_line --regexp '^warning: tenant "team-a" \(tenants.d/team-a.json\): budget cgroup.memory.limit is not applied: the memory controller is missing'
		refute_line --regexp '^cannot enforce'
	fi
	[[ "${lines[-1]}" == "verdict: the configured policy can be enforced on this host ("* ]]
}

@test "check: without the cpu controller in cgroup v2, the first warning says every Kubernetes pod is refused, and what to set" {
	ward_json
	run check
	assert_success
	if grep -qw cpu "$CG2/cgroup.controllers"; then
		refute_line --partial 'Kubernetes:'
		return
	fi
	# on a hybrid host: the first warning, before the list of missing controllers
	first=$(printf '%s\n' "${lines[@]}" | grep -m1 '^warning: ')
	[[ "$first" == 'warning: Kubernetes: every pod is refused on this host: containerd'"'"'s CRI plugin gives each pod sandbox cpu.shares 2, which needs the cpu controller'* ]] || fail "first warning: $first"
	[[ "$first" == *'set "missing_controllers": "warn" in ward.json'* && "$first" == *'systemd.unified_cgroup_hierarchy=1'* ]] || fail "$first"
	ward_json '"missing_controllers": "warn"'
	run check
	assert_success
	first=$(printf '%s\n' "${lines[@]}" | grep -m1 '^warning: ')
	[[ "$first" == 'warning: Kubernetes: pods run, but the limits they ask for that need the missing cgroup v2 controllers ('*'cpu'*') are not enforced'* ]] || fail "first warning: $first"
	run check --json
	assert_success
	jq -e '.warnings[0] | startswith("Kubernetes: pods run")' <<<"$output" >/dev/null || fail "$output"
}

@test "check: a corrupt ID pool cannot hand out IDs: cannot enforce, names the file" {
	ward_json
	mkdir -p "$LIB"
	echo '{"version": 1, "allocations": [' >"$LIB/idpool.json"
	run check
	assert_failure 1
	assert_line --regexp "^ID pool: no \($LIB/idpool.json is corrupt: line [0-9]+: "
	assert_line --regexp "^cannot enforce: ID pool: $LIB/idpool.json is corrupt"
	# check never rewrites it
	assert_equal "$(cat "$LIB/idpool.json")" '{"version": 1, "allocations": ['
}

@test "check: a corrupt or misnamed file of idpool2.d: cannot enforce, names the file, left as it is" {
	ward_json
	mkdir -p "$LIB/idpool2.d"
	echo '{"version": 2, "allocations": "idpool2.d"}' >"$LIB/idpool.json"
	echo '{"owner":' >"$LIB/idpool2.d/0"
	run check
	assert_failure 1
	assert_line --regexp "^cannot enforce: ID pool: .*idpool2.d/0 is corrupt"
	assert_equal "$(cat "$LIB/idpool2.d/0")" '{"owner":'
	rm "$LIB/idpool2.d/0"
	echo '{"owner": "pod:x/y", "start": 524288, "size": 65536, "users": []}' >"$LIB/idpool2.d/web"
	run check
	assert_failure 1
	assert_line --regexp "^cannot enforce: ID pool: .*idpool2.d/web"
	[ -e "$LIB/idpool2.d/web" ] || fail "check removed it"
}

@test "check: idpool2.d's map of this boot compared with the files: a file it does not hold cannot enforce; a first line cut short is noted" {
	ward_json
	mkdir -p "$LIB/idpool2.d"
	echo '{"version": 2, "allocations": "idpool2.d"}' >"$LIB/idpool.json"
	map_header=$(printf 'ward-idpool-map 1 boot=%-40s' "$(cat /proc/sys/kernel/random/boot_id)")
	echo '{"owner":"pod:x/y","start":589824,"size":65536,"users":["c1"]}' >"$LIB/idpool2.d/1"
	printf '%s\n%s\n%s\n' "$map_header" '0000000000 0000000000 -00000000' \
		'0000589824 0000065536 p'"$(printf '%08x' 0)" >"$LIB/idpool2.d/map"
	# record 1's key is not pod:x/y's: the map does not hold the file's allocation
	run check
	assert_failure 1
	assert_line --regexp "^cannot enforce: ID pool: $LIB/idpool2.d/map disagrees with idpool2.d/1: the file holds \"pod:x/y\" \[589824, 655360\), record 1 says \[589824, 655360\) p00000000: a new allocation could be given these IDs \(remove the map"
	# the map removed: no map of this boot, nothing to compare (the next change builds it)
	rm "$LIB/idpool2.d/map"
	printf '{"owner":"pod:a/b","sta' >"$LIB/idpool2.d/0"
	run check
	assert_success
	assert_line "ID pool: yes ($LIB, 1 allocation)"
	# a first line cut short under a free record of this boot's map: noted, not an error
	printf '%s\n%s\n' "$map_header" '0000000000 0000000000 -00000000' >"$LIB/idpool2.d/map"
	rm "$LIB/idpool2.d/1"
	run check
	assert_success
	assert_line "ID pool: yes ($LIB, 0 allocations; idpool2.d/0: a first line cut short under a free record (never committed; the next allocation there empties it))"
}

@test "check: a corrupt file of the older idpool.d: cannot enforce, names the file, left as it is" {
	ward_json
	mkdir -p "$LIB/idpool.d"
	echo '{"owner":' >"$LIB/idpool.d/524288"
	run check
	assert_failure 1
	assert_line --regexp "^cannot enforce: ID pool: .*idpool.d/524288"
	assert_equal "$(cat "$LIB/idpool.d/524288")" '{"owner":'
}

@test "check --json: one object with every field; enforceable follows the exit status" {
	ward_json
	run check --json
	assert_success
	jq -e . <<<"$output" >/dev/null
	run jq -e --arg aa "$HOST_APPARMOR" --arg mem "$HOST_MEMORY" --arg cg2 "$CG2" '
		(.kernel | type == "string") and
		.user_namespaces.ok == true and (.user_namespaces.max_user_namespaces > 0) and
		(.idmap | type == "array" and length >= 3) and
		(.idmap[] | select(.path == "/tmp") | (.idmap | type == "boolean") and (.fstype | type == "string")) and
		.seccomp.ok == true and .seccomp.actions.SCMP_ACT_ERRNO == true and
		(.seccomp.flags | has("SECCOMP_FILTER_FLAG_TSYNC")) and
		.apparmor.ok == ($aa == "yes") and
		.cgroup.ok == true and .cgroup.root == $cg2 and
		.cgroup.controllers.memory == ($mem == "yes") and
		(.cgroup.controllers | keys == ["cpu", "cpuset", "hugetlb", "io", "memory", "pids"]) and
		(.cgroup.freeze | type == "boolean") and (.cgroup.kill | type == "boolean") and
		.bpf_devices.ok == true and
		.id_pool.ok == true and .id_pool.allocations == 0 and
		(.warnings | type == "array") and .errors == [] and .enforceable == true' <<<"$output"
	assert_success

	ward_json '"apparmor": "required"'
	echo '{"cgroup": {"memory": {"limit": 1073741824}}}' >"$CONF/tenants.d/team-a.json"
	run check --json
	if [ "$HOST_APPARMOR" = no ] || [ "$HOST_MEMORY" = no ]; then
		assert_failure 1
		run jq -e '.enforceable == false and (.errors | length >= 1)' <<<"$output"
		assert_success
	else
		assert_success
	fi
}

@test "check: usage errors" {
	run ward check --bogus
	assert_failure 1
	run ward check extra
	assert_failure 1
	assert_output --partial 'unexpected argument "extra"'
	run ward check --help
	assert_success
	assert_output --partial 'usage: ward check [--json]'
}

@test "check: a missing audit hook is no error (ward audits in-process); a missing GPU hook while a tenant has GPUs cannot enforce" {
	ward_json '"audit_hook": "/nonexistent/ward-audit-hook"'
	run check
	assert_line --partial "audit hook: no (/nonexistent/ward-audit-hook)"
	refute_line --partial "cannot enforce: the audit hook"
	ward_json '"gpu": {"hook": "/nonexistent/ward-gpu-hook"}'
	run check
	assert_line --partial "GPU hook: no (/nonexistent/ward-gpu-hook)"
	refute_line --partial "cannot enforce: tenant"
	echo '{"gpus": ["0"]}' >"$CONF/tenants.d/g.json"
	run check --json
	[ "$status" -eq 1 ]
	jq -e '.errors[] | select(test("tenant \"g\" .* GPU hook /nonexistent/ward-gpu-hook is missing"))' <<<"$output" >/dev/null || fail "$output"
	[ "$(jq -r .hooks.gpu_ok <<<"$output")" = false ]
}
