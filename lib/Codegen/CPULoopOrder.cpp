//===- CPULoopOrder.cpp - the dlc-cpu-loop-order pass ---------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace dlc {
#define GEN_PASS_DEF_CPULOOPORDER
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The new loop order (a list of old loop indices) that puts the loop of the
/// output's last dimension innermost and reductions just outside it, or
/// nothing when the op's order is already right or cannot be improved.
std::optional<SmallVector<unsigned>> loopOrder(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0)
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(out.getResults().back());
  if (!last)
    return std::nullopt;
  unsigned inner = last.getPosition();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[inner] != utils::IteratorType::parallel)
    return std::nullopt;
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != inner && iterators[i] == utils::IteratorType::parallel)
      order.push_back(i);
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::reduction)
      order.push_back(i);
  order.push_back(inner);
  bool identity = true;
  for (auto [i, o] : llvm::enumerate(order))
    identity &= i == o;
  if (identity)
    return std::nullopt;
  return order;
}

/// Floating-point add/mul in kernels may be contracted into FMAs; in bodies
/// of reductions they may also be reassociated.
void setFastMath(linalg::LinalgOp op) {
  bool reduction = op.getNumReductionLoops() > 0;
  arith::FastMathFlags flags = arith::FastMathFlags::contract;
  if (reduction)
    flags = flags | arith::FastMathFlags::reassoc;
  op->walk([&](Operation *inner) {
    if (!isa<arith::AddFOp, arith::MulFOp, arith::SubFOp, arith::MaximumFOp,
             arith::MinimumFOp>(inner))
      return;
    auto fm = cast<arith::ArithFastMathInterface>(inner);
    inner->setAttr(fm.getFastMathAttrName(),
                   arith::FastMathFlagsAttr::get(inner->getContext(), flags));
  });
}

struct CPULoopOrderPass : public dlc::impl::CPULoopOrderBase<CPULoopOrderPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      setFastMath(op);
      std::optional<SmallVector<unsigned>> order = loopOrder(op);
      if (!order)
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          continue; // ops without a region builder keep their order
        generic = *g;
      }
      (void)linalg::interchangeGenericOp(rewriter, generic, *order);
    }
  }
};

} // namespace
