#!/usr/bin/env bats
# AppArmor on a host without it (the VM suite tests/vm/apparmor.bats covers a kernel with
# AppArmor): a request for a profile is refused with an error that says why, never run
# unconfined, and nothing is left; the ward-default profile ward embeds is the checked-in
# file and compiles.

load helpers

suite_setup() {
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
		skip "AppArmor is enabled on this host (tests/vm/apparmor.bats covers that case)"
	fi
}

# A config dir whose ward.json says apparmor ARG1 (required|optional); WARD_CONFIG points at it.
aa_config() {
	local cfg="$BATS_TEST_TMPDIR/config"
	mkdir -p "$cfg/tenants.d"
	jq -n --arg lib "$BATS_TEST_TMPDIR/lib" --arg need "$1" '{lib_dir: $lib, apparmor: $need}' \
		>"$cfg/ward.json"
	echo '{"apparmor": "ward-default", "allow_pod_apparmor": true}' >"$cfg/tenants.d/default.json"
	export WARD_CONFIG="$cfg"
}

@test "apparmor: ward.json apparmor required on a host without AppArmor refuses create; nothing is left" {
	ward_specific || skip "ward's configuration"
	aa_config required
	make_bundle b '.process.apparmorProfile = "ward-default"'
	id=$(cid req)
	ward_capture run -b "$BUNDLE" "$id"
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == *AppArmor* ]] || fail "the error does not say AppArmor: $stderr"
	assert_nothing_left "$id"
}

@test "apparmor: exec asking for a profile is refused with the reason; unconfined needs nothing; the container runs on" {
	make_bundle b
	set_args sleep 1000
	id=$(cid ex)
	run_detached "$id"
	wait_status "$id" running

	ward_capture exec --apparmor ward-default "$id" true
	assert_failure
	if ward_specific; then
		assert_one_line "$stderr"
		[[ "$stderr" == *'process.apparmorProfile "ward-default": AppArmor is not enabled on this host'* ]] ||
			fail "unexpected error: $stderr"
	fi

	printf '%s' '{"args":["true"],"cwd":"/","apparmorProfile":"tenant-x"}' >"$BATS_TEST_TMPDIR/p.json"
	ward_capture exec --process "$BATS_TEST_TMPDIR/p.json" "$id"
	assert_failure
	if ward_specific; then
		[[ "$stderr" == *'process.apparmorProfile "tenant-x": AppArmor is not enabled on this host'* ]] ||
			fail "unexpected error: $stderr"
	fi

	# "unconfined" is what the process is anyway: nothing to apply, it runs.
	ward_capture exec --apparmor unconfined "$id" echo ran
	assert_success
	assert_output ran

	# SELinux labels stay refused.
	ward_capture exec --process-label system_u:system_r:container_t:s0 "$id" true
	assert_failure
	[ "$(status_of "$id")" = running ]
	# No process of a refused exec is left in the container.
	run ward ps "$id"
	refute_output --partial true
}

@test "apparmor: the embedded ward-default is runtime/apparmor/ward-default, and it compiles" {
	ward_specific || skip "ward's embedded profile"
	src="$WARD_REPO/runtime/apparmor/ward-default"
	perl -0777 -e 'open(my $b, "<:raw", $ARGV[0]) or die; open(my $p, "<:raw", $ARGV[1]) or die;
		local $/; my ($bin, $prof) = (<$b>, <$p>); exit(index($bin, $prof) < 0 ? 1 : 0)' \
		"$WARD" "$src" || fail "$WARD does not embed $src (rebuild)"
	command -v apparmor_parser >/dev/null || skip "apparmor_parser is not installed (package apparmor)"
	# -Q: compile only (no kernel here), -S: the binary policy to stdout
	run --separate-stderr apparmor_parser -Q -K -S "$src"
	assert_success
	[ "${#output}" -gt 1000 ] || fail "compiled policy is only ${#output} bytes"
	# no warnings beyond the cache notice of a kernel without AppArmor
	run grep -v -e '^Cache read/write disabled' <<<"$stderr"
	assert_output ""
}

@test "apparmor: the warning that the host has no AppArmor is said once per boot (and with --debug), not on every create; ward check says it" {
	ward_specific || skip "ward's configuration and warning"
	aa_config optional
	make_bundle b
	# An earlier ward of this boot may have said it already: the first create may warn,
	# the ones after it never.
	for n in 1 2; do
		id=$(cid "c$n")
		ward_capture run -b "$BUNDLE" "$id"
		assert_success
	done
	assert_equal "$stderr" ""
	# --debug says it every time
	id=$(cid dbg)
	ward_capture --debug run -b "$BUNDLE" "$id"
	assert_success
	[[ "$stderr" == *'warning: AppArmor is not enabled on this host: running without the "ward-default" profile'* ]] ||
		fail "no warning under --debug: $stderr"
	# ward check reports it, every time
	run ward check
	assert_line --regexp '^warning: AppArmor is not enabled'
}
