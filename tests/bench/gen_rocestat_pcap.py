#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A header-only capture for the rocestat benchmark (stdlib only): N records of snaplen 64, as
a Lumina-style header mirror writes them: 8 QPs between 10.0.0.1 and 10.0.0.2 sending RC RDMA
WRITE_MIDDLE frames of 1082 bytes (1024 B payload; orig_len kept) 100 ns apart, PSNs counting
up, every 16th record an ACK back, every 50th data frame CE-marked, every 1000th record a CNP.

usage: gen_rocestat_pcap.py OUT.pcap COUNT"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
from roceframes import MAGIC_NS, icrc, ip_cksum  # noqa: E402

A, B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
MA, MB = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def frame(src, dst, sm, dm, op, dqp, psn, ext, plen, tos):
    bth = struct.pack(">BBHBBHBBH", op, 0, 0xFFFF, 0, dqp >> 16, dqp & 0xFFFF, 0, psn >> 16,
                      psn & 0xFFFF)
    l4 = bth + ext + bytes(plen)
    ulen = 8 + len(l4) + 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + ulen, 0, 0x4000, 64, 17, 0,
                               src, dst))
    ip[10:12] = struct.pack(">H", ip_cksum(bytes(ip)))
    body = bytes(ip) + struct.pack(">HHHH", 49152 + dqp % 8, 4791, ulen, 0) + l4
    f = dm + sm + b"\x08\x00" + body + icrc(body)
    return f + bytes(max(0, 60 - len(f)))


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    # templates per QP and kind: only the PSN bytes (and the ICRC, left stale: the benchmark
    # is header-only, ICRCs are not checked on cut frames) change
    data = {q: bytearray(frame(A, B, MA, MB, 0x07, 0x200 + q, 0, b"", 1024, 0x6A))
            for q in range(8)}
    ce = {q: bytearray(frame(A, B, MA, MB, 0x07, 0x200 + q, 0, b"", 1024, 0x6B))
          for q in range(8)}
    ack = {q: bytearray(frame(B, A, MB, MA, 0x11, 0x100 + q, 0, struct.pack(">I", 0x1F << 24),
                              0, 0x6A)) for q in range(8)}
    cnp = {q: bytearray(frame(B, A, MB, MA, 0x81, 0x100 + q, 0, b"", 16, 0xC2)) for q in range(8)}
    psn = [0] * 8
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, 64, 1))
        t = 1_700_000_000 * 1_000_000_000
        recs = []
        for i in range(n):
            q = i % 8
            if i % 1000 == 999:
                q = (i // 1000) % 8
                b = cnp[q]
            elif i % 16 == 15:
                q = (i // 16) % 8
                b = ack[q]
                b[51:54] = ((psn[q] - 1) & 0xFFFFFF).to_bytes(3, "big")
            else:
                b = ce[q] if i % 50 == 0 else data[q]
                b[51:54] = psn[q].to_bytes(3, "big")
                psn[q] = (psn[q] + 1) & 0xFFFFFF
            cut = bytes(b[:64])
            recs.append(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(cut),
                                    len(b)) + cut)
            t += 100
            if len(recs) >= 65536:
                f.write(b"".join(recs))
                recs = []
        f.write(b"".join(recs))


if __name__ == "__main__":
    main()
