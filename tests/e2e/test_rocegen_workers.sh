#!/usr/bin/env bash
# rocegen --workers 2: two shards per process, each on its own lcore, RX and TX queue and QPs,
# running the collective on half of each size.
#  1. Over a net_memif pair (queue k of one end is queue k of the other), --poll-yield (four
#     lcores on two CPUs here): a ring all-reduce of
#     2 processes x 2 ranks with 2 QPs per pair, two sizes. Both processes verify every byte
#     in both shards; each row's size is the whole size (the shards' parts add up); both
#     shards received and sent, and no frame crossed between them after start-up; shard 1's QPs
#     carry QP numbers above shard 0's span and carried data.
#  2. Over a veth pair with net_af_packet qpairs=2 (the kernel's fanout hash picks the queue,
#     not the QP's shard), --poll-yield and --timeout 18 (1 s: under ThreadSanitizer a shard
#     may wait that long for a CPU): a point-to-point exchange with 2 QPs per pair. Every byte verified;
#     frames did cross between shards, and every frame handed off was taken by its shard
#     (handoff_in = handoff_out, nothing dropped).
# (PFC: e2e-rocegen-loop-pfc-rg2 checks that a pause frame received by one shard stops all.)
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
# With a second argument "af_packet", only part 2 (scripts/tsan.sh: memif's control thread
# races inside DPDK's own uninstrumented code, which TSan cannot tell from ours).
set -u
ROCEGEN=$1
PARTS=${2:-all}
P=rgw$$
WORK=$(mktemp -d)
. "$(dirname "$0")/memif_pair.sh"
NS_A=$P-a
NS_B=$P-b
EAL=(--lcores 0,1 --no-huge -m 1024 --no-pci)

cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$WORK" /var/run/dpdk/${P}*
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for s in a b; do [ -f "$WORK/$s.out" ] && sed "s/^/  rocegen-$s| /" "$WORK/$s.out"; done
	exit 1
}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: rocegen --workers needs root (DPDK EAL, namespaces); NOT TESTED"
	exit 77
fi

# verified NAME: both processes verified every byte in both shards
verified() {
	local s n
	for s in a b; do
		n=$(grep -Ec "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed.*\[shard [01] of 2\]" \
			"$WORK/$s.out")
		[ "$n" -ge 2 ] || fail "$1: process $s: $n shard verifications, wanted one per shard and size"
	done
	echo "ok: $1: both processes done, every byte placed and checked in both shards"
}

if [ "$PARTS" = all ]; then
# 1. memif (memif_pair.sh runs a pair again when memif fails it the PMD's way)
memif_pair 1 0,1 0,1 --ranks 2 --qps 2 --test allreduce -b 2M -e 4M --iters 2 --mtu 4096 \
	--workers 2 --poll-yield
[ $ra -eq 0 ] && [ $rb -eq 0 ] || fail "memif: exit $ra/$rb"
verified memif
python3 - "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "memif: JSON checks"
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert [r["size"] for r in d["results"]] == [2 << 20, 4 << 20], d["results"]
    w = d["workers"]
    assert len(w) == 2 and [x["queue"] for x in w] == [0, 1], w
    for x in w:
        assert x["rx_packets"] > 1000 and x["tx_packets"] > 1000, w
        # queue k meets queue k: only what came while shard 0 alone polled every queue at
        # start-up (before the peers were known) crossed
        assert x["handoff_out"] <= 64 and x["handoff_dropped"] == 0, w
    q0 = [q for q in d["qps"] if q["shard"] == 0]
    q1 = [q for q in d["qps"] if q["shard"] == 1]
    assert len(q0) == len(q1) > 0, (len(q0), len(q1))
    assert min(q["qpn"] for q in q1) > max(q["qpn"] for q in q0), "QPNs overlap"
    for qs in (q0, q1):
        assert sum(q["tx_payload_bytes"] for q in qs if q["requester"]) > 2 << 20, qs
    print("ok: memif: %s: rows of the whole size, shards rx/tx %s, handoffs %s, QPNs 0x%x.. "
          "and 0x%x.." % (f.split("/")[-1], [(x["rx_packets"], x["tx_packets"]) for x in w],
                          [x["handoff_out"] for x in w], min(q["qpn"] for q in q0),
                          min(q["qpn"] for q in q1)))
PY

fi

# 2. af_packet, two queue pairs
if ! ip netns add "$NS_A" 2>/dev/null; then
	echo "FAIL: cannot create a network namespace (ip netns): the af_packet half NOT TESTED"
	exit 1
fi
ip netns add "$NS_B" || fail "cannot create namespace $NS_B"
ip link add "${P}a" type veth peer name "${P}b" || fail "cannot create a veth pair"
ip link set "${P}a" netns "$NS_A"
ip link set "${P}b" netns "$NS_B"
for s in a b; do
	ip netns exec "$P-$s" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$P-$s" ip link set "$P$s" up
done
ip netns exec "$NS_A" "$ROCEGEN" "${EAL[@]}" --file-prefix=${P}aa \
	--vdev="net_af_packet0,iface=${P}a,framecnt=2048,qpairs=2" -- \
	--ip 198.18.0.1 --peer-ip 198.18.0.11 --test p2p --qps 2 --size 4M --iters 3 --workers 2 \
	--timeout 18 --poll-yield \
	--json "$WORK/a.json" >"$WORK/a.out" 2>&1 &
pa=$!
ip netns exec "$NS_B" "$ROCEGEN" "${EAL[@]}" --file-prefix=${P}ab \
	--vdev="net_af_packet0,iface=${P}b,framecnt=2048,qpairs=2" -- \
	--ip 198.18.0.11 --peer-ip 198.18.0.1 --test p2p --qps 2 --size 4M --iters 3 --workers 2 \
	--timeout 18 --poll-yield \
	--json "$WORK/b.json" >"$WORK/b.out" 2>&1 &
pb=$!
wait $pa || { wait $pb; fail "af_packet: rocegen A exited non-zero"; }
wait $pb || fail "af_packet: rocegen B exited non-zero"
verified af_packet
python3 - "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "af_packet: JSON checks"
import json, sys
crossed = 0
for f in sys.argv[1:]:
    d = json.load(open(f))
    w = d["workers"]
    assert d["results"][0]["size"] == 4 << 20, d["results"]
    assert sum(x["handoff_in"] for x in w) == sum(x["handoff_out"] for x in w), w
    assert all(x["handoff_dropped"] == 0 for x in w), w
    crossed += sum(x["handoff_out"] for x in w)
    print("ok: af_packet: %s: shards rx %s, handed off out/in %s" % (
        f.split("/")[-1], [x["rx_packets"] for x in w],
        [(x["handoff_out"], x["handoff_in"]) for x in w]))
assert crossed > 0, "no frame landed on another shard's queue: the handoff path was not exercised"
PY
grep -A2 "size(B)" "$WORK/a.out"
echo "PASS"
