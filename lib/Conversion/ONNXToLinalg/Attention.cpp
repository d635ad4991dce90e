//===- Attention.cpp - composite operators --------------------------------===//
//
// Operators ONNX defines as compositions of others, expressed as the
// operators they stand for (OnnxEmitter): the driver converts those next,
// so the matrix products, softmaxes, gathers and masks go through the same
// handlers, folding and fusion as an exporter's unfused graph.
// - Attention: 3-D inputs are split into heads (Reshape, Transpose); the
//   KV cache is Concat of past and new keys and values (the present
//   outputs); the bias is the mask (a boolean mask becomes 0 / -inf, a
//   shorter mask is padded), the causal triangle (offset by the past
//   length) and the padding of nonpad_kv_seqlen; grouped-query heads repeat
//   each KV head; Q and K are each scaled by sqrt(scale) as the reference
//   does; softcap, softmax in softmax_precision, and the optional QK output
//   at the stage qk_matmul_output_mode names.
// - RotaryEmbedding: the cos/sin caches (gathered by position ids) rotate
//   the first rotary_embedding_dim features, as halves or interleaved.
// - NegativeLogLikelihoodLoss: GatherElements of the target class (a safe
//   index where the target is ignore_index), weights gathered per target
//   and zero where ignored, then the reduction ("mean" divides by the
//   weights' sum); SoftmaxCrossEntropyLoss is LogSoftmax over the classes
//   and that.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc;

namespace {

LogicalResult convertAttention(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(rw.requireInput(i, i == 0 ? "Q" : i == 1 ? "K" : "V")))
      return failure();
  RankedTensorType qType = rw.inputType(0), kType = rw.inputType(1),
                   vType = rw.inputType(2);
  int64_t rank = qType.getRank();
  if ((rank != 3 && rank != 4) || kType.getRank() != rank ||
      vType.getRank() != rank)
    return rw.fail("Q, K and V must all have rank 3 or all rank 4");
  Type qElem = qType.getElementType();
  if (!isa<FloatType>(qElem))
    return rw.fail("Q must be a float tensor");
  int64_t batch = qType.getDimSize(0);
  std::optional<int64_t> qHeadsAttr = rw.getOptionalInt("q_num_heads");
  std::optional<int64_t> kvHeadsAttr = rw.getOptionalInt("kv_num_heads");
  int64_t qHeads, kvHeads, seq, kvSeq, headSize, vHeadSize;
  if (rank == 3) {
    if (!qHeadsAttr || !kvHeadsAttr || *qHeadsAttr < 1 || *kvHeadsAttr < 1)
      return rw.fail("3-D inputs need positive q_num_heads and kv_num_heads");
    qHeads = *qHeadsAttr;
    kvHeads = *kvHeadsAttr;
    if (qType.getDimSize(2) % qHeads || kType.getDimSize(2) % kvHeads ||
        vType.getDimSize(2) % kvHeads)
      return rw.fail("the hidden sizes of Q, K and V must divide into "
                     "q_num_heads and kv_num_heads heads");
    seq = qType.getDimSize(1);
    kvSeq = kType.getDimSize(1);
    headSize = qType.getDimSize(2) / qHeads;
    vHeadSize = vType.getDimSize(2) / kvHeads;
    if (kType.getDimSize(2) / kvHeads != headSize)
      return rw.fail("Q and K must have the same head size");
  } else {
    qHeads = qType.getDimSize(1);
    kvHeads = kType.getDimSize(1);
    seq = qType.getDimSize(2);
    kvSeq = kType.getDimSize(2);
    headSize = qType.getDimSize(3);
    vHeadSize = vType.getDimSize(3);
    if (kType.getDimSize(3) != headSize)
      return rw.fail("Q and K must have the same head size");
    if (vType.getDimSize(1) != kvHeads)
      return rw.fail("K and V must have the same number of heads");
  }
  if (kvHeads < 1 || qHeads % kvHeads != 0)
    return rw.fail("the number of query heads (" + Twine(qHeads) +
                   ") must be a multiple of the number of key/value heads (" +
                   Twine(kvHeads) + ")");
  int64_t mode = rw.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return rw.fail("qk_matmul_output_mode must be 0 to 3, not " + Twine(mode));
  std::optional<int64_t> precision = rw.getOptionalInt("softmax_precision");
  Type softmaxElem = qElem;
  if (precision) {
    softmaxElem = onnx::getElementType(rw.ctx(), *precision);
    if (!softmaxElem || !isa<FloatType>(softmaxElem))
      return rw.fail("softmax_precision must name a float type");
  }
  int64_t past = 0;
  if (rw.hasInput(4) != rw.hasInput(5))
    return rw.fail("past_key and past_value come together");
  if (rw.hasInput(4)) {
    RankedTensorType pk = rw.inputType(4);
    if (pk.getRank() != 4 || pk.getDimSize(0) != batch ||
        pk.getDimSize(1) != kvHeads || pk.getDimSize(3) != headSize)
      return rw.fail("past_key must have shape [" + Twine(batch) + ", " +
                     Twine(kvHeads) + ", past, " + Twine(headSize) + "]");
    past = pk.getDimSize(2);
  }
  int64_t total = past + kvSeq;

  OnnxEmitter e(rw);
  Value q = op.getInputs()[0], k = op.getInputs()[1], v = op.getInputs()[2];
  auto heads = [&](Value x, int64_t n, int64_t len, int64_t size) {
    x = e.node("Reshape", 14, {x, e.ints({batch, len, n, size})});
    return e.node("Transpose", 13, {x}, {e.attr("perm", {0, 2, 1, 3})});
  };
  if (rank == 3) {
    q = heads(q, qHeads, seq, headSize);
    k = heads(k, kvHeads, kvSeq, headSize);
    v = heads(v, kvHeads, kvSeq, vHeadSize);
  }
  Value presentK = k, presentV = v;
  if (rw.hasInput(4)) {
    presentK =
        e.node("Concat", 13, {op.getInputs()[4], k}, {e.attr("axis", 2)});
    presentV =
        e.node("Concat", 13, {op.getInputs()[5], v}, {e.attr("axis", 2)});
  }

  // The additive bias: [S, L] or the mask's broadcast shape.
  double negInf = -std::numeric_limits<double>::infinity();
  Value bias;
  if (rw.hasInput(3)) {
    RankedTensorType maskType = rw.inputType(3);
    if (maskType.getRank() < 2)
      return rw.fail("attn_mask must have rank 2 or more");
    bias = op.getInputs()[3];
    bool isBool = maskType.getElementType().isInteger(1);
    int64_t width = maskType.getDimSize(maskType.getRank() - 1);
    if (width > total)
      return rw.fail("attn_mask's last dim (" + Twine(width) +
                     ") exceeds the total sequence length (" + Twine(total) +
                     ")");
    if (width < total) {
      SmallVector<int64_t> pads(2 * maskType.getRank(), 0);
      pads[2 * maskType.getRank() - 1] = total - width;
      Value fill = isBool ? e.scalar(maskType.getElementType(), 0)
                          : e.scalar(qElem, negInf);
      bias = e.node("Pad", 19, {bias, e.ints(pads), fill});
    }
    if (isBool)
      bias = e.node("Where", 16,
                    {bias, e.scalar(qElem, 0), e.scalar(qElem, negInf)});
  }
  if (rw.getInt("is_causal", 0)) {
    // -inf above the diagonal, shifted right by the past length: key j is
    // masked for query i when j > past + i. Computed from two ranges rather
    // than stored (seq x total values; a fuzzed 2^20 x 2^20 ran the compiler
    // out of memory).
    Value rows = e.node(
        "Reshape", 14,
        {e.node("Range", 11,
                {e.scalarInt(past), e.scalarInt(past + seq), e.scalarInt(1)}),
         e.ints({seq, 1})});
    Value cols = e.node("Range", 11,
                        {e.scalarInt(0), e.scalarInt(total), e.scalarInt(1)});
    Value triangle = e.node("Where", 16,
                            {e.node("Greater", 13, {cols, rows}),
                             e.scalar(qElem, negInf), e.scalar(qElem, 0)});
    bias = bias ? e.node("Add", 14, {bias, triangle}) : triangle;
  }
  if (rw.hasInput(6)) {
    // nonpad_kv_seqlen [B]: keys at or past a batch entry's length are
    // padding.
    Value lens = op.getInputs()[6];
    Value positions = e.node(
        "Range", 11, {e.scalarInt(0), e.scalarInt(total), e.scalarInt(1)});
    Value lens2d = e.node("Reshape", 14, {lens, e.ints({batch, 1})});
    Value lens64 =
        e.node("Cast", 21, {lens2d}, {e.attr("to", int64_t(7) /* INT64 */)});
    Value valid = e.node("Less", 13, {positions, lens64});
    Value padding = e.node(
        "Where", 16, {valid, e.scalar(qElem, 0), e.scalar(qElem, negInf)});
    padding = e.node("Reshape", 14, {padding, e.ints({batch, 1, 1, total})});
    bias = bias ? e.node("Add", 14, {bias, padding}) : padding;
  }

  // Grouped-query attention: query head h reads key/value head h / reps.
  if (qHeads != kvHeads) {
    int64_t reps = qHeads / kvHeads;
    auto repeat = [&](Value x, int64_t size) {
      x = e.node("Unsqueeze", 13, {x, e.ints({2})});
      x = e.node("Expand", 13,
                 {x, e.ints({batch, kvHeads, reps, total, size})});
      return e.node("Reshape", 14, {x, e.ints({batch, qHeads, total, size})});
    };
    k = repeat(presentK, headSize);
    v = repeat(presentV, vHeadSize);
  } else {
    k = presentK;
    v = presentV;
  }

  double scale = 1.0 / std::sqrt(static_cast<double>(headSize));
  if (rw.hasAttr("scale"))
    scale = rw.getFloat("scale", 1.0f);
  Value rootScale = e.scalar(qElem, std::sqrt(scale));
  Value qs = e.node("Mul", 14, {q, rootScale});
  Value ks = e.node("Mul", 14, {k, rootScale});
  Value kt = e.node("Transpose", 13, {ks}, {e.attr("perm", {0, 1, 3, 2})});
  Value qk = e.node("MatMul", 13, {qs, kt});
  Value qkOut = qk;
  Value scores = bias ? e.node("Add", 14, {qk, bias}) : qk;
  if (mode == 1)
    qkOut = scores;
  float softcap = rw.getFloat("softcap", 0.0f);
  if (softcap > 0) {
    Value cap = e.scalar(qElem, softcap);
    scores =
        e.node("Mul", 14,
               {e.node("Tanh", 13, {e.node("Div", 14, {scores, cap})}), cap});
    if (mode == 2)
      qkOut = scores;
  }
  auto castTo = [&](Value x, Type from, Type to) {
    if (from == to)
      return x;
    return e.node("Cast", 21, {x}, {e.attr("to", onnx::getDataType(to))});
  };
  scores = castTo(scores, qElem, softmaxElem);
  Value probs = e.node("Softmax", 13, {scores}, {e.attr("axis", -1)});
  if (mode == 3)
    qkOut = castTo(probs, softmaxElem, qElem);
  Value y = e.node("MatMul", 13, {probs, castTo(v, qElem, softmaxElem)});
  y = castTo(y, softmaxElem, qElem);
  if (rank == 3) {
    y = e.node("Transpose", 13, {y}, {e.attr("perm", {0, 2, 1, 3})});
    y = e.node("Reshape", 14, {y, e.ints({batch, seq, qHeads * vHeadSize})});
  }
  SmallVector<Value> results = {y, presentK, presentV, qkOut};
  results.resize(op.getNumResults());
  rw.forward(results);
  return success();
}

LogicalResult convertRotaryEmbedding(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(rw.requireInput(i, i == 0   ? "X"
                                  : i == 1 ? "cos_cache"
                                           : "sin_cache")))
      return failure();
  RankedTensorType xType = rw.inputType(0);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return rw.fail("X must have rank 3 ([B, S, hidden]) or 4 ([B, heads, "
                   "S, head size])");
  int64_t batch = xType.getDimSize(0), seq, heads, headSize;
  if (rank == 4) {
    heads = xType.getDimSize(1);
    seq = xType.getDimSize(2);
    headSize = xType.getDimSize(3);
  } else {
    heads = rw.getInt("num_heads", 0);
    if (heads < 1 || xType.getDimSize(2) % heads)
      return rw.fail("3-D X needs a num_heads that divides its hidden size");
    seq = xType.getDimSize(1);
    headSize = xType.getDimSize(2) / heads;
  }
  int64_t dim = rw.getInt("rotary_embedding_dim", 0);
  if (dim == 0)
    dim = headSize;
  if (dim < 2 || dim % 2 || dim > headSize)
    return rw.fail("rotary_embedding_dim must be even and at most the head "
                   "size (" +
                   Twine(headSize) + "); it is " + Twine(dim));
  int64_t half = dim / 2;
  RankedTensorType cosType = rw.inputType(1);
  if (cosType.getRank() == 0 ||
      cosType.getDimSize(cosType.getRank() - 1) != half ||
      rw.inputType(2).getShape() != cosType.getShape())
    return rw.fail("cos_cache and sin_cache must have the same shape, "
                   "ending in rotary_embedding_dim / 2 (" +
                   Twine(half) + ")");
  if (!rw.hasInput(3) &&
      (cosType.getRank() != 3 || cosType.getDimSize(0) != batch ||
       cosType.getDimSize(1) != seq))
    return rw.fail("without position_ids the caches must have shape [" +
                   Twine(batch) + ", " + Twine(seq) + ", " + Twine(half) + "]");
  bool interleaved = rw.getInt("interleaved", 0) != 0;

  OnnxEmitter e(rw);
  // [B, S, heads, head size].
  Value x = op.getInputs()[0];
  x = rank == 4
          ? e.node("Transpose", 13, {x}, {e.attr("perm", {0, 2, 1, 3})})
          : e.node("Reshape", 14, {x, e.ints({batch, seq, heads, headSize})});
  Value cosCache = op.getInputs()[1], sinCache = op.getInputs()[2];
  if (rw.hasInput(3)) {
    cosCache = e.node("Gather", 13, {cosCache, op.getInputs()[3]});
    sinCache = e.node("Gather", 13, {sinCache, op.getInputs()[3]});
  }
  cosCache = e.node("Unsqueeze", 13, {cosCache, e.ints({2})});
  sinCache = e.node("Unsqueeze", 13, {sinCache, e.ints({2})});
  auto slice = [&](Value v, int64_t start, int64_t end, int64_t step) {
    return e.node(
        "Slice", 13,
        {v, e.ints({start}), e.ints({end}), e.ints({3}), e.ints({step})});
  };
  Value rotate = dim == headSize ? x : slice(x, 0, dim, 1);
  Value x1 = interleaved ? slice(rotate, 0, dim, 2) : slice(rotate, 0, half, 1);
  Value x2 =
      interleaved ? slice(rotate, 1, dim, 2) : slice(rotate, half, dim, 1);
  Value real = e.node(
      "Sub", 14,
      {e.node("Mul", 14, {cosCache, x1}), e.node("Mul", 14, {sinCache, x2})});
  Value imag = e.node(
      "Add", 14,
      {e.node("Mul", 14, {sinCache, x1}), e.node("Mul", 14, {cosCache, x2})});
  Value rotated;
  if (interleaved) {
    real = e.node("Unsqueeze", 13, {real, e.ints({4})});
    imag = e.node("Unsqueeze", 13, {imag, e.ints({4})});
    rotated = e.node("Concat", 13, {real, imag}, {e.attr("axis", 4)});
    rotated =
        e.node("Reshape", 14, {rotated, e.ints({batch, seq, heads, dim})});
  } else {
    rotated = e.node("Concat", 13, {real, imag}, {e.attr("axis", 3)});
  }
  Value y = dim == headSize
                ? rotated
                : e.node("Concat", 13, {rotated, slice(x, dim, headSize, 1)},
                         {e.attr("axis", 3)});
  y = rank == 4
          ? e.node("Transpose", 13, {y}, {e.attr("perm", {0, 2, 1, 3})})
          : e.node("Reshape", 14, {y, e.ints({batch, seq, heads * headSize})});
  rw.forward(y);
  return success();
}

LogicalResult convertNegativeLogLikelihoodLoss(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(rw.requireInput(0, "input")) ||
      failed(rw.requireInput(1, "target")))
    return failure();
  RankedTensorType xType = rw.inputType(0), tType = rw.inputType(1);
  Type xElem = xType.getElementType(), tElem = tType.getElementType();
  if (!isa<FloatType>(xElem))
    return rw.fail("input must be a float tensor");
  if (!isa<IntegerType>(tElem) || tElem.isInteger(1))
    return rw.fail("target must hold integer class indices");
  int64_t rank = xType.getRank();
  if (rank < 2 || tType.getRank() != rank - 1)
    return rw.fail("input must be [N, C, d1, ...] and target [N, d1, ...]");
  for (int64_t d = 0; d < rank - 1; ++d)
    if (tType.getDimSize(d) != xType.getDimSize(d == 0 ? 0 : d + 1))
      return rw.fail("target's shape does not match input's without its "
                     "class axis");
  if (rw.hasInput(2) && (rw.inputType(2).getRank() != 1 ||
                         rw.inputType(2).getDimSize(0) != xType.getDimSize(1)))
    return rw.fail("weight must have shape [" + Twine(xType.getDimSize(1)) +
                   "]");
  std::string reduction = rw.getString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return rw.fail("reduction must be mean, sum or none, not '" + reduction +
                   "'");
  std::optional<int64_t> ignore = rw.getOptionalInt("ignore_index");

  OnnxEmitter e(rw);
  Value target = op.getInputs()[1], ignored;
  if (ignore) {
    ignored = e.node("Equal", 13, {target, e.scalar(tElem, *ignore)});
    target = e.node("Where", 16, {ignored, e.scalar(tElem, 0), target});
  }
  Value picked = e.node(
      "GatherElements", 13,
      {op.getInputs()[0], e.node("Unsqueeze", 13, {target, e.ints({1})})},
      {e.attr("axis", 1)});
  Value loss =
      e.node("Neg", 13, {e.node("Squeeze", 13, {picked, e.ints({1})})});
  Value weight;
  if (rw.hasInput(2))
    weight = e.node("Gather", 13, {op.getInputs()[2], target});
  if (ignored)
    weight = e.node(
        "Where", 16,
        {ignored, e.scalar(xElem, 0), weight ? weight : e.scalar(xElem, 1)});
  if (weight)
    loss = e.node("Mul", 14, {loss, weight});
  if (reduction == "sum") {
    loss = e.node("ReduceSum", 13, {loss}, {e.attr("keepdims", 0)});
  } else if (reduction == "mean") {
    loss =
        weight
            ? e.node(
                  "Div", 14,
                  {e.node("ReduceSum", 13, {loss}, {e.attr("keepdims", 0)}),
                   e.node("ReduceSum", 13, {weight}, {e.attr("keepdims", 0)})})
            : e.node("ReduceMean", 13, {loss}, {e.attr("keepdims", 0)});
  }
  rw.forward(loss);
  return success();
}

LogicalResult convertSoftmaxCrossEntropyLoss(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(rw.requireInput(0, "scores")) ||
      failed(rw.requireInput(1, "labels")))
    return failure();
  if (rw.inputType(0).getRank() < 2)
    return rw.fail("scores must be [N, C, d1, ...]");
  OnnxEmitter e(rw);
  Value logProb =
      e.node("LogSoftmax", 13, {op.getInputs()[0]}, {e.attr("axis", 1)});
  SmallVector<Value> inputs = {logProb, op.getInputs()[1]};
  if (rw.hasInput(2))
    inputs.push_back(op.getInputs()[2]);
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : {"reduction", "ignore_index"})
    if (Attribute a = op.getOnnxAttr(name))
      attrs.push_back(e.b().getNamedAttr(name, a));
  Value loss = e.node("NegativeLogLikelihoodLoss", 13, inputs, attrs);
  SmallVector<Value> results = {loss, logProb};
  results.resize(op.getNumResults());
  rw.forward(results);
  return success();
}

} // namespace

void dlc::populateAttentionHandlers(HandlerRegistry &r) {
  r.add("Attention", {23, 24}, convertAttention);
  r.add("RotaryEmbedding", {23}, convertRotaryEmbedding);
  r.add("NegativeLogLikelihoodLoss", {12, 13, 22},
        convertNegativeLogLikelihoodLoss);
  r.add("SoftmaxCrossEntropyLoss", {12, 13}, convertSoftmaxCrossEntropyLoss);
}
