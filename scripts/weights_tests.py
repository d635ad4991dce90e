#!/usr/bin/env python3
"""Weight-only quantization end to end: dlc-compile --weights, ONNX Runtime
as the oracle.

For a small float model with what --weights has to get right (a MatMul on
a rank-3 input, a Gemm with transB and a bias, a MatMul whose K is no
multiple of the block) and, with --zoo, the zoo's decoder_lm, this script
checks for each weight format (int4 in blocks of 32, 64 and 128, symmetric
and not; int8 per channel and in blocks):

  1. ONNX Runtime runs the model `dlc-compile --weights=... --emit=qdq-onnx`
     writes (com.microsoft.MatMulNBits), and dlc's artifact for each
     target agrees with it (relative RMS error of every output under 1e-5,
     as float kernels that sum in another order);
  2. with 4-bit asymmetric blocks, the packed weights, scales and zero
     points are those ONNX Runtime's own MatMulNBitsQuantizer writes for
     the same float model (scales within 1e-6, zero points equal, weights
     equal but for rare ties a step apart);
  3. the quantized outputs stay near float (relative RMS error under a
     bound per format), and --quant-report with calibration data names
     every layer with finite errors;
  4. the model ONNX Runtime's 4-bit quantizer writes in its QDQ format
     (opset 21's blocked DequantizeLinear of int4/uint4 constants) compiles
     to the same kernels and agrees with ONNX Runtime running it as
     written;
  5. --weights=int4 with --precision=fp16 (MatMulNBits on float16
     activations) agrees with ONNX Runtime running the model it writes.

  python -m scripts.weights_tests --build build \\
      --targets cpu,vulkan,cuda:sm_87 --zoo

CUDA targets are compiled only. Deterministic (fixed seeds); nothing is
downloaded. Exits non-zero on the first failing check.
"""

import argparse
import json
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from scripts.artifact_checks import fail, rel_rms, run, run_artifact
from scripts.targets import split_targets

# (--weights value, bound on the relative RMS error against float of the
# small model's output, the config with which ORT's quantizer writes the
# same format). The small model's weights are Gaussian, which 4 bits in 16
# steps reproduce to about 10% a weight (measured: 0.16 at the output for
# blocks of 32); the bounds catch a broken scale or zero point, which
# errs by 100% and more.
FORMATS = [
    ("int4", 0.25, {"block_size": 32, "is_symmetric": False, "bits": 4}),
    ("int4:group=64:sym", 0.35, None),
    ("int4:group=128", 0.3, None),
    ("int8", 0.02, None),
    ("int8:group=32:sym", 0.02, None),
]


def small_model(rng):
    f = TensorProto.FLOAT

    def w(shape, name):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(
                np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["H"], name="fc1"),
        helper.make_node("Relu", ["H"], ["R"]),
        helper.make_node("Reshape", ["R", "shape"], ["R2"]),
        helper.make_node("Gemm", ["R2", "W2", "B2"], ["G"], name="fc2",
                         transB=1),
        helper.make_node("Tanh", ["G"], ["T"]),
        helper.make_node("MatMul", ["T", "W3"], ["Y"], name="fc3"),
    ]
    inits = [w((96, 128), "W1"),
             numpy_helper.from_array(np.array([-1, 128], np.int64), "shape"),
             numpy_helper.from_array(
                 (rng.standard_normal((72, 128)) / np.sqrt(128)).astype(
                     np.float32), "W2"),
             numpy_helper.from_array(
                 rng.standard_normal(72).astype(np.float32) * 0.1, "B2"),
             w((72, 40), "W3")]  # K = 72: blocks of 32 and 64 padded
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("X", f, [2, 5, 96])],
        [helper.make_tensor_value_info("Y", f, [10, 40])], inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def feeds_for(model, rng, count, specs=None):
    """`count` input dicts: the zoo manifest's distributions where given,
    else standard normal floats."""
    out = []
    for _ in range(count):
        feed = {}
        for vi in model.graph.input:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            spec = (specs or {}).get(vi.name)
            if spec is None:
                feed[vi.name] = rng.standard_normal(shape).astype(np.float32)
            elif spec["dist"] == "randint":
                feed[vi.name] = rng.integers(spec["low"], spec["high"],
                                             shape).astype(spec["dtype"])
            elif spec["dist"] == "value":
                feed[vi.name] = np.full(shape, spec["value"], spec["dtype"])
            else:
                feed[vi.name] = rng.uniform(spec["low"], spec["high"],
                                            shape).astype(spec["dtype"])
        out.append(feed)
    return out


def ort_quantizer_weights(model, config):
    from onnxruntime.quantization import matmul_nbits_quantizer as mq
    q = mq.MatMulNBitsQuantizer(
        onnx.ModelProto.FromString(model.SerializeToString()),
        algo_config=mq.DefaultWeightOnlyQuantConfig(**config))
    q.process()
    return {i.name: numpy_helper.to_array(i)
            for i in q.model.model.graph.initializer}


def nibbles(packed, count):
    """The first `count` 4-bit fields of each row of `packed` (low nibble
    first), as a 2-D array."""
    rows = packed.reshape(packed.shape[0], -1)
    fields = np.stack([rows & 15, rows >> 4], axis=-1).reshape(
        rows.shape[0], -1)
    return fields[:, :count]


def same_packing(tag, node, ours, theirs):
    """Whether the 4-bit weights, scales and zero points of MatMulNBits
    `node` equal those ONNX Runtime's quantizer wrote, past the padding of
    a last partial block (whose fields no product reads)."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    k, bs = attrs["K"], attrs["block_size"]
    blocks = (k + bs - 1) // bs
    b, s = node.input[1], node.input[2]
    # A weight within float rounding of a half step may land on either side
    # (measured: 1 of 262,144 in decoder_lm, w / scale = -3.5000002): one
    # step apart in at most 1 of 10,000 weights, the rest equal.
    ob = nibbles(ours[b].reshape(ours[b].shape[0], -1), k).astype(int)
    tb = nibbles(theirs[b].reshape(theirs[b].shape[0], -1), k).astype(int)
    diff = np.abs(ob - tb)
    if ob.shape != tb.shape or diff.max() > 1 or \
            np.count_nonzero(diff) > ob.size // 10000:
        fail("%s: %s differs from ONNX Runtime's quantizer (%d of %d "
             "weights)" % (tag, b, np.count_nonzero(diff), ob.size))
    if not np.allclose(ours[s], theirs[s], rtol=1e-6, atol=0):
        fail("%s: %s differs from ONNX Runtime's quantizer" % (tag, s))
    if len(node.input) > 3 and node.input[3]:
        z = node.input[3]
        n = attrs["N"]
        if not np.array_equal(nibbles(ours[z].reshape(n, -1), blocks),
                              nibbles(theirs[z].reshape(n, -1), blocks)):
            fail("%s: %s differs from ONNX Runtime's quantizer" % (tag, z))


def worst_error(args, art, evals, refs, out_names, work, prefix):
    """The largest relative RMS error of any output of artifact `art` on
    the inputs `evals` against `refs` (the outputs in `out_names` order),
    compared in float32."""
    worst = 0.0
    for e, (feed, ref) in enumerate(zip(evals, refs)):
        got = run_artifact(args.dlc_run, art, feed,
                           os.path.join(work, "%s%d" % (prefix, e)))
        for i, o in enumerate(out_names):
            worst = max(worst, rel_rms(got[o].astype(np.float32),
                                       ref[i].astype(np.float32)))
    return worst


def check(name, model, args, work, specs=None):
    rng = np.random.default_rng(11)
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    calib = os.path.join(work, name + "-calib")
    samples = feeds_for(model, rng, 4, specs)
    for i, feed in enumerate(samples):
        d = os.path.join(calib, "%03d" % i)
        os.makedirs(d, exist_ok=True)
        for k, v in feed.items():
            np.save(os.path.join(d, k + ".npy"), v)
    evals = feeds_for(model, rng, 3, specs)
    float_sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    out_names = [o.name for o in model.graph.output]
    floats = [float_sess.run(None, f) for f in evals]
    for fmt, bound, ort_config in FORMATS:
        tag = "%s %s" % (name, fmt)
        qpath = os.path.join(work, "%s.%s.onnx" % (name, fmt.replace(":", "_")))
        report = qpath + ".json"
        run([args.dlc_compile, path, "--weights=" + fmt, "--emit=qdq-onnx",
             "-o", qpath, "--calibration-data=" + calib,
             "--quant-report=" + report])
        rep = json.load(open(report))
        if rep["quantized_layers"] < 1 or any(
                layer.get("sqnr_db") is None or
                layer.get("weight_sqnr_db") is None
                for layer in rep["layers"]):
            fail("%s: report without finite errors: %s" % (tag, rep))
        qsess = ort.InferenceSession(qpath, providers=["CPUExecutionProvider"])
        refs = [qsess.run(None, f) for f in evals]
        worst = max(rel_rms(r[i], fl[i]) for r, fl in zip(refs, floats)
                    for i in range(len(out_names)))
        if name == "mlp" and worst > bound:
            fail("%s: relative RMS error against float %.4g > %.4g"
                 % (tag, worst, bound))
        if ort_config:
            ours = {i.name: numpy_helper.to_array(i)
                    for i in onnx.load(qpath).graph.initializer}
            theirs = ort_quantizer_weights(model, ort_config)
            for node in onnx.load(qpath).graph.node:
                if node.op_type == "MatMulNBits" and \
                        node.input[1] in theirs:
                    same_packing(tag, node, ours, theirs)
        for target in split_targets(args.targets):
            art = os.path.join(work, "a.dlcx")
            run([args.dlc_compile, path, "--weights=" + fmt,
                 "--target=" + target, "-o", art])
            if target.startswith("cuda"):
                continue
            err = worst_error(args, art, evals, refs, out_names, work, "io")
            if err > 1e-5:
                fail("%s on %s: an output differs from ONNX Runtime running "
                     "dlc's MatMulNBits model (relative RMS %.3g)"
                     % (tag, target, err))
        print("ok   %-28s vs float %.4f (rel. RMS), %d layers, %.2f -> %.2f "
              "MiB" % (tag, worst, rep["quantized_layers"],
                       rep["float_weight_bytes"] / 2 ** 20,
                       rep["packed_weight_bytes"] / 2 ** 20))


def check_fp16(name, model, args, work, specs=None):
    """--weights=int4 with --precision=fp16: MatMulNBits with float16
    activations, scales and bias (T1 = float16) among 16-bit operators.
    ONNX Runtime runs the model dlc writes (--emit=onnx); dlc's artifact
    agrees with it at 16-bit tolerance on each target that runs here
    (Vulkan with +fp16)."""
    rng = np.random.default_rng(13)
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    flags = ["--weights=int4", "--precision=fp16"]
    qpath = os.path.join(work, name + ".int4.fp16.onnx")
    run([args.dlc_compile, path, "--emit=onnx", "-o", qpath] + flags)
    ops = {(n.domain, n.op_type) for n in onnx.load(qpath).graph.node}
    if ("com.microsoft", "MatMulNBits") not in ops:
        fail("%s int4+fp16: no MatMulNBits in the rewritten model" % name)
    qsess = ort.InferenceSession(qpath, providers=["CPUExecutionProvider"])
    out_names = [o.name for o in model.graph.output]
    evals = feeds_for(model, rng, 2, specs)
    refs = [qsess.run(None, f) for f in evals]
    worst = 0.0
    for target in split_targets(args.targets):
        if target == "vulkan":
            target = "vulkan:+fp16"
        elif target.startswith("vulkan"):
            continue
        art = os.path.join(work, "h.dlcx")
        run([args.dlc_compile, path, "--target=" + target, "-o", art] + flags)
        if target.startswith("cuda"):
            continue
        err = worst_error(args, art, evals, refs, out_names, work, "h")
        worst = max(worst, err)
        if err > 1e-2:
            fail("%s int4+fp16 on %s: an output differs from ONNX Runtime "
                 "running dlc's model (relative RMS %.3g)"
                 % (name, target, err))
    print("ok   %-28s vs ONNX Runtime %.2g (rel. RMS, worst output)"
          % (name + " int4+fp16", worst))


def check_qdq_format(name, model, args, work):
    """ONNX Runtime's 4-bit quantizer in its QDQ format (opset 21's blocked
    DequantizeLinear of int4/uint4 constants before each MatMul), which
    dlc-fold-blocked-dequantize turns into MatMulNBits: dlc's artifacts
    against ONNX Runtime running the model as written (graph optimizations
    off: with them on, ONNX Runtime fuses the pair into its own MatMulNBits
    at an accuracy level that quantizes A, 1% off the model's meaning)."""
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization import matmul_nbits_quantizer as mq
    rng = np.random.default_rng(13)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", 21)])
    model.ir_version = 10
    evals = feeds_for(model, rng, 2)
    for symmetric in (False, True):
        tag = "%s qdq-int4%s" % (name, " sym" if symmetric else "")
        q = mq.MatMulNBitsQuantizer(
            onnx.ModelProto.FromString(model.SerializeToString()),
            algo_config=mq.DefaultWeightOnlyQuantConfig(
                block_size=32, is_symmetric=symmetric,
                quant_format=QuantFormat.QDQ))
        q.process()
        path = os.path.join(work, "%s.qdq4.onnx" % name)
        onnx.save(q.model.model, path)
        options = ort.SessionOptions()
        options.graph_optimization_level = \
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(path, options,
                                    providers=["CPUExecutionProvider"])
        out_names = [o.name for o in model.graph.output]
        for target in split_targets(args.targets):
            art = os.path.join(work, "q.dlcx")
            run([args.dlc_compile, path, "--target=" + target, "-o", art])
            if target.startswith("cuda"):
                continue
            for e, feed in enumerate(evals):
                ref = sess.run(None, feed)
                got = run_artifact(args.dlc_run, art, feed,
                                   os.path.join(work, "qio%d" % e))
                for i, o in enumerate(out_names):
                    err = rel_rms(got[o], ref[i])
                    if err > 1e-5:
                        fail("%s on %s: output %s differs from ONNX Runtime "
                             "(relative RMS %.3g)" % (tag, target, o, err))
        print("ok   %s" % tag)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--targets", default="cpu,vulkan")
    ap.add_argument("--zoo", action="store_true",
                    help="also the zoo's decoder_lm")
    args = ap.parse_args()
    args.dlc_compile = os.path.join(args.build, "bin", "dlc-compile")
    args.dlc_run = os.path.join(args.build, "bin", "dlc-run")
    with tempfile.TemporaryDirectory(prefix="dlc-weights-") as work:
        check("mlp", small_model(np.random.default_rng(5)), args, work)
        check_qdq_format("mlp", small_model(np.random.default_rng(5)), args,
                         work)
        check_fp16("mlp", small_model(np.random.default_rng(5)), args, work)
        if args.zoo:
            from scripts.zoo import models as zoo
            manifest = zoo.ensure_models(names=["decoder_lm"])
            entry = manifest["models"]["decoder_lm"]
            specs = {s["name"]: s for s in entry["inputs"]}
            decoder = onnx.load(os.path.join(zoo.DEFAULT_OUT,
                                             "decoder_lm.onnx"))
            check("decoder_lm", decoder, args, work, specs)
            check_fp16("decoder_lm", decoder, args, work, specs)
    print("weights_tests: all passed")


if __name__ == "__main__":
    main()
