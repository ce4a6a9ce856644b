#!/usr/bin/env python3
"""Reads a classic pcap or a pcapng file (stdlib only) into its format and its records:
(ts_ns, interface, caplen, origlen, comment or None), as capinfos would see them. The
timestamps of pcapng are taken at nanosecond resolution (if_tsresol 9, what rocemu writes);
an interface without if_tsresol is in microseconds."""
import struct

PCAP_MAGICS = {0xA1B2C3D4: 1000, 0xA1B23C4D: 1}


def read(path):
    """Returns ("pcap" | "pcapng", [(ts_ns, ifidx, caplen, origlen, comment), ...])."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: too short for a capture file (%d bytes)" % (path, len(data)))
    magic = struct.unpack("<I", data[:4])[0]
    if magic in PCAP_MAGICS:
        mult = PCAP_MAGICS[magic]
        recs, off = [], 24
        while off + 16 <= len(data):
            sec, frac, caplen, origlen = struct.unpack("<IIII", data[off:off + 16])
            recs.append((sec * 1_000_000_000 + frac * mult, 0, caplen, origlen, None))
            off += 16 + caplen
        return "pcap", recs
    if magic != 0x0A0D0D0A:
        raise ValueError("%s: neither pcap nor pcapng (magic %#x)" % (path, magic))
    recs, off, res = [], 0, []
    while off + 12 <= len(data):
        btype, blen = struct.unpack("<II", data[off:off + 8])
        if blen < 12 or off + blen > len(data):
            raise ValueError("%s: truncated block at %d" % (path, off))
        body = data[off + 8:off + blen - 4]
        if btype == 1:
            res.append(1000)
            o = 8
            while o + 4 <= len(body):
                code, olen = struct.unpack("<HH", body[o:o + 4])
                if code == 0:
                    break
                if code == 9:
                    v = body[o + 4]
                    res[-1] = 10 ** (9 - v) if v <= 9 else 1
                o += 4 + (olen + 3) // 4 * 4
        elif btype == 6:
            ifidx, hi, lo, caplen, origlen = struct.unpack("<IIIII", body[:20])
            comment = None
            o = 20 + (caplen + 3) // 4 * 4
            while o + 4 <= len(body):
                code, olen = struct.unpack("<HH", body[o:o + 4])
                if code == 0:
                    break
                if code == 1:
                    comment = body[o + 4:o + 4 + olen].decode("utf-8", "replace")
                o += 4 + (olen + 3) // 4 * 4
            recs.append((((hi << 32) | lo) * res[ifidx], ifidx, caplen, origlen, comment))
        off += blen
    return "pcapng", recs


def backwards(recs):
    """How many times the time goes backwards from one record to the next (capinfos' strict
    time order is this being 0)."""
    return sum(1 for a, b in zip(recs, recs[1:]) if b[0] < a[0])
