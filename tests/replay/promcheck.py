#!/usr/bin/env python3
"""A checker of the Prometheus text exposition format (version 0.0.4), written from its
specification (prometheus.io/docs/instrumenting/exposition_formats): every line is a
'# HELP name text', a '# TYPE name counter|gauge|histogram|summary|untyped', another comment,
or a sample 'name{label="value",...} value [timestamp]'; names match
[a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* (not starting with __), label
values are double-quoted with \\\\, \\" and \\n escapes; a family's TYPE comes once and before
its samples, its samples are together; no series (name + labels) twice; values are floats
(NaN, +Inf, -Inf allowed); the file ends with a newline. Our own conventions on top: every
counter's name ends in _total, every family has HELP and TYPE.

check(text) returns (errors, samples) with samples {(name, frozenset(labels)): value}."""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LNAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
LVALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(r"^(%s)(\{(?:%s=%s(?:,%s=%s)*,?)?\})? (\S+)(?: (-?\d+))?$" %
                    (NAME, LNAME, LVALUE, LNAME, LVALUE))
LABEL = re.compile(r"(%s)=(%s)" % (LNAME, LVALUE))


def check(text):
    errs, samples = [], {}
    types, helps, done, current = {}, set(), set(), None
    if not text.endswith("\n"):
        errs.append("does not end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.fullmatch(NAME, name):
                    errs.append("%d: bad metric name %r" % (n, name))
                if parts[1] == "TYPE":
                    t = parts[3] if len(parts) > 3 else ""
                    if t not in ("counter", "gauge", "histogram", "summary", "untyped"):
                        errs.append("%d: bad type %r" % (n, t))
                    if name in types:
                        errs.append("%d: second TYPE for %s" % (n, name))
                    if name in done:
                        errs.append("%d: TYPE for %s after its samples" % (n, name))
                    types[name] = t
                    if t == "counter" and not name.endswith("_total"):
                        errs.append("%d: counter %s does not end in _total" % (n, name))
                else:
                    helps.add(name)
            continue
        if not line.strip():
            errs.append("%d: empty line" % n)
            continue
        m = SAMPLE.match(line)
        if m is None:
            errs.append("%d: not a sample line: %r" % (n, line))
            continue
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        if current != name:
            if name in done:
                errs.append("%d: samples of %s are not together" % (n, name))
            if current is not None:
                done.add(current)
            current = name
        if name not in types:
            errs.append("%d: %s has no TYPE before it" % (n, name))
        if name not in helps:
            errs.append("%d: %s has no HELP" % (n, name))
        lab = LABEL.findall(labels)
        keys = [k for k, _ in lab]
        if len(set(keys)) != len(keys) or any(k.startswith("__") for k in keys):
            errs.append("%d: bad or repeated label names %s" % (n, keys))
        try:
            v = float(value)
        except ValueError:
            errs.append("%d: value %r is not a float" % (n, value))
            continue
        key = (name, frozenset((k, bytes(x[1:-1], "utf-8").decode("unicode_escape"))
                               for k, x in lab))
        if key in samples:
            errs.append("%d: series %s twice" % (n, line))
        samples[key] = v
    return errs, samples


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


if __name__ == "__main__":
    e, s = check(open(sys.argv[1]).read())
    for x in e:
        print(x)
    print("%d samples, %d errors" % (len(s), len(e)))
    sys.exit(1 if e else 0)
