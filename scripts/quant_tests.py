#!/usr/bin/env python3
"""Writes integer-kernel tests in the ONNX node-test layout, ORT as oracle.

The ONNX backend node tests for MatMulInteger, ConvInteger, QLinearMatMul
and QLinearConv are tiny (reductions of 3 or 4 elements), too small to
exercise what matters for quantized kernels: long reductions, a remainder
after chunks of four, signed and unsigned operands mixed, zero points per
tensor and per row or channel, and constant weights (which dlc lays out
at compile time: convolutions along pixels or output channels at stride 1
and 2, depthwise and grouped ones, QGemm). This script writes such tests, one folder
each with `model.onnx` and `test_data_set_0/{input,output}_N.pb` like the
node tests, with outputs computed by ONNX Runtime, so that node_tests.py
runs them unchanged:

  python -m scripts.quant_tests --out DIR
  python -m scripts.node_tests --data-dir DIR \\
      --targets cpu,vulkan,vulkan:+dot8 \\
      --expectations test/conformance/quant-tests.expected

Deterministic (fixed seeds); nothing is downloaded.
"""

import argparse
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from scripts.zoo.common import ort_options

DEFAULT_OUT = os.path.expanduser("~/.cache/dlc/quant-tests")

NP = {TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8,
      TensorProto.FLOAT: np.float32, TensorProto.INT32: np.int32}


def rand(rng, dtype, shape):
    if dtype == TensorProto.FLOAT:
        return rng.uniform(-1, 1, shape).astype(np.float32)
    info = np.iinfo(NP[dtype])
    return rng.integers(info.min, info.max + 1, shape).astype(NP[dtype])


def rand_runtime_s8_weights(rng, shape):
    """int8 weights that are a graph input, next to uint8 activations: 7
    bits, as quantize_*'s reduce_range writes them. ORT's exact integer
    mode (ort_options) converts constant weights only; with run-time
    weights its uint8 x int8 kernels on x86 without VNNI saturate pairs of
    full-range products in 16 bits, and the reference would depend on the
    host. Constant weights keep all 8 bits."""
    return rng.integers(-64, 64, shape).astype(np.int8)


def fresh_dir(out):
    """Empties (or creates) the folder a generator writes its tests to."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)


def generator_main(doc, default_out, generate):
    """The command line of the test generators: --out DIR, then what was
    written. `generate(out)` returns the tests' names."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    names = generate(args.out)
    print("%d tests written to %s" % (len(names), args.out))
    return 0


def write(out, name, nodes, inputs, outputs, feeds, opset=13, results=None,
          domains=(), initializers=(), threads=None, exact_integers=True):
    """`domains`: extra (domain, version) opset imports (com.microsoft);
    ONNX's checker cannot check their operators, so such models get the
    structural check only. `threads`: ONNX Runtime's intra-op threads for
    the reference run (some of its kernels compute differently by thread
    count). `exact_integers`: see ort_options."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, list(feeds[n].shape))
         for n, t in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        list(initializers))
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in domains])
    model.ir_version = 8
    # ONNX Runtime's outputs, unless the caller computed the references
    # with it another way (an equivalent model ORT runs).
    if results is None:
        options = ort_options(threads, exact_integers)
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
        results = sess.run(None, {n: feeds[n] for n, _ in inputs})
    # The outputs' shapes as ORT computed them, then the full check.
    del model.graph.output[:]
    model.graph.output.extend(
        [helper.make_tensor_value_info(n, t, list(v.shape))
         for (n, t), v in zip(outputs, results)])
    onnx.checker.check_model(model, full_check=not domains)
    d = os.path.join(out, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, _) in enumerate(inputs):
        with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(feeds[n], n).SerializeToString())
    for i, ((n, _), v) in enumerate(zip(outputs, results)):
        with open(os.path.join(data, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())


def matmul_integer(out, rng, name, ta, tb, m, k, n, za, zb):
    """MatMulInteger with zero points: None, "scalar" or "vector" (per
    column of B; ONNX Runtime takes A's zero point as a scalar only)."""
    feeds = {"A": rand(rng, ta, (m, k)), "B": rand(rng, tb, (k, n))}
    if ta == TensorProto.UINT8 and tb == TensorProto.INT8:
        feeds["B"] = rand_runtime_s8_weights(rng, (k, n))
    inputs = [("A", ta), ("B", tb)]
    names = ["A", "B"]
    for key, t, kind, size in (("a_zero_point", ta, za, m),
                               ("b_zero_point", tb, zb, n)):
        if kind is None:
            names.append("")
            continue
        feeds[key] = rand(rng, t, () if kind == "scalar" else (size,))
        inputs.append((key, t))
        names.append(key)
    while names and names[-1] == "":
        names.pop()
    write(out, name, [helper.make_node("MatMulInteger", names, ["Y"])],
          inputs, [("Y", TensorProto.INT32)], feeds, opset=10)


def conv_integer(out, rng, name, c, f, hw, kernel, zx, zw, pads):
    feeds = {"x": rand(rng, TensorProto.UINT8, (1, c, hw, hw)),
             "w": rand(rng, TensorProto.UINT8, (f, c, kernel, kernel))}
    inputs = [("x", TensorProto.UINT8), ("w", TensorProto.UINT8)]
    names = ["x", "w"]
    if zx is not None:
        feeds["x_zero_point"] = np.array(zx, np.uint8)
        inputs.append(("x_zero_point", TensorProto.UINT8))
        names.append("x_zero_point")
    if zw is not None:
        feeds["w_zero_point"] = np.array(zw, np.uint8)
        inputs.append(("w_zero_point", TensorProto.UINT8))
        names.append("w_zero_point")
    node = helper.make_node("ConvInteger", names, ["y"],
                            kernel_shape=[kernel, kernel], pads=[pads] * 4)
    write(out, name, [node], inputs, [("y", TensorProto.INT32)], feeds,
          opset=10)


def dynamic_integer(out, rng, name, op, x_shape, w_shape, w_zp, **attrs):
    """ConvInteger or MatMulInteger as quantize_dynamic writes them: the
    input's zero point a graph input (DynamicQuantizeLinear computes it at
    run time), constant uint8 weights over the full byte range with a zero
    point far from 128 (w - w_zp spans more than a signed byte), which dlc
    centres per output channel and corrects with the input's window
    sums."""
    x = rand(rng, TensorProto.UINT8, x_shape)
    feeds = {"x": x, "x_zero_point": np.array(rng.integers(0, 256),
                                              np.uint8)}
    init = [numpy_helper.from_array(
                rand(rng, TensorProto.UINT8, w_shape), "w"),
            numpy_helper.from_array(np.array(w_zp, np.uint8), "w_zero_point")]
    node = helper.make_node(op, ["x", "w", "x_zero_point", "w_zero_point"],
                            ["y"], **attrs)
    write(out, name, [node], [("x", TensorProto.UINT8),
                              ("x_zero_point", TensorProto.UINT8)],
          [("y", TensorProto.INT32)], feeds, opset=10, initializers=init)


def qlinear_conv(out, rng, name, tx, c, f, hw, kernel):
    """QLinearConv with per-channel symmetric int8 weights (the usual
    export) and an activation zero point."""
    feeds = {
        "x": rand(rng, tx, (1, c, hw, hw)),
        "x_scale": np.array(0.02, np.float32),
        "x_zero_point": np.array(7 if tx == TensorProto.UINT8 else -3,
                                 NP[tx]),
        "w": (rand_runtime_s8_weights(rng, (f, c, kernel, kernel))
              if tx == TensorProto.UINT8 else
              rand(rng, TensorProto.INT8, (f, c, kernel, kernel))),
        "w_scale": rng.uniform(0.002, 0.01, (f,)).astype(np.float32),
        "w_zero_point": np.zeros((f,), np.int8),
        "y_scale": np.array(0.05, np.float32),
        "y_zero_point": np.array(5 if tx == TensorProto.UINT8 else 1,
                                 NP[tx]),
    }
    order = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
             "y_scale", "y_zero_point"]
    types = [tx, TensorProto.FLOAT, tx, TensorProto.INT8, TensorProto.FLOAT,
             TensorProto.INT8, TensorProto.FLOAT, tx]
    node = helper.make_node("QLinearConv", order, ["y"],
                            kernel_shape=[kernel, kernel],
                            pads=[kernel // 2] * 4)
    write(out, name, [node], list(zip(order, types)), [("y", tx)], feeds)


def qlinear_matmul(out, rng, name, t, m, k, n):
    feeds = {
        "a": rand(rng, t, (m, k)), "a_scale": np.array(0.03, np.float32),
        "a_zero_point": np.array(11 if t == TensorProto.UINT8 else -2,
                                 NP[t]),
        "b": rand(rng, t, (k, n)), "b_scale": np.array(0.01, np.float32),
        "b_zero_point": np.array(3 if t == TensorProto.UINT8 else 1, NP[t]),
        "y_scale": np.array(0.5, np.float32),
        "y_zero_point": np.array(120 if t == TensorProto.UINT8 else 0,
                                 NP[t]),
    }
    order = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
             "y_scale", "y_zero_point"]
    types = [t, TensorProto.FLOAT, t, t, TensorProto.FLOAT, t,
             TensorProto.FLOAT, t]
    write(out, name, [helper.make_node("QLinearMatMul", order, ["y"])],
          list(zip(order, types)), [("y", t)], feeds)


def qlinear_conv_const(out, rng, name, tx, tw, c, f, h, w, kernel, stride=1,
                       group=1, w_zp=0):
    """QLinearConv with constant weights, scales and zero points, as
    exporters write it: what dlc specializes at compile time (the layouts
    for dot products: along pixels or output channels, stride 1 or 2, a
    depthwise filter window; zero points moved out of the reduction)."""
    init = {
        "x_scale": np.array(0.02, np.float32),
        "x_zero_point": np.array(130 if tx == TensorProto.UINT8 else -7,
                                 NP[tx]),
        "w": rand(rng, tw, (f, c // group, kernel, kernel)),
        "w_scale": rng.uniform(0.002, 0.01, (f,)).astype(np.float32),
        "w_zero_point": np.full((f,), w_zp, NP[tw]),
        "y_scale": np.array(0.3, np.float32),
        "y_zero_point": np.array(120 if tx == TensorProto.UINT8 else 2,
                                 NP[tx]),
        "B": rng.integers(-5000, 5000, (f,)).astype(np.int32),
    }
    if tw == TensorProto.UINT8:
        # w - w_zp must stay within a signed byte for dlc's layouts; keep
        # the draw near the zero point.
        init["w"] = rng.integers(max(w_zp - 100, 0), min(w_zp + 100, 255),
                                 (f, c // group, kernel, kernel)).astype(
                                     np.uint8)
    feeds = {"x": rand(rng, tx, (1, c, h, w))}
    order = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
             "y_scale", "y_zero_point", "B"]
    node = helper.make_node("QLinearConv", order, ["y"],
                            kernel_shape=[kernel, kernel],
                            pads=[kernel // 2] * 4, strides=[stride] * 2,
                            group=group)
    # ORT's exact integer mode turns constant int8 weights into uint8 and
    # then has no kernel for int8 activations; its int8 x int8 kernels do
    # not saturate, so they need no such mode.
    write(out, name, [node], [("x", tx)], [("y", tx)], feeds,
          initializers=[numpy_helper.from_array(v, n)
                        for n, v in init.items()],
          exact_integers=tx == TensorProto.UINT8)


def qgemm_const(out, rng, name, m, k, n, trans_b):
    """com.microsoft QGemm with a constant (transposed) weight and an int32
    bias, as dlc-fold-qdq makes a QDQ Gemm and quantize_static's QOperator
    format writes it."""
    init = {
        "a_scale": np.array(0.02, np.float32),
        "a_zero_point": np.array(130, np.uint8),
        "b": rand(rng, TensorProto.INT8, (n, k) if trans_b else (k, n)),
        "b_scale": rng.uniform(0.002, 0.01, (n,)).astype(np.float32),
        "b_zero_point": np.zeros((n,), np.int8),
        "C": rng.integers(-3000, 3000, (n,)).astype(np.int32),
        "y_scale": np.array(0.3, np.float32),
        "y_zero_point": np.array(120, np.uint8),
    }
    feeds = {"a": rand(rng, TensorProto.UINT8, (m, k))}
    order = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
             "C", "y_scale", "y_zero_point"]
    node = helper.make_node("QGemm", order, ["y"], domain="com.microsoft",
                            transB=trans_b)
    write(out, name, [node], [("a", TensorProto.UINT8)],
          [("y", TensorProto.UINT8)], feeds, domains=[("com.microsoft", 1)],
          initializers=[numpy_helper.from_array(v, nm)
                        for nm, v in init.items()])


def qdq_float_out(out, rng, name, tx, op):
    """TensorRT-style QDQ: QuantizeLinear/DequantizeLinear before a Conv's
    (or MatMul's) inputs only, its result going on in float (a float bias,
    a Relu after). dlc-fold-qdq makes it ConvInteger (MatMulInteger) and
    the dequantization of its sums; ONNX Runtime runs it as written."""
    zero = np.array(125 if tx == TensorProto.UINT8 else -3, NP[tx])
    if op == "Conv":
        x_shape, w_shape, axis = (1, 24, 20, 20), (32, 24, 3, 3), 0
    else:
        x_shape, w_shape, axis = (8, 5, 64), (64, 40), 1
    channels = w_shape[axis]
    init = {
        "x_scale": np.array(0.03, np.float32), "x_zero_point": zero,
        "w": rand(rng, TensorProto.INT8, w_shape),
        "w_scale": rng.uniform(0.002, 0.01, (channels,)).astype(np.float32),
        "w_zero_point": np.zeros((channels,), np.int8),
        "B": rng.standard_normal(channels).astype(np.float32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero_point"],
                         ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale",
                                              "x_zero_point"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale",
                                              "w_zero_point"], ["wd"],
                         axis=axis)]
    if op == "Conv":
        nodes.append(helper.make_node("Conv", ["xd", "wd", "B"], ["c"],
                                      kernel_shape=[3, 3], pads=[1] * 4))
    else:
        nodes += [helper.make_node("MatMul", ["xd", "wd"], ["m"]),
                  helper.make_node("Add", ["m", "B"], ["c"])]
    nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    feeds = {"x": (rng.standard_normal(x_shape) * 2).astype(np.float32)}
    write(out, name, nodes, [("x", TensorProto.FLOAT)],
          [("y", TensorProto.FLOAT)], feeds,
          initializers=[numpy_helper.from_array(v, n)
                        for n, v in init.items()])


def generate(out):
    fresh_dir(out)
    rng = np.random.default_rng(7)
    U8, S8 = TensorProto.UINT8, TensorProto.INT8
    matmul_integer(out, rng, "test_q_matmulinteger_u8u8_zp_k40", U8, U8,
                   16, 40, 24, "scalar", "scalar")
    matmul_integer(out, rng, "test_q_matmulinteger_u8u8_azp_k37", U8, U8,
                   9, 37, 12, "scalar", None)
    matmul_integer(out, rng, "test_q_matmulinteger_u8s8_k64", U8, S8,
                   8, 64, 16, None, None)
    matmul_integer(out, rng, "test_q_matmulinteger_u8s8_colzp_k30", U8, S8,
                   5, 30, 7, "scalar", "vector")
    matmul_integer(out, rng, "test_q_matmulinteger_s8s8_zp_k50", S8, S8,
                   6, 50, 10, "scalar", "scalar")
    conv_integer(out, rng, "test_q_convinteger_c12_3x3_zp", 12, 8, 9, 3,
                 100, 30, 0)
    conv_integer(out, rng, "test_q_convinteger_c32_1x1", 32, 16, 6, 1,
                 None, None, 0)
    qlinear_conv(out, rng, "test_q_qlinearconv_u8_c16_3x3", U8, 16, 8, 8,
                 3)
    qlinear_conv(out, rng, "test_q_qlinearconv_s8_c24_1x1", S8, 24, 12, 7,
                 1)
    qlinear_matmul(out, rng, "test_q_qlinearmatmul_u8_k48", U8, 10, 48, 14)
    qlinear_matmul(out, rng, "test_q_qlinearmatmul_s8_k21", S8, 4, 21, 6)
    # Constant weights: the forms dlc-cpu-int8-conv writes.
    qlinear_conv_const(out, rng, "test_q_const_conv_pixels_3x3", U8, S8,
                       12, 20, 40, 37, 3)
    qlinear_conv_const(out, rng, "test_q_const_conv_pixels_stride2", U8, S8,
                       5, 24, 48, 75, 3, stride=2)
    qlinear_conv_const(out, rng, "test_q_const_conv_channels_7x7", U8, S8,
                       40, 72, 7, 7, 3)
    qlinear_conv_const(out, rng, "test_q_const_conv_channels_s8_1x1", S8, S8,
                       19, 36, 9, 9, 1)
    qlinear_conv_const(out, rng, "test_q_const_conv_u8_weights", U8, U8,
                       8, 16, 12, 40, 3, w_zp=128)
    qlinear_conv_const(out, rng, "test_q_const_depthwise_3x3", U8, S8,
                       24, 24, 37, 37, 3, group=24)
    qlinear_conv_const(out, rng, "test_q_const_depthwise_stride2", U8, S8,
                       16, 16, 35, 67, 3, stride=2, group=16)
    qlinear_conv_const(out, rng, "test_q_const_depthwise_s8", S8, S8,
                       8, 8, 20, 20, 3, group=8)
    qlinear_conv_const(out, rng, "test_q_const_grouped", U8, S8,
                       16, 32, 10, 10, 3, group=4)
    # quantize_dynamic's forms: run-time input zero points, uint8 weights
    # that do not fit a signed byte around their zero point.
    dynamic_integer(out, rng, "test_q_dynamic_convinteger_pixels_3x3",
                    "ConvInteger", (1, 32, 16, 64), (64, 32, 3, 3), 116,
                    kernel_shape=[3, 3], pads=[1] * 4)
    dynamic_integer(out, rng, "test_q_dynamic_convinteger_channels_3x3",
                    "ConvInteger", (1, 20, 9, 7), (48, 20, 3, 3), 140,
                    kernel_shape=[3, 3], pads=[1] * 4)
    dynamic_integer(out, rng, "test_q_dynamic_convinteger_stride2",
                    "ConvInteger", (1, 3, 33, 70), (16, 3, 3, 3), 90,
                    kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 2])
    dynamic_integer(out, rng, "test_q_dynamic_matmulinteger_k130",
                    "MatMulInteger", (24, 130), (130, 64), 123)
    qgemm_const(out, rng, "test_q_const_qgemm_transb_k130", 3, 130, 50, 1)
    # QDQ layers whose result stays float (TensorRT's placement).
    qdq_float_out(out, rng, "test_q_qdq_float_out_conv_u8", U8, "Conv")
    qdq_float_out(out, rng, "test_q_qdq_float_out_conv_s8", S8, "Conv")
    qdq_float_out(out, rng, "test_q_qdq_float_out_matmul_u8", U8, "MatMul")
    qgemm_const(out, rng, "test_q_const_qgemm_k64", 7, 64, 40, 0)
    # Output channels or columns that end in a partial block of lanes, at
    # sizes split into several workgroups (a detector head of 42 channels;
    # a 1000-class classifier on a batch): once silently wrong in the
    # lanes past the remainder of every block.
    qlinear_conv_const(out, rng, "test_q_const_conv_partial_block_1x1", U8, S8,
                       128, 42, 50, 38, 1)
    qlinear_conv_const(out, rng, "test_q_const_conv_partial_block_60x30", U8,
                       S8, 64, 40, 60, 30, 1)
    qgemm_const(out, rng, "test_q_const_qgemm_partial_block_m1900", 1900, 128,
                42, 0)
    qgemm_const(out, rng, "test_q_const_qgemm_partial_block_n1000", 64, 256,
                1000, 1)
    return sorted(os.listdir(out))


if __name__ == "__main__":
    sys.exit(generator_main(__doc__, DEFAULT_OUT, generate))
