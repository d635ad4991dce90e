#!/usr/bin/env python3
"""Single-layer ONNX models for timing GPU kernels one at a time.

The layers that dominate the zoo models on a GPU (ResNet-18's 3x3
convolutions and stem, MobileNetV2's 1x1 and depthwise convolutions,
ViT-tiny's and BERT-tiny's matrix products), each as a model whose weights
are graph inputs: the artifacts stay a few kilobytes (dlc-run feeds them
deterministic random inputs), so old and new compilers' kernels can be
carried to a GPU machine and timed side by side.

  python -m scripts.gpu_layers OUT_DIR          # writes OUT_DIR/<layer>.onnx
  python -m scripts.gpu_layers --list
"""

import argparse
import os
import sys

from scripts.zoo import zoo_env  # (re-executes with the venv if needed)

zoo_env.ensure()
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402


def conv(name, cin, cout, size, k, stride=1, group=1):
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                      [1, cin, size, size])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT,
                                      [cout, cin // group, k, k])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [cout])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                      [1, cout, out, out])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[stride] * 2, group=group),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    return name, helper.make_graph(nodes, name, [x, w, b], [y])


def matmul(name, m, k, n):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [k, n])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])
    nodes = [
        helper.make_node("MatMul", ["a", "w"], ["p"]),
        helper.make_node("Add", ["p", "b"], ["y"]),
    ]
    return name, helper.make_graph(nodes, name, [a, w, b], [y])


LAYERS = [
    conv("resnet_stem_7x7s2", 3, 64, 224, 7, stride=2),
    conv("resnet_3x3_64_56", 64, 64, 56, 3),
    conv("resnet_3x3_128_28", 128, 128, 28, 3),
    conv("resnet_3x3_256_14", 256, 256, 14, 3),
    conv("resnet_3x3_512_7", 512, 512, 7, 3),
    conv("mobilenet_1x1_24_144_56", 24, 144, 56, 1),
    conv("mobilenet_1x1_320_1280_7", 320, 1280, 7, 1),
    conv("mobilenet_dw3x3_144_56", 144, 144, 56, 3, group=144),
    matmul("vit_qkv_197x192x576", 197, 192, 576),
    matmul("vit_mlp1_197x192x768", 197, 192, 768),
    matmul("vit_mlp2_197x768x192", 197, 768, 192),
    matmul("bert_ffn1_128x128x512", 128, 128, 512),
    matmul("bert_ffn2_128x512x128", 128, 512, 128),
]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("out", nargs="?")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    if args.list or not args.out:
        for name, _ in LAYERS:
            print(name)
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, graph in LAYERS:
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(args.out, name + ".onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
