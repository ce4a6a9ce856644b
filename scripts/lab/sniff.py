#!/usr/bin/env python3
"""Lab helper (stdlib only), run inside a lab namespace: count MAC control frames (EtherType
0x8808: 802.3x PAUSE and 802.1Qbb PFC) arriving on an interface through an AF_PACKET socket.

  sniff.py IFACE SECONDS [STOPFILE]
      prints "ready", then at the end one line per frame kind: "pfc N xoff N xon N
      prio3_quanta Q" and "pause N". It ends after SECONDS, or 0.5 s after STOPFILE appears
      (a test creates it once the frames' sender has exited, so none is missed on a slow
      machine)."""
import os
import socket
import struct
import sys
import time


def main():
    iface, seconds = sys.argv[1], float(sys.argv[2])
    stopfile = sys.argv[3] if len(sys.argv) > 3 else None
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x8808))
    s.bind((iface, 0))
    s.settimeout(0.2)
    print("ready", flush=True)
    end = time.time() + seconds
    pfc = xoff = xon = pause = 0
    quanta = set()
    while time.time() < end:
        if stopfile is not None and os.path.exists(stopfile):
            end = min(end, os.path.getmtime(stopfile) + 0.5)
        try:
            f = s.recv(2048)
        except socket.timeout:
            continue
        if len(f) < 20 or f[12:14] != b"\x88\x08":
            continue
        op = struct.unpack("!H", f[14:16])[0]
        if op == 0x0101 and len(f) >= 34:
            pfc += 1
            vec = struct.unpack("!H", f[16:18])[0]
            times = struct.unpack("!8H", f[18:34])
            if vec & (1 << 3):
                quanta.add(times[3])
                if times[3] == 0:
                    xon += 1
                else:
                    xoff += 1
        elif op == 0x0001:
            pause += 1
    print("pfc %d xoff %d xon %d prio3_quanta %s" % (pfc, xoff, xon,
          ",".join(str(q) for q in sorted(quanta)) or "-"), flush=True)
    print("pause %d" % pause, flush=True)


if __name__ == "__main__":
    main()
