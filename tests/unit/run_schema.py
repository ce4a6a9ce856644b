#!/usr/bin/env python3
"""`rocemu schema pipeline|profile` against the loaders (issue 15 item 5).

1. Both schemas are valid JSON Schema (draft 2020-12, the dialect rocemu writes) and say so.
2. Every shipped pipeline (pipelines/*.json) and profile (profiles/*.json), and every pipeline
   and profile under tests/ (replay cases, e2e, analysis, bench), is valid under its schema.
3. The invalid corpus (tests/unit/invalid, every case refused by `rocemu check`, see
   run_invalid.py): every case is refused by the schema too, except the cases listed in
   SCHEMA_CANNOT below, whose reason no JSON Schema of the document alone can state. The list
   may not grow silently: a listed case that the schema does refuse, or an unlisted case that
   it accepts, fails the test.
4. The pipeline fuzz corpus (tests/fuzz/corpus/pipeline: shipped files, invalid cases and the
   fuzzer's finds): whatever the loader accepts, the schema accepts (no false alarms in an
   editor).

Needs python3-jsonschema (Debian 12: 4.10; scripts/deps.sh installs it). Without it the test
skips (exit 77), which under CI=true is a failure; so it fails outright there.
"""
import glob
import json
import os
import subprocess
import sys

# The invalid cases the schema accepts, by why: the loader refuses them for a reason that
# depends on more than one value's type, range, allowed strings, presence or key name.
SCHEMA_CANNOT = {
    # names that must exist elsewhere in the document (or in the pipeline, for profiles)
    "delay-rule-match-bad", "forward-pair-unknown-port", "incast-port-unknown",
    "incast-sink-unknown", "match-out-ports-unknown", "match-port-unknown",
    "mirror-unknown-port", "tm-unknown-port", "profile-unknown-port", "profile-link-underscore",
    "profile-link-switch", "profile-incast-unknown",
    "reorder-ports-unknown", "fabric-link-unknown-switch", "fabric-name-clash",
    "fabric-port-twice",
    # a key against the TM section of another port (lossless priorities, PFC on)
    "incast-pfc-not-lossless", "incast-attach-no-fabric", "port-guard-lossless",
    # the fabric's graph: every pair of leaves connected, every switch on a link, two leaves
    "fabric-no-path", "fabric-switch-no-links", "fabric-no-leaves",
    # a resilient table against the next hops the graph gives a switch
    "fabric-resilient-few",
    # where a stage may be placed (ingress or egress list), or a stage the fabric needs
    "reorder-on-ingress", "fabric-no-parse", "fabric-no-parse-spray-match", "reorder-no-parse",
    "cnp-no-parse",
    # a number rounded to whole nanoseconds must not round to 0
    "reorder-timeout-sub-ns",
    "profile-impair-unknown-event", "profile-impair-p-no-model",
    # what a pipeline's port is (a real port or a fabric link)
    "profile-storm-fabric-link",
    # names that must be unique across array items
    "impair-event-name-dup", "incast-name-dup", "port-name-dup", "stage-name-dup",
    "tm-port-twice", "forward-pair-self", "match-direction-same-port",
    # one value against another (sums, orders, <, <=)
    "delay-jitter-over-delay", "impair-loss-4state-sum", "impair-loss-4state-sum3",
    "match-until-before-from", "tm-ecn-kmax", "tm-pfc-xon-above", "profile-order", "port-guard-xon",
    "profile-repeat-inner-late", "match-psn-half",
    # values derived from other keys (MTU, rates, delay lines, the port count, link names)
    "incast-frame-mtu", "incast-period-short", "incast-loop-senders", "forward-pairs-3ports",
    "fabric-link-default-name-long",
    "profile-delay-line-rate-restore", "profile-delay-line-rate-up",
    "profile-delay-line-small", "profile-incast-burst-rate",
    "profile-duration-overlap", "profile-duration-overlap-repeat",
    # rounding to whole nanoseconds (a positive value that rounds to 0 ns)
    "impair-delay-sub-ns", "profile-duration-sub-ns",
    # where a stage is placed or how often a type appears (ingress/egress, after forward)
    "cnp-on-ingress", "impair-two-stages", "match-direction-before-forward",
    "match-out-ports-before-forward",
    # the meaning of a string: addresses, prefixes, pcap filter expressions
    "match-dst-ip-prefix", "match-src-ip-bad", "capture-filter-bad",
    # not JSON a schema sees: a syntax error, a duplicate key (Python keeps the last one)
    "syntax-error", "duplicate-key", "duplicate-key-nested",
    "profile-duplicate-key",
}

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema(rocemu, what, tmp):
    out = os.path.join(tmp, what + ".schema.json")
    r = subprocess.run([rocemu, "schema", what, "--out", out], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        print("FAIL rocemu schema %s: exit %d: %s" % (what, r.returncode, r.stderr.strip()))
        return None
    s = subprocess.run([rocemu, "schema", what], capture_output=True, text=True, timeout=60)
    if s.stdout != open(out).read():
        print("FAIL rocemu schema %s: stdout and --out differ" % what)
        return None
    return json.load(open(out))


def kind_of(doc):
    if isinstance(doc, dict) and "ports" in doc:
        return "pipeline"
    if isinstance(doc, dict) and "phases" in doc:
        return "profile"
    return None


def first_error(validator, doc):
    errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errs:
        return None
    e = errs[0]
    return "%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(document)",
                       e.message[:300])


def main():
    rocemu, src, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
    ci = os.environ.get("CI", "false") == "true"
    try:
        import jsonschema
    except ImportError:
        print("%s: python3-jsonschema is missing (scripts/deps.sh installs it)" %
              ("FAIL" if ci else "SKIP"))
        return 1 if ci else 77
    failed = 0
    os.makedirs(tmp, exist_ok=True)
    schemas = {w: schema(rocemu, w, tmp) for w in ("pipeline", "profile")}
    if None in schemas.values():
        return 1
    V = jsonschema.Draft202012Validator
    validators = {}
    for w, s in schemas.items():
        if s.get("$schema") != DIALECT:
            print("FAIL %s schema: $schema is %r, not %s" % (w, s.get("$schema"), DIALECT))
            failed += 1
        try:
            V.check_schema(s)
        except jsonschema.exceptions.SchemaError as e:
            print("FAIL %s schema is not a valid draft 2020-12 schema: %s" % (w, e.message))
            return 1
        validators[w] = V(s)
        print("ok   %s schema: %d bytes" % (w, len(json.dumps(s))))

    # 2. shipped and test documents
    docs = sorted(glob.glob(os.path.join(src, "pipelines", "*.json")) +
                  glob.glob(os.path.join(src, "profiles", "*.json")))
    for f in sorted(glob.glob(os.path.join(src, "tests", "**", "*.json"), recursive=True)):
        rel = os.path.relpath(f, src)
        if not rel.startswith(os.path.join("tests", "unit", "invalid")) and \
           not rel.startswith(os.path.join("tests", "fuzz")):
            docs.append(f)
    docs.append(os.path.join(src, "tests", "unit", "invalid", "base-pipeline.json"))
    n_docs = 0
    for f in docs:
        doc = json.load(open(f))
        kind = kind_of(doc)
        if kind is None:
            continue
        n_docs += 1
        err = first_error(validators[kind], doc)
        print("%s %s (%s)%s" % ("ok  " if err is None else "FAIL", os.path.relpath(f, src), kind,
                               "" if err is None else "\n   " + err))
        failed += err is not None
    if n_docs < 20:
        print("FAIL: only %d shipped and test documents" % n_docs)
        failed += 1
    # a "$schema" key is accepted by both loaders and both schemas
    for kind, f in (("pipeline", "pipelines/bump-in-wire.json"),
                    ("profile", "profiles/flap.json")):
        doc = json.load(open(os.path.join(src, f)))
        doc = dict([("$schema", "./%s.schema.json" % kind)] + list(doc.items()))
        p = os.path.join(tmp, "with-schema-" + os.path.basename(f))
        json.dump(doc, open(p, "w"))
        args = ["--pipeline", p] if kind == "pipeline" else \
            ["--pipeline", os.path.join(src, "pipelines", "bump-in-wire.json"), "--profile", p]
        r = subprocess.run([rocemu, "check"] + args, capture_output=True, text=True, timeout=60)
        ok = r.returncode == 0 and validators[kind].is_valid(doc)
        print("%s %s with \"$schema\"%s" % ("ok  " if ok else "FAIL", f,
                                             "" if ok else ": " + r.stderr.strip()))
        failed += not ok

    # 3. the invalid corpus
    here = os.path.join(src, "tests", "unit", "invalid")
    cases = sorted(d for d in os.listdir(here) if os.path.isdir(os.path.join(here, d)))
    refused = accepted_listed = 0
    for case in cases:
        d = os.path.join(here, case)
        kind = "pipeline"
        if os.path.exists(os.path.join(d, "kind")):
            kind = open(os.path.join(d, "kind")).read().strip()
        try:
            doc = json.load(open(os.path.join(d, "input.json")))
            err = first_error(validators[kind], doc)
        except ValueError as e:
            err = None  # a syntax error: nothing for a schema to see
        if case in SCHEMA_CANNOT:
            if err is not None:
                print("FAIL %s: listed in SCHEMA_CANNOT but the schema refuses it (%s): "
                      "take it off the list" % (case, err))
                failed += 1
            else:
                accepted_listed += 1
        elif err is None:
            print("FAIL %s: the loader refuses it (%s) but the %s schema accepts it; teach "
                  "the key table, or list it in SCHEMA_CANNOT with why" %
                  (case, open(os.path.join(d, "error")).readline().strip(), kind))
            failed += 1
        else:
            refused += 1
    for case in sorted(SCHEMA_CANNOT - set(cases)):
        print("FAIL %s: in SCHEMA_CANNOT but not a case of tests/unit/invalid" % case)
        failed += 1
    print("%d invalid cases: %d refused by the schema too, %d listed as beyond a schema" %
          (len(cases), refused, accepted_listed))

    # 4. the fuzz corpus: loader accepts => schema accepts
    n_ok = 0
    for f in sorted(glob.glob(os.path.join(src, "tests", "fuzz", "corpus", "pipeline", "*"))):
        try:
            doc = json.loads(open(f, "rb").read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if validators["pipeline"].is_valid(doc):
            continue
        r = subprocess.run([rocemu, "check", "--pipeline", f], capture_output=True, text=True,
                           timeout=60)
        if r.returncode == 0:
            print("FAIL %s: the loader accepts it but the schema refuses it: %s" %
                  (os.path.relpath(f, src), first_error(validators["pipeline"], doc)))
            failed += 1
        else:
            n_ok += 1
    print("fuzz corpus: %d documents the schema refuses, all refused by the loader too" % n_ok)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
