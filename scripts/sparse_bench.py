#!/usr/bin/env python3
"""Sparse 1x1 convolutions against dense ones: the numbers behind dlc's
sparsity cost model (TargetDescription::sparseStepCost, sparseOutputCost, sparseInputCost).

For 1x1 convolutions of typical shapes (input channels C, output channels
F, pixels P; bias and Relu fused as in a CNN), pruned to 4x1 blocks at
several densities with `dlc-compile --prune=block:4x1:D` (with
--windows, ResNet-18's 3x3 convolutions, C counting channels x taps; or, with
--products, matrix products x[M, K] * w[K, N] + bias pruned to blocks of
--lanes columns: C = K, F = N), the script times
the artifact compiled `--sparsity=off` against `--sparsity=force`
(alternating rounds of `dlc-run --bench`, one thread), prints the ratios,
and fits the model dlc-sparse-contractions uses:

    sparse / dense = (g * s * F * C + a * F + b * C) / (F * C + a * F + b * C)

where s is the share of (row group, input channel) pairs kept, g what a
kept pair costs against a dense multiply-add, and a and b what writing one
output element of a pixel (with its epilogue) and reading one input
element cost in multiply-adds (so that wide layers are compute bound and
narrow ones memory bound). The fit minimizes the squared error of log
ratios over a grid. Put the three numbers in TargetDescription.cpp.

  python -m scripts.sparse_bench --build build [--rounds 3] [--quick]
  python -m scripts.sparse_bench --build build --products [--lanes 16]
  python -m scripts.sparse_bench --build build --windows [--stride 2]
  python -m scripts.sparse_bench --build build \
      --target cpu:x86_64-linux-gnu:+avx2,+fma [--products --lanes 8]
"""

import argparse
import itertools
import math
import os
import statistics
import subprocess
import sys
import tempfile

from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from scripts.ab_bench import bench  # noqa: E402

# (C, F, H, W): MobileNetV2's pointwise shapes and a few wider ones.
SHAPES = [(16, 96, 112, 112), (24, 144, 56, 56), (144, 24, 56, 56),
          (32, 192, 28, 28), (192, 64, 14, 14), (384, 96, 14, 14),
          (576, 160, 7, 7), (960, 320, 7, 7), (64, 64, 56, 56),
          (256, 256, 14, 14)]
DENSITIES = [0.1, 0.2, 0.4, 0.7]
# (M, K, N): BERT's projections and feed-forward layers at 128 tokens, and
# a decoder's at one and 8 tokens.
PRODUCTS = [(128, 128, 128), (128, 128, 512), (128, 512, 128),
            (128, 768, 768), (1, 512, 512), (8, 512, 2048)]


# (C, F, H, W) of ResNet-18's 3x3 convolutions (stride 1, padding 1).
WINDOWS = [(64, 64, 56, 56), (128, 128, 28, 28), (256, 256, 14, 14),
           (512, 512, 7, 7)]


def as_model(graph):
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def conv_model(c, f, h, w, seed, k=1, stride=1):
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((f, c, k, k)) / math.sqrt(c * k * k)).astype(
        np.float32)
    bias = rng.standard_normal(f).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[k // 2] * 4,
                          strides=[stride, stride]),
         helper.make_node("Relu", ["y"], ["z"])], "conv1x1",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
        [helper.make_tensor_value_info(
            "z", TensorProto.FLOAT,
            [1, f, (h - 1) // stride + 1, (w - 1) // stride + 1])],
        [numpy_helper.from_array(weight, "w"),
         numpy_helper.from_array(bias, "b")])
    return as_model(graph)


def product_model(m, k, n, seed):
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("Add", ["y", "b"], ["z"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(weight, "w"),
         numpy_helper.from_array(bias, "b")])
    return as_model(graph)


def kept_share(path, rows):
    """The share of (output group, reduction element) pairs with a nonzero:
    groups of `rows` filters of a convolution, or of `rows` columns of a
    matrix product's [K, N] weight."""
    w = next(numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer
             if len(t.dims) in (2, 4))
    if w.ndim == 2:
        w = w.T
    w = w.reshape(w.shape[0], -1)
    f, c = w.shape[0], w.shape[1]
    groups = (w.reshape(f // rows, rows, c) != 0).any(axis=1)
    return groups.mean()


def predicted(model, s, c, f):
    g, a, b = model
    return (g * s * f * c + a * f + b * c) / (f * c + a * f + b * c)


def fit(rows):
    """(squared log error, (g, a, b)) of the best model on a grid."""
    best = None
    costs = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    for g in np.arange(0.5, 2.01, 0.05):
        for a, b in itertools.product(costs, costs):
            model = (round(float(g), 2), a, b)
            err = sum((math.log(predicted(model, s, c, f)) - math.log(r)) ** 2
                      for c, f, s, r in rows)
            if best is None or err < best[0]:
                best = (err, model)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--quick", action="store_true",
                    help="four shapes, two densities")
    ap.add_argument("--products", action="store_true",
                    help="matrix products (MatMul + bias) instead of 1x1 "
                    "convolutions, pruned to blocks of --lanes columns")
    ap.add_argument("--windows", action="store_true",
                    help="3x3 convolutions (ResNet-18's shapes) instead of "
                    "1x1 ones")
    ap.add_argument("--stride", type=int, default=1,
                    help="with --windows: the convolutions' stride (2: "
                    "ResNet-18's downsampling ones, on its inputs)")
    ap.add_argument("--lanes", type=int, default=16,
                    help="the CPU's f32 lanes (the column groups of matrix "
                    "products: 16 with AVX-512, 8 with AVX2, 4 on NEON)")
    ap.add_argument("--target", default="cpu",
                    help="the CPU target to compile for (the host must run "
                    "it), e.g. cpu:x86_64-linux-gnu:+avx2,+fma")
    args = ap.parse_args()
    compiler = os.path.join(args.build, "bin", "dlc-compile")
    runner = os.path.join(args.build, "bin", "dlc-run")
    if args.products:
        shapes = PRODUCTS[::3] if args.quick else PRODUCTS
        group = args.lanes
        print("| M | K (C) | N (F) | --prune | pairs kept | sparse / dense "
              "(median of rounds, range) |")
    else:
        shapes = WINDOWS if args.windows else SHAPES
        shapes = shapes[::3] if args.quick else shapes
        group = 4
        print("| C | F | pixels | --prune | pairs kept | sparse / dense "
              "(median of rounds, range) |")
    densities = [0.2, 0.4] if args.quick else DENSITIES
    rows = []
    print("|---:|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for shape, d in itertools.product(shapes, densities):
            dense = os.path.join(work, "dense.onnx")
            if args.products:
                m, c, f = shape
                onnx.save(product_model(m, c, f, seed=c * 1000 + f), dense)
                first = m
            else:
                c, f, h, w = shape
                if args.stride > 1:
                    c, f, h, w = c // 2, f, h * 2, w * 2
                onnx.save(conv_model(c, f, h, w, seed=c * 1000 + f,
                                     k=3 if args.windows else 1,
                                     stride=args.stride), dense)
                first = c
            pruned = os.path.join(work, "pruned.onnx")
            spec = "block:%dx1:%g" % (group, d)
            subprocess.run([compiler, dense, "--prune=" + spec, "--emit=onnx",
                            "-o", pruned], check=True, capture_output=True)
            arts = []
            for mode in ("off", "force"):
                art = os.path.join(work, mode + ".dlcx")
                subprocess.run([compiler, pruned, "--sparsity=" + mode,
                                "--target=" + args.target, "-o", art],
                               check=True, capture_output=True)
                arts.append(art)
            ratios = []
            for _ in range(args.rounds):
                t = [bench(runner, a, args.runs, 1)[0] for a in arts]
                ratios.append(t[1] / t[0])
            s = kept_share(pruned, group)
            r = statistics.median(ratios)
            rows.append((c * (9 if args.windows else 1), f, s, r))
            third = f if args.products else h * w
            second = c if args.products else f
            print("| %d | %d | %d | %s | %.2f | %.2f (%.2f-%.2f) |" % (
                first, second, third, spec, s, r, min(ratios), max(ratios)))
            sys.stdout.flush()
    err, model = fit(rows)
    print()
    print("fit: sparseStepCost (g) = %.2f, sparseOutputCost (a) = %g, "
          "sparseInputCost (b) = %g, rms log error %.3f"
          % (model + (math.sqrt(err / len(rows)),)))
    for c, f, s, r in rows:
        print("  C %d F %d kept %.2f: measured %.2f, model %.2f" % (
            c, f, s, r, predicted(model, s, c, f)))


if __name__ == "__main__":
    main()
