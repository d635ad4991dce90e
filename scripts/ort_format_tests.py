#!/usr/bin/env python3
"""Writes tests of what ONNX Runtime's own tools write, ORT as oracle.

ONNX Runtime's transformer optimizer fuses subgraphs into com.microsoft
operators (Gelu, BiasGelu, FastGelu, QuickGelu, SkipLayerNormalization),
and its quantization tools write QOperator models (QLinearConv and
QLinearMatMul plus com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool,
QLinearAveragePool, QGemm) and dynamically quantized ones (ConvInteger,
MatMulInteger, com.microsoft DynamicQuantizeLSTM); its 4-bit quantizer
and GenAI exports write com.microsoft MatMulNBits. The ONNX node tests
have none of the com.microsoft ones. This script writes tests of each at
the sizes models use, one folder each in the node-test layout, outputs by
ONNX Runtime:

  python -m scripts.ort_format_tests --out DIR
  python -m scripts.node_tests --data-dir DIR --targets cpu,vulkan \\
      --expectations test/conformance/ort-format-tests.expected

Deterministic (fixed seeds); nothing is downloaded.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from scripts.quant_tests import fresh_dir, generator_main, write

DEFAULT_OUT = os.path.expanduser("~/.cache/dlc/ort-format-tests")
F32 = TensorProto.FLOAT
MS = [("com.microsoft", 1)]


def ms_node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain="com.microsoft",
                            **attrs)


def uniform(rng, shape, scale=1.0):
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def transformer_ops(out, rng):
    """The fusions of ORT's transformer optimizer, at BERT-base-like sizes
    (hidden 768 is large; 256 keeps the tests quick)."""
    x = uniform(rng, [2, 16, 256], 3.0)
    bias = uniform(rng, [256])
    write(out, "test_ms_gelu", [ms_node("Gelu", ["x"], ["y"])],
          [("x", F32)], [("y", F32)], {"x": x}, domains=MS)
    write(out, "test_ms_bias_gelu", [ms_node("BiasGelu", ["x", "b"], ["y"])],
          [("x", F32), ("b", F32)], [("y", F32)], {"x": x, "b": bias},
          domains=MS)
    write(out, "test_ms_fast_gelu", [ms_node("FastGelu", ["x"], ["y"])],
          [("x", F32)], [("y", F32)], {"x": x}, domains=MS)
    write(out, "test_ms_fast_gelu_bias",
          [ms_node("FastGelu", ["x", "b"], ["y"])],
          [("x", F32), ("b", F32)], [("y", F32)], {"x": x, "b": bias},
          domains=MS)
    write(out, "test_ms_quick_gelu", [ms_node("QuickGelu", ["x"], ["y"])],
          [("x", F32)], [("y", F32)], {"x": x}, domains=MS)
    write(out, "test_ms_quick_gelu_alpha",
          [ms_node("QuickGelu", ["x"], ["y"], alpha=1.2)],
          [("x", F32)], [("y", F32)], {"x": x}, domains=MS)
    feeds = {"input": x, "skip": uniform(rng, [2, 16, 256], 2.0),
             "gamma": uniform(rng, [256]) + 1.0, "beta": uniform(rng, [256]),
             "bias": uniform(rng, [256])}
    names = ["input", "skip", "gamma", "beta", "bias"]
    write(out, "test_ms_skip_layer_norm",
          [ms_node("SkipLayerNormalization", names, ["y"], epsilon=1e-5)],
          [(n, F32) for n in names], [("y", F32)], feeds, domains=MS)
    # ORT's CPU kernel leaves the mean and inverse standard deviation
    # outputs empty (they exist for training); the sum it writes.
    write(out, "test_ms_skip_layer_norm_sum",
          [ms_node("SkipLayerNormalization", names[:3],
                   ["y", "", "", "sum"])],
          [(n, F32) for n in names[:3]], [("y", F32), ("sum", F32)],
          {n: feeds[n] for n in names[:3]}, domains=MS)


U8, S8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
NP = {U8: np.uint8, S8: np.int8}


def qdata(rng, t, shape):
    info = np.iinfo(NP[t])
    return rng.integers(info.min, info.max + 1, shape).astype(NP[t])


def qparams(rng, t, name, scale):
    """A scale and zero point as initializers (quantize_static writes
    constants); zero points are 0 for int8 as ORT writes them."""
    zp = rng.integers(100, 156) if t == U8 else 0
    return [numpy_helper.from_array(np.array(scale, np.float32),
                                    name + "_scale"),
            numpy_helper.from_array(np.array(zp, NP[t]), name + "_zp")]


def qoperator_ops(out, rng):
    """QOperator models' com.microsoft operators, uint8 and int8, with
    scales like calibrated ones (outputs span most of the 8-bit range)."""
    for t, tag in ((U8, "u8"), (S8, "s8")):
        shape = [1, 16, 12, 12]
        a, b = qdata(rng, t, shape), qdata(rng, t, shape)
        bias = qdata(rng, t, [1, 16, 1, 1])
        for op, cs in (("QLinearAdd", 0.05), ("QLinearMul", 0.08)):
            for bname, bval in (("B", b), ("bias", bias)):
                inits = (qparams(rng, t, "a", 0.031) +
                         qparams(rng, t, "b", 0.027) +
                         qparams(rng, t, "c", cs))
                node = ms_node(op, ["A", "a_scale", "a_zp", bname, "b_scale",
                                    "b_zp", "c_scale", "c_zp"], ["C"])
                name = "test_ms_%s_%s%s" % (op[7:].lower(), tag,
                                            "_broadcast" if bname == "bias"
                                            else "")
                write(out, name, [node], [("A", t), (bname, t)], [("C", t)],
                      {"A": a, bname: bval}, domains=MS,
                      initializers=inits)
        for op, attrs in (("QLinearSigmoid", {}),
                          ("QLinearLeakyRelu", {"alpha": 0.1})):
            inits = qparams(rng, t, "x", 0.04) + qparams(rng, t, "y", 0.004
                                                         if op == "QLinearSigmoid"
                                                         else 0.03)
            write(out, "test_ms_%s_%s" % (op[7:].lower(), tag),
                  [ms_node(op, ["X", "x_scale", "x_zp", "y_scale", "y_zp"],
                           ["Y"], **attrs)],
                  [("X", t)], [("Y", t)], {"X": a}, domains=MS,
                  initializers=inits)
        # Concat: one input quantized like the output (copied), one not.
        inits = (qparams(rng, t, "y", 0.05) + qparams(rng, t, "x1", 0.05) +
                 qparams(rng, t, "x2", 0.02))
        inits[3] = numpy_helper.from_array(
            numpy_helper.to_array(inits[1]), "x1_zp")
        write(out, "test_ms_concat_%s" % tag,
              [ms_node("QLinearConcat", ["y_scale", "y_zp", "X1", "x1_scale",
                                         "x1_zp", "X2", "x2_scale", "x2_zp"],
                       ["Y"], axis=1)],
              [("X1", t), ("X2", t)], [("Y", t)],
              {"X1": a, "X2": qdata(rng, t, [1, 8, 12, 12])}, domains=MS,
              initializers=inits)
        x = qdata(rng, t, [2, 32, 14, 14])
        inits = qparams(rng, t, "x", 0.04) + qparams(rng, t, "y", 0.01)
        q5 = ["X", "x_scale", "x_zp", "y_scale", "y_zp"]
        write(out, "test_ms_global_average_pool_%s" % tag,
              [ms_node("QLinearGlobalAveragePool", q5, ["Y"],
                       channels_last=0)],
              [("X", t)], [("Y", t)], {"X": x}, domains=MS,
              initializers=inits)
        write(out, "test_ms_global_average_pool_nhwc_%s" % tag,
              [ms_node("QLinearGlobalAveragePool", q5, ["Y"],
                       channels_last=1)],
              [("X", t)], [("Y", t)], {"X": x.transpose(0, 2, 3, 1).copy()},
              domains=MS, initializers=inits)
        for name, attrs in (
                ("", dict(kernel_shape=[2, 2], strides=[2, 2])),
                ("_pads", dict(kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1])),
                ("_pads_count_include", dict(kernel_shape=[3, 3],
                                             strides=[1, 1],
                                             pads=[1, 1, 1, 1],
                                             count_include_pad=1))):
            write(out, "test_ms_average_pool%s_%s" % (name, tag),
                  [ms_node("QLinearAveragePool", q5, ["Y"], **attrs)],
                  [("X", t)], [("Y", t)], {"X": x}, domains=MS,
                  initializers=inits)
    # QGemm: u8 activations with u8 or s8 weights (ORT's u8 x s8 kernel
    # saturates pairs of products to 16 bits; weights of 7 bits, as
    # quantize_static's reduce_range writes them, keep it exact), per
    # tensor and per column, int32 bias, quantized or float output.
    a = qdata(rng, U8, [4, 96])
    for wt, tag in ((U8, "u8u8"), (S8, "u8s8")):
        w = qdata(rng, wt, [32, 96])
        if wt == S8:
            w = (w // 2).astype(np.int8)
        inits = (qparams(rng, U8, "a", 0.02) + [
            numpy_helper.from_array(
                rng.uniform(0.002, 0.004, [32]).astype(np.float32),
                "b_scale"),
            numpy_helper.from_array(
                np.full([32], 128 if wt == U8 else 0, NP[wt]), "b_zp"),
            numpy_helper.from_array(
                rng.integers(-2000, 2000, [32]).astype(np.int32), "C")] +
            qparams(rng, U8, "y", 0.05))
        names = ["A", "a_scale", "a_zp", "W", "b_scale", "b_zp", "C",
                 "y_scale", "y_zp"]
        write(out, "test_ms_qgemm_%s" % tag,
              [ms_node("QGemm", names, ["Y"], transB=1)],
              [("A", U8), ("W", wt)], [("Y", U8)], {"A": a, "W": w},
              domains=MS, initializers=inits)
        write(out, "test_ms_qgemm_%s_float_out" % tag,
              [ms_node("QGemm", names[:7], ["Y"], transB=1, alpha=0.5)],
              [("A", U8), ("W", wt)], [("Y", F32)], {"A": a, "W": w},
              domains=MS, initializers=inits[:5])


def dynamic_lstm_ops(out, rng):
    """com.microsoft.DynamicQuantizeLSTM as quantize_dynamic writes it: W
    and R transposed ([D, I, 4H], [D, H, 4H]), int8 (zero point 0) or uint8
    weights, scales per direction or per direction and column; every
    direction, initial states, a batch of 3 over 12 steps. ONNX Runtime
    quantizes the hidden state of each group of batch entries one thread
    handles with one range; with as many threads as entries (the
    references here) each entry has its own range, as dlc computes it."""
    steps, batch, inp, hidden = 12, 3, 24, 32
    x = uniform(rng, [steps, batch, inp], 2.0)
    for direction, dirs in (("forward", 1), ("reverse", 1),
                            ("bidirectional", 2)):
        for wt, per_column in ((S8, False), (S8, True), (U8, False)):
            tag = "%s_%s%s" % (direction, "s8" if wt == S8 else "u8",
                               "_per_column" if per_column else "")
            inits, feeds = [], {"X": x}
            for name, k in (("W", inp), ("R", hidden)):
                w = uniform(rng, [dirs, k, 4 * hidden], 0.3)
                shape = [dirs, 4 * hidden] if per_column else [dirs]
                amax = np.abs(w).max(axis=1) if per_column else \
                    np.abs(w).reshape(dirs, -1).max(axis=1)
                if wt == S8:
                    scale = (amax / 127).astype(np.float32)
                    zp = np.zeros(shape, np.int8)
                else:
                    scale = (2 * amax / 255).astype(np.float32)
                    zp = np.full(shape, 128, np.uint8)
                cols = -1 if per_column else 1
                s = scale.reshape(dirs, 1, cols)
                z = zp.reshape(dirs, 1, cols).astype(np.float32)
                lo, hi = (-128, 127) if wt == S8 else (0, 255)
                q = np.clip(np.rint(w / s) + z, lo, hi)
                inits += [
                    numpy_helper.from_array(q.astype(NP[wt]), name),
                    numpy_helper.from_array(scale.reshape(shape),
                                            name + "_scale"),
                    numpy_helper.from_array(zp, name + "_zero_point")]
            inits.append(numpy_helper.from_array(
                uniform(rng, [dirs, 8 * hidden], 0.5), "B"))
            feeds["h0"] = uniform(rng, [dirs, batch, hidden], 0.5)
            feeds["c0"] = uniform(rng, [dirs, batch, hidden], 0.5)
            node = ms_node(
                "DynamicQuantizeLSTM",
                ["X", "W", "R", "B", "", "h0", "c0", "", "W_scale",
                 "W_zero_point", "R_scale", "R_zero_point"],
                ["Y", "Y_h", "Y_c"], hidden_size=hidden, direction=direction)
            write(out, "test_ms_dynamic_quantize_lstm_%s" % tag, [node],
                  [("X", F32), ("h0", F32), ("c0", F32)],
                  [("Y", F32), ("Y_h", F32), ("Y_c", F32)], feeds,
                  domains=MS, initializers=inits, threads=batch)


def matmul_nbits_quantized(rng, k, n, block_size, bits, symmetric):
    """The MatMulNBits node and initializers ONNX Runtime's 4-bit quantizer
    (MatMulNBitsQuantizer, round to nearest) writes for a random float
    MatMul of a [.., K] by a constant [K, N]."""
    from onnxruntime.quantization import matmul_nbits_quantizer as mq
    w = uniform(rng, [k, n])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "W"], ["Y"])], "g",
        [helper.make_tensor_value_info("A", F32, [1, k])],
        [helper.make_tensor_value_info("Y", F32, [1, n])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    config = mq.DefaultWeightOnlyQuantConfig(
        block_size=block_size, is_symmetric=symmetric, bits=bits)
    quantizer = mq.MatMulNBitsQuantizer(model, algo_config=config)
    quantizer.process()
    quantized = quantizer.model.model.graph
    (node,) = [nd for nd in quantized.node if nd.op_type == "MatMulNBits"]
    return node, list(quantized.initializer)


def weight_only_ops(out, rng):
    """com.microsoft.MatMulNBits: what ONNX Runtime's quantizer writes (4
    and 8 bits, symmetric and not, blocks of 32 to 128; a transformer's
    projections at batch 1 and over a sequence), and the variants other
    tools write: float zero points, a bias, K that is no multiple of the
    block (the last block padded), a plain g_idx."""
    for k, n, bs, bits, sym, lead in (
            (256, 96, 32, 4, False, [1, 4]),
            (256, 96, 64, 4, True, [1, 4]),
            (512, 256, 128, 4, False, [1, 1]),
            (1024, 64, 32, 4, True, [1]),
            (256, 48, 32, 8, False, [3]),
            (128, 40, 16, 8, True, [2, 5])):
        node, inits = matmul_nbits_quantized(rng, k, n, bs, bits, sym)
        del node.input[0]
        node.input.insert(0, "A")
        del node.output[:]
        node.output.append("Y")
        write(out, "test_ms_matmulnbits_%dbit_%s_k%d_n%d_block%d_m%d" % (
            bits, "sym" if sym else "asym", k, n, bs, int(np.prod(lead))),
              [node], [("A", F32)], [("Y", F32)],
              {"A": uniform(rng, lead + [k])}, domains=MS,
              initializers=inits)
    # float16 models (what GenAI exports for GPUs write): A, scales, float
    # zero points, bias and Y in T1 = float16, one of the quantizer's
    # nodes and a hand-made one with float zero points and a bias.
    F16 = TensorProto.FLOAT16
    node, inits = matmul_nbits_quantized(rng, 256, 96, 32, 4, False)
    del node.input[0]
    node.input.insert(0, "A")
    del node.output[:]
    node.output.append("Y")
    inits = [numpy_helper.from_array(
        numpy_helper.to_array(t).astype(np.float16), t.name)
             if t.data_type == F32 else t for t in inits]
    write(out, "test_ms_matmulnbits_fp16_4bit_asym_k256_n96_block32_m4",
          [node], [("A", F16)], [("Y", F16)],
          {"A": uniform(rng, [1, 4, 256]).astype(np.float16)}, domains=MS,
          initializers=inits)
    k, n, bs = 64, 24, 32
    q = rng.integers(0, 16, (n, k))
    write(out, "test_ms_matmulnbits_fp16_float_zp_bias",
          [ms_node("MatMulNBits", ["A", "B", "scales", "zp", "", "bias"],
                   ["Y"], K=k, N=n, bits=4, block_size=bs)],
          [("A", F16)], [("Y", F16)],
          {"A": uniform(rng, [3, k]).astype(np.float16)}, domains=MS,
          initializers=[
              numpy_helper.from_array(
                  (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(
                      n, k // bs, bs // 2), "B"),
              numpy_helper.from_array(rng.uniform(
                  0.01, 0.1, (n * k // bs,)).astype(np.float16), "scales"),
              numpy_helper.from_array(rng.uniform(
                  0, 15, (n * k // bs,)).astype(np.float16), "zp"),
              numpy_helper.from_array(
                  uniform(rng, [n]).astype(np.float16), "bias")])
    # com.microsoft.GatherBlockQuantized: the quantizer's 4-bit embedding
    # tables (uint4 with zero points, int4 without), gathered by indices
    # with negative ones among them.
    from onnxruntime.quantization import matmul_nbits_quantizer as mq
    for sym in (False, True):
        table = uniform(rng, [100, 96])
        graph = helper.make_graph(
            [helper.make_node("Gather", ["E", "ids"], ["Y"])], "g",
            [helper.make_tensor_value_info("ids", TensorProto.INT64,
                                           [2, 5])],
            [helper.make_tensor_value_info("Y", F32, [2, 5, 96])],
            [numpy_helper.from_array(table, "E")])
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", 21)])
        q = mq.MatMulNBitsQuantizer(model, algo_config=(
            mq.DefaultWeightOnlyQuantConfig(
                block_size=32, is_symmetric=sym,
                op_types_to_quantize=("Gather",),
                quant_axes=(("Gather", 1),))))
        q.process()
        (node,) = q.model.model.graph.node
        write(out, "test_ms_gatherblockquantized_%s" % (
            "int4_sym" if sym else "uint4_zp"), [node],
              [("ids", TensorProto.INT64)], [("Y", F32)],
              {"ids": np.array([[1, 5, 99, 0, 42], [-1, 3, 3, 7, -100]],
                               np.int64)},
              opset=21, domains=MS,
              initializers=list(q.model.model.graph.initializer))
    # Hand-made: K = 40 in blocks of 16 (padded), packed zero points and a
    # bias; float zero points; g_idx = k / block_size.
    k, n, bs = 40, 24, 16
    blocks = (k + bs - 1) // bs
    q = rng.integers(0, 16, (n, blocks * bs))
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(
        n, blocks, bs // 2)
    zq = rng.integers(0, 16, (n, blocks + 1))
    zpacked = (zq[:, 0::2] | (zq[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    scales = rng.uniform(0.01, 0.1, (n * blocks,)).astype(np.float32)
    common = [numpy_helper.from_array(packed, "B"),
              numpy_helper.from_array(scales, "scales")]
    attrs = dict(K=k, N=n, bits=4, block_size=bs)
    for tag, extra, names in (
            ("packed_zp_bias",
             [numpy_helper.from_array(zpacked, "zp"),
              numpy_helper.from_array(uniform(rng, [n]), "bias")],
             ["A", "B", "scales", "zp", "", "bias"]),
            ("float_zp",
             [numpy_helper.from_array(
                 rng.uniform(0, 15, (n * blocks,)).astype(np.float32), "zp")],
             ["A", "B", "scales", "zp"]),
            ("g_idx",
             [numpy_helper.from_array(
                 (np.arange(k) // bs).astype(np.int32), "g_idx")],
             ["A", "B", "scales", "", "g_idx"])):
        write(out, "test_ms_matmulnbits_k40_block16_%s" % tag,
              [ms_node("MatMulNBits", names, ["Y"], **attrs)],
              [("A", F32)], [("Y", F32)], {"A": uniform(rng, [2, 3, k])},
              domains=MS, initializers=common + extra)


def generate(out):
    fresh_dir(out)
    rng = np.random.default_rng(23)
    transformer_ops(out, rng)
    qoperator_ops(out, rng)
    dynamic_lstm_ops(out, rng)
    weight_only_ops(out, rng)
    return sorted(os.listdir(out))


if __name__ == "__main__":
    sys.exit(generator_main(__doc__, DEFAULT_OUT, generate))
