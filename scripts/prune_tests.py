#!/usr/bin/env python3
"""dlc-compile --prune end to end, with ONNX Runtime as the oracle.

For zoo models (a keyword spotter, MobileNetV2, BERT-tiny) and each pruning
pattern (2:4, 4x1 and 16x1 blocks at 20% density, 50% unstructured):
  1. dlc-compile --prune=SPEC --emit=onnx writes the pruned model, with its
     report against the unpruned model on two calibration samples;
  2. numpy checks the pruned weights against the original ones, with no
     help from the compiler: every Conv, Gemm and MatMul weight seen as
     [outputs, reduction] has the pattern (each group of 4 along the
     reduction at most 2 nonzeros; whole Rx1 blocks zero or kept, at most
     ceil(0.2 n) of them kept; at most ceil(0.5 n) nonzeros), what is kept
     is unchanged, and nothing dropped is larger than what is kept (by
     magnitude, or by block sum of squares);
  3. ONNX Runtime runs the pruned model, and dlc's artifacts of it match it
     at the zoo's tolerance on each target: cpu (two samples), vulkan (one:
     lavapipe is slow), cuda (PTX checked by ptxas, no GPU here); compiling
     with --prune directly gives the same artifact as compiling the model
     --emit=onnx wrote; on cpu also with --sparsity=force (every 1x1
     convolution with a skippable (4-filter group, input channel) pair
     sparse; the default, auto, makes sparse only what the cost model
     predicts faster), both counted from --stats.
Prints one row per model and pattern: zeros, the end-to-end error the
pruning itself causes (the report's), and dlc's largest error against ONNX
Runtime. Exits 1 on any failure.

  python -m scripts.prune_tests --build build [--models kws_dscnn]
  python -m scripts.prune_tests --build build --models resnet18 \
      --specs block:4x1:0.2 --targets cpu
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile

from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from scripts.artifact_checks import fail, run, run_artifact  # noqa: E402
from scripts.zoo import common, models as zoo  # noqa: E402

# 16x1: the column groups of sparse matrix products with AVX-512's 16
# lanes (4x1 blocks leave few whole groups of 16 columns zero).
SPECS = ["2:4", "block:4x1:0.2", "block:16x1:0.2", "magnitude:0.5"]
DEFAULT_MODELS = "kws_dscnn,mobilenetv2,bert_tiny"


def constants(model):
    """Initializers and Constant nodes' values, by name."""
    values = {t.name: numpy_helper.to_array(t)
              for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(a.t)
    return values


def as_rows(node, w):
    """The weight as [outputs, reduction], as dlc-compile --prune sees it."""
    if node.op_type == "Conv":
        return w.reshape(w.shape[0], -1)
    trans_b = any(a.name == "transB" and a.i for a in node.attribute)
    return w if node.op_type == "Gemm" and trans_b else w.T


def check_pattern(spec, layer, before, after):
    """Raises when `after` is not `spec` applied to `before` ([rows, cols])."""
    kept = after != 0
    if not np.array_equal(after[kept], before[kept]):
        raise AssertionError("%s: kept weights changed" % layer)
    mag = np.abs(before)
    if spec == "2:4":
        rows, cols = before.shape
        for c in range(0, cols, 4):
            g_kept, g_mag = kept[:, c:c + 4], mag[:, c:c + 4]
            if (g_kept.sum(axis=1) > 2).any():
                raise AssertionError("%s: a group of 4 keeps more than 2"
                                     % layer)
            # In each group, nothing dropped outweighs what is kept.
            lo = np.where(g_kept, g_mag, np.inf).min(axis=1)
            hi = np.where(~g_kept & (before[:, c:c + 4] != 0),
                          g_mag, -np.inf).max(axis=1)
            if (hi > lo).any():
                raise AssertionError("%s: 2:4 dropped a larger weight"
                                     % layer)
    elif spec.startswith("block:"):
        shape, density = spec.split(":")[1:]
        r = int(shape.split("x")[0])
        rows, cols = before.shape
        pad = (-rows) % r
        b = np.pad(before, ((0, pad), (0, 0))).reshape(-1, r, cols)
        a = np.pad(after, ((0, pad), (0, 0))).reshape(-1, r, cols)
        score = (b.astype(np.float64) ** 2).sum(axis=1)      # [blocks, cols]
        block_kept = (a != 0).any(axis=1)
        partial = ((a != 0) != (b != 0)).any(axis=1) & block_kept
        if partial.any():
            raise AssertionError("%s: a %s block is partly zeroed"
                                 % (layer, shape))
        limit = math.ceil(float(density) * score.size)
        if block_kept.sum() > limit:
            raise AssertionError("%s: %d blocks kept, at most %d" % (
                layer, block_kept.sum(), limit))
        dropped = score[~block_kept]
        if block_kept.any() and dropped.size and \
                dropped.max() > score[block_kept].min():
            raise AssertionError("%s: a dropped block outweighs a kept one"
                                 % layer)
    else:
        limit = math.ceil(0.5 * before.size)
        if kept.sum() > limit:
            raise AssertionError("%s: %d weights kept, at most %d" % (
                layer, kept.sum(), limit))
        dropped = mag[~kept & (before != 0)]
        if dropped.size and kept.any() and dropped.max() > mag[kept].min():
            raise AssertionError("%s: a dropped weight outweighs a kept one"
                                 % layer)
    return int((~kept).sum()), before.size


def check_weights(spec, original, pruned):
    """Every pruned layer's pattern; returns (zeros, elements, layers)."""
    before, after = constants(original), constants(pruned)
    zeros = elements = layers = 0
    for node in pruned.graph.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or \
                len(node.input) < 2 or node.input[1] not in after:
            continue
        orig = next(n for n in original.graph.node
                    if list(n.output) == list(node.output))
        if orig.input[1] not in before:
            continue
        z, n = check_pattern(spec, node.output[0],
                             as_rows(orig, before[orig.input[1]]),
                             as_rows(node, after[node.input[1]]))
        zeros, elements, layers = zeros + z, elements + n, layers + 1
    return zeros, elements, layers


def check_model(entry, args, work):
    name = entry["name"]
    path = os.path.join(zoo.DEFAULT_OUT, entry["file"])
    original = onnx.load(path)
    flags = common.compile_flags(entry, {})
    calib = os.path.join(work, name + "-calib")
    for s in range(2):
        d = os.path.join(calib, "%03d" % s)
        os.makedirs(d, exist_ok=True)
        for k, v in common.make_inputs(entry, seed=100 + s).items():
            np.save(os.path.join(d, k + ".npy"), v)
    feeds = [common.make_inputs(entry, seed=s) for s in range(2)]
    tol = entry["tolerance"]
    rows = []
    for spec in args.specs:
        tag = "%s %s" % (name, spec)
        d = os.path.join(work, name + "-" + spec.replace(":", "_"))
        os.makedirs(d, exist_ok=True)
        pruned_path = os.path.join(d, "pruned.onnx")
        report = os.path.join(d, "report.json")
        run([args.dlc_compile, path, "--prune=" + spec, "--emit=onnx",
             "-o", pruned_path, "--calibration-data=" + calib,
             "--quant-report=" + report] + flags)
        pruned = onnx.load(pruned_path)
        try:
            zeros, elements, layers = check_weights(spec, original, pruned)
        except AssertionError as e:
            fail("%s: %s" % (tag, e))
        if layers == 0:
            fail("%s: no pruned layer found" % tag)
        with open(report) as f:
            end_to_end = json.load(f)["end_to_end_error"]
        session = common.ort_session(pruned_path, optimized=False)
        out_names = [o["name"] for o in entry["outputs"]]
        refs = [session.run(out_names, f) for f in feeds]
        worst = 0.0
        sparse = {}
        # CPUs: the cost model's choice (auto, the default) and every
        # sparse-capable layer sparse (force), each against ONNX Runtime.
        builds = [(t, []) for t in args.targets]
        builds += [(t, ["--sparsity=force"]) for t in args.targets
                   if t.startswith("cpu")]
        for target, extra in builds:
            artifact = os.path.join(d, common.target_dir_name(target) +
                                    "".join(extra).replace("=", "_") +
                                    ".dlcx")
            cubin = ["--cubin=false"] if target.startswith("cuda") else []
            out = run([args.dlc_compile, pruned_path, "--target=" + target,
                       "--stats", "-o", artifact] + flags + extra + cubin)
            if target.startswith("cpu"):
                m = re.search(r"sparse kernels: +(\d+)", out.stderr)
                if not m:
                    fail("%s: no sparse kernels line in --stats" % tag)
                sparse["force" if extra else "auto"] = int(m.group(1))
            if target == args.targets[0] and not extra:
                direct = artifact + ".direct"
                run([args.dlc_compile, path, "--prune=" + spec,
                     "--target=" + target, "-o", direct] + flags)
                with open(artifact, "rb") as a, open(direct, "rb") as b:
                    if a.read() != b.read():
                        fail("%s: --prune compiled directly differs from "
                             "the model --emit=onnx wrote, compiled" % tag)
            if target.startswith("cuda"):
                continue
            samples = 1 if target.startswith("vulkan") else len(feeds)
            for s in range(samples):
                got = run_artifact(args.dlc_run, artifact, feeds[s],
                                   "%s-out%d" % (artifact, s))
                for o, ref in zip(out_names, refs[s]):
                    err = np.abs(got[o].astype(np.float64) - ref)
                    bound = tol["atol"] + tol["rtol"] * np.abs(ref)
                    if not (err <= bound).all():
                        fail("%s on %s, sample %d, output %s: max abs error "
                             "%.3g beyond rtol %g atol %g" % (
                                 tag, " ".join([target] + extra), s, o,
                                 err.max(), tol["rtol"],
                                 tol["atol"]))
                    worst = max(worst, float(err.max()))
        rows.append((name, spec, layers, 100.0 * zeros / elements,
                     end_to_end, worst, sparse))
    return rows


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--targets", default="cpu,vulkan,cuda:sm_87")
    ap.add_argument("--specs", default=",".join(SPECS),
                    help="the --prune patterns (default: %(default)s)")
    args = ap.parse_args()
    args.specs = args.specs.split(",")
    args.dlc_compile = os.path.join(args.build, "bin", "dlc-compile")
    args.dlc_run = os.path.join(args.build, "bin", "dlc-run")
    args.targets = args.targets.split(",")
    names = args.models.split(",")
    manifest = zoo.ensure_models(names=names)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-prune-") as work:
        for n in names:
            rows += check_model(manifest["models"][n], args, work)
    print("| model | --prune | layers | zero weights | end-to-end error "
          "vs unpruned | dlc vs ONNX Runtime (%s) | sparse kernels on cpu "
          "(auto, force) |" % ", ".join(
              t for t in args.targets if not t.startswith("cuda")))
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, spec, layers, zero, e2e, worst, sparse in rows:
        print("| %s | %s | %d | %.1f%% | %.3g | %.2g | %s, %s |" % (
            name, spec, layers, zero, e2e, worst, sparse.get("auto", "-"),
            sparse.get("force", "-")))
    print("prune_tests: all passed")


if __name__ == "__main__":
    main()
