#!/usr/bin/env python3
"""Where 8-bit activations lose accuracy, by fake quantization in ONNX Runtime.

Inserts QuantizeLinear/DequantizeLinear pairs (uint8, minmax ranges from the
calibration samples) around the convolutions of a float model and rounds its
weights to int8 per output channel, then compares the outputs with the float
model's on evaluation samples (cosine per output, mean over the samples).
ONNX Runtime runs the pairs as float arithmetic, so each variant below is
the rounding alone, without any kernel of dlc's:

  tensor          inputs and outputs of every Conv, one scale per tensor
  inputs-channel  Conv inputs only, per channel (own zero points), weights
                  rounded per output channel as they are
  inputs-shared   Conv inputs only, per channel with one zero point for all
                  channels, each input channel's scale multiplied into the
                  weights before they are rounded (what dlc's integer
                  kernels need, docs/quantization.md)
  shared          inputs-shared, with the Conv outputs per channel too
  tensor16        as tensor, with 16-bit steps (65536 levels; rounding
                  written as Mul, Round and Clip, since the model's opset
                  predates 16-bit QuantizeLinear)

The model is first optimized by ONNX Runtime at its basic level (constant
folding, BatchNormalization into Conv), as dlc's quantizer folds
BatchNormalization.

  python -m scripts.quant.fake_quant --data ~/.cache/dlc/quant/data \\
      --model layout --variants tensor,inputs-channel,inputs-shared,shared
"""

import argparse
import glob
import os
import sys
import tempfile

from scripts.quant import env

env.ensure(["numpy", "onnx", "onnxruntime"])

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import helper, numpy_helper, TensorProto  # noqa: E402

WHEELS = os.path.expanduser("~/.cache/dlc/wheels")
MODELS = {"layout": "layout-1.2.1.onnx", "orientation": "orientation-0.0.11.onnx"}
VARIANTS = ("tensor", "inputs-channel", "inputs-shared", "shared",
            "tensor16")


def samples(data, model, split):
    dirs = sorted(glob.glob(os.path.join(data, model, split, "*")),
                  key=lambda p: int(os.path.basename(p)))
    return [{os.path.basename(f)[:-4]: np.load(f)
             for f in glob.glob(os.path.join(d, "*.npy"))} for d in dirs]


def session(model_bytes):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model_bytes, so,
                                providers=["CPUExecutionProvider"])


def channel_ranges(model, tensors, calib):
    """Per channel (axis 1) minimum and maximum of `tensors` over `calib`."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inputs = {i.name for i in m.graph.input}
    fetch = [t for t in tensors if t not in inputs]
    for t in fetch:
        m.graph.output.append(helper.make_tensor_value_info(
            t, TensorProto.FLOAT, None))
    s = session(m.SerializeToString())
    lo, hi = {}, {}
    for feeds in calib:
        values = dict(zip(fetch, s.run(fetch, feeds)))
        values.update({k: v for k, v in feeds.items() if k in tensors})
        for t in tensors:
            v = values[t]
            a = np.moveaxis(v, 1, 0).reshape(v.shape[1], -1)
            lo[t] = np.minimum(lo[t], a.min(1)) if t in lo else a.min(1)
            hi[t] = np.maximum(hi[t], a.max(1)) if t in hi else a.max(1)
    return lo, hi


def own_encoding(lo, hi, levels=256):
    lo, hi = np.minimum(lo, 0.0), np.maximum(hi, 0.0)
    scale = np.maximum((hi - lo) / (levels - 1), 1e-12)
    zero = np.clip(np.round(-lo / scale), 0, levels - 1)
    return scale, zero


def shared_encoding(lo, hi):
    """One zero point for all channels: the one that minimizes the product
    of the channels' steps (dlc's uint8ChannelEncoding)."""
    lo = np.minimum(lo, 0.0).astype(np.float64)
    hi = np.maximum(hi, 0.0).astype(np.float64)
    best = None
    for z in range(256):
        if (z == 0 and (lo < 0).any()) or (z == 255 and (hi > 0).any()):
            continue
        scale = np.maximum(hi / max(255 - z, 1e-30), -lo / max(z, 1e-30))
        cost = np.log(scale[scale > 0]).sum()
        if best is None or cost < best[0]:
            best = (cost, z, scale)
    _, z, scale = best
    live = scale[scale > 0]
    scale[scale <= 0] = np.sort(live)[len(live) // 2] if live.size else 1.0
    return scale, np.full(scale.shape, z)


def build(model, variant, lo, hi):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    convs = [n for n in g.node if n.op_type == "Conv"]
    conv_inputs = [n.input[0] for n in convs]
    quantized = {t for t in conv_inputs if t not in inits}
    if variant in ("tensor", "shared", "tensor16"):
        quantized |= {n.output[0] for n in convs}
    encodings = {}
    for t in quantized:
        if variant == "tensor16":
            s, z = own_encoding(np.array(lo[t].min()), np.array(hi[t].max()),
                                levels=65536)
        elif variant == "tensor":
            s, z = own_encoding(np.array(lo[t].min()), np.array(hi[t].max()))
        elif variant == "inputs-channel":
            s, z = own_encoding(lo[t], hi[t])
        else:
            s, z = shared_encoding(lo[t], hi[t])
        encodings[t] = (s, z)
    for n in convs:
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
        m_out, per_group = w.shape[0], w.shape[1]
        fold = np.ones((m_out, per_group))
        if variant in ("inputs-shared", "shared") and n.input[0] in encodings:
            groups = next((a.i for a in n.attribute if a.name == "group"), 1)
            channel = ((np.arange(m_out)[:, None] // (m_out // groups))
                       * per_group + np.arange(per_group)[None, :])
            fold = encodings[n.input[0]][0][channel]
        fold = fold.reshape(m_out, per_group, *([1] * (w.ndim - 2)))
        wf = w * fold
        step = np.maximum(np.abs(wf.reshape(m_out, -1)).max(1) / 127, 1e-30)
        step = step.reshape(-1, *([1] * (w.ndim - 1)))
        rounded = np.clip(np.round(wf / step), -127, 127) * step / fold
        inits[n.input[1]].CopyFrom(numpy_helper.from_array(
            rounded.astype(np.float32), n.input[1]))
    pairs = {}
    for t, (s, z) in encodings.items():
        if variant == "tensor16":
            pairs[t] = rounding_nodes(g, t, float(s), float(z), 65535)
            continue
        axis = {} if variant == "tensor" else {"axis": 1}
        g.initializer.extend([
            numpy_helper.from_array(np.asarray(s, np.float32), t + "_fq_s"),
            numpy_helper.from_array(np.asarray(z, np.uint8), t + "_fq_z")])
        pairs[t] = [
            helper.make_node("QuantizeLinear", [t, t + "_fq_s", t + "_fq_z"],
                             [t + "_fq_q"], **axis),
            helper.make_node("DequantizeLinear",
                             [t + "_fq_q", t + "_fq_s", t + "_fq_z"],
                             [t + "_fq"], **axis)]
    for n in g.node:
        for k, x in enumerate(n.input):
            if x in pairs:
                n.input[k] = x + "_fq"
    nodes = [p for i in g.input if i.name in pairs for p in pairs[i.name]]
    for n in g.node:
        nodes.append(n)
        for o in n.output:
            nodes.extend(pairs.get(o, []))
    del g.node[:]
    g.node.extend(nodes)
    return m


def rounding_nodes(g, t, scale, zero, top):
    """x -> (clip(round(x / scale) + zero, 0, top) - zero) * scale as float
    ops; writes `t`_fq."""
    consts = {"_fq_inv": 1.0 / scale, "_fq_zero": zero, "_fq_lo": 0.0,
              "_fq_hi": float(top), "_fq_s": scale}
    g.initializer.extend(numpy_helper.from_array(np.array(v, np.float32),
                                                 t + k)
                         for k, v in consts.items())
    return [
        helper.make_node("Mul", [t, t + "_fq_inv"], [t + "_fq_a"]),
        helper.make_node("Round", [t + "_fq_a"], [t + "_fq_b"]),
        helper.make_node("Add", [t + "_fq_b", t + "_fq_zero"], [t + "_fq_c"]),
        helper.make_node("Clip", [t + "_fq_c", t + "_fq_lo", t + "_fq_hi"],
                         [t + "_fq_d"]),
        helper.make_node("Sub", [t + "_fq_d", t + "_fq_zero"], [t + "_fq_e"]),
        helper.make_node("Mul", [t + "_fq_e", t + "_fq_s"], [t + "_fq"])]


def cosine(a, b):
    a = a.ravel().astype(np.float64)
    b = b.ravel().astype(np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True,
                    help="what scripts.quant.make_data wrote")
    ap.add_argument("--model", choices=sorted(MODELS), default="layout")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--eval", type=int, default=20,
                    help="evaluation samples (default 20)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            sys.exit("unknown variant %r; choose from %s" % (v, ", ".join(VARIANTS)))
    with tempfile.TemporaryDirectory() as tmp:
        optimized = os.path.join(tmp, "basic.onnx")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = optimized
        ort.InferenceSession(os.path.join(WHEELS, MODELS[args.model]), so,
                             providers=["CPUExecutionProvider"])
        model = onnx.load(optimized)
    calib = samples(args.data, args.model, "calib")
    evals = samples(args.data, args.model, "eval")[:args.eval]
    tensors = set()
    for n in model.graph.node:
        if n.op_type == "Conv":
            tensors.update([n.input[0], n.output[0]])
    tensors -= {i.name for i in model.graph.initializer}
    lo, hi = channel_ranges(model, sorted(tensors), calib)
    reference = session(model.SerializeToString())
    names = [o.name for o in reference.get_outputs()]
    floats = [reference.run(names, feeds) for feeds in evals]
    print("%d calibration, %d evaluation samples; mean cosine per output, "
          "then the worst" % (len(calib), len(evals)))
    for v in variants:
        s = session(build(model, v, lo, hi).SerializeToString())
        c = np.array([[cosine(a, b) for a, b in zip(f, s.run(names, feeds))]
                      for feeds, f in zip(evals, floats)]).mean(0)
        print("%-15s %s  worst %.4f" % (v, " ".join("%.4f" % x for x in c),
                                        c.min()))


if __name__ == "__main__":
    main()
