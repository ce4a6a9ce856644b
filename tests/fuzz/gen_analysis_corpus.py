#!/usr/bin/env python3
"""Seed corpora of rocestat's fuzz targets:

  corpus/rocestat/  captures: every case of tests/analysis/gen_captures.py (pcap us/ns,
                    snaplen-cut, Linux cooked, pcapng with rocemu comments), each cut to its
                    first 48 records of at most 128 bytes (pcapng: 48 whole records), one
                    with 16 whole frames; the small real capture of tests/analysis/data/real;
                    and hostile files (a header alone, a record cut short, a pcapng whose comment
                    option overruns its block, an unsupported link type)
  corpus/dcqcn/     --dcqcn files: profiles/dcqcn-50m.conf, the same values as sysfs
                    `grep . roce_rp/*` output, debugfs rp_/np_ names and a JSON object, and
                    refusals (unknown name, not a number, out of range, a line too long)
  corpus/applog/    --app-log files: nccl-tests all_reduce_perf output (in and out of place
                    columns, '#' lines), rocegen's result rows, and logs with no result row

Each seed is named by the first 16 hex digits of its SHA-1 (as libFuzzer names its finds).
Inputs found by a fuzzer and kept as regressions are written by hand into the corpus and not
touched here (this script only adds and overwrites its own seeds).
usage: gen_analysis_corpus.py [OUT_DIR]   (default: tests/fuzz/corpus next to this script)
"""
import glob
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
MAX_RECORDS = 48
SNAP = 128


def put(out, kind, data):
    d = os.path.join(out, kind)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def cut_pcap(data, n, snap=None):
    """The classic pcap header and its first n records (either byte order), each record cut
    to snap bytes if given (orig_len kept, as a capture with a snaplen has it)."""
    magic = data[:4]
    end = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, res = 24, bytearray(data[:24])
    for _ in range(n):
        if off + 16 > len(data):
            break
        ts_s, ts_f, caplen, orig = struct.unpack(end + "IIII", data[off:off + 16])
        keep = caplen if snap is None else min(caplen, snap)
        res += struct.pack(end + "IIII", ts_s, ts_f, keep, orig)
        res += data[off + 16:off + 16 + keep]
        off += 16 + caplen
    return bytes(res)


def cut_pcapng(data, n):
    """The blocks up to the n-th packet block (little-endian files, as gen_captures writes)."""
    off, packets = 0, 0
    while off + 12 <= len(data) and packets < n:
        btype, blen = struct.unpack("<II", data[off:off + 8])
        if blen < 12:
            break
        off += blen
        if btype in (2, 3, 6):
            packets += 1
    return data[:off]


def captures(out):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(SRC, "tests/analysis/gen_captures.py"),
                        tmp], check=True, stdout=subprocess.DEVNULL)
        files = sorted(glob.glob(os.path.join(tmp, "*.pcap*")))
        for path in files:
            data = open(path, "rb").read()
            if data[:4] == b"\x0a\x0d\x0d\x0a":
                put(out, "rocestat", cut_pcapng(data, MAX_RECORDS))
            else:
                put(out, "rocestat", cut_pcap(data, MAX_RECORDS, SNAP))
        base = cut_pcap(open(files[0], "rb").read(), 16)
        put(out, "rocestat", base)                    # whole frames: ICRCs checked
    real = os.path.join(SRC, "tests/analysis/data/real/connectx_write_read.pcap")
    put(out, "rocestat", open(real, "rb").read())
    put(out, "rocestat", base[:24])                   # header only
    put(out, "rocestat", base[:24 + 16 + 20])         # a record cut short
    hdr = bytearray(base[:24])
    hdr[20:24] = struct.pack("<I" if base[:1] in (b"\xd4", b"\x4d") else ">I", 105)  # 802.11
    put(out, "rocestat", bytes(hdr) + base[24:])
    # pcapng: SHB, IDB, one EPB whose comment option claims more than the block holds
    shb = struct.pack("<IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28)
    idb = struct.pack("<IIHHI", 1, 20, 1, 0, 65535) + struct.pack("<I", 20)
    pkt = bytes(64)
    body = struct.pack("<IIIII", 0, 0, 1, len(pkt), len(pkt)) + pkt
    opt = struct.pack("<HH", 1, 200) + b"rocemu: drop=1\x00\x00"
    blen = 8 + len(body) + len(opt) + 4
    epb = struct.pack("<II", 6, blen) + body + opt + struct.pack("<I", blen)
    put(out, "rocestat", shb + idb + epb)


def dcqcn(out):
    conf = open(os.path.join(SRC, "profiles/dcqcn-50m.conf")).read()
    put(out, "dcqcn", conf)
    values = {}
    for line in conf.splitlines():
        if line and not line.startswith("#"):
            k, v = line.split()
            values[k] = float(v)
    put(out, "dcqcn", json.dumps(values, indent=1))
    put(out, "dcqcn", "".join("/sys/class/net/eth2/ecn/roce_rp/%s:%g\n" % kv
                              for kv in values.items()))
    put(out, "dcqcn", "rp_time_reset = 300\nrp_byte_reset = 32767\nrp_threshold = 1\n"
        "rp_ai_rate = 5\nrp_hai_rate = 50\nrp_gd = 11\nrp_min_dec_fac = 50\n"
        "rp_min_rate = 1\nrp_dce_tcp_g = 1019\nrp_dce_tcp_rtt = 1\n"
        "rp_rate_reduce_monitor_period = 4\nrp_initial_alpha_value = 1023\n"
        "rp_clamp_tgt_rate = 0\nrp_clamp_tgt_rate_after_time_inc = 1\n"
        "np_min_time_between_cnps = 4\nnp_cnp_dscp = 48\nnp_cnp_prio = 6\n")
    put(out, "dcqcn", '{"rpg_threshold": 5, "dce_tcp_g": 1020, "line_rate_mbps": 25000,'
        ' "rate_to_set_on_first_cnp": 0, "enable": 1}\n')
    for bad in ["rpg_thresold 5\n", "rpg_time_reset fast\n", "rpg_threshold 0\n",
                "rpg_min_dec_fac 101\n", "dce_tcp_g 2048\n", "clamp_tgt_rate 2\n",
                "rate_to_set_on_first_cnp 1\n", "rpg_time_reset 0\n", "rpg_ai_rate -1\n",
                "rpg_ai_rate nan\n", "rpg_time_reset\n", "x" * 600 + " 1\n",
                '{"rpg_threshold": "5"}', '{"rpg_threshold": 5, "rpg_threshold": 6}',
                "[1, 2]", "{"]:
        put(out, "dcqcn", bad)


def applog(out):
    nccl = """# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on     node1 device  0 [0x17] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    31.85    0.00    0.00      0    31.40    0.00    0.00      0
     1048576        262144     float     sum      -1    410.2    2.56    4.48      0    409.8    2.56    4.48      0
   134217728      33554432     float     sum      -1   9811.3   13.68   23.94      0   9809.1   13.68   23.95      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 9.47
"""
    put(out, "applog", nccl)
    put(out, "applog", "# rocegen allreduce, 2 ranks\n"
        "#  size count type redop time_us algbw_GBps busbw_GBps\n"
        "   65536 16384 float sum 120.5 0.54 0.54\n"
        " 4194304 1048576 float sum 3900.0 1.08 1.08\n")
    put(out, "applog", "# nothing here\nsize count type\n")
    put(out, "applog", "1 2 3 4 1e400 nan inf\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    captures(out)
    dcqcn(out)
    applog(out)
    for kind in ("rocestat", "dcqcn", "applog"):
        d = os.path.join(out, kind)
        print("%s: %d seeds, %d bytes" % (d, len(os.listdir(d)),
              sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))))


if __name__ == "__main__":
    main()
