#!/usr/bin/env bash
# rocegen's SRD-like transport and NCCL's split of messages over QPs, end to end through rocemu
# in the netns lab.
# 1. --transport srd through tests/e2e/srd-loss-1pct.json (1% of the SRD data packets dropped
#    each way, 1% of the SACKs): a ring all-reduce of 16 MB over 4 ranks (2 per process) on 2
#    QPs per pair completes with every byte placed and checked, and for each direction: the
#    sender's data packets = rocemu's drops + what the receiver got (+ at most a barrier
#    QP's timer retransmissions that arrived after the peer stopped); every drop was sent again
#    and nothing else but what a timer resent (retransmitted <= dropped + timeouts: no
#    go-back-N); the receiver placed packets out of order and SACKed; every data QP sprayed
#    over its 16 paths (16 UDP source ports, all used).
# 2. RC with --qps 4 --split-data-on-qps 1 through tests/e2e/loss-1pct.json (1% of the data
#    and ACKs dropped): an all-reduce of 4 MB completes, verified; every pair's 4 QPs carried
#    data, each with its own UDP source port.
# 3. Reordering without loss (tests/e2e/srd-reorder.json, jitter 30 +- 25 us): SRD places
#    out of order and resends at most 5%; RC NAKs and resends more than half of what it sends.
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEMU=$1
ROCEGEN=$2
SRC=$3
LAB_PREFIX=rs$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "SRD and split QPs through rocemu"

rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rs_$$ $("$LAB" eal) -- \
	--pipeline "$SRC/tests/e2e/srd-loss-1pct.json" --seed 11 --stats "$WORK/stats.json"
rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 2 --size 16M --iters 1 \
	--qps 2 --transport srd --srd-paths 16 --window-kb 128 --time-limit 200
sleep 0.5
rocemu_stop
echo "ok: the SRD all-reduce completed through 1% loss, every byte placed and checked"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "no OK conservation line"
python3 - "$WORK/stats.json" "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "SRD counters"
import json, sys
st = json.load(open(sys.argv[1]))
ctr = next(s["counters"] for s in st["stages"] if s["name"] == "loss")
a, b = (json.load(open(f)) for f in sys.argv[2:])
assert a["transport"] == b["transport"] == "srd"
def tot(d, k, requester):
    return sum(q[k] for q in d["qps"] if q["requester"] == requester)
for name, snd, rcv, ev in (("A -> B", a, b, "data_from_a"), ("B -> A", b, a, "data_from_b")):
    dropped = ctr["drop_" + ev]
    sent = tot(snd, "tx_data_packets", True)
    got = tot(rcv, "rx_packets", False)
    retx = tot(snd, "retransmitted_packets", True)
    holes = tot(snd, "retransmits_for_sack_holes", True)
    tmo = tot(snd, "timeouts", True)
    ooo = tot(rcv, "rx_out_of_order_packets", False)
    sacks = tot(rcv, "sacks_sent", False)
    assert dropped > 50, (name, dropped)
    assert ctr[ev + "_matched"] == sent, (name, "rocemu saw", ctr[ev + "_matched"], "sent", sent)
    # a barrier QP's last retransmission (its timer fired while the peer was busy: both
    # rocegen share a core) may reach the peer after it stopped listening
    late = sum(q["timeouts"] for q in snd["qps"] if q["requester"] and q["tx_data_packets"] < 100)
    assert dropped + got <= sent <= dropped + got + late, (name, sent, dropped, got, late)
    assert dropped <= retx <= dropped + tmo, (name, "retransmitted", retx, dropped, tmo)
    assert ooo > 0 and sacks > 0, (name, ooo, sacks)
    for q in snd["qps"]:
        if q["requester"] and q["tx_data_packets"] > 1000:
            p = q["path_packets"]
            assert len(p) == 16 and min(p) > 0 and sum(p) == q["tx_data_packets"], (name, q)
    print("ok: %s: %d data packets sent = %d dropped by rocemu + %d received; %d retransmitted "
          "(%d for SACK holes, %d timeouts), %d placed out of order, %d SACKs"
          % (name, sent, dropped, got, retx, holes, tmo, ooo, sacks))
print("ok: rocemu dropped %d of %d SACKs" % (ctr["drop_sacks"], ctr["sacks_matched"]))
PY
grep -A2 "size(B)" "$WORK/a.out"
grep "path_packets" "$WORK/a.out" | head -n 2

rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rs_$$ $("$LAB" eal) -- \
	--pipeline "$SRC/tests/e2e/loss-1pct.json" --seed 12 --stats "$WORK/stats.json"
rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 2 --size 4M --iters 1 \
	--qps 4 --split-data-on-qps 1 --window-kb 64 --timeout 15 --time-limit 200
sleep 0.5
rocemu_stop
echo "ok: the RC all-reduce with 4 QPs per pair, messages split over them, completed"
python3 - "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "split QPs"
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["transport"] == "rc" and d["split_data_on_qps"] == 1 and d["qps_per_pair"] == 4
    data = [q for q in d["qps"] if q["requester"] and q["tx_data_packets"] > 0 and
            q["tx_data_packets"] > 10]
    ports = {q["udp_sport"] for q in data}
    # the ring 0 -> 1 -> 2 -> 3 -> 0 crosses processes once each way: one pair, 4 QPs
    assert len(data) == 4, (f, len(data))
    assert len(ports) == len(data), (f, "UDP source ports", sorted(ports))
    print("ok: %s: %d data QPs, %d distinct UDP source ports, %d retransmitted" %
          (f.split("/")[-1], len(data), len(ports),
           sum(q["retransmitted_packets"] for q in data)))
PY
grep -A2 "size(B)" "$WORK/a.out"

# 3. Reordering, no loss (tests/e2e/srd-reorder.json: every data packet delayed 30 +- 25 us,
#    the jitter reorders): SRD places most packets out of order and resends almost nothing;
#    RC (the responder drops what is out of sequence, NAKs, the requester goes back N) resends
#    more than half of what it sends. RC runs a smaller size: it crawls.
rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rs_$$ $("$LAB" eal) -- \
	--pipeline "$SRC/tests/e2e/srd-reorder.json" --seed 13
rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 2 --size 4M --iters 1 \
	--transport srd --window-kb 128 --time-limit 200
cp "$WORK/a.json" "$WORK/srd_a.json"
grep -A1 "size(B)" "$WORK/a.out" | tail -n 1
rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 2 --size 1M --iters 1 \
	--window-kb 128 --timeout 12 --time-limit 200
grep -A1 "size(B)" "$WORK/a.out" | tail -n 1
sleep 0.5
rocemu_stop
python3 - "$WORK/srd_a.json" "$WORK/a.json" <<'PY' || fail "reordering: SRD vs RC"
import json, sys
s, r = (json.load(open(f)) for f in sys.argv[1:])
def tot(d, k, requester):
    return sum(q[k] for q in d["qps"] if q["requester"] == requester)
s_data, s_retx = tot(s, "tx_data_packets", True), tot(s, "retransmitted_packets", True)
s_ooo = tot(s, "rx_out_of_order_packets", False)
r_data, r_retx = tot(r, "tx_data_packets", True), tot(r, "retransmitted_packets", True)
r_naks = tot(r, "naks_sent", False)
assert s_ooo > s_data / 10, ("SRD out of order", s_ooo, s_data)
assert s_retx <= s_data / 20, ("SRD resent", s_retx, s_data)
assert r_naks > 0 and r_retx > (r_data - r_retx) / 2, ("RC", r_naks, r_retx, r_data)
print("ok: reordering: SRD %d data packets (%d resent), %d of those it received placed out of "
      "order; RC %d data packets, %d of them resent (go-back-N after %d NAKs)"
      % (s_data, s_retx, s_ooo, r_data, r_retx, r_naks))
PY
echo "PASS"
