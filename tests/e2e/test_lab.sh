#!/usr/bin/env bash
# End to end in the netns lab (DESIGN.md): two namespaces talk only through rocemu on
# net_af_packet. Asserts: ping both ways, ARP resolved through rocemu, 10,000 UDP datagrams to
# port 4791 from A to B all received, and rocemu's counters and conservation line agree.
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
# With a third argument "huge", rocemu runs on 2 MB hugepages (reserved here for the test
# and given back after) instead of --no-huge.
set -u
ROCEMU=$1
SRC=$2
MEM_MODE=${3:-nohuge}
# A per-process lab, so concurrent runs (two build dirs) cannot tear down each other's.
export LAB_PREFIX=rt$$
LAB="$SRC/scripts/lab/lab.sh"
WORK=$(mktemp -d)
ROCEMU_PID=

fail() { echo "FAIL: $*"; [ -f "$WORK/rocemu.out" ] && sed 's/^/  rocemu| /' "$WORK/rocemu.out"; exit 1; }
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HP_BEFORE=
HP_MNT=
cleanup() {
	[ -n "$ROCEMU_PID" ] && kill -INT "$ROCEMU_PID" 2>/dev/null && sleep 1
	[ -n "$ROCEMU_PID" ] && kill -9 "$ROCEMU_PID" 2>/dev/null
	"$LAB" down >/dev/null 2>&1
	[ -n "$HP_MNT" ] && umount "$HP_MNT" 2>/dev/null && rmdir "$HP_MNT"
	[ -n "$HP_BEFORE" ] && echo "$HP_BEFORE" >"$HP"
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ] || ! ip netns add "rt$$-probe" 2>/dev/null; then
	echo "SKIP: end-to-end lab needs root and network namespaces (ip netns); NOT TESTED"
	exit 77
fi
ip netns del "rt$$-probe"
for t in ping python3; do
	command -v $t >/dev/null || fail "$t is not installed (scripts/deps.sh installs it)"
done
MEM_ARGS=(--no-huge -m 1024)
if [ "$MEM_MODE" = huge ]; then
	[ -w "$HP" ] || { echo "SKIP: no 2 MB hugepage support ($HP); NOT TESTED"; exit 77; }
	HP_BEFORE=$(cat "$HP")
	[ "$HP_BEFORE" -lt 512 ] && echo 512 >"$HP"
	[ "$(cat "$HP")" -ge 512 ] || fail "could not reserve 512 hugepages (got $(cat "$HP"))"
	HP_MNT=$(mktemp -d)
	mount -t hugetlbfs -o pagesize=2M nodev "$HP_MNT" || fail "cannot mount hugetlbfs"
	MEM_ARGS=(--huge-dir "$HP_MNT")
	echo "running on hugepages ($(cat "$HP") x 2 MB reserved, hugetlbfs at $HP_MNT)"
fi
eval "$("$LAB" env)"
"$LAB" up >/dev/null || fail "lab setup"

. "$SRC/tests/e2e/workers.sh"
rocemu_workers_args -l 0-1 "${MEM_ARGS[@]}" --no-pci --file-prefix=remut_$$ $("$LAB" eal) -- \
	--pipeline "$SRC/pipelines/bump-in-wire.json" --stats "$WORK/stats.json" \
	--prometheus "$WORK/prom.txt"
"$ROCEMU" "${RW_ARGS[@]}" >"$WORK/rocemu.out" 2>&1 &
ROCEMU_PID=$!
for _ in $(seq 100); do
	grep -q "^rocemu: running" "$WORK/rocemu.out" && break
	kill -0 $ROCEMU_PID 2>/dev/null || fail "rocemu exited at start"
	sleep 0.1
done
grep -q "^rocemu: running" "$WORK/rocemu.out" || fail "rocemu did not start within 10 s"

ip netns exec "$NS_A" ping -c 3 -i 0.2 -W 2 "$IP_B" >"$WORK/ping1" || { cat "$WORK/ping1"; fail "ping A -> B"; }
ip netns exec "$NS_B" ping -c 3 -i 0.2 -W 2 "$IP_A" >"$WORK/ping2" || { cat "$WORK/ping2"; fail "ping B -> A"; }
echo "ok: ping both ways through rocemu"
ip netns exec "$NS_A" ip neigh show "$IP_B" | grep -qi "$MAC_B" ||
	fail "A did not resolve B's MAC $MAC_B by ARP: $(ip netns exec "$NS_A" ip neigh)"
ip netns exec "$NS_B" ip neigh show "$IP_A" | grep -qi "$MAC_A" ||
	fail "B did not resolve A's MAC $MAC_A by ARP"
echo "ok: ARP resolved through rocemu"

ip netns exec "$NS_B" python3 "$SRC/scripts/lab/udp.py" recv 4791 10000 20 >"$WORK/recv" &
RECV=$!
for _ in $(seq 50); do grep -q ready "$WORK/recv" && break; sleep 0.1; done
ip netns exec "$NS_A" python3 "$SRC/scripts/lab/udp.py" send "$IP_B" 4791 10000 200 >/dev/null ||
	fail "sender"
wait $RECV || fail "receiver in B: $(cat "$WORK/recv")"
grep -q "received 10000" "$WORK/recv" || fail "receiver: $(cat "$WORK/recv")"
echo "ok: 10000 UDP datagrams to port 4791 received"

kill -INT $ROCEMU_PID
wait $ROCEMU_PID
rc=$?
ROCEMU_PID=
[ $rc -eq 0 ] || fail "rocemu exited $rc after SIGINT"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "no OK conservation line"
python3 - "$WORK/stats.json" "$WORK/rocemu.out" "$WORK/prom.txt" "$SRC" <<'PY' || fail "counters"
import json, os, re, sys
sys.path.insert(0, os.path.join(sys.argv[4], "tests", "replay"))
import promcheck
s = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in s["ports"]}
c = s["conservation"]
errs = []
# the poll gaps: the same numbers in the stats as in the exit line
m = re.search(r"^rocemu: polling: (\d+) gaps over 1 ms between two polls, the longest "
              r"([0-9.]+) ms$", open(sys.argv[2]).read(), re.M)
pg = s.get("polling", {})
if m is None or pg.get("gaps_over_1ms") != int(m.group(1)) or \
        abs(pg.get("longest_gap_ns", -1) / 1e6 - float(m.group(2))) > 0.001 or \
        (pg.get("gaps_over_1ms") == 0) != (pg.get("longest_gap_ns") == 0):
    errs.append("polling: stats %r, line %r" % (pg, m and m.group(0)))
if not c["ok"] or c["unaccounted"] != 0:
    errs.append("conservation not ok: %s" % c)
if c["drops"] != 0:
    errs.append("drops %d" % c["drops"])
if p["p0"]["rx_pkts"] != p["p1"]["tx_pkts"] or p["p1"]["rx_pkts"] != p["p0"]["tx_pkts"]:
    errs.append("rx/tx mismatch: %s" % p)
if p["p0"]["rx_pkts"] < 10000 + 6:
    errs.append("p0 rx %d < 10006" % p["p0"]["rx_pkts"])
parse = [x for x in s["stages"] if x["type"] == "parse"][0]["counters"]
if parse["class_rocev2"] + parse["class_invalid"] < 10000:
    errs.append("parse saw %d RoCE-port frames" % (parse["class_rocev2"] + parse["class_invalid"]))
if parse["class_arp"] < 2:
    errs.append("parse saw %d ARP frames" % parse["class_arp"])
# the workers (ROCEMU_WORKERS, default 1): one object each; together they took every frame
# the ports received and gave tx_burst every frame sent; a bump-in-wire's two directions run
# on two workers with no handoff (each port's RX queue is polled by the owner of the other)
nw = int(os.environ.get("ROCEMU_WORKERS", "1"))
ws = s.get("workers", [])
if len(ws) != nw:
    errs.append("workers: %d objects, want %d" % (len(ws), nw))
for key, port_key in (("rx_packets", "rx_pkts"), ("tx_packets", "tx_pkts")):
    if sum(w[key] for w in ws) != sum(x[port_key] for x in p.values()):
        errs.append("workers' %s %d != ports' %d" % (key, sum(w[key] for w in ws),
                                                      sum(x[port_key] for x in p.values())))
if sum(w["handoff_out"] for w in ws) != sum(w["handoff_in"] for w in ws):
    errs.append("handoffs out %d != in %d" % (sum(w["handoff_out"] for w in ws),
                                              sum(w["handoff_in"] for w in ws)))
if nw >= 2 and sum(w["handoff_out"] for w in ws) != 0:
    errs.append("a bump-in-wire crossed rings: %s" % ws)
if nw >= 2 and sorted(len(w["owns"]) for w in ws)[-2:] != [1, 1]:
    errs.append("p0 and p1 not owned by two workers: %s" % ws)
nic = s.get("nic", {})
if set(nic) != {"p0", "p1"} or any("drop_nic_imissed" not in v for v in nic.values()):
    errs.append("nic counters missing: %s" % nic)
# Prometheus: each worker's counters and the NIC's losses, as in --stats
perrs, sm = promcheck.check(open(sys.argv[3]).read())
errs += ["prometheus: " + e for e in perrs]
for w in ws:
    got = promcheck.value(sm, "rocemu_worker_events_total", worker=str(w["worker"]),
                          counter="rx_packets")
    if got != w["rx_packets"]:
        errs.append("prometheus worker %d rx_packets %s, stats %d" % (w["worker"], got,
                                                                  w["rx_packets"]))
for port in ("p0", "p1"):
    got = promcheck.value(sm, "rocemu_drops_total", reason="nic.%s.drop_nic_imissed" % port)
    if got != nic.get(port, {}).get("drop_nic_imissed"):
        errs.append("prometheus nic.%s.drop_nic_imissed %s" % (port, got))
for e in errs:
    print("  " + e)
print("ok: %d worker(s): rx %s tx %s handoffs %s" % (nw, [w["rx_packets"] for w in ws],
      [w["tx_packets"] for w in ws], [w["handoff_out"] for w in ws]))
print("ok: counters: p0 rx %d = p1 tx %d, p1 rx %d = p0 tx %d, drops 0, conservation OK"
      % (p["p0"]["rx_pkts"], p["p1"]["tx_pkts"], p["p1"]["rx_pkts"], p["p0"]["tx_pkts"]))
sys.exit(1 if errs else 0)
PY
echo "e2e lab: all checks passed"
