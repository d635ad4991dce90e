#!/usr/bin/env python3
"""Benchmarks dlc against ONNX Runtime on the zoo models, side by side.

For each model: compile with dlc (compile time, kernels, arena bytes from
--stats), check the outputs once against ONNX Runtime, then measure dlc
(dlc-run --bench) and ONNX Runtime (CPUExecutionProvider, all graph
optimizations, intra_op_num_threads = the same thread count) in alternating
rounds, so that load from other processes hits both. Each round times a
batch of runs after a warmup; the reported p50/p90/p99 are medians over
rounds and the dlc/ORT ratio is the median of the per-round ratios of p50
(its min-max over rounds shows the noise). Peak memory: dlc-run's peak RSS;
for ONNX Runtime the peak RSS (VmHWM) of a worker process that only loads the
model and runs it, and its growth over the idle interpreter with onnxruntime
imported.

  python -m scripts.zoo.bench --build build
  python -m scripts.zoo.bench --build build --threads 1,2 --targets cpu,vulkan
  python -m scripts.zoo.bench --build build --doc docs/benchmarks.md \\
      --section cpu
  python -m scripts.zoo.bench --build build --quantize \\
      --models mobilenetv2,resnet18

With --quantize, dlc's own post-training quantization of each float model
(dlc-compile --quantize=int8) runs against ONNX Runtime on the model
quantize_static made of it (the zoo's qdq_ twin).
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

from scripts.targets import split_targets
from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402

from scripts.zoo import check, common, models  # noqa: E402

BEGIN = "<!-- bench:begin %s -->"
END = "<!-- bench:end %s -->"


# ---------------------------------------------------------------------------
# ONNX Runtime in a worker process (its own peak RSS, no interference with
# this process's memory)


def peak_rss_kib():
    """This process's peak RSS in KiB: VmHWM, as dlc-run reports it.

    getrusage's ru_maxrss is only the fallback: on Linux it survives fork and
    exec, so a worker would inherit this script's own high-water mark."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def ort_worker(model, threads, inputs, spin):
    import onnxruntime  # noqa: F401  (counted in the baseline)

    maxrss = peak_rss_kib
    baseline = maxrss()
    # ORT as users run it: its default integer kernels.
    sess = common.ort_session(model, threads=threads, optimized=True,
                              spin=spin, exact_integers=False)
    feeds = {}
    for item in inputs:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    print(json.dumps({"ready": True, "baseline_rss_kib": baseline}),
          flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] != "run":
            break
        for _ in range(cmd["warmup"]):
            sess.run(None, feeds)
        lat = []
        for _ in range(cmd["iters"]):
            t = time.perf_counter()
            sess.run(None, feeds)
            lat.append((time.perf_counter() - t) * 1e3)
        print(json.dumps({"lat": lat, "peak_rss_kib": maxrss()}), flush=True)
    return 0


class OrtWorker:
    def __init__(self, model, threads, inputs, spin):
        cmd = [sys.executable, "-m", "scripts.zoo.bench", "--ort-worker",
               model, "--threads", str(threads)]
        cmd += ["--input=%s=%s" % kv for kv in inputs.items()]
        if not spin:
            cmd.append("--ort-no-spin")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        hello = self._read()
        self.baseline_rss_kib = hello["baseline_rss_kib"]
        self.peak_rss_kib = 0

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the ONNX Runtime worker exited (status %s)"
                               % self.proc.wait())
        return json.loads(line)

    def run(self, warmup, iters):
        self.proc.stdin.write(json.dumps({"op": "run", "warmup": warmup,
                                          "iters": iters}) + "\n")
        self.proc.stdin.flush()
        res = self._read()
        self.peak_rss_kib = max(self.peak_rss_kib, res["peak_rss_kib"])
        return res["lat"]

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(timeout=30)


# ---------------------------------------------------------------------------
# Measurement


def percentiles(lat):
    """p50/p90/p99 with dlc-run's definition (nearest rank, ceil(p*n))."""
    s = sorted(lat)
    def pick(p):
        rank = int(np.ceil(p * len(s)))
        return s[max(rank, 1) - 1]
    return {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99)}


def dlc_round(dlc_run, artifact, inputs, threads, warmup, iters, timeout):
    cmd = [dlc_run, artifact, "--bench", str(iters), "--warmup", str(warmup)]
    if threads:
        cmd += ["--threads", str(threads)]
    for name, path in inputs.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(common.first_error(p.stderr + p.stdout))
    res = common.parse_bench(p.stdout)
    if res["p50"] is None:
        raise RuntimeError("no bench line in dlc-run's output: %r" %
                           p.stdout[-200:])
    return res


def iterations(ms_per_run, round_time, lo=5, hi=1000):
    if not ms_per_run or ms_per_run <= 0:
        return lo
    return int(min(hi, max(lo, round(round_time * 1e3 / ms_per_run))))


def bench_config(args, dlc_run, artifact, inputs, threads, ort):
    """Alternating rounds of dlc and ONNX Runtime; returns the row data."""
    # Calibrate the iteration counts so a round takes ~round_time per side.
    t0 = time.perf_counter()
    ort.run(0, 1)
    ort_ms = (time.perf_counter() - t0) * 1e3
    res = dlc_round(dlc_run, artifact, inputs, threads, 1, 1, args.timeout)
    dlc_iters = iterations(res["p50"], args.round_time)
    ort_iters = iterations(ort_ms, args.round_time)
    dlc_rounds, ort_rounds, dlc_rss = [], [], 0.0
    for r in range(args.rounds):
        order = ("dlc", "ort") if r % 2 == 0 else ("ort", "dlc")
        for side in order:
            if side == "dlc":
                res = dlc_round(dlc_run, artifact, inputs, threads,
                                args.warmup, dlc_iters, args.timeout)
                dlc_rounds.append(res)
                dlc_rss = max(dlc_rss, res["peak_rss_mib"] or 0)
            else:
                ort_rounds.append(percentiles(ort.run(args.warmup,
                                                      ort_iters)))
    out = {"dlc_iters": dlc_iters, "ort_iters": ort_iters,
           "dlc_peak_rss_mib": dlc_rss}
    for key in ("p50", "p90", "p99"):
        out["dlc_" + key] = statistics.median(r[key] for r in dlc_rounds)
        out["ort_" + key] = statistics.median(r[key] for r in ort_rounds)
    ratios = [d["p50"] / o["p50"] for d, o in zip(dlc_rounds, ort_rounds)]
    out["ratio"] = statistics.median(ratios)
    out["ratio_min"], out["ratio_max"] = min(ratios), max(ratios)
    return out


def ort_only(args, ort):
    """ONNX Runtime numbers when dlc cannot run the model (still a
    baseline worth recording)."""
    t0 = time.perf_counter()
    ort.run(0, 1)
    iters = iterations((time.perf_counter() - t0) * 1e3, args.round_time)
    rounds = [percentiles(ort.run(args.warmup, iters))
              for _ in range(args.rounds)]
    return {"ort_iters": iters, **{
        "ort_" + k: statistics.median(r[k] for r in rounds)
        for k in ("p50", "p90", "p99")}}


def calibration_data(args, entry, samples=8):
    """A --calibration-data folder of the manifest's inputs (seeds 1 to
    `samples`; the checked run uses seed 0)."""
    import numpy as np
    root = os.path.join(args.work, entry["name"], "calibration")
    bound = common.bound_inputs(entry)
    for seed in range(1, samples + 1):
        sample = os.path.join(root, "%03d" % seed)
        os.makedirs(sample, exist_ok=True)
        for name, a in common.make_inputs(entry, seed).items():
            if name not in bound:
                np.save(os.path.join(sample, name + ".npy"), a)
    return root


def compile_model(args, dlc_compile, entry, target, inputs):
    tdir = os.path.join(args.work, entry["name"],
                        common.target_dir_name(target))
    os.makedirs(tdir, exist_ok=True)
    artifact = os.path.join(tdir, "model.dlcx")
    if os.path.exists(artifact):
        os.remove(artifact)
    cmd = [dlc_compile, os.path.join(args.models_dir, entry["file"]),
           "--target=" + target, "-o", artifact, "--stats"]
    cmd += common.compile_flags(entry, inputs)
    if args.quantize:
        cmd += ["--quantize=int8",
                "--calibration-data=" + calibration_data(args, entry)]
    rc, out, err, secs = check.run(cmd, args.timeout)
    info = common.parse_stats(err + out)
    info["compile_wall_s"] = secs
    if rc != 0 or not os.path.exists(artifact):
        errors = common.node_errors(err)
        msg = common.first_error(err) if rc is not None else \
            "dlc-compile ran over %ds" % args.timeout
        if errors:
            ops = sorted({e[1] for e in errors})
            msg = "compile error: %d nodes rejected (%s)" % (
                len(errors), ", ".join(ops[:6]) + (", ..." if ops[6:] else ""))
        else:
            msg = "compile error: " + msg
        return None, info, msg
    return artifact, info, None


def verify(args, dlc_run, entry, artifact, inputs, refs, target):
    """One dlc-run with --expect: a fast wrong answer is not a result."""
    tol = entry["tolerance"]
    cmd = [dlc_run, artifact, "--rtol", repr(tol["rtol"]), "--atol",
           repr(tol["atol"]), "--threads", "1"]
    for name, path in inputs.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    for name, path in refs.items():
        cmd += ["--expect", "%s=%s" % (name, path)]
    rc, out, err, _ = check.run(cmd, args.timeout)
    if rc == 0:
        return "ok"
    if rc == 1:
        v = common.parse_expect(out)
        worst = max((x["max_abs"] or 0 for x in v.values()), default=0)
        return "MISMATCH (max abs err %.3g)" % worst
    return "run error: " + common.strip_paths(common.first_error(err + out))


def bench_model(args, tools, entry, targets, thread_counts):
    dlc_compile, dlc_run = tools
    inputs, refs = check.prepare_model(entry, args.models_dir, args.work)
    dlc_inputs = common.run_inputs(entry, inputs)
    model_path = os.path.join(args.models_dir, entry["file"])
    name = entry["name"]
    if args.quantize:
        # dlc's quantization of the float model against ONNX Runtime's:
        # the zoo's quantize_static twin, where there is one.
        twin = os.path.join(args.models_dir, "qdq_" + entry["file"])
        if os.path.exists(twin):
            model_path = twin
        name = "ptq:" + name
    workers = {}

    def worker(n):
        if n not in workers:
            workers[n] = OrtWorker(model_path, n, inputs, not args.ort_no_spin)
        return workers[n]

    rows = []
    try:
        for target in targets:
            artifact, info, error = compile_model(args, dlc_compile, entry,
                                                  target, inputs)
            status = error
            if artifact and args.quantize:
                status = "int8, not compared with float"
            elif artifact and not args.no_verify:
                status = verify(args, dlc_run, entry, artifact, dlc_inputs,
                                refs, target)
            configs = thread_counts if target.startswith("cpu") else \
                [thread_counts[0]]
            for n in configs:
                row = {"model": name, "target": target,
                       "threads": n if target.startswith("cpu") else None,
                       "ort_threads": n, "onnx_nodes": entry["nodes"],
                       "status": status or "ok", **info}
                print("  %s %s threads=%s ..." % (entry["name"], target, n),
                      file=sys.stderr, flush=True)
                ort = worker(n)
                if artifact and (status == "ok" or args.bench_mismatches or
                                 args.quantize):
                    try:
                        row.update(bench_config(args, dlc_run, artifact,
                                                dlc_inputs, row["threads"],
                                                ort))
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        row["status"] = "bench error: %s" % \
                            common.strip_paths(str(e))
                        row.update(ort_only(args, ort))
                else:
                    row.update(ort_only(args, ort))
                row["ort_peak_rss_mib"] = ort.peak_rss_kib / 1024.0
                row["ort_rss_growth_mib"] = (ort.peak_rss_kib -
                                             ort.baseline_rss_kib) / 1024.0
                rows.append(row)
    finally:
        for w in workers.values():
            w.close()
    return rows


# ---------------------------------------------------------------------------
# Report


def ms3(row, side):
    if row.get(side + "_p50") is None:
        return "-"
    return "%.2f / %.2f / %.2f" % tuple(row[side + "_" + k]
                                        for k in ("p50", "p90", "p99"))


def markdown_table(rows):
    head = ["model", "target", "threads", "dlc ms p50 / p90 / p99",
            "ORT ms p50 / p90 / p99", "dlc/ORT p50 (min-max)", "compile s",
            "kernels / ONNX nodes", "arena (x lower bound)",
            "peak RSS MiB dlc / ORT (growth)", "status"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        ratio = "-" if r.get("ratio") is None else "%.2f (%.2f-%.2f)" % (
            r["ratio"], r["ratio_min"], r["ratio_max"])
        arena = "-"
        if r.get("arena_bytes") is not None:
            arena = common.human_bytes(r["arena_bytes"])
            if r.get("arena_lower_bound"):
                arena += " (%.2f)" % (r["arena_bytes"] /
                                      r["arena_lower_bound"])
        kernels = "%s / %d" % ("-" if r.get("kernels") is None
                               else r["kernels"], r["onnx_nodes"])
        rss = "%s / %.0f (%.0f)" % (
            "%.1f" % r["dlc_peak_rss_mib"] if r.get("dlc_peak_rss_mib")
            else "-", r["ort_peak_rss_mib"], r["ort_rss_growth_mib"])
        compile_s = "-" if r.get("compile_s") is None else \
            "%.2f" % r["compile_s"]
        threads = "-" if r["threads"] is None else str(r["threads"])
        if r["threads"] is None:
            threads += " (ORT %d)" % r["ort_threads"]
        lines.append("| " + " | ".join([
            r["model"], r["target"], threads, ms3(r, "dlc"), ms3(r, "ort"),
            ratio, compile_s, kernels, arena, rss,
            r["status"].replace("|", "/")]) + " |")
    return "\n".join(lines)


def repo_revision():
    try:
        rev = subprocess.run(["git", "-C", common.ROOT, "rev-parse",
                              "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", common.ROOT, "status",
                                "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "unknown"


def report(args, tools, rows, started, load_before):
    import onnxruntime
    m = common.machine_description()
    load_after = os.getloadavg()
    cmd = ["python", "-m", "scripts.zoo.bench"] + sys.argv[1:]
    lines = [
        "Measured %s on %s, %d cores, Linux %s; load average %.1f before, "
        "%.1f after (1 min)." % (time.strftime("%Y-%m-%d %H:%M", started),
                                 m["cpu"], m["cores"], m["kernel"],
                                 load_before[0], load_after[0]),
        "dlc %s (dlc-compile `%s`, dlc-run `%s`); onnxruntime %s, "
        "CPUExecutionProvider, all graph optimizations%s." % (
            repo_revision(), tools[0], tools[1], onnxruntime.__version__,
            ", no spinning" if args.ort_no_spin else ""),
        "%d rounds per configuration, each side ~%.1f s per round after %d "
        "warmup runs; medians over rounds." % (args.rounds, args.round_time,
                                               args.warmup),
        "",
        "Command: `%s`" % " ".join(shlex.quote(c) for c in cmd),
        "",
        markdown_table(rows)]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_tool_args(p)
    p.add_argument("--models", help="comma-separated subset (default: all)")
    p.add_argument("--targets", default="cpu",
                   help="cpu and/or vulkan (default %(default)s)")
    p.add_argument("--threads", default="1,2",
                   help="thread counts for dlc and ORT (default %(default)s)")
    p.add_argument("--rounds", type=int, default=5,
                   help="alternating measurement rounds (default "
                        "%(default)s)")
    p.add_argument("--round-time", type=float, default=0.5,
                   help="seconds each side spends per round (default "
                        "%(default)s)")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed runs before each round (default "
                        "%(default)s)")
    p.add_argument("--ort-no-spin", action="store_true",
                   help="disable ORT's thread-pool spinning")
    p.add_argument("--quantize", action="store_true",
                   help="compile the float models with dlc-compile "
                        "--quantize=int8 (calibrated on 8 samples of their "
                        "manifest inputs) and run ONNX Runtime on their "
                        "quantize_static twins (qdq_<model>) where the zoo "
                        "has one; outputs are not compared")
    p.add_argument("--no-verify", action="store_true",
                   help="skip the correctness check before timing")
    p.add_argument("--bench-mismatches", action="store_true",
                   help="time dlc even when its outputs are wrong")
    p.add_argument("--models-dir", default=models.DEFAULT_OUT)
    p.add_argument("--work", default=common.DEFAULT_WORK)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--doc", help="write the results into this markdown file "
                                 "between the section's markers")
    p.add_argument("--section", default="results",
                   help="section name in --doc (default %(default)s)")
    p.add_argument("--json", help="also write the rows as JSON")
    # Internal: the ONNX Runtime worker process.
    p.add_argument("--ort-worker", help=argparse.SUPPRESS)
    p.add_argument("--input", action="append", default=[],
                   help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.ort_worker:
        return ort_worker(args.ort_worker, int(args.threads), args.input,
                          not args.ort_no_spin)

    names = args.models.split(",") if args.models else None
    manifest = models.ensure_models(args.models_dir, names,
                                    log=lambda s: print(s, file=sys.stderr))
    tools = common.find_tools(args)
    targets = split_targets(args.targets)
    thread_counts = [int(t) for t in args.threads.split(",")]
    started, load_before = time.localtime(), os.getloadavg()
    rows = []
    for entry in models.selected(manifest, names):
        print("%s:" % entry["name"], file=sys.stderr, flush=True)
        rows += bench_model(args, tools, entry, targets, thread_counts)
    body = report(args, tools, rows, started, load_before)
    print(body)
    if args.doc:
        common.write_marked(args.doc, BEGIN % args.section,
                            END % args.section, body, "# Benchmarks\n\n")
        print("\nwrote section '%s' of %s" % (args.section, args.doc),
              file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
