//===- FoldBlockedDequantize.cpp - the dlc-fold-blocked-dequantize pass ---===//
//
// MatMul(A, DequantizeLinear(W, scale[, zero_point]) with block_size) ->
// com.microsoft.MatMulNBits, on onnx.node ops: opset 21's blocked
// DequantizeLinear of a constant 4- or 8-bit [K, N] matrix (what ONNX
// Runtime's 4-bit quantizer writes in its QDQ format) becomes the
// weight-only product whose kernel reads the packed values and dequantizes
// next to the multiply, instead of a float copy of the weights (or, for
// 4-bit constants, an error). The pass description in Passes.td states the
// conditions.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/ONNX/IR/ONNX.h"

#include "Utils.h"

#include "mlir/IR/Matchers.h"

#include <cstring>

namespace dlc {
#define GEN_PASS_DEF_FOLDBLOCKEDDEQUANTIZE
#include "dlc/Conversion/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// The float32 values of constant `v` (inline or a resource), if it is
/// one.
std::optional<SmallVector<float>> floatValues(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  std::optional<std::vector<char>> bytes =
      constantBytes(v, type.getNumElements(), 4);
  if (!bytes)
    return std::nullopt;
  SmallVector<float> out(type.getNumElements());
  std::memcpy(out.data(), bytes->data(), bytes->size());
  return out;
}

struct FoldBlockedDequantizePass
    : public dlc::impl::FoldBlockedDequantizeBase<FoldBlockedDequantizePass> {
  /// Rewrites `mm` when its weight is a blocked DequantizeLinear of
  /// constants; returns the DequantizeLinear (to erase when dead).
  onnx::NodeOp fold(onnx::NodeOp mm) {
    // (The DequantizeLinear's result may have no type yet: ONNX's shape
    // inference does not type blocked dequantization of 4-bit values.)
    if (mm.getInputs().size() != 2)
      return nullptr;
    auto dq = mm.getInputs()[1].getDefiningOp<onnx::NodeOp>();
    if (!dq || dq.getOpType() != "DequantizeLinear" ||
        !dq.getDomain().empty() || !dq.hasInput(0) || !dq.hasInput(1))
      return nullptr;
    auto blockAttr =
        dyn_cast_or_null<IntegerAttr>(dq.getOnnxAttr("block_size"));
    auto axisAttr = dyn_cast_or_null<IntegerAttr>(dq.getOnnxAttr("axis"));
    int64_t bs = blockAttr ? blockAttr.getInt() : 0;
    int64_t axis = axisAttr ? axisAttr.getInt() : 1;
    auto wType = dyn_cast<RankedTensorType>(dq.getInputs()[0].getType());
    auto aType = dyn_cast<RankedTensorType>(mm.getInputs()[0].getType());
    // Blocks along K (axis 0 of [K, N]) of a power of two, at least 16
    // (what MatMulNBits takes), over 4- or 8-bit values.
    if (!wType || !wType.hasStaticShape() || wType.getRank() != 2 ||
        (axis != 0 && axis != -2) || bs < 16 || (bs & (bs - 1)) != 0)
      return nullptr;
    auto elem = dyn_cast<IntegerType>(wType.getElementType());
    if (!elem || (elem.getWidth() != 4 && elem.getWidth() != 8))
      return nullptr;
    int64_t bits = elem.getWidth(), k = wType.getDimSize(0),
            n = wType.getDimSize(1), blocks = (k + bs - 1) / bs;
    // A's type may not be known yet either (an untyped DequantizeLinear
    // upstream stops ONNX's inference); MatMulNBits' conversion checks it.
    if (aType &&
        (aType.getRank() < 1 || aType.getDimSize(aType.getRank() - 1) != k))
      return nullptr;
    bool isUnsigned = elem.isUnsigned();
    std::optional<SmallVector<int64_t>> w =
        integerValues(dq.getInputs()[0], isUnsigned);
    std::optional<SmallVector<float>> s = floatValues(dq.getInputs()[1]);
    std::optional<SmallVector<int64_t>> z;
    if (dq.hasInput(2)) {
      auto zType = dyn_cast<RankedTensorType>(dq.getInputs()[2].getType());
      if (!zType || zType.getElementType() != elem)
        return nullptr;
      z = integerValues(dq.getInputs()[2], isUnsigned);
      if (!z || static_cast<int64_t>(z->size()) != blocks * n)
        return nullptr;
    }
    if (!w || !s || static_cast<int64_t>(s->size()) != blocks * n)
      return nullptr;

    // MatMulNBits' values are unsigned: signed ones move up by 2^(bits-1),
    // with their zero points (0 when absent, MatMulNBits' default then).
    int64_t shift = isUnsigned ? 0 : int64_t(1) << (bits - 1);
    int64_t perByte = 8 / bits, blob = bs / perByte;
    int64_t zpBytes = (blocks + perByte - 1) / perByte;
    SmallVector<uint8_t> packed(n * blocks * blob, 0),
        zeroPoints(n * zpBytes, 0);
    SmallVector<float> scales(n * blocks);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t zp = (z ? (*z)[b * n + c] : 0) + shift;
        scales[c * blocks + b] = (*s)[b * n + c];
        zeroPoints[c * zpBytes + b / perByte] |=
            static_cast<uint8_t>(zp << ((b % perByte) * bits));
        for (int64_t i = 0; i < bs; ++i) {
          int64_t row = b * bs + i;
          int64_t q = row < k ? (*w)[row * n + c] + shift : zp;
          packed[(c * blocks + b) * blob + i / perByte] |=
              static_cast<uint8_t>(q << ((i % perByte) * bits));
        }
      }
    OpBuilder b(mm);
    MLIRContext *ctx = b.getContext();
    auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
    auto constant = [&](RankedTensorType type, auto values) -> Value {
      return arith::ConstantOp::create(
          b, mm.getLoc(), DenseElementsAttr::get(type, ArrayRef(values)));
    };
    Value bq = constant(RankedTensorType::get({n, blocks, blob}, u8), packed);
    Value sq =
        constant(RankedTensorType::get({n * blocks}, b.getF32Type()), scales);
    Value zq = constant(RankedTensorType::get({n * zpBytes}, u8), zeroPoints);
    auto attrs = DictionaryAttr::get(
        ctx, {b.getNamedAttr("K", b.getI64IntegerAttr(k)),
              b.getNamedAttr("N", b.getI64IntegerAttr(n)),
              b.getNamedAttr("bits", b.getI64IntegerAttr(bits)),
              b.getNamedAttr("block_size", b.getI64IntegerAttr(bs))});
    auto folded = onnx::NodeOp::create(
        b, mm.getLoc(), mm->getResultTypes(), "MatMulNBits", "com.microsoft", 1,
        mm.getNameAttr(), attrs, /*graph_attrs=*/ArrayAttr(),
        ValueRange{mm.getInputs()[0], bq, sq, zq}, /*graphsCount=*/0);
    mm.getResult(0).replaceAllUsesWith(folded.getResult(0));
    mm.erase();
    ++numFolded;
    return dq;
  }

  void runOnOperation() override {
    SmallVector<onnx::NodeOp> products;
    getOperation().walk([&](onnx::NodeOp node) {
      if (node.getOpType() == "MatMul" && node.getDomain().empty())
        products.push_back(node);
    });
    llvm::SmallPtrSet<Operation *, 8> dequantizes;
    for (onnx::NodeOp mm : products)
      if (onnx::NodeOp dq = fold(mm))
        dequantizes.insert(dq);
    for (Operation *dq : dequantizes)
      if (dq->use_empty())
        dq->erase();
  }
};

} // namespace
