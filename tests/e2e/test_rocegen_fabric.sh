#!/usr/bin/env bash
# rocegen's ring all-reduce through the emulated fabrics in the netns lab (real frames over
# veth, rocemu live on net_af_packet):
#   ecmp     pipelines/ecmp-4x25.json: the collective completes, every byte placed and checked,
#            conservation holds, and every frame from p0 crossed one of leaf0's four uplinks;
#   spray    pipelines/spray-4x25.json (per-packet round robin, reorder stage before each NIC):
#            all four uplinks carry traffic, the reorder stage fills every hole before its
#            timeout and the receivers send no NAK for reordering (the reorder stage put every
#            QP back in PSN order);
#   noreorder the same spraying without the reorder stage: the RC receivers see the reordering
#            of the 2/4/6/8 us paths, NAK it and the senders go back N, and the collective
#            still completes.
# A fourth argument names the variants to run (default all three).
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEMU=$1
ROCEGEN=$2
SRC=$3
VARIANTS=${4:-ecmp spray noreorder}
LAB_PREFIX=rf$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "rocegen through the emulated fabrics"
ARGS=(--test allreduce --ranks 2 --size 4M --iters 1 --timeout 15 --time-limit 200)
python3 - "$SRC/pipelines/spray-4x25.json" "$WORK/noreorder.json" <<'PY'
import json, sys
pl = json.load(open(sys.argv[1]))
pl["egress"] = []
pl["description"] = "spray-4x25.json without its reorder stage"
json.dump(pl, open(sys.argv[2], "w"))
PY
for v in $VARIANTS; do
	case $v in
	ecmp) pl=$SRC/pipelines/ecmp-4x25.json ;;
	spray) pl=$SRC/pipelines/spray-4x25.json ;;
	noreorder) pl=$WORK/noreorder.json ;;
	esac
	rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rf_$$ $("$LAB" eal) -- \
		--pipeline "$pl" --seed 7 --stats "$WORK/stats.json"
	rocegen_pair 198.18.0.11 198.18.0.21 "${ARGS[@]}"
	sleep 0.5
	rocemu_stop
	grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "$v: no OK conservation line"
	python3 - "$v" "$WORK/stats.json" "$WORK/a.json" "$WORK/b.json" <<'PY' || fail "$v: checks"
import json, sys
v = sys.argv[1]
st = json.load(open(sys.argv[2]))
a, b = (json.load(open(f)) for f in sys.argv[3:])
links = {l["name"]: l["counters"]["routed"] for l in st["fabric"]["links"]}
up = [links["leaf0-spine%d" % k] for k in range(4)]
p0 = next(p for p in st["ports"] if p["name"] == "p0")
consumed = st["runner"]["consumed_mac_control"]
naks = sum(q["naks_sent"] for d in (a, b) for q in d["qps"] if not q["requester"])
gbn = sum(q["retransmitted_packets"] for d in (a, b) for q in d["qps"] if q["requester"])
assert sum(up) > 0 and sum(up) <= p0["rx_pkts"], (v, up, p0["rx_pkts"])
if v == "ecmp":
    # one path per flow: the 4 data QPs (2 each way) on at most 2 uplinks from leaf0
    assert sum(1 for n in up if n > 100) <= 2, (v, up)
else:
    assert all(n > 100 for n in up), (v, "spraying uses every uplink", up)
if v == "spray":
    ro = next(s for s in st["stages"] if s["type"] == "reorder")["counters"]
    # every hole filled before its timeout; a NAK or two may still come from a frame the
    # loaded lab's veth lost between rocemu and rocegen (not reordering: no timeout)
    assert ro["held"] > 0 and ro["timeouts"] == 0 and naks <= 5, (v, ro, naks)
    print("ok: spray: uplinks %s, reorder held %d, NAKs %d" % (up, ro["held"], naks))
elif v == "noreorder":
    assert naks > 0 and gbn > 0, (v, "RC NAKs the reordering", naks, gbn)
    print("ok: noreorder: uplinks %s, %d NAKs, %d packets resent (go-back-N)" % (up, naks, gbn))
else:
    print("ok: ecmp: uplinks %s, NAKs %d" % (up, naks))
PY
	grep -A1 "size(B)" "$WORK/a.out" | tail -1 | sed "s/^/$v: /"
done
echo "PASS"
