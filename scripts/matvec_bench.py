#!/usr/bin/env python3
"""Single dense layers at small batch, dlc against ONNX Runtime.

Writes one-layer ONNX models (random weights, a bias) and times dlc-run
--bench and ONNX Runtime on them in alternating rounds: the measurement
behind docs/benchmarks.md, "Matrix-vector products at batch 1". Each spec
is `matmul:K:N` (MatMul [M, K] x [K, N], M = --batch) or `gemm:K:N` (Gemm
with transB, [M, K] x [N, K]^T, as PyTorch exports nn.Linear on 2-D
inputs). Prints a markdown table of medians over the rounds.

  python -m scripts.matvec_bench --build build
  python -m scripts.matvec_bench --build build --specs gemm:512:1000 \\
      --batch 16 --threads 2
  python -m scripts.matvec_bench --build build \\
      --target cpu:x86_64-linux-gnu:+avx2,+fma --specs matmul:512:2048
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from scripts.zoo import common

DEFAULT_SPECS = ("matmul:1024:256,matmul:256:1024,matmul:512:2048,"
                 "matmul:1280:1000")


def write_model(path, kind, k, n, batch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((k, n) if kind == "matmul" else (n, k))
    inits = [numpy_helper.from_array((w * 0.05).astype(np.float32), "W"),
             numpy_helper.from_array(
                 rng.standard_normal(n).astype(np.float32), "B")]
    if kind == "matmul":
        nodes = [helper.make_node("MatMul", ["x", "W"], ["y"]),
                 helper.make_node("Add", ["y", "B"], ["z"])]
    else:
        nodes = [helper.make_node("Gemm", ["x", "W", "B"], ["z"], transB=1)]
    graph = helper.make_graph(
        nodes, "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [batch, n])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    common.add_tool_args(p)
    p.add_argument("--specs", default=DEFAULT_SPECS)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--target", default="cpu")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=300, help="runs per round")
    args = p.parse_args(argv)
    dlc_compile, dlc_run = common.find_tools(args)
    print("| layer | batch | threads | target | dlc us | ORT us | dlc/ORT |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs.split(","):
            kind, k, n = spec.split(":")
            if kind not in ("matmul", "gemm"):
                sys.exit("error: spec %r: matmul:K:N or gemm:K:N" % spec)
            k, n = int(k), int(n)
            model = os.path.join(tmp, "layer.onnx")
            artifact = os.path.join(tmp, "layer.dlcx")
            write_model(model, kind, k, n, args.batch)
            subprocess.run([dlc_compile, model, "--target=" + args.target,
                            "-o", artifact], check=True)
            sess = common.ort_session(model, threads=args.threads)
            x = np.random.default_rng(1).random(
                (args.batch, k)).astype(np.float32)
            for _ in range(20):
                sess.run(None, {"x": x})
            dlc, ort = [], []
            for _ in range(args.rounds):
                out = subprocess.run(
                    [dlc_run, artifact, "--threads", str(args.threads),
                     "--bench", str(args.runs)],
                    check=True, capture_output=True, text=True).stdout
                dlc.append(common.parse_bench(out)["p50"] * 1e3)
                times = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    sess.run(None, {"x": x})
                    times.append(time.perf_counter() - t)
                ort.append(statistics.median(times) * 1e6)
            d, o = statistics.median(dlc), statistics.median(ort)
            print("| %s [%d x %d] | %d | %d | %s | %.1f | %.1f | %.2f |" % (
                kind, k, n, args.batch, args.threads, args.target, d, o,
                d / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
