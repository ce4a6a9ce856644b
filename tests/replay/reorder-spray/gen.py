#!/usr/bin/env python3
"""Generates the reorder-spray replay input and holds the model of what the reorder stage must
do with it. Stdlib only.

    gen.py OUTDIR   writes OUTDIR/a.pcap (into p0: A's RDMA WRITEs) and OUTDIR/b.pcap (into
                    p1: B's ACKs)

A sends 4 QPs (B's QPNs 0x101-0x104) of 60 WRITE_ONLY frames each (PSN 0..59), round robin,
one frame every 1000 ns: frame k is QP k % 4, PSN k // 4, sent at k us. A fabric that sprays
each QP per packet over 4 paths of 2, 4, 6 and 8 us (path = PSN % 4, as round-robin spraying
over skewed paths would) delivers it at send + delay: within a QP, PSN 4n+4 overtakes PSN
4n+3 and often 4n+2. The pcap is what reaches the switch: frames in arrival order. QP 0x104's
PSN 30 is lost on its path (never arrives): its hole is given up after the timeout.
B acknowledges every 10th PSN of each QP (ACKs to A's QPN 0x11), which pass through.

model(departures, timeout_ns) replays the stage's rules on the TM's departure times (what the
same pipeline without the reorder stage outputs) and returns each frame's output time."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from roceframes import icrc, ip_cksum, write_pcap  # noqa: E402

T0 = 1_000_000_000
MAC = {"A": b"\x02\x00\x00\x00\x00\x0a", "B": b"\x02\x00\x00\x00\x00\x0b"}
IP = {"A": bytes([10, 0, 0, 1]), "B": bytes([10, 0, 0, 2])}
QPS = [0x101, 0x102, 0x103, 0x104]
N_PSN = 60
PATH_NS = [2000, 4000, 6000, 8000]
LOST = (0x104, 30)
QP_A = 0x11
PAYLOAD = 256
WRITE_ONLY, ACK = 0x0A, 0x11


def frame(src, dst, opcode, qpn, psn):
    if opcode == WRITE_ONLY:
        ext = struct.pack(">QII", 0x7f0000001000 + psn * PAYLOAD, 0x1234, PAYLOAD)
        payload = bytes((psn + i) & 0xFF for i in range(PAYLOAD))
    else:
        ext, payload = struct.pack(">I", 0x1F << 24 | (psn & 0xFFFFFF)), b""
    bth = struct.pack(">BBHBBHBBH", opcode, 0, 0xFFFF, 0, qpn >> 16, qpn & 0xFFFF,
                      0x80 if opcode == WRITE_ONLY else 0, psn >> 16, psn & 0xFFFF)
    l4 = bth + ext + payload
    udp = struct.pack(">HHHH", 49152 + (qpn & 0xFF), 4791, 8 + len(l4) + 4, 0)
    iph = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 26 << 2 | 2, 20 + len(udp) + len(l4) + 4,
                                0, 0x4000, 64, 17, 0, IP[src], IP[dst]))
    iph[10:12] = struct.pack(">H", ip_cksum(bytes(iph)))
    body = bytes(iph) + udp + l4
    f = MAC[dst] + MAC[src] + b"\x08\x00" + body + icrc(body)
    return f + b"\0" * max(0, 60 - len(f))


def sent():
    """[(arrival ns after T0, qpn, psn)] of every data frame that reaches the switch."""
    out = []
    for k in range(len(QPS) * N_PSN):
        qpn, psn = QPS[k % len(QPS)], k // len(QPS)
        if (qpn, psn) != LOST:
            out.append((1000 * k + PATH_NS[psn % len(PATH_NS)], qpn, psn))
    return sorted(out)


def a_frames():
    return [(t, frame("A", "B", WRITE_ONLY, qpn, psn)) for t, qpn, psn in sent()]


def b_frames():
    return [(1000 * (4 * psn + 4) + 10000, frame("B", "A", ACK, QP_A, psn))
            for psn in range(9, N_PSN, 10)]


def model(departures, timeout_ns):
    """departures: [(t_ns, qpn, psn)] in departure order from the TM. Returns
    [(t_out_ns, qpn, psn, held_ns)] in output order: per QP, the expected PSN E is learned from
    its first frame; a frame at E goes at once and takes the held ones in sequence with it; one
    ahead is held; the oldest held frame's QP gives up its hole timeout_ns after it was held
    (before the departure of any frame at that same time, as the runner releases first)."""
    exp, held, out = {}, {}, []  # held[qpn] = {psn: t_hold}

    def run(qpn, t):
        while held[qpn] and min(held[qpn]) == exp[qpn]:
            p = exp[qpn]
            out.append((t, qpn, p, t - held[qpn].pop(p)))
            exp[qpn] = p + 1

    def timeouts(until):
        while True:
            cands = [(th, q) for q in held for th in held[q].values()]
            if not cands or min(cands)[0] + timeout_ns > until:
                return
            th, q = min(cands)
            exp[q] = min(held[q])
            run(q, th + timeout_ns)

    for t, qpn, psn in departures:
        timeouts(t)
        held.setdefault(qpn, {})
        exp.setdefault(qpn, psn)
        if psn == exp[qpn]:
            out.append((t, qpn, psn, 0))
            exp[qpn] = psn + 1
            run(qpn, t)
        elif psn > exp[qpn]:
            held[qpn][psn] = t
        else:
            out.append((t, qpn, psn, 0))
    timeouts(float("inf"))
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write_pcap(os.path.join(out, "a.pcap"), a_frames(), T0)
    write_pcap(os.path.join(out, "b.pcap"), b_frames(), T0)


if __name__ == "__main__":
    main()
