#!/usr/bin/env python3
"""Mixed precision end to end: dlc-compile --precision=fp16|bf16, with
ONNX Runtime as the oracle.

For a small model with what --precision has to get right (a convolution
with SiLU, a Resize whose scales stay float32, LayerNormalization, a
Softmax, a MatMul and a Gemm, a Range that stays float32, outputs read by
other nodes too) and, with --zoo, zoo models, this script checks:

  1. fp16: ONNX Runtime runs the model `dlc-compile --precision=fp16
     --emit=onnx` writes, and dlc's artifact for each target agrees with
     it: relative RMS error of every output at most FP16_VS_ORT (both
     store every tensor in half precision and sum in float32, in other
     orders; a value a half-precision step apart at one layer moves the
     next ones, so deep models drift a little);
  2. both stay near float32 (relative RMS error of every output against
     ONNX Runtime on the float model at most the model's bound), and
     --quant-report with calibration data reports every output's error;
  3. bf16 (no ONNX Runtime kernels for it on a CPU) on the CPU targets:
     near float32 within the bf16 bound;
  4. a 16-bit artifact's weights take about half the float one's bytes;
  5. on each CPU target, conversions between f32 and f16/bf16 are exact
     (round to nearest even), with or without conversion instructions.

  python -m scripts.precision_tests --build build \\
      --targets cpu,vulkan:+fp16,cuda:sm_87 --zoo

CUDA targets are compiled only (--no-cubin lists those whose PTX ptxas
only checks, at -O0, instead of assembling it). Vulkan targets run the
first evaluation sample, the others every sample: the kernels are the same
for every sample, and Mesa's lavapipe, which runs them in CI, takes
seconds per run of a zoo model. Deterministic (fixed seeds); nothing is
downloaded. Exits non-zero on the first failing check.
"""

import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from scripts import bundle
from scripts.artifact_checks import fail, rel_rms, run, run_artifact
from scripts.targets import split_no_cubin, split_targets

# dlc's 16-bit artifact against ONNX Runtime running the same 16-bit model.
FP16_VS_ORT = 2e-2
# The 16-bit models against float32 (relative RMS error of each output):
# half precision keeps 11 bits (a step of 1e-3 relative), bfloat16 8.
FP16_VS_FLOAT = 2e-2
BF16_VS_FLOAT = 1e-1

# Every float zoo model but `vad`, whose computation lies inside If
# branches, which --precision leaves in float32 (nothing to convert).
ZOO = ["mobilenetv2", "mobilenetv2_bn", "resnet18", "efficientnet_b0",
       "squeezenet1_1", "shufflenetv2", "textdet", "yolov8n", "crnn",
       "bert_tiny", "bert_tiny_decomposed", "vit_tiny", "decoder_lm"]


def small_model(rng):
    """Conv+SiLU, nearest Resize (float32 scales), LayerNormalization,
    Softmax, MatMul, Gemm with transB, a Range kept in float32, and an
    output that another node also reads."""
    def init(name, shape, scale=0.5):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["X", "W", "B"], ["C"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["C"], ["G"]),
        helper.make_node("Mul", ["C", "G"], ["A"]),
        helper.make_node("Resize", ["A", "", "scales"], ["U"],
                         mode="nearest"),
        helper.make_node("LayerNormalization", ["U", "gamma", "beta"],
                         ["N"], axis=-1),
        helper.make_node("Softmax", ["N"], ["S"], axis=-1),
        helper.make_node("Reshape", ["S", "shape"], ["F"]),
        helper.make_node("MatMul", ["F", "M"], ["P"]),
        helper.make_node("Gemm", ["P", "K", "bias"], ["Q"], transB=1),
        helper.make_node("Relu", ["Q"], ["Y"]),
        helper.make_node("Add", ["Y", "Q"], ["Z"]),
        helper.make_node("Range", ["start", "limit", "delta"], ["R"]),
    ]
    inits = [
        init("W", [8, 3, 3, 3]), init("B", [8], 0.1),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32),
                                "scales"),
        init("gamma", [16], 0.2), init("beta", [16], 0.1),
        numpy_helper.from_array(np.array([-1, 16], np.int64), "shape"),
        init("M", [16, 24], 0.3), init("K", [12, 24], 0.3),
        init("bias", [12], 0.1),
        numpy_helper.from_array(np.array(0.5, np.float32), "start"),
        numpy_helper.from_array(np.array(3.0, np.float32), "limit"),
        numpy_helper.from_array(np.array(0.25, np.float32), "delta"),
    ]
    graph = helper.make_graph(
        nodes, "precision_mix",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       [1, 3, 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [128, 12]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, [128, 12]),
         helper.make_tensor_value_info("R", TensorProto.FLOAT, [10])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def normal_feeds(model, seed):
    """Standard normal float inputs for every graph input."""
    rng = np.random.default_rng(seed)
    return {vi.name: rng.standard_normal(
        [d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(
            np.float32) for vi in model.graph.input}


def weight_bytes(model):
    return sum(numpy_helper.to_array(t).nbytes
               for t in model.graph.initializer)


def check(name, model, args, work, feeds, pins=()):
    """`feeds(seed)`: one input dict; seeds 0-1 calibrate the report,
    2-3 are compared."""
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    calib = os.path.join(work, name + "-calib")
    for i, feed in enumerate([feeds(0), feeds(1)]):
        d = os.path.join(calib, "%03d" % i)
        os.makedirs(d, exist_ok=True)
        for k, v in feed.items():
            np.save(os.path.join(d, k + ".npy"), v)
    evals = [feeds(2), feeds(3)]
    out_names = [o.name for o in model.graph.output]
    float_sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    floats = [dict(zip(out_names, float_sess.run(None, f))) for f in evals]
    targets = split_targets(args.targets)
    pin = ["--input-shape=" + p for p in pins]

    # fp16: ONNX Runtime on dlc's 16-bit model is the oracle.
    hpath = os.path.join(work, name + ".fp16.onnx")
    report = hpath + ".json"
    run([args.dlc_compile, path, "--precision=fp16", "--emit=onnx"] + pin + [
         "-o", hpath, "--calibration-data=" + calib,
         "--quant-report=" + report])
    rep = json.load(open(report))
    if rep["converted_nodes"] < 1 or len(rep["outputs"]) != len(out_names) \
            or any(o["relative_rms_error"] is None for o in rep["outputs"]):
        fail("%s fp16: report without the outputs' errors: %s" % (name, rep))
    half = onnx.load(hpath)
    shrink = weight_bytes(half) / max(weight_bytes(model), 1)
    if shrink > 0.55:
        fail("%s fp16: constants %.2f of the float model's bytes"
             % (name, shrink))
    hsess = ort.InferenceSession(hpath, providers=["CPUExecutionProvider"])
    refs = [dict(zip(out_names, hsess.run(None, f))) for f in evals]
    vs_float = max(rel_rms(r[o], fl[o]) for r, fl in zip(refs, floats)
                   for o in out_names)
    if vs_float > FP16_VS_FLOAT:
        fail("%s fp16: ONNX Runtime on the 16-bit model is %.3g from float "
             "(relative RMS) > %.3g" % (name, vs_float, FP16_VS_FLOAT))
    worst = {}
    for target in targets:
        if target.startswith("vulkan") and "+fp16" not in target:
            continue
        art = os.path.join(work, "a.dlcx")
        run([args.dlc_compile, path, "--precision=fp16",
             "--target=" + target, "-o", art] + pin +
            (["--cubin=false"] if target in args.no_cubin else []))
        if target.startswith("cuda"):
            continue
        samples = list(zip(evals, refs, floats))
        if target.startswith("vulkan"):
            samples = samples[:1]
        for e, (feed, ref, fl) in enumerate(samples):
            got = run_artifact(args.dlc_run, art, feed,
                               os.path.join(work, "io%d" % e))
            for o in out_names:
                err = rel_rms(got[o], ref[o])
                if err > FP16_VS_ORT:
                    fail("%s fp16 on %s: output %s differs from ONNX Runtime "
                         "running dlc's 16-bit model (relative RMS %.3g > "
                         "%.3g)" % (name, target, o, err, FP16_VS_ORT))
                worst[target] = max(worst.get(target, 0.0), err,
                                    rel_rms(got[o], fl[o]))
    print("ok   %-12s fp16  ORT(16-bit) vs float %.2e; dlc vs ORT/float "
          "worst %s; constants x%.2f"
          % (name, vs_float,
             ", ".join("%s %.2e" % kv for kv in worst.items()), shrink))

    # bf16: no ONNX Runtime CPU kernels; float32 is the reference.
    for target in targets:
        if not target.startswith("cpu"):
            continue
        art = os.path.join(work, "b.dlcx")
        run([args.dlc_compile, path, "--precision=bf16",
             "--target=" + target, "-o", art] + pin)
        err = 0.0
        for e, (feed, fl) in enumerate(zip(evals, floats)):
            got = run_artifact(args.dlc_run, art, feed,
                               os.path.join(work, "io%d" % e))
            err = max([err] + [rel_rms(got[o], fl[o]) for o in out_names])
        if err > BF16_VS_FLOAT:
            fail("%s bf16 on %s: %.3g from float (relative RMS) > %.3g"
                 % (name, target, err, BF16_VS_FLOAT))
        print("ok   %-12s bf16  on %s: %.2e from float" % (name, target, err))


def check_conversions(args, work):
    """f16 <-> f32 and f32 -> bf16 on each CPU target, bit for bit against
    NumPy (f16) and round-to-nearest-even on the bits (bf16): every f16
    value, and a million f32 ones (random bits, the f16 range, its edges
    and ties). Targets without conversion instructions (x86 without F16C
    or AVX512-BF16) compute them in integer operations."""
    nodes = [helper.make_node("Cast", ["H"], ["A"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["X"], ["Y"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["X"], ["Z"], to=TensorProto.BFLOAT16)]
    n = 1 << 20
    graph = helper.make_graph(
        nodes, "conversions",
        [helper.make_tensor_value_info("H", TensorProto.FLOAT16, [65536]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [65536]),
         helper.make_tensor_value_info("Y", TensorProto.FLOAT16, [n]),
         helper.make_tensor_value_info("Z", TensorProto.BFLOAT16, [n])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(work, "conversions.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(23)
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(
        np.uint32).view(np.float32).copy()
    m = n // 2
    x[:m] = (rng.standard_normal(m) *
             np.exp2(rng.integers(-26, 17, m))).astype(np.float32)
    edges = np.array([65504, 65519.996, 65520, 65536, 2.0 ** -14,
                      2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25, 0.0, -0.0,
                      np.inf, -np.inf, np.nan, 1 + 2.0 ** -11,
                      1 + 3 * 2.0 ** -11], np.float32)
    x[m:m + len(edges)] = edges
    with np.errstate(over="ignore"):
        want_y = x.astype(np.float16)
    bits = x.view(np.uint32).astype(np.uint64)
    want_z = ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    for target in split_targets(args.targets):
        if not target.startswith("cpu"):
            continue
        art = os.path.join(work, "conversions.dlcx")
        run([args.dlc_compile, path, "--target=" + target, "-o", art])
        got = run_artifact(args.dlc_run, art, {"H": h, "X": x},
                           os.path.join(work, "conversions"))
        a = got["A"].view(np.uint32) != h.astype(np.float32).view(np.uint32)
        a &= ~np.isnan(h)
        y = (got["Y"].view(np.uint16) != want_y.view(np.uint16)) & ~nan
        z = (got["Z"].view(np.uint16) != want_z) & ~nan
        bad_nan = ~np.isnan(got["Y"][nan]).all()
        if a.any() or y.any() or z.any() or bad_nan:
            fail("conversions on %s: %d f16->f32, %d f32->f16, %d f32->bf16 "
                 "values differ%s" % (target, a.sum(), y.sum(), z.sum(),
                                      ", NaN lost" if bad_nan else ""))
        print("ok   conversions  on %s: every f16, %d f32 values exact"
              % (target, n))


# The 8- and 4-bit float formats ONNX has, with ml_dtypes' types (the ONNX
# reference's conversions): kernels hold them as bits.
SMALL_FLOATS = [("e4m3fn", TensorProto.FLOAT8E4M3FN, "float8_e4m3fn"),
                ("e4m3fnuz", TensorProto.FLOAT8E4M3FNUZ, "float8_e4m3fnuz"),
                ("e5m2", TensorProto.FLOAT8E5M2, "float8_e5m2"),
                ("e5m2fnuz", TensorProto.FLOAT8E5M2FNUZ, "float8_e5m2fnuz"),
                ("e2m1", TensorProto.FLOAT4E2M1, "float4_e2m1fn")]


def check_small_floats(args, work):
    """Cast between f32 and the 8- and 4-bit floats on every target that
    runs here, bit for bit against ml_dtypes: every code of each format to
    f32, and f32 values (random bits, each format's range, its edges, ties,
    subnormals, infinities, NaN) to each format with saturate=1 (values
    beyond the largest clipped to it, as the ONNX reference does) and
    saturate=0. Inputs and outputs of those types cross dlc-run as .npy
    files of their bits."""
    import ml_dtypes
    rng = np.random.default_rng(29)
    n = 1 << 16
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(
        np.uint32).view(np.float32).copy()
    m = n // 2
    x[:m] = (rng.standard_normal(m) *
             np.exp2(rng.integers(-20, 17, m))).astype(np.float32)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 480, 240,
             248, 57344, 61440, 61441, 6, 6.5, 7, 2.0 ** -9, 2.0 ** -10,
             1.5 * 2.0 ** -10, 2.0 ** -17, 2.0 ** -16, 0.25, 0.75, 1e-40]
    edges = np.array(edges + [-e for e in edges], np.float32)
    x[m:m + len(edges)] = edges
    nodes, inputs, outputs = [], [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [n])], []
    for name, onnx_type, _ in SMALL_FLOATS:
        codes = 16 if name == "e2m1" else 256
        inputs.append(helper.make_tensor_value_info(
            "C_" + name, onnx_type, [codes]))
        outputs.append(helper.make_tensor_value_info(
            "D_" + name, TensorProto.FLOAT, [codes]))
        nodes.append(helper.make_node("Cast", ["C_" + name], ["D_" + name],
                                      to=TensorProto.FLOAT))
        for sat in (1, 0):
            out = "E%d_%s" % (sat, name)
            outputs.append(helper.make_tensor_value_info(out, onnx_type, [n]))
            nodes.append(helper.make_node("Cast", ["X"], [out], to=onnx_type,
                                          saturate=sat))
    graph = helper.make_graph(nodes, "small_floats", inputs, outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 11
    path = os.path.join(work, "small_floats.onnx")
    onnx.save(model, path)
    feed = {"X": x}
    for name, _, _ in SMALL_FLOATS:
        feed["C_" + name] = np.arange(16 if name == "e2m1" else 256,
                                      dtype=np.uint8)
    for target in split_targets(args.targets):
        if target.startswith("cuda") or not bundle.runs_here(target):
            continue
        art = os.path.join(work, "small_floats.dlcx")
        run([args.dlc_compile, path, "--target=" + target, "-o", art])
        got = run_artifact(args.dlc_run, art, feed,
                           os.path.join(work, "small_floats"))
        for name, _, np_name in SMALL_FLOATS:
            t = getattr(ml_dtypes, np_name)
            codes = feed["C_" + name]
            want = codes.view(t).astype(np.float32)
            d = got["D_" + name]
            bad = (d.view(np.uint32) != want.view(np.uint32)) & ~np.isnan(want)
            bad |= np.isnan(want) != np.isnan(d)
            info = ml_dtypes.finfo(t)
            with np.errstate(over="ignore", invalid="ignore"):
                wants = {1: np.clip(x, info.min, info.max).astype(t),
                         0: x.astype(t)}
            for sat, want in wants.items():
                e = got["E%d_%s" % (sat, name)].view(t)
                nan = np.isnan(want.astype(np.float32))
                diff = (e.view(np.uint8) != want.view(np.uint8)) & ~nan
                diff |= nan != np.isnan(e.astype(np.float32))
                if diff.any():
                    i = int(np.flatnonzero(diff)[0])
                    fail("f32 -> %s (saturate=%d) on %s: %d values differ, "
                         "first %r -> %#x, want %#x" % (
                             name, sat, target, diff.sum(), float(x[i]),
                             e.view(np.uint8)[i], want.view(np.uint8)[i]))
            if bad.any():
                fail("%s -> f32 on %s: %d codes differ" % (name, target,
                                                          bad.sum()))
        print("ok   small floats on %s: every code of %d formats, %d f32 "
              "values each way" % (target, len(SMALL_FLOATS), n))
        # A byte that is no 4-bit float's bits is refused, by name.
        d = os.path.join(work, "small_floats_bad")
        os.makedirs(d, exist_ok=True)
        cmd = [args.dlc_run, art]
        for k, v in feed.items():
            npy = os.path.join(d, k + ".npy")
            np.save(npy, np.where(v == 15, 16, v).astype(v.dtype)
                    if k == "C_e2m1" else v)
            cmd += ["--input", "%s=%s" % (k, npy)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        want = "element 15 of %s is 16, not the bits of a 4-bit float" % (
            os.path.join(d, "C_e2m1.npy"))
        if p.returncode != 2 or want not in p.stderr:
            fail("dlc-run on %s took a 4-bit float input of 16: rc %d, %s"
                 % (target, p.returncode, p.stderr.strip()))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--targets", default="cpu,vulkan:+fp16")
    ap.add_argument("--no-cubin", default="", metavar="TARGETS",
                    help="cuda targets compiled with --cubin=false (PTX "
                         "checked by ptxas -O0, not assembled)")
    ap.add_argument("--zoo", action="store_true",
                    help="also zoo models (" + ", ".join(ZOO) + ")")
    ap.add_argument("--models", default=",".join(ZOO),
                    help="with --zoo: which ones")
    args = ap.parse_args()
    args.no_cubin = split_no_cubin(args.no_cubin,
                                   split_targets(args.targets), ap)
    args.dlc_compile = os.path.join(args.build, "bin", "dlc-compile")
    args.dlc_run = os.path.join(args.build, "bin", "dlc-run")
    with tempfile.TemporaryDirectory(prefix="dlc-precision-") as work:
        check_conversions(args, work)
        check_small_floats(args, work)
        mix = small_model(np.random.default_rng(3))
        check("mix", mix, args, work, lambda seed: normal_feeds(mix, seed))
        if args.zoo:
            from scripts.zoo import common
            from scripts.zoo import models as zoo
            names = [m for m in args.models.split(",") if m]
            manifest = zoo.ensure_models(names=names)
            for m in names:
                entry = manifest["models"][m]
                check(m, onnx.load(os.path.join(zoo.DEFAULT_OUT, m + ".onnx")),
                      args, work,
                      lambda seed, e=entry: common.make_inputs(e, seed),
                      entry["input_shape_pins"])
    print("precision_tests: all passed")


if __name__ == "__main__":
    main()
