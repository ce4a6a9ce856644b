#!/usr/bin/env python3
"""The soak's driver and sampler (tests/soak/soak.sh runs it while rocemu and the rocegen loop
run). For SECONDS it:
  - samples every stats interval: each time rocemu rewrites its --prometheus file (every
    --stats-interval), the file's conservation gauge, drops by reason, mbufs in use, and
    rocemu's resident memory (VmRSS and RssShmem in /proc/PID/status) at that moment;
  - every PERIOD s reloads a profile, in turn: the incast profile over telemetry, the flap
    profile by SIGHUP, the incast profile by SIGHUP, the flap profile over telemetry (both
    through one file, CUR: telemetry names it, so SIGHUP then reloads it); each reload must
    be taken ("loaded" over telemetry; a new "profile reloaded from" line after SIGHUP);
  - a second after each reload queries every /rocemu/* telemetry command (the list from "/"
    plus /rocemu/tm,PORT for each port and /rocemu/profile) from two clients at once; every
    answer must be JSON with the command's key and no "error";
  - looks after the file system of the file rocemu writes (Disk, below): until FILL_AT it
    keeps 4-12 MB free, from FILL_AT no more than FILL_LEAVE_KB, so the file's next writes
    meet ENOSPC; it notes when no page is left (rocemu names the failed file only at exit,
    in one line, which soak.sh checks).
It writes what it saw to OUT (JSON) for soak.sh's checks and exits 0, or 1 with "FAIL: ..."
when the driving itself failed (a reload not taken, a telemetry answer wrong, rocemu gone).
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def tel(sock_path, cmd, timeout=10.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(sock_path)
    try:
        json.loads(s.recv(16384).decode())  # the greeting
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode())
    finally:
        s.close()


def rss_kb(pid):
    """VmRSS and its parts (kB): RssShmem is DPDK's memory (memfd-backed with --no-huge:
    the packet pool and the rings), RssAnon the C heap, RssFile the mapped libraries."""
    r = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k = line.split(":")[0]
            if k in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                r[k] = int(line.split()[1])
    return r


SAMPLE = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$')


def parse_prom(text):
    """The samples the soak reads: drops by reason, conservation, mbufs."""
    d = {"drops": {}}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m is None:
            continue
        name, labels, v = m.group(1), m.group(2) or "", float(m.group(3))
        if name == "rocemu_drops_total":
            d["drops"][re.search(r'reason="([^"]*)"', labels).group(1)] = int(v)
        elif name in ("rocemu_conservation_unaccounted_packets",
                      "rocemu_conservation_held_packets", "rocemu_mbufs_in_use",
                      "rocemu_mbufs_total"):
            d[name[len("rocemu_"):]] = int(v)
        elif name == "rocemu_conservation_packets_total":
            d["cons_" + re.search(r'term="([^"]*)"', labels).group(1)] = int(v)
    return d


class Sampler(threading.Thread):
    """Reads the --prometheus file each time rocemu replaced it (a new inode: it is written
    atomically, as a temporary file renamed over it)."""

    def __init__(self, a, t0):
        super().__init__(daemon=True)
        self.a, self.t0 = a, t0
        self.samples, self.errors = [], []
        self.stop = threading.Event()

    def run(self):
        last = None
        while not self.stop.is_set():
            try:
                st = os.stat(self.a.prom)
                key = (st.st_ino, st.st_mtime_ns)
                if key != last:
                    last = key
                    with open(self.a.prom) as f:
                        text = f.read()
                    rss = rss_kb(self.a.pid)
                    d = parse_prom(text)
                    if "conservation_unaccounted_packets" not in d or "mbufs_in_use" not in d:
                        self.errors.append("%.1f s: the prometheus file lacks the "
                                           "conservation or mbufs gauges" % (time.time() - self.t0))
                    else:
                        d["t"] = round(time.time() - self.t0, 3)
                        d["rss_kb"] = rss["VmRSS"]
                        d["shm_kb"] = rss["RssShmem"]
                        d["heap_kb"] = rss["VmRSS"] - rss["RssShmem"]
                        self.samples.append(d)
            except FileNotFoundError:
                pass
            except (OSError, ValueError) as e:
                if not os.path.exists("/proc/%d" % self.a.pid):
                    self.errors.append("rocemu (pid %d) is gone: %s" % (self.a.pid, e))
                    return
            self.stop.wait(0.1)


def count_reloaded(path):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if line.startswith("rocemu: profile reloaded from"))


SLOW = "a worker did not answer in 1 s"


def query_all(a, cmds, n_ok, errs, slow):
    """Every command once; rocemu's answer that a worker did not take its snapshot within
    1 s (descheduled on this shared 2-CPU machine) is counted in SLOW, not an error."""
    for c in cmds:
        try:
            r = tel(a.sock, c)
        except (OSError, ValueError) as e:
            errs.append("%s: %s" % (c, e))
            continue
        key = c.split(",")[0]
        if key not in r or r[key] is None:
            errs.append("%s: answer without %s: %.200s" % (c, key, json.dumps(r)))
        elif isinstance(r[key], dict) and r[key].get("error") == SLOW:
            slow.append(c)
        elif isinstance(r[key], dict) and "error" in r[key]:
            errs.append("%s: %s" % (c, r[key]["error"]))
        else:
            n_ok.append(c)


def disk_full(dirpath):
    """The capture took the last free pages (rocemu says that its write failed only at
    exit, in its one line)."""
    st = os.statvfs(dirpath)
    return st.f_bavail * st.f_frsize < 8192


def free_bytes(dirpath):
    st = os.statvfs(dirpath)
    return st.f_bavail * st.f_frsize


def fill(dirpath, leave_kb):
    """Fill the file system of DIRPATH but LEAVE_KB (growing the filler file): the bytes
    written."""
    want = max(0, free_bytes(dirpath) - leave_kb * 1024)
    chunk = b"\0" * (1 << 20)
    done = 0
    with open(os.path.join(dirpath, "filler"), "ab") as f:
        try:
            while done < want:
                n = min(len(chunk), want - done)
                f.write(chunk[:n])
                done += n
            f.flush()
        except OSError:
            pass
    return done


class Disk(threading.Thread):
    """The file system of the file rocemu writes, from the start (prefilled but 960 KB, so
    that the file, opened then, could not reserve blocks ahead: lib/base/emu_out.c reserves a
    megabyte or more and then tries no more) to the end, every 10 ms:
      - until FILL_AT, once the file's first bytes are written (its reservation refused),
        keeps 4-12 MB free by shrinking the filler as the file grows;
      - from FILL_AT, keeps no more than LEAVE_KB free by growing the filler (again after a
        rotation frees a file's space), so the file's next write meets ENOSPC."""

    def __init__(self, a, t0):
        super().__init__(daemon=True)
        self.a, self.t0 = a, t0
        self.stop = threading.Event()
        self.info = None
        self.errors = []
        self.filler = os.path.join(a.fill_dir, "filler")

    def written(self):
        for n in os.listdir(self.a.fill_dir):
            if ".rocemu-" in n and os.path.getsize(os.path.join(self.a.fill_dir, n)) > 0:
                return True
        return False

    def run(self):
        armed = False
        while not self.stop.is_set():
            t = time.time() - self.t0
            free = free_bytes(self.a.fill_dir)
            if t < self.a.fill_at:
                if not armed:
                    armed = self.written()
                elif free < 4 << 20:
                    size = os.path.getsize(self.filler)
                    os.truncate(self.filler, max(0, size - ((8 << 20) - free)))
                    if size < (8 << 20) - free:
                        self.errors.append("%.1f s: the filler is used up: the file grew "
                                           "past the tmpfs" % t)
            else:
                if self.info is None:
                    self.info = {"t": round(t, 3), "filler_bytes": 0, "failed_at": None}
                if free > self.a.fill_leave_kb * 1024 + 65536 or self.info["filler_bytes"] == 0:
                    fill(self.a.fill_dir, self.a.fill_leave_kb)
                    self.info["filler_bytes"] = os.path.getsize(self.filler)
                if self.info["failed_at"] is None and disk_full(self.a.fill_dir):
                    self.info["failed_at"] = round(t, 3)
            # every 2 ms until the file's first bytes are seen: the writer flushes 256 KB at a
            # time, and 960 KB are free (a capture at 512 KB met the full disk in CI's run
            # before a 10 ms loop on a busy machine had made room)
            self.stop.wait(0.002 if not armed and t < self.a.fill_at else 0.01)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "prefill":
        # before rocemu starts: fill DIR but LEAVE_KB
        fill(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--sock", required=True)
    ap.add_argument("--cur", required=True, help="the profile file rocemu runs (--profile)")
    ap.add_argument("--incast", required=True)
    ap.add_argument("--flap", required=True)
    ap.add_argument("--flap-outages", required=True,
                    help="PORT:AT:DUR,... the outages the flap profile makes")
    ap.add_argument("--prom", required=True)
    ap.add_argument("--log", required=True, help="rocemu's output")
    ap.add_argument("--fill-dir", required=True)
    ap.add_argument("--fill-at", type=float, required=True)
    ap.add_argument("--fill-leave-kb", type=int, default=512)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--period", type=float, default=4.0)
    ap.add_argument("--quiet-end", type=float, default=4.0,
                    help="no reload in the last S seconds: the last profile ends first")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    t0 = time.time()
    sampler = Sampler(a, t0)
    sampler.start()
    disk = Disk(a, t0)
    disk.start()
    listing = tel(a.sock, "/")["/"]
    ports = [p for p in ("p0", "p1")]
    cmds = sorted(c for c in listing if c.startswith("/rocemu/"))
    if len(cmds) < 9:
        fail("telemetry lists only %s" % cmds)
    cmds += ["/rocemu/tm," + p for p in ports]
    reloads, outages, queries, qerrs, slow = [], [], 0, [], []
    outage_spec = [(p, float(at), float(dur)) for p, at, dur in
                   (x.split(":") for x in a.flap_outages.split(","))]
    k = 0
    next_reload = 1.0
    while True:
        t = time.time() - t0
        if t >= a.seconds:
            break
        if not os.path.exists("/proc/%d" % a.pid):
            fail("rocemu (pid %d) exited during the soak" % a.pid)
        if t >= next_reload and t < a.seconds - a.quiet_end:
            kind = ("incast", "flap", "incast", "flap")[k % 4]
            how = ("telemetry", "SIGHUP", "SIGHUP", "telemetry")[k % 4]
            src = a.incast if kind == "incast" else a.flap
            tmp = a.cur + ".new"
            shutil.copyfile(src, tmp)
            os.rename(tmp, a.cur)
            if how == "telemetry":
                r = tel(a.sock, "/rocemu/profile," + a.cur)["/rocemu/profile"]
                if r.get("result") != "loaded":
                    fail("telemetry reload %d (%s) not loaded: %s" % (k, kind, r))
                t_load = time.time() - t0
            else:
                n = count_reloaded(a.log)
                t_load = time.time() - t0
                os.kill(a.pid, signal.SIGHUP)
                for _ in range(100):
                    if count_reloaded(a.log) > n:
                        break
                    time.sleep(0.05)
                else:
                    fail("SIGHUP reload %d (%s): no 'profile reloaded' line within 5 s" % (k, kind))
            reloads.append({"t": round(t_load, 3), "kind": kind, "how": how})
            if kind == "flap":
                for p, at, dur in outage_spec:
                    outages.append({"port": p, "from": round(t_load + at, 3),
                                    "to": round(t_load + at + dur, 3)})
            time.sleep(1.0)
            # two telemetry clients at once, every command
            ok_a, ok_b, errs = [], [], []
            ta = threading.Thread(target=query_all,
                                  args=(a, cmds + ["/rocemu/profile"], ok_a, errs, slow))
            tb = threading.Thread(target=query_all,
                                  args=(a, cmds + ["/rocemu/profile"], ok_b, errs, slow))
            ta.start(); tb.start(); ta.join(); tb.join()
            queries += len(ok_a) + len(ok_b)
            qerrs += errs
            if errs:
                fail("telemetry queries after reload %d: %s" % (k, "; ".join(errs[:5])))
            k += 1
            next_reload = t + a.period
        time.sleep(0.05)
    sampler.stop.set()
    sampler.join(2)
    disk.stop.set()
    disk.join(2)
    fill_info = disk.info
    json.dump({"seconds": a.seconds, "samples": sampler.samples,
               "sampler_errors": sampler.errors + disk.errors,
               "reloads": reloads, "outages": outages, "queries": queries, "slow": slow,
               "commands": cmds + ["/rocemu/profile"], "fill": fill_info},
              open(a.out, "w"), indent=1)
    print("driver: %.0f s, %d reloads (%d by SIGHUP, %d over telemetry), %d link outages, "
          "%d telemetry queries from two clients (%d more answered '%s'), %d stats intervals "
          "sampled, disk filled at %s s"
          % (a.seconds, len(reloads), sum(r["how"] == "SIGHUP" for r in reloads),
             sum(r["how"] == "telemetry" for r in reloads), len(outages), queries, len(slow), SLOW,
                    len(sampler.samples), fill_info and fill_info["t"]), flush=True)


if __name__ == "__main__":
    main()
