#!/usr/bin/env bash
# The demo: the one-machine lab with traffic crossing rocemu.
#
# Installs what is missing (apt-get), builds, creates two network namespaces joined through
# rocemu (net_af_packet on veth), sends ping, ARP and a burst of RoCE-port UDP traffic each
# way through a 10 Gb/s switch with 5 us of cable and an egress capture, then stops rocemu
# and prints what happened: per-port and per-stage counters and the conservation line.
# Idempotent; tears the lab down on exit, also on failure.
#
#   scripts/demo.sh [--pipeline FILE] [--profile FILE] [--count N]
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
PIPELINE=$ROOT/pipelines/capture-10g.json
PROFILE=
COUNT=20000
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
echo "== traffic"
ip netns exec "$NS_A" ping -c 3 -i 0.2 "$IP_B" | tail -2
ip netns exec "$NS_A" ip neigh show "$IP_B" | sed 's/^/ARP in A: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py recv 4791 "$COUNT" 30 >"$WORK/recv_b" &
RB=$!
ip netns exec "$NS_A" python3 scripts/lab/udp.py recv 4791 "$((COUNT / 10))" 30 >"$WORK/recv_a" &
RA=$!
sleep 0.5
ip netns exec "$NS_A" python3 scripts/lab/udp.py send "$IP_B" 4791 "$COUNT" 1024 | sed 's/^/A -> B: /'
ip netns exec "$NS_B" python3 scripts/lab/udp.py send "$IP_A" 4791 "$((COUNT / 10))" 64 | sed 's/^/B -> A: /'
wait $RB; wait $RA
sed 's/^/B: /' "$WORK/recv_b"; sed 's/^/A: /' "$WORK/recv_a"
sleep 1

kill -INT $ROCEMU_PID
wait $ROCEMU_PID
ROCEMU_PID=
echo
echo "== rocemu (per-interval lines, then the summary)"
grep -v "^rocemu: port\|^rocemu: running\|^EAL\|^TELEMETRY\|Frame size" "$WORK/rocemu.out"
if [ -f "$WORK/rocemu-capture.pcap" ]; then
	echo
	echo "== capture: $WORK/rocemu-capture.pcap ($(tshark -r "$WORK/rocemu-capture.pcap" 2>/dev/null | wc -l) frames; first three:)"
	tshark -r "$WORK/rocemu-capture.pcap" -c 3 2>/dev/null
fi
echo "stats JSON: $WORK/stats.json"
grep -q "^conservation: .*: OK$" "$WORK/rocemu.out"
