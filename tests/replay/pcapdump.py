#!/usr/bin/env python3
"""Reads classic pcap files (micro- or nanosecond) and describes frames as one readable line
each: time, port, length, protocol summary (RoCEv2: opcode, DestQP, PSN, ECN). Stdlib only,
so replay tests need nothing beyond python3."""
import struct

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D


def read_pcap(path):
    """Returns (ns_resolution, [(ts_ns, orig_len, bytes), ...])."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: not a pcap file (too short)" % path)
    magic_le = struct.unpack("<I", data[:4])[0]
    magic_be = struct.unpack(">I", data[:4])[0]
    if magic_le in (MAGIC_US, MAGIC_NS):
        e, magic = "<", magic_le
    elif magic_be in (MAGIC_US, MAGIC_NS):
        e, magic = ">", magic_be
    else:
        raise ValueError("%s: not a classic pcap file" % path)
    ns = magic == MAGIC_NS
    off = 24
    frames = []
    while off + 16 <= len(data):
        sec, frac, caplen, origlen = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        pkt = data[off:off + caplen]
        off += caplen
        ts = sec * 1_000_000_000 + (frac if ns else frac * 1000)
        frames.append((ts, origlen, pkt))
    return ns, frames


ROCE_OPS = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
    0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
    0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM", 0x0A: "WRITE_ONLY", 0x0B: "WRITE_ONLY_IMM",
    0x0C: "READ_REQ", 0x0D: "READ_RESP_FIRST", 0x0E: "READ_RESP_MIDDLE",
    0x0F: "READ_RESP_LAST", 0x10: "READ_RESP_ONLY", 0x11: "ACK", 0x12: "ATOMIC_ACK",
    0x81: "CNP",
}
ECN = ["not-ect", "ect1", "ect0", "ce"]


def describe(pkt, roce_port=4791):
    """A short protocol summary of an Ethernet frame."""
    if len(pkt) < 14:
        return "runt"
    et = struct.unpack(">H", pkt[12:14])[0]
    off = 14
    while et in (0x8100, 0x88A8) and len(pkt) >= off + 4:
        et = struct.unpack(">H", pkt[off + 2:off + 4])[0]
        off += 4
    if et == 0x0806:
        return "arp"
    if et == 0x8808:
        return "mac-control"
    if et == 0x88CC:
        return "lldp"
    if et == 0x86DD:
        return "ipv6"
    if et != 0x0800 or len(pkt) < off + 20:
        return "ethertype-0x%04x" % et
    ihl = (pkt[off] & 0xF) * 4
    tos = pkt[off + 1]
    proto = pkt[off + 9]
    src = ".".join(str(b) for b in pkt[off + 12:off + 16])
    dst = ".".join(str(b) for b in pkt[off + 16:off + 20])
    l4 = off + ihl
    if proto != 17 or len(pkt) < l4 + 8:
        return "ipv4 %s>%s proto %d" % (src, dst, proto)
    sport, dport = struct.unpack(">HH", pkt[l4:l4 + 4])
    if dport != roce_port or len(pkt) < l4 + 20:
        return "udp %s:%d>%s:%d" % (src, sport, dst, dport)
    bth = l4 + 8
    op = pkt[bth]
    qpn = struct.unpack(">I", b"\0" + pkt[bth + 5:bth + 8])[0]
    psn = struct.unpack(">I", b"\0" + pkt[bth + 9:bth + 12])[0]
    name = ROCE_OPS.get(op & 0x1F if op < 0x80 else op, "op0x%02x" % op)
    return "roce %s>%s %s qp=0x%06x psn=%d ecn=%s" % (src, dst, name, qpn, psn, ECN[tos & 3])
