//===- Utils.cpp - building blocks shared by the ONNX handlers ------------===//

#include "Utils.h"

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc;

int64_t dlc::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

FailureOr<SmallVector<int64_t>>
dlc::broadcastShapes(ArrayRef<SmallVector<int64_t>> shapes,
                     std::string &error) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (const auto &s : shapes) {
    size_t offset = rank - s.size();
    for (auto [i, d] : llvm::enumerate(s)) {
      int64_t &o = out[offset + i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      error = "shapes cannot be broadcast together (dim " +
              std::to_string(offset + i) + ": " + std::to_string(o) + " vs " +
              std::to_string(d) + ")";
      return failure();
    }
  }
  // Each operand is within the importer's bound; their broadcast may not be
  // ([2^32, 1] and [1, 2^32] overflowed the element count).
  if (onnx::boundedElementCount(out) < 0) {
    error = "the broadcast shape has more than 2^48 elements";
    return failure();
  }
  return out;
}

Value dlc::createEmpty(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

TypedAttr dlc::scalarAttr(Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(f, value);
  auto i = cast<IntegerType>(type);
  if (i.getWidth() == 1)
    return IntegerAttr::get(i, value != 0.0);
  return IntegerAttr::get(i, static_cast<int64_t>(std::llround(value)));
}

Value dlc::scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, scalarAttr(type, value));
}

Value dlc::createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elementType, TypedAttr value) {
  Value init = createEmpty(b, loc, shape, elementType);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, init).getResult(0);
}

TypedAttr dlc::lowestValueAttr(Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(
        f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true));
  unsigned w = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, isUnsigned ? APInt::getMinValue(w)
                                           : APInt::getSignedMinValue(w));
}

TypedAttr dlc::highestValueAttr(Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return FloatAttr::get(
        f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/false));
  unsigned w = type.getIntOrFloatBitWidth();
  return IntegerAttr::get(type, isUnsigned ? APInt::getMaxValue(w)
                                           : APInt::getSignedMaxValue(w));
}

bool dlc::isFloatHeldAsBits(Type type) {
  return isa_and_present<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                         Float8E5M2FNUZType, Float4E2M1FNType,
                         Float8E8M0FNUType>(type);
}

Type dlc::signlessType(Type type) {
  if (auto i = dyn_cast<IntegerType>(type))
    return IntegerType::get(type.getContext(), i.getWidth());
  if (isFloatHeldAsBits(type))
    return IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth());
  return type;
}

namespace {

/// The bit layout of an 8- or 4-bit float, read from LLVM's description of
/// it: sign in the top bit, then exponent, then `mantissa` bits.
struct SmallFloatLayout {
  unsigned bits, mantissa;
  int bias;
  uint32_t largest; // the largest finite magnitude's bits
  std::optional<uint32_t> inf, nan;
  /// NaN is the bit pattern of -0 (the FNUZ formats): no negative zero.
  bool nanIsNegativeZero = false;

  explicit SmallFloatLayout(FloatType t) {
    const llvm::fltSemantics &s = t.getFloatSemantics();
    bits = t.getWidth();
    mantissa = llvm::APFloat::semanticsPrecision(s) - 1;
    bias = 1 - llvm::APFloat::semanticsMinExponent(s);
    largest = llvm::APFloat::getLargest(s).bitcastToAPInt().getZExtValue();
    if (llvm::APFloat::semanticsHasInf(s))
      inf = llvm::APFloat::getInf(s).bitcastToAPInt().getZExtValue();
    if (llvm::APFloat::semanticsHasNaN(s)) {
      nan = llvm::APFloat::getNaN(s).bitcastToAPInt().getZExtValue();
      nanIsNegativeZero = *nan == 1u << (bits - 1);
    }
  }
};

/// i32 arithmetic for the conversions below, folded when operands are
/// constants (Cast of a constant folds to a constant).
struct Bits32 {
  OpBuilder &b;
  Location loc;
  Type i32 = b.getI32Type();
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); }
  Value andI(Value x, int64_t m) {
    return b.createOrFold<arith::AndIOp>(loc, x, c(m));
  }
  Value shl(Value x, Value n) {
    return b.createOrFold<arith::ShLIOp>(loc, x, n);
  }
  Value shl(Value x, int64_t n) { return shl(x, c(n)); }
  Value shr(Value x, Value n) {
    return b.createOrFold<arith::ShRUIOp>(loc, x, n);
  }
  Value shr(Value x, int64_t n) { return shr(x, c(n)); }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value add(Value x, int64_t y) { return add(x, c(y)); }
  Value sub(Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  }
  Value orI(Value x, Value y) {
    return b.createOrFold<arith::OrIOp>(loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, p, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t y) {
    return cmp(p, x, c(y));
  }
  Value select(Value cond, Value x, Value y) {
    return b.createOrFold<arith::SelectOp>(loc, cond, x, y);
  }
  Value select(Value cond, int64_t x, Value y) { return select(cond, c(x), y); }
};

} // namespace

/// FLOAT8E8M0 (exponent bits only, no sign): 2^(code - 127), 0xff NaN.
/// Code 0 is 2^-127, an f32 subnormal.
Value decodeE8M0(OpBuilder &b, Location loc, Value bits) {
  using P = arith::CmpIPredicate;
  Bits32 i{b, loc};
  Value x = b.createOrFold<arith::ExtUIOp>(loc, i.i32, bits);
  Value r = i.select(i.cmp(P::eq, x, 0), 0x00400000, i.shl(x, 23));
  r = i.select(i.cmp(P::eq, x, 0xff), 0x7fc00000, r);
  return b.createOrFold<arith::BitcastOp>(loc, b.getF32Type(), r);
}

/// f32 -> FLOAT8E8M0 as ONNX's Cast defines it: the exponent of |v| (its
/// sign dropped), rounded up when any fraction bit is set ("up"), when the
/// fraction is at least one half ("nearest"; f32 subnormals: above one
/// half), or not at all ("down"); a rounding past the largest code stays
/// there with `saturate` and is NaN without. NaN and infinity give NaN.
Value encodeE8M0(OpBuilder &b, Location loc, Value v, bool saturate,
                 E8M0Rounding rounding) {
  using P = arith::CmpIPredicate;
  Bits32 i{b, loc};
  Value x = b.createOrFold<arith::BitcastOp>(loc, i.i32, v);
  Value exponent = i.andI(i.shr(x, 23), 0xff);
  Value special = i.cmp(P::eq, exponent, 0xff);
  Value up = i.cmp(P::ne, i.c(0), i.c(0));
  if (rounding == E8M0Rounding::Up) {
    up = i.cmp(P::ne, i.andI(x, 0x7fffff), 0);
  } else if (rounding == E8M0Rounding::Nearest) {
    Value guard = i.cmp(P::ne, i.andI(x, 0x400000), 0);
    Value rest = i.cmp(P::ne, i.andI(x, 0x3fffff), 0);
    Value normal = i.cmp(P::ne, exponent, 0);
    up = b.createOrFold<arith::AndIOp>(
        loc, guard, b.createOrFold<arith::OrIOp>(loc, rest, normal));
  }
  if (saturate)
    up = b.createOrFold<arith::AndIOp>(loc, up, i.cmp(P::ne, exponent, 0xfe));
  Value code = i.add(exponent, b.createOrFold<arith::ExtUIOp>(loc, i.i32, up));
  code = i.select(special, 0xff, code);
  return b.createOrFold<arith::TruncIOp>(loc, b.getIntegerType(8), code);
}

Value dlc::decodeFloatBits(OpBuilder &b, Location loc, Value bits,
                           FloatType from) {
  using P = arith::CmpIPredicate;
  if (isa<Float8E8M0FNUType>(from))
    return decodeE8M0(b, loc, bits);
  SmallFloatLayout f(from);
  Bits32 i{b, loc};
  unsigned m = f.mantissa;
  Value x = b.createOrFold<arith::ExtUIOp>(loc, i.i32, bits);
  Value magnitude = i.andI(x, (1 << (f.bits - 1)) - 1);
  Value exponent = i.shr(magnitude, m);
  Value fraction = i.andI(magnitude, (1 << m) - 1);
  // Normal: rebias the exponent and move the fraction to f32's place.
  Value normal =
      i.orI(i.shl(i.add(exponent, 127 - f.bias), 23), i.shl(fraction, 23 - m));
  // Subnormal: fraction * 2^(1 - bias - m), exact in f32.
  Value scaled = b.createOrFold<arith::MulFOp>(
      loc, b.createOrFold<arith::UIToFPOp>(loc, b.getF32Type(), fraction),
      arith::ConstantFloatOp::create(
          b, loc, b.getF32Type(),
          llvm::APFloat(std::ldexp(1.0f, 1 - f.bias - int(m)))));
  Value subnormal = b.createOrFold<arith::BitcastOp>(loc, i.i32, scaled);
  Value r = i.select(i.cmp(P::eq, exponent, 0), subnormal, normal);
  r = i.orI(r, i.shl(i.shr(x, f.bits - 1), 31));
  if (f.inf)
    r = i.select(i.cmp(P::eq, magnitude, *f.inf),
                 i.orI(i.c(0x7f800000), i.shl(i.shr(x, f.bits - 1), 31)), r);
  if (f.nan) {
    // With infinities every pattern above them is a NaN; without, the NaN
    // pattern (either sign, or -0's pattern in the FNUZ formats) is.
    Value isNaN = f.inf                 ? i.cmp(P::ugt, magnitude, *f.inf)
                  : f.nanIsNegativeZero ? i.cmp(P::eq, x, *f.nan)
                                        : i.cmp(P::eq, magnitude, *f.nan);
    r = i.select(isNaN, 0x7fc00000, r);
  }
  return b.createOrFold<arith::BitcastOp>(loc, b.getF32Type(), r);
}

Value dlc::encodeFloatBits(OpBuilder &b, Location loc, Value v, FloatType to,
                           bool saturate) {
  using P = arith::CmpIPredicate;
  if (isa<Float8E8M0FNUType>(to))
    return encodeE8M0(b, loc, v, saturate, E8M0Rounding::Up);
  SmallFloatLayout f(to);
  Bits32 i{b, loc};
  unsigned m = f.mantissa;
  Value x = b.createOrFold<arith::BitcastOp>(loc, i.i32, v);
  Value sign = i.shr(x, 31);
  Value abs = i.andI(x, 0x7fffffff);
  Value isNaN = i.cmp(P::ugt, abs, 0x7f800000);
  Value exponent = i.shr(abs, 23);
  Value fraction = i.andI(abs, 0x7fffff);
  // The significand with its leading one (f32 subnormals have none and
  // scale as exponent 1), and the exponent biased for the target.
  Value isSub = i.cmp(P::eq, exponent, 0);
  Value significand = i.select(isSub, fraction, i.orI(fraction, i.c(1 << 23)));
  Value target = i.add(i.select(isSub, 1, exponent), f.bias - 127);
  // Below the target's normal range the significand shifts further right.
  Value below =
      b.createOrFold<arith::MaxSIOp>(loc, i.sub(i.c(1), target), i.c(0));
  Value shift = b.createOrFold<arith::MinSIOp>(
      loc, i.add(below, 23 - int64_t(m)), i.c(31));
  // Round to nearest, ties to even.
  Value q = i.shr(significand, shift);
  Value rem = i.sub(significand, i.shl(q, shift));
  Value half = i.shl(i.c(1), i.sub(shift, i.c(1)));
  Value odd = i.cmp(P::ne, i.andI(q, 1), 0);
  Value up = b.createOrFold<arith::OrIOp>(
      loc, i.cmp(P::ugt, rem, half),
      b.createOrFold<arith::AndIOp>(loc, i.cmp(P::eq, rem, half), odd));
  q = i.add(q, b.createOrFold<arith::ExtUIOp>(loc, i.i32, up));
  // q holds the leading one for normal results, so adding it to the
  // exponent field minus one also carries a rounding overflow into it.
  Value code = i.add(
      i.shl(b.createOrFold<arith::MaxSIOp>(loc, i.sub(target, i.c(1)), i.c(0)),
            m),
      q);
  // Beyond the largest finite value: the largest (saturate, and formats
  // with neither infinity nor NaN), else infinity, else NaN.
  int64_t overflow = saturate || (!f.inf && !f.nan) ? f.largest
                     : f.inf                        ? *f.inf
                                                    : *f.nan;
  Value magnitude = i.select(i.cmp(P::ugt, code, f.largest), overflow, code);
  Value signBit = i.shl(sign, f.bits - 1);
  Value r = i.orI(magnitude, signBit);
  if (f.nanIsNegativeZero)
    r = i.select(i.cmp(P::eq, magnitude, 0), 0, r);
  if (f.nan)
    r = i.select(isNaN, i.orI(i.c(*f.nan), signBit), r);
  else
    // No NaN to hold one: zero with the sign flipped, as ml_dtypes (the
    // ONNX reference's conversions) writes it.
    r = i.select(isNaN, i.shl(i.sub(i.c(1), sign), f.bits - 1), r);
  return b.createOrFold<arith::TruncIOp>(loc, b.getIntegerType(f.bits), r);
}

Value dlc::castScalar(OpBuilder &b, Location loc, Value v, Type from, Type to,
                      bool saturate, E8M0Rounding rounding) {
  Type dst = signlessType(to);
  if (from == to)
    return v;
  if (isFloatHeldAsBits(from))
    return castScalar(b, loc, decodeFloatBits(b, loc, v, cast<FloatType>(from)),
                      b.getF32Type(), to, saturate, rounding);
  if (isa<Float8E8M0FNUType>(to))
    return encodeE8M0(b, loc, castScalar(b, loc, v, from, b.getF32Type()),
                      saturate, rounding);
  if (isFloatHeldAsBits(to))
    return encodeFloatBits(b, loc, castScalar(b, loc, v, from, b.getF32Type()),
                           cast<FloatType>(to), saturate);
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && toFloat) {
    unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    if (fw == tw) // f16 <-> bf16 go through f32
      return b.createOrFold<arith::TruncFOp>(
          loc, dst, b.createOrFold<arith::ExtFOp>(loc, b.getF32Type(), v));
    if (fw < tw)
      return b.createOrFold<arith::ExtFOp>(loc, dst, v);
    return b.createOrFold<arith::TruncFOp>(loc, dst, v);
  }
  if (fromFloat) {
    if (to.isInteger(1)) {
      Value zero = arith::ConstantOp::create(b, loc, scalarAttr(from, 0.0));
      return b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v,
                                           zero);
    }
    if (to.getIntOrFloatBitWidth() == 4) {
      // 4-bit targets round half to even and wrap modulo 16, as ONNX's
      // reference (ml_dtypes) does.
      v = b.createOrFold<math::RoundEvenOp>(loc, v);
      Value wide = b.createOrFold<arith::FPToSIOp>(loc, b.getI32Type(), v);
      return b.createOrFold<arith::TruncIOp>(loc, dst, wide);
    }
    if (to.isUnsignedInteger())
      return b.createOrFold<arith::FPToUIOp>(loc, dst, v);
    return b.createOrFold<arith::FPToSIOp>(loc, dst, v);
  }
  if (toFloat) {
    if (from.isUnsignedInteger() || from.isInteger(1))
      return b.createOrFold<arith::UIToFPOp>(loc, dst, v);
    return b.createOrFold<arith::SIToFPOp>(loc, dst, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (tw == 1 && fw != 1) {
    Value zero = arith::ConstantOp::create(b, loc, scalarAttr(v.getType(), 0));
    return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                         zero);
  }
  if (fw == tw)
    return v;
  if (fw > tw)
    return b.createOrFold<arith::TruncIOp>(loc, dst, v);
  if (from.isUnsignedInteger() || fw == 1)
    return b.createOrFold<arith::ExtUIOp>(loc, dst, v);
  return b.createOrFold<arith::ExtSIOp>(loc, dst, v);
}

LogicalResult dlc::requireFloatInput(NodeRewriter &rw, unsigned i,
                                     StringRef name) {
  if (failed(rw.requireInput(i, name)))
    return failure();
  if (isa<FloatType>(rw.inputType(i).getElementType()))
    return success();
  return rw.unsupported(name + " has element type " +
                        llvm::formatv("{0}", rw.onnxElementType(i)).str() +
                        "; this operator is implemented for floats");
}

DenseElementsAttr dlc::getDenseConstant(Value v) {
  DenseElementsAttr attr;
  if (v && matchPattern(v, m_Constant(&attr)))
    return attr;
  return {};
}

DenseElementsAttr dlc::getConstantTable(Value v) {
  DenseElementsAttr attr = getDenseConstant(v);
  return attr && attr.getNumElements() <= kMaxConstantTable
             ? attr
             : DenseElementsAttr();
}

DenseElementsAttr dlc::getParameterConstant(Value v) {
  if (DenseElementsAttr attr = getDenseConstant(v))
    return attr;
  constexpr int64_t kMaxBytes = 1 << 20;
  ElementsAttr elements;
  if (!v || !matchPattern(v, m_Constant(&elements)))
    return {};
  auto resource = dyn_cast<DenseResourceElementsAttr>(elements);
  if (!resource || resource.getElementType().isInteger(1))
    return {};
  ArrayRef<char> data = resource.getData();
  if (data.empty() || static_cast<int64_t>(data.size()) > kMaxBytes)
    return {};
  auto type = cast<ShapedType>(resource.getType());
  int64_t bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0 ||
      static_cast<int64_t>(data.size()) != type.getNumElements() * (bits / 8))
    return {};
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

Value dlc::createConstant(OpBuilder &b, Location loc, DenseElementsAttr value) {
  return arith::ConstantOp::create(b, loc, value);
}

SmallVector<int64_t> dlc::toInt64Vector(DenseElementsAttr attr) {
  SmallVector<int64_t> out;
  Type t = attr.getElementType();
  if (isa<FloatType>(t)) {
    for (APFloat f : attr.getValues<APFloat>())
      out.push_back(static_cast<int64_t>(f.convertToDouble()));
    return out;
  }
  bool isUnsigned = t.isUnsignedInteger() || t.isInteger(1);
  for (APInt i : attr.getValues<APInt>())
    out.push_back(isUnsigned ? static_cast<int64_t>(i.getZExtValue())
                             : i.getSExtValue());
  return out;
}

int64_t dlc::firstInt64(DenseElementsAttr attr) {
  Type t = attr.getElementType();
  if (isa<FloatType>(t))
    return static_cast<int64_t>(
        (*attr.getValues<APFloat>().begin()).convertToDouble());
  APInt i = *attr.getValues<APInt>().begin();
  return t.isUnsignedInteger() || t.isInteger(1)
             ? static_cast<int64_t>(i.getZExtValue())
             : i.getSExtValue();
}

double dlc::firstDouble(DenseElementsAttr attr) {
  if (!isa<FloatType>(attr.getElementType()))
    return static_cast<double>(firstInt64(attr));
  APFloat f = *attr.getValues<APFloat>().begin();
  bool lost;
  f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

SmallVector<double> dlc::toDoubleVector(DenseElementsAttr attr) {
  SmallVector<double> out;
  Type t = attr.getElementType();
  if (isa<FloatType>(t)) {
    for (APFloat f : attr.getValues<APFloat>()) {
      bool lost;
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(f.convertToDouble());
    }
    return out;
  }
  for (int64_t i : toInt64Vector(attr))
    out.push_back(static_cast<double>(i));
  return out;
}

/// Evaluates a scalar body on constant arguments by building it in a
/// scratch block and folding op by op. Returns null if some op does not fold.
static Attribute evaluateScalarBody(MLIRContext *ctx, Location loc,
                                    ArrayRef<Attribute> args,
                                    ArrayRef<Type> argTypes,
                                    ScalarBodyFn body) {
  Block scratch;
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(&scratch);
  SmallVector<Value> argValues;
  for (auto [attr, type] : llvm::zip(args, argTypes))
    argValues.push_back(
        arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(attr)));
  Value result = body(b, loc, argValues);
  DenseMap<Value, Attribute> known;
  for (Operation &op : scratch) {
    SmallVector<Attribute> operands;
    for (Value v : op.getOperands())
      operands.push_back(known.lookup(v));
    SmallVector<OpFoldResult> folded;
    if (failed(op.fold(operands, folded)) || folded.empty())
      return {};
    for (auto [res, f] : llvm::zip(op.getResults(), folded)) {
      Attribute a = dyn_cast<Attribute>(f);
      if (!a)
        a = known.lookup(cast<Value>(f));
      if (!a)
        return {};
      known[res] = a;
    }
  }
  return known.lookup(result);
}

Value dlc::buildBroadcastGeneric(OpBuilder &b, Location loc,
                                 ValueRange operands,
                                 ArrayRef<int64_t> outShape, Type resultType,
                                 ScalarBodyFn body) {
  int64_t rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t offset = rank - type.getRank();
    SmallVector<AffineExpr> exprs;
    for (auto [i, d] : llvm::enumerate(type.getShape())) {
      if (d == 1 && outShape[offset + i] != 1)
        exprs.push_back(b.getAffineConstantExpr(0));
      else
        exprs.push_back(b.getAffineDimExpr(offset + i));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = createEmpty(b, loc, outShape, resultType);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), operands, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// Largest tensor folded at compile time by buildElementwise.
static constexpr int64_t kFoldElementLimit = 4096;

FailureOr<Value> dlc::buildElementwise(NodeRewriter &rw, ValueRange operands,
                                       Type resultType, ScalarBodyFn body) {
  SmallVector<SmallVector<int64_t>> shapes;
  for (Value v : operands)
    shapes.push_back(
        llvm::to_vector(cast<RankedTensorType>(v.getType()).getShape()));
  std::string error;
  FailureOr<SmallVector<int64_t>> outShape = broadcastShapes(shapes, error);
  if (failed(outShape))
    return rw.fail(error);

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  SmallVector<DenseElementsAttr> constants;
  for (Value v : operands)
    if (DenseElementsAttr c = getDenseConstant(v))
      constants.push_back(c);
  int64_t total = numElements(*outShape);
  if (constants.size() == operands.size() && total <= kFoldElementLimit) {
    SmallVector<Attribute> out;
    SmallVector<Type> argTypes;
    for (DenseElementsAttr c : constants)
      argTypes.push_back(c.getElementType());
    int64_t rank = outShape->size();
    SmallVector<int64_t> index(rank, 0);
    bool ok = true;
    for (int64_t linear = 0; linear < total && ok; ++linear) {
      int64_t rem = linear;
      for (int64_t d = rank - 1; d >= 0; --d) {
        index[d] = rem % (*outShape)[d];
        rem /= (*outShape)[d];
      }
      SmallVector<Attribute> args;
      for (auto [c, shape] : llvm::zip(constants, shapes)) {
        int64_t offset = rank - shape.size(), flat = 0;
        for (auto [i, d] : llvm::enumerate(shape))
          flat = flat * d + (d == 1 ? 0 : index[offset + i]);
        args.push_back(c.isSplat() ? c.getSplatValue<Attribute>()
                                   : c.getValues<Attribute>()[flat]);
      }
      Attribute r = evaluateScalarBody(rw.ctx(), loc, args, argTypes, body);
      if (!r || !isa<TypedAttr>(r) ||
          cast<TypedAttr>(r).getType() != resultType)
        ok = false;
      else
        out.push_back(r);
    }
    if (ok)
      return createConstant(
          b, loc,
          DenseElementsAttr::get(RankedTensorType::get(*outShape, resultType),
                                 out));
  }
  return buildBroadcastGeneric(b, loc, operands, *outShape, resultType, body);
}

Value dlc::reshapeTo(OpBuilder &b, Location loc, Value v,
                     ArrayRef<int64_t> shape) {
  auto srcType = cast<RankedTensorType>(v.getType());
  auto dstType = RankedTensorType::get(shape, srcType.getElementType());
  if (srcType == dstType)
    return v;
  if (DenseElementsAttr c = getDenseConstant(v))
    return createConstant(b, loc, c.reshape(dstType));
  if (srcType.getRank() > dstType.getRank()) {
    if (auto re = getReassociationIndicesForReshape(srcType, dstType))
      return tensor::CollapseShapeOp::create(b, loc, dstType, v, *re);
  } else if (srcType.getRank() < dstType.getRank()) {
    if (auto re = getReassociationIndicesForReshape(srcType, dstType))
      return tensor::ExpandShapeOp::create(b, loc, dstType, v, *re);
  }
  // General case: through a flat vector.
  auto flatType = RankedTensorType::get({srcType.getNumElements()},
                                        srcType.getElementType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t i = 0; i < srcType.getRank(); ++i)
    all[0].push_back(i);
  Value flat =
      srcType.getRank() == 1
          ? v
          : tensor::CollapseShapeOp::create(
                b, loc, flatType, v,
                srcType.getRank() == 0 ? SmallVector<ReassociationIndices>{}
                                       : all);
  if (dstType.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> outAll(1);
  for (int64_t i = 0; i < dstType.getRank(); ++i)
    outAll[0].push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc, dstType, flat,
      dstType.getRank() == 0 ? SmallVector<ReassociationIndices>{} : outAll);
}

Value dlc::transposeTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return v;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto outType = RankedTensorType::get(shape, type.getElementType());
  if (DenseElementsAttr c = getDenseConstant(v)) {
    if (c.isSplat())
      return createConstant(b, loc, c.resizeSplat(outType));
    if (type.getNumElements() <= kFoldElementLimit) {
      SmallVector<Attribute> in(c.getValues<Attribute>());
      SmallVector<Attribute> out(in.size());
      int64_t rank = shape.size();
      SmallVector<int64_t> inStrides(rank, 1);
      for (int64_t d = rank - 2; d >= 0; --d)
        inStrides[d] = inStrides[d + 1] * type.getDimSize(d + 1);
      SmallVector<int64_t> idx(rank);
      for (int64_t linear = 0; linear < static_cast<int64_t>(out.size());
           ++linear) {
        int64_t rem = linear, src = 0;
        for (int64_t d = rank - 1; d >= 0; --d) {
          idx[d] = rem % shape[d];
          rem /= shape[d];
        }
        for (int64_t d = 0; d < rank; ++d)
          src += idx[d] * inStrides[perm[d]];
        out[linear] = in[src];
      }
      return createConstant(b, loc, DenseElementsAttr::get(outType, out));
    }
  }
  Value init = createEmpty(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

Value dlc::padWithValue(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        TypedAttr value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    shape.push_back(d + low[i] + high[i]);
  auto outType = RankedTensorType::get(shape, type.getElementType());
  Value pad = arith::ConstantOp::create(b, loc, value);
  return tensor::PadOp::create(
      b, loc, outType, v, getAsIndexOpFoldResult(b.getContext(), low),
      getAsIndexOpFoldResult(b.getContext(), high), pad, /*nofold=*/false);
}

Value dlc::broadcastTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  if (DenseElementsAttr c = getDenseConstant(v); c && c.isSplat())
    return createConstant(
        b, loc,
        c.resizeSplat(RankedTensorType::get(shape, type.getElementType())));
  return buildBroadcastGeneric(
      b, loc, v, shape, type.getElementType(),
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

FailureOr<WindowParams> dlc::resolveWindow(NodeRewriter &rw,
                                           ArrayRef<int64_t> spatial,
                                           ArrayRef<int64_t> kernel,
                                           bool ceilMode) {
  size_t n = spatial.size();
  WindowParams p;
  p.strides = rw.getInts("strides", SmallVector<int64_t>(n, 1));
  p.dilations = rw.getInts("dilations", SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> pads =
      rw.getInts("pads", SmallVector<int64_t>(2 * n, 0));
  if (p.strides.size() != n || p.dilations.size() != n || pads.size() != 2 * n)
    return rw.fail("strides, dilations and pads must have " + Twine(n) + ", " +
                   Twine(n) + " and " + Twine(2 * n) + " entries for " +
                   Twine(n) + " spatial dims");
  // Bounded so that the window arithmetic below cannot overflow.
  constexpr int64_t kMaxWindow = int64_t(1) << 31;
  for (size_t i = 0; i < n; ++i) {
    if (p.strides[i] < 1 || p.dilations[i] < 1)
      return rw.fail("strides and dilations must be positive");
    if (p.strides[i] > kMaxWindow || p.dilations[i] > kMaxWindow ||
        kernel[i] > kMaxWindow || pads[i] > kMaxWindow ||
        pads[i + n] > kMaxWindow)
      return rw.fail("kernel_shape, strides, dilations and pads must be at "
                     "most 2^31");
    if (pads[i] < 0 || pads[i + n] < 0)
      return rw.fail("pads must not be negative");
  }
  std::string autoPad = rw.getString("auto_pad", "NOTSET");
  for (size_t i = 0; i < n; ++i) {
    int64_t in = spatial[i], s = p.strides[i];
    int64_t ek = (kernel[i] - 1) * p.dilations[i] + 1;
    int64_t lo = pads[i], hi = pads[i + n], out;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
      lo = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else if (autoPad == "VALID") {
      lo = hi = 0;
      out = ceilMode ? (in - ek + s) / s : (in - ek) / s + 1;
    } else if (autoPad == "NOTSET") {
      int64_t span = in + lo + hi - ek;
      if (span < 0)
        return rw.fail("the window (" + Twine(ek) +
                       " with dilation) is larger than the padded input (" +
                       Twine(in + lo + hi) + ")");
      out = ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
      // A window that would start entirely in the end padding is dropped.
      if (ceilMode && (out - 1) * s >= in + lo)
        --out;
    } else {
      return rw.fail("unknown auto_pad '" + autoPad + "'");
    }
    if (out < 1)
      return rw.fail("the output would be empty along spatial dim " + Twine(i));
    // Windows that reach past the high padding (ceil mode) need more of it.
    hi = std::max(hi, (out - 1) * s + ek - in - lo);
    p.padLow.push_back(lo);
    p.padHigh.push_back(hi);
    p.outSize.push_back(out);
  }
  return p;
}

FailureOr<Type> dlc::dtypeAttr(NodeRewriter &rw, StringRef name,
                               Type fallback) {
  std::optional<int64_t> dtype = rw.getOptionalInt(name);
  if (!dtype)
    return fallback;
  Type t = onnx::getElementType(rw.ctx(), *dtype);
  if (!t)
    return rw.unsupported(name + " " + onnx::getDataTypeName(*dtype));
  return t;
}

std::string dlc::typeName(Type t) { return llvm::formatv("{0}", t).str(); }

SmallVector<Value> dlc::buildGeneric(OpBuilder &b, Location loc,
                                     ArrayRef<GenericOperand> ins,
                                     ArrayRef<GenericOperand> outs,
                                     ArrayRef<utils::IteratorType> iterators,
                                     GenericBody body) {
  SmallVector<Value> inValues, outValues;
  SmallVector<AffineMap> maps;
  SmallVector<Type> resultTypes;
  for (const GenericOperand &o : ins) {
    inValues.push_back(o.value);
    maps.push_back(o.map);
  }
  for (const GenericOperand &o : outs) {
    outValues.push_back(o.value);
    maps.push_back(o.map);
    resultTypes.push_back(o.value.getType());
  }
  size_t numIns = ins.size();
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inValues, outValues, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> results =
            body(nb, nloc, args.take_front(numIns), args.drop_front(numIns));
        linalg::YieldOp::create(nb, nloc, results);
      });
  return SmallVector<Value>(generic.getResults());
}

//===----------------------------------------------------------------------===//
// OnnxEmitter
//===----------------------------------------------------------------------===//

OnnxEmitter::OnnxEmitter(NodeRewriter &rw)
    : builder(rw.b()), prefix(rw.getOp().getDisplayName().str()),
      fileLoc(rw.loc()) {
  if (auto named = dyn_cast<NameLoc>(fileLoc))
    fileLoc = named.getChildLoc();
  builder.setInsertionPointAfter(rw.getOp());
}

onnx::NodeOp OnnxEmitter::nodeOp(StringRef opType, int64_t version,
                                 ValueRange inputs,
                                 ArrayRef<NamedAttribute> attrs,
                                 unsigned numResults) {
  Location loc = NameLoc::get(
      builder.getStringAttr(prefix + "/" + opType + "#" + Twine(count++)),
      fileLoc);
  return onnx::NodeOp::create(
      builder, loc, SmallVector<Type>(numResults, builder.getNoneType()),
      opType, "", version, /*name=*/StringAttr(),
      builder.getDictionaryAttr(attrs), /*graph_attrs=*/ArrayAttr(), inputs,
      /*graphsCount=*/0);
}

Value OnnxEmitter::node(StringRef opType, int64_t version, ValueRange inputs,
                        ArrayRef<NamedAttribute> attrs) {
  return nodeOp(opType, version, inputs, attrs, 1).getResult(0);
}

Value OnnxEmitter::ints(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getI64Type());
  return arith::ConstantOp::create(builder, fileLoc,
                                   DenseElementsAttr::get(type, values));
}

Value OnnxEmitter::scalarInt(int64_t value) {
  auto type = RankedTensorType::get({}, builder.getI64Type());
  return arith::ConstantOp::create(builder, fileLoc,
                                   DenseElementsAttr::get(type, {value}));
}

Value OnnxEmitter::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  return arith::ConstantOp::create(
      builder, fileLoc,
      DenseElementsAttr::get(type, scalarAttr(elementType, value)));
}

NamedAttribute OnnxEmitter::attr(StringRef name, int64_t value) {
  return builder.getNamedAttr(name, builder.getI64IntegerAttr(value));
}

NamedAttribute OnnxEmitter::attr(StringRef name, ArrayRef<int64_t> values) {
  return builder.getNamedAttr(name, builder.getI64ArrayAttr(values));
}

NamedAttribute OnnxEmitter::floatAttr(StringRef name, double value) {
  return builder.getNamedAttr(name, builder.getF32FloatAttr(value));
}

Value dlc::wrapNegative(OpBuilder &b, Location loc, Value idx, int64_t dim) {
  Value i = idx.getType().isIndex()
                ? idx
                : arith::IndexCastOp::create(b, loc, b.getIndexType(), idx)
                      .getResult();
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    arith::ConstantIndexOp::create(b, loc, 0));
  Value wrapped = arith::AddIOp::create(
      b, loc, i, arith::ConstantIndexOp::create(b, loc, dim));
  return arith::SelectOp::create(b, loc, neg, wrapped, i);
}

Value dlc::wrapAndClamp(OpBuilder &b, Location loc, Value idx, int64_t dim) {
  Value i = wrapNegative(b, loc, idx, dim);
  i = arith::MaxSIOp::create(b, loc, i,
                             arith::ConstantIndexOp::create(b, loc, 0));
  return arith::MinSIOp::create(
      b, loc, i, arith::ConstantIndexOp::create(b, loc, dim - 1));
}

std::optional<std::vector<char>> dlc::constantBytes(Value v, int64_t count,
                                                    int64_t width) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  if (type.getNumElements() != count ||
      type.getElementTypeBitWidth() != width * 8)
    return std::nullopt;
  ArrayRef<char> data;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr))
    data = res.getData();
  else if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    data = dense.getRawData();
  else
    return std::nullopt;
  if (static_cast<int64_t>(data.size()) == count * width)
    return std::vector<char>(data.begin(), data.end());
  // A splat holds one element.
  if (static_cast<int64_t>(data.size()) != width)
    return std::nullopt;
  std::vector<char> out;
  out.reserve(count * width);
  for (int64_t i = 0; i < count; ++i)
    out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::optional<SmallVector<int64_t>> dlc::integerValues(Value v,
                                                       bool isUnsigned) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto elem = dyn_cast<IntegerType>(attr.getElementType());
  if (!elem)
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    for (const APInt &x : dense.getValues<APInt>())
      out.push_back(isUnsigned ? static_cast<int64_t>(x.getZExtValue())
                               : x.getSExtValue());
    return out;
  }
  if (elem.getWidth() != 8)
    return std::nullopt;
  std::optional<std::vector<char>> bytes =
      constantBytes(v, attr.getNumElements(), 1);
  if (!bytes)
    return std::nullopt;
  for (char c : *bytes)
    out.push_back(isUnsigned ? static_cast<int64_t>(static_cast<uint8_t>(c))
                             : static_cast<int64_t>(static_cast<int8_t>(c)));
  return out;
}

SmallVector<Value> dlc::cloneSubgraph(OpBuilder &b, Block &body,
                                      ValueRange args,
                                      function_ref<void(Operation *)> onClone) {
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (onClone)
      onClone(clone);
  }
  SmallVector<Value> yielded;
  for (Value v : body.getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}
