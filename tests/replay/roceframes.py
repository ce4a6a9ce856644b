#!/usr/bin/env python3
"""What the replay tests and the benchmarks' pcap generator share, stdlib only: the IPv4 header
checksum and the RoCEv2 ICRC of docs/wire.md (computed with zlib, independently of lib/proto),
an RC frame builder, a classic nanosecond pcap writer, and the two-port replay run with its compare-to-expected
step."""
import json
import os
import shutil
import struct
import subprocess
import zlib

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D


def ip_cksum(hdr):
    """Internet checksum of a 20-byte IPv4 header whose checksum field is zero."""
    s = sum(struct.unpack(">10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def icrc(body):
    """ICRC over an IPv4 RoCEv2 packet from the IP header to the end (without the ICRC), as
    wire bytes: CRC-32 of 8 x 0xFF, then the packet with TOS, TTL, IP checksum, UDP checksum
    and BTH byte 4 set to all ones; stored little-endian, as zlib computes it."""
    b = bytearray(body)
    b[1] = 0xFF             # TOS
    b[8] = 0xFF             # TTL
    b[10:12] = b"\xff\xff"  # IP checksum
    b[26:28] = b"\xff\xff"  # UDP checksum
    b[32] = 0xFF            # BTH byte 4
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def rc_frame(psn, payload=1024, opcode=0x07, qp=0x45, sport=0xC000, dscp=26, ecn=2,
             with_icrc=False):
    """Eth 02:..:01 -> 02:..:02 | IPv4 10.0.0.1 -> 10.0.0.2 (DSCP, ECN) | UDP sport -> 4791 |
    BTH (opcode, DestQP qp, PSN) | zero payload | ICRC (zeros unless with_icrc)."""
    bth = struct.pack(">BBHII", opcode, 0, 0xFFFF, qp, psn & 0xFFFFFF)
    udp = struct.pack(">HHHH", sport, 4791, 8 + len(bth) + payload + 4, 0)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, (dscp << 2) | ecn,
                               20 + len(udp) + len(bth) + payload + 4, 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    ip[10:12] = struct.pack(">H", ip_cksum(bytes(ip)))
    pkt = bytes(ip) + udp + bth + bytes(payload)
    eth = bytes.fromhex("020000000002" "020000000001") + b"\x08\x00"
    return eth + pkt + (icrc(pkt) if with_icrc else bytes(4))


def write_pcap(path, frames, t0=0):
    """A nanosecond pcap of [(t_ns, frame bytes), ...], each at t0 + t_ns."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, 65535, 1))
        for t, b in frames:
            ts = t0 + t
            f.write(struct.pack("<IIII", ts // 1_000_000_000, ts % 1_000_000_000, len(b), len(b)))
            f.write(b)


def replay_two_ports(rocemu, pipeline, tmp, tag, stage_type, extra=()):
    """rocemu replay of tmp/a.pcap into p0 and tmp/b.pcap into p1; returns its output, the
    counters of the first stage of stage_type, each port's output frames and the paths."""
    import pcapdump
    outs = {port: os.path.join(tmp, "%s-%s.pcap" % (tag, port)) for port in ("p0", "p1")}
    stats = os.path.join(tmp, tag + "-stats.json")
    r = subprocess.run([rocemu, "replay", "--pipeline", pipeline,
                        "--in", os.path.join(tmp, "a.pcap") + ":p0",
                        "--in", os.path.join(tmp, "b.pcap") + ":p1",
                        "--out", outs["p0"] + ":p0", "--out", outs["p1"] + ":p1",
                        "--stats", stats] + list(extra),
                       capture_output=True, text=True, timeout=120, cwd=tmp)
    if r.returncode != 0:
        raise SystemExit("FAIL: %s: rocemu replay exited %d\n%s%s" % (tag, r.returncode, r.stdout,
                                                                     r.stderr))
    with open(stats) as f:
        st = json.load(f)
    ctr = [x for x in st["stages"] if x["type"] == stage_type][0]["counters"]
    frames = {port: pcapdump.read_pcap(path)[1] for port, path in outs.items()}
    return r.stdout, ctr, frames, outs


def diff_expected(got, exp, tmp):
    """None when got equals the file exp, else a unified diff (ROCEMU_UPDATE_EXPECTED=1
    rewrites exp with got)."""
    with open(exp) as f:
        want = f.read()
    if got == want:
        return None
    gp = os.path.join(tmp, "got.txt")
    with open(gp, "w") as f:
        f.write(got)
    d = subprocess.run(["diff", "-u", exp, gp], capture_output=True, text=True)
    if os.environ.get("ROCEMU_UPDATE_EXPECTED"):
        shutil.copy(gp, exp)
    return d.stdout[:4000]
