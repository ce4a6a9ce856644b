#!/usr/bin/env python3
"""Check that README.md and docs/*.md name only files that exist.

usage: check_links.py REPO_ROOT      check the tree; exit 1 if anything is missing
       check_links.py --self-test    prove the check catches a broken link, path and anchor

What is checked, in README.md and every docs/*.md (fenced ``` blocks are skipped):

1. Markdown links and images, [text](TARGET) and ![alt](TARGET). TARGET is a path relative to
   the file that holds the link. Targets with a scheme (http:, https:, mailto:) are not
   checked. A TARGET#ANCHOR (or a bare #ANCHOR, meaning the same file) must also match a
   heading of the target .md file, slugged as GitHub does: lower case, punctuation other
   than '-' and '_' removed, each space made a '-', '-1', '-2', ... added to repeats.
2. Repository paths in inline code (`...`). The rule: a word inside backticks is a
   repository path when it starts with one of the repository's top-level directories,
   TOP_DIRS below, followed by '/'. Such a path is relative to the repository root and must
   exist (a file or a directory; a path with '*' must match at least one file). Anything
   else in backticks is not a repository path: user outputs such as `out.pcapng`,
   `/tmp/x`, `build/app/rocemu/rocemu` (build/ is made by the build, not in the tree),
   `out/report.txt`, options and commands. A path in another project's tree (DPDK's
   app/test, say) must not be written in backticks with one of these prefixes.

Each missing one is printed as FILE:LINE: missing PATH (PATH#ANCHOR for a missing heading).
"""
import glob
import os
import re
import shutil
import sys
import tempfile

# The top-level directories of the tree (build/ is not one: it is made by meson).
TOP_DIRS = ('app', 'docs', 'lib', 'nodes', 'pipelines', 'profiles', 'scripts', 'tests', '.ci')

LINK_RE = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
CODE_RE = re.compile(r'(`+)(.+?)\1')
PATH_RE = re.compile(r'(?<![\w./-])((?:' + '|'.join(re.escape(d) for d in TOP_DIRS) +
                     r')/[\w./*+-]*)')
SCHEME_RE = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def doc_files(root):
    files = [os.path.join(root, 'README.md')]
    files += sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
    return [f for f in files if os.path.isfile(f)]


def lines_outside_fences(path):
    """(line number, text) of every line not inside a fenced code block."""
    fence = None
    with open(path, encoding='utf-8') as f:
        for no, line in enumerate(f, 1):
            m = re.match(r'\s*(```+|~~~+)', line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield no, line.rstrip('\n')


def slug(text):
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)   # links: their text
    text = text.replace('`', '').strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen, out = {}, set()
        for _, line in lines_outside_fences(path):
            m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else '%s-%d' % (s, n))
        _anchor_cache[path] = out
    return _anchor_cache[path]


def path_exists(root, p):
    full = os.path.join(root, p)
    if '*' in p:
        return bool(glob.glob(full))
    return os.path.exists(full)


def check(root):
    """Return the list of 'FILE:LINE: missing PATH' lines."""
    root = os.path.abspath(root)
    bad = []
    for doc in doc_files(root):
        rel = os.path.relpath(doc, root)
        for no, line in lines_outside_fences(doc):
            # 1. links, relative to the file
            for m in LINK_RE.finditer(line):
                target = m.group(1)
                if SCHEME_RE.match(target):
                    continue
                path, _, anchor = target.partition('#')
                full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                if not os.path.exists(full):
                    bad.append('%s:%d: missing %s' % (rel, no, target))
                elif anchor and full.endswith('.md') and anchor not in anchors(full):
                    bad.append('%s:%d: missing %s' % (rel, no, target))
            # 2. repository paths in inline code, relative to the root
            for m in CODE_RE.finditer(line):
                for pm in PATH_RE.finditer(m.group(2)):
                    p = pm.group(1).rstrip('.,;:')
                    if not path_exists(root, p):
                        bad.append('%s:%d: missing %s' % (rel, no, p))
    return bad


def self_test():
    tmp = tempfile.mkdtemp(prefix='check_links.')
    try:
        os.makedirs(os.path.join(tmp, 'docs'))
        os.makedirs(os.path.join(tmp, 'scripts'))
        open(os.path.join(tmp, 'scripts', 'test.sh'), 'w').close()
        with open(os.path.join(tmp, 'docs', 'a.md'), 'w') as f:
            f.write('# A page\n\n## Two `words` here\n')
        with open(os.path.join(tmp, 'README.md'), 'w') as f:
            f.write('# R\n'
                    '[ok](docs/a.md) [ok](docs/a.md#two-words-here) [ok](#r) `scripts/test.sh`\n'
                    '`out.pcapng` `/tmp/x` `build/app/rocemu/rocemu` [web](https://x.org/y)\n'
                    '```\n[not checked](nothing.md) `scripts/none.sh`\n```\n'
                    '[bad](docs/b.md)\n'
                    '[bad](docs/a.md#no-such-heading)\n'
                    '`scripts/missing.sh`\n')
        got = check(tmp)
        want = ['README.md:7: missing docs/b.md',
                'README.md:8: missing docs/a.md#no-such-heading',
                'README.md:9: missing scripts/missing.sh']
        if got != want:
            print('self-test FAILED:\n  got  %s\n  want %s' % (got, want))
            return 1
        print('self-test ok: %d broken ones found, none by mistake' % len(want))
        return 0
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if len(argv) == 2 and argv[1] == '--self-test':
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    bad = check(argv[1])
    for b in bad:
        print(b)
    n = len(doc_files(os.path.abspath(argv[1])))
    print('%d file(s) checked, %d missing' % (n, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
