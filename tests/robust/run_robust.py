#!/usr/bin/env python3
"""Runs every case of cases.py and compares its exit status and first stderr line with
expected.txt; after every case also checks that the run left its inputs and the existing
output byte-identical, no temporary output file and no DPDK runtime directory behind, and
did not die of a signal.

usage: run_robust.py ROCEMU ROCEGEN SRC [--record]
  --record  rewrite expected.txt from what the binaries say now (review the diff!)"""
import hashlib
import re
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "replay"))
import cases  # noqa: E402
import roceframes  # noqa: E402

RUNDIR = "/var/run/dpdk"


def roce_frames(n=20):
    """n RC WRITE MIDDLE frames p0 -> p1, 1 us apart, with valid checksums and ICRC."""
    import struct
    frames = []
    for i in range(n):
        payload = bytes(256)
        bth = struct.pack(">BBHII", 0x07, 0x40, 0xFFFF, 0x45, 0x80000000 | (100 + i))
        udp_len = 8 + len(bth) + len(payload) + 4
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0x02, 20 + udp_len, 0, 0x4000, 64, 17,
                                   0, bytes([198, 18, 0, 11]), bytes([198, 18, 0, 12])))
        ip[10:12] = struct.pack(">H", roceframes.ip_cksum(bytes(ip)))
        udp = struct.pack(">HHHH", 49152, 4791, udp_len, 0)
        body = bytes(ip) + udp + bth + payload
        eth = b"\x02\x00\x00\x00\x00\x12" + b"\x02\x00\x00\x00\x00\x11" + b"\x08\x00"
        frames.append((i * 1000, eth + body + roceframes.icrc(body)))
    return frames


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def make_fixture(d, name, val, src):
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(val, str) and val.startswith("@link:"):
        os.link(os.path.join(d, val[6:]), path)
    elif isinstance(val, str) and val.startswith("@symlink:"):
        os.symlink(val[9:], path)
    elif isinstance(val, str) and val.startswith("@pl_egress:"):
        stages = json.loads("[" + val[11:] + "]")
        with open(path, "w") as f:
            json.dump(cases.pl_egress(*stages), f)
    elif isinstance(val, str) and val.startswith("@raw:"):
        with open(path, "w") as f:
            f.write(val[5:])
    elif isinstance(val, (bytes, bytearray)):
        with open(path, "wb") as f:
            f.write(val)
    else:
        with open(path, "w") as f:
            json.dump(val, f)


def rundirs():
    try:
        return set(os.listdir(RUNDIR))
    except OSError:
        return set()


def main():
    rocemu, rocegen, src = [os.path.abspath(a) for a in sys.argv[1:4]]
    record = "--record" in sys.argv[4:]
    expected = {}
    exp_path = os.path.join(HERE, "expected.txt")
    if not record:
        with open(exp_path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                name, code, first = line.rstrip("\n").split("\t", 2)
                expected[name] = (int(code), first)
    top = tempfile.mkdtemp(prefix="rocemu-robust-")
    failed = 0
    out_lines = []
    names = [c[0] for c in cases.CASES]
    if len(set(names)) != len(names):
        print("FAIL: duplicate case names")
        return 1
    for name, argv, files in cases.CASES:
        d = os.path.join(top, name)
        os.makedirs(d)
        for pname, rel in (("bump.json", "bump-in-wire.json"), ("dcqcn.json", "dcqcn-lab.json"),
                           ("impair.json", "impair-lab.json")):
            shutil.copy(os.path.join(src, "pipelines", rel), os.path.join(d, pname))
        roceframes.write_pcap(os.path.join(d, "in.pcap"), roce_frames(), t0=10**9)
        with open(os.path.join(d, "out.pcap"), "wb") as f:
            f.write(b"an existing output that no refused run may touch\n")
        for fname, val in files.items():
            make_fixture(d, fname, val, src)
        before = {f: md5(os.path.join(d, f)) for f in os.listdir(d)
                  if os.path.isfile(os.path.join(d, f)) and not os.path.islink(os.path.join(d, f))}
        exe = {"rocemu": rocemu, "rocegen": rocegen}[argv[0]]
        tag = "%d_%d" % (os.getpid(), len(out_lines))
        # a directory of a dead process whose PID this run may get again is not this run's
        runs_before = rundirs()
        args = [exe] + [a.replace("{pid}", tag) for a in argv[1:]]
        p = subprocess.Popen(args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, errors="replace")
        try:
            _, err = p.communicate(timeout=120)
            code = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            code, err = -999, "TIMEOUT after 120 s"
        # this run's own runtime directories (other tests run beside this one)
        mine = {"rocemu_offline_%d" % p.pid, "robust_" + tag, "robustg_" + tag}
        # DPDK's own start-up notices are not rocemu's message
        lines = [l for l in err.splitlines() if l.strip() and not l.startswith("TELEMETRY: ")]
        first = lines[0] if lines else "(nothing on stderr)"
        first = first.replace(exe, argv[0])  # getopt names the binary by its path
        # the machine's memory differs between machines
        first = re.sub(r"this machine's [0-9.]+ GB", "this machine's N GB", first)
        out_lines.append("%s\t%d\t%s" % (name, code, first))
        problems = []
        if code < 0 or code == -999:
            problems.append("died: exit %d (%s)" % (code, first))
        if "AddressSanitizer" in err or "runtime error:" in err:
            problems.append("sanitizer report: " + err[-400:])
        for f, h in before.items():
            p = os.path.join(d, f)
            if not os.path.exists(p) or md5(p) != h:
                # a case may write new files, never change one that was there
                problems.append("changed or removed %s" % f)
        left = [f for f in os.listdir(d) if ".rocemu-" in f]
        if left:
            problems.append("temporary files left: %s" % left)
        new_runs = sorted((rundirs() - runs_before) & mine)
        if new_runs:
            problems.append("DPDK runtime directories left: %s" % new_runs)
        if not record:
            want = expected.get(name)
            if want is None:
                problems.append("no expectation in expected.txt")
            elif (code, first) != want:
                problems.append("want exit %d: %s\n      got  exit %d: %s" %
                                (want[0], want[1], code, first))
        print("%s %s" % ("ok  " if not problems else "FAIL", name))
        for p in problems:
            print("      " + p)
        failed += bool(problems)
    if record:
        with open(exp_path, "w") as f:
            f.write("# name<TAB>exit status<TAB>first line of stderr (tests/robust/cases.py)\n")
            f.write("\n".join(out_lines) + "\n")
        print("recorded %d cases in %s" % (len(out_lines), exp_path))
    stale = set(expected) - set(names)
    if stale:
        print("FAIL: expectations without a case: %s" % sorted(stale))
        failed += 1
    if len(cases.CASES) < 120:
        print("FAIL: only %d cases (at least 120)" % len(cases.CASES))
        failed += 1
    shutil.rmtree(top, ignore_errors=True)
    print("%d hostile cases, %d as expected" % (len(cases.CASES), len(cases.CASES) - failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
