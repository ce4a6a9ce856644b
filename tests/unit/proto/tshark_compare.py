#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare roce_parse() (through roce-dump) with tshark on every RoCEv2 frame of a pcap.

Usage: tshark_compare.py ROCE_DUMP FILE.pcap [--expect N] [--no-expert-errors]

Runs `tshark -T fields` with the columns below on the frames to UDP port 4791, runs
`roce-dump FILE.pcap` (same columns, from our parser), and fails on any difference, naming the
frame and the column. --expect N also requires exactly N RoCEv2 frames. --no-expert-errors
fails if tshark flags any frame as malformed or with an expert error. Exits 77 (meson: skipped)
if tshark is not installed.
"""
import shutil
import subprocess
import sys

FIELDS = [
    'frame.number', 'vlan.id', 'vlan.priority',
    'ip.src', 'ip.dst', 'ip.dsfield.dscp', 'ip.dsfield.ecn', 'ip.ttl',
    'ipv6.src', 'ipv6.dst', 'ipv6.tclass.dscp', 'ipv6.tclass.ecn', 'ipv6.hlim',
    'udp.srcport', 'udp.dstport',
    'infiniband.bth.opcode', 'infiniband.bth.se', 'infiniband.bth.m', 'infiniband.bth.padcnt',
    'infiniband.bth.tver', 'infiniband.bth.p_key', 'infiniband.bth.destqp', 'infiniband.bth.a',
    'infiniband.bth.psn',
    'infiniband.reth.va', 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
    'infiniband.aeth.syndrome', 'infiniband.aeth.msn', 'infiniband.immdt',
    'infiniband.deth.srcqp', 'infiniband.invariant.crc',
]
BOOLS = {'infiniband.bth.se', 'infiniband.bth.m', 'infiniband.bth.a'}
# tftp: the Huawei NIC's sport 69; rpcordma: its heuristic claims small SEND payloads.
TSHARK_ARGS = ['--disable-protocol', 'tftp', '--disable-protocol', 'rpcordma']


def norm(field, value):
    v = value.strip()
    if field in BOOLS:
        return {'True': '1', 'False': '0'}.get(v, v)
    if v.startswith('0x') and field not in ('infiniband.bth.destqp',):
        # compare hex numbers by value: tshark's width differs between versions
        try:
            return hex(int(v, 16))
        except ValueError:
            return v
    return v.lower()


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    args = sys.argv[1:]
    expect = None
    expert = False
    if '--expect' in args:
        i = args.index('--expect')
        expect = int(args[i + 1])
        del args[i:i + 2]
    if '--no-expert-errors' in args:
        expert = True
        args.remove('--no-expert-errors')
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dump, pcap = args
    tshark = shutil.which('tshark')
    if tshark is None:
        print('SKIP: tshark not installed: cannot cross-check roce_parse against Wireshark '
              '(apt-get install tshark)')
        return 77

    cmd = [tshark, '-r', pcap, *TSHARK_ARGS, '-Y', 'udp.dstport == 4791',
           '-T', 'fields', '-E', 'occurrence=f']
    for f in FIELDS:
        cmd += ['-e', f]
    rc, out, err = run(cmd)
    if rc != 0:
        print('FAIL: tshark failed: ' + err, file=sys.stderr)
        return 1
    theirs = [ln.split('\t') for ln in out.splitlines()]

    rc, out, err = run([dump, pcap])
    sys.stderr.write(err)
    if rc != 0:
        print('FAIL: roce-dump reported bad frames (exit %d)' % rc, file=sys.stderr)
        return 1
    ours = [ln.split('\t') for ln in out.splitlines()]

    failures = 0
    if len(theirs) != len(ours):
        print('FAIL: tshark sees %d RoCEv2 frames, roce_parse %d' % (len(theirs), len(ours)))
        failures += 1
    if expect is not None and len(ours) != expect:
        print('FAIL: expected %d RoCEv2 frames, got %d' % (expect, len(ours)))
        failures += 1
    for t, o in zip(theirs, ours):
        if len(t) != len(FIELDS) or len(o) != len(FIELDS):
            print('FAIL: frame %s: %d/%d columns' % (t[0], len(t), len(o)))
            failures += 1
            continue
        for f, tv, ov in zip(FIELDS, t, o):
            if norm(f, tv) != norm(f, ov):
                print('FAIL: frame %s: %s: tshark %r, roce_parse %r' % (t[0], f, tv, ov))
                failures += 1

    if expert:
        # Wireshark checks IPv4 and UDP checksums only when asked. It calls a zero UDP
        # checksum over IPv6 illegal (RFC 8200), but RoCEv2 NICs send exactly that (the ICRC
        # protects the packet; IBA annex A17): that one message is allowed, on RoCE frames only.
        cmd = [tshark, '-r', pcap, *TSHARK_ARGS,
               '-o', 'ip.check_checksum:TRUE', '-o', 'udp.check_checksum:TRUE', '-Y',
               '(_ws.malformed || _ws.expert.severity >= "Error") && '
               '!(ipv6 && udp.dstport == 4791 && udp.checksum == 0 && '
               'count(_ws.expert) == 1 && _ws.expert.message == "Illegal checksum value (0)")',
               '-T', 'fields', '-e', 'frame.number', '-e', '_ws.expert.message']
        rc, out, err = run(cmd)
        if rc != 0:
            print('FAIL: tshark expert query failed: ' + err, file=sys.stderr)
            return 1
        for ln in out.splitlines():
            print('FAIL: tshark flags frame: ' + ln)
            failures += 1

    n_fields = len(ours) * len(FIELDS)
    if failures:
        print('%s: %d mismatches' % (pcap, failures))
        return 1
    print('%s: %d RoCEv2 frames, %d fields agree with tshark' % (pcap, len(ours), n_fields))
    return 0


if __name__ == '__main__':
    sys.exit(main())
