#!/usr/bin/env python3
"""Replay test: received PFC and PAUSE on the virtual clock, exact departures.

The inputs are generated here (stdlib only): p0 sends RoCEv2 SEND_ONLY frames of 998 bytes
(DSCP 26 -> priority 3, DSCP 0 -> priority 0) towards p1; the NIC behind p1 sends a PFC frame
pausing priority 3 for 0xFFFF quanta, a PFC XON 20 us later, then at 49 us an 802.3x PAUSE of
100 quanta.
Asserts: priority 0 leaves at line rate while priority 3 waits for the XON and then leaves at
once; the PAUSE holds priority 0 for exactly 100 x 512 bit times; no MAC control frame is
forwarded; conservation counts the three as consumed; the stats give the paused time per
priority; every ICRC is valid."""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapdump  # noqa: E402
import roceframes  # noqa: E402

RATE_BPS = 10_000_000_000
T0 = 1_000_000_000_000  # 1000 s, in ns
MAC_NIC0, MAC_NIC1 = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def roce_frame(psn, dscp, ecn=2, payload=940):
    """Eth | IPv4 | UDP 4791 | BTH SEND_ONLY | payload | ICRC (docs/wire.md)."""
    bth = struct.pack(">BBHII", 0x04, 0, 0xFFFF, 0x45, psn & 0xFFFFFF)
    udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(bth) + payload + 4, 0)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, (dscp << 2) | ecn,
                               20 + len(udp) + len(bth) + payload + 4, 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
    pkt = bytes(ip) + udp + bth + bytes(payload)
    return MAC_NIC1 + MAC_NIC0 + b"\x08\x00" + pkt + roceframes.icrc(pkt)


def mac_control(opcode, vector, quanta):
    """802.1Qbb PFC (opcode 0x0101) or 802.3x PAUSE (0x0001, quanta[0]), padded to 60 B."""
    f = bytes.fromhex("0180c2000001") + MAC_NIC1 + b"\x88\x08" + struct.pack(">H", opcode)
    if opcode == 0x0101:
        f += struct.pack(">H8H", vector, *quanta)
    else:
        f += struct.pack(">H", quanta[0])
    return f + bytes(60 - len(f))


def wire_ps(length):
    return (max(length, 60) + 24) * 8 * 10**12 // RATE_BPS


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    here = os.path.join(src, "tests", "replay", "pfc-honour")
    q3 = [0] * 8
    q3[3] = 0xFFFF
    in0 = [(T0 + 1000, roce_frame(i, 26)) for i in range(4)] + \
          [(T0 + 1000, roce_frame(10 + i, 0)) for i in range(4)] + \
          [(T0 + 50000, roce_frame(20, 0))]
    in1 = [(T0, mac_control(0x0101, 1 << 3, q3)),
           (T0 + 20000, mac_control(0x0101, 1 << 3, [0] * 8)),
           (T0 + 49000, mac_control(0x0001, 0, [100] + [0] * 7))]
    # Expected departures on p1 (link model of pipelines/README.md, times in ps):
    w = wire_ps(998)
    want = []
    t = (T0 + 1000) * 1000
    for i in range(4):          # priority 0 at once, back to back
        t += w
        want.append(((t + 999) // 1000, 10 + i))
    t = (T0 + 20000) * 1000     # priority 3 when the XON arrives
    for i in range(4):
        t += w
        want.append(((t + 999) // 1000, i))
    # PAUSE at 49 us of 100 quanta = 100 * 512 bits at 10 Gb/s = 5120 ns holds priority 0 too:
    # the frame arriving at 50 us starts at 54.12 us
    want.append((((T0 + 49000 + 5120) * 1000 + w + 999) // 1000, 20))
    errs = []
    with tempfile.TemporaryDirectory() as tmp:
        p0, p1 = os.path.join(tmp, "in-p0.pcap"), os.path.join(tmp, "in-p1.pcap")
        roceframes.write_pcap(p0, in0)
        roceframes.write_pcap(p1, in1)
        o0, o1, st = (os.path.join(tmp, n) for n in ("out-p0.pcap", "out-p1.pcap", "s.json"))
        r = subprocess.run([rocemu, "replay", "--pipeline", os.path.join(here, "pipeline.json"),
                            "--in", p0 + ":p0", "--in", p1 + ":p1", "--out", o0 + ":p0",
                            "--out", o1 + ":p1", "--stats", st],
                           capture_output=True, text=True, timeout=120)
        print(r.stdout)
        if r.returncode != 0:
            print(r.stderr)
            print("FAIL: rocemu replay exited %d" % r.returncode)
            return 1
        _, out0 = pcapdump.read_pcap(o0)
        _, out1 = pcapdump.read_pcap(o1)
        stats = json.load(open(st))
    if out0:
        errs.append("p0 transmitted %d frames; MAC control must not be forwarded" % len(out0))
    got = [(ts, struct.unpack(">I", b"\0" + p[14 + 20 + 8 + 9:14 + 20 + 8 + 12])[0])
           for ts, _, p in out1]
    for line in ["%d p1 %s" % (ts - T0, pcapdump.describe(p)) for ts, _, p in out1]:
        print("  " + line)
    if got != want:
        errs.append("p1 departures (ns since T0, psn):\n  got  %s\n  want %s" %
                    ([(t - T0, s) for t, s in got], [(t - T0, s) for t, s in want]))
    line = "conservation: rx 12 + created 0 = tx 9 + drops 0 + held 0 + consumed 3: OK"
    if line not in r.stdout:
        errs.append("missing line: " + line)
    tm1 = stats["tm"][1]
    c = tm1["counters"]
    if (c["pfc_rx"], c["pause_rx"]) != (2, 1):
        errs.append("pfc_rx/pause_rx: got %d/%d, want 2/1" % (c["pfc_rx"], c["pause_rx"]))
    paused = [p["paused_ns"] for p in tm1["priorities"]]
    want_paused = [5120] * 8
    want_paused[3] = 20000 + 5120
    if paused != want_paused:
        errs.append("paused_ns per priority: got %s, want %s" % (paused, want_paused))
    parse = stats["stages"][0]["counters"]
    if parse["icrc_bad"] != 0 or parse["class_rocev2"] != 9 or parse["class_mac_control"] != 3:
        errs.append("parse counters: %s" % parse)
    if stats["runner"]["consumed_mac_control"] != 3:
        errs.append("consumed_mac_control: %d" % stats["runner"]["consumed_mac_control"])
    for e in errs:
        print("FAIL: " + e)
    print("%s: replay pfc-honour" % ("FAIL" if errs else "ok"))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
