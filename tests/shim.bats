#!/usr/bin/env bats
# containerd-shim-ward-v2's bootstrap, without containerd: `start` (one serving process per
# pod, found by the sandbox-id annotation, on /run/containerd/s/<sha256>), the serving process
# (own session, subreaper, listener on fd 3, log fifo), `delete` (ward force-delete + a
# DeleteResponse on stdout) and bad input. Every test uses its own -address and namespace,
# so its sockets never collide with a real containerd's, and kills its daemons in teardown.

load helpers

SHIM=${SHIM:-$(dirname "$WARD")/containerd-shim-ward-v2}
UNIX_CONNECT=$WARD_TEST_BIN/unix-connect

suite_setup() {
	[ -x "$SHIM" ] || fail "SHIM=$SHIM is not an executable (make builds it beside ward)"
	[ -x "$UNIX_CONNECT" ] || fail "$UNIX_CONNECT missing (make test builds the helpers)"
	ADDR="$BATS_TEST_TMPDIR/containerd.sock"
	NS="shimtest-$BATS_TEST_NUMBER-$$"
	: >"$BATS_TEST_TMPDIR/.sockets"
}

suite_teardown() {
	local pid s
	for pid in $(shim_daemons); do kill -9 "$pid" 2>/dev/null; done
	for pid in $(shim_daemons); do wait_gone "$pid" 5; done
	while read -r s; do rm -rf -- "$s"; done <"$BATS_TEST_TMPDIR/.sockets"
	if [ -d "/run/containerd/ward/$NS" ]; then
		local id
		for id in $(ls "/run/containerd/ward/$NS"); do
			"$WARD" --root "/run/containerd/ward/$NS" delete -f "$id" >/dev/null 2>&1
		done
		rm -rf "/run/containerd/ward/$NS"
	fi
}

# Pids of this test's shim processes: the shim binary with this test's -address.
shim_daemons() {
	local p exe want
	want=$(readlink -f "$SHIM")
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$want" ] || continue
		# the address as its own argument or as -address=/--address= (Go flag spellings)
		tr '\0' '\n' <"$p/cmdline" 2>/dev/null |
			grep -qxF -e "$ADDR" -e "-address=$ADDR" -e "--address=$ADDR" && echo "${p#/proc/}"
	done
}

# shim_bundle ID [SANDBOX]: $BATS_TEST_TMPDIR/ID with a config.json (annotated with the
# sandbox id if given), named after the container as containerd names it. Sets BUNDLE.
shim_bundle() {
	BUNDLE="$BATS_TEST_TMPDIR/$1"
	mkdir -p "$BUNDLE/rootfs"
	if [ -n "${2:-}" ]; then
		jq -n --arg s "$2" '{ociVersion: "1.0.2", annotations: {"io.kubernetes.cri.sandbox-id": $s,
			"io.kubernetes.cri.container-type": "container"}}' >"$BUNDLE/config.json"
	else
		jq -n '{ociVersion: "1.0.2", annotations: {}}' >"$BUNDLE/config.json"
	fi
}

# The socket containerd-shim-runc-v2 would use for GROUP: sha256(<address>/<ns>/<group>).
expected_socket() {
	echo "/run/containerd/s/$(printf '%s/%s/%s' "$ADDR" "$NS" "$1" | sha256sum | cut -d' ' -f1)"
}

# shim_start ID [FLAGS...]: `start` in $BUNDLE as containerd runs it; sets $status, $output
# (stdout), $stderr. Remembers the socket for teardown.
shim_start() {
	local id=$1
	shift
	expected_socket "$id" >>"$BATS_TEST_TMPDIR/.sockets"
	run --separate-stderr bash -c 'cd "$1" && shift && exec "$@" </dev/null' _ "$BUNDLE" \
		"$SHIM" -namespace "$NS" -address "$ADDR" -publish-binary /bin/false -id "$id" "$@" start
	[ -z "$stderr" ] || echo "stderr of start $id: $stderr" >&2
	case "$output" in unix://*) echo "${output#unix://}" >>"$BATS_TEST_TMPDIR/.sockets" ;; esac
}

# pb_fields PREFIX BYTE...: decode protobuf (varint and length-delimited fields, the latter
# as nested messages) into PREFIX<field>=<value> lines.
pb_fields() {
	local prefix=$1
	shift
	local -a b=("$@")
	local i=0 n=$# v s c key
	varint() {
		v=0 s=0
		while :; do
			((i < n)) || { echo "truncated varint"; return 1; }
			c=${b[i]}
			i=$((i + 1))
			v=$((v | (c & 127) << s))
			s=$((s + 7))
			((c < 128)) && return 0
		done
	}
	while ((i < n)); do
		varint || return 1
		key=$v
		case $((key & 7)) in
		0) varint || return 1; echo "$prefix$((key >> 3))=$v" ;;
		2)
			varint || return 1
			((i + v <= n)) || { echo "truncated field"; return 1; }
			pb_fields "$prefix$((key >> 3))." "${b[@]:i:v}" || return 1
			i=$((i + v))
			;;
		*) echo "unexpected wire type $((key & 7))"; return 1 ;;
		esac
	done
}

pb_decode_file() {
	local -a bytes
	mapfile -t bytes < <(od -An -v -tu1 "$1" | tr -s ' ' '\n' | grep -v '^$')
	pb_fields "" "${bytes[@]}"
}

@test "start prints unix:///run/containerd/s/<sha256>, writes <bundle>/address, listens 0600" {
	shim_bundle c1 pod-a
	shim_start c1
	[ "$status" -eq 0 ]
	sock=$(expected_socket pod-a)
	[ "$output" = "unix://$sock" ]
	[[ "$output" =~ ^unix:///run/containerd/s/[0-9a-f]{64}$ ]]
	[ "$(cat "$BUNDLE/address")" = "unix://$sock" ]
	[ -S "$sock" ]
	[ "$(stat -c '%a %U' "$sock")" = "600 root" ]
	# the socket dir: root's, writable by no one else (ward makes it 0711 when it is missing;
	# a host's own containerd may have made it with another mode first)
	[ "$(stat -c %U /run/containerd/s)" = root ]
	(((8#$(stat -c %a /run/containerd/s) & 8#022) == 0))
	run "$UNIX_CONNECT" "$sock"
	[ "$status" -eq 0 ]
	# connections keep being accepted (the placeholder server closes them; ttrpc answers)
	run "$UNIX_CONNECT" "$sock"
	[ "$status" -eq 0 ]
	[ "$(shim_daemons | wc -l)" -eq 1 ]
}

@test "start accepts Go flag spellings (--flag, -flag=value) and ignores unknown flags" {
	shim_bundle c1 pod-a
	expected_socket pod-a >>"$BATS_TEST_TMPDIR/.sockets"
	run --separate-stderr bash -c 'cd "$1" && exec "$2" --namespace="$3" -address="$4" \
		-publish-binary=/bin/false --id c1 -debug=false -some-future-flag \
		-debug-socket /run/nonexistent.sock start </dev/null' \
		_ "$BUNDLE" "$SHIM" "$NS" "$ADDR"
	[ "$status" -eq 0 ]
	[ "$output" = "unix://$(expected_socket pod-a)" ]
}

@test "the serving process: own session, cwd = bundle, stdio on /dev/null, listener on fd 3" {
	shim_bundle c1 pod-a
	# an fd start's caller leaks (no CLOEXEC) must not live on in the daemon
	exec 7>"$BATS_TEST_TMPDIR/leak-marker"
	shim_start c1
	exec 7>&-
	[ "$status" -eq 0 ]
	pid=$(shim_daemons)
	[ -n "$pid" ]
	[ "$(echo "$pid" | wc -l)" -eq 1 ]
	# a new session (and so process group) led by the daemon; start has exited
	read -r sid pgid < <(ps -o sid=,pgid= -p "$pid")
	[ "$sid" = "$pid" ]
	[ "$pgid" = "$pid" ]
	[ "$(readlink "/proc/$pid/cwd")" = "$BUNDLE" ]
	# the daemon holds neither start's stdout (containerd reads it to EOF) nor any other fd
	for fd in 0 1 2; do [ "$(readlink "/proc/$pid/fd/$fd")" = /dev/null ]; done
	[[ "$(readlink "/proc/$pid/fd/3")" == socket:* ]]
	for fd in /proc/$pid/fd/*; do
		[ "$(readlink "$fd")" != "$BATS_TEST_TMPDIR/leak-marker" ] || fail "leaked fd $fd"
	done
	# its command line is start's without the action
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "$SHIM -namespace $NS -address $ADDR -publish-binary /bin/false -id c1 " ]
}

@test "the serving process makes itself a child subreaper" {
	command -v strace >/dev/null || skip "strace not installed"
	shim_bundle c1 pod-a
	expected_socket pod-a >>"$BATS_TEST_TMPDIR/.sockets"
	(cd "$BUNDLE" && exec strace -f -qq -e trace=prctl -o "$BATS_TEST_TMPDIR/trace" "$SHIM" \
		-namespace "$NS" -address "$ADDR" -id c1 start </dev/null >"$BATS_TEST_TMPDIR/out" \
		2>"$BATS_TEST_TMPDIR/err") &
	tracer=$!
	on_teardown "kill $tracer"
	for ((i = 0; i < 100; i++)); do
		pid=$(shim_daemons)
		[ -n "$pid" ] && grep -Eq "^$pid +prctl\(PR_SET_CHILD_SUBREAPER" "$BATS_TEST_TMPDIR/trace" && break
		sleep 0.1
	done
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "unix://$(expected_socket pod-a)" ]
	run grep -E "^$pid +prctl\(PR_SET_CHILD_SUBREAPER, 1\) += 0$" "$BATS_TEST_TMPDIR/trace"
	[ "$status" -eq 0 ] || fail "trace: $(cat "$BATS_TEST_TMPDIR/trace")"
	kill -9 "$pid"
	wait "$tracer" || true
}

@test "a second container of the same sandbox gets the same address and no second daemon" {
	shim_bundle c1 pod-a
	shim_start c1
	[ "$status" -eq 0 ]
	first=$output
	pid=$(shim_daemons)
	shim_bundle c2 pod-a
	shim_start c2
	[ "$status" -eq 0 ]
	[ "$output" = "$first" ]
	[ "$(cat "$BATS_TEST_TMPDIR/c2/address")" = "$first" ]
	[ "$(shim_daemons)" = "$pid" ]
	run "$UNIX_CONNECT" "${first#unix://}"
	[ "$status" -eq 0 ]
}

@test "different sandboxes, and containers without a sandbox id, get their own shims" {
	shim_bundle c1 pod-a
	shim_start c1
	a=$output
	shim_bundle c2 pod-b
	shim_start c2
	b=$output
	shim_bundle c3
	shim_start c3
	c=$output
	[ "$a" = "unix://$(expected_socket pod-a)" ]
	[ "$b" = "unix://$(expected_socket pod-b)" ]
	# no annotation: the container is its own group
	[ "$c" = "unix://$(expected_socket c3)" ]
	[ "$a" != "$b" ]
	[ "$b" != "$c" ]
	[ "$a" != "$c" ]
	[ "$(shim_daemons | wc -l)" -eq 3 ]
	for s in "$a" "$b" "$c"; do
		run "$UNIX_CONNECT" "${s#unix://}"
		[ "$status" -eq 0 ]
	done
}

@test "a stale socket (its shim died) is replaced by a new shim" {
	shim_bundle c1 pod-a
	shim_start c1
	sock=${output#unix://}
	old=$(shim_daemons)
	kill -9 "$old"
	wait_gone "$old"
	[ -S "$sock" ]
	run "$UNIX_CONNECT" "$sock"
	[ "$status" -ne 0 ]
	shim_bundle c2 pod-a
	shim_start c2
	[ "$status" -eq 0 ]
	[ "$output" = "unix://$sock" ]
	new=$(shim_daemons)
	[ -n "$new" ]
	[ "$new" != "$old" ]
	run "$UNIX_CONNECT" "$sock"
	[ "$status" -eq 0 ]
}

@test "the serving process logs runc JSON lines to the bundle's log fifo" {
	shim_bundle c1 pod-a
	mkfifo "$BUNDLE/log"
	cat "$BUNDLE/log" >"$BATS_TEST_TMPDIR/log.out" &
	reader=$!
	on_teardown "kill $reader"
	shim_start c1 -debug
	[ "$status" -eq 0 ]
	sock=${output#unix://}
	for ((i = 0; i < 50; i++)); do
		grep -q serving "$BATS_TEST_TMPDIR/log.out" && break
		sleep 0.1
	done
	run jq -r 'select(.level == "info") | .msg' "$BATS_TEST_TMPDIR/log.out"
	[ "$status" -eq 0 ]
	[[ "$output" == *"serving $sock (namespace $NS, first container c1)"* ]]
	pid=$(shim_daemons)
	[ "$(readlink "/proc/$pid/fd/2")" = "$(readlink -f "$BUNDLE/log")" ] ||
		[[ "$(readlink "/proc/$pid/fd/2")" == pipe:* ]] ||
		fail "stderr of the daemon: $(readlink "/proc/$pid/fd/2")"
}

# shim_delete ID: `SHIM delete` of ID with $BUNDLE; its response in $BATS_TEST_TMPDIR/resp.
shim_delete() {
	(cd "$BUNDLE" && "$SHIM" -namespace "$NS" -address "$ADDR" -id "$1" -bundle "$BUNDLE" delete \
		</dev/null >"$BATS_TEST_TMPDIR/resp" 2>"$BATS_TEST_TMPDIR/err") ||
		fail "delete $1: $(cat "$BATS_TEST_TMPDIR/err")"
}

@test "delete force-deletes the ward container and prints a DeleteResponse" {
	ID="shimdel-$BATS_TEST_NUMBER-$$"
	make_bundle "$ID" '.process.args = ["sleep", "600"]'
	root=/run/containerd/ward/$NS
	mkdir -p "$root"
	env WARD_TEST_TAG="$TAG" "$WARD" --root "$root" create -b "$BUNDLE" --pid-file "$BUNDLE/init.pid" "$ID" \
		</dev/null >"$BATS_TEST_TMPDIR/create.out" 2>&1 || fail "create: $(cat "$BATS_TEST_TMPDIR/create.out")"
	init=$(cat "$BUNDLE/init.pid")
	pid_alive "$init"
	echo "unix:///run/containerd/s/0000" >"$BUNDLE/address"
	before=$(date +%s)
	(cd "$BUNDLE" && "$SHIM" -namespace "$NS" -address "$ADDR" -publish-binary /bin/false \
		-id "$ID" -bundle "$BUNDLE" delete </dev/null >"$BATS_TEST_TMPDIR/resp" 2>"$BATS_TEST_TMPDIR/err")
	after=$(date +%s)
	run pb_decode_file "$BATS_TEST_TMPDIR/resp"
	[ "$status" -eq 0 ]
	echo "$output"
	# DeleteResponse{pid=1, exit_status=2, exited_at=3 Timestamp{seconds=1, nanos=2}}
	[ "${lines[0]}" = "1=$init" ]
	[ "${lines[1]}" = "2=137" ]
	[[ "${lines[2]}" =~ ^3\.1=([0-9]+)$ ]]
	secs=${BASH_REMATCH[1]}
	[ "$secs" -ge "$before" ]
	[ "$secs" -le "$after" ]
	[[ "${lines[3]}" =~ ^3\.2=[0-9]+$ ]] || [ "${#lines[@]}" -eq 3 ]
	# the container is gone from ward and from the host
	run "$WARD" --root "$root" state "$ID"
	[ "$status" -ne 0 ]
	wait_gone "$init"
	[ ! -e "$BUNDLE/address" ]

	# delete is idempotent: again, for a container ward no longer knows
	rm "$BUNDLE/init.pid"
	shim_delete "$ID"
	run pb_decode_file "$BATS_TEST_TMPDIR/resp"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "2=137" ] # no init.pid: pid 0 is not encoded
	[[ "${lines[1]}" =~ ^3\.1=[0-9]+$ ]]
}

# containerd runs `delete` after every task's Delete: a container the Task API deleted has
# no state left, and ward is not run for nothing; one with state still is
@test "delete of a container ward has no state of runs no ward, and answers as before" {
	shim_logging_ward
	ID="shimdel-$BATS_TEST_NUMBER-$$"
	make_bundle "$ID" '.process.args = ["sleep", "600"]'
	mkdir -p "/run/containerd/ward/$NS"
	shim_delete "$ID"
	run pb_decode_file "$BATS_TEST_TMPDIR/resp"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "2=137" ] # no init.pid: pid 0 is not encoded
	[ ! -s "$BATS_TEST_TMPDIR/ward-calls" ] || fail "delete ran ward: $(cat "$BATS_TEST_TMPDIR/ward-calls")"
	# a state dir (here a create that died before its intent): ward deletes it
	mkdir "/run/containerd/ward/$NS/$ID"
	shim_delete "$ID"
	grep -qx -- "--root /run/containerd/ward/$NS delete --force $ID" "$BATS_TEST_TMPDIR/ward-calls" ||
		fail "delete did not run ward: $(cat "$BATS_TEST_TMPDIR/ward-calls")"
	[ ! -e "/run/containerd/ward/$NS/$ID" ] || fail "the state dir of $ID is left"
}

@test "bad input: no -id, no namespace, no config.json, bad JSON, unknown action fail cleanly" {
	shim_bundle c1 pod-a
	run --separate-stderr bash -c 'cd "$1" && exec "$2" -namespace "$3" -address "$4" start' \
		_ "$BUNDLE" "$SHIM" "$NS" "$ADDR"
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"container id cannot be empty (-id)"* ]]

	run --separate-stderr env -u NAMESPACE bash -c 'cd "$1" && exec "$2" -address "$3" -id c1 start' \
		_ "$BUNDLE" "$SHIM" "$ADDR"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"namespace cannot be empty"* ]]

	run --separate-stderr bash -c 'cd "$1" && exec "$2" -namespace ../etc -address "$3" -id c1 start' \
		_ "$BUNDLE" "$SHIM" "$ADDR"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *'invalid namespace "../etc"'* ]]

	rm "$BUNDLE/config.json"
	shim_start c1
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"start: bundle $BUNDLE: open config.json: No such file or directory"* ]]
	[ ! -e "$(expected_socket c1)" ]
	[ ! -e "$(expected_socket pod-a)" ]
	[ ! -e "$BUNDLE/address" ]

	echo '{"annotations": ' >"$BUNDLE/config.json"
	shim_start c1
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"config.json: line"* ]]
	[ ! -e "$(expected_socket c1)" ]

	echo '{"annotations": {"io.kubernetes.cri.sandbox-id": 7}}' >"$BUNDLE/config.json"
	shim_start c1
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"annotations.io.kubernetes.cri.sandbox-id: not a string"* ]]

	shim_bundle c1 pod-a
	run --separate-stderr "$SHIM" -namespace "$NS" -id c1 restart
	[ "$status" -ne 0 ]
	[[ "$stderr" == *'unknown action "restart"'* ]]
	# the serving process refuses to run without the listener `start` hands it
	run --separate-stderr "$SHIM" -namespace "$NS" -id c1
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"no listening socket on fd 3"* ]]
	[ -z "$(shim_daemons)" ]
}

@test "-v prints the version as the Go shims do, exit 0" {
	run --separate-stderr "$SHIM" -v
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "containerd-shim-ward-v2:" ]
	[[ "${lines[1]}" =~ ^\ \ Version:\ \ [0-9]+\.[0-9]+\.[0-9]+ ]]
	[[ "${lines[2]}" =~ ^\ \ Revision:\ [0-9a-z] ]]
	# `ward --version` names the same version
	[[ "$("$WARD" --version 2>&1)" == *"${lines[1]##* }"* ]]
	# -version too, and flags before it (containerd 2.x passes none) do not matter
	run "$SHIM" -namespace x -version
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "containerd-shim-ward-v2:" ]
}

# pb_str FIELD STRING: a protobuf string field (key and length < 128) on stdout.
pb_str() {
	printf "\\x$(printf %02x $(($1 << 3 | 2)))\\x$(printf %02x ${#2})%s" "$2"
}

# The 52 bytes CRI sends on start's stdin for ConfigPath = "/etc/ward/config.toml".
cri_options() {
	pb_str 1 runtimeoptions.v1.Options
	printf '\x12\x17'
	pb_str 2 /etc/ward/config.toml
}

@test "-info prints a RuntimeInfo: name, version, the options Any, ward features as an Any" {
	run --separate-stderr bash -c '"$1" -info </dev/null >"$2"' _ "$SHIM" "$BATS_TEST_TMPDIR/info"
	[ "$status" -eq 0 ] || fail "-info: $stderr"
	info=$BATS_TEST_TMPDIR/info
	hex=$(od -An -v -tx1 "$info" | tr -d ' \n')
	# name (field 1) = io.containerd.ward.v2, then version (field 2): {version=1, revision=2}
	name=$(printf io.containerd.ward.v2 | od -An -v -tx1 | tr -d ' \n')
	ver=$("$SHIM" -v | sed -n 's/^  Version:  //p')
	rev=$("$SHIM" -v | sed -n 's/^  Revision: //p')
	verhex=$({ pb_str 1 "$ver"; pb_str 2 "$rev"; } | od -An -v -tx1 | tr -d ' \n')
	[[ "$hex" == "0a15${name}12$(printf %02x $((${#verhex} / 2)))${verhex}22"* ]] ||
		fail "unexpected RuntimeInfo prefix: ${hex:0:120}"
	# features (field 4) = Any{type_url, value = `ward features`'s JSON}, the last field;
	# no options (field 3) without stdin, no annotations (field 5)
	"$WARD" features >"$BATS_TEST_TMPDIR/features"
	flen=$(stat -c %s "$BATS_TEST_TMPDIR/features")
	[ "$flen" -gt 200 ]
	cmp <(tail -c "$flen" "$info") "$BATS_TEST_TMPDIR/features"
	url=types.containerd.io/opencontainers/runtime-spec/1/features/Features
	grep -qaF "$url" "$info"
	[ "$(od -An -v -tx1 -j $((2 + 21 + 2 + ${#verhex} / 2)) -N 1 "$info" | tr -d ' ')" = 22 ]
	# the value's length prefix (a 2-byte varint for 128..16383 bytes) just before the JSON
	total=$(stat -c %s "$info")
	read -r b1 b2 < <(od -An -v -tu1 -j $((total - flen - 2)) -N 2 "$info")
	[ $(((b1 & 127) | b2 << 7)) -eq "$flen" ]

	# with the CRI options on stdin they come back as field 3 (0x1a, 52 bytes)
	run --separate-stderr bash -c '"$1" -info >"$2"' _ "$SHIM" "$BATS_TEST_TMPDIR/info2" \
		< <(cri_options)
	[ "$status" -eq 0 ] || fail "-info with options: $stderr"
	opthex=$(cri_options | od -An -v -tx1 | tr -d ' \n')
	[[ "$(od -An -v -tx1 "$BATS_TEST_TMPDIR/info2" | tr -d ' \n')" == *"1a34${opthex}22"* ]]

	# stdin that is no protobuf message fails, saying so
	run --separate-stderr bash -c 'printf "\x0b\x01" | "$1" -info' _ "$SHIM"
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"info: "*"stdin: not a protobuf message"* ]]
}

# bootstrap_params ID NS SOCKET_DIR [TTRPC]: containerd 2.3's BootstrapParams on stdout, the
# CRI options in extensions[0].
bootstrap_params() {
	local ext
	pb_str 1 "$1"
	pb_str 2 "$2"
	pb_str 3 debug
	pb_str 4 v2.3.0
	pb_str 5 "${4:-/run/containerd/containerd.sock.ttrpc}"
	pb_str 6 "$ADDR"
	pb_str 7 /usr/bin/containerd
	printf '\x42\x36\x0a\x34'
	cri_options
	[ -z "$3" ] || pb_str 9 "$3"
}

# shim_start_in FILE ID [FLAGS...]: shim_start with FILE on stdin and TTRPC_ADDRESS unset.
shim_start_in() {
	local in=$1 id=$2
	shift 2
	run --separate-stderr env -u TTRPC_ADDRESS bash -c 'cd "$1" && shift && in=$1 && shift &&
		exec "$@" <"$in"' _ "$BUNDLE" "$in" \
		"$SHIM" -namespace "$NS" -address "$ADDR" -publish-binary /bin/false -id "$id" "$@" start
	case "$output" in unix://*) echo "${output#unix://}" >>"$BATS_TEST_TMPDIR/.sockets" ;; esac
}

@test "start with containerd 2.3's BootstrapParams: socket_dir, ttrpc address, options" {
	shim_bundle c1 pod-a
	sdir=$(mktemp -d /tmp/ward-sockdir.XXXXXX)
	echo "$sdir" >>"$BATS_TEST_TMPDIR/.sockets"
	bootstrap_params c1 "$NS" "$sdir/s" /run/ctd-test.sock.ttrpc >"$BATS_TEST_TMPDIR/params"
	shim_start_in "$BATS_TEST_TMPDIR/params" c1
	[ "$status" -eq 0 ] || fail "start: $output $stderr"
	[ -z "$stderr" ]
	hash=$(printf '%s/%s/%s' "$ADDR" "$NS" pod-a | sha256sum | cut -d' ' -f1)
	[ "$output" = "unix://$sdir/s/$hash" ]
	[ -S "$sdir/s/$hash" ]
	[ "$(stat -c %a "$sdir/s")" = 711 ]
	[ "$(cat "$BUNDLE/address")" = "$output" ]
	[ ! -e "$(expected_socket pod-a)" ]
	run "$UNIX_CONNECT" "$sdir/s/$hash"
	[ "$status" -eq 0 ]
	# TTRPC_ADDRESS was unset: the daemon has containerd_ttrpc_address for its events
	pid=$(shim_daemons)
	[ "$(echo "$pid" | wc -l)" -eq 1 ]
	tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'TTRPC_ADDRESS=/run/ctd-test.sock.ttrpc'

	# a second container of the pod: the same shim in the same socket_dir
	shim_bundle c2 pod-a
	bootstrap_params c2 "$NS" "$sdir/s" >"$BATS_TEST_TMPDIR/params2"
	shim_start_in "$BATS_TEST_TMPDIR/params2" c2
	[ "$status" -eq 0 ]
	[ "$output" = "unix://$sdir/s/$hash" ]
	[ "$(shim_daemons | wc -l)" -eq 1 ]
	for p in $(shim_daemons); do kill -9 "$p"; done
	rm -rf "$sdir"
}

@test "start with BootstrapParams without socket_dir, a set TTRPC_ADDRESS wins" {
	shim_bundle c1 pod-b
	bootstrap_params c1 "$NS" "" /run/from-params.ttrpc >"$BATS_TEST_TMPDIR/params"
	expected_socket pod-b >>"$BATS_TEST_TMPDIR/.sockets"
	run --separate-stderr bash -c 'cd "$1" && shift && exec env TTRPC_ADDRESS=/run/from-env.ttrpc \
		"$@" <"'"$BATS_TEST_TMPDIR/params"'"' _ "$BUNDLE" \
		"$SHIM" -namespace "$NS" -address "$ADDR" -publish-binary /bin/false -id c1 start
	[ "$status" -eq 0 ] || fail "start: $output $stderr"
	[ "$output" = "unix://$(expected_socket pod-b)" ]
	pid=$(shim_daemons)
	[ -n "$pid" ]
	tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'TTRPC_ADDRESS=/run/from-env.ttrpc'
}

@test "start with the legacy options Any (1.6-2.2), and with bad stdin" {
	shim_bundle c1 pod-c
	cri_options >"$BATS_TEST_TMPDIR/any"
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/any")" -eq 52 ]
	expected_socket pod-c >>"$BATS_TEST_TMPDIR/.sockets"
	shim_start_in "$BATS_TEST_TMPDIR/any" c1
	[ "$status" -eq 0 ] || fail "start: $output $stderr"
	[ -z "$stderr" ]
	[ "$output" = "unix://$(expected_socket pod-c)" ]

	# BootstrapParams for another id read as an Any (upstream's rule): still /run/containerd/s
	shim_bundle c2 pod-d
	bootstrap_params other "$NS" /tmp/never-used >"$BATS_TEST_TMPDIR/params"
	expected_socket pod-d >>"$BATS_TEST_TMPDIR/.sockets"
	shim_start_in "$BATS_TEST_TMPDIR/params" c2
	[ "$status" -eq 0 ] || fail "start: $output $stderr"
	[ "$output" = "unix://$(expected_socket pod-d)" ]
	[ ! -e /tmp/never-used ]

	# not protobuf: start fails before it makes a socket
	shim_bundle c3 pod-e
	printf '\x0a\x7fshort' >"$BATS_TEST_TMPDIR/bad"
	shim_start_in "$BATS_TEST_TMPDIR/bad" c3
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"start: stdin: not a protobuf message"* ]]
	[ ! -e "$(expected_socket pod-e)" ]
	# a relative socket_dir is refused
	bootstrap_params c3 "$NS" relative/dir >"$BATS_TEST_TMPDIR/params3"
	shim_start_in "$BATS_TEST_TMPDIR/params3" c3
	[ "$status" -ne 0 ]
	[[ "$stderr" == *'BootstrapParams.socket_dir "relative/dir"'* ]]
	[ ! -e "$(expected_socket pod-e)" ]
}

# ---- the Task API (containerd.task.v2.Task), driven by tests/helpers/shim-client ---------

SHIM_CLIENT=$WARD_TEST_BIN/shim-client

# task_shim ID: make_bundle'd $BUNDLE served by a fresh shim; sets SOCK and CID.
task_shim() {
	[ -x "$SHIM_CLIENT" ] || fail "$SHIM_CLIENT missing (make test builds the helpers)"
	CID=$1
	shim_start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output $stderr"
	SOCK=${output#unix://}
}

# task METHOD ARGS...: shim-client on $SOCK under `run` (bounded: a hung call fails).
task() {
	run timeout 20 "$SHIM_CLIENT" "$SOCK" "$@"
}

# field KEY: the KEY=value line of $output.
field() {
	printf '%s\n' "$output" | sed -n "s/^$1=//p"
}

# fifo_reader NAME: a FIFO $BATS_TEST_TMPDIR/NAME.fifo copied into NAME.txt in the background.
fifo_reader() {
	mkfifo "$BATS_TEST_TMPDIR/$1.fifo"
	cat "$BATS_TEST_TMPDIR/$1.fifo" >"$BATS_TEST_TMPDIR/$1.txt" 2>/dev/null </dev/null 3>&- &
	on_teardown "kill $!"
}

# Nothing of container $1 is left on the host: ward state, cgroup, init process.
assert_task_gone() {
	local id=$1 pid=$2 cg
	run "$WARD" --root "/run/containerd/ward/$NS" state "$id"
	[ "$status" -ne 0 ] || fail "ward still knows $id: $output"
	[ ! -e "/run/containerd/ward/$NS/$id" ] || fail "state dir of $id left"
	for cg in "$CG2/ward/$id" "$CG2"/ward/*/"$id" "$CG2/$id"; do
		[ ! -d "$cg" ] || fail "cgroup $cg left behind"
	done
	wait_gone "$pid" 5
}

@test "task: Create/Start/Wait/State/Delete: output in the FIFOs, created -> running -> stopped" {
	make_bundle t1 '.process.args = ["sh", "-c", "echo to-stdout; echo to-stderr >&2; while [ ! -e /tmp/go ]; do sleep 0.02; done; exit 7"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t1"
	fifo_reader out
	fifo_reader err
	task create "$CID" "$BUNDLE" stdout="$BATS_TEST_TMPDIR/out.fifo" stderr="$BATS_TEST_TMPDIR/err.fifo"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	[ "$pid" -gt 1 ]
	pid_alive "$pid"
	task state "$CID"
	[ "$(field status)" = created ]
	[ "$(field pid)" = "$pid" ]
	[ "$(field bundle)" = "$BUNDLE" ]
	[ "$(field stdout)" = "$BATS_TEST_TMPDIR/out.fifo" ]
	# Wait is asynchronous: it answers when the process exits, other calls go on meanwhile
	timeout 20 "$SHIM_CLIENT" "$SOCK" wait "$CID" >"$BATS_TEST_TMPDIR/wait.txt" 3>&- &
	waiter=$!
	task start "$CID"
	[ "$status" -eq 0 ]
	[ "$(field pid)" = "$pid" ]
	task state "$CID"
	[ "$(field status)" = running ]
	task connect "$CID"
	[ "$(field task_pid)" = "$pid" ]
	[ "$(field shim_pid)" = "$(shim_daemons)" ]
	pid_alive "$waiter" # still waiting: the container has not exited
	touch "$BUNDLE/rootfs/tmp/go"
	wait "$waiter"
	output=$(cat "$BATS_TEST_TMPDIR/wait.txt")
	[ "$(field exit_status)" = 7 ]
	exited=$(field exited_at)
	[ -n "$exited" ]
	task state "$CID"
	[ "$(field status)" = stopped ]
	[ "$(field exit_status)" = 7 ]
	[ "$(field exited_at)" = "$exited" ]
	# the output reached containerd's FIFOs, nothing lost at exit
	retry 50 0.05 grep -qx to-stdout "$BATS_TEST_TMPDIR/out.txt"
	retry 50 0.05 grep -qx to-stderr "$BATS_TEST_TMPDIR/err.txt"
	# Kill of an exited process: NotFound, as containerd expects
	task kill "$CID" 9 all=1
	[ "$status" -eq 1 ]
	[ "$(field code)" = 5 ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	[ "$(field pid)" = "$pid" ]
	[ "$(field exit_status)" = 7 ]
	[ "$(field exited_at)" = "$exited" ]
	assert_task_gone "$CID" "$pid"
	task state "$CID"
	[ "$status" -eq 1 ]
	[ "$(field code)" = 5 ]
}

@test "task: Pids lists the container's processes, Kill signals it, Wait reports the signal" {
	make_bundle t2 '.process.args = ["sh", "-c", "trap \"exit 42\" TERM; while :; do sleep 0.05; done"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t2"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	[ "$status" -eq 0 ]
	task pids "$CID"
	[ "$status" -eq 0 ]
	# the init (sh) and its sleeps
	[[ " $(field pids) " == *" $pid "* ]] || fail "pids: $output"
	# Delete of a running task is refused
	task delete "$CID"
	[ "$status" -eq 1 ]
	[ "$(field code)" = 9 ]
	task kill "$CID" 15
	[ "$status" -eq 0 ]
	task wait "$CID"
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 42 ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 42 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: a created, never started task is deleted with its init killed" {
	make_bundle t3 '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t3"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task delete "$CID"
	[ "$status" -eq 0 ]
	[ "$(field pid)" = "$pid" ]
	assert_task_gone "$CID" "$pid"
}

@test "task: Exec runs a process in the container, its output in its FIFO, Wait on the exec" {
	make_bundle t4 '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4"
	fifo_reader eout
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	jq '.process | .args = ["sh", "-c", "echo exec-says-hi; exit 5"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/proc.json"
	task exec "$CID" e1 "$BATS_TEST_TMPDIR/proc.json" stdout="$BATS_TEST_TMPDIR/eout.fifo"
	[ "$status" -eq 0 ] || fail "exec: $output"
	task state "$CID" exec=e1
	[ "$(field status)" = created ]
	[ "$(field exec_id)" = e1 ]
	task start "$CID" exec=e1
	[ "$status" -eq 0 ] || fail "start exec: $output"
	epid=$(field pid)
	[ "$epid" -gt 1 ]
	[ "$epid" != "$pid" ]
	task wait "$CID" exec=e1
	[ "$(field exit_status)" = 5 ]
	retry 50 0.05 grep -qx exec-says-hi "$BATS_TEST_TMPDIR/eout.txt"
	task state "$CID" exec=e1
	[ "$(field status)" = stopped ]
	task delete "$CID" exec=e1
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 5 ]
	task state "$CID" exec=e1
	[ "$(field code)" = 5 ]
	# the init was not disturbed
	task state "$CID"
	[ "$(field status)" = running ]
	task kill "$CID" 9
	task wait "$CID"
	[ "$(field exit_status)" = 137 ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: an exec whose start fails (missing binary) is exited at once: Wait, State, Delete" {
	make_bundle t4b '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4b"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	jq '.process | .args = ["/nonexistent"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/proc.json"
	task exec "$CID" e2 "$BATS_TEST_TMPDIR/proc.json"
	[ "$status" -eq 0 ] || fail "exec: $output"
	# containerd (ExecSync, ctr task exec) waits on the exec before it starts it
	timeout 20 "$SHIM_CLIENT" "$SOCK" wait "$CID" exec=e2 >"$BATS_TEST_TMPDIR/wait.txt" 3>&- &
	waiter=$!
	task state "$CID" exec=e2
	[ "$(field status)" = created ]
	task start "$CID" exec=e2
	[ "$status" -eq 1 ]
	[ "$(field code)" = 13 ]
	[[ "$output" == *nonexistent* ]] || fail "start exec: $output"
	# the pending Wait is answered (before the fix it hung until its 20 s timeout)
	wait "$waiter" || fail "wait on the failed exec: $(cat "$BATS_TEST_TMPDIR/wait.txt")"
	output=$(cat "$BATS_TEST_TMPDIR/wait.txt")
	[ "$(field exit_status)" = 255 ]
	[ -n "$(field exited_at)" ]
	task wait "$CID" exec=e2
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 255 ]
	task state "$CID" exec=e2
	[ "$(field status)" = stopped ]
	[ "$(field exit_status)" = 255 ]
	task start "$CID" exec=e2
	[ "$(field code)" = 9 ]
	task kill "$CID" 9 exec=e2
	[ "$(field code)" = 5 ]
	task delete "$CID" exec=e2
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 255 ]
	task state "$CID" exec=e2
	[ "$(field code)" = 5 ]
	# the init was not disturbed
	task state "$CID"
	[ "$(field status)" = running ]
	task kill "$CID" 9
	task wait "$CID"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: an exec's output waits for a reader that opens its FIFO after the exit; so does its exit" {
	# containerd's cio opens its FIFO read ends lazily: the exec may be over before that.
	# A bound far above this test's run, so that nothing here depends on timing.
	export WARD_SHIM_STDIO_WAIT_MS=300000
	make_bundle t4c '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4c"
	mkfifo "$BATS_TEST_TMPDIR/late.fifo"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	jq '.process | .args = ["echo", "alive"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/proc.json"
	task exec "$CID" e1 "$BATS_TEST_TMPDIR/proc.json" stdout="$BATS_TEST_TMPDIR/late.fifo"
	[ "$status" -eq 0 ] || fail "exec: $output"
	task start "$CID" exec=e1
	[ "$status" -eq 0 ] || fail "start exec: $output"
	epid=$(field pid)
	# the shim reaped it (a zombie would still be alive), and no one has read its FIFO
	wait_gone "$epid" 10
	# its exit is not out before its output is with a reader
	task state "$CID" exec=e1
	[ "$(field status)" = running ] || fail "exit published with the output unread: $output"
	# the late reader gets the output, then EOF (before the fix: no writer left, cat blocked
	# on the open until its timeout, the output gone)
	run timeout 20 cat "$BATS_TEST_TMPDIR/late.fifo"
	[ "$status" -eq 0 ] || fail "late reader: status $status, output '$output'"
	[ "$output" = alive ]
	task wait "$CID" exec=e1
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 0 ]
	task state "$CID" exec=e1
	[ "$(field status)" = stopped ]
	task delete "$CID" exec=e1
	[ "$status" -eq 0 ]
	# Delete of an exit still held (no reader came): it goes out at once, the record is gone
	mkfifo "$BATS_TEST_TMPDIR/none.fifo"
	task exec "$CID" e2 "$BATS_TEST_TMPDIR/proc.json" stdout="$BATS_TEST_TMPDIR/none.fifo"
	[ "$status" -eq 0 ] || fail "exec: $output"
	task start "$CID" exec=e2
	epid=$(field pid)
	wait_gone "$epid" 10
	task state "$CID" exec=e2
	[ "$(field status)" = running ]
	task delete "$CID" exec=e2
	[ "$status" -eq 0 ] || fail "delete of a held exit: $output"
	[ "$(field exit_status)" = 0 ]
	task state "$CID" exec=e2
	[ "$(field code)" = 5 ]
	task kill "$CID" 9
	task wait "$CID"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: the init's stdout and stderr in one FIFO whose reader opens after the exit: all of it, then the exit" {
	export WARD_SHIM_STDIO_WAIT_MS=300000
	make_bundle t4e '.process.args = ["sh", "-c", "echo to-out; echo to-err >&2"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4e"
	mkfifo "$BATS_TEST_TMPDIR/late.fifo"
	task create "$CID" "$BUNDLE" stdout="$BATS_TEST_TMPDIR/late.fifo" stderr="$BATS_TEST_TMPDIR/late.fifo"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output"
	wait_gone "$pid" 10
	task state "$CID"
	[ "$(field status)" = running ] || fail "exit published with the output unread: $output"
	run timeout 20 cat "$BATS_TEST_TMPDIR/late.fifo"
	[ "$status" -eq 0 ] || fail "late reader: status $status, output '$output'"
	[ "$output" = "to-out
to-err" ]
	task wait "$CID"
	[ "$status" -eq 0 ]
	[ "$(field exit_status)" = 0 ]
	task state "$CID"
	[ "$(field status)" = stopped ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: a reader that opens the held FIFO while the process runs: the exit is not held" {
	export WARD_SHIM_STDIO_WAIT_MS=300000
	make_bundle t4f '.process.args = ["sh", "-c", "echo early; while [ ! -e /tmp/go ]; do sleep 0.02; done"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4f"
	mkfifo "$BATS_TEST_TMPDIR/out.fifo"
	# no reader at Create: the shim holds the FIFO
	task create "$CID" "$BUNDLE" stdout="$BATS_TEST_TMPDIR/out.fifo"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output"
	cat "$BATS_TEST_TMPDIR/out.fifo" >"$BATS_TEST_TMPDIR/out.txt" 2>/dev/null </dev/null 3>&- &
	on_teardown "kill $!"
	retry 100 0.05 grep -qx early "$BATS_TEST_TMPDIR/out.txt"
	touch "$BUNDLE/rootfs/tmp/go"
	# the reader's open was seen: Wait is answered now, not after the 300 s bound
	task wait "$CID"
	[ "$status" -eq 0 ] || fail "wait: $output"
	[ "$(field exit_status)" = 0 ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: an exit whose output FIFO never gets a reader is published after the bound" {
	export WARD_SHIM_STDIO_WAIT_MS=1000
	make_bundle t4d '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t4d"
	mkfifo "$BATS_TEST_TMPDIR/none.fifo"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task start "$CID"
	jq '.process | .args = ["echo", "unread"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/proc.json"
	# no reader ever: Wait is answered once the bound is over (task bounds it at 20 s)
	task exec "$CID" e1 "$BATS_TEST_TMPDIR/proc.json" stdout="$BATS_TEST_TMPDIR/none.fifo"
	[ "$status" -eq 0 ] || fail "exec: $output"
	task start "$CID" exec=e1
	[ "$status" -eq 0 ] || fail "start exec: $output"
	task wait "$CID" exec=e1
	[ "$status" -eq 0 ] || fail "wait: $output"
	[ "$(field exit_status)" = 0 ]
	task delete "$CID" exec=e1
	[ "$status" -eq 0 ]
	task kill "$CID" 9
	task wait "$CID"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

@test "task: unknown ids NotFound, unknown methods and Checkpoint Unimplemented, failed ward Internal" {
	make_bundle t5
	task_shim "w$BATS_TEST_NUMBER-$$-t5"
	for m in state start delete pids; do
		task "$m" nosuch
		[ "$status" -eq 1 ] || fail "$m: $output"
		[ "$(field code)" = 5 ] || fail "$m: $output"
	done
	task call NoSuchMethod
	[ "$status" -eq 1 ]
	[ "$(field code)" = 12 ]
	task call Checkpoint
	[ "$status" -eq 1 ]
	[ "$(field code)" = 12 ]
	[[ "$(field message)" == *"checkpoint is not supported by ward"* ]]
	# ward refuses the bundle: Internal, with ward's one-line message
	config_edit '.process.args = []'
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 1 ] || fail "create: $output"
	[ "$(field code)" = 13 ] || fail "create: $output"
	msg=$(field message)
	[ -n "$msg" ]
	assert_one_line "$msg"
	task state "$CID"
	[ "$(field code)" = 5 ]
}

@test "task: Shutdown is ignored while containers remain, then ends the shim" {
	make_bundle t6 '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t6"
	shim=$(shim_daemons)
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task shutdown "$CID"
	[ "$status" -eq 0 ]
	sleep 0.2
	pid_alive "$shim"
	task state "$CID"
	[ "$(field status)" = created ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	task shutdown "$CID"
	[ "$status" -eq 0 ]
	wait_gone "$shim" 10
	[ ! -e "$SOCK" ]
	assert_task_gone "$CID" "$pid"
}

@test "task: a terminal: the pty master comes over the console socket, its output in the FIFO" {
	make_bundle t7 '.process.terminal = true | .process.args = ["sh", "-c", "tty; echo on-the-tty; exit 4"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t7"
	fifo_reader tty
	task create "$CID" "$BUNDLE" stdout="$BATS_TEST_TMPDIR/tty.fifo" terminal=1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task state "$CID"
	[ "$(field terminal)" = 1 ]
	task start "$CID"
	[ "$status" -eq 0 ]
	task wait "$CID"
	[ "$(field exit_status)" = 4 ]
	retry 50 0.05 grep -q on-the-tty "$BATS_TEST_TMPDIR/tty.txt"
	grep -q '^/dev/pts/' "$BATS_TEST_TMPDIR/tty.txt" || fail "not a tty: $(cat "$BATS_TEST_TMPDIR/tty.txt")"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
	# no console socket left behind
	run find /run/containerd/ward -maxdepth 1 -name ".console-$(shim_daemons)-*"
	[ -z "$output" ]
}

@test "task: Pause/Resume freeze and thaw, Stats answers cgroups v2 Metrics" {
	make_bundle t8 '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-t8"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
	task pause "$CID"
	[ "$status" -eq 1 ] # not started yet
	[ "$(field code)" = 9 ]
	task start "$CID"
	task pause "$CID"
	[ "$status" -eq 0 ] || fail "pause: $output"
	task state "$CID"
	[ "$(field status)" = paused ]
	task resume "$CID"
	[ "$status" -eq 0 ]
	task state "$CID"
	[ "$(field status)" = running ]
	task stats "$CID"
	[ "$status" -eq 0 ] || fail "stats: $output"
	[ "$(field type_url)" = io.containerd.cgroups.v2.Metrics ]
	[ -n "$(field cpu.usage_usec)" ]
	task kill "$CID" 9
	task wait "$CID"
	[ "$(field exit_status)" = 137 ]
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

# SHIM becomes a copy beside a "ward" wrapper that logs every command to
# $BATS_TEST_TMPDIR/ward-calls (the shim runs the ward beside its own executable).
shim_logging_ward() {
	local dir="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$dir"
	cp "$SHIM" "$dir/containerd-shim-ward-v2"
	printf '#!/bin/sh\necho "$*" >>%s/ward-calls\nexec %s "$@"\n' "$BATS_TEST_TMPDIR" "$WARD" >"$dir/ward"
	chmod +x "$dir/ward"
	SHIM="$dir/containerd-shim-ward-v2"
}

# logged_sleep_task NAME: a created task (sleep 600) $CID, its init's pid in $pid, served by
# the shim of shim_logging_ward.
logged_sleep_task() {
	shim_logging_ward
	make_bundle "$1" '.process.args = ["sleep", "600"]'
	task_shim "w$BATS_TEST_NUMBER-$$-$1"
	task create "$CID" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(field pid)
}

@test "task: Stats reads the cgroup in the shim process (no ward child), cpu.stat as the kernel has it" {
	logged_sleep_task t9
	task start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output"
	: >"$BATS_TEST_TMPDIR/ward-calls"
	task stats "$CID"
	[ "$status" -eq 0 ] || fail "stats: $output"
	[ "$(field type_url)" = io.containerd.cgroups.v2.Metrics ]
	[ ! -s "$BATS_TEST_TMPDIR/ward-calls" ] || fail "Stats ran ward: $(cat "$BATS_TEST_TMPDIR/ward-calls")"
	# the figures are the container's cgroup's own (cpu.stat is there in every v2 cgroup)
	cg=$CG2$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	[ -r "$cg/cpu.stat" ] || fail "no cpu.stat in $cg"
	# usage only grows: the shim's figure lies between two reads of the file around Stats
	before=$(awk '$1 == "usage_usec" {print $2}' "$cg/cpu.stat")
	task stats "$CID"
	after=$(awk '$1 == "usage_usec" {print $2}' "$cg/cpu.stat")
	got=$(field cpu.usage_usec)
	[ "${got:-0}" -ge "$before" ] && [ "${got:-0}" -le "$after" ] ||
		fail "cpu.usage_usec $got not within [$before, $after] of $cg/cpu.stat"
	task kill "$CID" 9
	task wait "$CID"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}

# containerd asks for State after every Start (twice per CRI container start): the shim
# answers from ward's state and the cgroup in its own process, as `ward state` would
@test "task: State in the shim process (no ward child): created, running, paused from outside, stopped" {
	logged_sleep_task t10
	: >"$BATS_TEST_TMPDIR/ward-calls"
	task state "$CID"
	[ "$(field status)" = created ] || fail "state before start: $output"
	task start "$CID"
	[ "$status" -eq 0 ] || fail "start: $output"
	task state "$CID"
	[ "$(field status)" = running ] || fail "state after start: $output"
	[ "$(field pid)" = "$pid" ]
	# frozen behind the shim's back (ward pause on its state root): State sees the cgroup
	"$WARD" --root "/run/containerd/ward/$NS" pause "$CID"
	task state "$CID"
	[ "$(field status)" = paused ] || fail "state after ward pause: $output"
	"$WARD" --root "/run/containerd/ward/$NS" resume "$CID"
	task state "$CID"
	[ "$(field status)" = running ] || fail "state after ward resume: $output"
	run grep -E "(^| )start $CID\$" "$BATS_TEST_TMPDIR/ward-calls"
	[ "$status" -eq 0 ] || fail "the wrapper did not log the start: $(cat "$BATS_TEST_TMPDIR/ward-calls")"
	run grep -E '(^| )state( |$)' "$BATS_TEST_TMPDIR/ward-calls"
	[ "$status" -ne 0 ] || fail "State ran ward: $output"
	task kill "$CID" 9
	task wait "$CID"
	task state "$CID"
	[ "$(field status)" = stopped ] || fail "state after the exit: $output"
	task delete "$CID"
	[ "$status" -eq 0 ]
	assert_task_gone "$CID" "$pid"
}
