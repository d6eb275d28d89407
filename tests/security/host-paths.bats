#!/usr/bin/env bats
# Host paths a pod names (root.path, bind-mount sources, linux.namespaces[].path) are opened
# once when the spec is checked; what is checked is the object the fd holds, and that fd is
# what create mounts or joins (runtime/lib/hostfds.c). Each test has its own configuration
# directory and ID pool: the built-in default tenant, or tenants in tenants.d.

WARD_CONFIG=
: "${WARD:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/ward}"
: "${WARD_TEST_BIN:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/tests}"
load ../helpers

suite_setup() {
	CONF="$BATS_TEST_TMPDIR/conf"
	LIB="$BATS_TEST_TMPDIR/lib"
	mkdir -p "$CONF/tenants.d"
	printf '{"lib_dir": "%s"}\n' "$LIB" >"$CONF/ward.json"
	export WARD_CONFIG=$CONF
}

# tenant NAME JSON: write tenants.d/NAME.json
tenant() {
	printf '%s\n' "$2" >"$CONF/tenants.d/$1.json"
}

# A busybox root outside the bundle, as a stand-in for /etc/cron.d or /usr/local/bin: a
# directory root owns on the host, which an idmapped root would give to the pod's root.
outside_root() {
	OUTSIDE="$BATS_TEST_TMPDIR/host-dir"
	cp -a "$ROOTFS_CACHE" "$OUTSIDE"
	rm -f "$OUTSIDE/.done"
}

# refused ID: create fails at once with one line, leaves nothing, and gives back the ID slice
refused() {
	ward_capture --merged create -b "$BUNDLE" "$1"
	[ "$status" -ne 0 ] || fail "create succeeded: $output"
	assert_one_line "$output"
	assert_nothing_left "$1"
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "root.path: a host directory outside the bundle is refused, naming the tenant and the rule" {
	outside_root
	make_bundle b '.root.path = $p' --arg p "$OUTSIDE"
	id=$(cid c)
	refused "$id"
	assert_output --partial "tenant \"default\": root_paths: root.path $OUTSIDE is $OUTSIDE"
	assert_output --partial "neither inside the bundle"
	# nothing of the host directory was given to the pod's range
	[ "$(stat -c %u "$OUTSIDE/bin/busybox")" = 0 ]
}

@test "root.path: a symlink inside the bundle to a host directory is refused by what it is" {
	outside_root
	make_bundle b '.root.path = "rootlink"'
	ln -s "$OUTSIDE" "$BUNDLE/rootlink"
	id=$(cid c)
	refused "$id"
	assert_output --partial "tenant \"default\": root_paths: root.path rootlink is $OUTSIDE"
}

@test "root.path: a root under the tenant's root_paths is accepted (CRI-O, podman)" {
	outside_root
	tenant rp "$(jq -nc --arg p "$BATS_TEST_TMPDIR" '{root_paths: [$p]}')"
	make_bundle b '.root.path = $p | .annotations["ward.dev/tenant"] = "rp"' --arg p "$OUTSIDE"
	set_cmd 'echo root-ok; id -u'
	run_container
	assert_success
	assert_output $'root-ok\n0'
	# another tenant, the same root: refused
	make_bundle c '.root.path = $p' --arg p "$OUTSIDE"
	refused "$(cid d)"
	assert_output --partial "root_paths"
}

@test "bind source swapped with a symlink (RENAME_EXCHANGE loop): a pod never gets what it swaps in" {
	local allowed="$BATS_TEST_TMPDIR/allowed" secret="$BATS_TEST_TMPDIR/secret" text
	local bound=0 failed=0 swapper try
	[ -x "$WARD_TEST_BIN/swap-loop" ] || fail "build it: make $WARD_TEST_BIN/swap-loop"
	text="ward-secret-$RANDOM$RANDOM"
	mkdir -p "$allowed/data" "$secret"
	echo "allowed" >"$allowed/data/marker"
	echo "$text" >"$secret/secret"
	chmod 0700 "$secret"
	chmod 0600 "$secret/secret"
	ln -s "$secret" "$allowed/link"
	tenant hp "$(jq -nc --arg p "$allowed" '{host_paths: [$p]}')"
	make_bundle b '.annotations["ward.dev/tenant"] = "hp"'
	mkdir -p "$BUNDLE/rootfs/data"
	add_mount "$(jq -nc --arg s "$allowed/data" '{destination: "/data", type: "bind", source: $s, options: ["rbind", "rw"]}')"
	set_cmd 'cat /data/marker /data/secret 2>/dev/null; true'
	"$WARD_TEST_BIN/swap-loop" "$allowed/data" "$allowed/link" </dev/null >/dev/null 2>&1 3>&- &
	swapper=$!
	on_teardown "kill $swapper"
	# (not "i": bats' own helpers assign a global i)
	for ((try = 0; try < 40; try++)); do
		run_container
		[[ "$output$stderr" != *"$text"* ]] || fail "try $try: the pod read the secret: $output"
		if [ "$status" -eq 0 ]; then
			[ "$output" = allowed ] || fail "try $try: /data is not the allowed dir: $output"
			bound=$((bound + 1))
		else
			# the fd held the symlink's target: the policy refuses what it is
			[[ "$stderr" == *"host_paths: mounts["*"source $secret is not under an allowed host path"* ]] ||
				fail "try $try: unexpected failure: $stderr"
			failed=$((failed + 1))
		fi
	done
	kill "$swapper"
	echo "bound the allowed dir $bound times, refused $failed times" >&3
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "namespace path: a FIFO is refused at once, naming the path; nothing is left" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	make_bundle b
	set_ns network "$BATS_TEST_TMPDIR/fifo"
	id=$(cid c)
	status=0
	env WARD_TEST_TAG="$TAG" timeout 10 "$WARD" --root "$STATE" create -b "$BUNDLE" "$id" \
		</dev/null >"$BATS_TEST_TMPDIR/create.out" 2>&1 3>&- || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/create.out")
	[ "$status" -ne 124 ] || fail "create hung on the FIFO"
	[ "$status" -ne 0 ] || fail "create succeeded: $output"
	assert_one_line "$output"
	assert_output --regexp "linux\.namespaces\[[0-9]+\] \(network\): $BATS_TEST_TMPDIR/fifo is not a namespace file"
	assert_nothing_left "$id"
	[ -z "$(pool_owners)" ] || fail "ID pool not empty: $(pool_owners)"
}

@test "namespace path: /dev/kmsg, a regular file, a directory are refused before they are opened" {
	local p id n=0
	echo x >"$BATS_TEST_TMPDIR/file"
	for p in /dev/kmsg "$BATS_TEST_TMPDIR/file" "$BATS_TEST_TMPDIR"; do
		n=$((n + 1))
		make_bundle "b$n"
		set_ns network "$p"
		id=$(cid "c$RANDOM")
		refused "$id"
		assert_output --partial "(network): $p is not a namespace file"
	done
}

@test "namespace path: a namespace of another kind is refused, naming it" {
	make_bundle b
	set_ns network /proc/self/ns/uts
	refused "$(cid c)"
	assert_output --partial "/proc/self/ns/uts is not a network namespace"
}

@test "a bundle on a shared mount (systemd's default): the container runs, none of its mounts reaches the host" {
	local shr="$BATS_TEST_TMPDIR/shared-mnt" id
	mkdir -p "$shr"
	mount -t tmpfs tmpfs "$shr"
	on_teardown "umount -R -l '$shr'"
	mount --make-shared "$shr"
	chmod 0755 "$shr"
	# the root (idmapped on the host side) is a slave of the host's mount, never a peer:
	# the container's /proc, /dev, ... mounted on it do not propagate back
	make_bundle shared-mnt/b
	set_args sleep 1000
	id=$(cid c)
	start_container "$id"
	[ "$(status_of "$id")" = running ]
	! grep -F "$shr/b/rootfs/" /proc/self/mountinfo || fail "container mounts on the host"
	ward delete -f "$id"
	! grep -F "$shr/b/rootfs/" /proc/self/mountinfo || fail "container mounts left on the host"
}
