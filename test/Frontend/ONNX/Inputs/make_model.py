"""Writes small binary ONNX models for the importer tests.

  make_model.py KIND OUT   (KIND: see MODELS below)

Binary models cannot be written in the textual syntax (external data,
malformed protobuf), so the tests generate them with the onnx package.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def graph_model(nodes, inputs, outputs, inits=(), opset=17, ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def add_model(weight_elems=128):
    w = numpy_helper.from_array(
        np.arange(weight_elems, dtype=np.float32).reshape(1, weight_elems), "W")
    return graph_model(
        [helper.make_node("Add", ["X", "W"], ["Y"], name="add0")],
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", weight_elems])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", weight_elems])],
        [w])


def save(model, out):
    with open(out, "wb") as f:
        f.write(model.SerializeToString())


def external(out, location, offset=0, length=None, size=None):
    """A model whose weight W lives in the file `location` next to it."""
    m = add_model(64)
    w = m.graph.initializer[0]
    data = w.raw_data
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(len(data) if length is None else length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    save(m, out)
    path = os.path.join(os.path.dirname(out), "weights.bin")
    if size is not None:  # a sparse file of `size` bytes, data at `offset`
        with open(path, "wb") as f:
            f.truncate(size)
    with open(path, "r+b" if os.path.exists(path) else "wb") as f:
        f.seek(offset)
        f.write(data)


def sparse_model(kind):
    """A Constant's sparse_value (linear indices) and a sparse initializer
    (coordinates) feeding MatMul and Add; the -bad kinds damage one."""
    vals = np.array([1.5, -2.0, 3.0], np.float32)
    idx = np.array([1, 6, 11], np.int64)
    dims = [4, 3]
    if kind == "sparse-unsorted":
        idx = np.array([6, 1, 11], np.int64)
    elif kind == "sparse-range":
        idx = np.array([1, 6, 12], np.int64)
    elif kind == "sparse-huge":
        dims = [1 << 20, 1 << 20]
    elif kind == "sparse-coordinates":
        idx = np.array([[0, 1], [2, 0], [3, 3]], np.int64)  # column 3 of 3
    elif kind == "sparse-index-shape":
        idx = np.array([[1, 6, 11]], np.int64)
    elif kind == "sparse-index-type":
        idx = idx.astype(np.int32)
    sp = helper.make_sparse_tensor(numpy_helper.from_array(vals, "W"),
                                   numpy_helper.from_array(idx, "W_idx"), dims)
    bsp = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([7.0, 8.0], np.float32), "B"),
        numpy_helper.from_array(np.array([[0, 0], [0, 2]], np.int64), "B_i"),
        [1, 3])
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["W"], sparse_value=sp),
         helper.make_node("MatMul", ["X", "W"], ["M"]),
         helper.make_node("Add", ["M", "B"], ["Y"])],
        "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
        sparse_initializer=[bsp])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def qdq_ir10_model(kind):
    """A QDQ convolution at IR version 10 (what ONNX Runtime's quantizer
    writes for a model exported at IR 10), with a dynamic batch and no
    value_info: only shape inference types what lies between its nodes.
    qdq-ir10-int4 adds an int4 initializer (IR 10's type, which the ONNX
    library here does not know) that nothing reads."""
    rng = np.random.default_rng(0)
    consts = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(128, np.uint8), "xz"),
        numpy_helper.from_array(
            rng.integers(-9, 10, (4, 8, 3, 3)).astype(np.int8), "W"),
        numpy_helper.from_array(np.full(4, 0.01, np.float32), "ws"),
        numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.1, np.float32), "ys"),
        numpy_helper.from_array(np.array(128, np.uint8), "yz")]
    if kind == "qdq-ir10-int4":
        consts.append(helper.make_tensor("unused", TensorProto.INT4, [2],
                                         [1, 2]))
    nodes = [
        helper.make_node("DequantizeLinear", ["X", "xs", "xz"], ["Xf"]),
        helper.make_node("DequantizeLinear", ["W", "ws", "wz"], ["Wf"],
                         axis=0),
        helper.make_node("Conv", ["Xf", "Wf"], ["C"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["C", "ys", "yz"], ["Y"])]
    return graph_model(
        nodes,
        [helper.make_tensor_value_info("X", TensorProto.UINT8,
                                       ["N", 8, 16, 16])],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
        consts, ir=10)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if kind == "add":
        save(add_model(), out)
    elif kind == "truncated":
        data = add_model().SerializeToString()
        with open(out, "wb") as f:
            f.write(data[: len(data) // 2])
    elif kind == "garbage":
        with open(out, "wb") as f:
            f.write(bytes(range(256)) * 4)
    elif kind == "external":
        external(out, "weights.bin", offset=128)
    elif kind == "external-missing":
        m = add_model(64)
        w = m.graph.initializer[0]
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        e = w.external_data.add()
        e.key, e.value = "location", "no-such-file.bin"
        save(m, out)
    elif kind == "external-short":
        external(out, "weights.bin", offset=0, length=16)
    elif kind == "external-escape":
        external(out, "../weights.bin")
    elif kind == "external-symlink":
        # A location inside the directory that is a link to a file outside.
        external(out, "weights.bin")
        d = os.path.dirname(out)
        outside = os.path.join(os.path.dirname(os.path.abspath(d)),
                               "outside.bin")
        os.replace(os.path.join(d, "weights.bin"), outside)
        os.symlink(outside, os.path.join(d, "weights.bin"))
    elif kind == "external-2gb":
        # The weights sit past 2 GiB in a sparse file: protobuf alone could
        # not hold such a model.
        external(out, "weights.bin", offset=(1 << 31) + 4096,
                 size=(1 << 31) + 8192)
    elif kind == "reshape-input":
        # Reshape whose target shape is a graph input, and the shape's value
        # as a TensorProto file next to it (shape.pb), plus a float one.
        m = graph_model(
            [helper.make_node("Reshape", ["X", "S"], ["Y"], name="reshape")],
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        save(m, out)
        d = os.path.dirname(out)
        with open(os.path.join(d, "shape.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                np.array([3, 2], dtype=np.int64)).SerializeToString())
        with open(os.path.join(d, "float.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                np.array([3.0, 2.0], dtype=np.float32)).SerializeToString())
    elif kind == "if":
        # Y = C ? X : -X, the condition a graph input (known at run time).
        then_g = helper.make_graph(
            [helper.make_node("Identity", ["X"], ["T"])], "then", [],
            [helper.make_tensor_value_info("T", TensorProto.FLOAT, [2])])
        else_g = helper.make_graph(
            [helper.make_node("Neg", ["X"], ["E"])], "else", [],
            [helper.make_tensor_value_info("E", TensorProto.FLOAT, [2])])
        m = graph_model(
            [helper.make_node("If", ["C"], ["Y"], name="branch",
                              then_branch=then_g, else_branch=else_g)],
            [helper.make_tensor_value_info("C", TensorProto.BOOL, []),
             helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
        save(m, out)
    elif kind == "sequence":
        # A sequence input S (elements pinned with --input-shape S[k]=...),
        # a tensor T inserted at its end, and the sequence as an output.
        seq = helper.make_tensor_sequence_value_info
        m = graph_model(
            [helper.make_node("SequenceInsert", ["S", "T"], ["Y"],
                              name="insert")],
            [seq("S", TensorProto.FLOAT, [2]),
             helper.make_tensor_value_info("T", TensorProto.FLOAT, [2])],
            [seq("Y", TensorProto.FLOAT, [2])])
        save(m, out)
    elif kind == "optional":
        # An optional input O: given (pinned like a tensor) it is its value,
        # given as none it is empty; Y says which, Z is O or X.
        opt = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
        then_g = helper.make_graph(
            [helper.make_node("OptionalGetElement", ["O"], ["T"])], "then",
            [], [helper.make_tensor_value_info("T", TensorProto.FLOAT, [2])])
        else_g = helper.make_graph(
            [helper.make_node("Identity", ["X"], ["E"])], "else", [],
            [helper.make_tensor_value_info("E", TensorProto.FLOAT, [2])])
        m = graph_model(
            [helper.make_node("OptionalHasElement", ["O"], ["Y"]),
             helper.make_node("If", ["Y"], ["Z"], then_branch=then_g,
                              else_branch=else_g)],
            [helper.make_value_info(
                "O", helper.make_optional_type_proto(opt)),
             helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.BOOL, []),
             helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2])],
            opset=18)
        save(m, out)
    elif kind == "graphs":
        # A list of subgraphs (GRAPHS), which no standard operator takes.
        g = helper.make_graph(
            [helper.make_node("Identity", ["X"], ["T"])], "g0", [],
            [helper.make_tensor_value_info("T", TensorProto.FLOAT, [2])])
        node = helper.make_node("Switch", ["X"], ["Y"], name="switch",
                                domain="com.example")
        node.attribute.append(helper.make_attribute("cases", [g, g]))
        m = graph_model(
            [node], [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                   [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
        m.opset_import.append(helper.make_opsetid("com.example", 1))
        save(m, out)
    elif kind == "loop-sequence":
        # A Loop body whose loop-carried value is a sequence.
        seq = helper.make_tensor_sequence_value_info("S", TensorProto.FLOAT,
                                                     [2])
        body = helper.make_graph(
            [helper.make_node("Identity", ["c"], ["co"]),
             helper.make_node("Identity", ["S"], ["So"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c", TensorProto.BOOL, []), seq],
            [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
             helper.make_tensor_sequence_value_info("So", TensorProto.FLOAT,
                                                    [2])])
        m = graph_model(
            [helper.make_node("SequenceEmpty", [], ["S0"]),
             helper.make_node("Loop", ["M", "", "S0"], ["Y"], name="loop",
                              body=body)],
            [helper.make_tensor_value_info("M", TensorProto.INT64, [])],
            [helper.make_tensor_sequence_value_info("Y", TensorProto.FLOAT,
                                                    [2])])
        save(m, out)
    elif kind == "loop-runtime-unbounded":
        # A Loop with a run-time condition and no trip count (an empty
        # first input, which the textual syntax cannot write).
        body = helper.make_graph(
            [helper.make_node("Identity", ["c"], ["co"]),
             helper.make_node("Neg", ["s"], ["so"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c", TensorProto.BOOL, []),
             helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
             helper.make_tensor_value_info("so", TensorProto.FLOAT, [2])])
        m = graph_model(
            [helper.make_node("Loop", ["", "C", "X"], ["Y"], name="loop",
                              body=body)],
            [helper.make_tensor_value_info("C", TensorProto.BOOL, []),
             helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
        save(m, out)
    elif kind in ("optional-empty-has", "optional-empty-get"):
        # An empty optional (Optional with a type and no input), asked
        # whether it holds a value or for its value.
        opt = helper.make_node("Optional", [], ["O"], name="empty")
        opt.attribute.append(helper.make_attribute(
            "type", helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
        use = ("OptionalHasElement" if kind == "optional-empty-has"
               else "OptionalGetElement")
        elem = TensorProto.BOOL if kind == "optional-empty-has" else \
            TensorProto.FLOAT
        m = graph_model(
            [opt, helper.make_node(use, ["O"], ["Y"], name="use")], [],
            [helper.make_tensor_value_info(
                "Y", elem, [] if elem == TensorProto.BOOL else [2])],
            opset=18)
        save(m, out)
    elif kind == "short-raw":
        # Reshape's shape as raw data one value short of its dims: ONNX's
        # shape inference copied the bytes the dims asked for and crashed.
        shape = TensorProto()
        shape.name = "S"
        shape.data_type = TensorProto.INT64
        shape.dims.append(2)
        shape.raw_data = np.array([6], dtype=np.int64).tobytes()
        m = graph_model(
            [helper.make_node("Reshape", ["X", "S"], ["Y"])],
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
            [shape])
        save(m, out)
    elif kind.startswith("qdq-ir10"):
        save(qdq_ir10_model(kind), out)
    elif kind.startswith("sparse"):
        save(sparse_model(kind), out)
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
