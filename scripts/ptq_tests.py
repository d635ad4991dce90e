#!/usr/bin/env python3
"""Post-training quantization end to end: dlc-compile --quantize, ONNX
Runtime as the oracle.

For small float models with the structures PTQ has to get right (Conv
chains with Relu and Clip(0, 6) that fold into the 8-bit encoding, a
depthwise conv, a residual Add, a Gemm classifier behind a Reshape, a
MatMul MLP on rank-3 input with a Sigmoid between; a BatchNormalization
that must fold into its Conv), this script:

  1. writes the float model and random calibration (16) and evaluation (8)
     samples in --calibration-data's layout (one folder per sample, one
     <input>.npy per graph input);
  2. for each calibration method, quantizes with `dlc-compile --quantize=int8
     --emit=qdq-onnx` and compiles that QDQ model for each target; on the
     first target with the first method it also compiles
     `--quantize=int8 --target=...` directly and requires the same
     artifact, byte for byte (calibration runs once per method instead of
     once per target: --quantize is the QDQ rewrite followed by the
     ordinary compile of the rewritten model);
  3. checks on the evaluation samples that
     - ONNX Runtime runs the QDQ model dlc wrote, and dlc's artifact agrees
       with it within one step of the output's 8-bit encoding (the two
       round intermediate values independently, so a step of difference
       may appear; more means different arithmetic),
     - the quantized outputs stay near float (relative RMS error under a
       bound per model), and
     - --quant-report's JSON names every quantized layer with finite errors.

  python -m scripts.ptq_tests --build build \\
      --targets cpu,vulkan,vulkan:+dot8 --zoo mobilenetv2

--zoo adds models of the zoo (MobileNetV2: 53 quantized layers) with the
minmax and entropy methods, calibrated on their manifest's input
distributions; on Vulkan (Mesa's lavapipe, a CPU implementation: 6 s per
run of the QDQ MobileNetV2) they run one of their four evaluation samples.

CUDA targets are compiled only (dlc-compile assembles the PTX with ptxas
when it is installed); every other target runs here.

Deterministic (fixed seeds); nothing is downloaded. Exits non-zero on the
first failing check, naming the model, method and target.
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from scripts.targets import split_targets
from scripts.zoo.common import add_tool_args, find_tools, ort_options

METHODS = ["minmax", "percentile:99.9", "entropy", "mse"]


# Known failures, by (model, target): the run must fail with this text (a
# pass is reported as unexpected, so that the fix gets recorded here).
EXPECTED_FAILURES = {}


def weight(rng, name, shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    scale = scale or np.sqrt(2.0 / fan_in)
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn(rng):
    """Conv-Relu, Conv-BatchNormalization-Clip(0,6), depthwise Conv-Relu,
    residual Add, global pool, Reshape to a computed shape, Gemm
    classifier."""
    inits = [
        weight(rng, "w1", [16, 3, 3, 3]), weight(rng, "b1", [16], 0.1),
        weight(rng, "w2", [16, 16, 1, 1]), weight(rng, "b2", [16], 0.1),
        weight(rng, "w3", [16, 1, 3, 3]), weight(rng, "b3", [16], 0.1),
        weight(rng, "w4", [10, 16]), weight(rng, "b4", [10], 0.1),
        numpy_helper.from_array(rng.uniform(0.5, 2.0, 16).astype(np.float32),
                                "bn_scale"),
        numpy_helper.from_array(rng.uniform(-0.5, 0.5, 16).astype(np.float32),
                                "bn_bias"),
        numpy_helper.from_array(rng.uniform(-0.5, 0.5, 16).astype(np.float32),
                                "bn_mean"),
        numpy_helper.from_array(rng.uniform(0.5, 2.0, 16).astype(np.float32),
                                "bn_var"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(6.0, np.float32), "six"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("BatchNormalization",
                         ["c2", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["n2"], name="bn2"),
        helper.make_node("Clip", ["n2", "zero", "six"], ["r2"], name="clip2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="dwconv3",
                         pads=[1, 1, 1, 1], group=16),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Add", ["r3", "r1"], ["sum"], name="residual"),
        helper.make_node("GlobalAveragePool", ["sum"], ["pool"], name="gap"),
        helper.make_node("Shape", ["pool"], ["pshape"], name="shape"),
        helper.make_node("Gather", ["pshape", "zero_s"], ["batch"],
                         name="batch", axis=0),
        helper.make_node("Unsqueeze", ["batch", "zero_i"], ["batch1"],
                         name="batch1"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["flat_shape"],
                         name="flat_shape", axis=0),
        helper.make_node("Reshape", ["pool", "flat_shape"], ["flat"],
                         name="flatten"),
        helper.make_node("Gemm", ["flat", "w4", "b4"], ["logits"], name="fc",
                         transB=1),
    ]
    inits += [numpy_helper.from_array(np.array(0, np.int64), "zero_s"),
              numpy_helper.from_array(np.array([0], np.int64), "zero_i"),
              numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(
        nodes, "ptq_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits)
    return graph, {"x": (1, 3, 32, 32)}


def mlp(rng):
    """MatMul + bias Add, Sigmoid, MatMul on a (1, 8, 64) sequence."""
    inits = [weight(rng, "w1", [64, 128]), weight(rng, "b1", [128], 0.1),
             weight(rng, "w2", [128, 32])]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Sigmoid", ["hb"], ["a"], name="act"),
        helper.make_node("MatMul", ["a", "w2"], ["y"], name="fc2"),
    ]
    graph = helper.make_graph(
        nodes, "ptq_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 32])],
        inits)
    return graph, {"x": (1, 8, 64)}


# name -> (builder, largest relative RMS error of the INT8 output vs float)
MODELS = {"cnn": (cnn, 0.08), "mlp": (mlp, 0.08)}


def write_samples(directory, shapes, count, rng):
    for i in range(count):
        sample = os.path.join(directory, "%03d" % i)
        os.makedirs(sample)
        for name, shape in shapes.items():
            np.save(os.path.join(sample, name + ".npy"),
                    rng.standard_normal(shape).astype(np.float32))


def zoo_model(name, mdir):
    """A float model of the zoo with calibration (8) and evaluation (4)
    samples drawn from its manifest's input distributions: its path,
    input shapes, dlc-compile flags and the error bound against float."""
    from scripts.zoo import common as zoo_common
    from scripts.zoo import models as zoo_models
    manifest = zoo_models.ensure_models(names=[name])
    entry = manifest["models"][name]
    path = os.path.join(manifest["dir"], entry["file"])
    for split, seeds in (("calib", range(1, 9)), ("eval", range(100, 104))):
        for seed in seeds:
            sample = os.path.join(mdir, split, "%03d" % seed)
            os.makedirs(sample)
            for n, a in zoo_common.make_inputs(entry, seed).items():
                np.save(os.path.join(sample, n + ".npy"), a)
    shapes = {spec["name"]: spec["shape"] for spec in entry["inputs"]}
    flags = ["--input-shape=" + pin for pin in entry["input_shape_pins"]]
    return path, shapes, flags, 0.1


# The largest difference from ONNX Runtime's run of the QDQ model, in steps
# of the output's encoding. Two runs round each intermediate tensor on
# their own (integer kernels here, float kernels on dequantized weights on
# targets without dot products), so a step of difference may appear; in a
# deep network one intermediate step can grow by the output (the zoo's
# MobileNetV2 without dot products: 2 steps). A wrong kernel is off by
# tens to hundreds.
MAX_STEPS = {"small": 1.0, "zoo": 3.0}


def output_steps(qdq_path):
    """The step of each graph output's encoding: the scale of the
    DequantizeLinear that writes it, or with per-channel activations (a
    DequantizeLinear of scale 1, then a Mul by the channels' scales) the
    channels' steps, shaped to broadcast against the output."""
    model = onnx.load(qdq_path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: node for node in model.graph.node for o in node.output}
    steps = {}
    for out in model.graph.output:
        node = producer.get(out.name)
        if node is not None and node.op_type == "DequantizeLinear":
            steps[out.name] = float(inits[node.input[1]])
        elif (node is not None and node.op_type == "Mul"
              and node.input[1] in inits
              and getattr(producer.get(node.input[0]), "op_type", "")
              == "DequantizeLinear"):
            dq = producer[node.input[0]]
            steps[out.name] = (inits[node.input[1]].astype(np.float64)
                               * float(inits[dq.input[1]]))
    return steps


class RunFailed(Exception):
    pass


def run(cmd, expected_failure=None):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        message = "%s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr)
        if expected_failure and expected_failure in p.stdout + p.stderr:
            raise RunFailed(message)
        raise SystemExit("FAILED: " + message)
    return p


def compare(dlc_run, art, mdir, tag, evals, shapes, qdq_session,
            float_session, steps, expected):
    """Runs `art` on the evaluation samples: the largest difference from
    ONNX Runtime's run of the QDQ model in output steps, and the largest
    relative RMS error against float."""
    worst_step, worst_float = 0.0, 0.0
    for sample in evals:
        sdir = os.path.join(mdir, "eval", sample)
        feeds = {n: np.load(os.path.join(sdir, n + ".npy")) for n in shapes}
        odir = os.path.join(mdir, "out", tag, sample)
        os.makedirs(odir, exist_ok=True)
        cmd = [dlc_run, art, "--output-dir", odir]
        for n in shapes:
            cmd += ["--input", "%s=%s" % (n, os.path.join(sdir, n + ".npy"))]
        run(cmd, expected)
        ort_q = qdq_session.run(None, feeds)
        ort_f = float_session.run(None, feeds)
        for i, out in enumerate(qdq_session.get_outputs()):
            got = np.load(os.path.join(odir, out.name + ".npy"))
            worst_step = max(worst_step,
                             (np.abs(got - ort_q[i]) / steps[out.name]).max())
            ref = ort_f[i].astype(np.float64)
            worst_float = max(worst_float, np.sqrt(
                ((got - ref) ** 2).sum() / max((ref ** 2).sum(), 1e-30)))
    return worst_step, worst_float


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_tool_args(ap)
    ap.add_argument("--targets", default="cpu,vulkan,vulkan:+dot8")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--zoo", default="",
                    help="zoo models to quantize too (scripts/zoo/models.py "
                         "generates them), with the minmax and entropy "
                         "methods")
    ap.add_argument("--keep", help="work in this folder and keep it")
    args = ap.parse_args()
    dlc_compile, dlc_run = find_tools(args)
    targets = split_targets(args.targets)
    work = args.keep or tempfile.mkdtemp(prefix="dlc-ptq-")
    if args.keep and os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work, exist_ok=True)
    checks = expected_failures = 0
    names = [n for n in args.models.split(",") if n]
    names += ["zoo:" + n for n in args.zoo.split(",") if n]
    for name in names:
        mdir = os.path.join(work, name.replace(":", "_"))
        os.makedirs(mdir)
        rng = np.random.default_rng(11)
        methods, flags = METHODS, []
        if name.startswith("zoo:"):
            path, shapes, flags, bound = zoo_model(name[4:], mdir)
            methods = ["minmax", "entropy"]
        else:
            build, bound = MODELS[name]
            graph, shapes = build(rng)
            model = helper.make_model(graph, opset_imports=[
                helper.make_opsetid("", 13)])
            model.ir_version = 8
            onnx.checker.check_model(model)
            path = os.path.join(mdir, "model.onnx")
            onnx.save(model, path)
            write_samples(os.path.join(mdir, "calib"), shapes, 16, rng)
            write_samples(os.path.join(mdir, "eval"), shapes, 8, rng)
        float_session = ort.InferenceSession(
            path, providers=["CPUExecutionProvider"])
        evals = sorted(os.listdir(os.path.join(mdir, "eval")))
        for method in methods:
            tag = method.replace(":", "_")
            qdq = os.path.join(mdir, tag + ".qdq.onnx")
            report = os.path.join(mdir, tag + ".json")
            common = [path, "--quantize=int8",
                      "--calibration-data=" + os.path.join(mdir, "calib"),
                      "--calibration-method=" + method] + flags
            run([dlc_compile] + common + ["--emit=qdq-onnx", "-o", qdq,
                                          "--quant-report=" + report])
            rep = json.load(open(report))
            layers = [l["name"] for l in rep["layers"]]
            if not layers or any(l["sqnr_db"] is None for l in rep["layers"]):
                raise SystemExit("FAILED: %s %s: report %s" % (name, method,
                                                               layers))
            folded = [n.op_type for n in onnx.load(qdq).graph.node
                      if n.op_type == "BatchNormalization"]
            if folded:
                raise SystemExit("FAILED: %s %s: BatchNormalization left in "
                                 "the QDQ model" % (name, method))
            steps = output_steps(qdq)
            qdq_session = ort.InferenceSession(
                qdq, ort_options(), providers=["CPUExecutionProvider"])
            for t, target in enumerate(targets):
                art = os.path.join(mdir, "%s.%s.dlcx" % (
                    tag, target.replace(":", "_").replace(",", "_")))
                run([dlc_compile, qdq] + flags + ["--target=" + target, "-o",
                                                  art])
                # Once per model: --quantize is the rewrite followed by the
                # ordinary compile whatever the method, and each direct
                # compile calibrates again (the MobileNetV2 twin: seconds).
                if t == 0 and method == methods[0]:
                    direct = art + ".direct"
                    run([dlc_compile] + common + ["--target=" + target, "-o",
                                                  direct])
                    with open(art, "rb") as a, open(direct, "rb") as d:
                        if a.read() != d.read():
                            raise SystemExit(
                                "FAILED: %s %s %s: --quantize compiled a "
                                "different artifact than its own QDQ model"
                                % (name, method, target))
                if target.startswith("cuda"):
                    # No GPU here: dlc-compile's ptxas run is the check.
                    print("%-4s %-16s %-14s compiled (PTX assembled by "
                          "ptxas where installed)" % (name, method, target))
                    checks += 1
                    continue
                expected = EXPECTED_FAILURES.get((name, target))
                worst_step, worst_float = 0.0, 0.0
                # Mesa's lavapipe runs Vulkan on the CPU: the QDQ
                # MobileNetV2 takes 6 s (12 CPU-seconds) per run there, so
                # zoo models run one evaluation sample on Vulkan, all four
                # on the CPU (the same kernels run on every sample).
                target_evals = evals
                if name.startswith("zoo:") and target.startswith("vulkan"):
                    target_evals = evals[:1]
                try:
                    worst_step, worst_float = compare(
                        dlc_run, art, mdir, tag, target_evals, shapes,
                        qdq_session, float_session, steps, expected)
                except RunFailed:
                    print("%-4s %-16s %-14s fails as expected (%s)" % (
                        name, method, target, expected), flush=True)
                    expected_failures += 1
                    continue
                if expected:
                    raise SystemExit(
                        "UNEXPECTED PASS: %s %s %s: remove it from "
                        "EXPECTED_FAILURES" % (name, method, target))
                status = "ok"
                max_steps = MAX_STEPS["zoo" if name.startswith("zoo:")
                                      else "small"]
                if worst_step > max_steps + 1e-3 or worst_float > bound:
                    status = "FAILED"
                print("%-4s %-16s %-14s vs ORT QDQ: %.2f steps  vs float: "
                      "%.4f rel. RMS  (%d layers)  %s" % (
                          name, method, target, worst_step, worst_float,
                          len(layers), status), flush=True)
                if status != "ok":
                    raise SystemExit(
                        "FAILED: %s %s %s: at most %g steps from ONNX "
                        "Runtime's run of the QDQ model and %.2f relative RMS "
                        "error from float allowed" % (name, method, target,
                                                      max_steps, bound))
                checks += 1
    print("%d checks passed, %d failed as expected" % (checks,
                                                       expected_failures))
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
