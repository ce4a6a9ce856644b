#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write pcaps of RoCEv2 frames for the throughput benchmarks (stdlib only).

Each pcap holds N frames of one kind, all valid RoCEv2 (IPv4 checksum and ICRC right, UDP
checksum 0 as NICs send it), with the PSN counting up and the QP cycling over 8 values:

  roce_ack64.pcap    RC ACKNOWLEDGE (AETH), 62 bytes padded with zeros to 64
  roce_write1k.pcap  RC RDMA WRITE ONLY (RETH), 1024-byte payload: 1098-byte frames
  roce_write4k.pcap  RC RDMA WRITE ONLY (RETH), 4096-byte payload: 4170-byte frames

The headers match bench_switch.c's (lib/proto roce_build() defaults: TTL 64, DF, DSCP 26,
ECT(0), P_Key 0xFFFF). The payload carries the frame index, so loss and reorder could be
stated exactly.

usage: gen_roce_pcap.py OUTDIR [--count N] [--distinct D] [--kinds "ack64 ..."]
       --distinct D: build D frames and write them over and over (frame i is frame i % D,
       timestamps still 1 us apart), for pcaps of millions of frames (bench_replay.sh)
"""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
from roceframes import icrc, ip_cksum  # noqa: E402

ROCE_PORT = 4791
OP_RC_RDMA_WRITE_ONLY = 0x0A
OP_RC_ACK = 0x11
DST_MAC = bytes([0x02, 0, 0, 0, 0, 0x02])
SRC_MAC = bytes([0x02, 0, 0, 0, 0, 0x01])
SRC_IP = bytes([10, 0, 0, 1])
DST_IP = bytes([10, 0, 0, 2])

KINDS = {
    # name: (opcode, payload bytes)
    "ack64": (OP_RC_ACK, 0),
    "write1k": (OP_RC_RDMA_WRITE_ONLY, 1024),
    "write4k": (OP_RC_RDMA_WRITE_ONLY, 4096),
}


def frame(kind, seq):
    opcode, payload_len = KINDS[kind]
    qp = 0x100 + (seq & 7)
    psn = seq & 0xFFFFFF
    if opcode == OP_RC_ACK:
        ext = struct.pack("!I", (0x1F << 24) | (seq & 0xFFFFFF))  # AETH: ACK, unlimited credit
        payload = b""
    else:
        ext = struct.pack("!QII", 0x7F0000000000 + seq * payload_len, 0x1234, payload_len)
        payload = (struct.pack("!I", seq) * (payload_len // 4 + 1))[:payload_len]
    pad = (4 - len(payload) % 4) % 4
    payload += b"\0" * pad
    # BTH: opcode, SE|M|PadCnt|TVer, P_Key, resv8a, DestQP, AckReq|resv7, PSN
    bth = struct.pack("!BBHI I", opcode, pad << 4, 0xFFFF, qp & 0xFFFFFF, psn)
    udp_len = 8 + len(bth) + len(ext) + len(payload) + 4
    udp = struct.pack("!HHHH", 0xC000 | (seq & 0xFF), ROCE_PORT, udp_len, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, (26 << 2) | 2, 20 + udp_len, 0,
                               0x4000, 64, 17, 0, SRC_IP, DST_IP))
    ip[10:12] = struct.pack("!H", ip_cksum(bytes(ip)))
    ip = bytes(ip)
    eth = DST_MAC + SRC_MAC + b"\x08\x00"
    f = eth + ip + udp + bth + ext + payload + icrc(bytes(ip) + udp + bth + ext + payload)
    if len(f) < 64:
        f += b"\0" * (64 - len(f))  # Ethernet padding after the ICRC (the ACK: 62 -> 64)
    return f


def write_pcap(path, frames, count):
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(count):
            f = frames[i % len(frames)]
            out.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(f),
                                  len(f)))
            out.write(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=256, help="frames per pcap (default 256)")
    ap.add_argument("--distinct", type=int, default=0,
                    help="distinct frames, repeated up to --count (default: all distinct)")
    ap.add_argument("--kinds", default=" ".join(KINDS), help="which pcaps (default: all)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for kind in a.kinds.split():
        n = a.distinct if 0 < a.distinct < a.count else a.count
        frames = [frame(kind, i) for i in range(n)]
        path = os.path.join(a.outdir, "roce_%s.pcap" % kind)
        write_pcap(path, frames, a.count)
        print("%s: %d frames of %d bytes" % (path, a.count, len(frames[0])))


if __name__ == "__main__":
    main()
