#!/usr/bin/env python3
"""Writes recurrent-layer tests in the ONNX node-test layout, ORT as oracle.

The ONNX backend node tests for RNN, GRU and LSTM use a batch of 3, hidden
sizes of 3 to 5 and at most two time steps, forward only. The layers models
ship (CRNN text recognizers, voice-activity detectors) run tens of steps in
both directions with hidden sizes of 64 to 256. This script writes such
tests, one folder each with `model.onnx` and `test_data_set_0/*.pb` like
the node tests, with outputs computed by ONNX Runtime: both directions,
sequence lengths per batch entry, initial states, peepholes, clip,
input_forget, layout 1 (ORT lacks it: its references are ORT's outputs for
the same layer in layout 0, transposed), other activation functions, GRU's
linear_before_reset either way. Run them like node tests:

  python -m scripts.rnn_tests --out DIR
  python -m scripts.node_tests --data-dir DIR --targets cpu,vulkan \\
      --expectations test/conformance/rnn-tests.expected

Deterministic (fixed seeds); nothing is downloaded.
"""

import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from scripts.quant_tests import fresh_dir, generator_main, write

DEFAULT_OUT = os.path.expanduser("~/.cache/dlc/rnn-tests")
F32, I32 = TensorProto.FLOAT, TensorProto.INT32
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def recurrent(out, rng, name, op, steps, batch, inputs, hidden,
              direction="forward", lengths=None, initial=False,
              peepholes=False, layout=0, opset=14, **attrs):
    """One RNN/GRU/LSTM node with every optional input asked for; weights
    scaled by 1/sqrt(fan-in) so that gates do not saturate."""
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = [steps, batch, inputs] if layout == 0 else [batch, steps, inputs]
    state = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    feeds = {
        "X": rng.uniform(-1, 1, x_shape).astype(np.float32),
        "W": (rng.standard_normal([dirs, g * hidden, inputs]) /
              np.sqrt(inputs)).astype(np.float32),
        "R": (rng.standard_normal([dirs, g * hidden, hidden]) /
              np.sqrt(hidden)).astype(np.float32),
        "B": rng.uniform(-0.5, 0.5, [dirs, 2 * g * hidden]).astype(np.float32),
    }
    names = ["X", "W", "R", "B"]
    if lengths is not None:
        feeds["sequence_lens"] = np.array(lengths, np.int32)
        names.append("sequence_lens")
    else:
        names.append("")
    if initial:
        feeds["initial_h"] = rng.uniform(-1, 1, state).astype(np.float32)
        names.append("initial_h")
        if op == "LSTM":
            feeds["initial_c"] = rng.uniform(-1, 1, state).astype(np.float32)
            names.append("initial_c")
    if peepholes:
        if not initial:
            names += ["", ""]
        feeds["P"] = rng.uniform(-0.5, 0.5, [dirs, 3 * hidden]).astype(
            np.float32)
        names.append("P")
    while names and names[-1] == "":
        names.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    ins = [(n, I32 if n == "sequence_lens" else F32) for n in names if n]
    outs = [(n, F32) for n in outputs]
    node = helper.make_node(op, names, outputs, hidden_size=hidden,
                            direction=direction, **attrs)
    results = None
    if layout:
        # ONNX Runtime has no batch-major (layout 1) recurrent layers. By
        # the operator's definition layout 1 is layout 0 with X, the states
        # and the outputs transposed: run that in ORT and transpose back.
        swap = {"X": (1, 0, 2), "initial_h": (1, 0, 2),
                "initial_c": (1, 0, 2)}
        major = {n: v.transpose(swap[n]) if n in swap else v
                 for n, v in feeds.items()}
        graph = helper.make_graph(
            [node], name,
            [helper.make_tensor_value_info(n, t, list(major[n].shape))
             for n, t in ins],
            [helper.make_tensor_value_info(n, t, None) for n, t in outs])
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", opset)])
        model.ir_version = 8
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        results = sess.run(None, {n: major[n] for n, _ in ins})
        results = [results[0].transpose(2, 0, 1, 3)] + \
            [r.transpose(1, 0, 2) for r in results[1:]]
        node = helper.make_node(op, names, outputs, hidden_size=hidden,
                                direction=direction, layout=layout, **attrs)
    write(out, name, [node], ins, outs, feeds, opset=opset, results=results)


def generate(out):
    fresh_dir(out)
    rng = np.random.default_rng(11)
    recurrent(out, rng, "test_r_lstm_bidir_lengths_peepholes", "LSTM", 12, 3,
              20, 32, "bidirectional", lengths=[12, 7, 1], initial=True,
              peepholes=True)
    recurrent(out, rng, "test_r_lstm_reverse_clip_layout1", "LSTM", 9, 2, 16,
              24, "reverse", initial=True, layout=1, clip=1.5)
    recurrent(out, rng, "test_r_lstm_input_forget", "LSTM", 6, 2, 8, 16,
              input_forget=1)
    recurrent(out, rng, "test_r_lstm_activations", "LSTM", 5, 2, 8, 12,
              activations=["HardSigmoid", "LeakyRelu", "ScaledTanh"],
              activation_alpha=[0.3, 0.05, 0.8],
              activation_beta=[0.4, 1.2])
    recurrent(out, rng, "test_r_lstm_crnn_size", "LSTM", 40, 1, 256, 128,
              "bidirectional")
    recurrent(out, rng, "test_r_gru_bidir_lbr1_lengths", "GRU", 10, 3, 16, 32,
              "bidirectional", lengths=[10, 4, 9], initial=True,
              linear_before_reset=1)
    recurrent(out, rng, "test_r_gru_lbr0_initial", "GRU", 16, 2, 24, 48,
              initial=True)
    recurrent(out, rng, "test_r_gru_reverse_layout1_clip", "GRU", 7, 3, 12, 20,
              "reverse", layout=1, clip=2.0, linear_before_reset=1)
    recurrent(out, rng, "test_r_rnn_bidir_lengths", "RNN", 11, 3, 10, 16,
              "bidirectional", lengths=[3, 11, 6], initial=True)
    recurrent(out, rng, "test_r_rnn_relu_reverse", "RNN", 8, 2, 6, 10,
              "reverse", activations=["Relu"])
    return sorted(os.listdir(out))


if __name__ == "__main__":
    sys.exit(generator_main(__doc__, DEFAULT_OUT, generate))
