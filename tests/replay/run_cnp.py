#!/usr/bin/env python3
"""Replay test of the cnp stage (switch as DCQCN notification point), see switch-cnp/gen.py for
the scenario. Two runs on the same generated input (a.pcap into p0, b.pcap into p1):

1. pipelines/switch-cnp.json as shipped (defaults): counters, every CNP as a NIC would send it
   (addresses and MACs swapped, DestQP = the sender's QPN, BECN, PSN 0, P_Key 0xFFFF, 16 zero
   bytes, IPv4 total length 60, DSCP 48, ECT(0), priority 6 when tagged, UDP sport 0, valid IPv4
   checksum and ICRC), the NIC's own CNP passes, and tshark (when installed) dissects every CNP
   as BTH opcode 129 with no malformed or expert items.
2. the same with drop_nic_cnps and non-default dscp/ecn/priority/udp_sport: the NIC CNP is
   dropped and counted, the configured fields are used, and both output ports, one line per
   frame, equal switch-cnp/expected.txt."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "switch-cnp"))
import gen  # noqa: E402
import pcapdump  # noqa: E402
import roceframes  # noqa: E402


def l2(p):
    """(offset of IP, VLAN PCP or None)."""
    if p[12:14] == b"\x81\x00":
        return 18, p[14] >> 5
    return 14, None


def icrc_ok(p):
    off, _ = l2(p)
    tot = struct.unpack(">H", p[off + 2:off + 4])[0]
    body = p[off:off + tot - 4]
    return roceframes.icrc(body) == p[off + tot - 4:off + tot]


def cnp_info(p):
    off, pcp = l2(p)
    ip = p[off:off + 20]
    udp = off + 20
    bth = udp + 8
    return {
        "dscp": ip[1] >> 2, "ecn": ip[1] & 3, "pcp": pcp, "ip_len": struct.unpack(">H", ip[2:4])[0],
        "ip_cksum_ok": roceframes.ip_cksum(ip[:10] + b"\0\0" + ip[12:]) == struct.unpack(">H", ip[10:12])[0],
        "sport": struct.unpack(">H", p[udp:udp + 2])[0],
        "becn": bool(p[bth + 4] & 0x40), "pkey": struct.unpack(">H", p[bth + 2:bth + 4])[0],
        "psn": struct.unpack(">I", b"\0" + p[bth + 9:bth + 12])[0],
        "rsvd_zero": p[bth + 12:bth + 28] == b"\0" * 16, "icrc_ok": icrc_ok(p),
        "src": p[6:12], "dst": p[0:6], "sip": ip[12:16], "dip": ip[16:20],
    }


def is_cnp(p):
    off, _ = l2(p)
    return len(p) > off + 28 + 1 and p[off + 9] == 17 and \
        struct.unpack(">H", p[off + 22:off + 24])[0] == 4791 and p[off + 28] == 0x81


def run(rocemu, pipeline, tmp, tag):
    return roceframes.replay_two_ports(rocemu, pipeline, tmp, tag, "cnp")


# (time after T0 the data packet arrives, sender MAC/IP name, receiver name, DestQP) of every
# CNP the switch must send, in order.
WANT_SWITCH_CNPS = [("B", "A", 0x000111), ("B", "A", 0x000333), ("D", "C", 0x000555),
                    ("B", "A", 0x000111), ("B", "A", 0x000111)]


def check_cnps(frames, want_fields, nic_cnp_expected):
    errs = []
    cnps = [(t, p) for t, _, p in frames["p0"] if is_cnp(p)]
    if any(is_cnp(p) for _, _, p in frames["p1"]):
        errs.append("a CNP left towards the data receiver (p1)")
    nic = [(t, p) for t, p in cnps if t - gen.T0 < 5100 and t - gen.T0 >= 5000]
    switch = [(t, p) for t, p in cnps if (t, p) not in nic]
    if len(nic) != (1 if nic_cnp_expected else 0):
        errs.append("NIC CNPs on p0: %d, want %d" % (len(nic), 1 if nic_cnp_expected else 0))
    if len(switch) != len(WANT_SWITCH_CNPS):
        errs.append("switch CNPs on p0: %d, want %d" % (len(switch), len(WANT_SWITCH_CNPS)))
    for i, ((t, p), (frm, to, qpn)) in enumerate(zip(switch, WANT_SWITCH_CNPS)):
        c = cnp_info(p)
        got_qpn = struct.unpack(">I", b"\0" + p[l2(p)[0] + 33:l2(p)[0] + 36])[0]
        want = dict(want_fields)
        want.update({"ip_len": 60, "ip_cksum_ok": True, "becn": True, "pkey": 0xFFFF, "psn": 0,
                     "rsvd_zero": True, "icrc_ok": True, "src": gen.MAC[frm], "dst": gen.MAC[to],
                     "sip": gen.IP[frm], "dip": gen.IP[to]})
        if to == "C":
            want["pcp"] = want_fields["pcp_tagged"]
        else:
            want["pcp"] = None
        del want["pcp_tagged"]
        for k, v in want.items():
            if c[k] != v:
                errs.append("switch CNP %d (t=%d): %s = %r, want %r" % (i, t - gen.T0, k, c[k], v))
        if got_qpn != qpn:
            errs.append("switch CNP %d: DestQP 0x%06x, want 0x%06x" % (i, got_qpn, qpn))
    return errs


def check_tshark(path, n_cnps):
    tshark = shutil.which("tshark")
    if tshark is None:
        print("SKIP (part): tshark not installed: CNP dissection NOT checked (apt-get install tshark)")
        return []
    errs = []
    r = subprocess.run([tshark, "-r", path, "-Y", "infiniband.bth.opcode == 129", "-T", "fields",
                        "-e", "infiniband.bth.destqp"], capture_output=True, text=True, timeout=60)
    got = [x for x in r.stdout.split("\n") if x]
    if r.returncode != 0 or len(got) != n_cnps:
        errs.append("tshark: %d frames with infiniband.bth.opcode == 129, want %d (%s)"
                    % (len(got), n_cnps, r.stderr.strip()))
    r = subprocess.run([tshark, "-r", path, "-Y", "_ws.malformed or _ws.expert"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or r.stdout.strip():
        errs.append("tshark: malformed or expert items:\n" + r.stdout + r.stderr)
    print("tshark: %d CNPs dissected as BTH opcode 129, no malformed/expert items%s"
          % (len(got), "" if not errs else " -- NO"))
    return errs


def describe(t, port, p):
    line = "%d %s %d %s" % (t - gen.T0, port, len(p), pcapdump.describe(p))
    if is_cnp(p):
        c = cnp_info(p)
        line += " dscp=%d pcp=%s sport=%d becn=%d icrc=%s" % (
            c["dscp"], "-" if c["pcp"] is None else c["pcp"], c["sport"], c["becn"],
            "ok" if c["icrc_ok"] else "BAD")
    return line


def main():
    rocemu, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shipped = os.path.join(src, "pipelines", "switch-cnp.json")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        roceframes.write_pcap(os.path.join(tmp, "a.pcap"), gen.a_frames(), gen.T0)
        roceframes.write_pcap(os.path.join(tmp, "b.pcap"), gen.b_frames(), gen.T0)

        # 1. Shipped pipeline, defaults.
        out, ctr, frames, outs = run(rocemu, shipped, tmp, "default")
        want = {"generated": 5, "suppressed_pacing": 2, "unknown_qp": 1, "drop_nic_cnp": 0,
                "nombuf": 0}
        for k, v in want.items():
            if ctr.get(k) != v:
                failures.append("default: counter %s = %r, want %d" % (k, ctr.get(k), v))
        if "conservation: rx 14 + created 5 = tx 19 + drops 0 + held 0 + consumed 0: OK" not in out:
            failures.append("default: conservation line missing or wrong:\n" + out)
        failures += ["default: " + e for e in check_cnps(
            frames, {"dscp": 48, "ecn": 2, "pcp_tagged": 6, "sport": 0}, True)]
        failures += check_tshark(outs["p0"], 6)

        # 2. drop_nic_cnps and every marking key changed.
        with open(shipped) as f:
            pl = json.load(f)
        pl["egress"][0].update({"drop_nic_cnps": True, "dscp": 46, "ecn": 1, "priority": 5,
                                "udp_sport": 4242})
        custom = os.path.join(tmp, "pipeline-custom.json")
        with open(custom, "w") as f:
            json.dump(pl, f)
        out, ctr, frames, outs = run(rocemu, custom, tmp, "custom")
        want["drop_nic_cnp"] = 1
        for k, v in want.items():
            if ctr.get(k) != v:
                failures.append("custom: counter %s = %r, want %d" % (k, ctr.get(k), v))
        if "conservation: rx 14 + created 5 = tx 18 + drops 1 + held 0 + consumed 0: OK" not in out:
            failures.append("custom: conservation line missing or wrong:\n" + out)
        failures += ["custom: " + e for e in check_cnps(
            frames, {"dscp": 46, "ecn": 1, "pcp_tagged": 5, "sport": 4242}, False)]
        lines = sorted((t, port, describe(t, port, p)) for port in ("p0", "p1")
                       for t, _, p in frames[port])
        got = "".join(x[2] + "\n" for x in lines)
        d = roceframes.diff_expected(got, os.path.join(HERE, "switch-cnp", "expected.txt"), tmp)
        if d is not None:
            failures.append("custom: output differs from expected.txt:\n" + d)
    for f in failures:
        print("FAIL:", f)
    print("switch-cnp: %s" % ("ok" if not failures else "%d failures" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
