#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The layers of lib/ (docs/architecture.md, "Layout and layers"): a file of a library may
include headers of its own library and of the layers below it, never of a layer above or beside it.

    check_layers.py ROOT            check ROOT/lib; exit 1 and one line per violation
    check_layers.py --self-test     prove the check fails on an upward include

Every directory of lib/ must be listed in LAYERS: a new library states where it sits.
"""
import os
import re
import sys
import tempfile

# rank: a library may include only libraries of a strictly lower rank (and its own)
LAYERS = {
    "base": 0,      # errors, JSON, output files, RNG, hashes: no DPDK
    "proto": 1,     # RoCEv2 wire formats, ICRC
    "dcqcn": 1,     # the DCQCN model, pure
    "node": 1,      # rocegen's node model (PCIe, GDR, NVLink), pure
    "pkt": 2,       # packet metadata and trace, the drop path, the held queue
    "endpoint": 2,  # rocegen's RC endpoint
    "stage": 3,     # the stage contract, match expressions
    "analysis": 3,  # rocestat's analysis
    "fabric": 5,    # the emulated fabric: ECMP hashes, topology, routes
    "tm": 4,        # the traffic manager, incast sources
    "capture": 4,   # pcap/pcapng, capture rings
    "stages": 5,    # the stages
    "switch": 6,    # the runner, pipeline, reports, typed programs
    "ctl": 7,       # profiles
}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check(root):
    bad = []
    lib = os.path.join(root, "lib")
    for d in sorted(os.listdir(lib)):
        if not os.path.isdir(os.path.join(lib, d)):
            continue
        if d not in LAYERS:
            bad.append(f"lib/{d}: not a known layer (add it to LAYERS in {__file__} with its rank)")
            continue
        for f in sorted(os.listdir(os.path.join(lib, d))):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(lib, d, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"lib/{d}/{f}:{no}"
                    if not inc.startswith("lib/"):
                        if not os.path.exists(os.path.join(lib, d, inc)):
                            bad.append(f'{where}: "{inc}" is not a file of lib/{d} (include '
                                       'other libraries as "lib/NAME/file.h")')
                        continue
                    parts = inc.split("/")
                    other = parts[1] if len(parts) > 2 else ""
                    if other not in LAYERS:
                        bad.append(f'{where}: "{inc}": unknown library')
                    elif other != d and LAYERS[other] >= LAYERS[d]:
                        rel = "above" if LAYERS[other] > LAYERS[d] else "beside"
                        bad.append(f'{where}: includes "{inc}", a layer {rel} it '
                                   f'({other} {LAYERS[other]} >= {d} {LAYERS[d]})')
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as t:
        for d, body in (("base", '#include "lib/base/emu_err.h"\n'),
                        ("tm", '#include "lib/pkt/emu_pkt.h"\n'),
                        ("pkt", "")):
            os.makedirs(os.path.join(t, "lib", d))
            with open(os.path.join(t, "lib", d, "x.c"), "w") as fh:
                fh.write(body)
        if check(t):
            print("self-test: a clean tree was refused:", check(t))
            return 1
        with open(os.path.join(t, "lib", "pkt", "x.c"), "w") as fh:
            fh.write('#include "lib/tm/emu_tm.h"\n')
        found = check(t)
        if len(found) != 1 or "a layer above it" not in found[0]:
            print("self-test: the upward include lib/pkt -> lib/tm was not caught:", found)
            return 1
        os.makedirs(os.path.join(t, "lib", "newlib"))
        if not any("not a known layer" in b for b in check(t)):
            print("self-test: an unlisted library was not refused")
            return 1
    print("self-test: upward include and unlisted library refused, clean tree accepted")
    return 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    bad = check(sys.argv[1])
    for b in bad:
        print(b)
    n = sum(len(fs) for _, _, fs in os.walk(os.path.join(sys.argv[1], "lib")))
    print(f"layers: {len(bad)} violation(s) in {n} files of lib/")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
