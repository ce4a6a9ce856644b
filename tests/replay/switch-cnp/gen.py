#!/usr/bin/env python3
"""Generates the switch-cnp replay input: RoCEv2 RC WRITE flows A->B (some packets CE-marked)
on port p0 and the receivers' ACKs and one NIC CNP B->A on port p1, with valid IPv4 checksums
and ICRCs (zlib CRC-32 as in docs/wire.md). Stdlib only.

    gen.py OUTDIR   writes OUTDIR/a.pcap (to feed into p0) and OUTDIR/b.pcap (into p1)

Times are nanoseconds after T0. The stage paces on the egress clock (when the data packet
leaves towards B): every data packet below has the same size and finds the link idle, so the
gaps between them are kept. The scenario, and what the switch's cnp stage (interval 4 us)
must do with each data packet:

  A->B (p0)                                     expected
  t=0      QP1 WRITE_FIRST  psn 0 CE            no CNP: A's QPN not learned yet (unknown_qp)
  t=2000   QP1 WRITE_MIDDLE psn 1 CE            CNP to A, DestQP 0x000111
  t=2500   QP2 WRITE_ONLY   psn 0 CE            CNP to A, DestQP 0x000333 (QPs paced apart)
  t=2700   QP3 WRITE_ONLY   psn 0 CE, VLAN 100  CNP to C, DestQP 0x000555, tagged VLAN 100
  t=3000   QP1 WRITE_MIDDLE psn 2 CE            none: 1000 ns after the last (suppressed)
  t=4000   QP1 WRITE_MIDDLE psn 3 ECT(0)        none: not CE
  t=6000   QP1 WRITE_MIDDLE psn 4 CE            CNP: exactly 4000 ns after the last
  t=9999   QP1 WRITE_MIDDLE psn 5 CE            none: 3999 ns after the last (suppressed)
  t=10200  QP1 WRITE_LAST   psn 6 CE            CNP: 4200 ns after the last
  B->A (p1)
  t=1000   QP1 ACK to A's QP 0x000111
  t=1500   QP2 ACK to A's QP 0x000333 (from now on B addresses two QPs on A: the UDP port tells)
  t=1700   QP3 ACK D->C to C's QP 0x000555, VLAN 100
  t=5000   a CNP from B's NIC to QP 0x000111 (dropped when drop_nic_cnps)
  t=11000  QP1 ACK psn 6
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from roceframes import icrc, ip_cksum, write_pcap  # noqa: E402,F401

T0 = 1_000_000_000
MAC = {"A": b"\x02\x00\x00\x00\x00\x0a", "B": b"\x02\x00\x00\x00\x00\x0b",
       "C": b"\x02\x00\x00\x00\x00\x0c", "D": b"\x02\x00\x00\x00\x00\x0d"}
IP = {"A": bytes([10, 0, 0, 1]), "B": bytes([10, 0, 0, 2]),
      "C": bytes([10, 0, 0, 3]), "D": bytes([10, 0, 0, 4])}
QP = {"a1": 0x000111, "b1": 0x000222, "a2": 0x000333, "b2": 0x000444,
      "c3": 0x000555, "d3": 0x000666}
SPORT = {1: 49152, 2: 49153, 3: 49154}
OP = {"WRITE_FIRST": 0x06, "WRITE_MIDDLE": 0x07, "WRITE_LAST": 0x08, "WRITE_ONLY": 0x0A,
      "ACK": 0x11, "CNP": 0x81}
PAYLOAD = 1024


def frame(src, dst, opcode, qpn, psn, sport, ecn=2, dscp=26, vlan=None, pcp=3, becn=0,
          ackreq=0):
    if opcode in (OP["WRITE_FIRST"], OP["WRITE_ONLY"]):
        ext = struct.pack(">QII", 0x7f0000001000, 0x1234, PAYLOAD)
        payload = bytes(i & 0xFF for i in range(PAYLOAD))
    elif opcode in (OP["WRITE_MIDDLE"], OP["WRITE_LAST"]):
        ext, payload = b"", bytes(i & 0xFF for i in range(PAYLOAD))
    elif opcode == OP["ACK"]:
        ext, payload = struct.pack(">I", 0x1F << 24 | (psn & 0xFFFFFF)), b""
    else:  # CNP
        ext, payload = b"\0" * 16, b""
    bth = struct.pack(">BBHBBHBBH", opcode, 0, 0xFFFF, 0x40 if becn else 0,
                      qpn >> 16, qpn & 0xFFFF, 0x80 if ackreq else 0, psn >> 16, psn & 0xFFFF)
    l4 = bth + ext + payload
    udp = struct.pack(">HHHH", sport, 4791, 8 + len(l4) + 4, 0)
    iph = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, dscp << 2 | ecn, 20 + len(udp) + len(l4)
                                + 4, 0, 0x4000, 64, 17, 0, IP[src], IP[dst]))
    iph[10:12] = struct.pack(">H", ip_cksum(bytes(iph)))
    body = bytes(iph) + udp + l4
    eth = MAC[dst] + MAC[src]
    if vlan is not None:
        eth += struct.pack(">HH", 0x8100, pcp << 13 | vlan)
    eth += b"\x08\x00"
    f = eth + body + icrc(body)
    return f + b"\0" * max(0, 60 - len(f))


def a_frames():
    return [
        (0, frame("A", "B", OP["WRITE_FIRST"], QP["b1"], 0, SPORT[1], ecn=3)),
        (2000, frame("A", "B", OP["WRITE_MIDDLE"], QP["b1"], 1, SPORT[1], ecn=3)),
        (2500, frame("A", "B", OP["WRITE_ONLY"], QP["b2"], 0, SPORT[2], ecn=3)),
        (2700, frame("C", "D", OP["WRITE_ONLY"], QP["d3"], 0, SPORT[3], ecn=3, vlan=100)),
        (3000, frame("A", "B", OP["WRITE_MIDDLE"], QP["b1"], 2, SPORT[1], ecn=3)),
        (4000, frame("A", "B", OP["WRITE_MIDDLE"], QP["b1"], 3, SPORT[1], ecn=2)),
        (6000, frame("A", "B", OP["WRITE_MIDDLE"], QP["b1"], 4, SPORT[1], ecn=3)),
        (9999, frame("A", "B", OP["WRITE_MIDDLE"], QP["b1"], 5, SPORT[1], ecn=3)),
        (10200, frame("A", "B", OP["WRITE_LAST"], QP["b1"], 6, SPORT[1], ecn=3, ackreq=1)),
    ]


def b_frames():
    return [
        (1000, frame("B", "A", OP["ACK"], QP["a1"], 0, SPORT[1])),
        (1500, frame("B", "A", OP["ACK"], QP["a2"], 0, SPORT[2])),
        (1700, frame("D", "C", OP["ACK"], QP["c3"], 0, SPORT[3], vlan=100)),
        (5000, frame("B", "A", OP["CNP"], QP["a1"], 0, 0, dscp=48, ecn=2, becn=1)),
        (11000, frame("B", "A", OP["ACK"], QP["a1"], 6, SPORT[1])),
    ]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write_pcap(os.path.join(out, "a.pcap"), a_frames(), T0)
    write_pcap(os.path.join(out, "b.pcap"), b_frames(), T0)


if __name__ == "__main__":
    main()
