#!/usr/bin/env bash
# Live profile reload on net_null ports, while traffic flows, by SIGHUP and by the telemetry
# command /rocemu/profile: a valid new profile is taken (its phase applies: the rate change
# shows in the summary), a bad one is refused with its JSON path and the running profile stays;
# nothing is lost (conservation OK).
set -u
ROCEMU=$1
SRC=$2
WORK=$(mktemp -d)
PID=
fail() { echo "FAIL: $*"; sed 's/^/  rocemu| /' "$WORK/out" 2>/dev/null | tail -30; exit 1; }
cleanup() {
	[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "SKIP: DPDK EAL needs root here; NOT TESTED"; exit 77; }
cat >"$WORK/pipe.json" <<'J'
{ "ports": [ { "name": "p0" }, { "name": "p1" } ],
  "ingress": [ { "type": "parse" }, { "type": "forward" } ],
  "tm": { "ports": [ { "port": "p0", "rate_gbps": 100 }, { "port": "p1", "rate_gbps": 100 } ] } }
J
echo '{ "phases": [ { "at_s": 0, "tm": { "p1": { "rate_gbps": 40 } } } ] }' >"$WORK/prof.json"
. "$SRC/tests/e2e/workers.sh"
rocemu_workers_args -l 0-1 --no-huge --no-pci -m 512 --file-prefix=reload_$$ \
	--log-level=lib.eal:error --vdev=net_null0,size=1000 --vdev=net_null1,no-rx=1 -- \
	--pipeline "$WORK/pipe.json" --profile "$WORK/prof.json" --stats "$WORK/stats.json"
"$ROCEMU" "${RW_ARGS[@]}" >"$WORK/out" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "^rocemu: running" "$WORK/out" && break; sleep 0.1; done
grep -q "^rocemu: running" "$WORK/out" || fail "rocemu did not start"
sleep 1
echo '{ "phases": [ { "at_s": 0, "tm": { "p1": { "rate_gbps": 25 } } } ] }' >"$WORK/prof.json"
kill -HUP $PID
for _ in $(seq 50); do grep -q "profile reloaded" "$WORK/out" && break; sleep 0.1; done
grep -q "^rocemu: profile reloaded from .*prof.json (1 changes, time zero now)" "$WORK/out" ||
	fail "valid profile not reloaded"
echo "ok: valid profile reloaded"
echo '{ "phases": [ { "at_s": 0, "tm": { "p1": { "rate_gbps": -3 } } } ] }' >"$WORK/prof.json"
kill -HUP $PID
for _ in $(seq 50); do grep -q "reload refused" "$WORK/out" && break; sleep 0.1; done
grep -q "^rocemu: profile reload refused, the running profile stays: phases\[0\].tm.p1.rate_gbps: must be" "$WORK/out" ||
	fail "bad profile not refused with its JSON path"
kill -0 $PID 2>/dev/null || fail "rocemu died after a bad profile"
echo "ok: bad profile refused, rocemu still running"

# The same over DPDK's telemetry socket (a unix socket in the EAL runtime directory): a bad
# file is refused with its JSON path in the reply, a good one is loaded, "/rocemu/profile"
# without a file names the running one, and SIGHUP then reloads that one.
echo '{ "phases": [ { "at_s": 0, "tm": { "p1": { "rate_gbps": 10 } } } ] }' >"$WORK/prof2.json"
echo '{ "phases": [ { "at_s": 0, "tm": { "p9": { "rate_gbps": 10 } } } ] }' >"$WORK/bad2.json"
SOCK=/var/run/dpdk/reload_$$/dpdk_telemetry.v2
[ -S "$SOCK" ] || fail "no telemetry socket at $SOCK"
for d in /var/run/dpdk /var/run/dpdk/reload_$$; do
	case $(stat -c %a "$d") in
	700|750|755) ;;
	*) fail "$d is mode $(stat -c %a "$d"): the control socket must not be open to all" ;;
	esac
done
[ "$(stat -c %a /var/run/dpdk)" = 700 ] || echo "note: /var/run/dpdk is $(stat -c %a /var/run/dpdk)"
python3 - "$SOCK" "$WORK" <<'PY' || fail "telemetry profile switch"
import json, socket, sys
sock_path, work = sys.argv[1:]
def ask(cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock_path)
    json.loads(s.recv(16384).decode())  # the greeting
    s.send(cmd.encode())
    r = json.loads(s.recv(16384).decode())
    s.close()
    return r["/rocemu/profile"]
r = ask("/rocemu/profile,%s/bad2.json" % work)
assert r["result"] == "refused" and "phases[0].tm.p9" in r["message"], r
print("ok: telemetry: bad profile refused: %s" % r["message"])
r = ask("/rocemu/profile,%s/prof2.json" % work)
assert r["result"] == "loaded" and "prof2.json" in r["message"], r
print("ok: telemetry: %s" % r["message"])
r = ask("/rocemu/profile")
assert r["profile"] == "%s/prof2.json" % work, r
print("ok: telemetry: the running profile is %s" % r["profile"])
PY
kill -HUP $PID
for _ in $(seq 50); do grep -q "profile reloaded from .*prof2.json" "$WORK/out" && break; sleep 0.1; done
[ "$(grep -c "^rocemu: profile reloaded from .*prof2.json" "$WORK/out")" -eq 2 ] ||
	fail "SIGHUP after the telemetry switch did not reload prof2.json"
echo "ok: SIGHUP reloads the profile telemetry switched to"
sleep 0.5
kill -INT $PID
wait $PID || fail "rocemu exited non-zero"
PID=
grep -q "^conservation: .*: OK$" "$WORK/out" || fail "conservation"
grep -q "^  p1 *10.000 Gb/s" "$WORK/out" || fail "p1 is not at the switched-to 10 Gb/s"
python3 -c "
import json,sys; s=json.load(open('$WORK/stats.json'))
assert s['runner']['profile_changes'] == 4, s['runner']
assert s['conservation']['ok']
p={x['name']:x for x in s['ports']}; assert p['p1']['tx_pkts'] > 1000, p" || fail "stats"
echo "ok: 4 profile changes applied (start, SIGHUP, telemetry, SIGHUP), p1 at 10 Gb/s, conservation OK"
