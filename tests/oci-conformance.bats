#!/usr/bin/env bats
# OCI runtime behaviours that opencontainers/runtime-tools' validation suite checks (hooks'
# stdin state, --pid-file, kill, state, start, delete, namespaces by path), written for
# this project. Each scenario runs under runc first (the baseline, when runc is installed)
# and then under ward, in the same test: where runc passes, ward must pass too. ward runs
# under the trusted tenant (tests/fixtures/config-trusted), as runc semantics need; the
# refusals at the end are ward's own and name the tenant and the rule.

load helpers

RUNC_BIN=$(command -v runc || true)

# check CMD...: run CMD; on failure say which check failed (scenarios run with errexit off,
# under `||`, so every step returns its status explicitly).
check() {
	"$@" || {
		echo "check failed ($(basename "$WARD")): $*" >&2
		return 1
	}
}

# refused CMD...: CMD must fail.
refused() {
	if "$@"; then
		echo "expected a failure ($(basename "$WARD")): $*" >&2
		return 1
	fi
}

# conformance SCENARIO: SCENARIO under runc (its own state root; its containers deleted
# after), then under ward. Fails when ward fails; says so when runc passes and ward does not.
conformance() {
	local fn=$1 runc_rc=skipped ward_rc=0 id
	if [ -n "$RUNC_BIN" ]; then
		runc_rc=0
		(
			WARD=$RUNC_BIN WARD_IMPL=runc STATE="$BATS_TEST_TMPDIR/state-runc"
			mkdir -p "$STATE"
			"$fn"
		) || runc_rc=$?
		for id in $("$RUNC_BIN" --root "$BATS_TEST_TMPDIR/state-runc" list -q 2>/dev/null); do
			"$RUNC_BIN" --root "$BATS_TEST_TMPDIR/state-runc" delete -f "$id" >/dev/null 2>&1 || true
		done
	fi
	("$fn") || ward_rc=$?
	echo "# $fn: runc $runc_rc, ward $ward_rc" >&3
	[ "$ward_rc" = 0 ] || fail "$fn: ward fails (runc: $runc_rc)"
}

# uts_holder NAME [JQ]: a running container (of NAME's bundle, edited by JQ) with a new uts
# namespace named "holder"; sets HPID to its init's pid.
uts_holder() {
	make_bundle "$1" ".hostname = \"holder\"${2:+ | $2}" || return 1
	set_ns uts || return 1
	set_args sleep 1000 || return 1
	start_container "$(cid "$1")" || return 1
	HPID=$(init_pid "$(tail -n1 "$BATS_TEST_TMPDIR/.ids")")
}

# create_refused PATTERN: `ward create` of $BUNDLE fails with a one-line error matching the
# glob PATTERN and leaves nothing behind (with HOLDER set: no state dir; the holder runs on).
create_refused() {
	local id
	id=$(cid refused)
	ward_capture create -b "$BUNDLE" "$id"
	assert_failure
	assert_one_line "$stderr"
	[[ "$stderr" == $1 ]] || fail "stderr: $stderr"
	if [ -n "${HOLDER:-}" ]; then
		[ ! -e "$STATE/$id" ] || fail "state dir $STATE/$id left behind"
	else
		assert_nothing_left "$id"
	fi
}

# ---- scenarios ----------------------------------------------------------------------

# The state on the hooks' stdin: id, bundle, the init's pid, the config's annotations
# exactly (nothing added), and a status: created for the hooks of create (ward; runc 1.1
# says creating), running for poststart (runc 1.1.5 says created there: its baseline fails).
sc_hooks_stdin() {
	local id k f pid
	make_bundle "hk-$(basename "$WARD")" '.annotations = {"org.example.conformance": "hook stdin"}' || return 1
	mkdir -p "$BUNDLE/out" && chmod 0777 "$BUNDLE/out"
	for k in prestart poststart poststop; do
		config_edit '.hooks[$k] = [{path: "/bin/sh", args: ["sh", "-c", ("cat > " + $d + "/" + $k)]}]' \
			--arg k "$k" --arg d "$BUNDLE/out" || return 1
	done
	id=$(cid hk)
	check create_container "$id" || return 1
	pid=$(init_pid "$id")
	check ward start "$id" || return 1
	check wait_status "$id" stopped || return 1
	check ward delete "$id" || return 1
	for k in prestart poststart poststop; do
		f="$BUNDLE/out/$k"
		check jq -e --arg id "$id" --arg b "$BUNDLE" '.id == $id and .bundle == $b
			and .annotations == {"org.example.conformance": "hook stdin"}
			and (.status | length > 0)' "$f" || { cat "$f" >&2; return 1; }
	done
	for k in prestart poststart; do
		check [ "$(jq -r .pid "$BUNDLE/out/$k")" = "$pid" ] || return 1
	done
	check [ "$(jq -r .status "$BUNDLE/out/poststart")" = running ] || return 1
	if ward_specific; then
		check [ "$(jq -r .status "$BUNDLE/out/prestart")" = created ] || return 1
	fi
}

# --pid-file holds the init's pid, the one state reports.
sc_pidfile() {
	local id
	make_bundle "pf-$(basename "$WARD")" || return 1
	set_args sleep 1000 || return 1
	id=$(cid pf)
	check create_container "$id" --pid-file "$BUNDLE/pidfile" || return 1
	check [ "$(cat "$BUNDLE/pidfile")" = "$(init_pid "$id")" ] || return 1
	check [ "$(state_field "$id" status)" = created ] || return 1
	check ward delete -f "$id" || return 1
}

# kill: a created container gets the signal (KILL stops it); kill of a stopped container,
# of an unknown one and without an id fails; the stopped state is unchanged by it.
sc_kill() {
	local id before
	make_bundle "kl-$(basename "$WARD")" || return 1
	set_args sleep 1000 || return 1
	id=$(cid kl)
	check create_container "$id" || return 1
	check ward kill "$id" KILL || return 1
	check wait_status "$id" stopped || return 1
	before=$(state_json "$id")
	refused ward kill "$id" KILL 2>/dev/null || return 1
	check [ "$(state_json "$id")" = "$before" ] || return 1
	refused ward kill "nosuch-$id" KILL 2>/dev/null || return 1
	refused ward kill 2>/dev/null || return 1
	check ward delete "$id" || return 1
}

# state: the fields of the runtime spec, the config's annotations as written; start of a
# stopped container fails and has no effect (the program does not run again).
sc_state_start() {
	local id s
	make_bundle "st-$(basename "$WARD")" '.annotations = {"org.example.k": "v"}' || return 1
	share_dir || return 1
	set_cmd 'echo ran >> /shared/runs' || return 1
	id=$(cid st)
	check create_container "$id" || return 1
	s=$(state_json "$id")
	check jq -e --arg id "$id" --arg b "$BUNDLE" '.id == $id and .bundle == $b and .status == "created"
		and (.ociVersion | length > 0) and .pid > 0 and .annotations == {"org.example.k": "v"}' \
		<<<"$s" || { echo "$s" >&2; return 1; }
	refused ward create -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 || return 1
	check ward start "$id" || return 1
	check wait_status "$id" stopped || return 1
	refused ward start "$id" 2>/dev/null || return 1
	sleep 0.2
	check [ "$(cat "$SHARED/runs")" = ran ] || return 1
	check ward delete "$id" || return 1
	refused ward state "$id" 2>/dev/null || return 1
}

# delete of a running container fails without --force and leaves it running.
sc_delete_running() {
	local id
	make_bundle "dl-$(basename "$WARD")" || return 1
	set_args sleep 1000 || return 1
	id=$(cid dl)
	check start_container "$id" || return 1
	refused ward delete "$id" 2>/dev/null || return 1
	check [ "$(state_field "$id" status)" = running ] || return 1
	check ward delete -f "$id" || return 1
}

# A hostname with the uts namespace joined by path names that namespace (runtime-tools
# linux_ns_path): the holder sees the new name too.
sc_hostname_joined_uts() {
	local j
	uts_holder "uh-$(basename "$WARD")" || return 1
	make_bundle "uj-$(basename "$WARD")" '.hostname = "joined-name"' || return 1
	set_ns uts "/proc/$HPID/ns/uts" || return 1
	set_cmd 'hostname' || return 1
	j=$(cid uj)
	check create_container "$j" || return 1
	check ward start "$j" || return 1
	check wait_status "$j" stopped || return 1
	check [ "$(container_out "$j")" = joined-name ] || return 1
	check [ "$(nsenter -t "$HPID" -u hostname)" = joined-name ] || return 1
}

# The host's mounts at or below DIR (mountinfo's mount point field), one a line.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# No mount namespace in the spec (runtime-tools linux_ns_itype): the container stays in the
# runtime's mount namespace and sees its rootfs as "/" with a working /proc. No masked or
# read-only paths (runc refuses those without a mount namespace). ward: an exec sees the
# same (runc 1.1.5's exec does not chroot: it sees the host's root), its mounts are made
# under the rootfs in the runtime's namespace, and delete leaves nothing mounted there (runc
# leaves its mounts behind: those are detached here after its run).
sc_no_mount_ns() {
	local id out view='readlink /proc/self/ns/mnt; test -e /.nm-marker && echo root-ok;
		test -e "$0" || echo host-hidden; grep -q "^Name:" /proc/self/status && echo proc-ok'
	local want
	want="$(readlink /proc/self/ns/mnt)
root-ok
host-hidden
proc-ok"
	make_bundle "nm-$(basename "$WARD")" '.linux.maskedPaths = [] | .linux.readonlyPaths = []' || return 1
	drop_ns mount || return 1
	touch "$BUNDLE/rootfs/.nm-marker"
	set_args sh -c "$view; sleep 1000" "$BATS_TEST_TMPDIR" || return 1
	check [ -z "$(mounts_under "$BUNDLE")" ] || return 1
	id=$(cid nm)
	check start_container "$id" || return 1
	check retry 50 0.1 grep -q proc-ok "$BATS_TEST_TMPDIR/$id.out" || return 1
	check [ "$(container_out "$id")" = "$want" ] || { container_out "$id" >&2; return 1; }
	check [ "$(readlink "/proc/$(init_pid "$id")/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ] || return 1
	if ward_specific; then
		out=$(ward exec "$id" sh -c "$view" "$BATS_TEST_TMPDIR") || return 1
		check [ "$out" = "$want" ] || { echo "exec: $out" >&2; return 1; }
		mounts_under "$BUNDLE" | check grep -qx "$BUNDLE/rootfs/proc" || return 1
	fi
	check ward delete -f "$id" || return 1
	if ! ward_specific; then
		mounts_under "$BUNDLE" | sort -r | xargs -r -n1 umount -l
		return 0
	fi
	check [ -z "$(mounts_under "$BUNDLE")" ] || { mounts_under "$BUNDLE" >&2; return 1; }
}

@test "conformance: hooks get the state on stdin (id, bundle, pid, the config's annotations, status)" {
	conformance sc_hooks_stdin
}

@test "conformance: --pid-file holds the pid state reports" {
	conformance sc_pidfile
}

@test "conformance: kill signals a created container; kill of a stopped, unknown or unnamed one fails" {
	conformance sc_kill
}

@test "conformance: state fields and annotations; a duplicate id and a second start fail without effect" {
	conformance sc_state_start
}

@test "conformance: delete of a running container fails and leaves it running" {
	conformance sc_delete_running
}

@test "conformance: a hostname names a uts namespace joined by path (trusted tenant)" {
	conformance sc_hostname_joined_uts
}

@test "conformance: no mount namespace: the runtime's, with the rootfs as / and /proc (trusted tenant)" {
	conformance sc_no_mount_ns
}

@test "no mount namespace (ward): its mounts are made in the runtime's namespace and all go at delete, stacked ones too; root.readonly" {
	ward_specific || skip "ward's cleanup"
	local id
	make_bundle nmro '.root.readonly = true
		| .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
	drop_ns mount
	set_cmd 'touch /x 2>/dev/null && echo rw; mount -t tmpfs t /tmp && mount -t tmpfs s / && echo stacked; sleep 1000'
	[ -z "$(mounts_under "$BUNDLE")" ]
	id=$(cid nmro)
	start_container "$id"
	retry 50 0.1 grep -q stacked "$BATS_TEST_TMPDIR/$id.out"
	[ "$(cat "$BATS_TEST_TMPDIR/$id.out")" = stacked ]
	# made here, in the runtime's mount namespace: the rootfs, /proc, /dev, the stacked ones
	mounts_under "$BUNDLE" | grep -qx "$BUNDLE/rootfs/proc"
	[ "$(mounts_under "$BUNDLE" | grep -cx "$BUNDLE/rootfs")" -ge 2 ]
	ward delete -f "$id"
	[ -z "$(mounts_under "$BUNDLE")" ] || fail "left mounted: $(mounts_under "$BUNDLE")"
	assert_nothing_left "$id"
}

@test "no mount namespace (ward): a create that fails leaves nothing mounted" {
	ward_specific || skip "ward's cleanup"
	make_bundle nmfail '.process.args = ["/no/such/program"]'
	drop_ns mount
	create_refused '*/no/such/program*'
	[ -z "$(mounts_under "$BUNDLE")" ] || fail "left mounted: $(mounts_under "$BUNDLE")"
}

# ---- ward's refusals: the tenant and the rule ------------------------------------------

@test "refusal: no mount namespace under an untrusted tenant or with a user namespace, or one joined by path (trusted too), is refused naming tenant and rule" {
	ward_specific || skip "ward's refusal"
	make_bundle nomnt
	drop_ns mount
	WARD_CONFIG= create_refused "ward: cannot create container \"*\": tenant \"default\": namespaces: linux.namespaces: no mount namespace (the runtime's own, inherited): the container's mounts would be made in the host's mount namespace; only a trusted tenant may"
	[ -z "$(mounts_under "$BUNDLE")" ]
	userns_map
	create_refused '*: tenant "default": namespaces: linux.namespaces: no mount namespace with a user namespace: the container'"'"'s root would have no privilege over the runtime'"'"'s mount namespace, *'
	set_ns mount /proc/self/ns/mnt
	create_refused '*: tenant "default": namespaces: linux.namespaces: joining a mount namespace by path is not supported: *'
}

# joiner_runs: `ward run` of $BUNDLE succeeds; its stdout is in $output.
joiner_runs() {
	ward_capture run -b "$BUNDLE" "$(cid joiner)"
	assert_success
}

@test "joined uts namespace, default tenant: the namespace's own hostname and domainname are accepted (CRI-O, podman --pod), not set again; another is refused naming tenant and rule" {
	ward_specific || skip "ward's rule"
	# the sandbox: the default tenant's, its uts namespace owned by its own user namespace
	WARD_CONFIG= uts_holder holder '.domainname = "pod.example"'
	make_bundle joiner '.hostname = "holder" | .domainname = "pod.example"'
	set_ns uts "/proc/$HPID/ns/uts"
	set_cmd 'hostname; cat /proc/sys/kernel/domainname; readlink /proc/self/ns/uts'
	# the member's own user namespace does not own the sandbox's uts namespace: a
	# sethostname there would fail (EPERM), so success also says nothing was written
	export WARD_CONFIG=
	joiner_runs
	assert_output "$(printf 'holder\npod.example\n%s' "$(readlink "/proc/$HPID/ns/uts")")"
	config_edit 'del(.domainname)'
	joiner_runs
	assert_equal "${lines[0]}" holder
	config_edit 'del(.hostname) | .domainname = "pod.example"'
	joiner_runs
	assert_equal "${lines[1]}" pod.example
	# "" is no name (as runc): nothing to compare, nothing written
	config_edit '.hostname = ""'
	joiner_runs
	assert_equal "${lines[0]}" holder
	config_edit '.hostname = "renamed" | del(.domainname)'
	HOLDER=1 create_refused "*: tenant \"default\": namespaces: hostname: the uts namespace is joined by path (/proc/$HPID/ns/uts) and is named \"holder\": naming it \"renamed\" would rename its other members; only a trusted tenant may (the same name is accepted)"
	config_edit '.hostname = "holder" | .domainname = "other.example"'
	HOLDER=1 create_refused "*: tenant \"default\": namespaces: domainname: the uts namespace is joined by path (/proc/$HPID/ns/uts) and is named \"pod.example\": naming it \"other.example\" would rename its other members; *"
	[ "$(nsenter -t "$HPID" -u hostname)" = holder ]
	[ "$(nsenter -t "$HPID" -u cat /proc/sys/kernel/domainname)" = pod.example ]
}

@test "refusal: linux.mountLabel is refused naming tenant and rule (trusted too)" {
	ward_specific || skip "ward's refusal"
	make_bundle label '.linux.mountLabel = "system_u:object_r:svirt_sandbox_file_t:s0:c715,c811"'
	create_refused '*: tenant "default": selinux: linux.mountLabel: SELinux labels: not implemented by ward, so refused rather than ignored (for every tenant, trusted ones too)'
}

@test "refusal: proc or mqueue in a pid or ipc namespace its user namespace does not own is refused first, naming tenant and rule" {
	ward_specific || skip "ward's refusal"
	uts_holder holder
	make_bundle joiner
	userns_map
	set_ns ipc "/proc/$HPID/ns/ipc"
	HOLDER=1 create_refused "*: tenant \"default\": namespaces: mounts?*? (/dev/mqueue, type mqueue): the ipc namespace /proc/$HPID/ns/ipc joined by path belongs to a user namespace that is not the container's, where its root may not mount mqueue: join the user namespace that owns it (linux.namespaces user with its path), or do not join it"
	set_ns ipc
	set_ns pid "/proc/$HPID/ns/pid"
	HOLDER=1 create_refused "*: tenant \"default\": namespaces: mounts?*? (/proc, type proc): the pid namespace /proc/$HPID/ns/pid joined by path belongs to a user namespace that is not the container's, where its root may not mount proc: *"
}
