#!/usr/bin/env python3
"""Writes control-flow tests in the ONNX node-test layout, ORT as oracle.

The ONNX backend node tests have one If (a boolean input choosing between
two constants), one Loop (a trip count and a condition as inputs) and two
Scans of a running sum. Models use control flow differently: a voice
activity detector branches on its sample-rate input, with branches that
read the weights of the enclosing graph; exporters write loops whose
condition the body computes from a counter or from the data (known only
at run time); older RNN exports write Scan
over time with a state; subgraphs nest. This script writes such tests, one
folder each with `model.onnx` and `test_data_set_0/*.pb` like the node
tests, with outputs computed by ONNX Runtime. Run them like node tests (the
harness binds an integer or boolean input when a condition needs it):

  python -m scripts.control_flow_tests --out DIR
  python -m scripts.node_tests --data-dir DIR --targets cpu,vulkan \\
      --expectations test/conformance/control-flow-tests.expected

Deterministic (fixed seed); nothing is downloaded.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from scripts.quant_tests import fresh_dir, generator_main, write

DEFAULT_OUT = os.path.expanduser("~/.cache/dlc/control-flow-tests")
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def const(name, value):
    """A Constant node holding `value` (a numpy array)."""
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(value, name))


def vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def scalar(v):
    return np.array(v, np.int64)


def if_sample_rate(out, rng):
    """A voice-activity-detector front: If on the sample-rate input, each
    branch a different projection of the enclosing graph's input with the
    enclosing graph's weights; the branch outputs feed a shared tail."""
    w16 = rng.standard_normal([64, 16]).astype(np.float32) / 8
    w8 = rng.standard_normal([32, 16]).astype(np.float32) / 6
    then_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w16"], ["t_mm"]),
         helper.make_node("Relu", ["t_mm"], ["t_out"])],
        "sr16k", [], [vi("t_out", F32, [1, 16])])
    # 8 kHz: every other sample of the first half, then a smaller weight.
    else_branch = helper.make_graph(
        [const("e_starts", np.array([0], np.int64)),
         const("e_ends", np.array([64], np.int64)),
         const("e_axes", np.array([1], np.int64)),
         const("e_steps", np.array([2], np.int64)),
         helper.make_node("Slice", ["x", "e_starts", "e_ends", "e_axes",
                                    "e_steps"], ["e_half"]),
         helper.make_node("MatMul", ["e_half", "w8"], ["e_mm"]),
         helper.make_node("Tanh", ["e_mm"], ["e_out"])],
        "sr8k", [], [vi("e_out", F32, [1, 16])])
    nodes = [const("w16", w16), const("w8", w8),
             const("k16000", scalar(16000)),
             helper.make_node("Equal", ["sr", "k16000"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["feat"],
                              then_branch=then_branch,
                              else_branch=else_branch),
             helper.make_node("Sigmoid", ["feat"], ["prob"])]
    for sr in (16000, 8000):
        feeds = {"x": rng.uniform(-1, 1, [1, 64]).astype(np.float32),
                 "sr": scalar(sr)}
        write(out, "test_cf_if_sample_rate_%dk" % (sr // 1000), nodes,
              [("x", F32), ("sr", I64)], [("prob", F32)], feeds, opset=17)


def if_nested_shape(out, rng):
    """If on a condition computed from a shape (folds without binding),
    whose taken branch holds another If on the same input's size."""
    inner_then = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["it_out"])], "inner_then", [],
        [vi("it_out", F32, None)])
    inner_else = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["ie_out"])], "inner_else", [],
        [vi("ie_out", F32, None)])
    outer_then = helper.make_graph(
        [helper.make_node("Size", ["x"], ["ot_size"]),
         const("ot_k", scalar(1000)),
         helper.make_node("Less", ["ot_size", "ot_k"], ["ot_small"]),
         helper.make_node("If", ["ot_small"], ["ot_out"],
                          then_branch=inner_then, else_branch=inner_else)],
        "outer_then", [], [vi("ot_out", F32, None)])
    outer_else = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["oe_out"])], "outer_else", [],
        [vi("oe_out", F32, None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             const("idx", scalar(1)),
             helper.make_node("Gather", ["shape", "idx"], ["width"]),
             const("four", scalar(4)),
             helper.make_node("Greater", ["width", "four"], ["wide"]),
             helper.make_node("If", ["wide"], ["y"], then_branch=outer_then,
                              else_branch=outer_else)]
    feeds = {"x": rng.uniform(-1, 1, [3, 6]).astype(np.float32)}
    write(out, "test_cf_if_nested_shape", nodes, [("x", F32)], [("y", F32)],
          feeds, opset=17)


def loop_counter(out, rng):
    """A while loop: no trip count; the body counts and computes its
    condition from the counter; a data value is carried and every
    iteration's value is a scan output."""
    body = helper.make_graph(
        [const("one", scalar(1)),
         helper.make_node("Add", ["count_in", "one"], ["count_out"]),
         const("limit", scalar(5)),
         helper.make_node("Less", ["count_out", "limit"], ["cond_out"]),
         const("half", np.array(0.5, np.float32)),
         helper.make_node("Mul", ["y_in", "half"], ["y_half"]),
         helper.make_node("Add", ["y_half", "x"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["y_scan"])],
        "body",
        [vi("iter", I64, []), vi("cond_in", BOOL, []),
         vi("count_in", I64, []), vi("y_in", F32, [2, 3])],
        [vi("cond_out", BOOL, []), vi("count_out", I64, []),
         vi("y_out", F32, [2, 3]), vi("y_scan", F32, [2, 3])])
    nodes = [const("count0", scalar(0)),
             const("true", np.array(True)),
             helper.make_node("Loop", ["", "true", "count0", "y0"],
                              ["count", "y", "ys"], body=body)]
    feeds = {"x": rng.uniform(-1, 1, [2, 3]).astype(np.float32),
             "y0": rng.uniform(-1, 1, [2, 3]).astype(np.float32)}
    write(out, "test_cf_loop_counter", nodes, [("x", F32), ("y0", F32)],
          [("count", I64), ("y", F32), ("ys", F32)], feeds, opset=17)


def loop_runtime_condition(out, rng, name, limit):
    """A Loop with a trip count (8) whose condition the body computes from
    the data (continue while the sum of the carried value stays below the
    `limit` input): the number of iterations is known only at run time.
    A counter is carried too."""
    body = helper.make_graph(
        [const("scale", np.array(1.5, np.float32)),
         helper.make_node("Mul", ["y_in", "scale"], ["y_scaled"]),
         helper.make_node("Add", ["y_scaled", "x"], ["y_out"]),
         helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"]),
         const("one", scalar(1)),
         helper.make_node("Add", ["count_in", "one"], ["count_out"])],
        "body",
        [vi("iter", I64, []), vi("cond_in", BOOL, []),
         vi("count_in", I64, []), vi("y_in", F32, [2, 3])],
        [vi("cond_out", BOOL, []), vi("count_out", I64, []),
         vi("y_out", F32, [2, 3])])
    nodes = [const("trips", scalar(8)), const("count0", scalar(0)),
             const("true", np.array(True)),
             helper.make_node("Loop", ["trips", "true", "count0", "y0"],
                              ["count", "y"], body=body)]
    feeds = {"x": rng.uniform(0.5, 1, [2, 3]).astype(np.float32),
             "y0": rng.uniform(0, 1, [2, 3]).astype(np.float32),
             "limit": np.array(limit, np.float32)}
    write(out, name, nodes, [("x", F32), ("y0", F32), ("limit", F32)],
          [("count", I64), ("y", F32)], feeds, opset=17)


def loop_nested(out, rng):
    """A Loop with a trip count whose body branches on the iteration
    number's parity (an If reading the body's values and the enclosing
    graph's input) and runs a Scan over the rows of the carried value."""
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["b_add"])], "even", [],
        [vi("b_add", F32, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", "x"], ["b_mul"])], "odd", [],
        [vi("b_mul", F32, None)])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]),
         helper.make_node("Max", ["s_out", "row"], ["s_scan"])],
        "rows", [vi("s_in", F32, [4]), vi("row", F32, [4])],
        [vi("s_out", F32, [4]), vi("s_scan", F32, [4])])
    body = helper.make_graph(
        [const("two", scalar(2)),
         helper.make_node("Mod", ["iter", "two"], ["parity"]),
         const("zero", scalar(0)),
         helper.make_node("Equal", ["parity", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["acc_b"], then_branch=then_branch,
                          else_branch=else_branch),
         const("s0", np.zeros([4], np.float32)),
         helper.make_node("Scan", ["s0", "acc_b"], ["s_final", "s_rows"],
                          body=scan_body, num_scan_inputs=1),
         helper.make_node("Tanh", ["s_rows"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("iter", I64, []), vi("cond_in", BOOL, []),
         vi("acc_in", F32, [3, 4])],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, [3, 4]),
         vi("s_final", F32, [4])])
    nodes = [helper.make_node("Loop", ["trips", "", "acc0"],
                              ["acc", "finals"], body=body)]
    feeds = {"x": rng.uniform(-1, 1, [3, 4]).astype(np.float32),
             "acc0": rng.uniform(-1, 1, [3, 4]).astype(np.float32),
             "trips": scalar(4)}
    write(out, "test_cf_loop_nested_if_scan", nodes,
          [("x", F32), ("acc0", F32), ("trips", I64)],
          [("acc", F32), ("finals", F32)], feeds, opset=17)


def if_nested_runtime(out, rng):
    """Ifs on run-time conditions, nested: the outer on an input, the inner
    on the sign of a value the outer then branch computes (so the inner
    condition itself is skipped with its branch), each branch more than one
    kernel. One test per path: outer then with inner then, outer then with
    inner else, outer else."""
    w1 = rng.standard_normal([8, 8]).astype(np.float32) / 3
    w2 = rng.standard_normal([8, 8]).astype(np.float32) / 3
    inner_then = helper.make_graph(
        [helper.make_node("Relu", ["t_mm"], ["it_relu"]),
         helper.make_node("MatMul", ["it_relu", "w2"], ["it_out"])],
        "inner_then", [], [vi("it_out", F32, [1, 8])])
    inner_else = helper.make_graph(
        [helper.make_node("Neg", ["t_mm"], ["ie_neg"]),
         helper.make_node("MatMul", ["ie_neg", "w1"], ["ie_mm"]),
         helper.make_node("Exp", ["ie_mm"], ["ie_out"])],
        "inner_else", [], [vi("ie_out", F32, [1, 8])])
    outer_then = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["t_mm"]),
         helper.make_node("ReduceSum", ["t_mm"], ["t_sum"], keepdims=0),
         const("t_zero", np.array(0, np.float32)),
         helper.make_node("Greater", ["t_sum", "t_zero"], ["t_pos"]),
         helper.make_node("If", ["t_pos"], ["t_out"], then_branch=inner_then,
                          else_branch=inner_else)],
        "outer_then", [], [vi("t_out", F32, [1, 8])])
    outer_else = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w2"], ["e_mm"]),
         helper.make_node("Tanh", ["e_mm"], ["e_out"])],
        "outer_else", [], [vi("e_out", F32, [1, 8])])
    nodes = [const("w1", w1), const("w2", w2),
             helper.make_node("If", ["a"], ["y"], then_branch=outer_then,
                              else_branch=outer_else),
             helper.make_node("Sigmoid", ["y"], ["prob"])]
    x = rng.uniform(-1, 1, [1, 8]).astype(np.float32)
    # The inner condition is the sign of sum(x @ w1): x and -x take both.
    positive = x if float((x @ w1).sum()) > 0 else -x
    for name, a, xv in (("then_then", True, positive),
                        ("then_else", True, -positive),
                        ("else", False, positive)):
        write(out, "test_cf_if_nested_runtime_" + name, nodes,
              [("a", BOOL), ("x", F32)], [("prob", F32)],
              {"a": np.array(a), "x": xv}, opset=17)


def loop_runtime_if(out, rng):
    """A Loop whose condition the body computes (leaves once the carried
    value's sum reaches 3: after 2 of 6 iterations here) and whose body
    branches on a run-time condition (the carried sum, rounded down, odd or
    even: each branch is taken once): predicated kernels inside predicated
    iterations."""
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["y_in", "x"], ["b_add"]),
         helper.make_node("Add", ["b_add", "x"], ["b_out"])], "odd", [],
        [vi("b_out", F32, [2, 3])])
    else_branch = helper.make_graph(
        [helper.make_node("Add", ["y_in", "x"], ["e_add"])], "even", [],
        [vi("e_add", F32, [2, 3])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["y_in"], ["s"], keepdims=0),
         helper.make_node("Floor", ["s"], ["s_floor"]),
         const("two", np.array(2, np.float32)),
         helper.make_node("Mod", ["s_floor", "two"], ["s_mod"], fmod=1),
         const("one_f", np.array(1, np.float32)),
         helper.make_node("Equal", ["s_mod", "one_f"], ["odd"]),
         helper.make_node("If", ["odd"], ["y_out"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
         const("limit", np.array(3, np.float32)),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],
        "body",
        [vi("iter", I64, []), vi("cond_in", BOOL, []),
         vi("y_in", F32, [2, 3])],
        [vi("cond_out", BOOL, []), vi("y_out", F32, [2, 3])])
    nodes = [const("trips", scalar(6)), const("true", np.array(True)),
             helper.make_node("Loop", ["trips", "true", "y0"], ["y"],
                              body=body)]
    feeds = {"x": rng.uniform(0.05, 0.2, [2, 3]).astype(np.float32),
             "y0": rng.uniform(0, 0.3, [2, 3]).astype(np.float32)}
    write(out, "test_cf_loop_runtime_if", nodes, [("x", F32), ("y0", F32)],
          [("y", F32)], feeds, opset=17)


def scan_axes(out, rng):
    """Scan over two inputs along different axes and directions; scan
    outputs along another axis, one of them reversed."""
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["acc_in", "ab"], ["acc_out"]),
         helper.make_node("Mul", ["acc_out", "a"], ["o1"]),
         helper.make_node("Sub", ["acc_out", "b"], ["o2"])],
        "body", [vi("acc_in", F32, [3]), vi("a", F32, [3]),
                 vi("b", F32, [3])],
        [vi("acc_out", F32, [3]), vi("o1", F32, [3]), vi("o2", F32, [3])])
    nodes = [helper.make_node(
        "Scan", ["acc0", "A", "B"], ["acc", "O1", "O2"], body=body,
        num_scan_inputs=2, scan_input_axes=[1, 0],
        scan_input_directions=[1, 0], scan_output_axes=[1, -2],
        scan_output_directions=[0, 1])]
    feeds = {"acc0": rng.uniform(-1, 1, [3]).astype(np.float32),
             "A": rng.uniform(-1, 1, [3, 5]).astype(np.float32),
             "B": rng.uniform(-1, 1, [5, 3]).astype(np.float32)}
    write(out, "test_cf_scan_axes_directions", nodes,
          [("acc0", F32), ("A", F32), ("B", F32)],
          [("acc", F32), ("O1", F32), ("O2", F32)], feeds, opset=16)


def scan_rnn(out, rng, opset):
    """An Elman RNN written as Scan over time, as exporters wrote
    recurrent layers before ONNX had RNN: the state and the weights are
    read by the body; Scan 8 adds a batch axis in front."""
    steps, batch, inputs, hidden = 20, 2, 12, 16
    wx = (rng.standard_normal([inputs, hidden]) / np.sqrt(inputs)).astype(
        np.float32)
    wh = (rng.standard_normal([hidden, hidden]) / np.sqrt(hidden)).astype(
        np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "wx"], ["xw"]),
         helper.make_node("MatMul", ["h_in", "wh"], ["hw"]),
         helper.make_node("Add", ["xw", "hw"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["y_t"])],
        "cell", [vi("h_in", F32, None), vi("x_t", F32, None)],
        [vi("h_out", F32, None), vi("y_t", F32, None)])
    if opset >= 9:
        nodes = [const("wx", wx), const("wh", wh),
                 helper.make_node("Scan", ["h0", "X"], ["h", "Y"], body=body,
                                  num_scan_inputs=1)]
        x_shape, h_shape = [steps, batch, inputs], [batch, hidden]
        name = "test_cf_scan_rnn"
    else:
        nodes = [const("wx", wx), const("wh", wh),
                 helper.make_node("Scan", ["", "h0", "X"], ["h", "Y"],
                                  body=body, num_scan_inputs=1,
                                  directions=[1])]
        x_shape, h_shape = [batch, steps, inputs], [batch, 1, hidden]
        name = "test_cf_scan8_rnn_reverse"
    feeds = {"h0": rng.uniform(-1, 1, h_shape).astype(np.float32),
             "X": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    write(out, name, nodes, [("h0", F32), ("X", F32)],
          [("h", F32), ("Y", F32)], feeds, opset=opset)


def generate(out):
    fresh_dir(out)
    rng = np.random.default_rng(5)
    if_sample_rate(out, rng)
    if_nested_shape(out, rng)
    loop_counter(out, rng)
    # Leaves after a few iterations, and runs all 8.
    loop_runtime_condition(out, rng, "test_cf_loop_runtime_exit", 40.0)
    loop_runtime_condition(out, rng, "test_cf_loop_runtime_full", 1e6)
    loop_nested(out, rng)
    if_nested_runtime(out, rng)
    loop_runtime_if(out, rng)
    scan_axes(out, rng)
    scan_rnn(out, rng, 16)
    scan_rnn(out, rng, 8)
    return sorted(os.listdir(out))


if __name__ == "__main__":
    sys.exit(generator_main(__doc__, DEFAULT_OUT, generate))
