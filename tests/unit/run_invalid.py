#!/usr/bin/env python3
"""Every invalid/<case>/input.json must be refused by `rocemu check` with exit code 2 and the
first line of stderr equal to "rocemu check: " and invalid/<case>/error ({file} stands for the
input's path; the " (in FILE)" suffix rocemu adds is ignored). A case with a `kind` file saying "profile" is a
profile checked against invalid/base-pipeline.json (or against the shipped pipeline its
`pipeline` file names); otherwise it is a pipeline.
Also: every shipped pipeline, and every shipped profile against the default pipeline (or the one
PROFILE_PIPELINES names; dcqcn-lab.json for profiles with incast phases), is valid."""
import glob
import json
import os
import subprocess
import sys

# Shipped profiles that change stages need the pipeline that has them (profiles/README.md).
PROFILE_PIPELINES = {
    "spine-down.json": "ecmp-4x25.json",
    "spine-hotspot.json": "ecmp-4x25.json",
    "fabric-25m.json": "ecmp-4x25.json",
    "lossy-gilbert.json": "impair-lab.json",
    "psn-targeted-drop.json": "impair-lab.json",
    "pfc-storm.json": "dcqcn-lab.json",
    "long-rtt-30ms.json": "long-rtt.json",
}


def check(rocemu, args):
    return subprocess.run([rocemu, "check"] + args, capture_output=True, text=True, timeout=60)


def main():
    rocemu, src = sys.argv[1], sys.argv[2]
    here = os.path.join(src, "tests", "unit", "invalid")
    cases = sorted(d for d in os.listdir(here) if os.path.isdir(os.path.join(here, d)))
    failed = 0
    for case in cases:
        d = os.path.join(here, case)
        inp = os.path.join(d, "input.json")
        with open(os.path.join(d, "error")) as f:
            want = f.readline().rstrip("\n").replace("{file}", inp)
        kind = "pipeline"
        if os.path.exists(os.path.join(d, "kind")):
            kind = open(os.path.join(d, "kind")).read().strip()
        if kind == "profile":
            # against invalid/base-pipeline.json, or the shipped pipeline a "pipeline" file names
            base = os.path.join(here, "base-pipeline.json")
            if os.path.exists(os.path.join(d, "pipeline")):
                with open(os.path.join(d, "pipeline")) as f:
                    base = os.path.join(src, "pipelines", f.read().strip())
            r = check(rocemu, ["--pipeline", base, "--profile", inp])
        else:
            r = check(rocemu, ["--pipeline", inp])
        lines = r.stderr.splitlines()
        got = lines[0] if lines else ""
        # every error line of check starts "rocemu check: " (README, "Exit status")
        got = got[len("rocemu check: "):] if got.startswith("rocemu check: ") else \
            "(no \"rocemu check: \" prefix) " + got
        if got.endswith(")") and " (in " in got:
            got = got[:got.rindex(" (in ")]
        ok = r.returncode == 2 and got == want
        print("%s %s" % ("ok  " if ok else "FAIL", case))
        if not ok:
            failed += 1
            print("   exit %d\n   want: %s\n   got:  %s" % (r.returncode, want, got))
    print("%d invalid documents, %d refused as expected" % (len(cases), len(cases) - failed))
    if len(cases) < 20:
        print("FAIL: fewer than 20 invalid cases")
        failed += 1
    for p in sorted(glob.glob(os.path.join(src, "pipelines", "*.json"))):
        r = check(rocemu, ["--pipeline", p])
        print("%s %s" % ("ok  " if r.returncode == 0 else "FAIL", os.path.relpath(p, src)))
        if r.returncode != 0:
            failed += 1
            print("   " + r.stderr.strip())
    for p in sorted(glob.glob(os.path.join(src, "profiles", "*.json"))):
        # profiles that drive incast sources need a pipeline that defines them
        with open(p) as f:
            uses_incast = any("incast" in ph for ph in json.load(f).get("phases", []))
        pipeline = PROFILE_PIPELINES.get(os.path.basename(p),
                                         "dcqcn-lab.json" if uses_incast else "bump-in-wire.json")
        r = check(rocemu, ["--pipeline", os.path.join(src, "pipelines", pipeline),
                           "--profile", p])
        print("%s %s" % ("ok  " if r.returncode == 0 else "FAIL", os.path.relpath(p, src)))
        if r.returncode != 0:
            failed += 1
            print("   " + r.stderr.strip())
    failed += check_live_missing_port(rocemu, src)
    return 1 if failed else 0


def check_live_missing_port(rocemu, src):
    """Live mode with one DPDK port for a two-port pipeline: exit 2, one line naming ports[1]."""
    r = subprocess.run([rocemu, "-l", "0", "--no-huge", "--no-pci", "-m", "256",
                        "--file-prefix=rocemu_missing_%d" % os.getpid(),
                        "--log-level=lib.eal:error", "--vdev=net_null0", "--",
                        "--pipeline", os.path.join(src, "pipelines", "bump-in-wire.json"),
                        "--duration", "1"], capture_output=True, text=True, timeout=60)
    want = "ports[1] (p1): no DPDK port number 1 (DPDK has 1 port(s): 0=net_null0); add it with --vdev or -a, or name it with \"dev\""
    lines = [l for l in r.stderr.splitlines() if l.startswith("ports[")]
    ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith(want)
    print("%s live mode refuses a missing port" % ("ok  " if ok else "FAIL"))
    if not ok:
        print("   exit %d\n   want: %s\n   got:  %s" % (r.returncode, want, r.stderr))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
