#!/usr/bin/env python3
"""Seed corpora of the configuration fuzz targets, from the files the project ships:

  corpus/pipeline/  every pipelines/*.json, tests/replay/*/pipeline*.json, tests/e2e/*.json,
                    tests/unit/invalid/base-pipeline.json and every invalid pipeline case
                    (tests/unit/invalid/*/input.json without a `kind` file saying "profile")
  corpus/profile/   one byte naming the pipeline (fuzz_profile.c's list: '0' bump-in-wire ...
                    '7' the invalid cases' base pipeline), then the profile: every
                    profiles/*.json with the pipeline tests/unit/run_invalid.py checks it
                    against, and every invalid profile case with the base pipeline

Each seed is named by the first 16 hex digits of its SHA-1 (as libFuzzer names its finds).
usage: gen_config_corpus.py [OUT_DIR]   (default: tests/fuzz/corpus next to this script)
"""
import glob
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
# fuzz_profile.c: fuzz_pipeline_files[], in this order
PIPELINES = ["pipelines/bump-in-wire.json", "pipelines/capture-10g.json",
             "pipelines/dcqcn-lab.json", "pipelines/impair-lab.json",
             "pipelines/learning-switch.json", "pipelines/long-rtt.json",
             "pipelines/switch-cnp.json", "tests/unit/invalid/base-pipeline.json"]
# tests/unit/run_invalid.py: PROFILE_PIPELINES (and dcqcn-lab.json for incast phases)
PROFILE_PIPELINES = {
    "lossy-gilbert.json": "impair-lab.json",
    "psn-targeted-drop.json": "impair-lab.json",
    "pfc-storm.json": "dcqcn-lab.json",
    "long-rtt-30ms.json": "long-rtt.json",
}


def write(out, data):
    os.makedirs(out, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    inv = os.path.join(SRC, "tests", "unit", "invalid")
    n_pl = n_pr = 0
    pls = (glob.glob(os.path.join(SRC, "pipelines", "*.json")) +
           glob.glob(os.path.join(SRC, "tests", "replay", "*", "pipeline*.json")) +
           glob.glob(os.path.join(SRC, "tests", "e2e", "*.json")) +
           [os.path.join(inv, "base-pipeline.json")])
    profiles = []
    for case in sorted(os.listdir(inv)):
        d = os.path.join(inv, case)
        if not os.path.isdir(d):
            continue
        kind = "pipeline"
        if os.path.exists(os.path.join(d, "kind")):
            kind = read(os.path.join(d, "kind")).decode().strip()
        if kind == "profile":
            profiles.append((PIPELINES.index("tests/unit/invalid/base-pipeline.json"),
                             os.path.join(d, "input.json")))
        else:
            pls.append(os.path.join(d, "input.json"))
    for p in sorted(pls):
        write(os.path.join(out, "pipeline"), read(p))
        n_pl += 1
    for p in sorted(glob.glob(os.path.join(SRC, "profiles", "*.json"))):
        uses_incast = any("incast" in ph for ph in json.loads(read(p)).get("phases", []))
        pl = PROFILE_PIPELINES.get(os.path.basename(p),
                                   "dcqcn-lab.json" if uses_incast else "bump-in-wire.json")
        profiles.append((PIPELINES.index("pipelines/" + pl), p))
    for idx, p in profiles:
        write(os.path.join(out, "profile"), b"%d" % idx + read(p))
        n_pr += 1
    print("%d pipeline seeds, %d profile seeds in %s" % (n_pl, n_pr, out))


if __name__ == "__main__":
    main()
