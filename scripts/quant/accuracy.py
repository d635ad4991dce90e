#!/usr/bin/env python3
"""PTQ accuracy acceptance: dlc's INT8 models against its float ones.

For each model (models.py: `orientation`, a classifier, and `layout`, a
detector, real trained models from PyPI wheels) and each calibration method:

 1. compile the float model for the CPU:
      dlc-compile model.onnx --target=cpu [--input-shape ...] -o float.dlcx
 2. compile it quantized, calibrated on DATA/<model>/calib (make_data.py):
      dlc-compile model.onnx --target=cpu --quantize=int8
          --calibration-data=DATA/<model>/calib --calibration-method=M
          -o int8-M.dlcx
    and, when dlc can, the same as a QDQ ONNX model (--emit=qdq-onnx);
 3. run everything on the evaluation samples (DATA/<model>/eval) with
    dlc-run, the float model and the QDQ models also with ONNX Runtime;
 4. compare:
      float dlc vs ONNX Runtime (a sanity check of the float path): max
        abs error, within |d - r| <= 1e-4 + 1e-3 |r|;
      classifiers: top-1 agreement of INT8 with float (pass >= 99%), max
        abs error of the output (orientation: softmax probabilities);
        accuracy against the synthetic labels, for information;
      detectors: per output, cosine similarity of INT8 with float, mean
        and min over the samples (pass: mean >= 0.99; --cosine-on min
        judges the min), and max abs error;
      QDQ model in ONNX Runtime vs dlc's INT8 artifact: top-1 agreement or
        the worst output's mean cosine, same thresholds;
      QDQ model in ONNX Runtime vs float in ONNX Runtime: the quantizer's
        own error, without dlc's integer kernels (for information).

It prints a markdown table (model | method | metric | value | pass) and,
with --doc, puts it with the command line between the markers
`<!-- accuracy:begin -->` and `<!-- accuracy:end -->` of that file
(appended, with the markers, if they are missing). The exit status is 1 when
any row fails, 2 on a usage error.

--stand-in-ort replaces dlc's quantizer by ONNX Runtime's, to test the
pipeline, or dlc's integer kernels, without dlc's quantizer: quantize_static
(QDQ, uint8 activations and per-channel int8 weights like dlc's
--quantize=int8, the same calibration samples; minmax, percentile[:P] and
entropy map to ORT's MinMax, Percentile (default 99.999) and Entropy, mse to
MinMax; calibration in chunks of 4 samples, which bounds memory) after ORT's
quant_pre_process. The QDQ model is compiled with a plain
`dlc-compile qdq.onnx --target=cpu` and also run in ORT (the analogue of
--emit=qdq-onnx).

  python -m scripts.quant.make_data --out DATA
  python -m scripts.quant.accuracy --build build --data DATA \\
      --models orientation,layout --methods minmax,percentile,entropy,mse \\
      [--doc docs/quantization.md] [--stand-in-ort] [--eval N] [--jobs 2]
      [--quant-flag=--keep-float=auto:0.05 ...]

Work files (compiled artifacts, QDQ models) go to --work (default
~/.cache/dlc/quant/work); the models are fetched into ~/.cache/dlc/wheels.
"""

import argparse
import concurrent.futures as cf
import contextlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

if __name__ == "__main__":
    from scripts.quant import env
    env.ensure(("numpy", "onnx", "onnxruntime"))

import numpy as np  # noqa: E402  (after the environment check)

from scripts.quant import models as M  # noqa: E402
from scripts.zoo import common as zoo_common  # noqa: E402

DEFAULT_WORK = os.path.expanduser("~/.cache/dlc/quant/work")
METHODS = ("minmax", "percentile", "entropy", "mse")
TOP1_MIN = 99.0          # % top-1 agreement, classifiers
COSINE_MIN = 0.99        # cosine similarity, detectors
FLOAT_ATOL, FLOAT_RTOL = 1e-4, 1e-3   # float dlc vs ORT
MARK_BEGIN, MARK_END = "<!-- accuracy:begin -->", "<!-- accuracy:end -->"


# ---------------------------------------------------------------------------
# Tools


def die(message):
    """A usage error: exit status 2."""
    print("error: " + message, file=sys.stderr)
    sys.exit(2)


def find_tool(build, name, explicit=None):
    for c in ([explicit] if explicit else
              [os.path.join(build, "bin", name), os.path.join(build, name)]):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    die("%s not found under %s (pass --build DIR or --%s PATH)" % (
        name, build, name))


def first_error(text):
    """The most telling line of a tool's output, for the table."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"error|unknown|not supported|invalid", ln, re.I):
            return ln[:160]
    return (lines[-1] if lines else "(no message)")[:160]


def run_tool(cmd, log=None):
    """Runs a command; returns (ok, combined output). Logs the command line
    and its output to `log` when given."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if log:
        with open(log, "a") as f:
            f.write("$ %s\n%s\n[exit %d]\n" % (shlex.join(cmd), p.stdout,
                                               p.returncode))
    return p.returncode == 0, p.stdout


def parse_method(spec):
    """'percentile:99.99' -> ('percentile', 99.99); 'entropy' -> ('entropy',
    None)."""
    name, _, arg = spec.partition(":")
    if name not in METHODS:
        die("unknown calibration method %r (have %s)" % (
            spec, ", ".join(METHODS)))
    if arg and name != "percentile":
        die("only percentile takes a value (%r)" % spec)
    return name, (float(arg) if arg else None)


# ---------------------------------------------------------------------------
# Data


def samples(data, model, split):
    """Sorted sample folders of DATA/<model>/<split>."""
    d = os.path.join(data, model, split)
    if not os.path.isdir(d):
        die("%s is missing; run python -m scripts.quant.make_data --out %s" % (
            d, data))
    return [os.path.join(d, s) for s in sorted(os.listdir(d))
            if os.path.isdir(os.path.join(d, s))]


def labels(data, model):
    """The synthetic labels of the evaluation samples, when make_data.py
    recorded them: {sample folder name: class index}."""
    import json
    path = os.path.join(data, model, "meta.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        meta = json.load(f)
    return {"%03d" % s["index"]: s["label"]
            for s in meta["samples"].get("eval", []) if "label" in s}


# ---------------------------------------------------------------------------
# Building the variants


def ort_stand_in(model_path, calib_dirs, input_name, method, percentile,
                 out_path):
    """Quantizes with onnxruntime.quantization (see the top of the file);
    writes the QDQ model to out_path."""
    from onnxruntime.quantization import (CalibrationDataReader,
                                          CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        """The calibration samples; set_range lets ORT calibrate in chunks
        (extra option CalibStridedMinMax), so that it does not hold every
        activation of all samples at once."""

        def __init__(self):
            self.start, self.end = 0, len(calib_dirs)
            self.pos = 0

        def __len__(self):
            return len(calib_dirs)

        def set_range(self, start_index, end_index):
            self.start, self.end = start_index, end_index
            self.pos = start_index

        def get_next(self):
            if self.pos >= self.end:
                return None
            x = np.load(os.path.join(calib_dirs[self.pos], input_name + ".npy"))
            self.pos += 1
            return {input_name: x}

    pre = out_path + ".pre.onnx"
    quant_pre_process(model_path, pre)
    ort_method = {"minmax": CalibrationMethod.MinMax,
                  "mse": CalibrationMethod.MinMax,
                  "percentile": CalibrationMethod.Percentile,
                  "entropy": CalibrationMethod.Entropy}[method]
    chunk = max(d for d in (1, 2, 3, 4) if len(calib_dirs) % d == 0)
    extra = {"CalibStridedMinMax": chunk}
    if percentile is not None:
        extra["CalibPercentile"] = percentile
    quantize_static(pre, out_path, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=ort_method,
                    extra_options=extra)
    os.remove(pre)


def build_variant(task):
    """One compile job (run in a worker process). Returns a dict: name,
    dlcx (path or None), qdq (path or None), error, notes, seconds."""
    t0 = time.time()
    name = task["name"]
    res = {"name": name, "dlcx": None, "qdq": None, "error": None,
           "notes": []}
    log = task["log"]
    pins = ["--input-shape=" + p for p in task["pins"]]
    dlcx = os.path.join(task["work"], name + ".dlcx")
    compile_base = [task["dlc_compile"], "--target=cpu"] + pins
    if task["kind"] == "float":
        ok, out = run_tool(compile_base + [task["model"], "-o", dlcx], log)
        res["dlcx"] = dlcx if ok else None
        res["error"] = None if ok else first_error(out)
    elif task["kind"] == "stand-in":
        qdq = os.path.join(task["work"], name + ".qdq.onnx")
        try:
            # ORT's calibrators print their progress: into the log.
            with open(log + "." + name, "w") as f, \
                    contextlib.redirect_stdout(f), \
                    contextlib.redirect_stderr(f):
                ort_stand_in(task["model"], task["calib_dirs"], task["input"],
                             task["method"], task["percentile"], qdq)
        except Exception as e:  # noqa: BLE001 (reported in the table)
            res["error"] = "ORT quantize_static: %s" % str(e)[:140]
            return res
        res["qdq"] = qdq
        ok, out = run_tool(compile_base + [qdq, "-o", dlcx], log)
        res["dlcx"] = dlcx if ok else None
        res["error"] = None if ok else first_error(out)
    else:                                           # dlc's own --quantize
        spec = task["method"] + ("" if task["percentile"] is None else
                                 ":%g" % task["percentile"])
        quant = ["--quantize=int8",
                 "--calibration-data=" + task["calib"],
                 "--calibration-method=" + spec] + task["quant_flags"]
        ok, out = run_tool(compile_base + quant + [task["model"], "-o", dlcx],
                           log)
        res["dlcx"] = dlcx if ok else None
        res["error"] = None if ok else first_error(out)
        # What dlc-compile noted about the quantization (--keep-float=auto).
        res["notes"] += [ln.split("note:", 1)[1].strip()[:200]
                         for ln in out.splitlines() if "note:" in ln][:2]
        if ok:
            qdq = os.path.join(task["work"], name + ".qdq.onnx")
            ok, out = run_tool(compile_base + quant + [
                "--emit=qdq-onnx", task["model"], "-o", qdq], log)
            if ok and os.path.exists(qdq):
                res["qdq"] = qdq
            else:
                res["notes"].append("--emit=qdq-onnx: " + first_error(out))
    res["seconds"] = time.time() - t0
    return res


# ---------------------------------------------------------------------------
# Running and comparing


def dlc_run(dlc_run_path, dlcx, input_name, npy, output_names, threads):
    """Runs an artifact on one input; returns its outputs in order."""
    with tempfile.TemporaryDirectory(prefix="dlc-quant-") as out:
        cmd = [dlc_run_path, dlcx, "--input", "%s=%s" % (input_name, npy),
               "--output-dir", out, "--threads", str(threads)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (shlex.join(cmd),
                                           first_error(p.stdout)))
        return [np.load(os.path.join(out, n + ".npy")) for n in output_names]


def cosine(a, b):
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(np.dot(a, b) / (na * nb))


def compare(ref, got):
    """Per output: (cosine, max abs error, max excess over the float
    tolerance), plus top-1 equality of the first output's argmax (for
    classifiers)."""
    per = []
    for r, g in zip(ref, got):
        if r.shape != g.shape:
            raise RuntimeError("shape %s vs %s" % (g.shape, r.shape))
        err = np.abs(g.astype(np.float64) - r)
        per.append((cosine(r, g), float(err.max()),
                    float((err - (FLOAT_ATOL + FLOAT_RTOL * np.abs(r))).max())))
    top1 = bool(np.argmax(ref[0], axis=-1).ravel()[0] ==
                np.argmax(got[0], axis=-1).ravel()[0])
    return per, top1


def evaluate_sample(ctx, sample):
    """Runs every variant on one sample; returns {comparison key: result}."""
    npy = os.path.join(sample, ctx["input"] + ".npy")
    x = np.load(npy)
    names = ctx["outputs"]
    res = {}
    ref = dlc_run(ctx["dlc_run"], ctx["float"], ctx["input"], npy, names,
                  ctx["threads"])
    ort_ref = ctx["ort_float"].run(names, {ctx["input"]: x})
    res["float_vs_ort"] = compare(ort_ref, ref)
    res["float_top1"] = int(np.argmax(ref[0], axis=-1).ravel()[0])
    for method, v in ctx["variants"].items():
        if not v.get("dlcx"):
            continue
        got = dlc_run(ctx["dlc_run"], v["dlcx"], ctx["input"], npy, names,
                      ctx["threads"])
        res[(method, "int8")] = compare(ref, got)
        res[(method, "int8_top1")] = int(np.argmax(got[0], axis=-1).ravel()[0])
        if v.get("session") is not None:
            q = v["session"].run(names, {ctx["input"]: x})
            res[(method, "qdq")] = compare(q, got)
            res[(method, "qdq_float")] = compare(ort_ref, q)
    return os.path.basename(sample), res


# ---------------------------------------------------------------------------
# The table


def fmt_pct(k, n):
    return "%.1f%% (%d/%d)" % (100.0 * k / n, k, n) if n else "n/a"


def verdict(ok):
    return "yes" if ok else "**NO**"


def model_rows(name, model, results, variants, method_specs, cosine_on,
               truth):
    """The table rows of one model."""
    rows = []
    kind = model.kind
    n = len(results)
    outs = variants["__outputs__"]
    fl = [r["float_vs_ort"] for r in results.values()]
    worst = max(p[1] for per, _ in fl for p in per)
    excess = max(p[2] for per, _ in fl for p in per)
    rows.append((name, "float", "dlc vs ONNX Runtime: max abs error",
                 "%.3g (%d samples, %d outputs)" % (worst, n, len(outs)),
                 verdict(excess <= 0)))
    if kind == "classifier":
        k = sum(t for _, t in fl)
        rows.append((name, "float", "dlc vs ONNX Runtime: top-1 agreement",
                     fmt_pct(k, n), verdict(k == n)))
        if truth:
            k = sum(truth.get(s) == r["float_top1"] for s, r in results.items())
            rows.append((name, "float", "accuracy on the synthetic labels",
                         fmt_pct(k, n), "—"))
    for spec in method_specs:
        v = variants[spec]
        label = spec + (" (ORT %s)" % v["ort_method"] if v.get("ort_method")
                        else "")
        if not v.get("dlcx"):
            rows.append((name, label, "compile", v.get("error") or "failed",
                         verdict(False)))
            continue
        cmp8 = [r[(spec, "int8")] for r in results.values()]
        if kind == "classifier":
            k = sum(t for _, t in cmp8)
            rows.append((name, label, "INT8 vs float: top-1 agreement",
                         fmt_pct(k, n), verdict(100.0 * k / n >= TOP1_MIN)))
            rows.append((name, label, "INT8 vs float: max abs error of %s"
                         % outs[0], "%.3g" % max(per[0][1] for per, _ in cmp8),
                         "—"))
            if truth:
                k = sum(truth.get(s) == r[(spec, "int8_top1")]
                        for s, r in results.items())
                rows.append((name, label, "INT8 accuracy on the synthetic "
                             "labels", fmt_pct(k, n), "—"))
        else:
            for i, out in enumerate(outs):
                cs = np.array([per[i][0] for per, _ in cmp8])
                judged = cs.min() if cosine_on == "min" else cs.mean()
                rows.append((name, label, "INT8 vs float: cosine of %s" % out,
                             "mean %.5f, min %.5f; max abs error %.3g" % (
                                 cs.mean(), cs.min(),
                                 max(per[i][1] for per, _ in cmp8)),
                             verdict(judged >= COSINE_MIN)))
        if v.get("qdq_ort"):
            cq = [r[(spec, "qdq")] for r in results.values()
                  if (spec, "qdq") in r]
            what = "QDQ model in ONNX Runtime vs dlc INT8"
            if kind == "classifier":
                k = sum(t for _, t in cq)
                rows.append((name, label, what + ": top-1 agreement",
                             fmt_pct(k, len(cq)),
                             verdict(100.0 * k / len(cq) >= TOP1_MIN)))
                rows.append((name, label, what + ": max abs error",
                             "%.3g" % max(per[0][1] for per, _ in cq), "—"))
            else:
                means = [np.mean([per[i][0] for per, _ in cq])
                         for i in range(len(outs))]
                mins = [min(per[i][0] for per, _ in cq)
                        for i in range(len(outs))]
                i = int(np.argmin(means))
                rows.append((name, label, what + ": cosine, worst output (%s)"
                             % outs[i], "mean %.5f, min %.5f; max abs error "
                             "%.3g" % (means[i], min(mins), max(
                                 p[1] for per, _ in cq for p in per)),
                             verdict((min(mins) if cosine_on == "min" else
                                      means[i]) >= COSINE_MIN)))
        if v.get("qdq_ort"):
            cf_ = [r[(spec, "qdq_float")] for r in results.values()
                   if (spec, "qdq_float") in r]
            what = "QDQ model in ONNX Runtime vs float (both in ORT)"
            if kind == "classifier":
                rows.append((name, label, what + ": top-1 agreement",
                             fmt_pct(sum(t for _, t in cf_), len(cf_)), "—"))
            else:
                means = [np.mean([per[i][0] for per, _ in cf_])
                         for i in range(len(outs))]
                i = int(np.argmin(means))
                rows.append((name, label, what + ": cosine, worst output (%s)"
                             % outs[i], "mean %.5f, min %.5f" % (
                                 means[i], min(per[i][0] for per, _ in cf_)),
                             "—"))
        for note in v.get("notes", []):
            rows.append((name, label, "note", note, "—"))
    return rows


def markdown(rows):
    lines = ["| model | method | metric | value | pass |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s |" % " | ".join(str(c).replace("|", "\\|")
                                           for c in r))
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory with bin/dlc-compile, bin/dlc-run")
    ap.add_argument("--dlc-compile", help="overrides --build")
    ap.add_argument("--dlc-run", help="overrides --build")
    ap.add_argument("--data", required=True, help="make_data.py's --out")
    ap.add_argument("--models", default="orientation,layout")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="minmax, percentile[:P], entropy, mse")
    ap.add_argument("--stand-in-ort", action="store_true",
                    help="quantize with ONNX Runtime instead of dlc")
    ap.add_argument("--quant-flag", action="append", default=[],
                    metavar="FLAG", help="extra dlc-compile flag for the "
                    "quantized compiles, e.g. --quant-flag=--keep-float="
                    "auto:0.05 (repeatable)")
    ap.add_argument("--eval", type=int, help="use the first N eval samples")
    ap.add_argument("--cosine-on", choices=("mean", "min"), default="mean",
                    help="which cosine over the samples a detector's row is "
                         "judged by (%(default)s)")
    ap.add_argument("--doc", help="markdown file to put the table in")
    ap.add_argument("--work", default=DEFAULT_WORK)
    ap.add_argument("--cache", default=M.DEFAULT_CACHE, help="wheel cache")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    dlc_compile = find_tool(args.build, "dlc-compile", args.dlc_compile)
    dlc_run_path = find_tool(args.build, "dlc-run", args.dlc_run)
    method_specs = [m for m in args.methods.split(",") if m]
    parsed = {m: parse_method(m) for m in method_specs}
    names = [m for m in args.models.split(",") if m]
    for n in names:
        if n not in M.MODELS:
            die("unknown model %r (have %s)" % (n, ", ".join(M.MODELS)))
    mode = "stand-in" if args.stand_in_ort else "dlc"
    rows = []
    t_start = time.time()
    for name in names:
        model = M.MODELS[name]
        path = M.model_path(name, args.cache)
        work = os.path.join(args.work, mode, name)
        os.makedirs(work, exist_ok=True)
        log = os.path.join(work, "tools.log")
        if os.path.exists(log):
            os.remove(log)
        calib = os.path.join(args.data, name, "calib")
        calib_dirs = samples(args.data, name, "calib")
        eval_dirs = samples(args.data, name, "eval")[:args.eval]
        common = {"model": path, "pins": model.pins, "work": work, "log": log,
                  "dlc_compile": dlc_compile, "input": model.input_name,
                  "calib": os.path.abspath(calib),
                  "calib_dirs": calib_dirs, "quant_flags": args.quant_flag}
        tasks = [dict(common, name="float", kind="float")]
        for spec in method_specs:
            method, pct = parsed[spec]
            tasks.append(dict(common, name="int8-" + re.sub(
                r"[^A-Za-z0-9.]", "_", spec), kind=mode, method=method,
                percentile=pct, spec=spec))
        print("%s: building float + %d INT8 variants (%s)..." % (
            name, len(method_specs), mode), file=sys.stderr)
        import multiprocessing
        with cf.ProcessPoolExecutor(
                args.jobs, mp_context=multiprocessing.get_context("spawn")) \
                as pool:
            built = list(pool.map(build_variant, tasks))
        for b in built:
            print("  %-22s %s%s" % (b["name"], "ok" if b["dlcx"] else
                                    "FAILED: %s" % b["error"],
                                    " (%.0f s)" % b["seconds"]
                                    if "seconds" in b else ""),
                  file=sys.stderr)
        fl = built[0]
        if not fl["dlcx"]:
            rows.append((name, "float", "compile", fl["error"],
                         verdict(False)))
            continue
        ort_float = zoo_common.ort_session(path)
        outputs = [o.name for o in ort_float.get_outputs()]
        variants = {"__outputs__": outputs}
        for spec, b, t in zip(method_specs, built[1:], tasks[1:]):
            v = dict(b)
            if mode == "stand-in":
                v["ort_method"] = {"mse": "MinMax", "minmax": "MinMax",
                                   "percentile": "Percentile",
                                   "entropy": "Entropy"}[t["method"]]
            v["session"] = None
            if b.get("qdq") and b.get("dlcx"):
                v["session"] = zoo_common.ort_session(b["qdq"])
                v["qdq_ort"] = True
            variants[spec] = v
        ctx = {"input": model.input_name, "outputs": outputs,
               "dlc_run": dlc_run_path, "float": fl["dlcx"],
               "ort_float": ort_float, "threads": 1 if args.jobs > 1 else 0,
               "variants": {s: variants[s] for s in method_specs}}
        print("%s: running %d eval samples..." % (name, len(eval_dirs)),
              file=sys.stderr)
        t0 = time.time()
        with cf.ThreadPoolExecutor(args.jobs) as pool:
            results = dict(pool.map(lambda s: evaluate_sample(ctx, s),
                                    eval_dirs))
        print("  %.0f s" % (time.time() - t0), file=sys.stderr)
        rows += model_rows(name, model, results, variants, method_specs,
                           args.cosine_on, labels(args.data, name))

    table = markdown(rows)
    print(table)
    failed = [r for r in rows if r[4] == verdict(False)]
    print("\n%d rows, %d failed (%.0f s)" % (len(rows), len(failed),
                                             time.time() - t_start))
    if args.doc:
        import onnxruntime
        argv = ["python", "-m", "scripts.quant.accuracy"] + sys.argv[1:]
        command = shlex.join(argv).replace(os.path.expanduser("~") + "/",
                                           "~/")
        body = ("```\n%s\n```\n\n%s\n\n%s" % (
            command,
            ("Quantizer: ONNX Runtime %s quantize_static (stand-in), "
             "compiled by dlc." % onnxruntime.__version__)
            if args.stand_in_ort else "Quantizer: dlc-compile --quantize=int8.",
            table))
        zoo_common.write_marked(args.doc, MARK_BEGIN, MARK_END, body,
                                "# Quantization\n", "## Accuracy\n\n")
        print("updated %s" % args.doc)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
