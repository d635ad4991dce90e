//===- ConcatInPlace.cpp - the dlc-concat-in-place pass -------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace dlc {
#define GEN_PASS_DEF_CONCATINPLACE
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Bytes a tensor of `type` takes in the arena (booleans one byte each);
/// nullopt for element types the planner does not store this way.
std::optional<int64_t> storedBytes(RankedTensorType type) {
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat() || !type.hasStaticShape())
    return std::nullopt;
  return type.getNumElements() * dlc::storedElementBytes(elem);
}

/// The concat of `dispatch`, when its body is nothing but a concat of its
/// arguments along a dim that only size-1 dims precede.
tensor::ConcatOp soleConcat(dlc::DispatchOp dispatch) {
  Block &body = dispatch.getBodyBlock();
  if (body.getOperations().size() != 2 || dispatch.getNumResults() != 1)
    return nullptr;
  auto concat = dyn_cast<tensor::ConcatOp>(body.front());
  if (!concat || dispatch.getYield().getValues()[0] != concat.getResult())
    return nullptr;
  auto type = concat.getResultType();
  if (!type.hasStaticShape())
    return nullptr;
  for (int64_t d = 0; d < static_cast<int64_t>(concat.getDim()); ++d)
    if (type.getDimSize(d) != 1)
      return nullptr;
  for (Value in : concat.getInputs())
    if (!isa<BlockArgument>(in))
      return nullptr;
  return concat;
}

struct ConcatInPlacePass
    : public dlc::impl::ConcatInPlaceBase<ConcatInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Values that already have a place inside some concat's buffer.
    llvm::DenseSet<Value> placed;
    SmallVector<dlc::DispatchOp> dispatches(
        func.getBody().getOps<dlc::DispatchOp>());
    for (dlc::DispatchOp dispatch : dispatches) {
      tensor::ConcatOp concat = soleConcat(dispatch);
      if (!concat)
        continue;
      SmallVector<Value> operands;
      for (Value in : concat.getInputs())
        operands.push_back(
            dispatch.getInputs()[cast<BlockArgument>(in).getArgNumber()]);
      llvm::DenseSet<Value> seen;
      int64_t offset = 0;
      bool ok = true;
      for (Value v : operands) {
        auto type = cast<RankedTensorType>(v.getType());
        std::optional<int64_t> bytes = storedBytes(type);
        bool computed = v.getDefiningOp<dlc::DispatchOp>() ||
                        v.getDefiningOp<dlc::ConcatOp>();
        bool returned = llvm::any_of(v.getUsers(), [](Operation *user) {
          return isa<func::ReturnOp>(user);
        });
        if (!bytes || !computed || returned || placed.contains(v) ||
            !seen.insert(v).second || offset % alignment != 0) {
          ok = false;
          break;
        }
        offset += *bytes;
      }
      if (!ok)
        continue;
      placed.insert(operands.begin(), operands.end());
      OpBuilder b(dispatch);
      auto inPlace =
          dlc::ConcatOp::create(b, dispatch.getLoc(), concat.getResultType(),
                                b.getI64IntegerAttr(concat.getDim()), operands);
      dispatch.getResult(0).replaceAllUsesWith(inPlace.getResult());
      dispatch.erase();
      ++numConcats;
    }
  }
};

} // namespace
