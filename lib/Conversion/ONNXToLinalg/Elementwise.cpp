//===- Elementwise.cpp - arithmetic, activations, logic, Cast -------------===//
//
// Every op here is one linalg.generic with numpy broadcasting (or a folded
// constant when all inputs are constants). Scalar bodies use createOrFold so
// that constant folding can evaluate them.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include <cmath>

using namespace mlir;
using namespace dlc;

namespace {

using Body = std::function<Value(OpBuilder &, Location, ValueRange)>;

bool isFloat(Type t) { return isa<FloatType>(t); }

/// Checks that input `i` has a float element type.
LogicalResult requireFloat(NodeRewriter &rw, unsigned i) {
  if (isFloat(rw.inputType(i).getElementType()))
    return success();
  return rw.unsupported("input " + Twine(i) + " has element type " +
                        llvm::formatv("{0}", rw.onnxElementType(i)).str() +
                        "; this operator is implemented for floats");
}

LogicalResult emitElementwise(NodeRewriter &rw, ValueRange operands,
                              Type resultType, const Body &body,
                              Type resultOnnxType = {}) {
  FailureOr<Value> v = buildElementwise(rw, operands, resultType, body);
  if (failed(v))
    return failure();
  return rw.replace(*v, resultOnnxType ? ArrayRef<Type>(resultOnnxType)
                                       : ArrayRef<Type>());
}

/// A unary float op: y = f(x).
LogicalResult unaryFloat(NodeRewriter &rw, const Body &f) {
  if (failed(rw.requireInput(0, "X")) || failed(requireFloat(rw, 0)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  return emitElementwise(rw, rw.input(0), t, f);
}

Value cst(OpBuilder &b, Location loc, Type t, double v) {
  return scalarConstant(b, loc, t, v);
}

/// The inputs after the ONNX-type checks shared by binary arithmetic.
LogicalResult requireSameTypes(NodeRewriter &rw, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    if (failed(rw.requireInput(i, "operand")))
      return failure();
  for (unsigned i = 1; i < n; ++i)
    if (rw.onnxElementType(i) != rw.onnxElementType(0))
      return rw.fail("operands have different element types (" +
                     llvm::formatv("{0}", rw.onnxElementType(0)).str() +
                     " and " +
                     llvm::formatv("{0}", rw.onnxElementType(i)).str() + ")");
  return success();
}

//===--- arithmetic -------------------------------------------------------===//

/// Integer division and remainder that cannot trap. ONNX leaves division by
/// zero undefined, but x86's idiv raises SIGFPE on it and on INT_MIN / -1,
/// which kills the application that runs the model (and LLVM may assume
/// neither happens). dlc defines both, the same on every target: x / 0 and
/// x % 0 are 0, INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0. The
/// divisor those cases see is 1; the quotient of a zero divisor is then
/// replaced by 0 (the remainder by 1 already is 0).
struct TotalDivision {
  Value divisor, divisorIsZero;
};

TotalDivision totalDivisor(OpBuilder &b, Location loc, Value x, Value d,
                           bool isUnsigned) {
  Type t = d.getType();
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) {
    return b.createOrFold<arith::CmpIOp>(loc, p, l, r);
  };
  Value isZero = cmp(arith::CmpIPredicate::eq, d, cst(b, loc, t, 0));
  Value bad = isZero;
  if (!isUnsigned) {
    unsigned width = t.getIntOrFloatBitWidth();
    Value minValue = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(t, APInt::getSignedMinValue(width)));
    Value overflow = b.createOrFold<arith::AndIOp>(
        loc, cmp(arith::CmpIPredicate::eq, x, minValue),
        cmp(arith::CmpIPredicate::eq, d, cst(b, loc, t, -1)));
    bad = b.createOrFold<arith::OrIOp>(loc, bad, overflow);
  }
  Value safe = b.createOrFold<arith::SelectOp>(loc, bad, cst(b, loc, t, 1), d);
  return {safe, isZero};
}

Value totalDivide(OpBuilder &b, Location loc, Value x, Value d,
                  bool isUnsigned) {
  TotalDivision div = totalDivisor(b, loc, x, d, isUnsigned);
  Value q = isUnsigned ? b.createOrFold<arith::DivUIOp>(loc, x, div.divisor)
                       : b.createOrFold<arith::DivSIOp>(loc, x, div.divisor);
  return b.createOrFold<arith::SelectOp>(loc, div.divisorIsZero,
                                         cst(b, loc, x.getType(), 0), q);
}

enum class Arith { Add, Sub, Mul, Div };

template <Arith K> LogicalResult convertArith(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  if (t.isInteger(1))
    return rw.unsupported("boolean operands");
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        if (isFloat(t)) {
          switch (K) {
          case Arith::Add:
            return b.createOrFold<arith::AddFOp>(loc, a[0], a[1]);
          case Arith::Sub:
            return b.createOrFold<arith::SubFOp>(loc, a[0], a[1]);
          case Arith::Mul:
            return b.createOrFold<arith::MulFOp>(loc, a[0], a[1]);
          case Arith::Div:
            return b.createOrFold<arith::DivFOp>(loc, a[0], a[1]);
          }
        }
        switch (K) {
        case Arith::Add:
          return b.createOrFold<arith::AddIOp>(loc, a[0], a[1]);
        case Arith::Sub:
          return b.createOrFold<arith::SubIOp>(loc, a[0], a[1]);
        case Arith::Mul:
          return b.createOrFold<arith::MulIOp>(loc, a[0], a[1]);
        case Arith::Div:
          return totalDivide(b, loc, a[0], a[1], isUnsigned);
        }
        llvm_unreachable("unknown arithmetic kind");
      });
}

LogicalResult convertPow(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(rw.requireInput(1, "Y")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  Type et = rw.inputType(1).getElementType();
  Type eOnnx = rw.onnxElementType(1);
  if (isFloat(t)) {
    return emitElementwise(
        rw, {rw.input(0), rw.input(1)}, t,
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value e = castScalar(b, loc, a[1], eOnnx, t);
          return b.createOrFold<math::PowFOp>(loc, a[0], e);
        });
  }
  if (t.isInteger(1))
    return rw.unsupported("boolean base");
  Type baseOnnx = rw.onnxElementType(0);
  if (isa<FloatType>(et)) {
    // Integer base, float exponent: compute in the exponent's type and
    // truncate toward zero, as the ONNX reference does.
    return emitElementwise(
        rw, {rw.input(0), rw.input(1)}, t,
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          Value base = castScalar(b, loc, a[0], baseOnnx, et);
          Value p = b.createOrFold<math::PowFOp>(loc, base, a[1]);
          return castScalar(b, loc, p, et, baseOnnx);
        });
  }
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value e = castScalar(b, loc, a[1], eOnnx, baseOnnx);
        return b.createOrFold<math::IPowIOp>(loc, a[0], e);
      });
}

LogicalResult convertMod(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool fmod = rw.getInt("fmod", 0) != 0;
  bool isUnsigned = rw.isUnsigned(0);
  if (isFloat(t) && !fmod)
    return rw.fail("fmod must be 1 for floating-point inputs");
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        if (isFloat(t))
          return b.createOrFold<arith::RemFOp>(loc, a[0], a[1]);
        Value d = totalDivisor(b, loc, a[0], a[1], isUnsigned).divisor;
        if (isUnsigned)
          return b.createOrFold<arith::RemUIOp>(loc, a[0], d);
        Value r = b.createOrFold<arith::RemSIOp>(loc, a[0], d);
        if (fmod)
          return r;
        // Python-style: the result takes the sign of the divisor.
        Value zero = cst(b, loc, t, 0);
        Value rNeg = b.createOrFold<arith::CmpIOp>(
            loc, arith::CmpIPredicate::slt, r, zero);
        Value dNeg = b.createOrFold<arith::CmpIOp>(
            loc, arith::CmpIPredicate::slt, a[1], zero);
        Value rNonZero = b.createOrFold<arith::CmpIOp>(
            loc, arith::CmpIPredicate::ne, r, zero);
        Value signsDiffer = b.createOrFold<arith::XOrIOp>(loc, rNeg, dNeg);
        Value fix = b.createOrFold<arith::AndIOp>(loc, signsDiffer, rNonZero);
        Value adjusted = b.createOrFold<arith::AddIOp>(loc, r, a[1]);
        return b.createOrFold<arith::SelectOp>(loc, fix, adjusted, r);
      });
}

/// Min, Max, Sum, Mean over any number of inputs, with broadcasting.
enum class Variadic { Min, Max, Sum, Mean };

template <Variadic K> LogicalResult convertVariadic(NodeRewriter &rw) {
  if (rw.numInputs() == 0)
    return rw.fail("needs at least one input");
  if (failed(requireSameTypes(rw, rw.numInputs())))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  if (K == Variadic::Mean && !isFloat(t))
    return rw.unsupported("Mean of integers");
  SmallVector<Value> operands;
  for (unsigned i = 0; i < rw.numInputs(); ++i)
    operands.push_back(rw.input(i));
  unsigned n = operands.size();
  return emitElementwise(
      rw, operands, t, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value acc = a[0];
        for (Value v : a.drop_front()) {
          if (isFloat(t)) {
            switch (K) {
            case Variadic::Min:
              acc = b.createOrFold<arith::MinimumFOp>(loc, acc, v);
              break;
            case Variadic::Max:
              acc = b.createOrFold<arith::MaximumFOp>(loc, acc, v);
              break;
            case Variadic::Sum:
            case Variadic::Mean:
              acc = b.createOrFold<arith::AddFOp>(loc, acc, v);
              break;
            }
          } else {
            switch (K) {
            case Variadic::Min:
              acc = isUnsigned ? b.createOrFold<arith::MinUIOp>(loc, acc, v)
                               : b.createOrFold<arith::MinSIOp>(loc, acc, v);
              break;
            case Variadic::Max:
              acc = isUnsigned ? b.createOrFold<arith::MaxUIOp>(loc, acc, v)
                               : b.createOrFold<arith::MaxSIOp>(loc, acc, v);
              break;
            case Variadic::Sum:
            case Variadic::Mean:
              acc = b.createOrFold<arith::AddIOp>(loc, acc, v);
              break;
            }
          }
        }
        if (K == Variadic::Mean)
          acc = b.createOrFold<arith::DivFOp>(loc, acc, cst(b, loc, t, n));
        return acc;
      });
}

//===--- unary math -------------------------------------------------------===//

template <typename OpTy> LogicalResult convertUnaryMath(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    return b.createOrFold<OpTy>(loc, a[0]);
  });
}

LogicalResult convertAbs(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  if (rw.isUnsigned(0))
    return rw.replace(rw.input(0));
  return emitElementwise(rw, rw.input(0), t,
                         [&](OpBuilder &b, Location loc, ValueRange a) {
                           if (isFloat(t))
                             return b.createOrFold<math::AbsFOp>(loc, a[0]);
                           return b.createOrFold<math::AbsIOp>(loc, a[0]);
                         });
}

LogicalResult convertNeg(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  return emitElementwise(
      rw, rw.input(0), t, [&](OpBuilder &b, Location loc, ValueRange a) {
        if (isFloat(t))
          return b.createOrFold<arith::NegFOp>(loc, a[0]);
        return b.createOrFold<arith::SubIOp>(loc, cst(b, loc, t, 0), a[0]);
      });
}

LogicalResult convertReciprocal(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    return b.createOrFold<arith::DivFOp>(loc, cst(b, loc, a[0].getType(), 1),
                                         a[0]);
  });
}

LogicalResult convertSign(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  return emitElementwise(
      rw, rw.input(0), t, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value zero = cst(b, loc, t, 0), one = cst(b, loc, t, 1);
        Value minusOne = cst(b, loc, t, -1);
        Value gt, lt;
        if (isFloat(t)) {
          gt = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT,
                                             a[0], zero);
          lt = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT,
                                             a[0], zero);
          // Zero and NaN map to themselves.
          Value r = b.createOrFold<arith::SelectOp>(loc, lt, minusOne, a[0]);
          return b.createOrFold<arith::SelectOp>(loc, gt, one, r);
        }
        gt = b.createOrFold<arith::CmpIOp>(
            loc,
            isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt,
            a[0], zero);
        lt = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a[0],
                                           zero);
        Value r = isUnsigned ? zero
                             : b.createOrFold<arith::SelectOp>(loc, lt,
                                                               minusOne, zero);
        return b.createOrFold<arith::SelectOp>(loc, gt, one, r);
      });
}

LogicalResult convertIsNaN(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(requireFloat(rw, 0)))
    return failure();
  return emitElementwise(rw, rw.input(0), rw.b().getI1Type(),
                         [](OpBuilder &b, Location loc, ValueRange a) {
                           return b.createOrFold<arith::CmpFOp>(
                               loc, arith::CmpFPredicate::UNO, a[0], a[0]);
                         });
}

LogicalResult convertIsInf(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(requireFloat(rw, 0)))
    return failure();
  bool pos = rw.getInt("detect_positive", 1) != 0;
  bool neg = rw.getInt("detect_negative", 1) != 0;
  Type t = rw.inputType(0).getElementType();
  auto ft = cast<FloatType>(t);
  return emitElementwise(
      rw, rw.input(0), rw.b().getI1Type(),
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Value inf = arith::ConstantOp::create(
            b, loc,
            FloatAttr::get(ft, APFloat::getInf(ft.getFloatSemantics())));
        Value ninf = arith::ConstantOp::create(
            b, loc,
            FloatAttr::get(ft, APFloat::getInf(ft.getFloatSemantics(), true)));
        Value isPos = b.createOrFold<arith::CmpFOp>(
            loc, arith::CmpFPredicate::OEQ, a[0], inf);
        Value isNeg = b.createOrFold<arith::CmpFOp>(
            loc, arith::CmpFPredicate::OEQ, a[0], ninf);
        Value f = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
        return b.createOrFold<arith::OrIOp>(loc, pos ? isPos : f,
                                            neg ? isNeg : f);
      });
}

//===--- activations ------------------------------------------------------===//

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value negX = b.createOrFold<arith::NegFOp>(loc, x);
  Value e = b.createOrFold<math::ExpOp>(loc, negX);
  Value one = cst(b, loc, t, 1);
  return b.createOrFold<arith::DivFOp>(
      loc, one, b.createOrFold<arith::AddFOp>(loc, one, e));
}

/// clamp(x, lo, hi) for floats.
Value clampF(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Type t = x.getType();
  Value r = b.createOrFold<arith::MaximumFOp>(loc, x, cst(b, loc, t, lo));
  return b.createOrFold<arith::MinimumFOp>(loc, r, cst(b, loc, t, hi));
}

LogicalResult convertRelu(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  return emitElementwise(
      rw, rw.input(0), t, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value zero = cst(b, loc, t, 0);
        if (isFloat(t))
          return b.createOrFold<arith::MaximumFOp>(loc, a[0], zero);
        return b.createOrFold<arith::MaxSIOp>(loc, a[0], zero);
      });
}

LogicalResult convertLeakyRelu(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 0.01f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value neg = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT,
                                              a[0], cst(b, loc, t, 0));
    Value scaled =
        b.createOrFold<arith::MulFOp>(loc, a[0], cst(b, loc, t, alpha));
    return b.createOrFold<arith::SelectOp>(loc, neg, scaled, a[0]);
  });
}

LogicalResult convertPRelu(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(rw.requireInput(1, "slope")) ||
      failed(requireFloat(rw, 0)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  // The slope broadcasts to X (unidirectionally).
  auto xShape = rw.inputType(0).getShape();
  auto sShape = rw.inputType(1).getShape();
  if (sShape.size() > xShape.size())
    return rw.fail("slope has a higher rank than X");
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Value neg = b.createOrFold<arith::CmpFOp>(
            loc, arith::CmpFPredicate::OLT, a[0], cst(b, loc, t, 0));
        Value scaled = b.createOrFold<arith::MulFOp>(loc, a[0], a[1]);
        return b.createOrFold<arith::SelectOp>(loc, neg, scaled, a[0]);
      });
}

LogicalResult convertElu(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 1.0f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value neg = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT,
                                              a[0], cst(b, loc, t, 0));
    Value em1 = b.createOrFold<math::ExpM1Op>(loc, a[0]);
    Value scaled =
        b.createOrFold<arith::MulFOp>(loc, em1, cst(b, loc, t, alpha));
    return b.createOrFold<arith::SelectOp>(loc, neg, scaled, a[0]);
  });
}

LogicalResult convertCelu(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 1.0f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    Type t = a[0].getType();
    Value zero = cst(b, loc, t, 0);
    Value xa = b.createOrFold<arith::DivFOp>(loc, a[0], cst(b, loc, t, alpha));
    Value e = b.createOrFold<arith::MulFOp>(
        loc, b.createOrFold<math::ExpM1Op>(loc, xa), cst(b, loc, t, alpha));
    return b.createOrFold<arith::AddFOp>(
        loc, b.createOrFold<arith::MaximumFOp>(loc, a[0], zero),
        b.createOrFold<arith::MinimumFOp>(loc, e, zero));
  });
}

LogicalResult convertSelu(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 1.67326319217681884765625f);
  double gamma = rw.getFloat("gamma", 1.05070102214813232421875f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value pos = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT,
                                              a[0], cst(b, loc, t, 0));
    Value e = b.createOrFold<arith::MulFOp>(
        loc, b.createOrFold<math::ExpM1Op>(loc, a[0]), cst(b, loc, t, alpha));
    Value r = b.createOrFold<arith::SelectOp>(loc, pos, a[0], e);
    return b.createOrFold<arith::MulFOp>(loc, r, cst(b, loc, t, gamma));
  });
}

LogicalResult convertSigmoid(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    return sigmoid(b, loc, a[0]);
  });
}

/// Swish (opset 24): x * sigmoid(alpha * x).
LogicalResult convertSwish(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 1.0f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Value scaled = b.createOrFold<arith::MulFOp>(
        loc, a[0], cst(b, loc, a[0].getType(), alpha));
    return b.createOrFold<arith::MulFOp>(loc, a[0], sigmoid(b, loc, scaled));
  });
}

LogicalResult convertHardSigmoid(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 0.2f), beta = rw.getFloat("beta", 0.5f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value y = b.createOrFold<arith::AddFOp>(
        loc, b.createOrFold<arith::MulFOp>(loc, a[0], cst(b, loc, t, alpha)),
        cst(b, loc, t, beta));
    return clampF(b, loc, y, 0, 1);
  });
}

LogicalResult convertHardSwish(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value y = b.createOrFold<arith::AddFOp>(
        loc, b.createOrFold<arith::MulFOp>(loc, a[0], cst(b, loc, t, 1.0 / 6)),
        cst(b, loc, t, 0.5));
    return b.createOrFold<arith::MulFOp>(loc, a[0], clampF(b, loc, y, 0, 1));
  });
}

LogicalResult convertGelu(NodeRewriter &rw) {
  std::string approximate = rw.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return rw.fail("unknown approximate '" + approximate + "'");
  bool useTanh = approximate == "tanh";
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value x = a[0];
    Value inner;
    if (useTanh) {
      // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
      Value x3 = b.createOrFold<arith::MulFOp>(
          loc, x, b.createOrFold<arith::MulFOp>(loc, x, x));
      Value s = b.createOrFold<arith::AddFOp>(
          loc, x,
          b.createOrFold<arith::MulFOp>(loc, x3, cst(b, loc, t, 0.044715)));
      inner = b.createOrFold<math::TanhOp>(
          loc, b.createOrFold<arith::MulFOp>(
                   loc, s, cst(b, loc, t, std::sqrt(2.0 / M_PI))));
    } else {
      inner = b.createOrFold<math::ErfOp>(
          loc,
          b.createOrFold<arith::MulFOp>(loc, x, cst(b, loc, t, M_SQRT1_2)));
    }
    Value onePlus =
        b.createOrFold<arith::AddFOp>(loc, inner, cst(b, loc, t, 1));
    return b.createOrFold<arith::MulFOp>(
        loc, b.createOrFold<arith::MulFOp>(loc, x, cst(b, loc, t, 0.5)),
        onePlus);
  });
}

LogicalResult convertSoftplus(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    // log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) so that
    // large inputs do not overflow.
    Type t = a[0].getType();
    Value absX = b.createOrFold<math::AbsFOp>(loc, a[0]);
    Value e = b.createOrFold<math::ExpOp>(
        loc, b.createOrFold<arith::NegFOp>(loc, absX));
    Value l = b.createOrFold<math::Log1pOp>(loc, e);
    return b.createOrFold<arith::AddFOp>(
        loc, b.createOrFold<arith::MaximumFOp>(loc, a[0], cst(b, loc, t, 0)),
        l);
  });
}

LogicalResult convertSoftsign(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value d = b.createOrFold<arith::AddFOp>(
        loc, cst(b, loc, t, 1), b.createOrFold<math::AbsFOp>(loc, a[0]));
    return b.createOrFold<arith::DivFOp>(loc, a[0], d);
  });
}

LogicalResult convertMish(NodeRewriter &rw) {
  return unaryFloat(rw, [](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value absX = b.createOrFold<math::AbsFOp>(loc, a[0]);
    Value e = b.createOrFold<math::ExpOp>(
        loc, b.createOrFold<arith::NegFOp>(loc, absX));
    Value sp = b.createOrFold<arith::AddFOp>(
        loc, b.createOrFold<arith::MaximumFOp>(loc, a[0], cst(b, loc, t, 0)),
        b.createOrFold<math::Log1pOp>(loc, e));
    return b.createOrFold<arith::MulFOp>(loc, a[0],
                                         b.createOrFold<math::TanhOp>(loc, sp));
  });
}

LogicalResult convertThresholdedRelu(NodeRewriter &rw) {
  double alpha = rw.getFloat("alpha", 1.0f);
  return unaryFloat(rw, [=](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    Value gt = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT,
                                             a[0], cst(b, loc, t, alpha));
    return b.createOrFold<arith::SelectOp>(loc, gt, a[0], cst(b, loc, t, 0));
  });
}

LogicalResult convertShrink(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  double bias = rw.getFloat("bias", 0.0f), lambd = rw.getFloat("lambd", 0.5f);
  Type t = rw.inputType(0).getElementType();
  Type onnxType = rw.onnxElementType(0);
  return emitElementwise(
      rw, rw.input(0), t, [&](OpBuilder &b, Location loc, ValueRange a) {
        Type f = b.getF32Type();
        Value x = castScalar(b, loc, a[0], onnxType, f);
        Value lt = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT,
                                                 x, cst(b, loc, f, -lambd));
        Value gt = b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT,
                                                 x, cst(b, loc, f, lambd));
        Value plus =
            b.createOrFold<arith::AddFOp>(loc, x, cst(b, loc, f, bias));
        Value minus =
            b.createOrFold<arith::SubFOp>(loc, x, cst(b, loc, f, bias));
        Value r = b.createOrFold<arith::SelectOp>(
            loc, gt, minus,
            b.createOrFold<arith::SelectOp>(loc, lt, plus, cst(b, loc, f, 0)));
        return castScalar(b, loc, r, f, onnxType);
      });
}

LogicalResult convertClip(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  SmallVector<Value> operands = {rw.input(0)};
  std::optional<double> lo, hi;
  int loIndex = -1, hiIndex = -1;
  if (rw.version() < 11) {
    lo = rw.hasAttr("min") ? std::optional<double>(rw.getFloat("min", 0))
                           : std::nullopt;
    hi = rw.hasAttr("max") ? std::optional<double>(rw.getFloat("max", 0))
                           : std::nullopt;
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!rw.hasInput(i))
        continue;
      if (rw.inputType(i).getRank() != 0 &&
          rw.inputType(i).getNumElements() != 1)
        return rw.fail("min and max must be scalars");
      (i == 1 ? loIndex : hiIndex) = operands.size();
      operands.push_back(reshapeTo(rw.b(), rw.loc(), rw.input(i), {}));
    }
  }
  return emitElementwise(
      rw, operands, t, [&](OpBuilder &b, Location loc, ValueRange a) {
        Value x = a[0];
        auto bound = [&](int index, std::optional<double> attr) -> Value {
          if (index >= 0)
            return a[index];
          if (attr)
            return cst(b, loc, t, *attr);
          return {};
        };
        if (Value l = bound(loIndex, lo))
          x = isFloat(t)   ? b.createOrFold<arith::MaximumFOp>(loc, x, l)
              : isUnsigned ? b.createOrFold<arith::MaxUIOp>(loc, x, l)
                           : b.createOrFold<arith::MaxSIOp>(loc, x, l);
        if (Value h = bound(hiIndex, hi))
          x = isFloat(t)   ? b.createOrFold<arith::MinimumFOp>(loc, x, h)
              : isUnsigned ? b.createOrFold<arith::MinUIOp>(loc, x, h)
                           : b.createOrFold<arith::MinSIOp>(loc, x, h);
        return x;
      });
}

//===--- comparison and logic ---------------------------------------------===//

template <arith::CmpFPredicate FP, arith::CmpIPredicate SP,
          arith::CmpIPredicate UP>
LogicalResult convertCompare(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  bool isUnsigned = rw.isUnsigned(0) || t.isInteger(1);
  return emitElementwise(rw, {rw.input(0), rw.input(1)}, rw.b().getI1Type(),
                         [&](OpBuilder &b, Location loc, ValueRange a) {
                           if (isFloat(t))
                             return b.createOrFold<arith::CmpFOp>(loc, FP, a[0],
                                                                  a[1]);
                           return b.createOrFold<arith::CmpIOp>(
                               loc, isUnsigned ? UP : SP, a[0], a[1]);
                         });
}

template <typename OpTy> LogicalResult convertLogic(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  if (!rw.inputType(0).getElementType().isInteger(1))
    return rw.fail("operands must be booleans");
  return emitElementwise(rw, {rw.input(0), rw.input(1)}, rw.b().getI1Type(),
                         [](OpBuilder &b, Location loc, ValueRange a) {
                           return b.createOrFold<OpTy>(loc, a[0], a[1]);
                         });
}

LogicalResult convertNot(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  if (!rw.inputType(0).getElementType().isInteger(1))
    return rw.fail("the operand must be boolean");
  return emitElementwise(rw, rw.input(0), rw.b().getI1Type(),
                         [](OpBuilder &b, Location loc, ValueRange a) {
                           Value t = arith::ConstantOp::create(
                               b, loc, b.getBoolAttr(true));
                           return b.createOrFold<arith::XOrIOp>(loc, a[0], t);
                         });
}

/// BitwiseAnd, BitwiseOr, BitwiseXor on integers of any width and sign.
template <typename OpTy> LogicalResult convertBitwise(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  Type t = rw.inputType(0).getElementType();
  if (!isa<IntegerType>(t) || t.isInteger(1))
    return rw.fail("operands must be integers, not " +
                   typeName(rw.onnxElementType(0)));
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [](OpBuilder &b, Location loc, ValueRange a) {
        return b.createOrFold<OpTy>(loc, a[0], a[1]);
      },
      rw.onnxElementType(0));
}

LogicalResult convertBitwiseNot(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  Type t = rw.inputType(0).getElementType();
  if (!isa<IntegerType>(t) || t.isInteger(1))
    return rw.fail("the operand must be an integer, not " +
                   typeName(rw.onnxElementType(0)));
  return emitElementwise(
      rw, rw.input(0), t,
      [](OpBuilder &b, Location loc, ValueRange a) {
        Value ones = arith::ConstantOp::create(
            b, loc, b.getIntegerAttr(a[0].getType(), -1));
        return b.createOrFold<arith::XOrIOp>(loc, a[0], ones);
      },
      rw.onnxElementType(0));
}

LogicalResult convertBitShift(NodeRewriter &rw) {
  if (failed(requireSameTypes(rw, 2)))
    return failure();
  std::string dir = rw.getString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return rw.fail("direction must be LEFT or RIGHT");
  Type t = rw.inputType(0).getElementType();
  return emitElementwise(
      rw, {rw.input(0), rw.input(1)}, t,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        if (dir == "LEFT")
          return b.createOrFold<arith::ShLIOp>(loc, a[0], a[1]);
        return b.createOrFold<arith::ShRUIOp>(loc, a[0], a[1]);
      });
}

LogicalResult convertWhere(NodeRewriter &rw) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(rw.requireInput(i, i == 0 ? "condition" : "X/Y")))
      return failure();
  if (!rw.inputType(0).getElementType().isInteger(1))
    return rw.fail("condition must be boolean");
  if (rw.onnxElementType(1) != rw.onnxElementType(2))
    return rw.fail("X and Y have different element types");
  if (rw.getOp()->hasAttr(kLoopCarriedSelectAttr) &&
      rw.inputType(1) != rw.inputType(2))
    return rw.unsupported(
        "a loop-carried value that is " + typeName(rw.inputType(2)) +
        " before an iteration and " + typeName(rw.inputType(1)) +
        " after it, in a Loop whose condition is known only at run time "
        "(each value needs one static type)");
  Type t = rw.inputType(1).getElementType();
  return emitElementwise(
      rw, {rw.input(0), rw.input(1), rw.input(2)}, t,
      [](OpBuilder &b, Location loc, ValueRange a) {
        return b.createOrFold<arith::SelectOp>(loc, a[0], a[1], a[2]);
      },
      rw.onnxElementType(1));
}

//===--- casts ------------------------------------------------------------===//

/// Cast and CastLike. `saturate` (opset 19) only matters for 8-bit float
/// results, `round_mode` (opset 24) for FLOAT8E8M0 ones; ONNX ignores them
/// for every other type.
LogicalResult castTo(NodeRewriter &rw, Type to) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  Type from = rw.onnxElementType(0);
  bool saturate = rw.getInt("saturate", 1) != 0;
  std::string mode = rw.getString("round_mode", "up");
  if (mode != "up" && mode != "down" && mode != "nearest")
    return rw.fail("round_mode must be 'up', 'down' or 'nearest', not '" +
                   mode + "'");
  E8M0Rounding rounding = mode == "up"     ? E8M0Rounding::Up
                          : mode == "down" ? E8M0Rounding::Down
                                           : E8M0Rounding::Nearest;
  return emitElementwise(
      rw, rw.input(0), signlessType(to),
      [&](OpBuilder &b, Location loc, ValueRange a) {
        return castScalar(b, loc, a[0], from, to, saturate, rounding);
      },
      to);
}

LogicalResult convertCast(NodeRewriter &rw) {
  std::optional<int64_t> to = rw.getOptionalInt("to");
  if (!to)
    return rw.fail("missing required attribute 'to'");
  Type t = onnx::getElementType(rw.ctx(), *to);
  if (!t)
    return rw.unsupported("cast to " + onnx::getDataTypeName(*to));
  return castTo(rw, t);
}

LogicalResult convertCastLike(NodeRewriter &rw) {
  if (failed(rw.requireInput(1, "target_type")))
    return failure();
  return castTo(rw, rw.onnxElementType(1));
}

} // namespace

void dlc::populateElementwiseHandlers(HandlerRegistry &r) {
  r.add("Add", {1, 6, 7, 13, 14}, convertArith<Arith::Add>);
  r.add("Sub", {1, 6, 7, 13, 14}, convertArith<Arith::Sub>);
  r.add("Mul", {1, 6, 7, 13, 14}, convertArith<Arith::Mul>);
  r.add("Div", {1, 6, 7, 13, 14}, convertArith<Arith::Div>);
  r.add("Pow", {1, 7, 12, 13, 15}, convertPow);
  r.add("Mod", {10, 13}, convertMod);
  r.add("Min", {1, 6, 8, 12, 13}, convertVariadic<Variadic::Min>);
  r.add("Max", {1, 6, 8, 12, 13}, convertVariadic<Variadic::Max>);
  r.add("Sum", {1, 6, 8, 13}, convertVariadic<Variadic::Sum>);
  r.add("Mean", {1, 6, 8, 13}, convertVariadic<Variadic::Mean>);

  r.add("Sqrt", {1, 6, 13}, convertUnaryMath<math::SqrtOp>);
  r.add("Exp", {1, 6, 13}, convertUnaryMath<math::ExpOp>);
  r.add("Log", {1, 6, 13}, convertUnaryMath<math::LogOp>);
  r.add("Erf", {9, 13}, convertUnaryMath<math::ErfOp>);
  r.add("Tanh", {1, 6, 13}, convertUnaryMath<math::TanhOp>);
  r.add("Floor", {1, 6, 13}, convertUnaryMath<math::FloorOp>);
  r.add("Ceil", {1, 6, 13}, convertUnaryMath<math::CeilOp>);
  r.add("Round", {11, 22}, convertUnaryMath<math::RoundEvenOp>);
  r.add("Sin", {7, 22}, convertUnaryMath<math::SinOp>);
  r.add("Cos", {7, 22}, convertUnaryMath<math::CosOp>);
  r.add("Tan", {7, 22}, convertUnaryMath<math::TanOp>);
  r.add("Asin", {7, 22}, convertUnaryMath<math::AsinOp>);
  r.add("Acos", {7, 22}, convertUnaryMath<math::AcosOp>);
  r.add("Atan", {7, 22}, convertUnaryMath<math::AtanOp>);
  r.add("Sinh", {9, 22}, convertUnaryMath<math::SinhOp>);
  r.add("Cosh", {9, 22}, convertUnaryMath<math::CoshOp>);
  r.add("Asinh", {9, 22}, convertUnaryMath<math::AsinhOp>);
  r.add("Acosh", {9, 22}, convertUnaryMath<math::AcoshOp>);
  r.add("Atanh", {9, 22}, convertUnaryMath<math::AtanhOp>);
  r.add("Abs", {1, 6, 13}, convertAbs);
  r.add("Neg", {1, 6, 13}, convertNeg);
  r.add("Reciprocal", {1, 6, 13}, convertReciprocal);
  r.add("Sign", {9, 13}, convertSign);
  r.add("IsNaN", {9, 13, 20}, convertIsNaN);
  r.add("IsInf", {10, 20}, convertIsInf);

  r.add("Relu", {1, 6, 13, 14}, convertRelu);
  r.add("LeakyRelu", {1, 6, 16}, convertLeakyRelu);
  r.add("PRelu", {1, 6, 7, 9, 16}, convertPRelu);
  r.add("Elu", {1, 6, 22}, convertElu);
  r.add("Celu", {12}, convertCelu);
  r.add("Selu", {1, 6, 22}, convertSelu);
  r.add("Sigmoid", {1, 6, 13}, convertSigmoid);
  r.add("HardSigmoid", {1, 6, 22}, convertHardSigmoid);
  r.add("HardSwish", {14, 22}, convertHardSwish);
  r.add("Gelu", {20}, convertGelu);
  r.add("Softplus", {1, 22}, convertSoftplus);
  r.add("Softsign", {1, 22}, convertSoftsign);
  r.add("Mish", {18, 22}, convertMish);
  r.add("Swish", {24}, convertSwish);
  r.add("ThresholdedRelu", {10, 22}, convertThresholdedRelu);
  r.add("Shrink", {9}, convertShrink);
  r.add("Clip", {1, 6, 11, 12, 13}, convertClip);

  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  r.add("Equal", {1, 7, 11, 13, 19}, convertCompare<FP::OEQ, IP::eq, IP::eq>);
  r.add("Less", {1, 7, 9, 13}, convertCompare<FP::OLT, IP::slt, IP::ult>);
  r.add("LessOrEqual", {12, 16}, convertCompare<FP::OLE, IP::sle, IP::ule>);
  r.add("Greater", {1, 7, 9, 13}, convertCompare<FP::OGT, IP::sgt, IP::ugt>);
  r.add("GreaterOrEqual", {12, 16}, convertCompare<FP::OGE, IP::sge, IP::uge>);
  r.add("And", {1, 7}, convertLogic<arith::AndIOp>);
  r.add("Or", {1, 7}, convertLogic<arith::OrIOp>);
  r.add("Xor", {1, 7}, convertLogic<arith::XOrIOp>);
  r.add("Not", {1}, convertNot);
  r.add("BitShift", {11}, convertBitShift);
  r.add("BitwiseAnd", {18}, convertBitwise<arith::AndIOp>);
  r.add("BitwiseOr", {18}, convertBitwise<arith::OrIOp>);
  r.add("BitwiseXor", {18}, convertBitwise<arith::XOrIOp>);
  r.add("BitwiseNot", {18}, convertBitwiseNot);
  r.add("Where", {9, 16}, convertWhere);
  r.add("Cast", {1, 6, 9, 13, 19, 21, 23, 24}, convertCast);
  r.add("CastLike", {15, 19, 21, 23, 24}, convertCastLike);
}
