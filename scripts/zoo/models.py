#!/usr/bin/env python3
"""Generates the dlc model zoo: realistic models with random weights.

Each model is written with onnx.helper the way an exporter (torch.onnx,
tf2onnx, PaddlePaddle) writes it: exporter-style names, Constant nodes for
scalars, shape subgraphs, symbolic batch dimensions, BatchNorm folded or
kept. Weights are random (deterministic seeds), scaled so activations stay
O(1) through the network; no model is downloaded.

Every model is checked with onnx.checker (full_check=True) and run once with
ONNX Runtime. The models and a manifest (inputs with shapes, dtypes and value
ranges, the --input-shape pins, comparison tolerances, node counts by op type)
are written to a cache directory and regenerated only when this generator
changes.

  python -m scripts.zoo.models                      # into ~/.cache/dlc/models
  python -m scripts.zoo.models --out DIR --force    # regenerate everything
  python -m scripts.zoo.models --list               # names and descriptions
"""

import argparse
import hashlib
import math
import json
import os
import sys
import time

from scripts.zoo import zoo_env

zoo_env.ensure()
import numpy as np  # noqa: E402
import onnx  # noqa: E402

from scripts.zoo import builder as B  # noqa: E402
from scripts.zoo import common  # noqa: E402
from scripts.zoo.builder import GraphBuilder  # noqa: E402


# Part of the source hash (with models.py, builder.py and the onnx and numpy
# versions): bump it to force every cache to regenerate.
GENERATOR_VERSION = 1
DEFAULT_OUT = os.path.expanduser("~/.cache/dlc/models")
MANIFEST = "manifest.json"

IMAGE_INPUT = {"dist": "uniform", "low": -2.0, "high": 2.0,
               "note": "normalized image values (ImageNet mean/std land "
                       "in [-2.1, 2.6])"}

# Tolerances (dlc-run's rule: |out - ref| <= atol + rtol * |ref|).
# dlc and ONNX Runtime both compute in fp32 but sum in different orders
# (tiling, vectorization, FMA contraction) and use different exp/erf/tanh
# approximations. The rounding error of a K-term dot product is about
# sqrt(K) * 6e-8 relative to the sum of |terms|, and it compounds over depth.
# The generator measures it for every model as the difference between ONNX
# Runtime with all graph optimizations and with none (the manifest's
# ort.*.ort_reorder_abs: at most 5e-6 on these models, whose outputs are
# O(1-10)). The tolerances sit 20x and more above that and far below the
# error of a real bug (wrong padding, a dropped bias, a transposed weight or
# a mis-broadcast change outputs by O(0.1-1)). Loosen one only with a
# measured reason written next to it.
TOL_CNN = {"rtol": 1e-3, "atol": 1e-4,
           "why": "fp32 logits of magnitude 1-15 after 20-80 convs with K up "
                  "to 4608; ORT optimized vs unoptimized differ by <= 5e-6"}
TOL_TRANSFORMER = {"rtol": 1e-3, "atol": 1e-4,
                   "why": "LayerNorm outputs of magnitude <= 5; matmuls with "
                          "K <= 768; softmax/erf/tanh approximations ~1e-6; "
                          "ORT optimized vs unoptimized differ by <= 2e-6"}
TOL_PROB = {"rtol": 1e-3, "atol": 1e-4,
            "why": "sigmoid probabilities in [0, 1], judged mostly by atol; "
                   "ORT optimized vs unoptimized differ by <= 1e-6"}


class ZooModel:
    """What models.py knows about a model besides its graph."""

    def __init__(self, name, build, description, tolerance, post=None):
        self.name = name
        self.build = build
        self.description = description
        self.tolerance = tolerance
        # A tool run on the built model (ONNX Runtime's quantizers): takes
        # and returns a ModelProto.
        self.post = post


MODELS = []


def zoo_model(description, tolerance, post=None):
    def register(fn):
        name = fn.__name__.replace("build_", "")
        MODELS.append(ZooModel(name, fn, description, tolerance, post))
        return fn
    return register


def image_input(g, name, dims, pin=None):
    """Declares an image input; returns (value name, input spec). Symbolic
    dims (strings) need a pin: by default batch 1 and the static dims."""
    g.input(name, np.float32, dims)
    spec = dict(name=name, dtype="float32", **IMAGE_INPUT)
    if pin is None and any(isinstance(d, str) for d in dims):
        pin = [1 if isinstance(d, str) else d for d in dims]
    if pin is not None:
        spec["pin"] = pin
    return name, spec


# ---------------------------------------------------------------------------
# CNNs


def mobilenetv2(bn, batch_dim, flatten, opset, seed, name):
    g = GraphBuilder(name, opset, seed)
    x, spec = image_input(g, "input", [batch_dim, 3, 224, 224])
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    with g.scope("features"):
        with g.scope("0"):
            x = B.conv(g, x, 3, 32, 3, stride=2, bias=False, bn=bn,
                       act="relu6", name="0")
        cin, idx = 32, 1
        for t, c, n, s in settings:
            for i in range(n):
                stride = s if i == 0 else 1
                hidden = cin * t
                with g.scope(str(idx), "conv"):
                    y, j = x, 0
                    if t != 1:
                        y = B.conv(g, y, cin, hidden, 1, bias=False, bn=bn,
                                   act="relu6", name=str(j))
                        j += 1
                    y = B.conv(g, y, hidden, hidden, 3, stride=stride,
                               group=hidden, bias=False, bn=bn, act="relu6",
                               name=str(j))
                    # The projection is linear; damp it so the residual
                    # stream does not grow with depth.
                    y = B.conv(g, y, hidden, c, 1, bias=False, bn=bn,
                               name=str(j + 1), gain=0.5)
                if stride == 1 and cin == c:
                    with g.scope(str(idx)):
                        y = g.op("Add", [x, y])
                x, cin, idx = y, c, idx + 1
        with g.scope(str(idx)):
            x = B.conv(g, x, cin, 1280, 1, bias=False, bn=bn, act="relu6",
                       name="0")
    x = g.op("GlobalAveragePool", [x])
    x = B.flatten_for_classifier(g, x, flatten)
    with g.scope("classifier"):  # gain: logits of magnitude ~1-5
        x = B.gemm(g, x, 1280, 1000, name="1", gain=3.0)
    g.output(x, "logits", np.float32, [batch_dim, 1000])
    return g, [spec]


@zoo_model("MobileNetV2 1.0, 224x224, BN folded into conv (eval export), "
           "ReLU6 as Clip, symbolic batch, classifier reshape via "
           "Shape/Gather/Unsqueeze/Concat", TOL_CNN)
def build_mobilenetv2():
    return mobilenetv2("fold", "batch_size", "shape", 13, 1, "mobilenetv2")


@zoo_model("MobileNetV2 1.0, 224x224, BatchNormalization nodes kept "
           "(training-mode or unfolded export), static batch, Flatten",
           TOL_CNN)
def build_mobilenetv2_bn():
    return mobilenetv2("keep", 1, "flatten", 15, 2, "mobilenetv2_bn")


@zoo_model("ResNet-18, 224x224, BatchNormalization kept, MaxPool, residual "
           "Add, symbolic batch, numeric output name", TOL_CNN)
def build_resnet18():
    return resnet18("resnet18")


def resnet18(name):
    g = GraphBuilder(name, 17, 3)
    x, spec = image_input(g, "input.1", ["N", 3, 224, 224])
    x = B.conv(g, x, 3, 64, 7, stride=2, bias=False, bn="keep", act="relu",
               name="conv1")
    x = B.max_pool(g, x, 3, 2, pad=1)
    cin = 64
    for li, cout in enumerate([64, 128, 256, 512]):
        for bi in range(2):
            stride = 2 if li > 0 and bi == 0 else 1
            with g.scope("layer%d" % (li + 1), str(bi)):
                y = B.conv(g, x, cin, cout, 3, stride=stride, bias=False,
                           bn="keep", act="relu", name="conv1")
                y = B.conv(g, y, cout, cout, 3, bias=False, bn="keep",
                           name="conv2", gain=0.5)
                if stride != 1 or cin != cout:
                    with g.scope("downsample"):
                        x = B.conv(g, x, cin, cout, 1, stride=stride,
                                   bias=False, bn="keep", name="0")
                x = g.op("Relu", [g.op("Add", [y, x])])
            cin = cout
    x = g.op("GlobalAveragePool", [x])
    x = B.flatten_for_classifier(g, x, "flatten")
    x = B.gemm(g, x, 512, 1000, name="fc")
    g.output(x, "495", np.float32, ["N", 1000])
    return g, [spec]


@zoo_model("EfficientNet-B0, 224x224: SiLU as x*Sigmoid(x), depthwise 3x3 "
           "and 5x5, squeeze-excitation (GlobalAveragePool, Conv, SiLU, "
           "Conv, Sigmoid, Mul), BN folded", TOL_CNN)
def build_efficientnet_b0():
    g = GraphBuilder("efficientnet_b0", 14, 4)
    x, spec = image_input(g, "images", [1, 3, 224, 224])
    # (expand ratio, kernel, stride, in, out, repeats)
    stages = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2),
              (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
              (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
              (6, 3, 1, 192, 320, 1)]
    with g.scope("features"):
        x = B.conv(g, x, 3, 32, 3, stride=2, bias=False, bn="fold",
                   act="silu", name="0")
        for si, (t, k, s, cin, cout, n) in enumerate(stages):
            for i in range(n):
                bin_ = cin if i == 0 else cout
                stride = s if i == 0 else 1
                hidden = bin_ * t
                with g.scope(str(si + 1), str(i), "block"):
                    y = x
                    if t != 1:
                        y = B.conv(g, y, bin_, hidden, 1, bias=False,
                                   bn="fold", act="silu", name="expand")
                    y = B.conv(g, y, hidden, hidden, k, stride=stride,
                               group=hidden, bias=False, bn="fold",
                               act="silu", name="dwconv")
                    y = B.squeeze_excite(g, y, hidden, max(1, bin_ // 4),
                                         "silu", "sigmoid")
                    y = B.conv(g, y, hidden, cout, 1, bias=False, bn="fold",
                               name="project", gain=0.5)
                if stride == 1 and bin_ == cout:
                    with g.scope(str(si + 1), str(i)):
                        y = g.op("Add", [y, x])
                x = y
        x = B.conv(g, x, 320, 1280, 1, bias=False, bn="fold", act="silu",
                   name="8")
    x = g.op("GlobalAveragePool", [x])
    x = B.flatten_for_classifier(g, x, "flatten")
    with g.scope("classifier"):  # gain: logits of magnitude ~1-5
        x = B.gemm(g, x, 1280, 1000, name="1", gain=4.0)
    g.output(x, "logits", np.float32, [1, 1000])
    return g, [spec]


@zoo_model("SqueezeNet 1.1, 224x224: fire modules (1x1 squeeze, 1x1 and 3x3 "
           "expand, Concat), MaxPool with ceil_mode, conv classifier, "
           "biases, no BN", TOL_CNN)
def build_squeezenet1_1():
    g = GraphBuilder("squeezenet1_1", 13, 5)
    x, spec = image_input(g, "data", [1, 3, 224, 224])
    fires = ["pool", (64, 16, 64), (128, 16, 64), "pool", (128, 32, 128),
             (256, 32, 128), "pool", (256, 48, 192), (384, 48, 192),
             (384, 64, 256), (512, 64, 256)]
    with g.scope("features"):
        x = B.conv(g, x, 3, 64, 3, stride=2, pad=0, act="relu", name="0")
        for i, f in enumerate(fires):
            if f == "pool":
                x = B.max_pool(g, x, 3, 2, ceil_mode=1)
                continue
            cin, sq, ex = f
            with g.scope(str(i + 2)):
                s = B.conv(g, x, cin, sq, 1, act="relu", name="squeeze")
                e1 = B.conv(g, s, sq, ex, 1, act="relu", name="expand1x1")
                e3 = B.conv(g, s, sq, ex, 3, act="relu", name="expand3x3")
                x = g.op("Concat", [e1, e3], axis=1)
    with g.scope("classifier"):
        x = B.conv(g, x, 512, 1000, 1, act="relu", name="1", gain=0.5)
        x = g.op("GlobalAveragePool", [x])
    x = B.flatten_for_classifier(g, x, "flatten")
    g.output(x, "prob", np.float32, [1, 1000])
    return g, [spec]


def channel_shuffle(g, x, channels, hw):
    """Reshape [N, 2, C/2, H, W] -> Transpose -> Reshape [N, C, H, W]."""
    y = B.reshape(g, x, [1, 2, channels // 2, hw, hw])
    y = g.op("Transpose", [y], perm=[0, 2, 1, 3, 4])
    return B.reshape(g, y, [1, channels, hw, hw])


@zoo_model("ShuffleNetV2 x1.0, 224x224: Split, channel shuffle via "
           "Reshape/Transpose/Reshape, depthwise convs, BN folded, "
           "ReduceMean global pool", TOL_CNN)
def build_shufflenetv2():
    g = GraphBuilder("shufflenetv2", 16, 6)
    x, spec = image_input(g, "input", [1, 3, 224, 224])
    with g.scope("conv1"):
        x = B.conv(g, x, 3, 24, 3, stride=2, bias=False, bn="fold",
                   act="relu", name="0")
    x = B.max_pool(g, x, 3, 2, pad=1)
    cin, hw = 24, 56
    for si, (repeats, cout) in enumerate([(4, 116), (8, 232), (4, 464)]):
        half = cout // 2
        for i in range(repeats):
            with g.scope("stage%d" % (si + 2), str(i)):
                if i == 0:
                    hw //= 2
                    with g.scope("branch1"):
                        b1 = B.conv(g, x, cin, cin, 3, stride=2, group=cin,
                                    bias=False, bn="fold", name="0")
                        b1 = B.conv(g, b1, cin, half, 1, bias=False,
                                    bn="fold", act="relu", name="2")
                    b2_in, b2_cin, stride = x, cin, 2
                else:
                    b1, b2_in = g.op("Split", [x, g.const([half, half])],
                                     outputs=2, axis=1)
                    b2_cin, stride = half, 1
                with g.scope("branch2"):
                    b2 = B.conv(g, b2_in, b2_cin, half, 1, bias=False,
                                bn="fold", act="relu", name="0")
                    b2 = B.conv(g, b2, half, half, 3, stride=stride,
                                group=half, bias=False, bn="fold", name="3")
                    b2 = B.conv(g, b2, half, half, 1, bias=False, bn="fold",
                                act="relu", name="5")
                x = g.op("Concat", [b1, b2], axis=1)
                x = channel_shuffle(g, x, cout, hw)
            cin = cout
    with g.scope("conv5"):
        x = B.conv(g, x, cin, 1024, 1, bias=False, bn="fold", act="relu",
                   name="0")
    x = g.op("ReduceMean", [x], axes=[2, 3], keepdims=0)  # x.mean([2, 3])
    x = B.gemm(g, x, 1024, 1000, name="fc")
    g.output(x, "output", np.float32, [1, 1000])
    return g, [spec]


def mobilenetv3_backbone(g, x, scale):
    """MobileNetV3-Large backbone scaled by `scale`; returns the feature
    maps at strides 4, 8, 16 and 32 and their channel counts."""
    def ch(c):
        return max(8, int(c * scale + 4) // 8 * 8)

    # (kernel, expansion, out, SE, activation, stride)
    cfg = [(3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2),
           (3, 72, 24, False, "relu", 1), (5, 72, 40, True, "relu", 2),
           (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
           (3, 240, 80, False, "hardswish", 2),
           (3, 200, 80, False, "hardswish", 1),
           (3, 184, 80, False, "hardswish", 1),
           (3, 184, 80, False, "hardswish", 1),
           (3, 480, 112, True, "hardswish", 1),
           (3, 672, 112, True, "hardswish", 1),
           (5, 672, 160, True, "hardswish", 2),
           (5, 960, 160, True, "hardswish", 1),
           (5, 960, 160, True, "hardswish", 1)]
    with g.scope("backbone"):
        x = B.conv(g, x, 3, ch(16), 3, stride=2, bias=False, bn="fold",
                   act="hardswish", name="conv1")
        cin, stride_total, feats = ch(16), 2, []
        for i, (k, e, c, se, act, s) in enumerate(cfg):
            e, c = ch(e), ch(c)
            if s == 2 and stride_total >= 4:
                feats.append((x, cin))  # last map before each downsampling
            stride_total *= s
            with g.scope("blocks", str(i)):
                y = x
                if e != cin:
                    y = B.conv(g, y, cin, e, 1, bias=False, bn="fold",
                               act=act, name="expand")
                y = B.conv(g, y, e, e, k, stride=s, group=e, bias=False,
                           bn="fold", act=act, name="dw")
                if se:
                    y = B.squeeze_excite(g, y, e, ch(e // 4), "relu",
                                         "hardsigmoid")
                y = B.conv(g, y, e, c, 1, bias=False, bn="fold",
                           name="project", gain=0.5)
                if s == 1 and cin == c:
                    y = g.op("Add", [x, y])
            x, cin = y, c
        x = B.conv(g, x, cin, ch(960), 1, bias=False, bn="fold",
                   act="hardswish", name="conv_last")
        feats.append((x, ch(960)))
    return feats


def resize_nearest(g, x, factor):
    """Opset 13 Resize with scales (roi omitted), as torch exports
    F.interpolate(scale_factor=f, mode='nearest')."""
    scales = g.const([1.0, 1.0, float(factor), float(factor)], np.float32)
    return g.op("Resize", [x, "", scales], mode="nearest",
                coordinate_transformation_mode="asymmetric",
                nearest_mode="floor")


@zoo_model("DBNet-style text detector: MobileNetV3-Large x0.5 backbone "
           "(HardSwish, HardSigmoid SE), FPN with nearest Resize 2x and "
           "Concat of 4 levels, ConvTranspose 2x upsampling head, Sigmoid; "
           "symbolic batch/height/width (PaddleOCR-style names)", TOL_PROB)
def build_textdet():
    g = GraphBuilder("textdet", 14, 7)
    size = 320
    x, spec = image_input(g, "x", ["batch", 3, "height", "width"],
                          pin=[1, 3, size, size])
    feats = mobilenetv3_backbone(g, x, 0.5)
    inner = 96
    with g.scope("neck"):
        lat = [B.conv(g, f, c, inner, 1, bias=False,
                      name="in%d_conv" % (i + 2))
               for i, (f, c) in enumerate(feats)]
        # Top-down: p_i = lat_i + up2(p_{i+1}).
        p = [None] * 4
        p[3] = lat[3]
        for i in (2, 1, 0):
            p[i] = g.op("Add", [lat[i], resize_nearest(g, p[i + 1], 2)])
        outs = []
        for i in range(4):
            o = B.conv(g, p[i], inner, inner // 4, 3, bias=False,
                       name="p%d_conv" % (i + 2))
            if i:
                o = resize_nearest(g, o, 2 ** i)
            outs.append(o)
        fuse = g.op("Concat", outs[::-1], axis=1)
    with g.scope("head", "binarize"):
        h = B.conv(g, fuse, inner, inner // 4, 3, bias=False, bn="keep",
                   act="relu", name="conv1")
        h = B.conv_transpose(g, h, inner // 4, inner // 4, 2, 2, name="conv2")
        h = g.op("Relu", [B.batch_norm(g, h, inner // 4, "conv_bn2")])
        h = B.conv_transpose(g, h, inner // 4, 1, 2, 2, name="conv3")
        h = g.op("Sigmoid", [h])
    g.output(h, "sigmoid_0.tmp_0", np.float32, ["batch", 1, "height",
                                                 "width"])
    return g, [spec]


# ---------------------------------------------------------------------------
# Detectors


def yolo_conv(g, x, cin, cout, k, stride=1, name="cv1", gain=1.0):
    """ultralytics' Conv module exported in eval mode: Conv with the
    BatchNorm folded in, then SiLU as Sigmoid/Mul."""
    with g.scope(name):
        return B.conv(g, x, cin, cout, k, stride=stride, bias=False,
                      bn="fold", act="silu", name="conv", gain=gain)


def c2f(g, x, c1, c2, n, shortcut, name):
    """C2f: cv1 (1x1) to 2c channels, Split in halves (chunk), n
    bottlenecks on the last chunk, Concat of every chunk, cv2 (1x1)."""
    c = c2 // 2
    with g.scope(name):
        y = yolo_conv(g, x, c1, 2 * c, 1, name="cv1")
        ys = list(g.op("Split", [y, g.const([c, c])], outputs=2, axis=1))
        for i in range(n):
            with g.scope("m", str(i)):
                h = yolo_conv(g, ys[-1], c, c, 3, name="cv1")
                h = yolo_conv(g, h, c, c, 3, name="cv2",
                              gain=0.5 if shortcut else 1.0)
                if shortcut:
                    h = g.op("Add", [ys[-1], h])
            ys.append(h)
        y = g.op("Concat", ys, axis=1)
        return yolo_conv(g, y, (2 + n) * c, c2, 1, name="cv2")


def sppf(g, x, c1, c2, name):
    """SPPF: cv1, three chained MaxPool 5x5/1 pad 2, Concat, cv2."""
    c = c1 // 2
    with g.scope(name):
        y = [yolo_conv(g, x, c1, c, 1, name="cv1")]
        for _ in range(3):
            y.append(g.op("MaxPool", [y[-1]], kernel_shape=[5, 5],
                          strides=[1, 1], pads=[2, 2, 2, 2],
                          dilations=[1, 1], ceil_mode=0))
        return yolo_conv(g, g.op("Concat", y, axis=1), 4 * c, c2, 1,
                         name="cv2")


def yolo_anchors(g, sizes, strides):
    """make_anchors() as traced by torch.onnx: per level, Range of cell
    centres for x and y, a meshgrid by Reshape + Expand, stacked by
    Unsqueeze + Concat, and a stride column by Expand; Concat over levels,
    then Transpose to (2, A) and (1, A)."""
    points, stride_cols = [], []
    for (h, w), s in zip(sizes, strides):
        sx = g.op("Add", [g.op("Range", [g.const(0.0, np.float32),
                                         g.const(float(w), np.float32),
                                         g.const(1.0, np.float32)]),
                          g.const(0.5, np.float32)])
        sy = g.op("Add", [g.op("Range", [g.const(0.0, np.float32),
                                         g.const(float(h), np.float32),
                                         g.const(1.0, np.float32)]),
                          g.const(0.5, np.float32)])
        grid = g.const([h, w])
        gy = g.op("Expand", [B.reshape(g, sy, [h, 1]), grid])
        gx = g.op("Expand", [B.reshape(g, sx, [1, w]), grid])
        xy = g.op("Concat", [B.unsqueeze(g, gx, [-1]), B.unsqueeze(g, gy, [-1])],
                  axis=-1)
        points.append(B.reshape(g, xy, [-1, 2]))
        stride_cols.append(g.op("Expand", [g.const([[float(s)]], np.float32),
                                           g.const([h * w, 1])]))
    anchors = g.op("Transpose", [g.op("Concat", points, axis=0)], perm=[1, 0])
    stride = g.op("Transpose", [g.op("Concat", stride_cols, axis=0)],
                  perm=[1, 0])
    return B.unsqueeze(g, anchors, [0]), stride


@zoo_model("YOLOv8n detector as ultralytics exports it (opset 17, 320x320, "
           "18 classes): SiLU convs with BN folded, C2f (Split, bottlenecks, "
           "Concat), SPPF (chained MaxPool 5x5), nearest Resize 2x, PAN "
           "Concats, decoupled head; DFL (Reshape 4x16, Transpose, Softmax, "
           "1x1 Conv with weights 0..15), anchors and strides from "
           "Range/Expand/Concat, box decode by Slice/Sub/Add/Div/Concat/Mul, "
           "output 1x22x2100", TOL_CNN)
def build_yolov8n():
    nc, reg_max, size = 18, 16, 320
    g = GraphBuilder("yolov8n", 17, 11)
    x, spec = image_input(g, "images", [1, 3, size, size])
    # The IMAGE_INPUT range fits normalized images; ultralytics feeds [0, 1].
    spec.update(low=0.0, high=1.0, note="RGB in [0, 1] (ultralytics' input)")
    x = yolo_conv(g, x, 3, 16, 3, 2, name="model.0")
    feats = {}
    # (layer, kind, args): the backbone of yolov8n.yaml at width 0.25,
    # depth 0.33.
    backbone = [(1, "conv", (16, 32)), (2, "c2f", (32, 32, 1)),
                (3, "conv", (32, 64)), (4, "c2f", (64, 64, 2)),
                (5, "conv", (64, 128)), (6, "c2f", (128, 128, 2)),
                (7, "conv", (128, 256)), (8, "c2f", (256, 256, 1))]
    for layer, kind, args in backbone:
        name = "model.%d" % layer
        if kind == "conv":
            x = yolo_conv(g, x, args[0], args[1], 3, 2, name=name)
        else:
            x = c2f(g, x, args[0], args[1], args[2], True, name)
        feats[layer] = x
    x = sppf(g, x, 256, 256, "model.9")
    feats[9] = x
    with g.scope("model.10"):
        x = resize_nearest(g, x, 2)
    x = c2f(g, g.op("Concat", [x, feats[6]], axis=1), 384, 128, 1, False,
            "model.12")
    p4_in = x
    with g.scope("model.13"):
        x = resize_nearest(g, x, 2)
    p3 = c2f(g, g.op("Concat", [x, feats[4]], axis=1), 192, 64, 1, False,
             "model.15")
    x = yolo_conv(g, p3, 64, 64, 3, 2, name="model.16")
    p4 = c2f(g, g.op("Concat", [x, p4_in], axis=1), 192, 128, 1, False,
             "model.18")
    x = yolo_conv(g, p4, 128, 128, 3, 2, name="model.19")
    p5 = c2f(g, g.op("Concat", [x, feats[9]], axis=1), 384, 256, 1, False,
             "model.21")
    # Detect: a box branch (4 * reg_max distance bins) and a class branch
    # per level, concatenated and flattened to (1, 4*reg_max + nc, A).
    no = 4 * reg_max + nc
    c2, c3 = 64, 64
    levels = []
    with g.scope("model.22"):
        for i, (f, c) in enumerate([(p3, 64), (p4, 128), (p5, 256)]):
            with g.scope("cv2", str(i)):
                b = yolo_conv(g, f, c, c2, 3, name="0")
                b = yolo_conv(g, b, c2, c2, 3, name="1")
                b = B.conv(g, b, c2, 4 * reg_max, 1, name="2", gain=2.0)
            with g.scope("cv3", str(i)):
                k = yolo_conv(g, f, c, c3, 3, name="0")
                k = yolo_conv(g, k, c3, c3, 3, name="1")
                k = B.conv(g, k, c3, nc, 1, name="2", gain=8.0)
            y = g.op("Concat", [b, k], axis=1)
            levels.append(B.reshape(g, y, [1, no, -1]))
        x = g.op("Concat", levels, axis=2)
        box, cls = g.op("Split", [x, g.const([4 * reg_max, nc])], outputs=2,
                        axis=1)
        anchors = (size // 8, size // 8), (size // 16, size // 16), \
            (size // 32, size // 32)
        count = sum(h * w for h, w in anchors)
        with g.scope("dfl"):
            d = B.reshape(g, box, [1, 4, reg_max, count])
            d = g.op("Softmax", [g.op("Transpose", [d], perm=[0, 2, 1, 3])],
                     axis=1)
            w = np.arange(reg_max, dtype=np.float32).reshape(
                1, reg_max, 1, 1)
            with g.scope("conv"):
                d = g.op("Conv", [d, g.initializer(w, "weight")],
                         kernel_shape=[1, 1], strides=[1, 1],
                         pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
            d = B.reshape(g, d, [1, 4, count])
        anchor_points, stride = yolo_anchors(g, anchors, [8, 16, 32])
        # dist2bbox(xywh=True): lt, rb = chunk(2); centre and size.
        lt = g.op("Slice", [d, g.const([0]), g.const([2]), g.const([1])])
        rb = g.op("Slice", [d, g.const([2]), g.const([4]), g.const([1])])
        x1y1 = g.op("Sub", [anchor_points, lt])
        x2y2 = g.op("Add", [anchor_points, rb])
        cxy = g.op("Div", [g.op("Add", [x1y1, x2y2]),
                           g.const(2.0, np.float32)])
        wh = g.op("Sub", [x2y2, x1y1])
        dbox = g.op("Mul", [g.op("Concat", [cxy, wh], axis=1), stride])
        y = g.op("Concat", [dbox, g.op("Sigmoid", [cls])], axis=1)
    g.output(y, "output0", np.float32, [1, 4 + nc, count])
    return g, [spec]


def lstm(g, x, steps, batch_dim, cin, hidden, name):
    """nn.LSTM(bidirectional) on [T, N, C] as torch.onnx writes it: gates
    reordered to ONNX's i, o, f, c in the initializers, zero initial states
    expanded to the batch from Shape, Y [T, 2, N, H] turned back into
    [T, N, 2H] by Transpose and Reshape."""
    with g.scope(name):
        s = 1.0 / math.sqrt(hidden)
        w = g.initializer(g.uniform((2, 4 * hidden, cin), -s, s), "weight_ih")
        r = g.initializer(g.uniform((2, 4 * hidden, hidden), -s, s),
                          "weight_hh")
        b = g.initializer(g.uniform((2, 8 * hidden), -s, s), "bias")
        batch = B.shape_dims(g, x, [1])[0]
        shape = g.op("Concat", [g.const([2]), batch, g.const([hidden])],
                     axis=0)
        zeros = g.op("Expand", [g.const([[[0.0]]], np.float32), shape])
        y, _, _ = g.op("LSTM", [x, w, r, b, "", zeros, zeros], outputs=3,
                       hidden_size=hidden, direction="bidirectional")
        y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        return B.reshape(g, y, [steps, -1, 2 * hidden])


@zoo_model("CRNN text recognizer (32x320, 96 classes): a VGG-style CNN "
           "(3x3 convs, BN kept, MaxPool 2x2 then 2x1 down to height 1), "
           "Squeeze and Transpose to [T, N, C], two bidirectional LSTM "
           "layers (hidden 96, torch.onnx's zero states from Shape/Expand), "
           "Linear per step, Softmax over the classes; symbolic batch",
           TOL_PROB)
def build_crnn():
    classes, hidden = 96, 96
    g = GraphBuilder("crnn", 14, 12)
    x, spec = image_input(g, "image", ["batch", 3, 32, 320])
    cfg = [(3, 32, (2, 2)), (32, 64, (2, 2)), (64, 128, None),
           (128, 128, (2, 1)), (128, 192, None), (192, 192, (2, 1)),
           (192, 192, (2, 1))]
    with g.scope("cnn"):
        for i, (cin, cout, pool) in enumerate(cfg):
            x = B.conv(g, x, cin, cout, 3, bias=False, bn="keep", act="relu",
                       name="conv%d" % i)
            if pool:
                x = g.op("MaxPool", [x], kernel_shape=list(pool),
                         strides=list(pool), pads=[0, 0, 0, 0])
    steps = 320 // 4
    # [N, C, 1, T] -> [N, C, T] -> [T, N, C]
    x = g.op("Squeeze", [x, g.const([2])])
    x = g.op("Transpose", [x], perm=[2, 0, 1])
    x = lstm(g, x, steps, "batch", 192, hidden, "rnn.0")
    x = lstm(g, x, steps, "batch", 2 * hidden, hidden, "rnn.1")
    with g.scope("fc"):
        w = g.normal((2 * hidden, classes), 12.0 / math.sqrt(2 * hidden))
        x = g.op("MatMul", [x, g.initializer(w, "weight_t")])
        x = g.op("Add", [x, g.initializer(g.normal(classes, 0.1), "bias")])
    x = g.op("Softmax", [x], axis=2)
    g.output(x, "probs", np.float32, [steps, "batch", classes])
    return g, [spec]


# ---------------------------------------------------------------------------
# Models as ONNX Runtime's quantization tools write them


def ort_quantize(model, static, seed, input_name, shape, qdq=False):
    """Runs onnxruntime.quantization on `model`: quantize_static (uint8
    activations, int8 weights per channel with reduce_range, calibrated on
    16 deterministic random inputs) in the QOperator format, or with `qdq`
    in the QDQ format (its default: QuantizeLinear/DequantizeLinear pairs
    around float operators); or quantize_dynamic with uint8 weights (ONNX
    Runtime runs ConvInteger only with uint8 ones) in 7 bits."""
    import tempfile
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_dynamic,
                                          quantize_static)

    class Samples(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(seed)
            self.feeds = iter(
                [{input_name: rng.uniform(-2, 2, shape).astype(np.float32)}
                 for _ in range(16)])

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "float.onnx")
        dst = os.path.join(tmp, "quantized.onnx")
        onnx.save(model, src)
        if static:
            quantize_static(src, dst, Samples(),
                            quant_format=QuantFormat.QDQ if qdq
                            else QuantFormat.QOperator,
                            activation_type=QuantType.QUInt8,
                            weight_type=QuantType.QInt8, per_channel=True,
                            reduce_range=True)
        else:
            # reduce_range: 7-bit weights, so that ONNX Runtime's AVX2
            # kernels without VNNI (vpmaddubsw, whose 16-bit pair sums
            # saturate) compute the same integers as everywhere else.
            quantize_dynamic(src, dst, weight_type=QuantType.QUInt8,
                             reduce_range=True)
        quantized = onnx.load(dst)
    quantized.doc_string = model.doc_string
    return quantized


# The quantized outputs: on the CPU (and CUDA) dlc computes ONNX Runtime's
# integers exactly; Vulkan may round QLinearAdd's fused multiply-adds twice
# (one step of that tensor's scale in a few elements per thousand), which
# later layers carry to the output.
TOL_QOPERATOR = {"rtol": 1e-3, "atol": 0.05,
                 "why": "logits dequantized from uint8 (scale about 0.02); "
                        "measured equal to ONNX Runtime's on cpu and "
                        "vulkan; the atol leaves room for vulkan's "
                        "QLinearAdd landing one step off (see "
                        "test/conformance/ort-format-tests.expected) and "
                        "reaching the output through two more layers"}


# QDQ: the reference runs every node as written (float convolutions on
# dequantized values); dlc computes integer kernels where the target has
# dot products (dlc-fold-qdq) and float ones elsewhere. Either way a sum
# in another order or precision can round a value next to a step's
# midpoint to the other step.
TOL_QDQ = {"rtol": 1e-3, "atol": 0.07,
           "why": "logits dequantized from uint8 in steps of 0.0214; a "
                  "float sum within rounding distance of a step's midpoint "
                  "lands on either side (measured: one step, 0.0214, on "
                  "cpu and vulkan against ONNX Runtime without graph "
                  "optimizations; ONNX Runtime's fused integer kernels "
                  "differ from its own unfused run by the same step); "
                  "three steps allowed"}
TOL_QDQ_RESNET18 = {"rtol": 1e-3, "atol": 0.12,
                    "why": "logits dequantized from uint8 in steps of "
                           "0.0543; measured one step on cpu (integer "
                           "kernels), cpu with AVX2 only and vulkan (float "
                           "kernels); two steps allowed"}


@zoo_model("A CNN quantized by ONNX Runtime's quantize_static in the "
           "QOperator format (64x64, 10 classes): QLinearConv (per-channel "
           "int8 weights, uint8 activations), residual QLinearAdd, a "
           "QLinearSigmoid gate through QLinearMul, QLinearLeakyRelu and "
           "QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool, "
           "QGemm; QuantizeLinear in, DequantizeLinear out",
           TOL_QOPERATOR,
           post=lambda m: ort_quantize(m, True, 31, "input", [1, 3, 64, 64]))
def build_qoperator_cnn():
    g = GraphBuilder("qoperator_cnn", 13, 31)
    x, spec = image_input(g, "input", [1, 3, 64, 64])
    x = B.conv(g, x, 3, 16, 3, stride=2, act="relu", name="stem")
    with g.scope("block1"):
        y = B.conv(g, x, 16, 16, 3, act="relu", name="conv1")
        y = B.conv(g, y, 16, 16, 3, name="conv2", gain=0.5)
        x = g.op("Relu", [g.op("Add", [x, y])])
    with g.scope("gate"):
        x = B.conv(g, x, 16, 32, 3, stride=2, act="relu", name="down")
        s = g.op("Sigmoid", [B.conv(g, x, 32, 32, 1, name="score")])
        x = g.op("Mul", [x, s])
    with g.scope("branch"):
        leak = g.op("LeakyRelu", [B.conv(g, x, 32, 16, 1, name="conv")],
                    alpha=0.1)
        x = g.op("Concat", [x, leak], axis=1)
    x = g.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = B.conv(g, x, 48, 64, 3, act="relu", name="head")
    x = g.op("GlobalAveragePool", [x])
    x = g.op("Flatten", [x], axis=1)
    x = B.gemm(g, x, 64, 10, name="fc")
    g.output(x, "logits", np.float32, [1, 10])
    return g, [spec]


@zoo_model("MobileNetV2 (the mobilenetv2 twin, static batch) quantized by "
           "ONNX Runtime's quantize_static in the QDQ format, its default "
           "and what TensorRT and PyTorch exports look like: "
           "QuantizeLinear/DequantizeLinear around every Conv, Add and "
           "Gemm, per-channel int8 weights, uint8 activations",
           TOL_QDQ,
           post=lambda m: ort_quantize(m, True, 41, "input",
                                       [1, 3, 224, 224], qdq=True))
def build_qdq_mobilenetv2():
    return mobilenetv2("fold", 1, "flatten", 13, 41, "qdq_mobilenetv2")


@zoo_model("ResNet-18 (the resnet18 twin) quantized by ONNX Runtime's "
           "quantize_static in the QDQ format: QuantizeLinear/"
           "DequantizeLinear around every Conv (BatchNormalization folded "
           "into it by the quantizer), Add and Gemm, per-channel int8 "
           "weights, uint8 activations",
           TOL_QDQ_RESNET18,
           post=lambda m: ort_quantize(m, True, 43, "input.1",
                                       [1, 3, 224, 224], qdq=True))
def build_qdq_resnet18():
    return resnet18("qdq_resnet18")


@zoo_model("A small CRNN quantized by ONNX Runtime's quantize_dynamic "
           "(32x128, 40 classes): DynamicQuantizeLinear before each layer, "
           "ConvInteger with uint8 weights, a bidirectional "
           "com.microsoft.DynamicQuantizeLSTM (hidden 64), MatMulInteger "
           "for the classifier, Softmax", TOL_PROB,
           post=lambda m: ort_quantize(m, False, 37, "image", [1, 3, 32, 128]))
def build_qdynamic_crnn():
    classes, hidden = 40, 64
    g = GraphBuilder("qdynamic_crnn", 13, 37)
    x, spec = image_input(g, "image", [1, 3, 32, 128])
    with g.scope("cnn"):
        for i, (cin, cout, pool) in enumerate(
                [(3, 32, (2, 2)), (32, 64, (2, 2)), (64, 96, (8, 1))]):
            x = B.conv(g, x, cin, cout, 3, act="relu", name="conv%d" % i)
            x = g.op("MaxPool", [x], kernel_shape=list(pool),
                     strides=list(pool))
    steps = 128 // 4
    x = g.op("Squeeze", [x, g.const([2])])
    x = g.op("Transpose", [x], perm=[2, 0, 1])
    x = lstm(g, x, steps, 1, 96, hidden, "rnn")
    with g.scope("fc"):
        w = g.normal((2 * hidden, classes), 4.0 / math.sqrt(2 * hidden))
        x = g.op("MatMul", [x, g.initializer(w, "weight_t")])
        x = g.op("Add", [x, g.initializer(g.normal(classes, 0.1), "bias")])
    x = g.op("Softmax", [x], axis=2)
    g.output(x, "probs", np.float32, [steps, 1, classes])
    return g, [spec]


def vad_branch(g, x, h, c, samples, name):
    """One sample rate's network of a Silero-style voice-activity detector:
    STFT magnitudes by a strided Conv1d over the reflect-padded frame, four
    Conv1d+ReLU encoder blocks, a two-layer LSTM whose states come from
    and go to the graph's h and c, a 1x1 Conv1d and Sigmoid per step, the
    mean over steps. Returns (prob, hn, cn) and the branch's nodes."""
    filt, hop = samples // 2, samples // 8
    bins = filt // 2 + 1
    with g.subgraph() as nodes, g.scope(name):
        y = g.op("Unsqueeze", [x, g.const([1])])
        pad = (filt - hop) // 2
        y = g.op("Pad", [y, g.const([0, 0, pad, 0, 0, pad])], mode="reflect")
        with g.scope("stft"):
            basis = g.initializer(
                g.normal((2 * bins, 1, filt), 1.0 / math.sqrt(filt)),
                "forward_basis_buffer")
            y = g.op("Conv", [y, basis], kernel_shape=[filt],
                     strides=[hop], pads=[0, 0], dilations=[1], group=1)
            real = g.op("Slice", [y, g.const([0]), g.const([bins]),
                                  g.const([1])])
            imag = g.op("Slice", [y, g.const([bins]), g.const([2 * bins]),
                                  g.const([1])])
            power = g.op("Add", [g.op("Mul", [real, real]),
                                 g.op("Mul", [imag, imag])])
            y = g.op("Sqrt", [power])
        cfg = [(bins, 128, 1), (128, 64, 2), (64, 64, 2), (64, 128, 1)]
        for i, (cin, cout, stride) in enumerate(cfg):
            with g.scope("encoder", str(i)):
                w = g.normal((cout, cin, 3), math.sqrt(2.0 / (3 * cin)))
                y = g.op("Conv", [y, g.initializer(w, "weight"),
                                  g.initializer(g.normal(cout, 0.05), "bias")],
                         kernel_shape=[3], strides=[stride], pads=[1, 1],
                         dilations=[1], group=1)
                y = g.op("Relu", [y])
        # [N, C, T] -> [T, N, C] for the LSTM layers.
        y = g.op("Transpose", [y], perm=[2, 0, 1])
        hs, cs = [], []
        for layer, cin in enumerate((128, 64)):
            with g.scope("decoder", "rnn", str(layer)):
                hidden, sc = 64, 1.0 / 8.0
                w = g.initializer(g.uniform((1, 256, cin), -sc, sc),
                                  "weight_ih")
                r = g.initializer(g.uniform((1, 256, hidden), -sc, sc),
                                  "weight_hh")
                b = g.initializer(g.uniform((1, 512), -sc, sc), "bias")
                h0 = g.op("Slice", [h, g.const([layer]), g.const([layer + 1]),
                                    g.const([0])])
                c0 = g.op("Slice", [c, g.const([layer]), g.const([layer + 1]),
                                    g.const([0])])
                y, hn, cn = g.op("LSTM", [y, w, r, b, "", h0, c0], outputs=3,
                                 hidden_size=hidden)
                y = g.op("Squeeze", [y, g.const([1])])
                hs.append(hn)
                cs.append(cn)
        hn = g.op("Concat", hs, axis=0)
        cn = g.op("Concat", cs, axis=0)
        with g.scope("decoder", "out"):
            y = g.op("Relu", [g.op("Transpose", [y], perm=[1, 2, 0])])
            w = g.normal((1, 64, 1), 2.0 / math.sqrt(64))
            y = g.op("Conv", [y, g.initializer(w, "weight"),
                              g.initializer(g.normal(1, 0.1), "bias")],
                     kernel_shape=[1], strides=[1], pads=[0, 0],
                     dilations=[1], group=1)
            y = g.op("Sigmoid", [y])
            prob = g.op("ReduceMean", [y], axes=[2], keepdims=0)
    return (prob, hn, cn), nodes


@zoo_model("Silero-style voice-activity detector (512-sample frames): an If "
           "on the sample-rate input (bound at compile time) between a 16 "
           "kHz and an 8 kHz network, each STFT by Conv1d, four Conv1d "
           "encoder blocks, a two-layer LSTM whose states are graph inputs "
           "and outputs (h, c: [2, batch, 64]), Sigmoid per step and the "
           "mean; branches read the main graph's input and weights; "
           "symbolic batch", TOL_PROB)
def build_vad():
    g = GraphBuilder("vad", 16, 13)
    samples = 512
    g.input("input", np.float32, ["batch", samples])
    g.input("sr", np.int64, [])
    g.input("h", np.float32, [2, "batch", 64])
    g.input("c", np.float32, [2, "batch", 64])
    is16k = g.op("Equal", ["sr", g.const(16000)])
    out16, then_nodes = vad_branch(g, "input", "h", "c", samples, "_model")
    # At 8 kHz the frame is half the samples: the network looks at the
    # first 256 (the exported model's 8 kHz path takes 256-sample frames).
    with g.subgraph() as head:
        half = g.op("Slice", ["input", g.const([0]), g.const([samples // 2]),
                              g.const([1])])
    out8, else_nodes = vad_branch(g, half, "h", "c", samples // 2,
                                  "_model_8k")

    def branch(nodes, outs, name):
        shapes = [["batch", 1], [2, "batch", 64], [2, "batch", 64]]
        return onnx.helper.make_graph(
            nodes, name, [],
            [onnx.helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT,
                                                shape)
             for o, shape in zip(outs, shapes)])

    prob, hn, cn = g.op(
        "If", [is16k], outputs=3,
        then_branch=branch(then_nodes, out16, "then_branch"),
        else_branch=branch(head + else_nodes, out8, "else_branch"))
    g.output(prob, "output", np.float32, ["batch", 1])
    g.output(hn, "hn", np.float32, [2, "batch", 64])
    g.output(cn, "cn", np.float32, [2, "batch", 64])
    audio = {"dist": "uniform", "low": -1.0, "high": 1.0, "dtype": "float32",
             "note": "audio samples in [-1, 1]"}
    state = {"dist": "uniform", "low": -1.0, "high": 1.0, "dtype": "float32",
             "note": "LSTM states (tanh-bounded) from the previous frame"}
    return g, [dict(name="input", pin=[1, samples], **audio),
               dict(name="sr", dtype="int64", dist="value", value=16000,
                    bind=True, note="the sample rate; a constant of the "
                    "deployment, bound with --bind-input"),
               dict(name="h", pin=[2, 1, 64], **state),
               dict(name="c", pin=[2, 1, 64], **state)]


@zoo_model("The voice-activity detector above with its sample rate a "
           "run-time input (not bound, 8000): an If on a run-time "
           "condition, both branches compiled, the untaken one's kernels "
           "skipped, each output selected on the condition", TOL_PROB)
def build_vad_runtime_sr():
    g, inputs = build_vad()
    for spec in inputs:
        if spec["name"] == "sr":
            spec.pop("bind")
            spec["value"] = 8000
            spec["note"] = ("the sample rate, a run-time input: 8000 takes "
                            "the else branch (vad binds 16000)")
    return g, inputs


# ---------------------------------------------------------------------------
# Transformers


@zoo_model("Keyword spotting DS-CNN (MLPerf Tiny's DS-CNN-S): 49x10 MFCC "
           "frames, Conv 10x4 stride 2 with TensorFlow's asymmetric 'same' "
           "padding, four depthwise-separable blocks (3x3 depthwise, 1x1), "
           "AveragePool over the 25x5 map, Gemm to 12 keywords, Softmax; "
           "BN folded. Small enough for a Cortex-M4 (the bare-metal test)",
           TOL_PROB)
def build_kws_dscnn():
    g = GraphBuilder("kws_dscnn", 13, 17)
    g.input("mfcc", np.float32, [1, 1, 49, 10])
    channels, keywords = 64, 12
    with g.scope("features"):
        # TensorFlow 'same' for 49x10, kernel 10x4, stride 2: pads 4/5 rows,
        # 1/1 columns (an exporter writes them as explicit pads).
        with g.scope("conv0"):
            w = g.normal((channels, 1, 10, 4), math.sqrt(2.0 / 40))
            x = g.op("Conv", ["mfcc", g.initializer(w, "weight"),
                              g.initializer(g.normal(channels, 0.05),
                                            "bias")],
                     kernel_shape=[10, 4], strides=[2, 2],
                     pads=[4, 1, 5, 1])
        x = g.op("Relu", [x])
        for i in range(4):
            with g.scope("block%d" % i):
                x = B.conv(g, x, channels, channels, 3, group=channels,
                           bn="fold", act="relu", name="depthwise")
                x = B.conv(g, x, channels, channels, 1, bn="fold",
                           act="relu", name="pointwise")
        x = g.op("AveragePool", [x], kernel_shape=[25, 5], strides=[25, 5])
    x = B.flatten_for_classifier(g, x, "flatten")
    x = B.gemm(g, x, channels, keywords, name="classifier")
    x = g.op("Softmax", [x], axis=1)
    g.output(x, "probabilities", np.float32, [1, keywords])
    return g, [dict(name="mfcc", dtype="float32", dist="uniform", low=-3.0,
                    high=3.0, note="MFCC coefficients, standardized per "
                    "coefficient as the feature extractor writes them")]


def bert(name, opset, seed, decomposed_ln, dynamic):
    """BERT-tiny (google/bert_uncased_L-2_H-128_A-2 dimensions)."""
    vocab, hidden, layers, heads, inner, seq = 30522, 128, 2, 2, 512, 128
    g = GraphBuilder(name, opset, seed)
    dims = ["batch_size", "sequence_length"] if dynamic else [1, seq]
    ids = g.input("input_ids", np.int64, dims)
    mask = g.input("attention_mask", np.int64, dims)
    specs = [dict(name=ids, dtype="int64", dist="randint", low=0, high=vocab,
                  note="token ids in [0, vocab)"),
             dict(name=mask, dtype="int64", dist="prefix_mask",
                  min_ones=seq // 2,
                  note="1 for the first L tokens, 0 after (padding), "
                       "L in [seq/2, seq]")]
    with g.scope("embeddings"):
        words = g.op("Gather", [g.initializer(g.normal((vocab, hidden), 0.5),
                                              "word_embeddings.weight"), ids])
        shape = g.op("Shape", [ids])
        if decomposed_ln:
            # No token_type_ids input: zeros of the ids' shape, and position
            # ids sliced from the registered buffer (HF's position_ids).
            types = g.op("ConstantOfShape", [shape],
                         value=onnx.numpy_helper.from_array(
                             np.zeros(1, np.int64)))
            pos_ids = g.op("Slice", [
                g.initializer(np.arange(512, dtype=np.int64)[None],
                              "position_ids"),
                g.const([0]), B.unsqueeze(g, g.op("Gather", [
                    shape, g.const(1)], axis=0), [0]), g.const([1])])
        else:
            types = g.input("token_type_ids", np.int64, dims)
            specs.append(dict(name=types, dtype="int64", dist="randint",
                              low=0, high=2, note="segment ids in {0, 1}"))
            seq_len = g.op("Gather", [shape, g.const(1)], axis=0)
            pos_ids = B.unsqueeze(g, g.op("Range", [g.const(0), seq_len,
                                                    g.const(1)]), [0])
        tt = g.op("Gather", [g.initializer(g.normal((2, hidden), 0.5),
                                           "token_type_embeddings.weight"),
                             types])
        pos = g.op("Gather", [g.initializer(g.normal((512, hidden), 0.5),
                                            "position_embeddings.weight"),
                              pos_ids])
        x = g.op("Add", [g.op("Add", [words, tt]), pos])
        x = B.layer_norm(g, x, hidden, 1e-12, decomposed_ln, "LayerNorm")
    # Extended mask: (1 - mask[:, None, None, :]) * finfo(float32).min
    m = g.op("Cast", [B.unsqueeze(g, mask, [1, 2])], to=onnx.TensorProto.FLOAT)
    m = g.op("Sub", [g.const(1.0, np.float32), m])
    big = -10000.0 if decomposed_ln else float(np.finfo(np.float32).min)
    mask_bias = g.op("Mul", [m, g.const(big, np.float32)])
    cfg = dict(hidden=hidden, heads=heads, inner=inner, eps=1e-12,
               pre_norm=False, decomposed_ln=decomposed_ln, fused_qkv=False,
               dynamic=dynamic)
    with g.scope("encoder"):
        for i in range(layers):
            x = B.encoder_layer(g, x, cfg, mask_bias, "layer.%d" % i)
    with g.scope("pooler"):
        first = g.op("Gather", [x, g.const(0)], axis=1)  # hidden[:, 0]
        pooled = g.op("Tanh", [B.gemm(g, first, hidden, hidden, "dense")])
    g.output(x, "last_hidden_state", np.float32, dims + [hidden])
    g.output(pooled, "pooler_output", np.float32, [dims[0], hidden])
    if dynamic:
        for spec in specs:
            spec["pin"] = [1, seq]
    return g, specs


@zoo_model("BERT-tiny encoder (L=2, H=128, A=2, seq 128): Gather embeddings, "
           "Range position ids, LayerNormalization (opset 17), Shape-computed "
           "head Reshape/Transpose, finfo.min additive mask from "
           "Unsqueeze/Cast/Sub/Mul, Erf GELU, pooler; symbolic batch and "
           "sequence", TOL_TRANSFORMER)
def build_bert_tiny():
    return bert("bert_tiny", 17, 8, decomposed_ln=False, dynamic=True)


@zoo_model("BERT-tiny, opset 13 export: layer norm decomposed into "
           "ReduceMean/Sub/Pow/Add/Sqrt/Div, token types from "
           "ConstantOfShape, position ids sliced from a buffer, -10000 mask, "
           "constant Reshape targets with 0 dims, static [1, 128]",
           TOL_TRANSFORMER)
def build_bert_tiny_decomposed():
    return bert("bert_tiny_decomposed", 13, 9, decomposed_ln=True,
                dynamic=False)


@zoo_model("ViT-tiny-style (patch 16, hidden 192, 3 heads, depth 4, "
           "224x224): patch Conv 16x16/16, Reshape/Transpose to tokens, class "
           "token Expand+Concat, position Add, pre-norm blocks with fused QKV "
           "(Reshape 5-D, Transpose, Gather q/k/v, Mul scale), "
           "LayerNormalization, Erf GELU, class-token Gather, Gemm head; "
           "symbolic batch", TOL_TRANSFORMER)
def build_vit_tiny():
    size, patch, hidden, heads, depth, inner = 224, 16, 192, 3, 4, 768
    tokens = (size // patch) ** 2
    g = GraphBuilder("vit_tiny", 17, 10)
    x, spec = image_input(g, "pixel_values", ["batch", 3, size, size])
    with g.scope("patch_embed"):
        x = B.conv(g, x, 3, hidden, patch, stride=patch, pad=0, name="proj")
        # x.flatten(2): Reshape to Concat(Shape(x)[0:2], [-1]).
        x = g.op("Reshape", [x, g.op("Concat", [
            g.op("Slice", [g.op("Shape", [x]), g.const([0]), g.const([2]),
                           g.const([0])]), g.const([-1])], axis=0)])
        x = g.op("Transpose", [x], perm=[0, 2, 1])
    # cls_token.expand(B, -1, -1), then cat along tokens.
    cls = g.initializer(g.normal((1, 1, hidden), 0.5), "cls_token")
    cls = g.op("Expand", [cls, B.reshape_target(g, x, [0], [1, hidden])])
    x = g.op("Concat", [cls, x], axis=1)
    x = g.op("Add", [x, g.initializer(g.normal((1, tokens + 1, hidden), 0.5),
                                      "pos_embed")])
    cfg = dict(hidden=hidden, heads=heads, inner=inner, eps=1e-6,
               pre_norm=True, decomposed_ln=False, fused_qkv=True,
               dynamic=True)
    with g.scope("blocks"):
        for i in range(depth):
            x = B.encoder_layer(g, x, cfg, None, str(i))
    x = B.layer_norm(g, x, hidden, 1e-6, False, "norm")
    x = g.op("Gather", [x, g.const(0)], axis=1)  # x[:, 0]
    x = B.gemm(g, x, hidden, 1000, name="head")
    g.output(x, "logits", np.float32, ["batch", 1000])
    return g, [spec]


# ---------------------------------------------------------------------------
# Decoder-only language model, one decode step with a KV cache


def decoder_lm(name, seed):
    """A GPT-2-style decoder (4 layers, width 256, 4 heads, MLP 1024,
    learned positions, vocab 4096) as exporters write one decode step at
    batch 1: the new token's id and position in, the cache of the 127
    tokens before it (past_key_values.N.key/value, [1, heads, 127, 64]) in,
    logits and the cache with the new token appended (present.N.key/value)
    out. Pre-norm blocks: LayerNormalization, separate Q/K/V projections
    (MatMul + Add), Concat of the past and new keys and values, scaled
    Q K^T, Softmax, context MatMul, output projection, tanh-GELU MLP; a
    final LayerNormalization and an untied lm_head MatMul."""
    vocab, hidden, layers, heads, inner, past = 4096, 256, 4, 4, 1024, 127
    d = hidden // heads
    g = GraphBuilder(name, 17, seed)
    ids = g.input("input_ids", np.int64, [1, 1])
    pos = g.input("position_ids", np.int64, [1, 1])
    specs = [dict(name=ids, dtype="int64", dist="randint", low=0, high=vocab,
                  note="the new token's id"),
             dict(name=pos, dtype="int64", dist="value", value=past,
                  note="its position: after the 127 cached tokens")]
    cache = {"dist": "uniform", "low": -1.0, "high": 1.0, "dtype": "float32",
             "note": "cached keys and values of earlier tokens"}
    x = g.op("Add", [
        g.op("Gather", [g.initializer(g.normal((vocab, hidden), 0.5),
                                      "wte.weight"), ids]),
        g.op("Gather", [g.initializer(g.normal((512, hidden), 0.1),
                                      "wpe.weight"), pos])])
    for i in range(layers):
        with g.scope("h.%d" % i):
            y = B.layer_norm(g, x, hidden, 1e-5, False, "ln_1")
            with g.scope("attn"):
                q = B.split_heads(g, B.linear(g, y, hidden, hidden, "q_proj"),
                                  heads, d, False, [0, 2, 1, 3])
                k = B.split_heads(g, B.linear(g, y, hidden, hidden, "k_proj"),
                                  heads, d, False, [0, 2, 1, 3])
                v = B.split_heads(g, B.linear(g, y, hidden, hidden, "v_proj"),
                                  heads, d, False, [0, 2, 1, 3])
                past_k = g.input("past_key_values.%d.key" % i, np.float32,
                                 [1, heads, past, d])
                past_v = g.input("past_key_values.%d.value" % i, np.float32,
                                 [1, heads, past, d])
                specs += [dict(name=past_k, **cache),
                          dict(name=past_v, **cache)]
                k = g.op("Concat", [past_k, k], axis=2)
                v = g.op("Concat", [past_v, v], axis=2)
                k = g.output(k, "present.%d.key" % i, np.float32,
                             [1, heads, past + 1, d])
                v = g.output(v, "present.%d.value" % i, np.float32,
                             [1, heads, past + 1, d])
                scores = g.op("MatMul", [q, g.op("Transpose", [k],
                                                 perm=[0, 1, 3, 2])])
                scores = g.op("Mul", [scores, g.const(d ** -0.5, np.float32)])
                probs = g.op("Softmax", [scores], axis=-1)
                ctx = B.merge_heads(g, g.op("MatMul", [probs, v]), hidden,
                                    False)
                x = g.op("Add", [x, B.linear(g, ctx, hidden, hidden,
                                             "out_proj")])
            y = B.layer_norm(g, x, hidden, 1e-5, False, "ln_2")
            x = g.op("Add", [x, B.mlp(g, y, hidden, inner, act="gelu_tanh")])
    x = B.layer_norm(g, x, hidden, 1e-5, False, "ln_f")
    with g.scope("lm_head"):
        logits = g.op("MatMul", [x, g.initializer(
            g.normal((hidden, vocab), 1 / math.sqrt(hidden)), "weight_t")])
    g.output(logits, "logits", np.float32, [1, 1, vocab])
    return g, specs


def nbits_quantize(model, block_size=32):
    """ONNX Runtime's 4-bit weight-only quantizer (MatMulNBitsQuantizer,
    round to nearest, asymmetric, blocks of `block_size`): every MatMul
    with a constant right operand becomes com.microsoft.MatMulNBits."""
    from onnxruntime.quantization import matmul_nbits_quantizer as mq
    config = mq.DefaultWeightOnlyQuantConfig(block_size=block_size,
                                             is_symmetric=False, bits=4)
    quantizer = mq.MatMulNBitsQuantizer(model, algo_config=config)
    quantizer.process()
    quantized = quantizer.model.model
    quantized.doc_string = model.doc_string
    return quantized


@zoo_model("Decoder-only LM, one decode step at batch 1 (4 layers, width "
           "256, 4 heads, vocab 4096, KV cache of 127 tokens as inputs and "
           "outputs): Gather embeddings, pre-norm blocks, Concat of past "
           "and new keys/values, scaled Q K^T, Softmax, tanh GELU, lm_head",
           TOL_TRANSFORMER)
def build_decoder_lm():
    return decoder_lm("decoder_lm", 51)


@zoo_model("The decoder_lm twin with its MatMul weights quantized to 4 "
           "bits by ONNX Runtime's MatMulNBitsQuantizer (blocks of 32, "
           "asymmetric): com.microsoft.MatMulNBits for every projection, "
           "the MLP and lm_head", TOL_TRANSFORMER,
           post=nbits_quantize)
def build_nbits_decoder_lm():
    return decoder_lm("nbits_decoder_lm", 51)


# ---------------------------------------------------------------------------
# Generation, validation, manifest


def source_hash():
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for f in ("models.py", "builder.py"):
        with open(os.path.join(here, f), "rb") as fh:
            h.update(fh.read())
    h.update(("%d onnx %s numpy %s" % (GENERATOR_VERSION, onnx.__version__,
                                       np.__version__)).encode())
    return h.hexdigest()[:16]


def static_shape(value_info, pins):
    dims = []
    for i, d in enumerate(value_info.type.tensor_type.shape.dim):
        dims.append(d.dim_value if d.HasField("dim_value") else
                    (pins[i] if pins else d.dim_param))
    return dims


def onnx_dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in value_info.type.tensor_type.shape.dim]


def validate(path, entry):
    """Runs the model with ONNX Runtime, optimized and unoptimized; fills in
    the resolved output shapes and records output statistics and the
    reordering error between the two runs (a floor for the tolerances)."""
    feeds = common.make_inputs(entry, seed=0)
    names = [o["name"] for o in entry["outputs"]]
    opt = common.ort_session(path, optimized=True).run(names, feeds)
    ref = common.ort_session(path, optimized=False).run(names, feeds)
    stats = {}
    for o, a, b in zip(entry["outputs"], opt, ref):
        o["shape"] = list(a.shape)
        if not np.all(np.isfinite(a)):
            raise RuntimeError("%s: non-finite values in output %s" % (
                entry["name"], o["name"]))
        d = np.abs(a.astype(np.float64) - b)
        stats[o["name"]] = {
            "absmax": float(np.abs(a).max()), "std": float(a.std()),
            "ort_reorder_abs": float(d.max()),
            "ort_reorder_rel": float((d / np.maximum(np.abs(b), 1e-3)).max())}
    return stats


def generate_one(zm, out_dir):
    start = time.time()
    g, specs = zm.build()
    model = g.build(zm.description)
    B.check_model(model)
    if zm.post:
        model = zm.post(model)
        # com.microsoft operators: the structural check only.
        onnx.checker.check_model(model)
    path = os.path.join(out_dir, zm.name + ".onnx")
    tmp = path + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, path)
    inits = {t.name for t in model.graph.initializer}
    by_name = {s["name"]: s for s in specs}
    inputs, pins = [], []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        spec = dict(by_name[vi.name])
        pin = spec.pop("pin", None)
        spec["onnx_shape"] = onnx_dims(vi)
        spec["shape"] = static_shape(vi, pin)
        if pin:
            pins.append("%s=%s" % (vi.name, ",".join(map(str, pin))))
        inputs.append(spec)
    entry = {"name": zm.name, "file": zm.name + ".onnx",
             "description": zm.description, "opset": g.opset,
             "inputs": inputs,
             "outputs": [{"name": o.name, "dtype": "float32",
                          "onnx_shape": onnx_dims(o)}
                         for o in model.graph.output],
             "input_shape_pins": pins, "tolerance": zm.tolerance,
             "nodes": len(model.graph.node), "ops": B.count_ops(model),
             "params": B.count_params(model),
             "bytes": os.path.getsize(path)}
    entry["ort"] = validate(path, entry)
    entry["generate_seconds"] = round(time.time() - start, 2)
    return entry


def load_manifest(out_dir):
    path = os.path.join(out_dir, MANIFEST)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def ensure_models(out_dir=DEFAULT_OUT, names=None, force=False, log=None):
    """Generates the models that are missing or stale; returns the manifest.
    A model is stale when the generator's source hash changed."""
    os.makedirs(out_dir, exist_ok=True)
    h = source_hash()
    manifest = load_manifest(out_dir)
    if not manifest or manifest.get("generator_hash") != h:
        manifest = {"generator_hash": h,
                    "generator_version": GENERATOR_VERSION,
                    "onnx": onnx.__version__, "models": {}}
    wanted = [m for m in MODELS if names is None or m.name in names]
    unknown = set(names or []) - {m.name for m in MODELS}
    if unknown:
        raise SystemExit("unknown models: %s (known: %s)" % (
            ", ".join(sorted(unknown)), ", ".join(m.name for m in MODELS)))
    changed = False
    for zm in wanted:
        entry = manifest["models"].get(zm.name)
        path = entry and os.path.join(out_dir, entry["file"])
        if (not force and entry and os.path.exists(path)
                and os.path.getsize(path) == entry["bytes"]):
            continue
        if log:
            log("generating %s ..." % zm.name)
        manifest["models"][zm.name] = generate_one(zm, out_dir)
        changed = True
        # Written after every model so an interrupted run keeps its work.
        tmp = os.path.join(out_dir, MANIFEST + ".tmp")
        with open(tmp, "w") as f:
            json.dump(manifest, f, indent=1)
        os.replace(tmp, os.path.join(out_dir, MANIFEST))
    if not changed and log:
        log("models up to date in %s (generator %s)" % (out_dir, h))
    manifest["dir"] = out_dir
    return manifest


def selected(manifest, names=None):
    """The manifest entries of `names` (default all), in the zoo's order."""
    return [manifest["models"][m.name] for m in MODELS
            if m.name in manifest["models"] and (names is None or
                                                 m.name in names)]


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="cache directory (default %(default)s)")
    p.add_argument("--models", help="comma-separated subset")
    p.add_argument("--force", action="store_true",
                   help="regenerate even when up to date")
    p.add_argument("--list", action="store_true", help="list the models")
    args = p.parse_args()
    if args.list:
        for m in MODELS:
            print("%-22s %s" % (m.name, m.description))
        return 0
    names = args.models.split(",") if args.models else None
    manifest = ensure_models(args.out, names, args.force,
                             log=lambda s: print(s, flush=True))
    print("%-22s %6s %6s %9s %10s  %s" % ("model", "opset", "nodes", "params",
                                          "out absmax", "ORT opt vs noopt"))
    for e in selected(manifest, names):
        name = e["name"]
        first = next(iter(e["ort"].values()))
        print("%-22s %6d %6d %8.2fM %10.3g  %.2g abs / %.2g rel" % (
            name, e["opset"], e["nodes"], e["params"] / 1e6, first["absmax"],
            max(s["ort_reorder_abs"] for s in e["ort"].values()),
            max(s["ort_reorder_rel"] for s in e["ort"].values())))
    print("manifest: %s" % os.path.join(args.out, MANIFEST))
    return 0


if __name__ == "__main__":
    sys.exit(main())
