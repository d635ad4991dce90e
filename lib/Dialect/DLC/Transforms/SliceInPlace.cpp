//===- SliceInPlace.cpp - the dlc-slice-in-place pass ---------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace dlc {
#define GEN_PASS_DEF_SLICEINPLACE
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The slice of `dispatch`, when its body is nothing but an extract_slice
/// of an argument.
tensor::ExtractSliceOp soleSlice(dlc::DispatchOp dispatch) {
  Block &body = dispatch.getBodyBlock();
  if (body.getOperations().size() != 2 || dispatch.getNumResults() != 1)
    return nullptr;
  auto slice = dyn_cast<tensor::ExtractSliceOp>(body.front());
  if (!slice || dispatch.getYield().getValues()[0] != slice.getResult() ||
      !isa<BlockArgument>(slice.getSource()))
    return nullptr;
  return slice;
}

/// The element offset at which `slice` starts in its source, when the
/// slice is one contiguous range of it: static, unit strides, and after
/// the first dim it takes more than one element of, only whole dims.
std::optional<int64_t> contiguousOffset(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  if (!source.hasStaticShape() || slice.getResultType().getNumElements() == 0)
    return std::nullopt;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  if (llvm::any_of(offsets, ShapedType::isDynamic) ||
      llvm::any_of(sizes, ShapedType::isDynamic) ||
      llvm::any_of(strides, [](int64_t s) { return s != 1; }))
    return std::nullopt;
  int64_t rank = source.getRank();
  bool partial = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (partial && sizes[d] != source.getDimSize(d))
      return std::nullopt;
    partial |= sizes[d] > 1;
  }
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d)
    offset = offset * source.getDimSize(d) + offsets[d];
  return offset;
}

/// True when `v` is a constant or a reshape of one: constants live in the
/// artifact's weights, not in the arena a view points into.
bool isConstant(Value v) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return isa_and_nonnull<arith::ConstantOp>(v.getDefiningOp());
}

struct SliceInPlacePass : public dlc::impl::SliceInPlaceBase<SliceInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<dlc::DispatchOp> dispatches(
        getOperation().getBody().getOps<dlc::DispatchOp>());
    for (dlc::DispatchOp dispatch : dispatches) {
      tensor::ExtractSliceOp slice = soleSlice(dispatch);
      if (!slice)
        continue;
      std::optional<int64_t> offset = contiguousOffset(slice);
      Value source = dispatch.getInputs()[cast<BlockArgument>(slice.getSource())
                                              .getArgNumber()];
      Type elem = slice.getSourceType().getElementType();
      // A graph output (or a reshape of one) needs a buffer of its own; a
      // concat operand has its place inside the concat's buffer already
      // (dlc-concat-in-place).
      bool placed = false;
      SmallVector<Value> uses = {dispatch.getResult(0)};
      while (!uses.empty() && !placed)
        for (Operation *user : uses.pop_back_val().getUsers()) {
          placed |= isa<func::ReturnOp, dlc::ConcatOp>(user);
          if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
            uses.push_back(user->getResult(0));
        }
      if (!offset || !elem.isIntOrFloat() || placed || isConstant(source) ||
          (*offset * dlc::storedElementBytes(elem)) % alignment != 0)
        continue;
      OpBuilder b(dispatch);
      auto view =
          dlc::ViewOp::create(b, dispatch.getLoc(), slice.getResultType(),
                              source, b.getI64IntegerAttr(*offset));
      dispatch.getResult(0).replaceAllUsesWith(view.getResult());
      dispatch.erase();
      ++numSlices;
    }
  }
};

} // namespace
