//===- LegalizeMath.cpp - the dlc-legalize-math pass ----------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// Integer powers by squaring, one loop step per exponent bit, without
/// branches (GPU targets have no library to call). Negative exponents give
/// 1/b^|e| truncated: 1 for b = 1, +-1 for b = -1, 0 otherwise.
struct ExpandIPowI : public OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<IntegerType>(op.getType());
    if (!type)
      return failure(); // vectors: not produced by dlc
    Location loc = op.getLoc();
    Value base = op.getLhs(), exp = op.getRhs();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, type, v);
    };
    Value one = c(1), zero = c(0), minusOne = c(-1);
    Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, type.getWidth());
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lb, ub, step, ValueRange{one, base, exp},
        [&](OpBuilder &b, Location l, Value, ValueRange args) {
          Value bit = arith::AndIOp::create(
              b, l, args[2], arith::ConstantIntOp::create(b, l, type, 1));
          Value odd =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, bit, zero);
          Value times = arith::MulIOp::create(b, l, args[0], args[1]);
          Value result = arith::SelectOp::create(b, l, odd, times, args[0]);
          Value square = arith::MulIOp::create(b, l, args[1], args[1]);
          Value rest = arith::ShRUIOp::create(
              b, l, args[2], arith::ConstantIntOp::create(b, l, type, 1));
          scf::YieldOp::create(b, l, ValueRange{result, square, rest});
        });
    Value positive = loop.getResult(0);
    // e < 0: b = 1 -> 1; b = -1 -> -1 when e is odd, else 1; otherwise 0.
    Value negative = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, exp, zero);
    Value isOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        base, one);
    Value isMinusOne = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, base, minusOne);
    Value oddExp = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, exp, one), zero);
    Value signOne =
        arith::SelectOp::create(rewriter, loc, oddExp, minusOne, one);
    Value inverse = arith::SelectOp::create(
        rewriter, loc, isOne, one,
        arith::SelectOp::create(rewriter, loc, isMinusOne, signOne, zero));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, inverse,
                                                 positive);
    return success();
  }
};

struct LegalizeMathPass : public dlc::impl::LegalizeMathBase<LegalizeMathPass> {
  using LegalizeMathBase::LegalizeMathBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandRemF, ExpandTrunc, ExpandIPowI>(&getContext());
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    if (nativeRoundEven)
      math::populateExpansionPatterns(
          patterns,
          {"ctlz", "sinh", "cosh", "tan", "tanh", "asinh", "acosh", "atanh",
           "fma", "ceil", "exp2", "powf", "fpowi", "round", "rsqrt", "clampf"});
    else
      math::populateExpansionPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
