#!/usr/bin/env bats
# cgroup placement (docs/cli-contract.md: <v2>/ward/<id>, absolute and relative cgroupsPath)
# and the device controller (linux.resources.devices).

load helpers

# The cgroup v2 path of a process ("/ward/ID"), from the host's view.
v2_path() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

@test "cgroups: the container's processes are in <v2>/ward/<id> by default; the dir goes with delete" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	pid=$(init_pid "$id")
	path=$(v2_path "$pid")
	[[ "$path" == */"$id" ]] || fail "init is in $path"
	if ward_specific; then
		assert_equal "$path" "/ward/$id"
		grep -qx "$pid" "$CG2/ward/$id/cgroup.procs"
	fi
	ward delete -f "$id"
	[ ! -d "$CG2$path" ] || fail "$CG2$path left after delete"
}

@test "cgroups: an absolute cgroupsPath places the container at <v2><cgroupsPath>" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	parent="ward-test-abs-$$-$BATS_TEST_NUMBER"
	on_teardown rmdir "$CG2/$parent"
	config_edit '.linux.cgroupsPath = $p' --arg p "/$parent/$id"
	start_container "$id"
	pid=$(init_pid "$id")
	assert_equal "$(v2_path "$pid")" "/$parent/$id"
	grep -qx "$pid" "$CG2/$parent/$id/cgroup.procs"
	ward delete -f "$id"
	[ ! -d "$CG2/$parent/$id" ]
}

@test "cgroups: a relative cgroupsPath is placed under <v2>/ward/" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	parent="tenant-$$-$BATS_TEST_NUMBER"
	on_teardown rmdir "$CG2/ward/$parent" "$CG2/$parent"
	config_edit '.linux.cgroupsPath = $p' --arg p "$parent/$id"
	start_container "$id"
	pid=$(init_pid "$id")
	path=$(v2_path "$pid")
	[[ "$path" == *"/$parent/$id" ]] || fail "init is in $path"
	if ward_specific; then
		assert_equal "$path" "/ward/$parent/$id"
	fi
	ward delete -f "$id"
	[ ! -d "$CG2$path" ]
}

@test "cgroups: an exec'd process joins the container's cgroup" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	ward exec -d --pid-file "$BATS_TEST_TMPDIR/e.pid" "$id" sleep 999 </dev/null >/dev/null 2>&1
	assert_equal "$(v2_path "$(cat "$BATS_TEST_TMPDIR/e.pid")")" "$(v2_path "$(init_pid "$id")")"
}

@test "cgroups: a cgroupsPath with .. cannot escape the v2 hierarchy or the ward subtree" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	config_edit '.linux.cgroupsPath = $p' --arg p "../../../../$id"
	ward_capture create -b "$BUNDLE" "$id"
	if [ "$status" -eq 0 ]; then
		pid=$(init_pid "$id")
		path=$(v2_path "$pid")
		[ -d "$CG2$path" ] || fail "container cgroup $path is not under $CG2"
		[[ "$path" != *..* ]] || fail "cgroup path kept ..: $path"
		if ward_specific; then
			[[ "$path" == /ward/* ]] || fail "a relative cgroupsPath escaped <v2>/ward: $path"
		fi
	fi
	# nothing was created above the v2 mount
	[ ! -e "$(dirname "$CG2")/$id" ]
}

# Device controller ------------------------------------------------------------------------

@test "devices: a linux.devices node not allowed by linux.resources.devices cannot be opened (deny-all default)" {
	make_bundle b '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}]'
	# a failed redirection on `exec` ends the shell: open in a subshell
	set_cmd 'if (exec 4<>/dev/fuse) 2>/dev/null; then echo fuse-opened; else echo fuse-denied; fi; echo x > /dev/null && echo null-ok'
	run_container
	assert_success
	assert_output "$(printf 'fuse-denied\nnull-ok')"
}

@test "devices: an allow rule for c 10:229 makes the node usable" {
	make_bundle b '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rwm"}]'
	set_cmd 'if (exec 4<>/dev/fuse); then echo fuse-opened; fi'
	run_container
	assert_success
	assert_output fuse-opened
}

# /dev/kmsg (c 1:11) is readable by root on this host and is not in any default allow list:
# with CAP_MKNOD and CAP_SYSLOG the device controller is the only thing in the way.
@test "devices: with CAP_MKNOD, a /dev/kmsg node (c 1:11) made inside cannot be opened (deny-all default)" {
	timeout 2 dd if=/dev/kmsg bs=8192 count=1 2>/dev/null | grep -q . ||
		skip "the host's own root cannot read /dev/kmsg here"
	make_bundle b '.process.capabilities = {"bounding": ["CAP_MKNOD", "CAP_SYSLOG", "CAP_DAC_OVERRIDE"],
		"effective": ["CAP_MKNOD", "CAP_SYSLOG", "CAP_DAC_OVERRIDE"], "permitted": ["CAP_MKNOD", "CAP_SYSLOG", "CAP_DAC_OVERRIDE"]}
		| .linux.resources.devices = [{"allow": false, "access": "rwm"}]'
	set_cmd 'mknod /tmp/kmsg c 1 11 && echo made; timeout 2 dd if=/tmp/kmsg bs=8192 count=1 2>/dev/null | wc -c'
	run_container
	assert_success
	# mknod itself may be refused too; reading must give nothing
	assert_line --index "$((${#lines[@]} - 1))" 0
}

@test "devices: a deny rule for c 1:11 stops /dev/kmsg even with an allow-all rule before it" {
	timeout 2 dd if=/dev/kmsg bs=8192 count=1 2>/dev/null | grep -q . ||
		skip "the host's own root cannot read /dev/kmsg here"
	make_bundle b '.process.capabilities = {"bounding": ["CAP_MKNOD", "CAP_SYSLOG"], "effective": ["CAP_MKNOD", "CAP_SYSLOG"],
		"permitted": ["CAP_MKNOD", "CAP_SYSLOG"]}
		| .linux.resources.devices = [{"allow": true, "access": "rwm"}, {"allow": false, "type": "c", "major": 1, "minor": 11, "access": "rwm"}]'
	set_cmd 'mknod /tmp/kmsg c 1 11; timeout 2 dd if=/tmp/kmsg bs=8192 count=1 2>/dev/null | wc -c; echo x > /dev/null && echo null-ok'
	run_container
	assert_success
	assert_output "$(printf '0\nnull-ok')"
}

@test "cgroups: delete --force removes cgroups the workload made inside its own" {
	make_bundle b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	cg=$CG2$(awk -F: '$1 == 0 { print $3 }' "/proc/$(ward state "$id" | jq -r .pid)/cgroup")
	[ -d "$cg" ] || fail "no cgroup $cg"
	mkdir -p "$cg/sub/deeper"
	ward exec -d "$id" sleep 1000
	pid=$(ward ps --format json "$id" | jq -r '.[]' | while read -r p; do
		[ "$(awk '{print $2}' "/proc/$p/stat" 2>/dev/null)" = "(sleep)" ] && echo "$p"
	done | tail -n 1)
	echo "$pid" >"$cg/sub/deeper/cgroup.procs"
	run ward delete --force "$id"
	assert_success
	[ ! -d "$cg" ] || fail "cgroup left: $(find "$cg" -type d)"
}
