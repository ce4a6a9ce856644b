#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of tests/fuzz/corpus/<target>/ from pcap files.

Usage: gen_corpus.py OUT_DIR FILE.pcap...
  tests/fuzz/gen_corpus.py tests/fuzz/corpus tests/unit/proto/data/real/*.pcap \\
      BUILD/tests/unit/proto/builders.pcap
Seeds are named by content hash, so re-running adds nothing twice. Frames that are the same
apart from their payload (same length, same first 64 bytes pattern) are kept once.
"""
import hashlib
import os
import random
import struct
import sys


def read_pcap(path):
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack_from('<I', data, 0)[0]
    endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off, frames = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack_from(endian + 'I', data, off + 8)[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def write(outdir, target, blob):
    d = os.path.join(outdir, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(blob).hexdigest()[:16]
    with open(os.path.join(d, name), 'wb') as f:
        f.write(blob)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    outdir, pcaps = sys.argv[1], sys.argv[2:]
    rng = random.Random(4791)
    frames, seen = [], set()
    for p in pcaps:
        for fr in read_pcap(p):
            # one frame per (length, 12-byte window at the BTH position) shape
            key = (len(fr), fr[12:14], fr[23:24], fr[42:43] if len(fr) > 42 else b'')
            if key in seen:
                continue
            seen.add(key)
            frames.append(fr)
    for fr in frames:
        write(outdir, 'parse', fr)
        write(outdir, 'rewrite', fr + bytes(rng.randrange(256) for _ in range(8)))
    # truncated and length-lying variants of a few frames
    for fr in frames[:12]:
        for cut in sorted({14, 18, 30, 34, 42, 46, 54, len(fr) - 5, len(fr) - 1}):
            if 0 < cut < len(fr):
                write(outdir, 'parse', fr[:cut])
    # sequences for the pairing table: 2-byte length, 1-byte time step, frame
    for n in range(8):
        seq = b''
        for fr in rng.sample(frames, min(len(frames), 6 + n)):
            seq += struct.pack('>HB', len(fr), rng.randrange(256)) + fr
        write(outdir, 'qpmap', seq)
    # builder parameters: raw bytes of struct roce_hdr_params (+ payload length, cap)
    for n in range(16):
        blob = bytearray(rng.randrange(256) for _ in range(256 + 64 * n))
        blob[0:12] = b'\x02' + bytes(11)
        write(outdir, 'build', bytes(blob))
    return 0


if __name__ == '__main__':
    sys.exit(main())
