#!/usr/bin/env python3
"""Captures with known ground truth for rocestat, built here frame by frame (IPv4 checksum and
ICRC by zlib in tests/replay/roceframes.py, independently of lib/proto).

    gen_captures.py OUTDIR     writes OUTDIR/<case>.pcap (and variants) and OUTDIR/truth.json

Hosts: A 10.0.0.1 QP 0x100 (sender), B 10.0.0.2 QP 0x200 (receiver); the UDP source port is
the Linux/mlx5 one of the pair (49160, docs/wire.md). Data are SEND_MIDDLE packets of 1024
bytes, 1 us apart; ACKs and NAKs go B -> A to QP 0x100; CNPs go B -> A to QP 0x100.
truth.json: per case the rocestat invocation and the values its JSON must hold.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
import roceframes  # noqa: E402

A_IP, B_IP = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
A_MAC, B_MAC = bytes.fromhex("02000000000a"), bytes.fromhex("02000000000b")
QA, QB = 0x100, 0x200
US = 1000


def linux_sport(l, r):
    v = l * r
    v ^= v >> 20
    v ^= v >> 40
    fl = v & 0xFFFFF
    lo = fl & 0x3FFF
    lo ^= (fl & 0xFC000) >> 14
    return lo | 0xC000


def frame(src_ip, dst_ip, src_mac, dst_mac, opcode, dqp, psn, ext=b"", payload=b"",
          tos=0x6A, sport=None, becn=0):
    """Ethernet | IPv4 | UDP 4791 | BTH | ext | payload | ICRC, padded to 60 bytes."""
    if sport is None:
        sport = linux_sport(QA, QB)
    bth = struct.pack(">BBHBBHBBH", opcode, 0x40, 0xFFFF, 0x40 if becn else 0,
                      dqp >> 16, dqp & 0xFFFF, 0, psn >> 16, psn & 0xFFFF)
    l4 = bth + ext + payload
    udp_len = 8 + len(l4) + 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                               src_ip, dst_ip))
    ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
    udp = struct.pack(">HHHH", sport, 4791, udp_len, 0)
    body = bytes(ip) + udp + l4
    f = dst_mac + src_mac + b"\x08\x00" + body + roceframes.icrc(body)
    return f + b"\x00" * max(0, 60 - len(f))


def data(psn, ce=False, dqp=QB, src=A_IP, dst=B_IP, sport=None):
    return frame(src, dst, A_MAC, B_MAC, 0x01, dqp, psn, payload=bytes(1024),
                 tos=0x6B if ce else 0x6A, sport=sport)


def ack(psn, syndrome=0x1F, msn=0):
    return frame(B_IP, A_IP, B_MAC, A_MAC, 0x11, QA, psn,
                 ext=struct.pack(">I", syndrome << 24 | msn))


def nak(psn):
    return ack(psn, syndrome=0x60)


def cnp(dqp=QA, src=B_IP, dst=A_IP, sport=None):
    return frame(src, dst, B_MAC, A_MAC, 0x81, dqp, 0, payload=bytes(16), tos=0xC2,
                 sport=sport, becn=1)


def pfc(src_mac, enable, quanta):
    q = [0] * 8
    for p, v in quanta.items():
        q[p] = v
    f = (bytes.fromhex("0180c2000001") + src_mac + b"\x88\x08" +
         struct.pack(">HH8H", 0x0101, enable, *q))
    return f + b"\x00" * (60 - len(f))


def pause(src_mac, quanta):
    f = bytes.fromhex("0180c2000001") + src_mac + b"\x88\x08" + struct.pack(">HH", 1, quanta)
    return f + b"\x00" * (60 - len(f))


def write_pcap_us(path, frames, snaplen=65535):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", roceframes.MAGIC_US, 2, 4, 0, 0, snaplen, 1))
        for t, b in frames:
            cut = b[:snaplen]
            f.write(struct.pack("<IIII", t // 1_000_000_000, (t % 1_000_000_000) // 1000,
                                len(cut), len(b)))
            f.write(cut)


def write_pcap_snap(path, frames, snaplen):
    """ns pcap with frames cut to snaplen (orig_len kept)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", roceframes.MAGIC_NS, 2, 4, 0, 0, snaplen, 1))
        for t, b in frames:
            cut = b[:snaplen]
            f.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(cut),
                                len(b)))
            f.write(cut)


def write_pcap_sll(path, frames):
    """ns pcap of Linux cooked (SLL v1, tcpdump -i any) records: the Ethernet header replaced
    by the 16-byte cooked header (outgoing, ARPHRD_ETHER, the source MAC, the EtherType)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", roceframes.MAGIC_NS, 2, 4, 0, 0, 65535, 113))
        for t, b in frames:
            rec = struct.pack(">HHH", 4, 1, 6) + b[6:12] + b"\x00\x00" + b[12:14] + b[14:]
            f.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(rec),
                                len(rec)))
            f.write(rec)


def pad4(b):
    return b + b"\x00" * (-len(b) % 4)


def write_pcapng(path, frames, comments):
    """pcapng, ns resolution (if_tsresol 9); comments: {index: text} as opt_comment."""
    def block(btype, body):
        n = 12 + len(body)
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    idb_opts = struct.pack("<HH", 9, 1) + b"\x09\x00\x00\x00" + struct.pack("<HH", 0, 0)
    out += block(1, struct.pack("<HHI", 1, 0, 65535) + idb_opts)
    for i, (t, b) in enumerate(frames):
        opts = b""
        if i in comments:
            c = comments[i].encode()
            opts = struct.pack("<HH", 1, len(c)) + pad4(c) + struct.pack("<HH", 0, 0)
        body = struct.pack("<IIIII", 0, t >> 32, t & 0xFFFFFFFF, len(b), len(b)) + pad4(b) + opts
        out += block(6, body)
    with open(path, "wb") as f:
        f.write(out)


T0 = 1_700_000_000 * 1_000_000_000
T_LATE = 1_796_455_006_897_565_912


def case_drop_gbn():
    """PSN 7 lost before the capture; NAK(7) 1 us after PSN 8; the sender had sent up to 9
    when it came, and goes back to 7 5 us after the NAK (7..19); ACK 6 and a final ACK 19."""
    fr, t = [], 0
    for psn in range(10):
        if psn != 7:
            fr.append((t, data(psn)))
        if psn == 6:
            fr.append((t + 300, ack(6)))
        if psn == 8:
            fr.append((t + US, nak(7)))
            nak_t = t + US
        t += US
    t = nak_t + 5 * US
    for psn in range(7, 20):
        fr.append((t, data(psn)))
        t += US
    fr.append((t + US, ack(19)))
    fr.sort(key=lambda x: x[0])
    return fr


def case_lost_retx():
    """PSN 7 lost, NAK(7), the resend of 7 lost too (the round shows 8..19), then after 500 us
    of silence a timeout resend of 7..19 (the sender had sent 0..9 when the NAK came)."""
    fr, t = [], 0
    for psn in range(10):
        if psn != 7:
            fr.append((t, data(psn)))
        if psn == 8:
            fr.append((t + US, nak(7)))
            nak_t = t + US
        t += US
    t = nak_t + 5 * US
    for psn in range(8, 20):
        fr.append((t, data(psn)))
        t += US
    t += 500 * US
    for psn in range(7, 20):
        fr.append((t, data(psn)))
        t += US
    fr.append((t + US, ack(19)))
    fr.sort(key=lambda x: x[0])
    return fr


def case_nak_cnp():
    """PSN 3 lost; the receiver sends NAK(3) and, 300 ns later, a CNP (ConnectX-5/6 with slow
    restart do), then the resend of 3..5; a lone CNP 100 us later."""
    fr = [(0, data(0)), (US, data(1)), (2 * US, data(2)), (4 * US, data(4)),
          (4 * US + 500, nak(3)), (4 * US + 800, cnp()), (10 * US, data(3)), (11 * US, data(4)),
          (12 * US, data(5)), (112 * US, cnp())]
    return fr


def case_timeout():
    """Capture at the sender: 0..9 all seen, ACK 7, the tail lost after the capture point,
    no NAK; 800 us later the sender resends 8, 9 (a timeout)."""
    fr, t = [], 0
    for psn in range(10):
        fr.append((t, data(psn)))
        t += US
    fr.append((t, ack(7)))
    t += 800 * US
    fr += [(t, data(8)), (t + US, data(9)), (t + 3 * US, ack(9))]
    return fr


def case_double_nak():
    """PSN 5 lost; the receiver NAKs 5 after PSN 6 and again after PSN 7 (FAIL), then the
    resend of 5..9."""
    fr, t = [], 0
    for psn in range(10):
        if psn != 5:
            fr.append((t, data(psn)))
        if psn in (6, 7):
            fr.append((t + 200, nak(5)))
        t += US
    for psn in range(5, 10):
        fr.append((t + 5 * US, data(psn)))
        t += US
    fr.sort(key=lambda x: x[0])
    return fr


def case_cnp_train():
    """1 ms of data every 2 us; packets 100..199 CE-marked; CNPs every 50 us from 3 us after
    the first CE (t = 203 us), the 4th one followed by an extra CNP 2 us later (one pacing
    violation at 4 us); 5 CNPs + 1."""
    fr = []
    for i in range(500):
        fr.append((i * 2 * US, data(i, ce=100 <= i < 200)))
    cnps = [203 * US + k * 50 * US for k in range(5)]
    cnps.append(cnps[3] + 2 * US)
    for c in cnps:
        fr.append((c, cnp()))
    fr.sort(key=lambda x: x[0])
    return fr


def case_cnp_scope():
    """Two QPs between the same hosts (0x100->0x200 and 0x101->0x201), CNPs to each every
    50 us, the second QP's 1 us after the first's: no violation per QP, violations per IP pair
    and per port (min_time_between_cnps 4 us): the pacing is per QP."""
    fr = []
    s2 = linux_sport(0x101, 0x201)
    for i in range(200):
        fr.append((i * 2 * US, data(i)))
        fr.append((i * 2 * US + 500, data(i, dqp=0x201, sport=s2)))
    for k in range(8):
        fr.append((10 * US + k * 50 * US, cnp()))
        fr.append((11 * US + k * 50 * US, cnp(dqp=0x101, sport=s2)))
    fr.sort(key=lambda x: x[0])
    return fr


PFC_MAC = bytes.fromhex("02000000aaaa")


def case_pfc():
    """At 100 Gb/s (quantum 5.12 ns): priority 3 XOFF 0xFFFF at 0, refreshed at 100 us, XON
    at 250 us (paused 250 us); XOFF 1000 quanta at 1000 us, expiring (5.12 us); priority 5
    refreshed every 200 us for 20 ms, then left to expire (a storm longer than 10 ms:
    20000 + 335.5392 us); an 802.3x PAUSE of 100 quanta at 3000 us (0.512 us)."""
    fr = [(0, pfc(PFC_MAC, 1 << 3, {3: 0xFFFF})),
          (100 * US, pfc(PFC_MAC, 1 << 3, {3: 0xFFFF})),
          (250 * US, pfc(PFC_MAC, 1 << 3, {3: 0})),
          (1000 * US, pfc(PFC_MAC, 1 << 3, {3: 1000})),
          (3000 * US, pause(PFC_MAC, 100))]
    for k in range(101):
        fr.append((5000 * US + k * 200 * US, pfc(PFC_MAC, 1 << 5, {5: 0xFFFF})))
    fr.append((40000 * US, data(0)))
    fr.sort(key=lambda x: x[0])
    return fr


def case_allreduce_barrier():
    """2 ranks (10.0.2.1, 10.0.2.2), 4 iterations of 64 KiB each way (data QPs 0x50 -> 0x60,
    0x51 -> 0x61), each ended by a barrier: a 4-byte write on control QPs (0x52 -> 0x62,
    0x53 -> 0x63) both ways; only 20 us between iterations (shorter than --idle-gap)."""
    a, b = bytes([10, 0, 2, 1]), bytes([10, 0, 2, 2])
    fr, t = [], 0
    for it in range(4):
        for k in range(64):
            fr.append((t + k * US, frame(a, b, A_MAC, B_MAC, 0x07, 0x60, it * 64 + k,
                                         payload=bytes(1024), sport=50100)))
            fr.append((t + k * US + 400, frame(b, a, B_MAC, A_MAC, 0x07, 0x61, it * 64 + k,
                                               payload=bytes(1024), sport=50101)))
        t += 64 * US + 5 * US
        fr.append((t, frame(a, b, A_MAC, B_MAC, 0x0B, 0x62, it, ext=bytes(20),
                            payload=bytes(4), sport=50102)))
        fr.append((t + 300, frame(b, a, B_MAC, A_MAC, 0x0B, 0x63, it, ext=bytes(20),
                                  payload=bytes(4), sport=50103)))
        t += 20 * US
    fr.sort(key=lambda x: x[0])
    return fr


def case_psn_pair():
    """Two QPs between the same hosts, a different UDP source port per direction (no Linux
    rule, as rocegen and some NICs): QP 0x300 -> 0x400 sends PSNs 0..99, QP 0x301 -> 0x401
    PSNs 0..9; each receiver ACKs (to 0x300 / 0x301) every 10 PSNs. Neither the QP table's
    port rule nor its pair rule can pair them; the PSN rule can (ACK 99 covers only the
    first flow; then ACK 9 only the second)."""
    fr = []
    for i in range(100):
        fr.append((i * US, frame(A_IP, B_IP, A_MAC, B_MAC, 0x01, 0x400, i, payload=bytes(256),
                                 sport=50000)))
        if i < 10:
            fr.append((i * US + 300, frame(A_IP, B_IP, A_MAC, B_MAC, 0x01, 0x401, i,
                                           payload=bytes(256), sport=50001)))
        if i % 10 == 9 and i > 9:
            fr.append((i * US + 500, frame(B_IP, A_IP, B_MAC, A_MAC, 0x11, 0x300, i,
                                           ext=struct.pack(">I", 0x1F << 24), sport=60000)))
    fr.append((200 * US, frame(B_IP, A_IP, B_MAC, A_MAC, 0x11, 0x301, 9,
                               ext=struct.pack(">I", 0x1F << 24), sport=60001)))
    fr.sort(key=lambda x: x[0])
    return fr


COLL_S = 96 * 1024   # the all-reduce buffer (bytes per rank)


def case_allreduce4():
    """Ring all-reduce over 4 ranks (10.0.1.1..4, QP 0x10+i -> 0x20+i), 3 iterations 2 ms
    apart: each rank sends 2 (N-1)/N S = 1.5 S bytes to the next one, 1 KiB packets every 1 us,
    all four in parallel, so each iteration lasts 143 us (first to last packet) and the wire
    carries 2 (N-1) S = 6 S. As nccl-tests: algbw = S / t, busbw = algbw 2 (N-1) / N."""
    fr = []
    per_rank = COLL_S * 3 // 2 // 1024
    for it in range(3):
        t0 = it * 2000 * US
        for r in range(4):
            src, dst = bytes([10, 0, 1, 1 + r]), bytes([10, 0, 1, 1 + (r + 1) % 4])
            sp = linux_sport(0x10 + r, 0x20 + r)
            for k in range(per_rank):
                fr.append((t0 + k * US + r * 10, frame(src, dst, A_MAC, B_MAC, 0x01, 0x20 + r,
                                                       it * per_rank + k, payload=bytes(1024),
                                                       sport=sp)))
    fr.sort(key=lambda x: x[0])
    return fr


def case_no_roce():
    """No RoCE frame: ARP requests and replies and plain UDP (port 5000) between A and B, as a
    capture on the wrong interface or with the wrong filter holds. rocestat must refuse it
    ("no RoCE frames"), not pass it with 0 checks."""
    fr = []
    for i in range(10):
        arp = (b"\xff" * 6 + A_MAC + b"\x08\x06" +
               struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1 + i % 2, A_MAC, A_IP,
                           bytes(6), B_IP))
        fr.append((i * 10 * US, arp + b"\x00" * (60 - len(arp))))
        payload = bytes(100)
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload), 0, 0x4000,
                                   64, 17, 0, A_IP, B_IP))
        ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
        udp = struct.pack(">HHHH", 40000, 5000, 8 + len(payload), 0)
        fr.append((i * 10 * US + 5 * US, B_MAC + A_MAC + b"\x08\x00" + bytes(ip) + udp +
                   payload))
    return fr


# Where the bandwidth went (rocestat's bandwidth section): A sends 4 KiB SEND_MIDDLE packets
# to B on a 100 Gb/s line, captured with 64-byte headers; each capture has one known cause.
BW_PAYLOAD = 4096
BW_WIRE = 14 + 20 + 8 + 12 + BW_PAYLOAD + 4 + 24     # frame, FCS, preamble and gap: 4178 B
BW_FRAME_NS = BW_WIRE * 8 / 100.0                   # 334.24 ns at 100 Gb/s
SWITCH_MAC = bytes.fromhex("02000000000c")


def bw_data(psn, dqp=QB, sport=None):
    return frame(A_IP, B_IP, A_MAC, B_MAC, 0x01, dqp, psn, payload=bytes(BW_PAYLOAD),
                 sport=sport)


def bw_run(fr, t, n, gbps, psn, qps=1):
    """n packets from t at gbps (round-robin over qps QPs); returns (t, psn) after."""
    step = BW_WIRE * 8 / gbps
    for i in range(n):
        q = psn % qps
        fr.append((int(round(t)), bw_data(psn, dqp=QB + q, sport=linux_sport(QA + q, QB + q))))
        psn += 1
        t += step
    return t, psn


def bw_cases():
    """clean: 3000 packets at the line rate (1 QP; and over 4 QPs in clean4);
    host: 3000 packets at 31 Gb/s, no pause, no CNP (a host-side cap);
    pfc: 5 x (300 packets at the line rate, then 100 us paused by the switch's PFC on
    priority 3, XOFF then XON; nothing sent meanwhile);
    dcqcn: 3 x (300 at the line rate, a CNP, 400 at 40 Gb/s with a CNP every 50 us);
    idle: 10 x (200 at the line rate, then 60 us with nothing to send: steps)."""
    out = {}
    fr = []
    bw_run(fr, 0, 3000, 100.0, 0)
    out["bw_clean"] = fr
    fr = []
    bw_run(fr, 0, 3000, 100.0, 0, qps=4)
    out["bw_clean4"] = fr
    fr = []
    bw_run(fr, 0, 3000, 31.0, 0)
    out["bw_host"] = fr
    fr, t, psn = [], 0.0, 0
    for _ in range(5):
        t, psn = bw_run(fr, t, 300, 100.0, psn)
        fr.append((int(round(t)), pfc(SWITCH_MAC, 1 << 3, {3: 65535})))
        fr.append((int(round(t)) + 100 * US, pfc(SWITCH_MAC, 1 << 3, {3: 0})))
        t += 100 * US + 1
    out["bw_pfc"] = fr
    fr, t, psn = [], 0.0, 0
    for _ in range(3):
        t, psn = bw_run(fr, t, 300, 100.0, psn)
        t0 = t
        fr.append((int(round(t)), cnp()))
        t += 2 * US
        t, psn = bw_run(fr, t, 400, 40.0, psn)
        for c in range(1, int((t - t0) / (50 * US)) + 1):
            fr.append((int(round(t0 + c * 50 * US)), cnp()))
    out["bw_dcqcn"] = fr
    fr, t, psn = [], 0.0, 0
    for _ in range(10):
        t, psn = bw_run(fr, t, 200, 100.0, psn)
        t += 60 * US
    out["bw_idle"] = fr
    for fr in out.values():
        fr.sort(key=lambda x: x[0])
    return out


NCCL_LOG = """hostA:1001:1001 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
hostA:1001:1001 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
hostB:2002:2002 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.2<0>
hostA:1001:1001 [0] NCCL INFO comm 0x55d5c0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1234 - Init START
hostB:2002:2002 [0] NCCL INFO comm 0x55e1a0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1234 - Init START
hostA:1001:1001 [0] NCCL INFO Channel 00/02 :    0   1
hostA:1001:1001 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA
hostA:1001:1001 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/1/GDRDMA
hostB:2002:2002 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/IB/1/GDRDMA
hostA:1001:1001 [0] NCCL INFO Connected all rings
"""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {
        "drop_gbn": case_drop_gbn(), "lost_retx": case_lost_retx(), "timeout": case_timeout(),
        "double_nak": case_double_nak(), "nak_cnp": case_nak_cnp(), "cnp_train": case_cnp_train(),
        "cnp_scope": case_cnp_scope(), "pfc": case_pfc(), "allreduce4": case_allreduce4(),
        "psn_pair": case_psn_pair(), "allreduce_barrier": case_allreduce_barrier(),
        "no_roce": case_no_roce(),
    }
    for name, fr in cases.items():
        roceframes.write_pcap(os.path.join(out, name + ".pcap"), fr, T0)
    # the drop_gbn case in other formats: us pcap, snaplen 64, pcapng with annotations (the
    # dropped PSN 7 present, marked drop=, as rocemu's capture records it)
    g = cases["drop_gbn"]
    write_pcap_us(os.path.join(out, "drop_gbn_us.pcap"), [(T0 + t, b) for t, b in g])
    write_pcap_snap(os.path.join(out, "drop_gbn_snap64.pcap"), [(T0 + t, b) for t, b in g], 64)
    write_pcap_sll(os.path.join(out, "drop_gbn_sll.pcap"), [(T0 + t, b) for t, b in g])
    # and starting at 1796455006.897565912 (a date in 2026 whose us do not fit a double's ten
    # digits), its last frame 1 ns later than a us: times in the JSON must be exact
    write_pcap_snap(os.path.join(out, "drop_gbn_late.pcap"),
                    [(T_LATE + t + (1 if i == len(g) - 1 else 0), b)
                     for i, (t, b) in enumerate(g)], 65535)
    ng, comments = [], {}
    for t, b in g:
        if not ng and False:
            pass
        ng.append((T0 + t, b))
    # insert the dropped original PSN 7 at 7 us with a drop annotation
    ng.append((T0 + 7 * US, data(7)))
    ng.sort(key=lambda x: x[0])
    for i, (t, b) in enumerate(ng):
        if t == T0 + 7 * US and len(b) > 100:
            comments[i] = "rocemu: qdepth=65536 wait=1500 drop=queue_full"
        elif i % 3 == 0:
            comments[i] = "rocemu: qdepth=%d wait=%d" % (1000 * i, 100 * i)
    write_pcapng(os.path.join(out, "drop_gbn_annot.pcapng"), ng, comments)
    for name, fr in bw_cases().items():
        write_pcap_snap(os.path.join(out, name + ".pcap"), [(T0 + t, b) for t, b in fr], 64)
    with open(os.path.join(out, "nccl-info.log"), "w") as f:
        f.write(NCCL_LOG)
    # an nccl-tests log (2.19 layout) and a rocegen table for --app-log
    with open(os.path.join(out, "nccl-tests.log"), "w") as f:
        f.write("#  out-of-place in-place\n#       size         count      type   redop    root"
                "     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
                "       65536         16384     float     sum      -1    50.10    1.31    1.96"
                "      0    49.80    1.32    1.97      0\n"
                "       98304         24576     float     sum      -1    60.00    1.64    2.46"
                "      0    59.00    1.67    2.50      0\n"
                "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 2.2\n")
    with open(os.path.join(out, "rocegen.log"), "w") as f:
        f.write("#\n# allreduce (ring) over 4 ranks (1 processes x 4), 1 QP(s) per pair, MTU 1024\n"
                "#      size(B)        count   type  redop   time(us) algbw(GB/s) busbw(GB/s)\n"
                "         98304        24576  float    sum      143.0       0.687       1.031\n"
                "# per-QP counters (QPs that carried traffic)\n")
    print("wrote %d cases to %s" % (len(cases) + 3, out))


if __name__ == "__main__":
    main()
