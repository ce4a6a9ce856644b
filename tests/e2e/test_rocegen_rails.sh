#!/usr/bin/env bash
# rocegen with one port per rail: two processes x 2 ranks, each with two net_memif ports (rail
# r of one process wired to rail r of the other, as NIC r of every server goes to leaf r), rank
# i on port i. Every run verifies every byte. Asserts, from the per-port JSON:
#  - ring all-reduce, --pxn 0: the node-crossing hop (rank 1 -> the next node's rank 0) leaves
#    by rail 1 and crosses rails: all data payload on rail 1, counted as cross-rail;
#  - the same with --pxn 1: the hop goes through rank 0 of the sender's node (NCCL's PXN), so
#    all data payload leaves by rail 0, counted as PXN, none across rails;
#  - hier all-reduce (the inter-node phase per rail), --pxn 1: both rails carry data, nothing
#    crosses rails or is relayed;
#  - with the node model (--nics 2, PCIe 3.0 x8): each port is paced at the model's host cap
#    per NIC, not at 2x it (one port alone carries both NICs' share: rocegen-node-rate checks
#    that rate);
#  - two lcores per process (--workers 2): the same hier run; both shards send, both rails
#    carry data.
# The pairs are run by tests/e2e/memif_pair.sh, which runs one again when memif fails it the
# PMD's way (a death after the report, a link that never comes up, a hang).
set -u
ROCEGEN=$1
P=rgr$$
WORK=$(mktemp -d)
. "$(dirname "$0")/memif_pair.sh"
trap 'rm -rf "$WORK" /var/run/dpdk/${P}*' EXIT
fail() {
	echo "FAIL: $*"
	for s in a b; do [ -f "$WORK/$s.out" ] && sed "s/^/  rocegen-$s| /" "$WORK/$s.out"; done
	exit 1
}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: rocegen rails need root (DPDK EAL); NOT TESTED"
	exit 77
fi

# pair LCORES_A LCORES_B ARGS...: the two processes over two memif pairs (memif_pair.sh);
# both must exit 0 and verify every byte
pair() {
	local s
	memif_pair 2 "$@" --ranks 2
	[ $ra -eq 0 ] && [ $rb -eq 0 ] || fail "${*:3}: exit $ra/$rb"
	for s in a b; do
		grep -Eq "verify [0-9]+ bytes: data ok, ([0-9]+) of \1 bytes placed" "$WORK/$s.out" ||
			fail "${*:3}: process $s did not verify every byte"
	done
}

# check MODE: the JSON of both processes against MODE's expectations
check() {
	python3 - "$1" "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "$1: JSON checks"
import json, sys
mode = sys.argv[1]
for f in sys.argv[2:]:
    d = json.load(open(f))
    p = d["ports"]
    assert [x["rail"] for x in p] == [0, 1], p
    pay = [x["tx_bytes"] for x in p]
    cross = sum(x["cross_rail_payload_bytes"] for x in p)
    pxn = sum(x["pxn_payload_bytes"] for x in p)
    wire = d["wire_bytes_posted"]
    if mode == "ring":
        assert cross == wire and pxn == 0 and p[1]["cross_rail_payload_bytes"] == wire, p
        assert pay[0] < wire / 100, p  # rail 0: ARP, ACKs and barriers only
    elif mode == "pxn":
        assert cross == 0 and pxn == wire and p[0]["pxn_payload_bytes"] == wire, p
        assert pay[1] < wire / 100, p
    elif mode in ("hier", "workers"):
        assert cross == 0 and pxn == 0, p
        assert min(pay) > wire / 3, p  # both rails carry about half
    elif mode == "node":
        caps = d["host_cap_gbps"]  # one per NIC
        assert len(caps) == 2 and max(caps) < 90, caps  # PCIe 3.0 x8 below the 100G line
        for x in p:
            assert abs(x["paced_gbps"] - caps[x["rail"]]) < 0.01 * caps[x["rail"]], (x, caps)
    if mode == "workers":
        w = d["workers"]
        assert len(w) == 2 and all(x["tx_packets"] > 1000 for x in w), w
    print("ok: %s: %s: rail bytes %s, cross-rail %d, PXN %d, wire payload %d" % (
        mode, f.split("/")[-1], pay, cross, pxn, wire))
PY
}

A=(--test allreduce --size 4M --iters 2)
pair 0 1 "${A[@]}" --pxn 0
check ring
pair 0 1 "${A[@]}" --pxn 1
check pxn
pair 0 1 "${A[@]}" --algo hier --pxn 1
check hier
pair 0 1 "${A[@]}" --algo hier --nics 2 --gpus 2 --pcie 3x8
check node
pair 0,1 0,1 "${A[@]}" --algo hier --workers 2 --poll-yield
check workers
grep "^# rail" "$WORK/a.out"
echo "PASS"
