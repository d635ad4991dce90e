"""Graph builder and layer library for the model zoo.

The models in models.py are written with these helpers so that every model
shares one implementation of each layer (conv + BatchNorm, attention, layer
norm, ...). The helpers write graphs the way exporters write them:

- node names and value names follow the PyTorch exporter's scoped style
  (`/encoder/layer.0/attention/MatMul`, `.../MatMul_output_0`), weights are
  initializers named after the module path (`encoder.layer.0.query.weight`);
- small scalars (Clip bounds, the attention scale, the GELU constants) are
  `Constant` nodes, as torch.onnx writes them;
- BatchNorm is either folded into the convolution (eval-mode export with
  constant folding) or kept as a BatchNormalization node;
- shape arithmetic is either constant or computed from `Shape` at run time
  (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), depending on whether the
  dimension was exported as dynamic.

All randomness comes from the builder's numpy Generator, so a model is a pure
function of its seed.
"""

import contextlib
import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PRODUCER = "dlc-zoo"

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
}


class GraphBuilder:
    """Accumulates nodes and initializers of one ONNX graph."""

    def __init__(self, name, opset, seed):
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._scope = []
        self._node_names = {}
        self._param_names = set()

    # -- naming ---------------------------------------------------------

    @contextlib.contextmanager
    def scope(self, *parts):
        """Module scope, e.g. scope('layer1', '0') -> /layer1/layer1.0."""
        pushed = 0
        for part in parts:
            self._scope.append(str(part))
            pushed += 1
        try:
            yield
        finally:
            del self._scope[len(self._scope) - pushed:]

    def _node_name(self, op_type):
        # torch.onnx: /features/features.0/Conv, then Conv_1, Conv_2 ...
        prefix = ""
        for i in range(len(self._scope)):
            prefix += "/" + ".".join(self._scope[:i + 1])
        base = prefix + "/" + op_type
        count = self._node_names.get(base, 0)
        self._node_names[base] = count + 1
        return base if count == 0 else "%s_%d" % (base, count)

    def param_name(self, leaf):
        name = ".".join(self._scope + [leaf])
        assert name not in self._param_names, name
        self._param_names.add(name)
        return name

    # -- graph construction --------------------------------------------

    def op(self, op_type, inputs, outputs=1, domain="", **attrs):
        """Adds a node; returns its output name (or list when outputs > 1).

        `outputs` is a count, or a list of names for graph outputs."""
        name = self._node_name(op_type)
        if isinstance(outputs, int):
            out_names = ["%s_output_%d" % (name, i) for i in range(outputs)]
        else:
            out_names = list(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), out_names,
                                           name=name, domain=domain, **attrs))
        return out_names[0] if len(out_names) == 1 else out_names

    @contextlib.contextmanager
    def subgraph(self):
        """Nodes added inside go to a list of their own (yielded): the body
        of an If branch or a Loop. Initializers stay in the main graph,
        which the subgraph reads, as torch.onnx writes scripted branches."""
        outer, self.nodes = self.nodes, []
        body = self.nodes
        try:
            yield body
        finally:
            self.nodes = outer

    def initializer(self, array, leaf):
        """A named initializer under the current scope (a parameter)."""
        name = self.param_name(leaf)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def const(self, value, dtype=np.int64):
        """A small constant as a Constant node (how exporters write them)."""
        array = np.asarray(value, dtype=dtype)
        return self.op("Constant", [], value=numpy_helper.from_array(array))

    def input(self, name, dtype, shape):
        self.inputs.append(helper.make_tensor_value_info(
            name, NP_TO_ONNX[np.dtype(dtype)], shape))
        return name

    def output(self, value, name, dtype, shape):
        """Renames the producer's output to `name` and declares it."""
        for node in self.nodes:
            for i, out in enumerate(node.output):
                if out == value:
                    node.output[i] = name
            for i, inp in enumerate(node.input):
                if inp == value:
                    node.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(
            name, NP_TO_ONNX[np.dtype(dtype)], shape))
        return name

    def build(self, doc=""):
        graph = helper.make_graph(self.nodes, self.name, self.inputs,
                                  self.outputs, self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", self.opset)],
            producer_name=PRODUCER, producer_version="1", doc_string=doc)
        # The IR version ONNX Runtime 1.23 and onnx 1.19 both accept for the
        # opsets used here (make_model would write the newest one).
        model.ir_version = 8
        return model

    # -- random parameters ---------------------------------------------

    def normal(self, shape, std, mean=0.0):
        return (self.rng.standard_normal(shape) * std + mean).astype(
            np.float32)

    def uniform(self, shape, low, high):
        return self.rng.uniform(low, high, shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Activations


def activation(g, x, kind):
    """relu, relu6, silu, hardswish, hardsigmoid, gelu, gelu_tanh, sigmoid,
    tanh."""
    if kind is None:
        return x
    if kind == "relu":
        return g.op("Relu", [x])
    if kind == "relu6":
        # torch exports ReLU6 as Clip with Constant bounds (opset >= 11).
        return g.op("Clip", [x, g.const(0.0, np.float32),
                             g.const(6.0, np.float32)])
    if kind == "silu":
        # SiLU as exported at opset < 20 (and by most tools): x * Sigmoid(x).
        return g.op("Mul", [x, g.op("Sigmoid", [x])])
    if kind == "hardswish":
        return g.op("HardSwish", [x])
    if kind == "hardsigmoid":
        # torch.nn.Hardsigmoid is relu6(x + 3) / 6: alpha 1/6, not ONNX's 0.2.
        return g.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)
    if kind == "gelu":
        # GELU (erf form) as exported before opset 20:
        # x * 0.5 * (1 + Erf(x / sqrt(2))), in the exporter's node order.
        erf = g.op("Erf", [g.op("Div", [x, g.const(math.sqrt(2.0),
                                                   np.float32)])])
        one = g.op("Add", [erf, g.const(1.0, np.float32)])
        return g.op("Mul", [g.op("Mul", [x, one]), g.const(0.5, np.float32)])
    if kind == "gelu_tanh":
        # GPT-2's GELU (tanh approximation) as exported:
        # 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
        cube = g.op("Pow", [x, g.const(3.0, np.float32)])
        inner = g.op("Add", [x, g.op("Mul", [cube, g.const(0.044715,
                                                           np.float32)])])
        t = g.op("Tanh", [g.op("Mul", [inner, g.const(
            math.sqrt(2.0 / math.pi), np.float32)])])
        one = g.op("Add", [t, g.const(1.0, np.float32)])
        return g.op("Mul", [g.op("Mul", [x, g.const(0.5, np.float32)]), one])
    if kind in ("sigmoid", "tanh"):
        return g.op(kind.capitalize(), [x])
    raise ValueError("unknown activation %r" % kind)


# ---------------------------------------------------------------------------
# Convolutions


def _bn_params(g, channels):
    """Random eval-mode BatchNorm statistics with realistic spreads."""
    gamma = g.uniform(channels, 0.7, 1.3)
    beta = g.normal(channels, 0.1)
    mean = g.normal(channels, 0.1)
    var = g.uniform(channels, 0.6, 1.4)
    return gamma, beta, mean, var


def conv(g, x, cin, cout, k, stride=1, pad=None, group=1, bias=True,
         bn=None, act=None, name="conv", gain=1.0, dilation=1):
    """Conv2d (+ BatchNorm) (+ activation).

    bn: None (conv with or without bias), "fold" (BN folded into the conv
    weights and bias as an eval-mode export does) or "keep" (Conv without
    bias followed by BatchNormalization). Weights are scaled (He or LeCun
    initialization, times `gain`) so activations stay O(1) through deep
    stacks."""
    k = (k, k) if isinstance(k, int) else tuple(k)
    if pad is None:
        pad = ((k[0] - 1) // 2 * dilation, (k[1] - 1) // 2 * dilation)
    pad = (pad, pad) if isinstance(pad, int) else tuple(pad)
    fan_in = cin // group * k[0] * k[1]
    # He initialization before ReLU-like activations (they halve the second
    # moment), LeCun before linear uses, so E[x^2] is kept layer to layer.
    relu_like = act in ("relu", "relu6", "silu", "hardswish")
    w = g.normal((cout, cin // group) + k,
                 gain * math.sqrt((2.0 if relu_like else 1.0) / fan_in))
    b = g.normal(cout, 0.05) if bias and bn != "keep" else None
    attrs = dict(kernel_shape=list(k), strides=[stride, stride],
                 pads=[pad[0], pad[1], pad[0], pad[1]],
                 dilations=[dilation, dilation], group=group)
    with g.scope(name):
        if bn == "fold":
            gamma, beta, mean, var = _bn_params(g, cout)
            scale = gamma / np.sqrt(var + 1e-5)
            w = (w * scale[:, None, None, None]).astype(np.float32)
            b0 = b if b is not None else 0.0
            b = ((b0 - mean) * scale + beta).astype(np.float32)
        ins = [x, g.initializer(w, "weight")]
        if b is not None:
            ins.append(g.initializer(b, "bias"))
        y = g.op("Conv", ins, **attrs)
    if bn == "keep":
        y = batch_norm(g, y, cout, name.replace("conv", "bn")
                       if "conv" in name else name + "_bn")
    return activation(g, y, act)


def batch_norm(g, x, channels, name):
    """An eval-mode BatchNormalization node with random statistics."""
    with g.scope(name):
        gamma, beta, mean, var = _bn_params(g, channels)
        return g.op("BatchNormalization",
                    [x, g.initializer(gamma, "weight"),
                     g.initializer(beta, "bias"),
                     g.initializer(mean, "running_mean"),
                     g.initializer(var, "running_var")],
                    epsilon=1e-5, momentum=0.9)


def conv_transpose(g, x, cin, cout, k, stride, bias=True, name="deconv"):
    """ConvTranspose2d (weight layout [Cin, Cout, kh, kw])."""
    w = g.normal((cin, cout, k, k), math.sqrt(2.0 / (cin)))
    with g.scope(name):
        ins = [x, g.initializer(w, "weight")]
        if bias:
            ins.append(g.initializer(g.normal(cout, 0.05), "bias"))
        return g.op("ConvTranspose", ins, kernel_shape=[k, k],
                    strides=[stride, stride], pads=[0, 0, 0, 0])


def squeeze_excite(g, x, channels, squeezed, act, gate, name="se"):
    """GlobalAveragePool -> Conv -> act -> Conv -> gate -> Mul."""
    with g.scope(name):
        s = g.op("GlobalAveragePool", [x])
        s = conv(g, s, channels, squeezed, 1, act=act, name="fc1")
        s = conv(g, s, squeezed, channels, 1, act=gate, name="fc2")
        return g.op("Mul", [x, s])


def max_pool(g, x, k, stride, pad=0, ceil_mode=0):
    return g.op("MaxPool", [x], kernel_shape=[k, k], strides=[stride, stride],
                pads=[pad] * 4, ceil_mode=ceil_mode)


# ---------------------------------------------------------------------------
# Shapes: how exporters compute reshape targets


def shape_dims(g, x, dims):
    """The values of x's dims `dims` as a 1-D int64 tensor, computed from
    Shape at run time: Shape -> Gather -> Unsqueeze per dim (torch.onnx)."""
    shape = g.op("Shape", [x])
    parts = []
    for d in dims:
        dim = g.op("Gather", [shape, g.const(d)], axis=0)
        parts.append(unsqueeze(g, dim, [0]))
    return parts


def reshape_target(g, x, dynamic_dims, static_tail):
    """1-D shape tensor [x.dims[dynamic_dims]..., *static_tail] built the
    way exporters build it: Shape/Gather/Unsqueeze then Concat with constant
    pieces."""
    parts = shape_dims(g, x, dynamic_dims)
    parts += [g.const([d]) for d in static_tail]
    return g.op("Concat", parts, axis=0)


def unsqueeze(g, x, axes):
    if g.opset >= 13:
        return g.op("Unsqueeze", [x, g.const(axes)])
    return g.op("Unsqueeze", [x], axes=axes)


def reshape(g, x, shape):
    """Reshape to a constant shape (0 copies a dim, -1 infers one)."""
    return g.op("Reshape", [x, g.const(shape)])


def flatten_for_classifier(g, x, style):
    """[N, C, 1, 1] -> [N, C] before the classifier.

    flatten: torch.flatten(x, 1) -> Flatten.
    shape:   x.view(x.size(0), -1) -> Shape/Gather/Unsqueeze/Concat/Reshape.
    reduce:  x.mean([2, 3]) replaces the pooling itself (see callers)."""
    if style == "flatten":
        return g.op("Flatten", [x], axis=1)
    if style == "shape":
        return g.op("Reshape", [x, reshape_target(g, x, [0], [-1])])
    raise ValueError(style)


def gemm(g, x, cin, cout, name="fc", gain=1.0):
    """nn.Linear on a 2-D input: Gemm with transB=1 ([out, in] weights)."""
    with g.scope(name):
        w = g.normal((cout, cin), gain / math.sqrt(cin))
        return g.op("Gemm", [x, g.initializer(w, "weight"),
                             g.initializer(g.normal(cout, 0.02), "bias")],
                    alpha=1.0, beta=1.0, transB=1)


# ---------------------------------------------------------------------------
# Transformer layers


def linear(g, x, cin, cout, name, gain=1.0):
    """nn.Linear on a 3-D input: MatMul with [in, out] weights, then Add."""
    with g.scope(name):
        w = g.normal((cin, cout), gain / math.sqrt(cin))
        b = g.normal(cout, 0.02)
        # torch.onnx stores the transposed weight as an anonymous initializer.
        y = g.op("MatMul", [x, g.initializer(w, "weight_t")])
        return g.op("Add", [g.initializer(b, "bias"), y])


def layer_norm(g, x, dim, eps, decomposed, name):
    """LayerNormalization (opset 17), or the ReduceMean/Sub/Pow/Sqrt/Div
    form that TF exporters and torch.onnx at opset < 17 write."""
    with g.scope(name):
        gamma = g.initializer(1.0 + g.normal(dim, 0.1), "weight")
        beta = g.initializer(g.normal(dim, 0.1), "bias")
        if not decomposed:
            assert g.opset >= 17, "LayerNormalization needs opset 17"
            return g.op("LayerNormalization", [x, gamma, beta], axis=-1,
                        epsilon=eps)
        assert g.opset < 18, "ReduceMean takes axes as an input from 18"
        mean = g.op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [d, g.const(2.0, np.float32)])],
                   axes=[-1], keepdims=1)
        std = g.op("Sqrt", [g.op("Add", [var, g.const(eps, np.float32)])])
        y = g.op("Div", [d, std])
        return g.op("Add", [g.op("Mul", [y, gamma]), beta])


def split_heads(g, x, heads, head_dim, dynamic, perm):
    """[B, S, H*D] -> [B, S, H, D] -> Transpose(perm)."""
    if dynamic:
        target = reshape_target(g, x, [0, 1], [heads, head_dim])
    else:
        target = g.const([0, 0, heads, head_dim])
    return g.op("Transpose", [g.op("Reshape", [x, target])], perm=perm)


def merge_heads(g, ctx, hidden, dynamic):
    """[B, H, S, D] -> [B, S, H, D] -> [B, S, H*D]."""
    t = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
    if dynamic:
        target = reshape_target(g, t, [0, 1], [hidden])
    else:
        target = g.const([0, 0, hidden])
    return g.op("Reshape", [t, target])


def attention(g, x, hidden, heads, mask_bias=None, fused_qkv=False,
              dynamic=False, name="attention"):
    """Multi-head self-attention as BERT (separate Q/K/V, Div by sqrt(d),
    additive mask) or ViT (fused QKV Linear, Reshape to [B,N,3,H,D],
    Transpose, Gather q/k/v, Mul by the scale) exporters write it."""
    d = hidden // heads
    with g.scope(name):
        if fused_qkv:
            qkv = linear(g, x, hidden, 3 * hidden, "qkv")
            if dynamic:
                target = reshape_target(g, x, [0, 1], [3, heads, d])
            else:
                target = g.const([0, 0, 3, heads, d])
            qkv = g.op("Transpose", [g.op("Reshape", [qkv, target])],
                       perm=[2, 0, 3, 1, 4])
            q, k, v = [g.op("Gather", [qkv, g.const(i)], axis=0)
                       for i in range(3)]
            kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
            q = g.op("Mul", [q, g.const(d ** -0.5, np.float32)])
            scores = g.op("MatMul", [q, kt])
        else:
            q = split_heads(g, linear(g, x, hidden, hidden, "query"), heads,
                            d, dynamic, [0, 2, 1, 3])
            kt = split_heads(g, linear(g, x, hidden, hidden, "key"), heads,
                             d, dynamic, [0, 2, 3, 1])
            v = split_heads(g, linear(g, x, hidden, hidden, "value"), heads,
                            d, dynamic, [0, 2, 1, 3])
            scores = g.op("MatMul", [q, kt])
            scores = g.op("Div", [scores, g.const(math.sqrt(d), np.float32)])
        if mask_bias is not None:
            scores = g.op("Add", [scores, mask_bias])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = merge_heads(g, g.op("MatMul", [probs, v]), hidden, dynamic)
        return linear(g, ctx, hidden, hidden, "output")


def mlp(g, x, hidden, inner, act="gelu", name="mlp"):
    with g.scope(name):
        h = activation(g, linear(g, x, hidden, inner, "fc1"), act)
        return linear(g, h, inner, hidden, "fc2")


def encoder_layer(g, x, cfg, mask_bias, name):
    """A transformer block; cfg keys: hidden, heads, inner, eps, pre_norm,
    decomposed_ln, fused_qkv, dynamic."""
    hidden = cfg["hidden"]

    def norm(v, which):
        return layer_norm(g, v, hidden, cfg["eps"], cfg["decomposed_ln"],
                          which)

    with g.scope(name):
        if cfg["pre_norm"]:  # ViT: x + attn(ln(x)); x + mlp(ln(x))
            a = attention(g, norm(x, "norm1"), hidden, cfg["heads"],
                          mask_bias, cfg["fused_qkv"], cfg["dynamic"])
            x = g.op("Add", [x, a])
            m = mlp(g, norm(x, "norm2"), hidden, cfg["inner"])
            return g.op("Add", [x, m])
        # BERT: ln(x + attn(x)); ln(x + mlp(x))
        a = attention(g, x, hidden, cfg["heads"], mask_bias, cfg["fused_qkv"],
                      cfg["dynamic"])
        x = norm(g.op("Add", [a, x]), "attention_norm")
        m = mlp(g, x, hidden, cfg["inner"], name="intermediate")
        return norm(g.op("Add", [m, x]), "output_norm")


def count_ops(model):
    counts = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def count_params(model):
    return int(sum(np.prod(t.dims) for t in model.graph.initializer))


def check_model(model):
    onnx.checker.check_model(model, full_check=True)
