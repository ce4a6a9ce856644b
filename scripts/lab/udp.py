#!/usr/bin/env python3
"""Lab traffic helper (stdlib only), run inside a lab namespace.

  udp.py recv PORT COUNT TIMEOUT_S     count datagrams on PORT; prints "received N"; exits 0
                                       when COUNT arrived before the timeout
  udp.py send DST PORT COUNT [SIZE [TOS [PACE]]]
                                       send COUNT datagrams of SIZE bytes, each carrying its
                                       sequence number, with IP TOS byte TOS (default 0; 106 =
                                       DSCP 26 + ECT(0) as RoCE NICs send), paced in bursts of
                                       100 (PACE 1, default) or as fast as possible (PACE 0)
"""
import socket
import struct
import sys
import time


def recv(port, count, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.2)
    seen = set()
    end = time.time() + timeout
    print("ready", flush=True)
    while len(seen) < count and time.time() < end:
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        if len(data) >= 4:
            seen.add(struct.unpack("!I", data[:4])[0])
    print("received %d" % len(seen), flush=True)
    return 0 if len(seen) >= count else 1


def send(dst, port, count, size, tos=0, pace=1):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    pad = b"\0" * max(0, size - 4)
    for i in range(count):
        s.sendto(struct.pack("!I", i) + pad, (dst, port))
        if pace and i % 100 == 99:
            time.sleep(0.004)  # stay well below what the AF_PACKET rings absorb
    print("sent %d" % count, flush=True)
    return 0


if __name__ == "__main__":
    a = sys.argv
    if len(a) >= 5 and a[1] == "recv":
        sys.exit(recv(int(a[2]), int(a[3]), float(a[4])))
    if len(a) >= 5 and a[1] == "send":
        sys.exit(send(a[2], int(a[3]), int(a[4]), int(a[5]) if len(a) > 5 else 64,
                      int(a[6]) if len(a) > 6 else 0, int(a[7]) if len(a) > 7 else 1))
    print(__doc__)
    sys.exit(2)
