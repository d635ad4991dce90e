#!/usr/bin/env python3
"""What skipping the kernels of untaken branches saves, checked against ORT.

Builds two models and compiles them for the CPU:
- an If on a boolean input whose then branch is eight chained 512x512
  MatMul + Tanh and whose else branch is one Neg;
- a Loop of trip count 16 over a 256x256 MatMul + Tanh whose condition
  (iteration + 1 < K, K an input) ends it after K iterations.
For each value of the condition input (C true/false; K = 0, 1, 4, 16) the
outputs are compared with ONNX Runtime's, then `dlc-run --bench` times the
runs in alternating rounds, and a markdown table of the p50 latencies
(median over rounds) is printed. Without predication every row of a model
would cost what its longest row costs.

  python -m scripts.branch_bench --build /work/build [--rounds 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def if_model(rng):
    w = numpy_helper.from_array(
        (rng.standard_normal((512, 512)) / 23).astype(np.float32), "W")
    nodes, prev = [], "X"
    for i in range(8):
        nodes.append(helper.make_node("MatMul", [prev, "W"], ["m%d" % i]))
        nodes.append(helper.make_node("Tanh", ["m%d" % i], ["t%d" % i]))
        prev = "t%d" % i
    then_g = helper.make_graph(nodes, "then", [], [
        helper.make_tensor_value_info(prev, TensorProto.FLOAT, [512, 512])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["X"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [512, 512])])
    graph = helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], then_branch=then_g,
                          else_branch=else_g)], "if_bench",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [512, 512]),
         helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [512, 512])],
        [w])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 17)])


def loop_model(rng):
    w = numpy_helper.from_array(
        (rng.standard_normal((256, 256)) / 16).astype(np.float32), "W")
    body = helper.make_graph([
        helper.make_node("MatMul", ["s", "W"], ["m"]),
        helper.make_node("Tanh", ["m"], ["so"]),
        helper.make_node("Add", ["i", "one"], ["i1"]),
        helper.make_node("Less", ["i1", "K"], ["co"]),
    ], "body", [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("s", TensorProto.FLOAT, [256, 256])], [
        helper.make_tensor_value_info("co", TensorProto.BOOL, []),
        helper.make_tensor_value_info("so", TensorProto.FLOAT, [256, 256])],
        [numpy_helper.from_array(np.array(1, np.int64), "one")])
    graph = helper.make_graph([
        helper.make_node("Constant", [], ["M"],
                         value=numpy_helper.from_array(np.array(16, np.int64))),
        helper.make_node("Constant", [], ["C0"],
                         value=numpy_helper.from_array(np.array(True))),
        helper.make_node("Loop", ["M", "C0", "X"], ["Y"], body=body),
    ], "loop_bench", [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [256, 256]),
        helper.make_tensor_value_info("K", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [256, 256])],
        [w])
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", 17)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    compile_ = os.path.join(args.build, "bin", "dlc-compile")
    run = os.path.join(args.build, "bin", "dlc-run")
    rng = np.random.default_rng(0)
    work = tempfile.mkdtemp(prefix="dlc-branch-bench-")
    cases = []  # (label, artifact, input flags)
    for name, model, size, control, values in [
            ("If", if_model(rng), 512, "C",
             [np.array(True), np.array(False)]),
            ("Loop", loop_model(rng), 256, "K",
             [np.array(k, np.int64) for k in (0, 1, 4, 16)])]:
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        artifact = os.path.join(work, name + ".dlcx")
        subprocess.run([compile_, path, "-o", artifact], check=True)
        x = rng.standard_normal((size, size)).astype(np.float32)
        np.save(os.path.join(work, name + "_X.npy"), x)
        session = ort.InferenceSession(path,
                                       providers=["CPUExecutionProvider"])
        for v in values:
            tag = "%s_%s" % (name, str(v).lower())
            np.save(os.path.join(work, tag + ".npy"), v)
            np.save(os.path.join(work, tag + "_ref.npy"),
                    session.run(None, {"X": x, control: v})[0])
            flags = ["--input", "X=" + os.path.join(work, name + "_X.npy"),
                     "--input", "%s=%s" % (control,
                                           os.path.join(work, tag + ".npy"))]
            check = subprocess.run(
                [run, artifact] + flags +
                ["--expect", "Y=" + os.path.join(work, tag + "_ref.npy"),
                 "--rtol", "1e-4", "--atol", "1e-5"],
                capture_output=True, text=True)
            if check.returncode != 0:
                sys.exit("%s %s=%s differs from ONNX Runtime:\n%s" %
                         (name, control, v, check.stdout + check.stderr))
            cases.append(("%s, %s = %s" % (name, control, str(v).lower()),
                          artifact, flags))
    p50s = {label: [] for label, _, _ in cases}
    for _ in range(args.rounds):
        for label, artifact, flags in cases:
            out = subprocess.run(
                [run, artifact, "--threads", "1", "--bench", str(args.runs)] +
                flags, capture_output=True, text=True, check=True)
            p50s[label].append(
                float(re.search(r"p50 ([0-9.]+)", out.stdout).group(1)))
    print("| model, condition | p50 ms (median of %d rounds) | range |" %
          args.rounds)
    print("|---|---:|---|")
    for label, _, _ in cases:
        v = p50s[label]
        print("| %s | %.3f | %.3f-%.3f |" %
              (label, statistics.median(v), min(v), max(v)))


if __name__ == "__main__":
    main()
