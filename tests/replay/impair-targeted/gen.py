#!/usr/bin/env python3
"""Generates the impair-targeted replay input: an RC RDMA WRITE flow A->B that the sender
retransmits go-back-N from a NAKed PSN, with valid IPv4 checksums and ICRCs (zlib CRC-32 as in
docs/wire.md). Stdlib only.

    gen.py OUTDIR   writes OUTDIR/a.pcap (into p0: A's data) and OUTDIR/b.pcap (into p1: B's ACK/NAKs)

Times are nanoseconds after T0. Every data frame is a 256-byte WRITE_ONLY, 1000 ns apart.

  A->B (p0), QP 0x45 on B (A's QP 0x11)       iteration of the PSN
  t=0..24000     PSN 0..24                     1
  t=26000..35000 PSN 15..24 (after NAK 15)     2   <- PSN 17 here (t=28000) is "iteration 2"
  t=37000..44000 PSN 17..24 (after NAK 17)     3 (the switch saw the lost PSN 17 at 28000)
  A->B (p0), QP 0x46 on B: PSN 17 at t=500 and again at t=1500 (iteration 2 on another QP)
  B->A (p1): NAK (PSN sequence error) expecting 15 at t=25000, expecting 17 at t=36000,
             ACK 24 at t=45000

With the drop of PSN 17 at iteration 2 on QP 0x45, exactly the frame at t=28000 is missing;
the retransmission of 17 at t=37000 is its iteration 3 and passes.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from roceframes import icrc, ip_cksum, write_pcap  # noqa: E402,F401

T0 = 1_000_000_000
MAC = {"A": b"\x02\x00\x00\x00\x00\x0a", "B": b"\x02\x00\x00\x00\x00\x0b"}
IP = {"A": bytes([10, 0, 0, 1]), "B": bytes([10, 0, 0, 2])}
QP_A, QP_B, QP_B2 = 0x11, 0x45, 0x46
SPORT = 49152
PAYLOAD = 256
WRITE_ONLY, ACK = 0x0A, 0x11


def frame(src, dst, opcode, qpn, psn, syndrome=0x1F):
    if opcode == WRITE_ONLY:
        ext = struct.pack(">QII", 0x7f0000001000 + psn * PAYLOAD, 0x1234, PAYLOAD)
        payload = bytes((psn + i) & 0xFF for i in range(PAYLOAD))
    else:
        ext, payload = struct.pack(">I", syndrome << 24 | (psn & 0xFFFFFF)), b""
    bth = struct.pack(">BBHBBHBBH", opcode, 0, 0xFFFF, 0, qpn >> 16, qpn & 0xFFFF,
                      0x80 if opcode == WRITE_ONLY else 0, psn >> 16, psn & 0xFFFF)
    l4 = bth + ext + payload
    udp = struct.pack(">HHHH", SPORT, 4791, 8 + len(l4) + 4, 0)
    iph = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 26 << 2 | 2, 20 + len(udp) + len(l4) + 4,
                                0, 0x4000, 64, 17, 0, IP[src], IP[dst]))
    iph[10:12] = struct.pack(">H", ip_cksum(bytes(iph)))
    body = bytes(iph) + udp + l4
    f = MAC[dst] + MAC[src] + b"\x08\x00" + body + icrc(body)
    return f + b"\0" * max(0, 60 - len(f))


def a_frames():
    fr = [(1000 * psn, frame("A", "B", WRITE_ONLY, QP_B, psn)) for psn in range(25)]
    fr += [(26000 + 1000 * k, frame("A", "B", WRITE_ONLY, QP_B, 15 + k)) for k in range(10)]
    fr += [(37000 + 1000 * k, frame("A", "B", WRITE_ONLY, QP_B, 17 + k)) for k in range(8)]
    fr += [(500, frame("A", "B", WRITE_ONLY, QP_B2, 17)), (1500, frame("A", "B", WRITE_ONLY, QP_B2, 17))]
    return sorted(fr, key=lambda x: x[0])


def b_frames():
    return [(25000, frame("B", "A", ACK, QP_A, 15, syndrome=0x60)),
            (36000, frame("B", "A", ACK, QP_A, 17, syndrome=0x60)),
            (45000, frame("B", "A", ACK, QP_A, 24))]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write_pcap(os.path.join(out, "a.pcap"), a_frames(), T0)
    write_pcap(os.path.join(out, "b.pcap"), b_frames(), T0)


if __name__ == "__main__":
    main()
