#!/usr/bin/env python3
"""rocestat on rocegen's SRD-like transport (lib/endpoint/ep_srd.h): BTH opcodes 0xC0 (data, a
16-byte header then payload, sprayed over UDP source ports, out of order) and 0xC1 (SACK) are
manufacturer-specific, so lib/proto parses them as opcodes without extension headers. This
writes a capture of both, with right ICRCs, and checks that rocestat reads it to the end: every
packet RoCE, none malformed, none with a bad ICRC, each flow's opcodes counted, and none taken
for an RC data packet by its low five bits.
usage: run_rocestat_srd.py ROCESTAT"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib


def ip_csum(h):
    s = sum((h[i] << 8) | h[i + 1] for i in range(0, len(h), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(op, psn, dqp, sport, payload, src, dst):
    bth = bytes([op, 0, 0xFF, 0xFF, 0, dqp >> 16 & 255, dqp >> 8 & 255, dqp & 255,
                 0x80 if op == 0xC0 else 0, psn >> 16 & 255, psn >> 8 & 255, psn & 255])
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack(">HHHH", sport, 4791, udp_len, 0)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0x6A, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                               bytes(src), bytes(dst)))
    ip[10:12] = struct.pack(">H", ip_csum(ip))
    # ICRC (docs/wire.md): TOS, TTL, IP checksum, UDP checksum and BTH byte 4 as ones
    m = bytearray(ip)
    m[1] = m[8] = m[10] = m[11] = 0xFF
    u = bytearray(udp)
    u[6] = u[7] = 0xFF
    b = bytearray(bth)
    b[4] = 0xFF
    icrc = zlib.crc32(b"\xff" * 8 + bytes(m) + bytes(u) + bytes(b) + payload) & 0xFFFFFFFF
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0])
    return eth + bytes(ip) + udp + bth + payload + struct.pack("<I", icrc)


def main():
    a, b = (10, 0, 0, 1), (10, 0, 0, 2)
    frames = []
    for i, psn in enumerate([0, 2, 1, 3, 5, 4, 7, 6]):
        flags = (1 if psn == 7 else 0) | (4 if psn == 0 else 0)
        hdr = struct.pack(">QIB3x", psn * 1024, 0, flags)
        frames.append(frame(0xC0, psn, 0x1025, 0xC000 | (0x111 * i), hdr + bytes(1024), a, b))
        bitmap = bytes([0x01]) + bytes(31)
        frames.append(frame(0xC1, psn, 0x1024, 0xC123, bytes([0, 0, psn, 3]) + bitmap, b, a))
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "srd.pcap")
        with open(pcap, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
            for t, fr in enumerate(frames):
                f.write(struct.pack("<IIII", 0, t + 1, len(fr), len(fr)))
                f.write(fr)
        out = os.path.join(d, "r.json")
        r = subprocess.run([sys.argv[1], "--quiet", "--json", out, pcap], capture_output=True,
                           text=True)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        rep = json.load(open(out))
    flows = rep["flows"]
    assert len(flows) == 2, flows
    for fl in flows:
        assert fl["counters"]["packets"] == 8, fl
        assert fl["counters"].get("icrc_bad", 0) == 0, fl
        assert sum(fl["opcodes"].values()) == 8, fl["opcodes"]
        # not RC: no data packets, messages or PSN checks read from their low five bits
        # (0xC1 would be a SEND MIDDLE, 0xC0 a SEND FIRST)
        c = fl["counters"]
        assert c.get("data_packets", 0) == 0 and c.get("messages", 0) == 0, c
        assert c.get("out_of_order", 0) == 0 and c.get("gaps", 0) == 0, c
    cap = rep["capture"]
    assert cap["packets"] == cap["roce_packets"] == len(frames), cap
    assert cap["malformed_roce"] == 0 and cap["other_packets"] == 0, cap
    print("ok: rocestat read %d SRD frames (0xC0 data sprayed over 8 ports, 0xC1 SACKs): "
          "2 flows, opcodes %s" % (len(frames), [fl["opcodes"] for fl in flows]))


if __name__ == "__main__":
    main()
