//===- LegalizeMath.cpp - the dlc-legalize-math pass ----------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dlc {
#define GEN_PASS_DEF_LEGALIZEMATH
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;

namespace {

/// A math op on f16 or bf16 (scalars or vectors) computes in f32 and rounds
/// its result once: MLIR's expansions and approximations are written for
/// f32 (powf's through exp and log took negative bases to NaN in f16:
/// GELU's x^3), and f32 keeps enough bits that the single rounding is as
/// close as a 16-bit evaluation could be.
struct PromoteHalfMath : public RewritePattern {
  explicit PromoteHalfMath(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<math::MathDialect>(op->getDialect()) || op->getNumRegions() != 0)
      return failure();
    auto half = [](Type t) {
      Type e = getElementTypeOrSelf(t);
      return e.isF16() || e.isBF16();
    };
    if (!llvm::any_of(op->getOperandTypes(), half) &&
        !llvm::any_of(op->getResultTypes(), half))
      return failure();
    Location loc = op->getLoc();
    auto wide = [&](Type t) -> Type {
      if (!half(t))
        return t;
      if (auto shaped = dyn_cast<ShapedType>(t))
        return shaped.clone(rewriter.getF32Type());
      return rewriter.getF32Type();
    };
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      // Folded, so that a constant operand stays one (powf by a constant
      // integer is a few multiplications, not exp and log).
      operands.push_back(
          half(v.getType())
              ? rewriter.createOrFold<arith::ExtFOp>(loc, wide(v.getType()), v)
              : v);
    SmallVector<Type> results;
    for (Type t : op->getResultTypes())
      results.push_back(wide(t));
    OperationState state(loc, op->getName(), operands, results, op->getAttrs());
    Operation *wideOp = rewriter.create(state);
    SmallVector<Value> replacements;
    for (auto [old, now] : llvm::zip(op->getResults(), wideOp->getResults()))
      replacements.push_back(half(old.getType())
                                 ? Value(arith::TruncFOp::create(
                                       rewriter, loc, old.getType(), now))
                                 : now);
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

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

/// math.ceil as -floor(-x): exact (signed zeros, infinities and NaN
/// included), with no integer conversion and no copysign, which MLIR's
/// expansion uses (Vulkan has no f64 copysign without 64-bit integers; on
/// 32-bit Arm an f64 <-> i64 conversion is a library call). Where floor is
/// no instruction, ExpandFloor expands it in turn.
struct ExpandCeil : public OpRewritePattern<math::CeilOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CeilOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value negated = arith::NegFOp::create(rewriter, loc, op.getOperand());
    Value down = math::FloorOp::create(rewriter, loc, negated);
    rewriter.replaceOpWithNewOp<arith::NegFOp>(op, down);
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

/// The f32 or f64 element type of a scalar or vector `type` that
/// ExpandFloor and ExpandRoundEven rewrite, and a constant of that type.
FloatType roundingElementType(Type type) {
  auto elem = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return elem && (elem.isF32() || elem.isF64()) ? elem : FloatType();
}

Value floatConstant(PatternRewriter &rewriter, Location loc, Type type,
                    double value) {
  TypedAttr attr =
      rewriter.getFloatAttr(cast<FloatType>(getElementTypeOrSelf(type)), value);
  if (auto vec = dyn_cast<VectorType>(type))
    attr = SplatElementsAttr::get(vec, attr);
  return arith::ConstantOp::create(rewriter, loc, attr);
}

/// math.floor for targets without a rounding instruction, where it would
/// be a call of floorf: r = roundeven(x), minus one where that rounded up.
/// On such targets roundeven is ExpandRoundEven's two additions, so no
/// integer conversion is involved (on 32-bit Arm an f32 <-> i64 conversion
/// is a call too). Large values, infinities, NaN and signed zeros pass:
/// roundeven keeps them and the comparison is false.
struct ExpandFloor : public OpRewritePattern<math::FloorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FloorOp op,
                                PatternRewriter &rewriter) const override {
    if (!roundingElementType(op.getType()))
      return failure();
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value rounded = math::RoundEvenOp::create(rewriter, loc, x);
    Value roundedUp = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, rounded, x);
    Value below = arith::SubFOp::create(
        rewriter, loc, rounded, floatConstant(rewriter, loc, x.getType(), 1.0));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, roundedUp, below, rounded);
    return success();
  }
};

/// f32 sin and cos by reducing the argument to r in [-pi/4, pi/4] with
/// k = round(x * 2/pi) and r = x - k * pi/2 in four steps (Cody and
/// Waite): pi/2 = P1 + P2 + P3 + P4, where P1 to P3 have few enough
/// significant bits that their products with k are exact for |k| < 2^12,
/// i.e. |x| up to about 6400. Then Taylor polynomials of sin r (to r^9) and cos
/// r (to r^10), whose truncation errors on [-pi/4, pi/4] (2e-9, 1e-10) are
/// below f32's precision, chosen and signed by the quadrant k mod 4. MLIR's
/// approximations reduce in one f32 step, whose error grows with |x| (6e-6
/// absolute at |x| = 100, where rotary position embeddings take sines of
/// positions times frequencies), and evaluate their polynomials up to
/// pi/2, where cos has lost its low bits.
template <typename OpT, bool isCos>
struct ExpandSinCos : public OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto vector = dyn_cast<VectorType>(type);
    auto constant = [&](Type t, Attribute scalar) -> Value {
      auto shaped = vector ? VectorType::get(vector.getShape(), t) : nullptr;
      return arith::ConstantOp::create(
          rewriter, loc,
          shaped ? cast<TypedAttr>(DenseElementsAttr::get(shaped, scalar))
                 : cast<TypedAttr>(scalar));
    };
    auto f32 = [&](double v) {
      return constant(rewriter.getF32Type(),
                      rewriter.getF32FloatAttr(static_cast<float>(v)));
    };
    Type i32 = rewriter.getI32Type();
    auto i32c = [&](int32_t v) {
      return constant(i32, rewriter.getI32IntegerAttr(v));
    };
    Type intType = vector ? Type(VectorType::get(vector.getShape(), i32)) : i32;
    auto mul = [&](Value a, Value b) {
      return arith::MulFOp::create(rewriter, loc, a, b).getResult();
    };
    auto add = [&](Value a, Value b) {
      return arith::AddFOp::create(rewriter, loc, a, b).getResult();
    };
    Value x = op.getOperand();
    // k = floor(x * 2/pi + 1/2), clamped so that the conversion is defined
    // (maxnumf/minnumf also turn NaN into a number; r is NaN then anyway).
    Value scaled = add(mul(x, f32(0x1.45f306p-1)), f32(0.5));
    scaled = arith::MaxNumFOp::create(rewriter, loc, scaled, f32(-0x1p30));
    scaled = arith::MinNumFOp::create(rewriter, loc, scaled, f32(0x1p30));
    Value floored = math::FloorOp::create(rewriter, loc, scaled);
    Value k = arith::FPToSIOp::create(rewriter, loc, intType, floored);
    Value r = x;
    for (double part : {0x1.92p+0, 0x1.fb4p-12, 0x1.444p-24, 0x1.68c234p-39})
      r = arith::SubFOp::create(rewriter, loc, r, mul(floored, f32(part)));
    // Horner's rule in r^2 over 1/n! with alternating signs.
    Value r2 = mul(r, r);
    auto series = [&](ArrayRef<double> coefficients) {
      Value acc = f32(coefficients.back());
      for (double c : llvm::reverse(coefficients.drop_back()))
        acc = add(mul(acc, r2), f32(c));
      return acc;
    };
    Value sinR =
        mul(r, series({1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880}));
    Value cosR = series(
        {1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800});
    // sin: s, c, -s, -c and cos: c, -s, -c, s for k mod 4 = 0, 1, 2, 3.
    Value zero = i32c(0);
    auto bit = [&](Value v, int32_t mask) {
      Value masked = arith::AndIOp::create(rewriter, loc, v, i32c(mask));
      return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                   masked, zero)
          .getResult();
    };
    Value odd = bit(k, 1);
    Value base = arith::SelectOp::create(
        rewriter, loc, odd, isCos ? sinR : cosR, isCos ? cosR : sinR);
    Value negate =
        isCos ? bit(arith::AddIOp::create(rewriter, loc, k, i32c(1)), 2)
              : bit(k, 2);
    Value negated = arith::NegFOp::create(rewriter, loc, base);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negate, negated, base);
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
    FloatType elem = roundingElementType(type);
    if (!elem)
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double value) {
      return floatConstant(rewriter, loc, type, value);
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

/// Integer and float helpers of the 16-bit conversions below, in the shape
/// (scalar or vector) of `like`.
struct Bits {
  RewriterBase &rewriter;
  Location loc;
  Type like;

  Type of(Type elem) const {
    if (auto shaped = dyn_cast<ShapedType>(like))
      return shaped.clone(elem);
    return elem;
  }
  Value i32(int64_t v) const {
    TypedAttr attr = rewriter.getI32IntegerAttr(static_cast<int32_t>(v));
    if (auto vec = dyn_cast<VectorType>(of(rewriter.getI32Type())))
      attr = SplatElementsAttr::get(vec, attr);
    return arith::ConstantOp::create(rewriter, loc, attr);
  }
  Value f32(float v) const {
    TypedAttr attr = rewriter.getF32FloatAttr(v);
    if (auto vec = dyn_cast<VectorType>(of(rewriter.getF32Type())))
      attr = SplatElementsAttr::get(vec, attr);
    return arith::ConstantOp::create(rewriter, loc, attr);
  }
  Value band(Value a, int64_t m) const {
    return arith::AndIOp::create(rewriter, loc, a, i32(m));
  }
  Value shl(Value a, int64_t n) const {
    return arith::ShLIOp::create(rewriter, loc, a, i32(n));
  }
  Value shr(Value a, int64_t n) const {
    return arith::ShRUIOp::create(rewriter, loc, a, i32(n));
  }
  Value add(Value a, Value b) const {
    return arith::AddIOp::create(rewriter, loc, a, b);
  }
  Value cmp(arith::CmpIPredicate p, Value a, int64_t b) const {
    return arith::CmpIOp::create(rewriter, loc, p, a, i32(b));
  }
  Value select(Value c, Value a, Value b) const {
    return arith::SelectOp::create(rewriter, loc, c, a, b);
  }
};

/// f16 -> f32 in integer operations where the target has no conversion
/// instruction (x86 without F16C, RISC-V without Zfhmin, ARMv7 without
/// fp16: LLVM would call __extendhfsf2). Exact for every f16: normal
/// numbers move their exponent by 127 - 15 and their mantissa by 13 bits,
/// infinities and NaNs keep an all-ones exponent (a NaN's payload moves
/// with the mantissa), subnormals and zero are their mantissa times 2^-24,
/// which f32 holds exactly. An extension to f64 goes through f32.
/// i64 -> f32 (signed or unsigned) rounded to nearest, ties to even, in
/// 32- and 64-bit integer operations, for targets where LLVM would call a
/// helper (__aeabi_l2f, __floatdisf on 32-bit Arm): the magnitude shifted
/// so that its top bit is bit 63, its top 24 bits the significand (the
/// implicit one included), the 40 below deciding the rounding; the
/// exponent added to the significand's bits, so that a rounding carry
/// moves into it.
template <typename Op> struct ExpandI64ToF32 : public OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getIn();
    if (!getElementTypeOrSelf(x.getType()).isInteger(64) ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    constexpr bool isSigned = std::is_same_v<Op, arith::SIToFPOp>;
    Location loc = op.getLoc();
    Bits b{rewriter, loc, x.getType()};
    Type i64 = b.of(rewriter.getI64Type()), i32 = b.of(rewriter.getI32Type());
    auto c64 = [&](int64_t v) -> Value {
      TypedAttr attr = rewriter.getI64IntegerAttr(v);
      if (auto vec = dyn_cast<VectorType>(i64))
        attr = SplatElementsAttr::get(vec, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    Value magnitude = x, sign;
    if (isSigned) {
      // |x| as an unsigned value (INT64_MIN: 2^63), and the sign bit.
      Value s = arith::ShRSIOp::create(rewriter, loc, x, c64(63));
      magnitude = arith::SubIOp::create(
          rewriter, loc, arith::XOrIOp::create(rewriter, loc, x, s), s);
      sign = b.shl(arith::TruncIOp::create(
                       rewriter, loc, i32,
                       arith::ShRUIOp::create(rewriter, loc, x, c64(63))),
                   31);
    }
    Value lead = math::CountLeadingZerosOp::create(rewriter, loc, magnitude);
    Value zero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                       magnitude, c64(0));
    // For zero the shift is 64 (poison); the select below discards it.
    Value top = arith::ShLIOp::create(
        rewriter, loc, magnitude,
        arith::SelectOp::create(rewriter, loc, zero, c64(0), lead));
    Value significand = arith::ShRUIOp::create(rewriter, loc, top, c64(40));
    Value rest =
        arith::AndIOp::create(rewriter, loc, top, c64((int64_t(1) << 40) - 1));
    Value half = c64(int64_t(1) << 39);
    Value odd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, significand, c64(1)), c64(0));
    Value up = arith::OrIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt, rest,
                              half),
        arith::AndIOp::create(rewriter, loc,
                              arith::CmpIOp::create(rewriter, loc,
                                                    arith::CmpIPredicate::eq,
                                                    rest, half),
                              odd));
    Value rounded = arith::AddIOp::create(
        rewriter, loc, arith::TruncIOp::create(rewriter, loc, i32, significand),
        arith::ExtUIOp::create(rewriter, loc, i32, up));
    // Exponent 63 - lead, biased by 127, less the significand's implicit
    // one (bit 23), which the addition brings back.
    Value exponent = b.shl(arith::SubIOp::create(rewriter, loc, b.i32(63 + 126),
                                                 arith::TruncIOp::create(
                                                     rewriter, loc, i32, lead)),
                           23);
    Value bits = b.add(exponent, rounded);
    bits = b.select(zero, b.i32(0), bits);
    if (sign)
      bits = arith::OrIOp::create(rewriter, loc, bits, sign);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

struct ExpandExtF16 : public OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getIn();
    if (!getElementTypeOrSelf(x.getType()).isF16())
      return failure();
    Bits b{rewriter, op.getLoc(), x.getType()};
    Value h = arith::BitcastOp::create(rewriter, b.loc,
                                       b.of(rewriter.getI16Type()), x);
    Value w =
        arith::ExtUIOp::create(rewriter, b.loc, b.of(rewriter.getI32Type()), h);
    Value sign = b.shl(b.band(w, 0x8000), 16);
    Value magnitude = b.band(w, 0x7fff);
    Value shifted = b.shl(magnitude, 13);
    Value normal = b.add(shifted, b.i32((127 - 15) << 23));
    Value special =
        arith::OrIOp::create(rewriter, b.loc, shifted, b.i32(0x7f800000));
    Value tiny = arith::MulFOp::create(
        rewriter, b.loc,
        arith::UIToFPOp::create(rewriter, b.loc, b.of(rewriter.getF32Type()),
                                magnitude),
        b.f32(0x1p-24f));
    Value tinyBits = arith::BitcastOp::create(
        rewriter, b.loc, b.of(rewriter.getI32Type()), tiny);
    Value bits =
        b.select(b.cmp(arith::CmpIPredicate::uge, magnitude, 0x7c00), special,
                 b.select(b.cmp(arith::CmpIPredicate::ult, magnitude, 0x400),
                          tinyBits, normal));
    bits = arith::OrIOp::create(rewriter, b.loc, bits, sign);
    Value f = arith::BitcastOp::create(rewriter, b.loc,
                                       b.of(rewriter.getF32Type()), bits);
    if (getElementTypeOrSelf(op.getType()).isF32())
      rewriter.replaceOp(op, f);
    else
      rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), f);
    return success();
  }
};

/// f32 -> f16 rounded to nearest, ties to even, in integer operations
/// where the target has no conversion instruction (LLVM would call
/// __truncsfhf2). On the magnitude's bits: a NaN becomes the quiet NaN
/// 0x7e00; from 65520 (65504 and half a step) on, infinity; below 2^-14
/// (f16 subnormals), adding 0.5 in f32 rounds to a multiple of 2^-24 and
/// the sum's low bits are the f16 bits; normal numbers move their exponent
/// by 15 - 127 and drop 13 mantissa bits with the usual round-to-even
/// increment. An f64 source is first rounded to f32 by
/// ExpandTruncF64ToF16's rounding to odd, which ran before.
struct ExpandTruncF16 : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getIn();
    if (!getElementTypeOrSelf(x.getType()).isF32() ||
        !getElementTypeOrSelf(op.getType()).isF16())
      return failure();
    Bits b{rewriter, op.getLoc(), x.getType()};
    Type i32 = b.of(rewriter.getI32Type()), f32 = x.getType();
    Value u = arith::BitcastOp::create(rewriter, b.loc, i32, x);
    Value sign = b.band(b.shr(u, 16), 0x8000);
    Value a = b.band(u, 0x7fffffff);
    Value rebiased =
        arith::SubIOp::create(rewriter, b.loc, a, b.i32((127 - 15) << 23));
    Value odd = b.band(b.shr(rebiased, 13), 1);
    Value normal = b.shr(b.add(b.add(rebiased, b.i32(0xfff)), odd), 13);
    Value half = b.f32(0.5f);
    Value sum = arith::AddFOp::create(
        rewriter, b.loc, arith::BitcastOp::create(rewriter, b.loc, f32, a),
        half);
    Value tiny = arith::SubIOp::create(
        rewriter, b.loc, arith::BitcastOp::create(rewriter, b.loc, i32, sum),
        b.i32(0x3f000000));
    Value bits = b.select(
        b.cmp(arith::CmpIPredicate::ugt, a, 0x7f800000), b.i32(0x7e00),
        b.select(b.cmp(arith::CmpIPredicate::uge, a, 0x477ff000), b.i32(0x7c00),
                 b.select(b.cmp(arith::CmpIPredicate::ult, a, 0x38800000), tiny,
                          normal)));
    bits = arith::OrIOp::create(rewriter, b.loc, bits, sign);
    Value h = arith::TruncIOp::create(rewriter, b.loc,
                                      b.of(rewriter.getI16Type()), bits);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), h);
    return success();
  }
};

/// Rewrites `op`, f32 -> bf16, for a target whose conversion instruction
/// treats subnormal inputs as zero (x86's AVX512-BF16 `vcvtneps2bf16`, whatever
/// MXCSR says): inputs with a zero exponent field take the integer rounding to
/// nearest even on the bits, (u + 0x7fff + (u >> 16 & 1)) >> 16, which is
/// exact for them; the rest keep the instruction (NaN, infinities and
/// normal numbers it rounds correctly). A subnormal bf16 result is what
/// ONNX's reference (ml_dtypes) and the targets without the instruction
/// give.
void exactSubnormalTruncBF16(RewriterBase &rewriter, arith::TruncFOp op) {
  Value x = op.getIn();
  rewriter.setInsertionPoint(op);
  Bits b{rewriter, op.getLoc(), x.getType()};
  Type i32 = b.of(rewriter.getI32Type());
  Value u = arith::BitcastOp::create(rewriter, b.loc, i32, x);
  Value rounded =
      b.shr(b.add(b.add(u, b.i32(0x7fff)), b.band(b.shr(u, 16), 1)), 16);
  Value viaBits = arith::BitcastOp::create(
      rewriter, b.loc, op.getType(),
      arith::TruncIOp::create(rewriter, b.loc, b.of(rewriter.getI16Type()),
                              rounded));
  Value native = arith::TruncFOp::create(rewriter, b.loc, op.getType(), x);
  Value subnormal = b.cmp(arith::CmpIPredicate::eq, b.band(u, 0x7f800000), 0);
  rewriter.replaceOpWithNewOp<arith::SelectOp>(op, subnormal, viaBits, native);
}

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
    Bits b{rewriter, op.getLoc(), x.getType()};
    Location loc = b.loc;
    Type f32 = b.of(rewriter.getF32Type()), i32 = b.of(rewriter.getI32Type());
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
        arith::SubIOp::create(rewriter, loc, bits, b.i32(1)), bits);
    Value odd = arith::SelectOp::create(
        rewriter, loc, inexact,
        arith::OrIOp::create(rewriter, loc, toward, b.i32(1)), bits);
    Value f = arith::BitcastOp::create(rewriter, loc, f32, odd);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), f);
    return success();
  }
};

/// Builders for the f64 expansions below (scalars or vectors of f64).
struct F64Builder {
  PatternRewriter &rw;
  Location loc;
  Type type; ///< f64 or a vector of f64
  Value c(double v) { return floatConstant(rw, loc, type, v); }
  Value add(Value a, Value b) { return arith::AddFOp::create(rw, loc, a, b); }
  Value sub(Value a, Value b) { return arith::SubFOp::create(rw, loc, a, b); }
  Value mul(Value a, Value b) { return arith::MulFOp::create(rw, loc, a, b); }
  Value cmp(arith::CmpFPredicate p, Value a, Value b) {
    return arith::CmpFOp::create(rw, loc, p, a, b);
  }
  Value select(Value c, Value a, Value b) {
    return arith::SelectOp::create(rw, loc, c, a, b);
  }
  /// Horner's scheme: coefficients from the highest power down.
  Value horner(Value x, ArrayRef<double> coefficients) {
    Value p = c(coefficients.front());
    for (double k : coefficients.drop_front())
      p = add(mul(p, x), c(k));
    return p;
  }
  /// 2^k for an integral f64 k with |k| < 1024 whose result is a normal
  /// double, as a product of the powers 2^(+-2^i) its binary digits select:
  /// every step is exact, and no integer (64-bit integers are pairs of
  /// 32-bit ones on some Vulkan devices) is involved.
  Value pow2(Value k) {
    Value negative = cmp(arith::CmpFPredicate::OLT, k, c(0));
    Value t = math::AbsFOp::create(rw, loc, k);
    Value result = c(1);
    for (int i = 9; i >= 0; --i) {
      double q = double(1 << i);
      Value bit = cmp(arith::CmpFPredicate::OGE, t, c(q));
      t = select(bit, sub(t, c(q)), t);
      Value factor = select(negative, c(std::ldexp(1.0, -(1 << i))),
                            c(std::ldexp(1.0, 1 << i)));
      result = mul(result, select(bit, factor, c(1)));
    }
    return result;
  }
};

/// f64 math.exp: e^x = 2^k e^r with k = round(x / ln 2) and r = x - k ln 2
/// (ln 2 in two parts, so that k ln2_hi is exact), |r| <= ln(2) / 2, e^r
/// by its Taylor polynomial of degree 13 (the next term is below 2^-60 of
/// the result), and 2^k applied in two halves so that results down to
/// subnormals and up to the largest double are exact scalings. Overflow
/// gives inf, underflow 0, NaN NaN. Vulkan has no f64 Exp instruction and
/// CPU kernels call no libm, so every target takes this.
struct ExpandExpF64 : public OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF64())
      return failure();
    F64Builder f{rewriter, op.getLoc(), op.getType()};
    Value x = op.getOperand();
    // Clamped so that k stays in range; the ends are fixed up below.
    Value xc = arith::MinimumFOp::create(
        rewriter, f.loc,
        arith::MaximumFOp::create(rewriter, f.loc, x, f.c(-746)), f.c(710));
    // k = floor(x / ln 2 + 1/2): how ties round does not matter, and floor
    // is an instruction where roundeven may be an expansion with copysign.
    Value k = math::FloorOp::create(
        rewriter, f.loc, f.add(f.mul(xc, f.c(1.4426950408889634)), f.c(0.5)));
    // ln 2 = ln2Hi + ln2Lo, ln2Hi with its low 32 bits zero.
    Value r = f.sub(xc, f.mul(k, f.c(0x1.62e42feep-1)));
    r = f.sub(r, f.mul(k, f.c(0x1.a39ef35793c76p-33)));
    SmallVector<double> taylor;
    double factorial = 1;
    for (int n = 1; n <= 13; ++n) {
      factorial *= n;
      taylor.push_back(1.0 / factorial);
    }
    std::reverse(taylor.begin(), taylor.end());
    taylor.push_back(1.0);
    Value p = f.horner(r, taylor);
    // 2^k = 2^k1 * 2^k2, each half within the normal exponents.
    Value k1 = math::FloorOp::create(rewriter, f.loc, f.mul(k, f.c(0.5)));
    Value k2 = f.sub(k, k1);
    Value y = f.mul(f.mul(p, f.pow2(k1)), f.pow2(k2));
    y = f.select(f.cmp(arith::CmpFPredicate::OGT, x, f.c(709.782712893384)),
                 f.c(std::numeric_limits<double>::infinity()), y);
    y = f.select(f.cmp(arith::CmpFPredicate::OLT, x, f.c(-745.2)), f.c(0), y);
    rewriter.replaceOp(op,
                       f.select(f.cmp(arith::CmpFPredicate::UNO, x, x), x, y));
    return success();
  }
};

/// f64 math.log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s)
/// with s = (m - 1) / (m + 1), |s| <= 0.1716, as its series to s^21 (the next
/// term is below 2^-55 of the result), and e ln 2 added in two parts.
/// Negative x gives NaN, 0 -inf, inf inf, NaN NaN.
struct ExpandLogF64 : public OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::LogOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF64())
      return failure();
    F64Builder f{rewriter, op.getLoc(), op.getType()};
    Location loc = f.loc;
    Value x = op.getOperand();
    // x = m 2^e with m in [1, 2), by exact scalings with powers of two
    // (no integer bit manipulation: 64-bit integers are pairs of 32-bit
    // ones on some Vulkan devices): down from above 2, up from below 1
    // (subnormals included).
    Value positive = f.cmp(arith::CmpFPredicate::OGT, x, f.c(0));
    Value finite = f.cmp(arith::CmpFPredicate::OLT, x,
                         f.c(std::numeric_limits<double>::infinity()));
    Value m = f.select(arith::AndIOp::create(rewriter, loc, positive, finite),
                       x, f.c(1));
    Value e = f.c(0);
    for (int i = 9; i >= 0; --i) {
      int p = 1 << i;
      Value above =
          f.cmp(arith::CmpFPredicate::OGE, m, f.c(std::ldexp(1.0, p)));
      m = f.select(above, f.mul(m, f.c(std::ldexp(1.0, -p))), m);
      e = f.select(above, f.add(e, f.c(p)), e);
    }
    for (int i = 10; i >= 0; --i) {
      int p = 1 << i;
      Value below =
          f.cmp(arith::CmpFPredicate::OLT, m, f.c(std::ldexp(1.0, -p)));
      // 2^1024 is no double: scale by 2^512 twice.
      Value scaled = p == 1024 ? f.mul(f.mul(m, f.c(0x1p512)), f.c(0x1p512))
                               : f.mul(m, f.c(std::ldexp(1.0, p)));
      m = f.select(below, scaled, m);
      e = f.select(below, f.sub(e, f.c(p)), e);
    }
    Value belowOne = f.cmp(arith::CmpFPredicate::OLT, m, f.c(1));
    m = f.select(belowOne, f.mul(m, f.c(2)), m);
    e = f.select(belowOne, f.sub(e, f.c(1)), e);
    // m in [1, 2): above sqrt(2), halve it.
    Value high = f.cmp(arith::CmpFPredicate::OGT, m, f.c(M_SQRT2));
    m = f.select(high, f.mul(m, f.c(0.5)), m);
    e = f.select(high, f.add(e, f.c(1)), e);
    Value s = arith::DivFOp::create(rewriter, loc, f.sub(m, f.c(1)),
                                    f.add(m, f.c(1)));
    Value s2 = f.mul(s, s);
    SmallVector<double> series;
    for (int n = 21; n >= 3; n -= 2)
      series.push_back(2.0 / n);
    // log(m) = 2s + s * s2 * (2/3 + s2 * (2/5 + ...)).
    Value tail = f.mul(f.mul(s, s2), f.horner(s2, series));
    Value logm = f.add(f.mul(s, f.c(2)), tail);
    Value y = f.add(f.mul(e, f.c(0x1.62e42feep-1)),
                    f.add(f.mul(e, f.c(0x1.a39ef35793c76p-33)), logm));
    double inf = std::numeric_limits<double>::infinity();
    y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(inf)), x, y);
    y = f.select(f.cmp(arith::CmpFPredicate::OEQ, x, f.c(0)), f.c(-inf), y);
    y = f.select(f.cmp(arith::CmpFPredicate::ULT, x, f.c(0)),
                 f.c(std::numeric_limits<double>::quiet_NaN()), y);
    rewriter.replaceOp(op, y);
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
    patterns.add<ExpandRemF, ExpandTrunc, ExpandIPowI, PromoteHalfMath>(
        &getContext());
    patterns.add<ExpandCeil>(&getContext(), /*benefit=*/2);
    // Ahead of MLIR's sin/cos approximations (see ExpandSinCos).
    patterns
        .add<ExpandSinCos<math::SinOp, false>, ExpandSinCos<math::CosOp, true>>(
            &getContext(),
            /*benefit=*/2);
    patterns.add<ExpandFma>(&getContext(), nativeFma);
    patterns.add<ExpandExpF64, ExpandLogF64>(&getContext(), /*benefit=*/2);
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    // math.roundeven stays where the target has the instruction; elsewhere
    // it becomes ExpandRoundEven's two additions (f32, f64) or MLIR's
    // expansion (other types).
    math::populateExpansionPatterns(patterns,
                                    {"ctlz", "sinh", "cosh", "tan", "tanh",
                                     "asinh", "acosh", "atanh", "exp2", "powf",
                                     "fpowi", "round", "rsqrt", "clampf"});
    if (!nativeRoundEven) {
      patterns.add<ExpandRoundEven>(&getContext(), /*benefit=*/2);
      math::populateExpansionPatterns(patterns, {"roundeven"});
    }
    if (expandFloor)
      patterns.add<ExpandFloor>(&getContext());
    if (expandF64ToF16)
      patterns.add<ExpandTruncF64ToF16>(&getContext());
    if (expandF16Conversions)
      patterns.add<ExpandExtF16, ExpandTruncF16>(&getContext());
    if (expandBF16Conversions)
      arith::populateExpandBFloat16Patterns(patterns);
    if (expandI64ToF32)
      patterns.add<ExpandI64ToF32<arith::SIToFPOp>,
                   ExpandI64ToF32<arith::UIToFPOp>>(&getContext());
    if (expandNumMinMax)
      patterns
          .add<ExpandNumMinMax<arith::MaxNumFOp, arith::CmpFPredicate::OGT>,
               ExpandNumMinMax<arith::MinNumFOp, arith::CmpFPredicate::OLT>>(
              &getContext());
    // f32 tanh as MLIR's rational approximation, which keeps its relative
    // error near 0 (where tanh(x) ~ x), rather than the expansion through
    // exp (1 - e^-2x cancels there: 7e-5 relative error at x = 1e-4); other
    // types take the expansion.
    populateMathPolynomialApproximationPatterns(
        patterns,
        [](StringRef name) { return name == math::TanhOp::getOperationName(); },
        /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Once, after the patterns (a pattern would match its own truncf).
    if (exactBF16Subnormals && !expandBF16Conversions) {
      SmallVector<arith::TruncFOp> truncs;
      getOperation()->walk([&](arith::TruncFOp op) {
        if (getElementTypeOrSelf(op.getIn().getType()).isF32() &&
            getElementTypeOrSelf(op.getType()).isBF16())
          truncs.push_back(op);
      });
      IRRewriter rewriter(&getContext());
      for (arith::TruncFOp op : truncs)
        exactSubnormalTruncBF16(rewriter, op);
    }
  }
};

} // namespace
