#!/usr/bin/env python3
"""A stand-in RoCE NIC for the lab (stdlib only), until rocegen drives the demo: raw RoCEv2
frames through an AF_PACKET socket inside a lab namespace. Frames carry correct IPv4
checksums and ICRCs (docs/wire.md), DSCP 26 + ECT(0) like NVIDIA NICs.

  roce_peer.py send IFACE SRC_MAC DST_MAC SRC_IP DST_IP DEST_QP COUNT SIZE
      RC RDMA WRITE ONLY frames (SIZE payload bytes, PSN counting up, AckReq every 16th) as
      fast as the socket takes them; meanwhile counts what comes back: ACKs, CNPs, PFC frames.
  roce_peer.py respond IFACE SRC_MAC DST_MAC SRC_IP DST_IP DEST_QP SECONDS
      the responder: counts RoCE data frames, answers every AckReq with a coalesced ACK to
      DEST_QP (the requester's QPN), and, as a DCQCN notification point, a CNP to DEST_QP for
      CE-marked frames, at most one per 50 us.
Both print one summary line at the end."""
import socket
import struct
import sys
import time
import zlib


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip4(s):
    return socket.inet_aton(s)


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def icrc(ip_hdr, udp_hdr, bth_and_rest):
    """CRC-32 over 8 x 0xFF, IP (TOS, TTL, checksum masked), UDP (checksum masked), BTH (byte 4
    masked) and the rest, stored little-endian."""
    ip = bytearray(ip_hdr)
    ip[1] = 0xFF
    ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    udp = bytearray(udp_hdr)
    udp[6:8] = b"\xff\xff"
    bth = bytearray(bth_and_rest)
    bth[4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth)))


def frame(src_mac, dst_mac, src_ip, dst_ip, tos, sport, bth_rest, ident):
    """Eth / IPv4 / UDP 4791 / (BTH + ext headers + payload) / ICRC."""
    udp_len = 8 + len(bth_rest) + 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, ident & 0xFFFF, 0x4000, 64, 17,
                     0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", sport, 4791, udp_len, 0)
    f = dst_mac + src_mac + b"\x08\x00" + ip + udp + bth_rest + icrc(ip, udp, bth_rest)
    return f + b"\0" * max(0, 60 - len(f))


def bth(opcode, dest_qp, psn, ackreq=False, becn=False):
    return struct.pack("!BBHBBHBBH", opcode, 0x40, 0xFFFF, 0x40 if becn else 0,
                       (dest_qp >> 16) & 0xFF, dest_qp & 0xFFFF, 0x80 if ackreq else 0,
                       (psn >> 16) & 0xFF, psn & 0xFFFF)


def parse(f):
    """(src_ip, ecn, opcode, dest_qp, psn, ackreq) of a RoCEv2 frame, or None; or 'pfc'."""
    if len(f) >= 14 and f[12:14] == b"\x88\x08":
        return "pfc"
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00" or f[23] != 17:
        return None
    ihl = (f[14] & 0xF) * 4
    u = 14 + ihl
    if struct.unpack("!H", f[u + 2:u + 4])[0] != 4791:
        return None
    b = u + 8
    return (f[26:30], f[15] & 3, f[b], struct.unpack("!I", b"\0" + f[b + 5:b + 8])[0],
            struct.unpack("!I", b"\0" + f[b + 9:b + 12])[0], bool(f[b + 8] & 0x80))


def open_sock(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setblocking(False)
    return s


def drain(s, on_frame):
    while True:
        try:
            f, addr = s.recvfrom(65536)
        except BlockingIOError:
            return
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        on_frame(f)


def send(a):
    iface, smac, dmac, sip, dip = a[0], mac(a[1]), mac(a[2]), ip4(a[3]), ip4(a[4])
    qp, count, size = int(a[5], 0), int(a[6]), int(a[7])
    s = open_sock(iface)
    seen = {"ack": 0, "cnp": 0, "pfc": 0}

    def on_frame(f):
        p = parse(f)
        if p == "pfc":
            seen["pfc"] += 1
        elif p is not None and p[0] == dip:
            if p[2] == 0x11:
                seen["ack"] += 1
            elif p[2] == 0x81:
                seen["cnp"] += 1

    payload = bytes(size)
    sent = 0
    for psn in range(count):
        reth = struct.pack("!QII", 0x10000 + psn * size, 0x1234, size)
        f = frame(smac, dmac, sip, dip, 106, 0xC000 | (qp & 0xFFF),
                  bth(0x0A, qp, psn, ackreq=(psn % 16 == 15)) + reth + payload, psn)
        while True:
            try:
                s.send(f)
                break
            except BlockingIOError:
                drain(s, on_frame)
        sent += 1
        if psn % 64 == 0:
            drain(s, on_frame)
    end = time.time() + 1.0
    while time.time() < end:
        drain(s, on_frame)
        time.sleep(0.01)
    print("sender: sent %d RoCE WRITE frames; received %d ACKs, %d CNPs, %d PFC frames"
          % (sent, seen["ack"], seen["cnp"], seen["pfc"]), flush=True)


def respond(a):
    iface, smac, dmac, sip, dip = a[0], mac(a[1]), mac(a[2]), ip4(a[3]), ip4(a[4])
    qp, seconds = int(a[5], 0), float(a[6])
    s = open_sock(iface)
    st = {"data": 0, "ce": 0, "acks": 0, "cnps": 0, "last_cnp": 0.0, "ident": 0}

    def reply(bth_rest):
        st["ident"] += 1
        f = frame(smac, dmac, sip, dip, 106, 0xC000 | (qp & 0xFFF), bth_rest, st["ident"])
        try:
            s.send(f)
        except BlockingIOError:
            pass

    def on_frame(f):
        p = parse(f)
        if p is None or p == "pfc" or p[0] != dip or p[2] >= 0x11:
            return
        st["data"] += 1
        if p[1] == 3:
            st["ce"] += 1
            now = time.time()
            if now - st["last_cnp"] >= 50e-6:
                st["last_cnp"] = now
                reply(bth(0x81, qp, 0, becn=True) + bytes(16))
                st["cnps"] += 1
        if p[5]:
            reply(bth(0x11, qp, p[4]) + struct.pack("!I", 0x1F << 24 | (p[4] & 0xFFFFFF)))
            st["acks"] += 1

    print("ready", flush=True)
    end = time.time() + seconds
    try:
        while time.time() < end:
            drain(s, on_frame)
            time.sleep(0.0005)
    except KeyboardInterrupt:
        pass  # stopped early (SIGINT): still report
    print("responder: received %d RoCE data frames, %d CE-marked; sent %d ACKs, %d CNPs"
          % (st["data"], st["ce"], st["acks"], st["cnps"]), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 10 and sys.argv[1] == "send":
        send(sys.argv[2:])
    elif len(sys.argv) == 9 and sys.argv[1] == "respond":
        respond(sys.argv[2:])
    else:
        print(__doc__)
        sys.exit(2)
