#!/usr/bin/env python3
"""DCQCN validation and fit on synthetic senders (gen_dcqcn): one that follows lib/dcqcn with
known parameters (TRUTH, in NVIDIA's names), one that ignores the CNPs.

    run_dcqcn.py ROCESTAT GEN_DCQCN

- the model-following sender validated against TRUTH: PASS, exit 0;
- the same trace against WRONG (6 parameters changed) with --fit: FAIL, exit 1, the fit
  recovers every TRUTH value within 5% and names the 6 parameters that differ from WRONG;
- TRUTH with one parameter changed (rpg_time_reset, rpg_hai_rate) with --fit: FAIL, and the
  parameter that changed alone explains the trace (fit.explained_by) is that one, within 5%;
- the sender ignoring CNPs against TRUTH: FAIL, and the verdict says it kept its rate;
- the model-following sender pausing 2 ms after a message's last packet (--idle: it had
  nothing to send): PASS, with that time left out (2 ms in one gap, the windows it falls in),
  and the fit from WRONG recovers TRUTH within 5%;
  the same pause inside a message (--stall: it fell behind its rate): FAIL, nothing left out;
- the same pause while the switch paused it with PFC for its priority (--pfc): PASS, the
  pause's windows left out and the gap not a stall; with the PFC frames from its own MAC or
  for another priority: FAIL, a stall;
- one-packet messages at half the model's rate (--slow-msgs): FAIL, with nothing left out as
  idle (each gap follows a message's end, but is the sender's own spacing)."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROCESTAT, GEN = sys.argv[1], sys.argv[2]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(*args, want_rc):
    r = subprocess.run([ROCESTAT, "--quiet", "--json", "-", "--link-gbps", "10"] + list(args),
                       capture_output=True, text=True, timeout=300)
    if r.returncode != want_rc:
        fail("rocestat %s: exit %d, want %d: %s" % (" ".join(args), r.returncode, want_rc,
                                                     r.stderr))
    d = json.loads(r.stdout)
    if len(d["dcqcn"]) != 1:
        fail("expected one validated QP, got %d" % len(d["dcqcn"]))
    return d["dcqcn"][0]


def params(path):
    out = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                k, v = line.split()
                out[k] = float(v)
    return out


tmp = tempfile.mkdtemp(prefix="rocestat-dcqcn-")
atexit.register(shutil.rmtree, tmp, True)  # on every exit, failed or not
cap, truth, wrong = (os.path.join(tmp, x) for x in ("d.pcap", "truth.txt", "wrong.txt"))
ign = os.path.join(tmp, "ignore.pcap")
subprocess.run([GEN, cap, truth, wrong], check=True, capture_output=True)
subprocess.run([GEN, ign, os.path.join(tmp, "t2.txt"), os.path.join(tmp, "w2.txt"),
                "--ignore-cnps"], check=True, capture_output=True)
T = params(truth)

v = run("--dcqcn", truth, cap, want_rc=0)
if v["verdict"] != "PASS" or v["cuts_ok"] != len(v["cuts"]) or v["trajectory_error"] > 0.02:
    fail("truth: %r" % {k: v[k] for k in ("verdict", "why", "trajectory_error", "cuts_ok")})
print("truth: PASS, trajectory error %.4f, %d/%d cuts, recovery %.1f us (model %.1f)" % (
    v["trajectory_error"], v["cuts_ok"], len(v["cuts"]), v["recovery_measured_us"],
    v["recovery_predicted_us"]))

v = run("--dcqcn", wrong, "--fit", cap, want_rc=1)
if v["verdict"] != "FAIL":
    fail("wrong parameters passed: %s" % v["why"])
fit = v["fit"]["params"]
pairs = [("rpg_time_reset", "rpg_time_reset_us"), ("rpg_ai_rate", "rpg_ai_rate_mbps"),
         ("rpg_hai_rate", "rpg_hai_rate_mbps"), ("rpg_threshold", "rpg_threshold"),
         ("rpg_min_dec_fac", "rpg_min_dec_fac_pct")]
for name, key in pairs:
    if abs(fit[key] - T[name]) > 0.05 * T[name]:
        fail("fit %s = %g, truth %g" % (name, fit[key], T[name]))
# alpha behaviour: initial alpha and the EWMA weight g = (1024 - dce_tcp_g) / 1024
if abs(fit["initial_alpha_value"] - T["initial_alpha_value"]) > 0.05 * T["initial_alpha_value"]:
    fail("fit initial_alpha_value %g, truth %g" % (fit["initial_alpha_value"],
                                                   T["initial_alpha_value"]))
g_fit, g_true = 1024 - fit["dce_tcp_g"], 1024 - T["dce_tcp_g"]
if abs(g_fit - g_true) > 0.05 * g_true:
    fail("fit g %g/1024, truth %g/1024" % (g_fit, g_true))
want = {"initial_alpha_value", "dce_tcp_g", "rpg_time_reset", "rpg_ai_rate", "rpg_hai_rate",
        "rpg_threshold"}
if set(v["fit"]["differs"].split(",")) != want:
    fail("fit differs: %r" % v["fit"]["differs"])
print("wrong: FAIL as it should; fit " + ", ".join("%s %.4g" % (k, fit[k]) for _, k in pairs) +
      ", initial_alpha_value %.1f, dce_tcp_g %.1f; differs: %s" % (
          fit["initial_alpha_value"], fit["dce_tcp_g"], v["fit"]["differs"]))

# TRUTH with one parameter changed (each in turn; rpg_time_reset x 3, rpg_hai_rate / 4):
# FAIL, and --fit names that parameter first as the one that, changed alone, explains the
# trace, with a value within 5% of TRUTH's
for name, factor, key in (("rpg_time_reset", 3.0, "rpg_time_reset"),
                          ("rpg_hai_rate", 0.25, "rpg_hai_rate")):
    one = os.path.join(tmp, "one-%s.txt" % name)
    with open(truth) as src, open(one, "w") as dst:
        for line in src:
            k = line.split()[0] if line.strip() and not line.startswith("#") else None
            dst.write("%s %g\n" % (k, T[k] * factor) if k == name else line)
    v = run("--dcqcn", one, "--fit", cap, want_rc=1)
    ex = v["fit"]["explained_by"]
    if v["verdict"] != "FAIL" or not ex or ex[0]["name"] != key:
        fail("%s x %g: %s, explained by %r" % (name, factor, v["why"], ex))
    # only parameters whose value differs from the file's are named (rpg_threshold = 1 at its
    # current value was once listed as explaining the trace)
    given = params(one)
    for x in ex:
        cur = given.get(x["name"])
        if cur is None:
            fail("%s x %g: explained by %s, not in the file" % (name, factor, x["name"]))
        if (x["value"] == cur) if x["name"] == "rpg_threshold" else \
                abs(x["value"] - cur) <= 0.05 * abs(cur):
            fail("%s x %g: explained by %s = %g, its current value %g" % (
                name, factor, x["name"], x["value"], cur))
    if abs(ex[0]["value"] - T[name]) > 0.05 * T[name]:
        fail("%s x %g: explained by %s = %g, truth %g" % (name, factor, key, ex[0]["value"],
                                                          T[name]))
    print("one parameter wrong (%s x %g): FAIL (%s); explained by %s" % (
        name, factor, v["why"], ", ".join("%s = %.5g (error %.4f)" % (
            x["name"], x["value"], x["error"]) for x in ex)))

# TRUTH itself failed on the cuts alone (--tol-cut 0.0001), its trajectory within
# --tol-traj: no parameter at its current value is named as explaining the trace
v = run("--dcqcn", truth, "--fit", "--tol-cut", "0.0001", cap, want_rc=1)
for x in v["fit"]["explained_by"]:
    cur = T.get(x["name"])
    if cur is not None and ((x["value"] == cur) if x["name"] == "rpg_threshold" else
                            abs(x["value"] - cur) <= 0.05 * abs(cur)):
        fail("truth, cuts failed: explained by %s = %g, its current value" % (x["name"],
                                                                              x["value"]))
print("truth failed on cuts only: explained by %s" % (", ".join(
    "%s = %.5g" % (x["name"], x["value"]) for x in v["fit"]["explained_by"]) or "nothing"))

# NVIDIA's defaults (byte counter on: an increase every 32767 B, 26 us at 10 Gb/s): PASS
# against nvidia, FAIL against paper (whose 10 MB byte counter and 55 us timer recover far
# slower than this sender, which is back at line rate within one window of most CNPs)
nv = os.path.join(tmp, "nvidia.pcap")
subprocess.run([GEN, nv, os.path.join(tmp, "t3.txt"), os.path.join(tmp, "w3.txt"), "--nvidia"],
               check=True, capture_output=True)
v = run("--dcqcn", "nvidia", nv, want_rc=0)
if v["verdict"] != "PASS":
    fail("nvidia sender against nvidia: %s" % v["why"])
print("nvidia sender, nvidia parameters: PASS (%s)" % v["why"])
v = run("--dcqcn", "paper", nv, want_rc=1)
if v["verdict"] != "FAIL" or v["trajectory_error"] < 0.3:
    fail("nvidia sender against paper: %s" % v["why"])
print("nvidia sender, paper parameters: FAIL (%s)" % v["why"])

v = run("--dcqcn", truth, ign, want_rc=1)
if v["verdict"] != "FAIL" or "kept its rate" not in v["why"]:
    fail("ignoring sender: %r" % v["why"])
print("ignoring CNPs: FAIL (%s)" % v["why"])

# idle time between messages is left out; a stall inside a message is not
for mode, rc in (("--idle", 0), ("--stall", 1), ("--slow-msgs", 1)):
    pc = os.path.join(tmp, "pause%s.pcap" % mode)
    subprocess.run([GEN, pc, os.path.join(tmp, "t4.txt"), os.path.join(tmp, "w4.txt"), mode],
                   check=True, capture_output=True)
    v = run("--dcqcn", truth, pc, want_rc=rc)
    idle = v["idle"]
    if mode == "--idle":
        if (v["verdict"] != "PASS" or idle["gaps"] != 1 or
                abs(idle["idle_us"] - 2000) > 20 or idle["windows_idle"] < 30):
            fail("idle sender: %s, idle %r" % (v["why"], idle))
    elif v["verdict"] != "FAIL" or idle["gaps"] != 0 or idle["windows_idle"] != 0:
        fail("%s sender: %s, idle %r" % (mode, v["why"], idle))
    print("pause %s: %s (%s); idle %.1f us in %d gap(s), %d of %d windows left out" % (
        mode, v["verdict"], v["why"], idle["idle_us"], idle["gaps"], idle["windows_idle"],
        idle["windows"]))
    if mode == "--stall" and (v["stalls"]["gaps"] != 1 or v["pfc_paused"]["pauses"] != 0):
        fail("stall sender: stalls %r, pfc %r" % (v["stalls"], v["pfc_paused"]))
    if mode == "--idle":
        # the fit, from WRONG, still recovers TRUTH with the idle time left out of every step
        fit = run("--dcqcn", wrong, "--fit", pc, want_rc=1)["fit"]["params"]
        for name, key in pairs:
            if abs(fit[key] - T[name]) > 0.05 * T[name]:
                fail("idle sender: fit %s = %g, truth %g" % (name, fit[key], T[name]))
        print("pause --idle: fit from WRONG " + ", ".join("%s %.4g" % (k, fit[k])
                                                     for _, k in pairs))

# the same stall while the switch paused the sender with PFC for its data's priority: the
# pause's windows are left out, the gap is the pause's, not a stall: PASS. The same PFC frames
# from the sender's own MAC (they pause what is sent to it) or for another priority: FAIL,
# the stall counted against the sender as without them.
for mode, rc in (("--pfc", 0), ("--pfc-own", 1), ("--pfc-prio5", 1)):
    pc = os.path.join(tmp, "pfc%s.pcap" % mode)
    subprocess.run([GEN, pc, os.path.join(tmp, "t5.txt"), os.path.join(tmp, "w5.txt"), mode],
                   check=True, capture_output=True)
    v = run("--dcqcn", truth, pc, want_rc=rc)
    pp, st = v["pfc_paused"], v["stalls"]
    if mode == "--pfc":
        if (v["verdict"] != "PASS" or pp["pauses"] != 1 or abs(pp["paused_us"] - 2000) > 1 or
                pp["windows"] < 30 or pp["gaps_in_messages"] != 1 or pp["priority"] != 3 or
                st["gaps"] != 0 or v["idle"]["gaps"] != 0 or
                v["idle"]["windows_idle"] != pp["windows"]):
            fail("paused sender: %s, pfc %r, stalls %r, idle %r" % (v["why"], pp, st,
                                                                   v["idle"]))
    elif (v["verdict"] != "FAIL" or pp["pauses"] != 0 or pp["windows"] != 0 or
          st["gaps"] != 1):
        fail("%s sender: %s, pfc %r, stalls %r" % (mode, v["why"], pp, st))
    print("pause %s: %s (%s); %d PFC pause(s) of the sender, %.1f us, %d of %d windows left "
          "out, %d stall(s)" % (mode, v["verdict"], v["why"], pp["pauses"], pp["paused_us"],
                                pp["windows"], v["idle"]["windows"], st["gaps"]))
