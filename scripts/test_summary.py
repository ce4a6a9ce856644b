#!/usr/bin/env python3
"""The closing line of scripts/test.sh, and the rules that make it honest.

usage: test_summary.py TESTLOG.json LIST.txt CI SETUP_LOG    (what scripts/test.sh runs)
       test_summary.py --self-test                         (what .ci/run runs first)

TESTLOG.json is meson's meson-logs/testlog.json (one JSON object per line), LIST.txt the
output of `meson test --list` (one "project:suite / name" per line), CI "true" or not,
SETUP_LOG meson's meson-logs/meson-log.txt. Prints a line per failed or skipped test, then
exactly one closing line "N passed, N failed" (", N skipped" when some were); exits 1 when
anything failed or nothing passed.

Rules:
  - every registered test must come back with a result: a missing one counts as failed;
  - a test that exits 77 is SKIP; a test that prints a line starting "SKIP (part):" passed
    with a part not tested. Outside CI both are listed loudly (the skipped ones are counted in
    ", N skipped"); under CI=true both count as failed;
  - under CI=true, a configuration that left tests out (a meson WARNING saying "NOT built")
    and a suite among unit, fuzz, replay, e2e without a test are failures too.
"""
import json
import os
import re
import sys
import tempfile

SUITES = ("unit", "fuzz", "replay", "e2e", "workers", "soak")


def summarize(results, registered, ci, setup_lines):
    """Returns (passed, failed, skipped, lines): lines to print before the closing line."""
    passed = failed = skipped = 0
    lines = []
    seen = set()
    for r in results:
        name, res = r["name"], r.get("result")
        seen.add(name)
        out = (r.get("stdout") or "").splitlines()
        parts = [l for l in out if l.startswith("SKIP (part)")]
        if res in ("OK", "EXPECTEDFAIL") and parts and ci:
            failed += 1
            lines.append("FAILED: %s (CI=true: a skipped part is a failure: %s)" % (name, parts[0]))
        elif res in ("OK", "EXPECTEDFAIL"):
            passed += 1
            for p in parts:
                lines.append("SKIPPED PART: %s: %s" % (name, p))
        elif res == "SKIP" and ci:
            failed += 1
            why = [l for l in out if l.startswith("SKIP")]
            lines.append("FAILED: %s (CI=true: skipped: %s)" % (name, why[0] if why else "exit 77"))
        elif res == "SKIP":
            skipped += 1
            lines.append("SKIPPED: " + name)
        else:
            failed += 1
            lines.append("FAILED: %s (%s)" % (name, res))
    # both name a test "rocemu:unit / proto-crc"
    missing = [n for n in registered if n not in seen]
    for n in missing:
        failed += 1
        lines.append("FAILED: %s (registered, but no result came back)" % n)
    if len(results) < len(registered):
        lines.append("FAILED: %d results for %d registered tests" % (len(results), len(registered)))
    if ci:
        suites = {re.sub(r"^[^:]*:", "", l.split(" / ")[0]) for l in registered}
        for s in SUITES:
            if s not in suites:
                failed += 1
                lines.append("FAILED: CI=true: no test registered in suite %s" % s)
        for l in setup_lines:
            if "WARNING" in l and "NOT built" in l:
                failed += 1
                lines.append("FAILED: CI=true: configuration left tests out: " + l.strip())
    return passed, failed, skipped, lines


def closing(passed, failed, skipped):
    return "%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else "")


def main(argv):
    log, listed, ci, setup_log = argv[1], argv[2], argv[3] == "true", argv[4]
    registered = [l.strip() for l in open(listed) if l.strip()]
    results = []
    if os.path.exists(log):
        with open(log) as f:
            results = [json.loads(l) for l in f if l.strip()]
    setup = open(setup_log, errors="replace").readlines() if os.path.exists(setup_log) else []
    passed, failed, skipped, lines = summarize(results, registered, ci, setup)
    for l in lines:
        print(l)
    print(closing(passed, failed, skipped))
    return 1 if failed or passed == 0 else 0


def self_test():
    """Each case: a synthetic testlog and list through main(), the closing line and exit
    status it must give."""
    reg = ["rocemu:%s / t%d" % (s, i) for i, s in enumerate(SUITES)]  # one test a suite
    n = len(reg)

    def ok(name, out="", res="OK"):
        return {"name": name, "result": res, "stdout": out}
    allok = [ok(x) for x in reg]
    head, last = allok[:-1], reg[-1]
    cases = [
        ("all pass", allok, reg, False, [], "%d passed, 0 failed" % n, 0),
        ("all pass, CI", allok, reg, True, [], "%d passed, 0 failed" % n, 0),
        ("a result missing", head, reg, False, [], "%d passed, 1 failed" % (n - 1), 1),
        ("no result at all", [], reg, False, [], "0 passed, %d failed" % n, 1),
        ("a failure", head + [ok(last, res="FAIL")], reg, False, [],
         "%d passed, 1 failed" % (n - 1), 1),
        ("a timeout", head + [ok(last, res="TIMEOUT")], reg, False, [],
         "%d passed, 1 failed" % (n - 1), 1),
        ("a skip", head + [ok(last, "SKIP: no netns; NOT TESTED", "SKIP")], reg, False,
         [], "%d passed, 0 failed, 1 skipped" % (n - 1), 0),
        ("a skip, CI", head + [ok(last, "SKIP: no netns; NOT TESTED", "SKIP")], reg,
         True, [], "%d passed, 1 failed" % (n - 1), 1),
        ("a skipped part", head + [ok(last, "ok: x\nSKIP (part): no tshark\nPASS")], reg,
         False, [], "%d passed, 0 failed" % n, 0),
        ("a skipped part, CI", head + [ok(last, "ok: x\nSKIP (part): no tshark")], reg,
         True, [], "%d passed, 1 failed" % (n - 1), 1),
        ("tests left out by the configuration, CI", allok, reg, True,
         ["WARNING: cmocka not found: unit tests test_tm/test_switch are NOT built\n"],
         "%d passed, 1 failed" % n, 1),
        ("tests left out by the configuration", allok, reg, False,
         ["WARNING: cmocka not found: unit tests test_tm/test_switch are NOT built\n"],
         "%d passed, 0 failed" % n, 0),
        ("a suite with no test, CI", head, reg[:-1], True, [],
         "%d passed, 1 failed" % (n - 1), 1),
        ("nothing registered, nothing run", [], [], False, [], "0 passed, 0 failed", 1),
    ]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        for what, results, registered, ci, setup, want_line, want_rc in cases:
            paths = [os.path.join(d, n) for n in ("testlog.json", "list", "setup.log")]
            with open(paths[0], "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in results))
            with open(paths[1], "w") as f:
                f.write("".join(l + "\n" for l in registered))
            with open(paths[2], "w") as f:
                f.writelines(setup)
            out_path = os.path.join(d, "out")
            saved = sys.stdout
            with open(out_path, "w") as sys.stdout:
                rc = main(["", paths[0], paths[1], "true" if ci else "false", paths[2]])
            sys.stdout = saved
            got = open(out_path).read().splitlines()
            if got and got[-1] == want_line and rc == want_rc:
                passed += 1
            else:
                failed += 1
                print("FAIL: %s: got %r, exit %d; want %r, exit %d"
                      % (what, got[-1] if got else "", rc, want_line, want_rc))
    print(closing(passed, failed, 0))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv))
