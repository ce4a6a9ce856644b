#!/usr/bin/env bash
# NCCL's wire pattern and the hierarchical all-reduce through rocemu (issue 33): the netns lab
# with rocemu as a bump in the wire capturing every RoCE frame both ways, two rocegen of 4
# ranks each (a node of 4 GPUs each), --proto simple, a 16 MiB all-reduce, once with --algo
# ring and once with --algo hier. From the capture, per direction and iteration:
#   - the data messages (RDMA WRITE ... with immediate; RETH DMA length) add up to exactly the
#     node-crossing bytes: 2S(R-1)/R for the flat ring over R = 8 ranks (7/4 S), 2S(P-1)/P for
#     hier over P = 2 processes (S): only those reach the wire;
#   - every message is in NCCL's sizes: at most 1 MiB (Simple ring: 2 x 512 KiB steps), here
#     the 2 MiB chunks cut in two, each one WRITE with immediate;
#   - every message has the receiver's 64-byte CTS RDMA WRITE (no immediate) on the same QP
#     pair before it, one per message;
# and both processes verified the data, every byte placed; busbw = algbw x 2(R-1)/R (nccl-tests).
# A third run, ring-ar, is the ring with --adaptive-routing 1: every message (1 MiB, over the
# 8 KiB threshold) goes as an RDMA WRITE without immediate followed, on the same QP at the next
# PSN, by a 0-byte RDMA WRITE ONLY with immediate = the message's size (NCCL on InfiniBand);
# the other runs have no such 0-byte write.
# Exits 77 (skip, said loudly) only when the machine cannot make namespaces.
set -u
ROCEMU=$(readlink -f "$1")
ROCEGEN=$(readlink -f "$2")
SRC=$(readlink -f "$3")
LAB_PREFIX=rn$$
. "$SRC/tests/e2e/lab_common.sh"
lab_begin "NCCL's wire pattern through rocemu"

cat >"$WORK/pipeline.json" <<JSON
{
	"ports": [ { "name": "p0" }, { "name": "p1" } ],
	"ingress": [ { "type": "parse" }, { "type": "forward", "mode": "pairs" } ],
	"egress": [ { "type": "capture", "file": "$WORK/roce.pcap", "snaplen": 128,
		      "ring_size": 262144, "filter": "udp port 4791" } ],
	"tm": { "ports": [ { "port": "p0", "rate_gbps": 100, "buffer_kb": 4096 },
			   { "port": "p1", "rate_gbps": 100, "buffer_kb": 4096 } ] }
}
JSON
SIZE=$((16 << 20))
for run in ring hier ring-ar; do
	algo=${run%-ar}
	AR=()
	[ "$run" = ring-ar ] && AR=(--adaptive-routing 1)
	rocemu_start -l 0 --no-huge --no-pci -m 1024 --file-prefix=rn_$$ $("$LAB" eal) -- \
		--pipeline "$WORK/pipeline.json"
	# the lab's kernels own .1/.2; rocegen's ranks take .11-.14 (A) and .21-.24 (B)
	rocegen_pair 198.18.0.11 198.18.0.21 --test allreduce --ranks 4 --size $SIZE \
		--iters 1 --warmup 0 --proto simple --algo $algo --timeout 16 --time-limit 200 \
		"${AR[@]}"
	sleep 0.5
	rocemu_stop
	grep -q "^conservation: .*: OK$" "$WORK/rocemu.out" || fail "$run: no OK conservation line"
	python3 - "$run" "$SIZE" "$WORK/roce.pcap" "$WORK/a.json" "$WORK/b.json" <<'PY' ||
import json, struct, sys
run, S, pcap = sys.argv[1], int(sys.argv[2]), sys.argv[3]
algo, ar = run.replace("-ar", ""), run.endswith("-ar")
MTU = 1024
ds = [json.load(open(f)) for f in sys.argv[4:6]]
R, P = 8, 2
want = 2 * S * (R - 1) // R if algo == "ring" else 2 * S * (P - 1) // P
f = open(pcap, "rb")
hdr = f.read(24)
endian = "<" if struct.unpack("<I", hdr[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
msgs = {}     # (direction, data QPN, first PSN) -> DMA length: data messages, deduplicated
cts = {}      # (direction, QPN, PSN) -> (time, DMA length, idx)
first_data = {}
ar_imm = {}   # (direction, QPN, PSN) -> immediate: 0-byte WRITE ONLY with immediate
n = 0
while True:
    rec = f.read(16)
    if len(rec) < 16:
        break
    sec, frac, incl, orig = struct.unpack(endian + "IIII", rec)
    fr = f.read(incl)
    t = sec + frac / 1e9
    n += 1
    if len(fr) < 58 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
        continue
    src_last = fr[29]
    direction = "A->B" if 11 <= src_last <= 14 else "B->A"
    bth = 42
    op = fr[bth]
    qpn = int.from_bytes(fr[bth + 5:bth + 8], "big")
    psn = int.from_bytes(fr[bth + 9:bth + 12], "big")
    if op in (0x06, 0x0A, 0x0B):   # WRITE FIRST / ONLY / ONLY with immediate: a RETH
        dma = int.from_bytes(fr[bth + 12 + 12:bth + 12 + 16], "big")
        if op == 0x0A:
            assert dma == 64, ("a WRITE without immediate that is not a 64-byte CTS", dma)
            idx = struct.unpack("<Q", fr[bth + 28 + 56:bth + 28 + 64])[0] if incl >= bth + 28 + 64 else None
            cts.setdefault((direction, qpn, psn), (t, dma, idx))
        elif dma == 4:
            pass                    # the barrier (control QPs)
        elif op == 0x0B and dma == 0:
            assert incl >= bth + 32, "a 0-byte WRITE with immediate cut short"
            ar_imm.setdefault((direction, qpn, psn),
                              int.from_bytes(fr[bth + 28:bth + 32], "big"))
        else:
            msgs.setdefault((direction, qpn, psn), dma)
            first_data.setdefault((direction, qpn, psn), t)
for d in ("A->B", "B->A"):
    sizes = [v for k, v in msgs.items() if k[0] == d]
    assert sum(sizes) == want, (d, "data bytes on the wire", sum(sizes), "want", want)
    assert max(sizes) <= 1 << 20, (d, "message larger than NCCL's 1 MiB", max(sizes))
    expect_size = min(S // R, 1 << 20)
    assert all(s == expect_size for s in sizes), (d, sorted(set(sizes)), expect_size)
    # the CTS of a message travels the other way, to the sender's QP (data QPN - 1)
    back = "B->A" if d == "A->B" else "A->B"
    per_pair = {}
    for (dd, qpn, psn), t in first_data.items():
        if dd == d:
            per_pair.setdefault(qpn - 1, []).append(t)
    cts_pair = {}
    for (dd, qpn, psn), (t, dma, idx) in cts.items():
        if dd == back:
            cts_pair.setdefault(qpn, []).append(t)
    assert sorted(per_pair) == sorted(cts_pair), (d, sorted(per_pair), sorted(cts_pair))
    for q in per_pair:
        dt, ct = sorted(per_pair[q]), sorted(cts_pair[q])
        assert len(dt) == len(ct), (d, hex(q), "messages", len(dt), "CTS", len(ct))
        assert all(c < m for c, m in zip(ct, dt)), (d, hex(q), "a message before its CTS")
    mine = {k: v for k, v in ar_imm.items() if k[0] == d}
    if ar:
        # each message's data WRITE, then at the next PSN its 0-byte WRITE with immediate
        want_imm = {(d, q, (p + (v + MTU - 1) // MTU) & 0xFFFFFF): v
                     for (dd, q, p), v in msgs.items() if dd == d}
        assert mine == want_imm, (d, "0-byte WRITE_WITH_IMM", len(mine), "want", len(want_imm))
        print("ok: %s %s: every message is a WRITE followed by a 0-byte WRITE with immediate "
              "= its size (%d)" % (run, d, len(mine)))
    else:
        assert not mine, (d, "0-byte WRITE_WITH_IMM without adaptive routing", len(mine))
    print("ok: %s %s: %d messages of %d bytes = %d bytes (2S(%s-1)/%s = %d), each after its "
          "64-byte CTS" % (run, d, len(sizes), expect_size, sum(sizes),
                            "R" if algo == "ring" else "P", "R" if algo == "ring" else "P", want))
for dj in ds:
    assert dj["algo"] == algo and dj["proto"] == "simple" and dj["ranks"] == R, dj["algo"]
    assert dj["wire_bytes_posted"] == want, (dj["wire_bytes_posted"], want)
    assert dj["cts_writes_posted"] == dj["nccl_messages_posted"] == want // min(S // R, 1 << 20)
    assert dj["adaptive_routing"] == ar
    assert dj["ar_imm_writes_posted"] == (dj["nccl_messages_posted"] if ar else 0), dj
    r = dj["results"][0]
    assert r["size"] == S
    algbw = S / (r["time_us"] * 1e3)
    assert abs(r["algbw_GBps"] - algbw) <= 1e-6 * algbw, (r, algbw)
    assert abs(r["busbw_GBps"] - algbw * 2 * (R - 1) / R) <= 1e-6 * algbw, r
print("ok: %s: both processes verified; busbw %.4f GB/s = algbw x 2(R-1)/R; %d frames captured"
      % (run, ds[0]["results"][0]["busbw_GBps"], n))
PY
		fail "$run: capture checks"
	rm -f "$WORK/roce.pcap"
done
echo "PASS"
