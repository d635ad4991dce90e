#!/usr/bin/env python3
"""What a model rewrite costs in accuracy on trained models: dlc-compile
--prune or --precision against float.

For each model of models.py (trained, from PyPI wheels) and each value of
the rewriting option (--flag prune: 2:4, block:4x1:0.2, ...; --flag
precision: fp16, bf16): compile the float model and the rewritten one for
the CPU, run both with dlc-run on the evaluation samples (make_data.py),
and compare: classifiers by top-1 agreement with float and accuracy on the
synthetic labels, detectors by the cosine of each output with float. The
rewritten model that --emit=onnx writes also runs in ONNX Runtime, as the
oracle for dlc's artifact of it (top-1 agreement, max abs error). No
fine-tuning: this measures what the rewrite alone costs. Prints a markdown
table.

  python -m scripts.quant.rewrite_accuracy --build build \\
      --data ~/.cache/dlc/quant/data --models orientation \\
      [--flag prune] [--values 2:4,block:4x1:0.2,magnitude:0.5] [--eval N]
  python -m scripts.quant.rewrite_accuracy --build build \\
      --data ~/.cache/dlc/quant/data --models orientation,layout \\
      --flag precision --values fp16,bf16
"""

import argparse
import os
import subprocess
import sys

from scripts.quant import env

env.ensure()
import numpy as np  # noqa: E402

from scripts.quant import accuracy as A  # noqa: E402
from scripts.quant import models as M  # noqa: E402
from scripts.zoo import common as zoo_common  # noqa: E402


def compile_model(dlc_compile, path, pins, out, extra=()):
    cmd = ([dlc_compile, path, "--target=cpu", "-o", out] +
           ["--input-shape=" + p for p in pins] + list(extra))
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        A.die("%s\n%s" % (" ".join(cmd), p.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(A.ROOT, "build"))
    ap.add_argument("--data", required=True, help="make_data.py's --out")
    ap.add_argument("--models", default="orientation")
    ap.add_argument("--flag", default="prune", choices=["prune", "precision"],
                    help="the dlc-compile option that rewrites the model")
    ap.add_argument("--values", help="comma-separated values of --flag "
                    "(default: 2:4,block:4x1:0.2,magnitude:0.5 for prune, "
                    "fp16,bf16 for precision)")
    ap.add_argument("--eval", type=int, help="the first N eval samples")
    ap.add_argument("--work", default=os.path.join(A.DEFAULT_WORK, "rewrite"))
    ap.add_argument("--cache", default=M.DEFAULT_CACHE, help="wheel cache")
    args = ap.parse_args()
    values = args.values or {"prune": "2:4,block:4x1:0.2,magnitude:0.5",
                             "precision": "fp16,bf16"}[args.flag]
    dlc_compile = A.find_tool(args.build, "dlc-compile")
    dlc_run = A.find_tool(args.build, "dlc-run")
    print("| model | --%s | metric | value |" % args.flag)
    print("|---|---|---|---|")
    for name in args.models.split(","):
        model = M.MODELS[name]
        path = M.model_path(name, args.cache)
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        evals = A.samples(args.data, name, "eval")[:args.eval]
        truth = A.labels(args.data, name)
        flt = os.path.join(work, "float.dlcx")
        compile_model(dlc_compile, path, model.pins, flt)
        outputs = [o.name for o in zoo_common.ort_session(path).get_outputs()]

        def run(dlcx, sample):
            return A.dlc_run(dlc_run, dlcx, model.input_name,
                             os.path.join(sample, model.input_name + ".npy"),
                             outputs, 0)

        floats = {s: run(flt, s) for s in evals}

        def top1(outs):
            return int(np.argmax(outs[0], axis=-1).ravel()[0])

        n = len(evals)
        if model.kind == "classifier" and truth:
            k = sum(truth.get(os.path.basename(s)) == top1(floats[s])
                    for s in evals)
            print("| %s | none | accuracy on the synthetic labels | %s |" % (
                name, A.fmt_pct(k, n)))
        for spec in values.split(","):
            tag = args.flag + "_" + spec.replace(":", "_")
            rewritten_onnx = os.path.join(work, tag + ".onnx")
            rewritten = os.path.join(work, tag + ".dlcx")
            compile_model(dlc_compile, path, model.pins, rewritten_onnx,
                          ["--%s=%s" % (args.flag, spec), "--emit=onnx"])
            compile_model(dlc_compile, rewritten_onnx, model.pins, rewritten)
            got = {s: run(rewritten, s) for s in evals}
            # dlc's artifact of the rewritten model against ONNX Runtime,
            # where ONNX Runtime runs it (its CPU kernels lack some 16-bit
            # operators, BatchNormalization among them).
            try:
                ort = zoo_common.ort_session(rewritten_onnx, optimized=False)
            except Exception as e:  # onnxruntime's own exception types
                ort, why = None, str(e).split(" : ")[-1]
            worst, agree = 0.0, 0
            for s in evals if ort else []:
                x = np.load(os.path.join(s, model.input_name + ".npy"))
                ref = ort.run(outputs, {model.input_name: x})
                worst = max(worst, max(float(np.abs(
                    g.astype(np.float64) - r).max())
                    for g, r in zip(got[s], ref)))
                agree += top1(got[s]) == top1(ref)
            if model.kind == "classifier":
                k = sum(top1(got[s]) == top1(floats[s]) for s in evals)
                print("| %s | %s | top-1 agreement with float | %s |" % (
                    name, spec, A.fmt_pct(k, n)))
                if truth:
                    k = sum(truth.get(os.path.basename(s)) == top1(got[s])
                            for s in evals)
                    print("| %s | %s | accuracy on the synthetic labels | "
                          "%s |" % (name, spec, A.fmt_pct(k, n)))
            else:
                for i, out in enumerate(outputs):
                    cs = np.array([A.cosine(floats[s][i], got[s][i])
                                   for s in evals])
                    print("| %s | %s | cosine of %s with float | mean %.4f, "
                          "min %.4f |" % (name, spec, out, cs.mean(),
                                          cs.min()))
            if ort:
                print("| %s | %s | dlc vs ONNX Runtime on the rewritten "
                      "model | max abs error %.2g, top-1 agreement %s |" % (
                          name, spec, worst, A.fmt_pct(agree, n)))
            else:
                print("| %s | %s | dlc vs ONNX Runtime on the rewritten "
                      "model | ONNX Runtime cannot run it: %s |" % (
                          name, spec, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
