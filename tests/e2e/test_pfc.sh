#!/usr/bin/env bash
# End to end in the netns lab: a flood of DSCP 26 (priority 3, lossless) frames from A
# through a 1 Gb/s emulated link makes rocemu send 802.1Qbb PFC frames back out of the port
# towards A; a packet socket in A's namespace must see them, with the configured pause time,
# exactly as many as rocemu says it sent.
set -u
ROCEMU=$1
SRC=$2
LAB_PREFIX=rp$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "the end-to-end PFC lab"

rocemu_start -l 0-1 --no-huge --no-pci -m 1024 --file-prefix=rp_$$ $("$LAB" eal) -- \
	--pipeline "$SRC/tests/e2e/pfc-1g.json" --stats "$WORK/stats.json"
grep -q "^rocemu: port p0 .*PFC" "$WORK/rocemu.out" || fail "no PFC capability line for p0"

# The sniffer counts until rocemu (which sends the frames) has stopped, then 0.5 s more.
ip netns exec "$NS_A" python3 "$SRC/scripts/lab/sniff.py" eth0 120 "$WORK/stop" >"$WORK/sniff" &
SNIFF=$!
for _ in $(seq 50); do grep -q ready "$WORK/sniff" && break; sleep 0.1; done
# ARP first (paced), then the flood: 20000 x 1400 B with TOS 106 (DSCP 26, ECT(0)).
ip netns exec "$NS_A" ping -c 1 -W 2 "$IP_B" >/dev/null || fail "ping A -> B"
ip netns exec "$NS_A" python3 "$SRC/scripts/lab/udp.py" send "$IP_B" 4791 20000 1400 106 0 \
	>/dev/null || fail "sender"
rocemu_stop
touch "$WORK/stop"
wait $SNIFF
cat "$WORK/sniff"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "no OK conservation line"
python3 - "$WORK/stats.json" "$WORK/sniff" <<'PY' || fail "PFC checks"
import json, re, sys
s = json.load(open(sys.argv[1]))
sniff = open(sys.argv[2]).read()
m = re.search(r"pfc (\d+) xoff (\d+) xon (\d+) prio3_quanta (\S+)", sniff)
pfc, xoff, xon, quanta = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
p0 = [t for t in s["tm"] if t["port"] == "p0"][0]["counters"]
errs = []
if p0["pfc_tx_xoff"] < 1:
    errs.append("rocemu sent no XOFF (pfc_tx_xoff %d)" % p0["pfc_tx_xoff"])
import os
nw = int(os.environ.get("ROCEMU_WORKERS", "1"))
# p0's control queue (64 slots) fills only when p0's owner does not send for a while: with two
# workers on 2 shared CPUs, p1's worker can make refreshes while p0's worker is descheduled
# (16-30 ms seen). A PFC frame meeting a full queue merges into the last one queued (each
# priority it names takes its time: pfc_coalesced), so none is refused (drop_queue_full) and
# the last XON always leaves. So: no refusal ever; on one worker no merge; with two, merges
# only when p0's owner did stop polling for over a millisecond (its poll_gaps_over_1ms).
lost = p0["drop_queue_full"]
merged = p0["pfc_coalesced"]
if lost:
    errs.append("p0 refused %d PFC frames (drop_queue_full)" % lost)
if nw < 2 and merged:
    errs.append("p0 merged %d PFC frames (pfc_coalesced) on one worker" % merged)
if nw >= 2 and merged:
    owner = [w for w in s["workers"] if "p0" in w["owns"]]
    gaps = owner[0]["poll_gaps_over_1ms"] if owner else 0
    if gaps == 0:
        errs.append("p0 merged %d PFC frames while its owner never stopped polling" % merged)
    else:
        print("  p0's owner stopped polling %d times for over 1 ms: %d PFC frames merged"
              % (gaps, merged))
sent = p0["pfc_tx_xoff"] + p0["pfc_tx_xon"] - lost - merged
if xoff + xon != sent or (merged == 0 and xon != p0["pfc_tx_xon"]):
    errs.append("A saw %d XOFF / %d XON, rocemu made %d / %d less %d refused, %d merged"
                % (xoff, xon, p0["pfc_tx_xoff"], p0["pfc_tx_xon"], lost, merged))
if set(quanta.split(",")) - {"1000", "0"}:
    errs.append("pause times seen in A: %s (want 1000, and 0 for XON)" % quanta)
# With ROCEMU_WORKERS >= 2, p1's TM (the congested egress) and p0's TX are on two workers:
# every PFC frame crosses a ring, and its delay from being made to reaching p0's owner is
# measured (docs/multicore.md states the bound for workers on CPUs of their own).
if nw >= 2:
    ws = s["workers"]
    crossed = sum(w["handoff_pfc"] for w in ws)
    if crossed != p0["pfc_tx_xoff"] + p0["pfc_tx_xon"]:
        errs.append("%d PFC frames crossed between workers, rocemu sent %d"
                    % (crossed, p0["pfc_tx_xoff"] + p0["pfc_tx_xon"]))
    dmax = max(w["handoff_pfc_delay_max_ns"] for w in ws)
    if not 0 < dmax < 1e9:
        errs.append("cross-worker PFC delay %d ns" % dmax)
    print("ok: %d PFC frames made on p1's worker left by p0's worker, the longest after %.1f us"
          % (crossed, dmax / 1e3))
p1 = [t for t in s["tm"] if t["port"] == "p1"][0]["counters"]
if p1["drop_headroom_overflow"] != 0:
    errs.append("lossless frames dropped at p1: drop_headroom_overflow %d"
                % p1["drop_headroom_overflow"])
for e in errs:
    print("  " + e)
print("ok: rocemu made %d XOFF + %d XON for p0 (%d refused by its control queue); A's packet "
      "socket saw %d XOFF + %d XON, quanta %s"
      % (p0["pfc_tx_xoff"], p0["pfc_tx_xon"], lost, xoff, xon, quanta))
sys.exit(1 if errs else 0)
PY
echo "e2e PFC: all checks passed"
