#!/usr/bin/env python3
"""Writes the zoo models as seeds for the compiler fuzzers, small enough to
mutate: every initializer of more than 64 elements (the weights) becomes a
ConstantOfShape node of its shape and type, so the graph, its shapes and its
small constants (shape operands, axes, scales) stay as they are while the
file shrinks from megabytes to kilobytes; dynamic input dims become 1.

  python -m scripts.fuzz_seeds --models ~/.cache/dlc/models --out DIR

The models come from scripts/zoo/models.py (run it first).
"""

import argparse
import glob
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

# Element types ConstantOfShape can produce.
FILLABLE = {
    onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE,
    onnx.TensorProto.BFLOAT16, onnx.TensorProto.INT8, onnx.TensorProto.UINT8,
    onnx.TensorProto.INT16, onnx.TensorProto.UINT16, onnx.TensorProto.INT32,
    onnx.TensorProto.UINT32, onnx.TensorProto.INT64, onnx.TensorProto.UINT64,
    onnx.TensorProto.BOOL,
}
MAX_KEPT = 64


def shrink(model):
    graph = model.graph
    # The fuzzer pins nothing: a dynamic input dim (a batch, a sequence)
    # becomes 1, as --input-shape would make it.
    for vi in graph.input:
        for dim in vi.type.tensor_type.shape.dim:
            if not dim.HasField("dim_value"):
                dim.dim_value = 1
    kept, nodes = [], []
    for init in graph.initializer:
        count = 1
        for d in init.dims:
            count *= d
        if count <= MAX_KEPT or init.data_type not in FILLABLE:
            kept.append(init)
            continue
        shape = numpy_helper.from_array(
            np.array(list(init.dims), dtype=np.int64), init.name + "__shape")
        value = helper.make_tensor("value", init.data_type, [1], [1])
        nodes.append(helper.make_node("Constant", [], [shape.name],
                                      value=shape))
        nodes.append(helper.make_node("ConstantOfShape", [shape.name],
                                      [init.name], value=value))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    # Inputs that named initializers (IR < 4) would now be undefined.
    names = {n.output[0] for n in nodes}
    inputs = [i for i in graph.input if i.name not in names]
    del graph.input[:]
    graph.input.extend(inputs)
    rest = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + rest)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    paths = sorted(glob.glob(os.path.join(args.models, "*.onnx")))
    if not paths:
        sys.exit("fuzz_seeds.py: no .onnx models in %s" % args.models)
    os.makedirs(args.out, exist_ok=True)
    for path in paths:
        model = shrink(onnx.load(path))
        out = os.path.join(args.out, "zoo-" + os.path.basename(path))
        onnx.save(model, out)
        print("fuzz_seeds.py: %s (%d bytes)" % (out, os.path.getsize(out)))


if __name__ == "__main__":
    main()
