//===- Reduction.cpp - Reduce*, Softmax, ArgMax/ArgMin, TopK --------------===//
//
// Every reduction is a linalg.generic with reduction iterators whose init is
// a linalg.fill of the combiner's identity. f16/bf16 inputs accumulate in
// f32. What happens after the reduction (divide by the count, sqrt, log, the
// cast back) is a separate elementwise generic, and softmax-like ops are
// chains of plain generics (max, exp(x - max), sum, divide), so that the
// fusion pass can group each chain into one kernel.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include <functional>

using namespace mlir;
using namespace dlc;

namespace {

bool isFloat(Type t) { return isa<FloatType>(t); }

/// The current value of loop `dim` as an i64.
Value loopIndex(OpBuilder &b, Location loc, int64_t dim) {
  Value i = linalg::IndexOp::create(b, loc, dim);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
}

/// The loop space of a reduction over some dims of a static shape.
struct Reduction {
  SmallVector<int64_t> shape;
  SmallVector<bool> reduced;

  int64_t rank() const { return shape.size(); }
  SmallVector<int64_t> keptShape() const {
    SmallVector<int64_t> out;
    for (auto [d, r] : llvm::zip(shape, reduced))
      if (!r)
        out.push_back(d);
    return out;
  }
  /// The result shape with keepdims=1.
  SmallVector<int64_t> keepdimsShape() const {
    SmallVector<int64_t> out;
    for (auto [d, r] : llvm::zip(shape, reduced))
      out.push_back(r ? 1 : d);
    return out;
  }
  /// Number of elements combined into each result.
  int64_t count() const {
    int64_t n = 1;
    for (auto [d, r] : llvm::zip(shape, reduced))
      if (r)
        n *= d;
    return n;
  }
  AffineMap fullMap(MLIRContext *ctx) const {
    return AffineMap::getMultiDimIdentityMap(rank(), ctx);
  }
  AffineMap keptMap(MLIRContext *ctx) const {
    SmallVector<AffineExpr> exprs;
    for (auto [i, r] : llvm::enumerate(reduced))
      if (!r)
        exprs.push_back(getAffineDimExpr(i, ctx));
    return AffineMap::get(rank(), 0, exprs, ctx);
  }
  SmallVector<utils::IteratorType> iterators(bool reduce) const {
    SmallVector<utils::IteratorType> out;
    for (bool r : reduced)
      out.push_back(reduce && r ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    return out;
  }
};

/// Reduces over the reduced loops of `red`: `full` operands are indexed by
/// every loop, `kept` ones by the loops that remain; the outputs are
/// kept-shaped fills of `identities` (element types given by the attrs).
SmallVector<Value> reduceGeneric(OpBuilder &b, Location loc,
                                 const Reduction &red, ValueRange full,
                                 ValueRange kept,
                                 ArrayRef<TypedAttr> identities,
                                 GenericBody body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<GenericOperand> ins, outs;
  for (Value v : full)
    ins.push_back({v, red.fullMap(ctx)});
  for (Value v : kept)
    ins.push_back({v, red.keptMap(ctx)});
  for (TypedAttr id : identities)
    outs.push_back({createFilled(b, loc, red.keptShape(), id.getType(), id),
                    red.keptMap(ctx)});
  return buildGeneric(b, loc, ins, outs, red.iterators(/*reduce=*/true), body);
}

/// An elementwise generic over every loop of `red` (full-shaped result);
/// `kept` operands are broadcast along the reduced dims.
Value mapGeneric(OpBuilder &b, Location loc, const Reduction &red,
                 ValueRange full, ValueRange kept, Type resultType,
                 GenericBody body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<GenericOperand> ins;
  for (Value v : full)
    ins.push_back({v, red.fullMap(ctx)});
  for (Value v : kept)
    ins.push_back({v, red.keptMap(ctx)});
  GenericOperand out{createEmpty(b, loc, red.shape, resultType),
                     red.fullMap(ctx)};
  return buildGeneric(b, loc, ins, out, red.iterators(/*reduce=*/false),
                      body)[0];
}

//===--- scalar helpers ---------------------------------------------------===//

/// f16 and bf16 accumulate in f32; other types in themselves.
Type accumulatorType(Type t) {
  if (isFloat(t) && t.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(t.getContext());
  return t;
}

Value toType(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  if (t.getIntOrFloatBitWidth() > v.getType().getIntOrFloatBitWidth())
    return b.createOrFold<arith::ExtFOp>(loc, t, v);
  return b.createOrFold<arith::TruncFOp>(loc, t, v);
}

enum class Combine { Add, Mul, Max, Min };

TypedAttr identityAttr(Combine c, Type t, bool isUnsigned) {
  switch (c) {
  case Combine::Add:
    return scalarAttr(t, 0);
  case Combine::Mul:
    return scalarAttr(t, 1);
  case Combine::Max:
    return lowestValueAttr(t, isUnsigned);
  case Combine::Min:
    return highestValueAttr(t, isUnsigned);
  }
  llvm_unreachable("unknown combiner");
}

Value combine(OpBuilder &b, Location loc, Combine c, Value acc, Value v,
              bool isUnsigned) {
  bool f = isFloat(acc.getType());
  switch (c) {
  case Combine::Add:
    return f ? arith::AddFOp::create(b, loc, acc, v).getResult()
             : arith::AddIOp::create(b, loc, acc, v).getResult();
  case Combine::Mul:
    return f ? arith::MulFOp::create(b, loc, acc, v).getResult()
             : arith::MulIOp::create(b, loc, acc, v).getResult();
  case Combine::Max:
    if (f) // propagates NaN, as numpy's maximum.reduce does
      return arith::MaximumFOp::create(b, loc, acc, v);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, v).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, v).getResult();
  case Combine::Min:
    if (f)
      return arith::MinimumFOp::create(b, loc, acc, v);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, v).getResult()
                      : arith::MinSIOp::create(b, loc, acc, v).getResult();
  }
  llvm_unreachable("unknown combiner");
}

/// A single-result reduction of `x` (optionally mapped by `pre`, which also
/// sees the `kept` operands) with combiner `c` in element type `accType`.
Value reduce(OpBuilder &b, Location loc, const Reduction &red, Value x,
             ValueRange kept, Type accType, Combine c, bool isUnsigned,
             std::function<Value(OpBuilder &, Location, Value, ValueRange)>
                 pre = nullptr) {
  return reduceGeneric(
      b, loc, red, x, kept, identityAttr(c, accType, isUnsigned),
      [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange outs) {
        Value v = ins[0];
        if (isFloat(v.getType()))
          v = toType(nb, nloc, v, accType);
        if (pre)
          v = pre(nb, nloc, v, ins.drop_front());
        return SmallVector<Value>{combine(nb, nloc, c, outs[0], v, isUnsigned)};
      })[0];
}

/// An elementwise generic over operands of one (kept) shape.
Value mapKept(OpBuilder &b, Location loc, ValueRange operands, Type resultType,
              ScalarBodyFn body) {
  auto shape = cast<RankedTensorType>(operands[0].getType()).getShape();
  return buildBroadcastGeneric(b, loc, operands, shape, resultType, body);
}

/// `m` where it is finite, else 0: the shift used by log-sum-exp so that
/// rows of -inf (or +inf) do not turn into NaN through inf - inf.
Value finiteOrZero(OpBuilder &b, Location loc, Value m) {
  Type t = m.getType();
  Value inf = arith::ConstantOp::create(
      b, loc, highestValueAttr(t, /*isUnsigned=*/false));
  Value absM = math::AbsFOp::create(b, loc, m);
  Value isInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absM, inf);
  return arith::SelectOp::create(b, loc, isInf, scalarConstant(b, loc, t, 0),
                                 m);
}

//===--- Reduce* ----------------------------------------------------------===//

enum class Reduce {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// Which dims to reduce. `axesInputSince` is the opset from which axes is
/// an input rather than an attribute.
FailureOr<SmallVector<bool>> reducedDims(NodeRewriter &rw, int64_t rank,
                                         int64_t axesInputSince) {
  SmallVector<int64_t> axes;
  if (rw.version() >= axesInputSince) {
    if (rw.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> a = rw.constantInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else {
    axes = rw.getInts("axes");
  }
  if (axes.empty()) {
    bool noop = rw.getInt("noop_with_empty_axes", 0) != 0;
    return SmallVector<bool>(rank, !noop);
  }
  if (rank == 0)
    return rw.fail("axes are given but the input is a scalar");
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    FailureOr<int64_t> axis = rw.normalizeAxis(a, rank, "axes entry");
    if (failed(axis))
      return failure();
    if (reduced[*axis])
      return rw.fail("axis " + Twine(*axis) + " appears twice in axes");
    reduced[*axis] = true;
  }
  return reduced;
}

/// Largest constant an integer reduction is folded for.
constexpr int64_t kFoldElementLimit = 4096;

/// Folds Sum/Prod/Max/Min of a small integer constant, so that shape
/// arithmetic such as ReduceProd(Shape(x)) stays a constant that later
/// Reshape/Slice nodes can read. Returns null when it does not apply.
Value foldIntegerReduction(OpBuilder &b, Location loc, const Reduction &red,
                           Value x, Combine c, bool isUnsigned) {
  DenseElementsAttr cst = getDenseConstant(x);
  if (!cst || !isa<IntegerType>(cst.getElementType()) ||
      cst.getNumElements() > kFoldElementLimit)
    return {};
  auto elementType = cast<IntegerType>(cst.getElementType());
  SmallVector<int64_t> kept = red.keptShape();
  TypedAttr id = identityAttr(c, elementType, isUnsigned);
  SmallVector<APInt> acc(numElements(kept), cast<IntegerAttr>(id).getValue());
  for (auto [linear, v] : llvm::enumerate(cst.getValues<APInt>())) {
    int64_t rem = linear, out = 0, stride = 1;
    for (int64_t d = red.rank() - 1; d >= 0; --d) {
      int64_t i = rem % red.shape[d];
      rem /= red.shape[d];
      if (!red.reduced[d]) {
        out += i * stride;
        stride *= red.shape[d];
      }
    }
    APInt &a = acc[out];
    switch (c) {
    case Combine::Add:
      a += v;
      break;
    case Combine::Mul:
      a *= v;
      break;
    case Combine::Max:
      a = isUnsigned ? llvm::APIntOps::umax(a, v) : llvm::APIntOps::smax(a, v);
      break;
    case Combine::Min:
      a = isUnsigned ? llvm::APIntOps::umin(a, v) : llvm::APIntOps::smin(a, v);
      break;
    }
  }
  return createConstant(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get(kept, elementType), acc));
}

template <Reduce K> LogicalResult convertReduce(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  Type t = type.getElementType();
  bool isBool = t.isInteger(1);
  bool isUnsigned = rw.isUnsigned(0) || isBool;
  bool integerOk = K == Reduce::Sum || K == Reduce::Mean || K == Reduce::Max ||
                   K == Reduce::Min || K == Reduce::Prod || K == Reduce::L1 ||
                   K == Reduce::SumSquare;
  if (isBool && K != Reduce::Max && K != Reduce::Min)
    return rw.fail("boolean inputs are only valid for ReduceMax/ReduceMin");
  if (!isFloat(t) && !integerOk)
    return rw.unsupported("element type " + typeName(rw.onnxElementType(0)) +
                          "; this reduction is implemented for floats");

  int64_t axesInputSince = K == Reduce::Sum ? 13 : 18;
  FailureOr<SmallVector<bool>> reduced =
      reducedDims(rw, type.getRank(), axesInputSince);
  if (failed(reduced))
    return failure();
  Reduction red{llvm::to_vector(type.getShape()), *reduced};

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value x = rw.input(0);
  Type acc = accumulatorType(t);

  Combine c = Combine::Add;
  if (K == Reduce::Max)
    c = Combine::Max;
  else if (K == Reduce::Min)
    c = Combine::Min;
  else if (K == Reduce::Prod)
    c = Combine::Mul;

  std::function<Value(OpBuilder &, Location, Value, ValueRange)> pre;
  if (K == Reduce::SumSquare || K == Reduce::L2)
    pre = [](OpBuilder &nb, Location nloc, Value v, ValueRange) -> Value {
      if (isFloat(v.getType()))
        return arith::MulFOp::create(nb, nloc, v, v);
      return arith::MulIOp::create(nb, nloc, v, v);
    };
  else if (K == Reduce::L1 && !isUnsigned)
    pre = [](OpBuilder &nb, Location nloc, Value v, ValueRange) -> Value {
      if (isFloat(v.getType()))
        return math::AbsFOp::create(nb, nloc, v);
      return math::AbsIOp::create(nb, nloc, v);
    };

  SmallVector<Value> kept;
  if (K == Reduce::LogSumExp) {
    // log(sum(exp(x - m))) + m with m the (finite) max, so exp cannot
    // overflow.
    Value m = reduce(b, loc, red, x, {}, acc, Combine::Max, false);
    Value shift =
        mapKept(b, loc, m, acc, [](OpBuilder &nb, Location nloc, ValueRange a) {
          return finiteOrZero(nb, nloc, a[0]);
        });
    kept.push_back(shift);
    pre = [](OpBuilder &nb, Location nloc, Value v, ValueRange k) -> Value {
      Value d = arith::SubFOp::create(nb, nloc, v, k[0]);
      return math::ExpOp::create(nb, nloc, d);
    };
  }
  bool foldable = K == Reduce::Sum || K == Reduce::Prod || K == Reduce::Max ||
                  K == Reduce::Min;
  Value r =
      foldable ? foldIntegerReduction(b, loc, red, x, c, isUnsigned) : Value();
  if (!r)
    r = reduce(b, loc, red, x, kept, acc, c, isUnsigned, pre);

  bool needsPost = acc != t || K == Reduce::Mean || K == Reduce::L2 ||
                   K == Reduce::LogSum || K == Reduce::LogSumExp;
  if (needsPost) {
    SmallVector<Value> operands = {r};
    operands.append(kept);
    int64_t count = red.count();
    r = mapKept(
        b, loc, operands, t, [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value v = a[0];
          switch (K) {
          case Reduce::Mean:
            if (isFloat(acc))
              v = arith::DivFOp::create(nb, nloc, v,
                                        scalarConstant(nb, nloc, acc, count));
            else if (isUnsigned)
              v = arith::DivUIOp::create(nb, nloc, v,
                                         scalarConstant(nb, nloc, acc, count));
            else
              v = arith::DivSIOp::create(nb, nloc, v,
                                         scalarConstant(nb, nloc, acc, count));
            break;
          case Reduce::L2:
            v = math::SqrtOp::create(nb, nloc, v);
            break;
          case Reduce::LogSum:
            v = math::LogOp::create(nb, nloc, v);
            break;
          case Reduce::LogSumExp:
            v = arith::AddFOp::create(nb, nloc,
                                      math::LogOp::create(nb, nloc, v), a[1]);
            break;
          default:
            break;
          }
          return isFloat(t) ? toType(nb, nloc, v, t) : v;
        });
  }
  if (rw.getInt("keepdims", 1) != 0)
    r = reshapeTo(b, loc, r, red.keepdimsShape());
  return rw.replace(r);
}

//===--- Softmax, LogSoftmax, Hardmax -------------------------------------===//

/// The dims that Softmax-like ops normalize over: before opset 13 the input
/// is coerced to 2-D at `axis`, i.e. every dim from `axis` on; from 13 on
/// only `axis`.
FailureOr<Reduction> softmaxDims(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  if (!isFloat(type.getElementType()))
    return rw.fail("the input must be a float tensor");
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("the input must have rank >= 1");
  bool coerce2D = rw.version() < 13;
  FailureOr<int64_t> axis =
      rw.normalizeAxis(rw.getInt("axis", coerce2D ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Reduction red{llvm::to_vector(type.getShape()), SmallVector<bool>(rank)};
  for (int64_t d = 0; d < rank; ++d)
    red.reduced[d] = coerce2D ? d >= *axis : d == *axis;
  return red;
}

template <bool Log> LogicalResult convertSoftmax(NodeRewriter &rw) {
  FailureOr<Reduction> red = softmaxDims(rw);
  if (failed(red))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value x = rw.input(0);
  Type t = rw.inputType(0).getElementType();
  Type acc = accumulatorType(t);

  Value m = reduce(b, loc, *red, x, {}, acc, Combine::Max, false);
  auto shifted = [acc](OpBuilder &nb, Location nloc, Value v, Value max) {
    return arith::SubFOp::create(nb, nloc, toType(nb, nloc, v, acc), max)
        .getResult();
  };
  if (Log) {
    // x - m - log(sum(exp(x - m)))
    Value s = reduce(b, loc, *red, x, m, acc, Combine::Add, false,
                     [&](OpBuilder &nb, Location nloc, Value v, ValueRange k) {
                       Value d = arith::SubFOp::create(nb, nloc, v, k[0]);
                       return math::ExpOp::create(nb, nloc, d).getResult();
                     });
    Value y = mapGeneric(
        b, loc, *red, x, {m, s}, t,
        [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange) {
          Value d = shifted(nb, nloc, ins[0], ins[1]);
          Value l = math::LogOp::create(nb, nloc, ins[2]);
          Value r = arith::SubFOp::create(nb, nloc, d, l);
          return SmallVector<Value>{toType(nb, nloc, r, t)};
        });
    return rw.replace(y);
  }
  Value e =
      mapGeneric(b, loc, *red, x, m, acc,
                 [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange) {
                   Value d = shifted(nb, nloc, ins[0], ins[1]);
                   return SmallVector<Value>{math::ExpOp::create(nb, nloc, d)};
                 });
  Value s = reduce(b, loc, *red, e, {}, acc, Combine::Add, false);
  Value y =
      mapGeneric(b, loc, *red, e, s, t,
                 [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange) {
                   Value q = arith::DivFOp::create(nb, nloc, ins[0], ins[1]);
                   return SmallVector<Value>{toType(nb, nloc, q, t)};
                 });
  return rw.replace(y);
}

/// The row-major linear index of the current iteration within the reduced
/// dims of `red` (the position along the coerced 2-D row).
Value reducedLinearIndex(OpBuilder &b, Location loc, const Reduction &red) {
  Value index;
  for (int64_t d = 0; d < red.rank(); ++d) {
    if (!red.reduced[d])
      continue;
    Value i = loopIndex(b, loc, d);
    if (!index) {
      index = i;
      continue;
    }
    Value extent = scalarConstant(b, loc, b.getI64Type(), red.shape[d]);
    index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, index, extent), i);
  }
  return index;
}

LogicalResult convertHardmax(NodeRewriter &rw) {
  FailureOr<Reduction> red = softmaxDims(rw);
  if (failed(red))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = rw.inputType(0).getElementType();
  // The first position of the max of each row (strict > keeps the first).
  Value position = reduceGeneric(
      b, loc, *red, rw.input(0), {},
      {lowestValueAttr(t, false), b.getI64IntegerAttr(0)},
      [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange outs) {
        Value better = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OGT, ins[0], outs[0]);
        Value index = reducedLinearIndex(nb, nloc, *red);
        return SmallVector<Value>{
            arith::SelectOp::create(nb, nloc, better, ins[0], outs[0]),
            arith::SelectOp::create(nb, nloc, better, index, outs[1])};
      })[1];
  Value y =
      mapGeneric(b, loc, *red, {}, position, t,
                 [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange) {
                   Value here = reducedLinearIndex(nb, nloc, *red);
                   Value hit = arith::CmpIOp::create(
                       nb, nloc, arith::CmpIPredicate::eq, here, ins[0]);
                   return SmallVector<Value>{arith::SelectOp::create(
                       nb, nloc, hit, scalarConstant(nb, nloc, t, 1),
                       scalarConstant(nb, nloc, t, 0))};
                 });
  return rw.replace(y);
}

//===--- ArgMax, ArgMin ---------------------------------------------------===//

template <bool Max> LogicalResult convertArg(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  Type t = type.getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  if (t.isInteger(1))
    return rw.fail("boolean inputs are not valid");
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("the input must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  bool last = rw.getInt("select_last_index", 0) != 0;
  Reduction red{llvm::to_vector(type.getShape()), SmallVector<bool>(rank)};
  red.reduced[*axis] = true;

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  // Strict comparison keeps the first extreme, non-strict the last; the
  // init (the worst value, index 0) is right even for rows of that value.
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  FP fp = Max ? (last ? FP::OGE : FP::OGT) : (last ? FP::OLE : FP::OLT);
  IP ip = Max ? (last ? (isUnsigned ? IP::uge : IP::sge)
                      : (isUnsigned ? IP::ugt : IP::sgt))
              : (last ? (isUnsigned ? IP::ule : IP::sle)
                      : (isUnsigned ? IP::ult : IP::slt));
  TypedAttr worst =
      Max ? lowestValueAttr(t, isUnsigned) : highestValueAttr(t, isUnsigned);
  Value index = reduceGeneric(
      b, loc, red, rw.input(0), {}, {worst, b.getI64IntegerAttr(0)},
      [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange outs) {
        Value better =
            isFloat(t) ? arith::CmpFOp::create(nb, nloc, fp, ins[0], outs[0])
                             .getResult()
                       : arith::CmpIOp::create(nb, nloc, ip, ins[0], outs[0])
                             .getResult();
        Value i = loopIndex(nb, nloc, *axis);
        return SmallVector<Value>{
            arith::SelectOp::create(nb, nloc, better, ins[0], outs[0]),
            arith::SelectOp::create(nb, nloc, better, i, outs[1])};
      })[1];
  if (rw.getInt("keepdims", 1) != 0)
    index = reshapeTo(b, loc, index, red.keepdimsShape());
  return rw.replace(index);
}

//===--- TopK -------------------------------------------------------------===//

/// a > b in a total order where NaN is above every number and equal to
/// itself, so that ranks form a permutation even with NaNs.
Value greaterTotal(OpBuilder &b, Location loc, Value x, Value y,
                   bool isUnsigned) {
  if (!isFloat(x.getType()))
    return arith::CmpIOp::create(b, loc,
                                 isUnsigned ? arith::CmpIPredicate::ugt
                                            : arith::CmpIPredicate::sgt,
                                 x, y);
  using FP = arith::CmpFPredicate;
  Value gt = arith::CmpFOp::create(b, loc, FP::OGT, x, y);
  Value xNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value yNum = arith::CmpFOp::create(b, loc, FP::ORD, y, y);
  Value nanAbove = arith::AndIOp::create(b, loc, xNaN, yNum);
  return arith::OrIOp::create(b, loc, gt, nanAbove);
}

Value equalTotal(OpBuilder &b, Location loc, Value x, Value y) {
  if (!isFloat(x.getType()))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  using FP = arith::CmpFPredicate;
  Value eq = arith::CmpFOp::create(b, loc, FP::OEQ, x, y);
  Value xNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value yNaN = arith::CmpFOp::create(b, loc, FP::UNO, y, y);
  return arith::OrIOp::create(b, loc, eq,
                              arith::AndIOp::create(b, loc, xNaN, yNaN));
}

// TopK is a rank-based selection: rank(i) counts the elements that come
// before element i in the output order (better value, or equal value and
// lower index), which makes ranks a permutation of 0..n-1; output slot r
// then takes the element of rank r. Cost per row: n^2 comparisons plus
// K*n selects, all data-parallel and without sorting networks or loops.
// This is fine for the usual K/n (classification heads, n <= a few
// thousand); for n in the tens of thousands a dedicated sort or
// K-pass formulation at codegen time would be cheaper.
LogicalResult convertTopK(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  Type t = type.getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  if (t.isInteger(1))
    return rw.fail("boolean inputs are not valid");
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("the input must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  int64_t k;
  if (rw.version() < 10) {
    std::optional<int64_t> attr = rw.getOptionalInt("k");
    if (!attr)
      return rw.fail("missing required attribute 'k'");
    k = *attr;
  } else {
    FailureOr<SmallVector<int64_t>> kv = rw.constantInts(1, "K");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return rw.fail("K must have exactly one element");
    k = kv->front();
  }
  int64_t n = type.getDimSize(*axis);
  if (k < 0 || k > n)
    return rw.fail("K = " + Twine(k) + " is out of range [0, " + Twine(n) +
                   "] for axis " + Twine(*axis));
  bool largest = rw.getInt("largest", 1) != 0;
  // sorted=0 leaves the order unspecified; sorted order is a valid choice.

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type i64 = b.getI64Type();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<AffineExpr> outer, alongLast;
  for (int64_t d = 0; d < rank; ++d) {
    outer.push_back(getAffineDimExpr(d, ctx));
    alongLast.push_back(getAffineDimExpr(d == *axis ? rank : d, ctx));
  }
  AffineMap outerMap = AffineMap::get(rank + 1, 0, outer, ctx);
  AffineMap lastMap = AffineMap::get(rank + 1, 0, alongLast, ctx);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);

  // rank[.., i, ..] = #{j : x[.., j, ..] comes before x[.., i, ..]}
  Value x = rw.input(0);
  Value ranks = buildGeneric(
      b, loc, {{x, outerMap}, {x, lastMap}},
      {{createFilled(b, loc, shape, i64, b.getI64IntegerAttr(0)), outerMap}},
      iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange outs) {
        Value xi = ins[0], xj = ins[1];
        Value better = largest ? greaterTotal(nb, nloc, xj, xi, isUnsigned)
                               : greaterTotal(nb, nloc, xi, xj, isUnsigned);
        Value tie = equalTotal(nb, nloc, xj, xi);
        Value jFirst =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult,
                                  linalg::IndexOp::create(nb, nloc, rank),
                                  linalg::IndexOp::create(nb, nloc, *axis));
        Value before = arith::OrIOp::create(
            nb, nloc, better, arith::AndIOp::create(nb, nloc, tie, jFirst));
        Value one = arith::ExtUIOp::create(nb, nloc, i64, before);
        return SmallVector<Value>{
            arith::AddIOp::create(nb, nloc, outs[0], one)};
      })[0];

  // Output slot r (loop `axis`) picks the element i (loop `rank`) of rank r.
  SmallVector<int64_t> outShape = shape;
  outShape[*axis] = k;
  SmallVector<Value> results = buildGeneric(
      b, loc, {{x, lastMap}, {ranks, lastMap}},
      {{createFilled(b, loc, outShape, t, scalarAttr(t, 0)), outerMap},
       {createFilled(b, loc, outShape, i64, b.getI64IntegerAttr(0)), outerMap}},
      iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange ins, ValueRange outs) {
        Value slot = loopIndex(nb, nloc, *axis);
        Value hit = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                          ins[1], slot);
        Value i = loopIndex(nb, nloc, rank);
        return SmallVector<Value>{
            arith::SelectOp::create(nb, nloc, hit, ins[0], outs[0]),
            arith::SelectOp::create(nb, nloc, hit, i, outs[1])};
      });
  return rw.replace(results, {rw.onnxElementType(0), i64});
}

} // namespace

void dlc::populateReductionHandlers(HandlerRegistry &r) {
  r.add("ReduceSum", {1, 11, 13}, convertReduce<Reduce::Sum>);
  r.add("ReduceMean", {1, 11, 13, 18}, convertReduce<Reduce::Mean>);
  r.add("ReduceMax", {1, 11, 12, 13, 18, 20}, convertReduce<Reduce::Max>);
  r.add("ReduceMin", {1, 11, 12, 13, 18, 20}, convertReduce<Reduce::Min>);
  r.add("ReduceProd", {1, 11, 13, 18}, convertReduce<Reduce::Prod>);
  r.add("ReduceL1", {1, 11, 13, 18}, convertReduce<Reduce::L1>);
  r.add("ReduceL2", {1, 11, 13, 18}, convertReduce<Reduce::L2>);
  r.add("ReduceLogSum", {1, 11, 13, 18}, convertReduce<Reduce::LogSum>);
  r.add("ReduceLogSumExp", {1, 11, 13, 18}, convertReduce<Reduce::LogSumExp>);
  r.add("ReduceSumSquare", {1, 11, 13, 18}, convertReduce<Reduce::SumSquare>);
  r.add("Softmax", {1, 11, 13}, convertSoftmax<false>);
  r.add("LogSoftmax", {1, 11, 13}, convertSoftmax<true>);
  r.add("Hardmax", {1, 11, 13}, convertHardmax);
  r.add("ArgMax", {1, 11, 12, 13}, convertArg<true>);
  r.add("ArgMin", {1, 11, 12, 13}, convertArg<false>);
  r.add("TopK", {1, 10, 11, 24}, convertTopK);
}
