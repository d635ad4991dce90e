//===- FoldConstants.cpp - the dlc-fold-constants pass --------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

namespace dlc {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The elements of a constant tensor as attributes, in row-major order:
/// dense attributes of any element type, resource blobs of f32.
std::optional<SmallVector<Attribute>> elementsOf(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  SmallVector<Attribute> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    llvm::append_range(out, dense.getValues<Attribute>());
    return out;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource || !type.getElementType().isF32())
    return std::nullopt;
  ArrayRef<char> data = resource.getData();
  if (static_cast<int64_t>(data.size()) != type.getNumElements() * 4)
    return std::nullopt;
  Type f32 = type.getElementType();
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    float x;
    std::memcpy(&x, data.data() + 4 * i, 4);
    out.push_back(FloatAttr::get(f32, x));
  }
  return out;
}

/// The row-major position of `index` in `shape`.
int64_t flatten(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (auto [i, n] : llvm::zip(index, shape))
    flat = flat * n + i;
  return flat;
}

/// The value of `op`'s result, computed from its constant inputs, or null.
DenseElementsAttr evaluate(linalg::GenericOp op, int64_t maxElements) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics())
    return nullptr;
  auto resultType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() ||
      resultType.getNumElements() > maxElements)
    return nullptr;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return nullptr;
  Block &body = op.getRegion().front();
  if (!body.getArgument(op.getNumDpsInputs()).use_empty())
    return nullptr;
  // Inputs: constant tensors (elements and shape) or constant scalars.
  struct Input {
    SmallVector<Attribute> elements;
    SmallVector<int64_t> shape;
    AffineMap map;
  };
  SmallVector<Input> inputs;
  auto bytes = [](Type elem, int64_t n) {
    return n * dlc::storedElementBytes(elem);
  };
  if (!resultType.getElementType().isIntOrFloat())
    return nullptr;
  int64_t inputBytes = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Input input;
    input.map = op.getMatchingIndexingMap(in);
    if (auto type = dyn_cast<RankedTensorType>(in->get().getType())) {
      std::optional<SmallVector<Attribute>> e = elementsOf(in->get());
      if (!e || !type.hasStaticShape())
        return nullptr;
      if (!type.getElementType().isIntOrFloat())
        return nullptr;
      inputBytes += bytes(type.getElementType(), type.getNumElements());
      input.elements = std::move(*e);
      input.shape.assign(type.getShape().begin(), type.getShape().end());
    } else {
      Attribute scalar;
      if (!matchPattern(in->get(), m_Constant(&scalar)))
        return nullptr;
      input.elements = {scalar};
    }
    inputs.push_back(std::move(input));
  }
  // Folding must not turn small constants into a larger one: a broadcast,
  // or int8 weights dequantized to f32 (they stay integers for the
  // integer kernels).
  if (bytes(resultType.getElementType(), resultType.getNumElements()) >
      inputBytes)
    return nullptr;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<Attribute> result(resultType.getNumElements());
  int64_t points = 1;
  for (int64_t r : ranges)
    points *= r;
  SmallVector<int64_t> iv(ranges.size(), 0);
  for (int64_t point = 0; point < points; ++point) {
    // Loop indices of this point, x-fastest in the last loop.
    for (int64_t rest = point, d = ranges.size() - 1; d >= 0; --d) {
      iv[d] = rest % ranges[d];
      rest /= ranges[d];
    }
    DenseMap<Value, Attribute> known;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      int64_t flat = 0;
      if (!input.shape.empty())
        flat = flatten(input.map.compose(iv), input.shape);
      known[body.getArgument(i)] = input.elements[flat];
    }
    for (Operation &inner : body.without_terminator()) {
      SmallVector<Attribute> operands;
      for (Value v : inner.getOperands()) {
        Attribute a = known.lookup(v);
        if (!a)
          matchPattern(v, m_Constant(&a));
        if (!a)
          return nullptr;
        operands.push_back(a);
      }
      SmallVector<OpFoldResult> folded;
      if (inner.getNumResults() != 1 || failed(inner.fold(operands, folded)) ||
          folded.size() != 1)
        return nullptr;
      auto value = dyn_cast<Attribute>(folded.front());
      if (!value)
        return nullptr;
      known[inner.getResult(0)] = value;
    }
    Value yielded = body.getTerminator()->getOperand(0);
    Attribute a = known.lookup(yielded);
    if (!a)
      matchPattern(yielded, m_Constant(&a));
    auto typed = dyn_cast_or_null<TypedAttr>(a);
    if (!isa_and_nonnull<FloatAttr, IntegerAttr>(a) ||
        typed.getType() != resultType.getElementType())
      return nullptr;
    result[flatten(outMap.compose(iv), resultType.getShape())] = a;
  }
  if (llvm::any_of(result, [](Attribute a) { return !a; }))
    return nullptr;
  return DenseElementsAttr::get(resultType, result);
}

/// Replaces the splat constant tensor inputs (of rank 1 or more) of `op`
/// with scalar constants in its body, so that no kernel holds a constant
/// array (GPU kernels cannot). An operand goes away where the other operands
/// bound every loop it indexes; otherwise an unread tensor.empty of its shape
/// keeps bounding them. Returns the rebuilt op, or null when `op` has no splat
/// input.
linalg::GenericOp inlineSplatInputs(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return nullptr;
  struct Splat {
    OpOperand *operand;
    TypedAttr value;
  };
  SmallVector<Splat> splats;
  llvm::SmallBitVector bounded(op.getNumLoops());
  auto bound = [&](AffineMap map) {
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        bounded.set(d.getPosition());
  };
  for (OpOperand &operand : op->getOpOperands()) {
    DenseElementsAttr attr;
    // Rank-0 tensors stay: they are how zero points and scales reach the
    // integer contraction passes, and no kernel bufferizes them to arrays.
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (op.isDpsInput(&operand) && type && type.getRank() > 0 &&
        matchPattern(operand.get(), m_Constant(&attr)) && attr.isSplat() &&
        attr.getElementType().isIntOrFloat())
      splats.push_back({&operand, attr.getSplatValue<TypedAttr>()});
    else
      bound(op.getMatchingIndexingMap(&operand));
  }
  if (splats.empty())
    return nullptr;
  OpBuilder b(op);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  llvm::SmallPtrSet<OpOperand *, 4> removed;
  DenseMap<OpOperand *, Value> replaced;
  for (Splat &splat : splats) {
    AffineMap map = op.getMatchingIndexingMap(splat.operand);
    bool needed = llvm::any_of(map.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      return d && !bounded.test(d.getPosition());
    });
    if (!needed) {
      removed.insert(splat.operand);
      continue;
    }
    bound(map);
    auto type = cast<RankedTensorType>(splat.operand->get().getType());
    replaced[splat.operand] = tensor::EmptyOp::create(
        b, op.getLoc(), type.getShape(), type.getElementType());
  }
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (removed.contains(in))
      continue;
    inputs.push_back(replaced.lookup(in) ? replaced.lookup(in) : in->get());
    maps.push_back(op.getMatchingIndexingMap(in));
  }
  for (OpOperand &out : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&out));
  auto rebuilt = linalg::GenericOp::create(b, op.getLoc(), op.getResultTypes(),
                                           inputs, op.getDpsInits(), maps,
                                           op.getIteratorTypesArray());
  rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rebuilt.getRegion().takeBody(op.getRegion());
  Block &body = rebuilt.getRegion().front();
  b.setInsertionPointToStart(&body);
  llvm::BitVector erased(body.getNumArguments());
  for (Splat &splat : splats) {
    unsigned number = splat.operand->getOperandNumber();
    body.getArgument(number).replaceAllUsesWith(
        arith::ConstantOp::create(b, op.getLoc(), splat.value));
    if (removed.contains(splat.operand))
      erased.set(number);
  }
  body.eraseArguments(erased);
  op->replaceAllUsesWith(rebuilt->getResults());
  op.erase();
  return rebuilt;
}

struct FoldConstantsPass
    : public dlc::impl::FoldConstantsBase<FoldConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk(
        [&](linalg::GenericOp op) { candidates.push_back(op); });
    for (linalg::GenericOp op : candidates) {
      if (linalg::GenericOp rebuilt = inlineSplatInputs(op)) {
        op = rebuilt;
        ++numSplatsInlined;
      }
      DenseElementsAttr value = evaluate(op, maxElements);
      if (!value)
        continue;
      OpBuilder b(op);
      Value c = arith::ConstantOp::create(b, op.getLoc(), value);
      op.getResult(0).replaceAllUsesWith(c);
      op.erase();
      ++numFolded;
    }
  }
};

} // namespace
