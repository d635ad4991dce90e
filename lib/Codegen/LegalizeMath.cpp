//===- LegalizeMath.cpp - the dlc-legalize-math pass ----------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dlc {
#define GEN_PASS_DEF_LEGALIZEMATH
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// arith.remf is a libm call (fmodf) on most targets: x - trunc(x/y) * y.
struct ExpandRemF : public OpRewritePattern<arith::RemFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::RemFOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = arith::DivFOp::create(rewriter, loc, op.getLhs(), op.getRhs());
    Value t = math::TruncOp::create(rewriter, loc, q);
    Value p = arith::MulFOp::create(rewriter, loc, t, op.getRhs());
    rewriter.replaceOpWithNewOp<arith::SubFOp>(op, op.getLhs(), p);
    return success();
  }
};

/// math.trunc has no SPIR-V (GLSL) counterpart: floor for x >= 0, ceil
/// below, which every target has.
struct ExpandTrunc : public OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(x.getType()));
    Value negative = arith::CmpFOp::create(rewriter, loc,
                                           arith::CmpFPredicate::OLT, x, zero);
    Value up = math::CeilOp::create(rewriter, loc, x);
    Value down = math::FloorOp::create(rewriter, loc, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, up, down);
    return success();
  }
};

struct LegalizeMathPass : public dlc::impl::LegalizeMathBase<LegalizeMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandRemF, ExpandTrunc>(&getContext());
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    math::populateExpansionPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
