#!/usr/bin/env python3
"""Switch a running rocemu to another profile over DPDK telemetry (/rocemu/profile).

  profile_switch.py SOCKET PROFILE

SOCKET is rocemu's /var/run/dpdk/PREFIX/dpdk_telemetry.v2. Prints rocemu's answer; exits 0
when the profile was loaded, 1 otherwise. Used by scripts/demo.sh and tests/e2e/lab_common.sh.
"""
import json
import socket
import sys


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    json.loads(s.recv(16384).decode())
    s.send(("/rocemu/profile," + sys.argv[2]).encode())
    r = json.loads(s.recv(16384).decode())["/rocemu/profile"]
    print("rocemu: telemetry: profile %s: %s" % (r["result"], r["message"]))
    return 0 if r["result"] == "loaded" else 1


if __name__ == "__main__":
    sys.exit(main())
