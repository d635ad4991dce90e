//===- EpilogueThroughReshape.cpp - the dlc-epilogue-through-reshape pass -===//
//
// A MatMul on [batch, tokens, features] is lowered as a 2-D contraction
// between a collapse and an expand of its operands, and its bias Add (and
// what follows it elementwise: GELU, a residual) then reads the expanded
// result. Dispatch formation fuses an elementwise consumer into its
// producer's kernel only when it reads the producer's result directly, so
// the bias became a kernel of its own that reads and writes the whole
// activation once more. This pass collapses such elementwise consumers to
// the contraction's shape instead (upstream's fold of a reshape producer
// by collapsing the consumer's loops) and expands their result, so that
// they read the contraction's result as it is.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dlc {
#define GEN_PASS_DEF_EPILOGUETHROUGHRESHAPE
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

bool isElementwise(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumReductionLoops() == 0 &&
         generic.hasPureTensorSemantics();
}

/// Whether `v` is a contraction's result (a linalg op with a reduction
/// loop), or an elementwise op's of one (a few ops back): what dispatch
/// formation would fuse as that contraction's epilogue.
bool fromContraction(Value v, int depth = 4) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op)
    return false;
  if (op.getNumReductionLoops() > 0)
    return true;
  if (depth == 0 || !isElementwise(op))
    return false;
  return llvm::any_of(op.getDpsInputs(),
                      [&](Value in) { return fromContraction(in, depth - 1); });
}

/// Whether `operand` of an elementwise generic is the expanded result of a
/// contraction (or of its elementwise epilogue so far), and only
/// elementwise ops read that expanded result: a reduction reading it (a
/// softmax's) keeps the shape it has, and so do its other readers.
bool expandsContraction(OpOperand *operand) {
  if (!isElementwise(operand->getOwner()))
    return false;
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !fromContraction(expand.getSrc()))
    return false;
  return llvm::all_of(expand->getUsers(), isElementwise);
}

/// An expand_shape of a contraction's result that puts a unit dim in the
/// group of the dim after it ([1, 256] -> [1, 1, 256] as [[0], [1, 2]]: a
/// one-token step) regrouped with the dim before it ([[0, 1], [2]]), the
/// same reshape, so that the features stay a group of their own, which a
/// bias indexes whole: the fold above declines a group it indexes in part.
struct RegroupUnitDims : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getResultType();
    if (!type.hasStaticShape() || !fromContraction(op.getSrc()))
      return failure();
    SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
    bool changed = false;
    for (size_t g = 1; g < groups.size(); ++g)
      while (groups[g].size() > 1 && type.getDimSize(groups[g].front()) == 1) {
        groups[g - 1].push_back(groups[g].front());
        groups[g].erase(groups[g].begin());
        changed = true;
      }
    if (!changed)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, op.getSrc(),
                                                       groups);
    return success();
  }
};

struct EpilogueThroughReshapePass
    : public dlc::impl::EpilogueThroughReshapeBase<EpilogueThroughReshapePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RegroupUnitDims>(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns,
                                                       expandsContraction);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
