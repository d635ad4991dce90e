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

/// math.roundeven without a rounding instruction: for |x| below 2^p (p the
/// mantissa bits), (|x| + 2^p) - 2^p rounds |x| to an integer, half to even
/// (the default rounding mode), and copysign restores the sign (and -0);
/// |x| >= 2^p, infinities and NaN are already their own rounding. Two
/// additions, no integer conversion (MLIR's expansion goes through i64,
/// which is a library call on 32-bit targets).
struct ExpandRoundEven : public OpRewritePattern<math::RoundEvenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RoundEvenOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto elem = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    if (!elem || !(elem.isF32() || elem.isF64()))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double value) -> Value {
      TypedAttr attr = rewriter.getFloatAttr(elem, value);
      if (auto vec = dyn_cast<VectorType>(type))
        attr = SplatElementsAttr::get(vec, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    Value x = op.getOperand();
    Value big = constant(elem.isF32() ? 0x1p23 : 0x1p52);
    Value magnitude = math::AbsFOp::create(rewriter, loc, x);
    Value rounded = arith::SubFOp::create(
        rewriter, loc, arith::AddFOp::create(rewriter, loc, magnitude, big),
        big);
    Value small = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLT, magnitude, big);
    Value withSign = math::CopySignOp::create(rewriter, loc, rounded, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, withSign, x);
    return success();
  }
};

/// arith.maxnumf / minnumf as comparisons where the target's maxnum is a
/// library call (fmaxf on ARMv7, whose VFP has no vmaxnm): the other
/// operand when one is NaN, else the larger / smaller.
template <typename Op, arith::CmpFPredicate Pick>
struct ExpandNumMinMax : public OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    Value aNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, a, a);
    Value bNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, b, b);
    Value pickA = arith::CmpFOp::create(rewriter, loc, Pick, a, b);
    Value ordered = arith::SelectOp::create(rewriter, loc, pickA, a, b);
    Value notB = arith::SelectOp::create(rewriter, loc, bNaN, a, ordered);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, aNaN, b, notB);
    return success();
  }
};

/// f64 -> f16 where the target has no such conversion (LLVM would call
/// __truncdfhf2, which kernels cannot import): through f32 rounded to odd,
/// then to f16 half to even. f32 keeps 13 bits more than f16, so the
/// rounding to odd (truncate toward zero, set the last bit when inexact)
/// leaves the second rounding the information it needs: the result is the
/// correctly rounded f16, with no double-rounding error. Overflow past
/// f32 stays odd (the largest f32) and becomes f16 infinity; NaN passes.
struct ExpandTruncF64ToF16 : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getIn();
    if (!getElementTypeOrSelf(x.getType()).isF64() ||
        !getElementTypeOrSelf(op.getType()).isF16())
      return failure();
    Location loc = op.getLoc();
    auto like = [&](Type elem) -> Type {
      if (auto shaped = dyn_cast<ShapedType>(x.getType()))
        return shaped.clone(elem);
      return elem;
    };
    Type f32 = like(rewriter.getF32Type()), i32 = like(rewriter.getI32Type());
    auto constant = [&](int64_t v) -> Value {
      TypedAttr attr = rewriter.getI32IntegerAttr(v);
      if (auto vec = dyn_cast<VectorType>(i32))
        attr = SplatElementsAttr::get(vec, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    Value nearest = arith::TruncFOp::create(rewriter, loc, f32, x);
    Value back = arith::ExtFOp::create(rewriter, loc, x.getType(), nearest);
    Value inexact = arith::CmpFOp::create(rewriter, loc,
                                          arith::CmpFPredicate::ONE, back, x);
    Value away =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                              math::AbsFOp::create(rewriter, loc, back),
                              math::AbsFOp::create(rewriter, loc, x));
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, nearest);
    // The magnitude one step toward zero: the bits minus one, either sign.
    Value toward = arith::SelectOp::create(
        rewriter, loc, away,
        arith::SubIOp::create(rewriter, loc, bits, constant(1)), bits);
    Value odd = arith::SelectOp::create(
        rewriter, loc, inexact,
        arith::OrIOp::create(rewriter, loc, toward, constant(1)), bits);
    Value f = arith::BitcastOp::create(rewriter, loc, f32, odd);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), f);
    return success();
  }
};

/// math.fma as a multiplication and an addition, except where the fused
/// rounding is asked for (`dlc.fused`) and the target has it.
struct ExpandFma : public OpRewritePattern<math::FmaOp> {
  ExpandFma(MLIRContext *ctx, bool keepFused)
      : OpRewritePattern(ctx), keepFused(keepFused) {}
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    if (keepFused && op->hasAttr(dlc::kFusedAttr))
      return failure();
    Value product =
        arith::MulFOp::create(rewriter, op.getLoc(), op.getA(), op.getB());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, product, op.getC());
    return success();
  }
  bool keepFused;
};

struct LegalizeMathPass : public dlc::impl::LegalizeMathBase<LegalizeMathPass> {
  using LegalizeMathBase::LegalizeMathBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandRemF, ExpandTrunc, ExpandIPowI>(&getContext());
    patterns.add<ExpandFma>(&getContext(), nativeFma);
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    // math.roundeven stays where the target has the instruction; elsewhere
    // it becomes ExpandRoundEven's two additions (f32, f64) or MLIR's
    // expansion (other types).
    math::populateExpansionPatterns(
        patterns,
        {"ctlz", "sinh", "cosh", "tan", "tanh", "asinh", "acosh", "atanh",
         "ceil", "exp2", "powf", "fpowi", "round", "rsqrt", "clampf"});
    if (!nativeRoundEven) {
      patterns.add<ExpandRoundEven>(&getContext(), /*benefit=*/2);
      math::populateExpansionPatterns(patterns, {"roundeven"});
    }
    if (expandF64ToF16)
      patterns.add<ExpandTruncF64ToF16>(&getContext());
    if (expandNumMinMax)
      patterns
          .add<ExpandNumMinMax<arith::MaxNumFOp, arith::CmpFPredicate::OGT>,
               ExpandNumMinMax<arith::MinNumFOp, arith::CmpFPredicate::OLT>>(
              &getContext());
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
