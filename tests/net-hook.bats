#!/usr/bin/env bats
# ward-net-hook (hooks/net*.c): the debug network for bundles run by hand. Every test works in
# a network namespace of its own ($NS, standing in for the host's) on a test-only subnet, with
# its own state dir, so nothing touches the real host network.

load helpers

SUBNET=10.203.77.0/24
GW=10.203.77.1
BRIDGE=wt0

suite_setup() {
	NET_HOOK=${WARD_NET_HOOK:-$(dirname "$WARD")/ward-net-hook}
	[ -x "$NET_HOOK" ] || fail "ward-net-hook not built: $NET_HOOK (make)"
	NS="wnt-$BATS_TEST_NUMBER-$$"
	ip netns add "$NS"
	on_teardown "ip netns del $NS"
	NETSTATE="$BATS_TEST_TMPDIR/netstate"
}

# hook_json up|down: one hook entry running ward-net-hook against $NS.
hook_json() {
	jq -nc --arg p "$NET_HOOK" --arg c "$1" --arg b "$BRIDGE" --arg s "$SUBNET" \
		--arg ns "/run/netns/$NS" --arg d "$NETSTATE" \
		'{path: $p, args: [$p, $c, "--bridge", $b, "--subnet", $s, "--host-netns", $ns,
			"--state-dir", $d], timeout: 20}'
}

# net_bundle NAME: a bundle with the hooks (createRuntime up, poststop down) and CAP_NET_RAW
# (busybox ping opens a raw socket).
net_bundle() {
	make_bundle "$1"
	config_edit '.hooks.createRuntime = [$up] | .hooks.poststop = [$down]
		| .process.capabilities |= with_entries(.value += ["CAP_NET_RAW"])' \
		--argjson up "$(hook_json up)" --argjson down "$(hook_json down)"
}

# The IPv4 address of eth0 in a running container.
container_addr() {
	ward exec "$1" ip -4 -o addr show eth0 | sed -n 's|.* inet \([0-9.]*\)/.*|\1|p'
}

# Host-side ends of the hook's veth pairs in $NS.
wv_links() { ip -n "$NS" -o link show | awk -F': ' '$2 ~ /^wv/ { sub(/@.*/, "", $2); print $2 }'; }

# The leases recorded for the bridge (empty once everything is down).
leases() { jq -r '.leases // {} | to_entries[] | "\(.key) \(.value)"' "$NETSTATE/$BRIDGE.json" 2>/dev/null; }

@test "net-hook: eth0 has the first free address, a default route and reaches the bridge" {
	net_bundle b
	set_cmd "ip -4 -o addr show eth0; ip route; ping -c1 -W3 $GW"
	run_container
	assert_success
	assert_output --partial "inet 10.203.77.2/24"
	assert_output --partial "default via $GW dev eth0"
	assert_output --partial "1 packets received"
	# run deleted the container (poststop ran): nothing is left in $NS
	run ward state "$ID"
	assert_failure
	[ -z "$(wv_links)" ] || fail "links left: $(wv_links)"
	[ -z "$(leases)" ] || fail "leases left: $(leases)"
	run ip -n "$NS" link show "$BRIDGE"
	assert_failure
}

@test "net-hook: the host side reaches the container; delete removes the link and frees the address" {
	net_bundle b
	set_cmd 'exec sleep 1000'
	id=$(cid a)
	run_detached "$id"
	addr=$(container_addr "$id")
	assert_equal "$addr" 10.203.77.2
	[ -n "$(wv_links)" ]
	# the bridge lives in $NS, with the subnet's first address
	run ip -n "$NS" -4 -o addr show "$BRIDGE"
	assert_output --partial "inet $GW/24"
	run ip -n "$NS" -o link show master "$BRIDGE"
	assert_output --regexp 'wv[0-9a-f]{12}'
	run ip netns exec "$NS" busybox ping -c1 -W3 "$addr"
	assert_success
	assert_output --partial "1 packets received"
	assert_equal "$(leases)" "$id 10.203.77.2"

	ward kill "$id" KILL
	wait_status "$id" stopped
	ward delete "$id"
	[ -z "$(wv_links)" ] || fail "links left after delete: $(wv_links)"
	[ -z "$(leases)" ] || fail "leases left after delete: $(leases)"
	# the hook created the bridge, so the last down removed it
	run ip -n "$NS" link show "$BRIDGE"
	assert_failure
	# the address is free again: the next container gets it
	id2=$(cid again)
	run_detached "$id2"
	assert_equal "$(container_addr "$id2")" 10.203.77.2
	ward delete -f "$id2"
	[ -z "$(wv_links)" ]
}

@test "net-hook: two containers at once get different addresses and reach each other" {
	net_bundle b
	set_cmd 'exec sleep 1000'
	a=$(cid a)
	b=$(cid b)
	run_detached "$a"
	run_detached "$b"
	addr_a=$(container_addr "$a")
	addr_b=$(container_addr "$b")
	[ -n "$addr_a" ] && [ -n "$addr_b" ]
	[ "$addr_a" != "$addr_b" ] || fail "both containers got $addr_a"
	run ward exec "$a" ping -c1 -W3 "$addr_b"
	assert_success
	assert_output --partial "1 packets received"
	run ward exec "$b" ping -c1 -W3 "$addr_a"
	assert_success
	assert_equal "$(wv_links | wc -l)" 2
	ward delete -f "$a"
	# one port left: the bridge stays, b still reaches the gateway
	assert_equal "$(wv_links | wc -l)" 1
	run ward exec "$b" ping -c1 -W3 "$GW"
	assert_success
	ward delete -f "$b"
	[ -z "$(wv_links)" ]
	run ip -n "$NS" link show "$BRIDGE"
	assert_failure
}

@test "net-hook: concurrent ups never hand out one address twice" {
	local n=12 i pids=() ids=() hooks=()
	for ((i = 0; i < n; i++)); do
		unshare -n sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
		pids+=($!)
		on_teardown "kill -9 $!"
		ids+=("conc-$i-$$")
	done
	sleep 0.3 # unshare has exec'd sleep in its new netns
	for ((i = 0; i < n; i++)); do
		printf '{"id":"%s","pid":%d}' "${ids[i]}" "${pids[i]}" |
			"$NET_HOOK" up --bridge "$BRIDGE" --subnet "$SUBNET" --host-netns "/run/netns/$NS" \
				--state-dir "$NETSTATE" 2>"$BATS_TEST_TMPDIR/up-$i.err" &
		hooks+=($!)
	done
	wait "${hooks[@]}"
	for ((i = 0; i < n; i++)); do
		[ ! -s "$BATS_TEST_TMPDIR/up-$i.err" ] || fail "up $i: $(cat "$BATS_TEST_TMPDIR/up-$i.err")"
		nsenter -t "${pids[i]}" -n ip -4 -o addr show eth0 | sed -n 's|.* inet \([0-9.]*\)/.*|\1|p'
	done >"$BATS_TEST_TMPDIR/addrs"
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/addrs")" "$n"
	assert_equal "$(sort -u "$BATS_TEST_TMPDIR/addrs" | wc -l)" "$n"
	assert_equal "$(leases | wc -l)" "$n"
	assert_equal "$(wv_links | wc -l)" "$n"
	hooks=()
	for ((i = 0; i < n; i++)); do
		printf '{"id":"%s","pid":0}' "${ids[i]}" |
			"$NET_HOOK" down --bridge "$BRIDGE" --host-netns "/run/netns/$NS" \
				--state-dir "$NETSTATE" &
		hooks+=($!)
	done
	wait "${hooks[@]}"
	[ -z "$(wv_links)" ] || fail "links left: $(wv_links)"
	[ ! -e "$NETSTATE/$BRIDGE.json" ] || fail "state left: $(cat "$NETSTATE/$BRIDGE.json")"
	run ip -n "$NS" link show "$BRIDGE"
	assert_failure
}

@test "net-hook: down of an unknown container succeeds and leaves a foreign bridge alone" {
	ip -n "$NS" link add "$BRIDGE" type bridge
	run "$NET_HOOK" down --bridge "$BRIDGE" --host-netns "/run/netns/$NS" --state-dir "$NETSTATE" \
		<<<'{"id":"never-seen","pid":0}'
	assert_success
	# not created by the hook: kept
	ip -n "$NS" link show "$BRIDGE"
}

@test "net-hook: a container sharing the host network namespace is refused" {
	net_bundle b
	drop_ns network
	set_cmd 'true'
	run_container
	assert_failure
	grep -F "ward-net-hook: up \"$ID\": the container shares the host's network namespace" <<<"$stderr" ||
		fail "no refusal from the hook in: $stderr"
	[ -z "$(wv_links)" ]
	[ -z "$(leases)" ]
}

@test "net-hook: bad options are one-line errors" {
	run --separate-stderr "$NET_HOOK" up --subnet 10.203.77.1/24 <<<'{"id":"x","pid":1}'
	assert_failure
	assert_one_line "$stderr"
	assert_equal "$stderr" 'ward-net-hook: up "x": subnet "10.203.77.1/24": host bits are set'
	run --separate-stderr "$NET_HOOK" sideways
	assert_failure
	run --separate-stderr "$NET_HOOK" up --bridge "a/b" <<<'{"id":"x","pid":1}'
	assert_failure
	assert_one_line "$stderr"
}
