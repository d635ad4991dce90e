"""Helpers of the end-to-end test scripts that compile with dlc-compile,
run with dlc-run and compare with an oracle (weights_tests.py,
precision_tests.py)."""

import os
import subprocess
import sys

import numpy as np


def rel_rms(a, b):
    """Relative RMS error of `a` against the reference `b`."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(np.sqrt(((a - b) ** 2).sum() / max((b ** 2).sum(), 1e-30)))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd):
    """Runs `cmd`; fails the script with its stderr when it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail("%s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    return p


def run_artifact(dlc_run, artifact, feed, d):
    """dlc-run's outputs of `artifact` on `feed`, by name (files in `d`)."""
    os.makedirs(d, exist_ok=True)
    cmd = [dlc_run, artifact, "--output-dir", d]
    for k, v in feed.items():
        path = os.path.join(d, "in_" + k + ".npy")
        np.save(path, v)
        cmd += ["--input", "%s=%s" % (k, path)]
    run(cmd)
    return {name[:-4]: np.load(os.path.join(d, name))
            for name in os.listdir(d)
            if name.endswith(".npy") and not name.startswith("in_")}
