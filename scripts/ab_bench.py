#!/usr/bin/env python3
"""Compiled artifacts against each other, in alternating rounds.

Times `dlc-run --bench` on each artifact in turn, round after round (so
that a noisy machine disturbs every artifact alike), and prints a markdown
table: each artifact's p50 (median over rounds, and the range) and fastest
run, and its ratio to the first artifact, per round (median, range) and
between the fastest runs. What docs/benchmarks.md cites for comparisons of
one model compiled two ways (4-bit weights against float, a pass on and
off, two compilers' builds).

  python -m scripts.ab_bench --dlc-run build/bin/dlc-run f.dlcx q.dlcx
  python -m scripts.ab_bench --dlc-run build/bin/dlc-run --threads 2 \\
      --rounds 11 --runs 300 old.dlcx new.dlcx
"""

import argparse
import os
import re
import statistics
import subprocess
import sys


def bench(dlc_run, artifact, runs, threads):
    """(p50, min) in ms of one `dlc-run --bench` invocation."""
    out = subprocess.run(
        [dlc_run, artifact, "--threads", str(threads), "--bench", str(runs)],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("dlc-run %s failed:\n%s" % (artifact, out.stderr))
    p50 = re.search(r"p50 ([0-9.]+)", out.stdout)
    low = re.search(r"min ([0-9.]+)", out.stdout)
    if not p50 or not low:
        sys.exit("no latencies in dlc-run's output:\n" + out.stdout)
    return float(p50.group(1)), float(low.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("artifacts", nargs="+", help=".dlcx files; the first "
                    "is the reference of the ratios")
    ap.add_argument("--dlc-run", default="dlc-run")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--runs", type=int, default=300,
                    help="timed runs per artifact and round")
    args = ap.parse_args()
    p50s = {a: [] for a in args.artifacts}
    mins = {a: [] for a in args.artifacts}
    for _ in range(args.rounds):
        for a in args.artifacts:
            p50, low = bench(args.dlc_run, a, args.runs, args.threads)
            p50s[a].append(p50)
            mins[a].append(low)
    ref = args.artifacts[0]
    print("%d rounds of `dlc-run --bench %d --threads %d`, alternating; "
          "ms" % (args.rounds, args.runs, args.threads))
    print()
    print("| artifact | p50 median (range) | fastest run | ratio to %s: "
          "per round, median (range) | fastest runs |"
          % os.path.basename(ref))
    print("|---|---|---|---|---|")
    for a in args.artifacts:
        ratios = [x / y for x, y in zip(p50s[a], p50s[ref])]
        print("| %s | %.3f (%.3f-%.3f) | %.3f | %.2f (%.2f-%.2f) | %.2f |" % (
            os.path.basename(a), statistics.median(p50s[a]), min(p50s[a]),
            max(p50s[a]), min(mins[a]), statistics.median(ratios),
            min(ratios), max(ratios), min(mins[a]) / min(mins[ref])))


if __name__ == "__main__":
    main()
