#!/usr/bin/env bats
load vm-helpers
suite_setup() { skip_unless_vm; }
st() { echo "$(( (${EPOCHREALTIME/./} - T0) / 1000 )) ms: $*" >&3; }

@test "debug: json" {
	make_bundle b
	set_args a "b c" "q\"x" "back\\s" $'nl\nx' $'ctl\x01' "-n"
	run jq -c .process.args "$BUNDLE/config.json"
	echo "$output" >&3
	assert_output "$(jq -nc --args '$ARGS.positional' a "b c" "q\"x" "back\\s" $'nl\nx' $'ctl\x01' "-n")"
}
@test "debug: phases" {
	T0=${EPOCHREALTIME/./}
	st start
	make_bundle b
	st make_bundle
	set_args true
	st set_args
	run_container
	st run_container
	id=$(cid x)
	set_args sleep 100
	run_detached "$id"
	st run_detached
	wait_status "$id" running
	st wait_status
	cg=$(container_cgroup "$id")
	st container_cgroup
	ward delete -f "$id"
	st delete
	assert_nothing_left "$id"
	st assert_nothing_left
}
