#!/usr/bin/env python3
"""Node files (rocegen --node, docs/node.md).

1. Every invalid-node/<case>/input.json (with the node flags in its `args` file, if any) is
   refused by `rocegen node --node FILE [ARGS]` with exit code 1 and the first line of stderr
   equal to invalid-node/<case>/error (the " (in FILE ...)" suffix is ignored): the message
   starts with the JSON path of the value at fault.
2. Every shipped node file (nodes/*.json) loads, and the flags go over the file's keys.
3. scripts/node_from_topo.py turns `nvidia-smi topo -m` output and NCCL's topology dump
   (tests/unit/node-topo) into the node files expected below, and rocegen loads them.
4. With python3-jsonschema: `rocemu schema node` is valid JSON Schema, accepts the shipped
   node files and refuses every invalid file-only case but those in SCHEMA_CANNOT.
"""
import glob
import json
import os
import subprocess
import sys

# refused for a rule across keys, which the schema of one value cannot state
SCHEMA_CANNOT = {"nics-over-gpus"}


def node(rocegen, args):
    return subprocess.run([rocegen, "node"] + args, capture_output=True, text=True, timeout=60)


def main():
    rocegen, rocemu, src = sys.argv[1], sys.argv[2], sys.argv[3]
    here = os.path.join(src, "tests", "unit", "invalid-node")
    cases = sorted(d for d in os.listdir(here) if os.path.isdir(os.path.join(here, d)))
    failed = 0
    for case in cases:
        d = os.path.join(here, case)
        inp = os.path.join(d, "input.json")
        with open(os.path.join(d, "error")) as f:
            want = f.readline().rstrip("\n")
        args = []
        if os.path.exists(os.path.join(d, "args")):
            args = open(os.path.join(d, "args")).read().split()
        r = node(rocegen, ["--node", inp] + args)
        lines = r.stderr.splitlines()
        got = lines[0] if lines else ""
        if got.endswith(")") and " (in " in got:
            got = got[:got.rindex(" (in ")]
        ok = r.returncode == 1 and got == want
        print("%s %s" % ("ok  " if ok else "FAIL", case))
        if not ok:
            failed += 1
            print("   exit %d\n   want: %s\n   got:  %s" % (r.returncode, want, got))
    shipped = sorted(glob.glob(os.path.join(src, "nodes", "*.json")))
    for p in shipped:
        r = node(rocegen, ["--node", p])
        ok = r.returncode == 0
        print("%s %s" % ("ok  " if ok else "FAIL", os.path.relpath(p, src)))
        if not ok:
            failed += 1
            print("   " + r.stderr.strip())
    # flags over the file: --pcie 4x16 over the DGX H100 file's Gen5 x16 caps it at 208 Gb/s
    r = node(rocegen, ["--node", os.path.join(src, "nodes", "dgx-h100.json"), "--pcie", "4x16"])
    d = json.loads(r.stdout) if r.returncode == 0 else {}
    ok = d.get("pcie") == {"gen": 4, "lanes": 16, "mps": 256} and \
        abs(d.get("host_cap_gbps", [0])[0] - 207.9) < 0.1 and d.get("host_cap_by") == "pcie"
    print("%s --pcie 4x16 over nodes/dgx-h100.json: %s" % ("ok  " if ok else "FAIL",
                                                          d.get("host_cap_gbps", [None])[0]))
    failed += not ok
    failed += check_topo(rocegen, src)
    try:
        import jsonschema
    except ImportError:
        print("SKIP schema checks: no python3-jsonschema")
        return 1 if failed else 0
    r = subprocess.run([rocemu, "schema", "node"], capture_output=True, text=True, timeout=60)
    schema = json.loads(r.stdout)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    v = cls(schema)
    for p in shipped:
        errs = list(v.iter_errors(json.load(open(p))))
        print("%s schema accepts %s" % ("ok  " if not errs else "FAIL", os.path.relpath(p, src)))
        failed += bool(errs)
    for case in cases:
        d = os.path.join(here, case)
        if os.path.exists(os.path.join(d, "args")):
            continue
        refused = bool(list(v.iter_errors(json.load(open(os.path.join(d, "input.json"))))))
        ok = refused != (case in SCHEMA_CANNOT)
        print("%s schema %s %s" % ("ok  " if ok else "FAIL",
                                   "refuses" if refused else "accepts", case))
        failed += not ok
    return 1 if failed else 0


# input -> (extra options, the node file expected)
TOPO = {
    "dgx-h100-smi.txt": (["--gpu", "hopper"], {"gpus": 8, "gpu": "hopper", "fabric": "nvlink4",
                                               "nics": 8, "gdr": True}),
    # GPU 0's NIC through the CPU (PHB): GDR off; GPU to GPU through the CPU (SYS): ACS path
    "pcie-smi.txt": ([], {"gpus": 4, "fabric": "pcie-acs", "nics": 1, "gdr": False}),
    # NCCL's XML: Intel, sm 90, 18 NVLinks, 400G NICs on Gen5 x16 (the first NIC's slot)
    "h100-nccl.xml": ([], {"gpus": 2, "gpu": "hopper", "cpu": "intel", "fabric": "nvlink4",
                           "nics": 2, "nic_gbps": 400.0,
                           "pcie": {"gen": 5, "lanes": 16, "mps": 256},
                           "gpu_pcie": {"gen": 5, "lanes": 16, "mps": 256}, "gdr": True}),
}


def check_topo(rocegen, src):
    failed = 0
    conv = os.path.join(src, "scripts", "node_from_topo.py")
    for name, (opts, want) in sorted(TOPO.items()):
        inp = os.path.join(src, "tests", "unit", "node-topo", name)
        r = subprocess.run([sys.executable, conv, inp] + opts, capture_output=True, text=True,
                           timeout=60)
        got = json.loads(r.stdout) if r.returncode == 0 else r.stderr
        ok = got == want
        if ok:
            tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "node_%d.json" % os.getpid())
            with open(tmp, "w") as f:
                f.write(r.stdout)
            ok = node(rocegen, ["--node", tmp]).returncode == 0
            os.unlink(tmp)
        print("%s node_from_topo.py %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            failed += 1
            print("   want: %s\n   got:  %s" % (want, got))
    return failed


if __name__ == "__main__":
    sys.exit(main())
