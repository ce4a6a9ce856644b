#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Make a rocegen node file (docs/node.md) from what a GPU server tells about itself.

    node_from_topo.py topo.txt  [--gpu hopper] [--nic-gbps 400] [--out node.json]
    node_from_topo.py topo.xml  [...]

topo.txt: the output of `nvidia-smi topo -m` (GPUn and NICn rows; NV# = NVLink with # links,
PIX/PXB = through PCIe switches, PHB/NODE/SYS = through the CPU). topo.xml: NCCL's topology dump
(NCCL_TOPO_DUMP_FILE=topo.xml): cpu vendor, gpu sm and nvlink counts, net speed and gdr, and
the PCIe link speed and width of each NIC and GPU. What the input does not say comes from the
options or from docs/node.md's defaults (NODE.md's figures). The GDR rule is NCCL's default
NCCL_NET_GDR_LEVEL: on when GPU 0's nearest NIC is PIX or PXB, off through the CPU (PHB, NODE,
SYS). NVLink links per GPU: 12 -> nvlink3 (A100), 18 -> nvlink4 (H100) or, on sm 100,
nvlink5 (B200). The file is checked by `rocegen node --node FILE` like any other.
"""
import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET

GT_TO_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}
SM_TO_GPU = [(100, "blackwell"), (90, "hopper"), (80, "ampere"), (70, "volta")]


def pcie_of(speed, width):
    """PCIe {gen, lanes} from NCCL's "32.0 GT/s PCIe" and "16", or None."""
    m = re.match(r"\s*([0-9.]+)\s*GT/s", speed or "")
    if not m:
        return None
    gen = GT_TO_GEN.get(("%g" % float(m.group(1))))
    lanes = int(width) if (width or "").isdigit() else 16
    if gen is None or lanes not in (1, 2, 4, 8, 16):
        return None
    return {"gen": gen, "lanes": lanes, "mps": 256}


def fabric_of(nv_links, sm, path):
    if nv_links:
        if sm >= 100:
            return "nvlink5"
        return "nvlink4" if nv_links >= 18 else "nvlink3"
    return "pcie" if path in ("PIX", "PXB") else "pcie-acs"


def from_smi(text):
    lines = [l.rstrip() for l in text.splitlines() if l.strip()]
    head = None
    rows = {}
    for l in lines:
        f = l.split()
        if head is None and f and f[0].startswith("GPU0"):
            head = [c for c in f if re.match(r"^(GPU|NIC|mlx5_)\d+$", c)]
            continue
        if head and f and re.match(r"^(GPU|NIC|mlx5_)\d+$", f[0]):
            rows[f[0]] = f[1:1 + len(head)]
    if not head:
        raise ValueError("no GPU0 header line: not `nvidia-smi topo -m` output")
    gpus = [c for c in head if c.startswith("GPU")]
    nics = [c for c in head if not c.startswith("GPU")]
    node = {"gpus": len(gpus)}
    g0 = dict(zip(head, rows.get("GPU0", [])))
    links = [int(v[2:]) for k, v in g0.items() if k.startswith("GPU") and v.startswith("NV")]
    peer = [v for k, v in g0.items() if k.startswith("GPU") and k != "GPU0"]
    node["nics"] = max(1, min(len(nics), len(gpus))) if nics else 1
    nic_paths = [g0[n] for n in nics if n in g0]
    order = ["PIX", "PXB", "PHB", "NODE", "SYS"]
    near = min(nic_paths, key=lambda p: order.index(p) if p in order else 9) if nic_paths else None
    if near is not None:
        node["gdr"] = near in ("PIX", "PXB")
    return node, (max(links) if links else 0), (peer[0] if peer else "PIX")


def from_xml(text):
    root = ET.fromstring(text)
    node = {}
    cpu = root.find(".//cpu")
    if cpu is not None:
        v = cpu.get("vendor", "")
        node["cpu"] = "intel" if "Intel" in v else "amd" if "AMD" in v else \
            "arm" if cpu.get("arch") == "arm64" else "other"
    parents = {c: p for p in root.iter() for c in p}
    gpus = root.findall(".//gpu")
    nets = root.findall(".//net")
    node["gpus"] = len(gpus)
    sm = max((int(g.get("sm", "0")) for g in gpus), default=0)
    for lo, name in SM_TO_GPU:
        if sm >= lo:
            node["gpu"] = name
            break
    links = max((sum(int(n.get("count", "1")) for n in g.findall("nvlink")) for g in gpus),
                default=0)
    if gpus:
        p = pcie_of(parents[gpus[0]].get("link_speed"), parents[gpus[0]].get("link_width"))
        if p:
            node["gpu_pcie"] = p
    if nets:
        node["nics"] = max(1, min(len(nets), len(gpus) or 1))
        node["nic_gbps"] = int(nets[0].get("speed", "100000")) / 1000
        node["gdr"] = nets[0].get("gdr", "0") == "1"
        pci = parents.get(parents.get(nets[0]))
        if pci is not None and pci.tag == "pci":
            p = pcie_of(pci.get("link_speed"), pci.get("link_width"))
            if p:
                node["pcie"] = p
    return node, links, sm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("--gpu", help="GPU generation when the input does not say (nvidia-smi)")
    ap.add_argument("--cpu", help="CPU vendor when the input does not say")
    ap.add_argument("--nic-gbps", type=float, help="NIC line rate when the input does not say")
    ap.add_argument("--out", help="write here (default stdout)")
    a = ap.parse_args()
    text = open(a.input).read()
    if text.lstrip().startswith("<"):
        node, links, sm = from_xml(text)
        node["fabric"] = fabric_of(links, sm, "PIX")
    else:
        node, links, path = from_smi(text)
        sm = {"blackwell": 100}.get(a.gpu or "", 0)
        node["fabric"] = fabric_of(links, sm, path)
    for key, val in (("gpu", a.gpu), ("cpu", a.cpu), ("nic_gbps", a.nic_gbps)):
        if val is not None and key not in node:
            node[key] = val
    order = ["gpus", "gpu", "cpu", "fabric", "nics", "nic_gbps", "pcie", "gpu_pcie", "gdr"]
    out = {k: node[k] for k in order if k in node}
    text = json.dumps(out, indent="\t") + "\n"
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
