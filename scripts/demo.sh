#!/usr/bin/env bash
# The demo: the one-machine lab with traffic crossing rocemu.
#
# Installs what is missing (apt-get), builds, creates two network namespaces joined through
# rocemu (net_af_packet on veth) and runs rocemu as the lossless RoCE switch of
# pipelines/dcqcn-lab.json with an incast profile (profiles/demo-incast.json: the link to B
# drops to 10 Gb/s and 8 virtual senders load it 2:1). Then: ping and ARP, a UDP burst each way
# (non-RoCE traffic passes untouched), and a RoCE RDMA WRITE stream from A to B, with B acting
# as a DCQCN notification point (CNPs for CE-marked frames). rocemu marks ECN, sends PFC back
# towards A, and the summary shows what happened: per-port, per-stage and per-queue counters,
# ECN marks, CNPs, PFC frames and the conservation line. Idempotent; tears the lab down on
# exit, also on failure.
#
#   scripts/demo.sh [--pipeline FILE] [--profile FILE] [--count N]
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
PIPELINE=$ROOT/pipelines/dcqcn-lab.json
PROFILE=$ROOT/profiles/demo-incast.json
COUNT=100000
while [ $# -gt 0 ]; do
	case "$1" in
	--pipeline) PIPELINE=$(realpath "$2"); shift 2 ;;
	--profile) PROFILE=$(realpath "$2"); shift 2 ;;
	--count) COUNT=$2; shift 2 ;;
	*) echo "usage: scripts/demo.sh [--pipeline FILE] [--profile FILE] [--count N]" >&2; exit 2 ;;
	esac
done

. scripts/deps.sh
rocemu_install_deps || exit 1
BUILD=${BUILD:-build}
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null || exit 1
ninja -C "$BUILD" >/dev/null || { echo "demo: build failed (run ninja -C $BUILD)"; exit 1; }
ROCEMU=$ROOT/$BUILD/app/rocemu/rocemu

export LAB_PREFIX=remu
LAB=$ROOT/scripts/lab/lab.sh
WORK=$ROOT/$BUILD/demo
mkdir -p "$WORK"
ROCEMU_PID=
cleanup() {
	[ -n "$ROCEMU_PID" ] && kill -INT "$ROCEMU_PID" 2>/dev/null && wait "$ROCEMU_PID"
	"$LAB" down >/dev/null 2>&1
}
trap cleanup EXIT
eval "$("$LAB" env)"
"$LAB" up || exit 1

echo
echo "== rocemu between $NS_A and $NS_B: $(basename "$PIPELINE")${PROFILE:+ with $(basename "$PROFILE")}"
args=(--pipeline "$PIPELINE" --stats-interval 1 --stats "$WORK/stats.json")
[ -n "$PROFILE" ] && args+=(--profile "$PROFILE")
# --no-pci: never touch this machine's own NICs; -l 0-1: main lcore + one worker.
(cd "$WORK" && exec "$ROCEMU" -l 0-1 --no-huge --no-pci -m 1024 --file-prefix=remu_demo \
	--log-level=lib.eal:warning $("$LAB" eal) -- "${args[@]}") >"$WORK/rocemu.out" 2>&1 &
ROCEMU_PID=$!
for _ in $(seq 100); do
	grep -q "^rocemu: running" "$WORK/rocemu.out" && break
	kill -0 $ROCEMU_PID 2>/dev/null || { cat "$WORK/rocemu.out"; exit 1; }
	sleep 0.1
done
grep "^rocemu:" "$WORK/rocemu.out"

echo
echo "== traffic: ping, ARP, UDP both ways (not RoCE: passes untouched)"
ip netns exec "$NS_A" ping -c 3 -i 0.2 "$IP_B" | tail -2
ip netns exec "$NS_A" ip neigh show "$IP_B" | sed 's/^/ARP in A: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py recv 5001 2000 20 >"$WORK/recv_b" &
RB=$!
ip netns exec "$NS_A" python3 scripts/lab/udp.py recv 5001 200 20 >"$WORK/recv_a" &
RA=$!
sleep 0.5
ip netns exec "$NS_A" python3 scripts/lab/udp.py send "$IP_B" 5001 2000 1024 | sed 's/^/A -> B: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py send "$IP_A" 5001 200 64 | sed 's/^/B -> A: /'
wait $RB; wait $RA
sed 's/^/B: /' "$WORK/recv_b"; sed 's/^/A: /' "$WORK/recv_a"

echo
echo "== traffic: RoCE RDMA WRITE from A (QP 0x101) to B (QP 0x201), through the incast"
ip netns exec "$NS_B" python3 scripts/lab/roce_peer.py respond eth0 "$MAC_B" "$MAC_A" \
	"$IP_B" "$IP_A" 0x101 25 >"$WORK/responder" &
RR=$!
for _ in $(seq 50); do grep -q ready "$WORK/responder" && break; sleep 0.1; done
ip netns exec "$NS_A" timeout 60 python3 scripts/lab/roce_peer.py send eth0 "$MAC_A" "$MAC_B" \
	"$IP_A" "$IP_B" 0x201 "$COUNT" 1024 | sed 's/^/A: /'
kill -INT $RR 2>/dev/null; wait $RR 2>/dev/null
sed 's/^/B: /' "$WORK/responder"
sleep 1

kill -INT $ROCEMU_PID
wait $ROCEMU_PID
ROCEMU_PID=
echo
echo "== rocemu (per-interval lines, then the summary)"
grep -v "^rocemu: port\|^rocemu: running\|^EAL\|^TELEMETRY\|Frame size" "$WORK/rocemu.out"
echo
echo "== what the switch did"
python3 - "$WORK/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
tm = {t["port"]: t["counters"] for t in s["tm"]}
def c(port, key):
    return tm.get(port, {}).get(key, 0)
print("ECN: %d frames CE-marked on p1 (towards B)" % c("p1", "ecn_marked"))
print("PFC: %d XOFF + %d XON frames sent out of p0 (towards A)"
      % (c("p0", "pfc_tx_xoff"), c("p0", "pfc_tx_xon")))
drops = ["tm.%s.%s=%d" % (p, k, v) for p in tm for k, v in tm[p].items()
         if k.startswith("drop_") and v]
drops += ["%s.%s=%d" % (st["name"], k, v) for st in s["stages"]
          for k, v in st["counters"].items() if k.startswith("drop_") and v]
print("drops: %s" % (", ".join(drops) or "none"))
for x in s.get("incast", []):
    k = x["counters"]
    if x.get("enabled") or k["generated"]:
        print("incast %s into %s priority %s: %d virtual frames generated, %d absorbed after "
              "taking link time, %d dropped by the TM, %d ECN-marked"
              % (x["name"], x["port"], x["priority"], k["generated"], k["absorbed"],
                 k["tm_dropped"], k["ecn_marked"]))
print("conservation: %s" % ("OK" if s["conservation"]["ok"] else "MISMATCH"))
PY
echo "(CNPs: B's line above says how many it sent for CE-marked frames, A's how many arrived)"
echo "stats JSON: $WORK/stats.json"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out"
