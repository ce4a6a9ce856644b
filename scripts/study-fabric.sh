#!/usr/bin/env bash
# The worked study of docs/fabric.md ("Multipath: what ECMP, spraying and a reorder buffer do to an RC
# all-reduce"): rocegen's ring all-reduce between two software RoCE endpoints (two processes, two
# ranks each: 4 ranks) in the netns lab, through rocemu's emulated leaf-spine
# (pipelines/ecmp-4x25.json, spray-4x25.json, scaled by
# profiles/fabric-25m.json to 4 x 25 Mb/s so a software endpoint can fill it), for RC over
# ECMP with 1, 2, 4 and 8 QPs per connection, RC over spraying with and without the reorder
# stage, and (when rocegen has it) the SRD-like transport over spraying. Prints a markdown
# table: busbw, and the NAKs and retransmitted packets rocegen counted.
#
#   sudo scripts/study-fabric.sh [BUILD_DIR] [--size 16M]       (about 5 minutes)
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build
SIZE=16M
while [ $# -gt 0 ]; do
	case $1 in
	--size) SIZE=$2; shift 2 ;;
	*) BUILD=$1; shift ;;
	esac
done
ROCEMU=$BUILD/app/rocemu/rocemu
ROCEGEN=$BUILD/app/rocegen/rocegen
LAB_PREFIX=st$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "the fabric study"
# At 1/1000 of the rates, time runs 1000 times slower: the reorder stage's hole timeout
# (100 us in spray-4x25.json) becomes 100 ms, rocegen's ACK timeout is 2^18 x 4.096 us, and
# the lossless headroom (sized for a 100G NIC that stops within a microsecond) is 2 MB, as a
# software endpoint reacts to PFC a poll later.
python3 - "$SRC/pipelines" "$WORK" <<'PY'
import json, os, sys
src, work = sys.argv[1:]
def scaled(name):
    pl = json.load(open(os.path.join(src, name)))
    for p in pl["tm"]["ports"] + pl["fabric"]["links"]:
        p["headroom_kb"] = 2048
    return pl
json.dump(scaled("ecmp-4x25.json"), open(os.path.join(work, "ecmp.json"), "w"))
pl = scaled("spray-4x25.json")
pl["egress"][0]["timeout_us"] = 100000
json.dump(pl, open(os.path.join(work, "reorder.json"), "w"))
pl["egress"] = []
json.dump(pl, open(os.path.join(work, "noreorder.json"), "w"))
PY
srd=0
"$ROCEGEN" --help 2>&1 | grep -q -- "--transport" && srd=1
printf '| transport / fabric | QPs | busbw (GB/s) | packets on leaf0 -> spine0..3 | rocemu drops | NAKs | packets resent | timeouts |\n|---|---|---|---|---|---|---|---|\n'
run() { # NAME PIPELINE QPS ROCEGEN_ARGS...
	local name=$1 pl=$2 qps=$3
	shift 3
	rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=st_$$ $("$LAB" eal) -- \
		--pipeline "$pl" --profile "$SRC/profiles/fabric-25m.json" --seed 7 \
		--stats "$WORK/stats.json"
	rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 2 --size "$SIZE" --iters 3 \
		--qps "$qps" --window-kb 64 --timeout 18 --time-limit 300 "$@"
	rocemu_stop
	python3 - "$name" "$qps" "$WORK/stats.json" "$WORK/a.json" "$WORK/b.json" <<'PY'
import json, sys
name, qps = sys.argv[1], sys.argv[2]
st = json.load(open(sys.argv[3]))
links = {l["name"]: l["counters"]["routed"] for l in st["fabric"]["links"]}
up = "/".join(str(links["leaf0-spine%d" % k]) for k in range(4))
a, b = (json.load(open(f)) for f in sys.argv[4:])
rows = a.get("results") or a.get("table") or []
bus = max(r.get("busbw_GBps", r.get("busbw", 0)) for r in rows) if rows else float("nan")
def tot(k, req):
    return sum(q.get(k, 0) for d in (a, b) for q in d["qps"] if q["requester"] == req)
print("| %s | %s | %.4f | %s | %d | %d | %d | %d |" % (name, qps, bus, up,
      st["conservation"]["drops"], tot("naks_sent", False), tot("retransmitted_packets", True),
      tot("timeouts", True)))
PY
}
# with several QPs, each message split over them (NCCL_IB_SPLIT_DATA_ON_QPS=1): the 4-rank ring
# has one message in flight per step, which round robin (0) would put on one QP at a time
for q in 1 2 4 8; do
	run "RC / ECMP" "$WORK/ecmp.json" $q --split-data-on-qps 1
done
run "RC / spray + reorder" "$WORK/reorder.json" 1
run "RC / spray, no reorder" "$WORK/noreorder.json" 1
if [ $srd -eq 1 ]; then
	run "SRD / spray" "$WORK/noreorder.json" 1 --transport srd
else
	echo "(rocegen has no --transport srd: SRD row not measured)"
fi
