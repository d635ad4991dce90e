#!/usr/bin/env python3
"""Runs a bundle of compiled artifacts on the machine that has the device.

dlc compiles ahead of time, so the machine that runs a model needs neither
the compiler nor ONNX Runtime: `python -m scripts.node_tests --bundle DIR` and
`python -m scripts.zoo.check --bundle DIR` write artifacts, inputs, reference
outputs and a `cases.json` into DIR, and this script (Python's standard
library only, so it runs on a board or a GPU server as they are) runs each
case with dlc-run there and reports what the references say.

  python -m scripts.bundle_run DIR --dlc-run PATH/dlc-run
  python -m scripts.bundle_run DIR --dlc-run dlc-run --bench 50 \\
      --json results.json

A case passes when dlc-run exits 0 (every --expect within the tolerances
written into the case). Exit status: 0 when every case passed, 1 otherwise.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

STATUS_BY_RC = {0: "pass", 1: "mismatch", 2: "run-error"}


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def parse_bench(text):
    """p50/p90/p99 in ms from dlc-run --bench output, when present."""
    got = {}
    for key in ("p50", "p90", "p99", "min"):
        m = re.search(r"latency ms:.*\b%s ([0-9.]+)" % key, text)
        if m:
            got[key + "_ms"] = float(m.group(1))
    return got


def run_case(args, case):
    cmd = [args.dlc_run] + case["args"]
    res = {"suite": case["suite"], "name": case["name"],
           "target": case["target"]}
    start = time.time()
    try:
        p = subprocess.run(cmd, cwd=args.bundle, capture_output=True,
                           text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        res.update(status="run-timeout", detail="over %ds" % args.timeout)
        return res
    res["wall_s"] = round(time.time() - start, 3)
    status = STATUS_BY_RC.get(p.returncode, "run-crash")
    res["status"] = status
    if status != "pass":
        res["detail"] = last_line(p.stderr) or last_line(p.stdout) or \
            "exit %d" % p.returncode
        res["log"] = (p.stdout + p.stderr)[-4000:]
    if args.bench and status == "pass" and case.get("bench"):
        p = subprocess.run(cmd + ["--bench", str(args.bench)],
                           cwd=args.bundle, capture_output=True, text=True,
                           timeout=args.timeout)
        res.update(parse_bench(p.stdout + p.stderr))
        res["bench_log"] = (p.stdout + p.stderr)[-2000:]
        if args.profile_dir:
            os.makedirs(args.profile_dir, exist_ok=True)
            prof = os.path.join(os.path.abspath(args.profile_dir),
                                "%s.%s.json" % (case["name"],
                                                case["target"].replace(
                                                    ":", "_")))
            subprocess.run(cmd + ["--bench", "5", "--profile", prof],
                           cwd=args.bundle, capture_output=True,
                           timeout=args.timeout)
    return res


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", help="directory holding cases.json")
    ap.add_argument("--dlc-run", default="dlc-run")
    ap.add_argument("--suite", help="run only this suite (node, zoo)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--bench", type=int, default=0,
                    help="also time N runs of every passing zoo case")
    ap.add_argument("--profile-dir",
                    help="with --bench: a kernel trace per zoo case here")
    ap.add_argument("--json", help="write every result here")
    args = ap.parse_args()
    args.bundle = os.path.abspath(args.bundle)
    with open(os.path.join(args.bundle, "cases.json")) as f:
        cases = json.load(f)["cases"]
    if args.suite:
        cases = [c for c in cases if c["suite"] == args.suite]
    # Zoo cases run one at a time (they are timed); node cases in parallel.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda c: run_case(args, c),
            [c for c in cases if not c.get("bench")]))
    results += [run_case(args, c) for c in cases if c.get("bench")]
    counts = collections.Counter((r["suite"], r["target"], r["status"])
                                 for r in results)
    for r in results:
        if r["status"] != "pass":
            print("%-5s %-12s %-44s %-11s %s" % (
                r["suite"], r["target"], r["name"], r["status"],
                r.get("detail", "")[:200]))
        elif "p50_ms" in r:
            print("%-5s %-12s %-44s pass        p50 %.3f ms" % (
                r["suite"], r["target"], r["name"], r["p50_ms"]))
    print("\nsummary:")
    for (suite, target, status), n in sorted(counts.items()):
        print("  %-5s %-12s %-11s %d" % (suite, target, status, n))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results}, f, indent=1)
    return 0 if all(r["status"] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
