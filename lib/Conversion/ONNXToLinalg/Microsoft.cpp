//===- Microsoft.cpp - com.microsoft operators ORT's tools write ----------===//
//
// ONNX Runtime's transformer optimizer fuses subgraphs into operators of
// its own domain. Each becomes the standard operators it stands for
// (OnnxEmitter), with ONNX Runtime's definitions:
// - Gelu: x * (1 + erf(x / sqrt 2)) / 2; BiasGelu: Gelu(A + B);
// - FastGelu: the tanh approximation of Gelu of X (+ bias);
// - QuickGelu: x * sigmoid(alpha x), alpha 1.702 by default;
// - SkipLayerNormalization: LayerNormalization over the last dim of
//   input + skip (+ bias), with its optional outputs (mean, inverse
//   standard deviation, and the sum itself).
// Other com.microsoft operators get the driver's "unsupported operator in
// domain 'com.microsoft'" error.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

using namespace mlir;
using namespace dlc;

namespace {

constexpr StringLiteral kDomain = "com.microsoft";

/// Gelu (erf) of input 0, plus input 1 first when `biased`; the tanh
/// approximation when `fast`.
template <bool biased, bool fast>
LogicalResult convertGeluFamily(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(requireFloatInput(rw, 0, "X")))
    return failure();
  if (biased && failed(requireFloatInput(rw, 1, "bias")))
    return failure();
  OnnxEmitter e(rw);
  Value x = op.getInputs()[0];
  if (rw.hasInput(1))
    x = e.node("Add", 14, {x, op.getInputs()[1]});
  rw.forward(
      e.node("Gelu", 20, {x},
             {e.b().getNamedAttr(
                 "approximate", e.b().getStringAttr(fast ? "tanh" : "none"))}));
  return success();
}

LogicalResult convertQuickGelu(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(requireFloatInput(rw, 0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  OnnxEmitter e(rw);
  Value x = op.getInputs()[0];
  Value scaled =
      e.node("Mul", 14, {x, e.scalar(t, rw.getFloat("alpha", 1.702f))});
  rw.forward(e.node("Mul", 14, {x, e.node("Sigmoid", 13, {scaled})}));
  return success();
}

LogicalResult convertSkipLayerNormalization(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(requireFloatInput(rw, 0, "input")) ||
      failed(requireFloatInput(rw, 1, "skip")) ||
      failed(requireFloatInput(rw, 2, "gamma")) ||
      (rw.hasInput(3) && failed(requireFloatInput(rw, 3, "beta"))) ||
      (rw.hasInput(4) && failed(requireFloatInput(rw, 4, "bias"))))
    return failure();
  RankedTensorType inType = rw.inputType(0);
  if (inType.getRank() < 1)
    return rw.fail("input must have rank 1 or more");
  int64_t hidden = inType.getDimSize(inType.getRank() - 1);
  for (unsigned i = 2; i < 5; ++i) {
    if (!rw.hasInput(i))
      continue;
    RankedTensorType t = rw.inputType(i);
    if (t.getRank() < 1 || t.getDimSize(t.getRank() - 1) != hidden ||
        t.getNumElements() != hidden)
      return rw.fail(StringRef(i == 2   ? "gamma"
                               : i == 3 ? "beta"
                                        : "bias") +
                     " must hold the " + Twine(hidden) +
                     " values of the last dim");
  }
  OnnxEmitter e(rw);
  Value sum = e.node("Add", 14, {op.getInputs()[0], op.getInputs()[1]});
  if (rw.hasInput(4))
    sum = e.node("Add", 14, {sum, op.getInputs()[4]});
  SmallVector<Value> lnInputs = {sum, op.getInputs()[2]};
  if (rw.hasInput(3))
    lnInputs.push_back(op.getInputs()[3]);
  unsigned numStats = std::min<unsigned>(op.getNumResults(), 3);
  onnx::NodeOp ln =
      e.nodeOp("LayerNormalization", 17, lnInputs,
               {e.attr("axis", -1),
                e.floatAttr("epsilon", rw.getFloat("epsilon", 1e-12f))},
               std::max(numStats, 1u));
  SmallVector<Value> results(ln.getOutputs());
  if (op.getNumResults() > 3)
    results.push_back(sum);
  rw.forward(results);
  return success();
}

} // namespace

void dlc::populateMicrosoftHandlers(HandlerRegistry &r) {
  r.add("Gelu", {1}, convertGeluFamily<false, false>, kDomain);
  r.add("BiasGelu", {1}, convertGeluFamily<true, false>, kDomain);
  r.add("FastGelu", {1}, convertGeluFamily<false, true>, kDomain);
  r.add("QuickGelu", {1}, convertQuickGelu, kDomain);
  r.add("SkipLayerNormalization", {1}, convertSkipLayerNormalization, kDomain);
}
