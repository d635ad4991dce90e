//===- Quantization.cpp - Q/DQ and integer convolution/matmul -------------===//
//
// QuantizeLinear and DequantizeLinear are standalone elementwise generics
// (per-tensor, per-axis and blocked scales are indexing maps); a graph pass
// later folds DQ -> op -> Q chains into integer kernels.
//
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv stay integer:
// each is a generic contraction over the 8-bit inputs widened to i32 inside
// the body (extsi/extui by ONNX signedness), with the zero points subtracted
// there as the spec writes it, (a - a_zp) * (b - b_zp), and an i32
// accumulator. Zero points that are known to be zero are left out, so the
// common symmetric case is a plain widening contraction. QLinear* then
// requantize in a separate generic: float(acc) * (a_scale * b_scale /
// y_scale) in f32, round half to even, add the zero point, clamp.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "dlc/Dialect/DLC/IR/DLC.h"

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace dlc;

namespace {

//===--- scalar helpers ---------------------------------------------------===//

Value toF32(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  Type f32 = b.getF32Type();
  Type t = v.getType();
  if (t == f32)
    return v;
  if (isa<FloatType>(t))
    return arith::ExtFOp::create(b, loc, f32, v);
  if (isUnsigned)
    return arith::UIToFPOp::create(b, loc, f32, v);
  return arith::SIToFPOp::create(b, loc, f32, v);
}

/// Rounds an f32 to the precision of `t` (f16/bf16) and back, so that an
/// f32 operation followed by this is the correctly rounded `t` operation.
Value roundTo(OpBuilder &b, Location loc, Value v, Type t) {
  if (t == v.getType())
    return v;
  Value narrow = arith::TruncFOp::create(b, loc, t, v);
  return arith::ExtFOp::create(b, loc, v.getType(), narrow);
}

Value widenToI32(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  Type i32 = b.getI32Type();
  if (v.getType() == i32)
    return v;
  if (isUnsigned)
    return arith::ExtUIOp::create(b, loc, i32, v);
  return arith::ExtSIOp::create(b, loc, i32, v);
}

/// The range of a quantized integer type.
std::pair<double, double> quantRange(IntegerType t) {
  unsigned w = t.getWidth();
  if (t.isUnsigned())
    return {0.0, static_cast<double>((uint64_t(1) << w) - 1)};
  return {-static_cast<double>(uint64_t(1) << (w - 1)),
          static_cast<double>((uint64_t(1) << (w - 1)) - 1)};
}

/// saturate(q + zp) for an already rounded f32 `q`, converted to `qType`
/// (an ONNX integer type; the result is its signless form). NaN saturates
/// to the low end rather than being undefined.
Value saturate(OpBuilder &b, Location loc, Value q, Value zpF32,
               IntegerType qType) {
  if (zpF32)
    q = arith::AddFOp::create(b, loc, q, zpF32);
  auto [lo, hi] = quantRange(qType);
  Type f32 = b.getF32Type();
  q = arith::MaxNumFOp::create(b, loc, q, scalarConstant(b, loc, f32, lo));
  q = arith::MinNumFOp::create(b, loc, q, scalarConstant(b, loc, f32, hi));
  Type dst = signlessType(qType);
  if (qType.isUnsigned())
    return arith::FPToUIOp::create(b, loc, dst, q);
  return arith::FPToSIOp::create(b, loc, dst, q);
}

/// The quantized integer types dlc handles: 8-bit from the start, 16- and
/// 4-bit from opset 21.
LogicalResult checkQuantType(NodeRewriter &rw, Type onnxType, StringRef what) {
  // 8-bit floats from opset 19, FLOAT4E2M1 from 23 (held as their bits).
  if (isFloatHeldAsBits(onnxType)) {
    int64_t since = onnxType.getIntOrFloatBitWidth() == 4 ? 23 : 19;
    if (rw.version() >= since)
      return success();
    return rw.unsupported(what + " of type " + typeName(onnxType) +
                          " before opset " + Twine(since));
  }
  auto it = dyn_cast<IntegerType>(onnxType);
  unsigned w = it ? it.getWidth() : 0;
  if (w == 8 || ((w == 16 || w == 4) && rw.version() >= 21))
    return success();
  return rw.unsupported(what + " of type " + typeName(onnxType) +
                        (w == 16 || w == 4
                             ? "; 16- and 4-bit quantization need opset 21"
                             : "; expected an 8-bit integer type (or 16/4 "
                               "bits from opset 21)"));
}

/// True when `v` is a constant of zeros.
bool isZeroConstant(Value v) {
  DenseElementsAttr c = getDenseConstant(v);
  if (!c || !isa<IntegerType>(c.getElementType()))
    return false;
  return llvm::all_of(c.getValues<APInt>(),
                      [](const APInt &i) { return i.isZero(); });
}

//===--- QuantizeLinear / DequantizeLinear --------------------------------===//

/// The scale (input 1) and optional zero point (input 2) of a Q/DQ node
/// and the map from the data's loops to their indices: per tensor, per
/// axis, or blocked. The zero point is null when absent or a zero constant.
struct QuantOperands {
  Value scale, zp;
  AffineMap map;
};

FailureOr<QuantOperands> quantOperands(NodeRewriter &rw) {
  RankedTensorType xType = rw.inputType(0), sType = rw.inputType(1);
  MLIRContext *ctx = rw.ctx();
  int64_t rank = xType.getRank();
  QuantOperands q{rw.input(1), Value(), AffineMap()};
  if (rw.hasInput(2) && !isZeroConstant(rw.input(2)))
    q.zp = rw.input(2);
  int64_t blockSize = rw.version() >= 21 ? rw.getInt("block_size", 0) : 0;
  if (blockSize < 0)
    return rw.fail("block_size must not be negative");
  // Per tensor: exporters write the scalar as [] or [1], not always alike
  // for the scale and the zero point.
  if (sType.getNumElements() == 1 && sType.getRank() <= 1 && !blockSize) {
    if (rw.hasInput(2) && rw.inputType(2).getNumElements() != 1)
      return rw.fail("the scale is per tensor but the zero point has shape " +
                     typeName(rw.inputType(2)));
    q.scale = reshapeTo(rw.b(), rw.loc(), q.scale, {});
    if (q.zp)
      q.zp = reshapeTo(rw.b(), rw.loc(), q.zp, {});
    q.map = AffineMap::get(rank, 0, {}, ctx);
    return q;
  }
  if (rw.hasInput(2) && rw.inputType(2).getShape() != sType.getShape())
    return rw.fail("the scale and the zero point have different shapes");
  if (rw.version() < 13)
    return rw.unsupported("per-axis scales need opset 13 (the scale has " +
                          Twine(sType.getNumElements()) + " elements)");
  if (rank == 0)
    return rw.fail("a scalar input needs a scalar scale");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  int64_t dim = xType.getDimSize(*axis);
  if (!blockSize) {
    if (sType.getRank() != 1 || sType.getDimSize(0) != dim)
      return rw.fail(
          "the scale has shape " + typeName(sType) +
          "; a per-axis scale along axis " + Twine(*axis) +
          " must have shape [" + Twine(dim) + "]" +
          (rw.version() >= 21 ? " (blocked scales need block_size > 0)" : ""));
    q.map = AffineMap::get(rank, 0, getAffineDimExpr(*axis, ctx), ctx);
    return q;
  }
  // Blocked: the scale's shape is the data's with dim `axis` divided into
  // ceil(dim / block_size) blocks.
  SmallVector<AffineExpr> exprs;
  bool ok = sType.getRank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d) {
    int64_t expected = d == *axis
                           ? (xType.getDimSize(d) + blockSize - 1) / blockSize
                           : xType.getDimSize(d);
    ok = sType.getDimSize(d) == expected;
    AffineExpr e = getAffineDimExpr(d, ctx);
    exprs.push_back(d == *axis ? e.floorDiv(blockSize) : e);
  }
  if (!ok)
    return rw.fail("the scale has shape " + typeName(sType) +
                   "; blocked quantization of " + typeName(xType) +
                   " along axis " + Twine(*axis) + " with block_size " +
                   Twine(blockSize) +
                   " needs the data's shape with that dim divided into "
                   "ceil(" +
                   Twine(dim) + "/" + Twine(blockSize) + ") blocks");
  q.map = AffineMap::get(rank, 0, exprs, ctx);
  return q;
}

/// A float type from an ONNX data type attribute; null if not a float dlc
/// handles.
FloatType floatFromDataType(MLIRContext *ctx, int64_t dataType) {
  auto t = dyn_cast_or_null<FloatType>(onnx::getElementType(ctx, dataType));
  if (t && t.getWidth() <= 32)
    return t;
  return {};
}

LogicalResult convertQuantizeLinear(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "x")) || failed(rw.requireInput(1, "y_scale")))
    return failure();
  Type xType = rw.inputType(0).getElementType();
  Type sType = rw.inputType(1).getElementType();
  if (!(isa<FloatType>(xType) && xType.getIntOrFloatBitWidth() <= 32) &&
      !rw.onnxElementType(0).isSignlessInteger(32))
    return rw.fail("x must be an f32, f16, bf16 or int32 tensor, not " +
                   typeName(rw.onnxElementType(0)));
  if (!isa<FloatType>(sType) || sType.getIntOrFloatBitWidth() > 32)
    return rw.unsupported("y_scale of type " + typeName(sType) +
                          "; expected f32, f16 or bf16");
  if (rw.version() < 23 && isa<FloatType>(xType) && xType != sType)
    return rw.fail("x and y_scale must have the same type before opset 23");

  // The output type: the zero point's, else output_dtype, else uint8.
  Type qType;
  std::optional<int64_t> outputDtype =
      rw.version() >= 21 ? rw.getOptionalInt("output_dtype") : std::nullopt;
  if (outputDtype && *outputDtype != 0) {
    qType = onnx::getElementType(rw.ctx(), *outputDtype);
    if (!qType)
      return rw.unsupported("output_dtype " +
                            onnx::getDataTypeName(*outputDtype));
  }
  if (rw.hasInput(2)) {
    if (qType && qType != rw.onnxElementType(2))
      return rw.fail("output_dtype (" + typeName(qType) +
                     ") differs from the zero point's type (" +
                     typeName(rw.onnxElementType(2)) + ")");
    qType = rw.onnxElementType(2);
  }
  if (!qType)
    qType = IntegerType::get(rw.ctx(), 8, IntegerType::Unsigned);
  if (failed(checkQuantType(rw, qType, "the output")))
    return failure();
  auto qInt = dyn_cast<IntegerType>(qType);
  // 8- and 4-bit float results: x / y_scale (+ the zero point, zero for
  // them) rounded to the format, saturating unless `saturate` is 0.
  auto qFloat = dyn_cast<FloatType>(qType);
  bool saturating = rw.getInt("saturate", 1) != 0;

  // The division runs in the precision attribute's type, else the scale's.
  Type precision = sType;
  if (rw.version() >= 23) {
    if (int64_t p = rw.getInt("precision", 0)) {
      precision = floatFromDataType(rw.ctx(), p);
      if (!precision)
        return rw.unsupported("precision " + onnx::getDataTypeName(p));
    }
  }

  FailureOr<QuantOperands> qo = quantOperands(rw);
  if (failed(qo))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  RankedTensorType type = rw.inputType(0);
  MLIRContext *ctx = rw.ctx();
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  SmallVector<GenericOperand> ins = {{rw.input(0), id}, {qo->scale, qo->map}};
  bool hasZp = bool(qo->zp);
  if (hasZp)
    ins.push_back({qo->zp, qo->map});
  Value init = createEmpty(b, loc, type.getShape(), signlessType(qType));
  Value y = buildGeneric(
      b, loc, ins, {{init, id}},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        // x and the scale are brought to the precision type, divided in
        // f32 and rounded to it: the correctly rounded division in that
        // type (f32 has more than twice the bits of f16/bf16).
        Value x = roundTo(nb, nloc, toF32(nb, nloc, a[0], false), precision);
        Value s = roundTo(nb, nloc, toF32(nb, nloc, a[1], false), precision);
        Value q =
            roundTo(nb, nloc, arith::DivFOp::create(nb, nloc, x, s), precision);
        if (qFloat) {
          q = toF32(nb, nloc, q, false);
          if (hasZp)
            q = arith::AddFOp::create(nb, nloc, q,
                                      decodeFloatBits(nb, nloc, a[2], qFloat));
          return SmallVector<Value>{
              encodeFloatBits(nb, nloc, q, qFloat, saturating)};
        }
        q = math::RoundEvenOp::create(nb, nloc, q);
        Value zp = hasZp ? toF32(nb, nloc, a[2], qInt.isUnsigned()) : Value();
        return SmallVector<Value>{saturate(nb, nloc, q, zp, qInt)};
      })[0];
  return rw.replace(y, {qType});
}

LogicalResult convertDequantizeLinear(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "x")) || failed(rw.requireInput(1, "x_scale")))
    return failure();
  Type xOnnx = rw.onnxElementType(0);
  bool isUnsigned = rw.isUnsigned(0);
  if (!xOnnx.isSignlessInteger(32) && failed(checkQuantType(rw, xOnnx, "x")))
    return failure();
  if (rw.hasInput(2) && rw.onnxElementType(2) != xOnnx)
    return rw.fail("x (" + typeName(xOnnx) + ") and x_zero_point (" +
                   typeName(rw.onnxElementType(2)) +
                   ") must have the same type");
  Type sType = rw.inputType(1).getElementType();
  if (!isa<FloatType>(sType) || sType.getIntOrFloatBitWidth() > 32)
    return rw.unsupported("x_scale of type " + typeName(sType) +
                          "; expected f32, f16 or bf16");
  Type yType = sType;
  if (rw.version() >= 23) {
    if (int64_t d = rw.getInt("output_dtype", 0)) {
      yType = floatFromDataType(rw.ctx(), d);
      if (!yType)
        return rw.unsupported("output_dtype " + onnx::getDataTypeName(d));
    }
  }

  FailureOr<QuantOperands> qo = quantOperands(rw);
  if (failed(qo))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  RankedTensorType type = rw.inputType(0);
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), rw.ctx());
  SmallVector<GenericOperand> ins = {{rw.input(0), id}, {qo->scale, qo->map}};
  bool hasZp = bool(qo->zp);
  if (hasZp)
    ins.push_back({qo->zp, qo->map});
  Value init = createEmpty(b, loc, type.getShape(), yType);
  Value y = buildGeneric(
      b, loc, ins, {{init, id}},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        // (x - zp) in f32 is exact for the 4..16-bit types and matches
        // the reference (float(x) - float(zp)) for int32.
        auto toFloat = [&](Value v) {
          if (auto bits = dyn_cast<FloatType>(xOnnx); isFloatHeldAsBits(bits))
            return decodeFloatBits(nb, nloc, v, bits);
          return toF32(nb, nloc, v, isUnsigned);
        };
        Value x = toFloat(a[0]);
        if (hasZp)
          x = arith::SubFOp::create(nb, nloc, x, toFloat(a[2]));
        Value y =
            arith::MulFOp::create(nb, nloc, x, toF32(nb, nloc, a[1], false));
        if (yType != y.getType())
          y = arith::TruncFOp::create(nb, nloc, yType, y);
        return SmallVector<Value>{y};
      })[0];
  return rw.replace(y);
}

//===--- integer contractions ---------------------------------------------===//

} // namespace

Value dlc::integerContraction(OpBuilder &b, Location loc,
                              const IntegerOperand &lhs,
                              const IntegerOperand &rhs,
                              ArrayRef<int64_t> outShape, AffineMap outMap,
                              ArrayRef<utils::IteratorType> iterators) {
  Type i32 = b.getI32Type();
  SmallVector<GenericOperand> ins = {{lhs.data, lhs.map}, {rhs.data, rhs.map}};
  int lhsZp = -1, rhsZp = -1;
  if (lhs.zp) {
    lhsZp = ins.size();
    ins.push_back({lhs.zp, lhs.zpMap});
  }
  if (rhs.zp) {
    rhsZp = ins.size();
    ins.push_back({rhs.zp, rhs.zpMap});
  }
  Value init = createFilled(b, loc, outShape, i32, b.getI32IntegerAttr(0));
  return buildGeneric(
      b, loc, ins, {{init, outMap}}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange outs) {
        Value l = widenToI32(nb, nloc, a[0], lhs.isUnsigned);
        if (lhsZp >= 0)
          l = arith::SubIOp::create(
              nb, nloc, l, widenToI32(nb, nloc, a[lhsZp], lhs.isUnsigned));
        Value r = widenToI32(nb, nloc, a[1], rhs.isUnsigned);
        if (rhsZp >= 0)
          r = arith::SubIOp::create(
              nb, nloc, r, widenToI32(nb, nloc, a[rhsZp], rhs.isUnsigned));
        Value p = arith::MulIOp::create(nb, nloc, l, r);
        return SmallVector<Value>{arith::AddIOp::create(nb, nloc, outs[0], p)};
      })[0];
}

namespace {

/// Checks that input `i` is an 8-bit integer tensor.
LogicalResult require8Bit(NodeRewriter &rw, unsigned i, StringRef what) {
  if (failed(rw.requireInput(i, what)))
    return failure();
  if (rw.inputType(i).getElementType().isInteger(8))
    return success();
  return rw.fail(what + " must be int8 or uint8, not " +
                 typeName(rw.onnxElementType(i)));
}

/// Which vectors a scale or zero point may be besides a per-tensor scalar.
enum class Vector {
  None,
  Row,     ///< per row of a matmul operand: [M] or [..., M, 1]
  Column,  ///< per column of a matmul operand: [N] or [..., 1, N]
  Channel, ///< per output channel of a convolution: [M]
};

/// A scale or zero point (input `i`) that is per tensor or, as `kind`
/// allows, a vector of `n`. Returns it reshaped to rank 0 or [n]; null when
/// absent, or a zero constant and `dropZero`.
FailureOr<Value> perTensorOrVector(NodeRewriter &rw, unsigned i, int64_t n,
                                   StringRef what, Vector kind, bool dropZero) {
  if (!rw.hasInput(i))
    return Value();
  Value v = rw.input(i);
  if (dropZero && isZeroConstant(v))
    return Value();
  RankedTensorType t = rw.inputType(i);
  if (t.getNumElements() == 1)
    return reshapeTo(rw.b(), rw.loc(), v, {});
  ArrayRef<int64_t> shape = t.getShape();
  int64_t rank = shape.size();
  auto onlyDim = [&](int64_t d) {
    for (int64_t j = 0; j < rank; ++j)
      if ((j == d) != (shape[j] != 1))
        return false;
    return true;
  };
  bool ok = shape == ArrayRef<int64_t>(n) && kind != Vector::None;
  if (kind == Vector::Row && rank >= 2)
    ok = shape[rank - 2] == n && onlyDim(rank - 2);
  if (kind == Vector::Column && rank >= 2)
    ok = shape[rank - 1] == n && onlyDim(rank - 1);
  if (ok)
    return reshapeTo(rw.b(), rw.loc(), v, {n});
  std::string expected = "one element";
  if (kind == Vector::Row)
    expected += " or shape [" + std::to_string(n) + "] or [..., " +
                std::to_string(n) + ", 1] (per row)";
  else if (kind == Vector::Column)
    expected += " or shape [" + std::to_string(n) + "] or [..., 1, " +
                std::to_string(n) + "] (per column)";
  else if (kind == Vector::Channel)
    expected += " or shape [" + std::to_string(n) + "] (per output channel)";
  return rw.fail(what + " has shape " + typeName(t) + "; expected " + expected);
}

/// A zero point (input `zpIdx`, if given) has its operand's ONNX type.
LogicalResult checkZeroPointType(NodeRewriter &rw, unsigned zpIdx,
                                 StringRef zpName, unsigned dataIdx,
                                 StringRef dataName) {
  if (!rw.hasInput(zpIdx) ||
      rw.onnxElementType(zpIdx) == rw.onnxElementType(dataIdx))
    return success();
  return rw.fail(zpName + " (" + typeName(rw.onnxElementType(zpIdx)) +
                 ") must have the type of " + dataName + " (" +
                 typeName(rw.onnxElementType(dataIdx)) + ")");
}

/// Maps a per-tensor (rank 0) or vector value onto loop `dim`.
AffineMap vectorMap(Value v, unsigned numLoops, unsigned dim,
                    MLIRContext *ctx) {
  if (cast<RankedTensorType>(v.getType()).getRank() == 0)
    return AffineMap::get(numLoops, 0, {}, ctx);
  return AffineMap::get(numLoops, 0, getAffineDimExpr(dim, ctx), ctx);
}

//===--- matmul -----------------------------------------------------------===//

/// The integer product of inputs `aIdx` and `bIdx` with numpy matmul
/// semantics (1-D promotion, broadcast batch dims), zero points from
/// `aZpIdx` (per tensor or per row of A) and `bZpIdx` (per tensor or per
/// column of B).
struct MatmulResult {
  Value acc;                  ///< i32, [batch..., M, N]
  SmallVector<int64_t> shape; ///< the ONNX result shape
};

FailureOr<MatmulResult> integerMatmul(NodeRewriter &rw, unsigned aIdx,
                                      unsigned aZpIdx, unsigned bIdx,
                                      unsigned bZpIdx) {
  if (failed(require8Bit(rw, aIdx, "A")) || failed(require8Bit(rw, bIdx, "B")))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Value a = rw.input(aIdx), bv = rw.input(bIdx);
  SmallVector<int64_t> aShape(rw.inputType(aIdx).getShape());
  SmallVector<int64_t> bShape(rw.inputType(bIdx).getShape());
  if (aShape.empty() || bShape.empty())
    return rw.fail("matmul operands must have rank >= 1");
  bool aVec = aShape.size() == 1, bVec = bShape.size() == 1;
  if (aVec) {
    aShape.insert(aShape.begin(), 1);
    a = reshapeTo(b, loc, a, aShape);
  }
  if (bVec) {
    bShape.push_back(1);
    bv = reshapeTo(b, loc, bv, bShape);
  }
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    return rw.fail("inner dimensions differ: A has " + Twine(k) +
                   " columns, B has " + Twine(bShape[bShape.size() - 2]) +
                   " rows");
  std::string error;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes({SmallVector<int64_t>(ArrayRef(aShape).drop_back(2)),
                       SmallVector<int64_t>(ArrayRef(bShape).drop_back(2))},
                      error);
  if (failed(batch))
    return rw.fail("batch dims: " + error);

  // Loops: batch..., m, n, k.
  unsigned nb = batch->size(), numLoops = nb + 3;
  unsigned mLoop = nb, nLoop = nb + 1, kLoop = nb + 2;
  auto operandMap = [&](ArrayRef<int64_t> shape, unsigned rowLoop,
                        unsigned colLoop) {
    SmallVector<AffineExpr> exprs;
    int64_t offset = nb - (shape.size() - 2);
    for (int64_t d = 0; d + 2 < static_cast<int64_t>(shape.size()); ++d)
      exprs.push_back(shape[d] == 1 && (*batch)[offset + d] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(offset + d, ctx));
    exprs.push_back(getAffineDimExpr(rowLoop, ctx));
    exprs.push_back(getAffineDimExpr(colLoop, ctx));
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  FailureOr<Value> aZp =
      perTensorOrVector(rw, aZpIdx, m, "a_zero_point", Vector::Row, true);
  FailureOr<Value> bZp =
      perTensorOrVector(rw, bZpIdx, n, "b_zero_point", Vector::Column, true);
  if (failed(aZp) || failed(bZp))
    return failure();
  if (failed(checkZeroPointType(rw, aZpIdx, "a_zero_point", aIdx, "A")) ||
      failed(checkZeroPointType(rw, bZpIdx, "b_zero_point", bIdx, "B")))
    return failure();

  IntegerOperand lhs{
      a, operandMap(aShape, mLoop, kLoop), rw.isUnsigned(aIdx), *aZp,
      *aZp ? vectorMap(*aZp, numLoops, mLoop, ctx) : AffineMap()};
  IntegerOperand rhs{
      bv, operandMap(bShape, kLoop, nLoop), rw.isUnsigned(bIdx), *bZp,
      *bZp ? vectorMap(*bZp, numLoops, nLoop, ctx) : AffineMap()};
  SmallVector<int64_t> outShape = *batch;
  outShape.push_back(m);
  outShape.push_back(n);
  SmallVector<AffineExpr> outExprs;
  for (unsigned d = 0; d < nb + 2; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value acc =
      integerContraction(b, loc, lhs, rhs, outShape,
                         AffineMap::get(numLoops, 0, outExprs, ctx), iterators);
  SmallVector<int64_t> onnxShape = *batch;
  if (!aVec)
    onnxShape.push_back(m);
  if (!bVec)
    onnxShape.push_back(n);
  return MatmulResult{acc, onnxShape};
}

LogicalResult convertMatMulInteger(NodeRewriter &rw) {
  FailureOr<MatmulResult> r = integerMatmul(rw, 0, 2, 1, 3);
  if (failed(r))
    return failure();
  return rw.replace(reshapeTo(rw.b(), rw.loc(), r->acc, r->shape));
}

/// The requantization epilogue: saturate(roundeven(float(acc [+ bias]) *
/// (aScale * bScale / yScale)) + yZp). aScale, bScale and bias are rank 0
/// or vectors along output dim aDim (aScale) or bDim (bScale, bias); yZp is
/// rank 0 or null.
struct Requant {
  Value aScale, bScale, yScale, yZp, bias;
  unsigned aDim, bDim;
};

/// The requantization multiplier (a_scale * b_scale) / y_scale, computed
/// in f32 as the kernel would, when all three are f32 constants and at most
/// one of a_scale and b_scale is a vector: a rank-0 or vector constant
/// along that one's dim. Null otherwise.
Value constantMultiplier(OpBuilder &b, Location loc, const Requant &q) {
  // The scales come reshaped to rank 0 or a vector; the elements are the
  // constant's, in order.
  auto constant = [](Value v) {
    while (v) {
      if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>())
        v = c.getSrc();
      else if (auto e = v.getDefiningOp<tensor::ExpandShapeOp>())
        v = e.getSrc();
      else
        break;
    }
    return getParameterConstant(v);
  };
  DenseElementsAttr sa = constant(q.aScale), sb = constant(q.bScale),
                    sy = constant(q.yScale);
  if (!sa || !sb || !sy || !sa.getElementType().isF32() ||
      !sb.getElementType().isF32() || !sy.getElementType().isF32() ||
      sy.getNumElements() != 1 ||
      (sa.getNumElements() != 1 && sb.getNumElements() != 1))
    return Value();
  SmallVector<float> a(sa.getValues<float>()), bs(sb.getValues<float>());
  float y = *sy.getValues<float>().begin();
  DenseElementsAttr vector = sa.getNumElements() != 1 ? sa : sb;
  SmallVector<float> m(vector.getNumElements());
  for (size_t i = 0; i < m.size(); ++i) {
    float product = a[a.size() == 1 ? 0 : i] * bs[bs.size() == 1 ? 0 : i];
    m[i] = product / y;
  }
  // The shape of the (reshaped) scale that is the vector, or rank 0.
  auto type = RankedTensorType::get(
      cast<RankedTensorType>(
          (sa.getNumElements() != 1 ? q.aScale : q.bScale).getType())
          .getShape(),
      b.getF32Type());
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, ArrayRef(m)));
}

Value requantize(NodeRewriter &rw, Value acc, const Requant &q,
                 IntegerType yType) {
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  auto accType = cast<RankedTensorType>(acc.getType());
  unsigned rank = accType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
  SmallVector<GenericOperand> ins = {{acc, id}};
  // With constant f32 scales (the usual case), the multiplier is computed
  // here, in the same f32 operations, instead of in every element: one
  // multiply per element rather than a multiply and a division.
  Value multiplier = constantMultiplier(b, loc, q);
  if (multiplier) {
    unsigned dim =
        cast<RankedTensorType>(q.aScale.getType()).getRank() ? q.aDim : q.bDim;
    ins.push_back({multiplier, vectorMap(multiplier, rank, dim, ctx)});
  } else {
    ins.push_back({q.aScale, vectorMap(q.aScale, rank, q.aDim, ctx)});
    ins.push_back({q.bScale, vectorMap(q.bScale, rank, q.bDim, ctx)});
    ins.push_back({q.yScale, scalar});
  }
  int zpIdx = -1, biasIdx = -1;
  if (q.yZp) {
    zpIdx = ins.size();
    ins.push_back({q.yZp, scalar});
  }
  if (q.bias) {
    biasIdx = ins.size();
    ins.push_back({q.bias, vectorMap(q.bias, rank, q.bDim, ctx)});
  }
  Value init = createEmpty(b, loc, accType.getShape(), signlessType(yType));
  return buildGeneric(
      b, loc, ins, {{init, id}},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        Value v = a[0];
        if (biasIdx >= 0)
          v = arith::AddIOp::create(nb, nloc, v, a[biasIdx]);
        Value f = toF32(nb, nloc, v, false);
        // Same f32 operation order as onnxruntime: the multiplier is
        // (a_scale * b_scale) / y_scale.
        Value m = a[1];
        if (!multiplier) {
          m = arith::MulFOp::create(nb, nloc, toF32(nb, nloc, a[1], false),
                                    toF32(nb, nloc, a[2], false));
          m = arith::DivFOp::create(nb, nloc, m, toF32(nb, nloc, a[3], false));
        }
        Value r = math::RoundEvenOp::create(
            nb, nloc, arith::MulFOp::create(nb, nloc, f, m));
        Value zp = zpIdx >= 0 ? toF32(nb, nloc, a[zpIdx], yType.isUnsigned())
                              : Value();
        return SmallVector<Value>{saturate(nb, nloc, r, zp, yType)};
      })[0];
}

/// A scale input: a float per tensor or a vector of `n`.
FailureOr<Value> scaleInput(NodeRewriter &rw, unsigned i, int64_t n,
                            StringRef what, Vector kind) {
  if (failed(rw.requireInput(i, what)))
    return failure();
  Type t = rw.inputType(i).getElementType();
  if (!isa<FloatType>(t) || t.getIntOrFloatBitWidth() > 32)
    return rw.fail(what + " must be f32, f16 or bf16, not " + typeName(t));
  return perTensorOrVector(rw, i, n, what, kind, /*dropZero=*/false);
}

/// The output zero point (per tensor) and its type.
FailureOr<std::pair<Value, IntegerType>> outputZeroPoint(NodeRewriter &rw,
                                                         unsigned i) {
  if (failed(require8Bit(rw, i, "y_zero_point")))
    return failure();
  FailureOr<Value> zp =
      perTensorOrVector(rw, i, 1, "y_zero_point", Vector::None, true);
  if (failed(zp))
    return failure();
  return std::pair{*zp, cast<IntegerType>(rw.onnxElementType(i))};
}

LogicalResult convertQLinearMatMul(NodeRewriter &rw) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zp
  for (unsigned i = 0; i < 8; ++i)
    if (failed(rw.requireInput(i, "QLinearMatMul operand")))
      return failure();
  FailureOr<MatmulResult> r = integerMatmul(rw, 0, 2, 3, 5);
  if (failed(r))
    return failure();
  auto accShape = cast<RankedTensorType>(r->acc.getType()).getShape();
  int64_t rank = accShape.size();
  int64_t m = accShape[rank - 2], n = accShape[rank - 1];
  FailureOr<Value> aScale = scaleInput(rw, 1, m, "a_scale", Vector::Row);
  FailureOr<Value> bScale = scaleInput(rw, 4, n, "b_scale", Vector::Column);
  FailureOr<Value> yScale = scaleInput(rw, 6, 1, "y_scale", Vector::None);
  if (failed(aScale) || failed(bScale) || failed(yScale))
    return failure();
  auto yZp = outputZeroPoint(rw, 7);
  if (failed(yZp))
    return failure();
  Requant q{*aScale,
            *bScale,
            *yScale,
            yZp->first,
            Value(),
            static_cast<unsigned>(rank - 2),
            static_cast<unsigned>(rank - 1)};
  Value y = requantize(rw, r->acc, q, yZp->second);
  return rw.replace(reshapeTo(rw.b(), rw.loc(), y, r->shape), {yZp->second});
}

//===--- convolution ------------------------------------------------------===//

/// Pads `v` with a scalar taken from a rank-0 tensor (a zero point that may
/// only be known at run time).
Value padWithScalarTensor(OpBuilder &b, Location loc, Value v,
                          ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                          Value scalarTensor) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  DenseElementsAttr c = getDenseConstant(scalarTensor);
  if (c)
    return padWithValue(b, loc, v, low, high,
                        cast<TypedAttr>(c.getSplatValue<Attribute>()));
  // A pad value known only at run time: the pad's body reads it from the
  // rank-0 tensor, which becomes an input of the kernel that pads (a scalar
  // outside the body would be an SSA value outside any kernel).
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    shape.push_back(d + low[i] + high[i]);
  auto outType = RankedTensorType::get(shape, type.getElementType());
  MLIRContext *ctx = b.getContext();
  auto pad = tensor::PadOp::create(b, loc, outType, v,
                                   getAsIndexOpFoldResult(ctx, low),
                                   getAsIndexOpFoldResult(ctx, high));
  OpBuilder::InsertionGuard guard(b);
  if (pad.getRegion().empty())
    b.createBlock(&pad.getRegion(), {},
                  SmallVector<Type>(shape.size(), b.getIndexType()),
                  SmallVector<Location>(shape.size(), loc));
  Block *body = &pad.getRegion().front();
  b.setInsertionPointToStart(body);
  tensor::YieldOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, scalarTensor, ValueRange()));
  return pad.getResult();
}

/// The integer convolution of x (input xIdx, NC<spatial>) and w (input
/// wIdx, M C/group <kernel>) with zero points xZpIdx (per tensor) and
/// wZpIdx (per tensor or per output channel). Returns i32 [N, M, <out>].
FailureOr<Value> integerConv(NodeRewriter &rw, unsigned xIdx, unsigned xZpIdx,
                             unsigned wIdx, unsigned wZpIdx) {
  if (failed(require8Bit(rw, xIdx, "x")) || failed(require8Bit(rw, wIdx, "w")))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  ArrayRef<int64_t> xShape = rw.inputType(xIdx).getShape();
  ArrayRef<int64_t> wShape = rw.inputType(wIdx).getShape();
  int64_t rank = xShape.size();
  if (rank < 3)
    return rw.fail("x must have rank >= 3 (N, C, spatial...), not " +
                   Twine(rank));
  if (static_cast<int64_t>(wShape.size()) != rank)
    return rw.fail("w has rank " + Twine(wShape.size()) + " but x has rank " +
                   Twine(rank));
  int64_t ns = rank - 2;
  int64_t group = rw.getInt("group", 1);
  int64_t batch = xShape[0], c = xShape[1], mOut = wShape[0];
  if (group < 1 || c % group != 0 || mOut % group != 0)
    return rw.fail("group " + Twine(group) + " must divide the " + Twine(c) +
                   " input and " + Twine(mOut) + " output channels");
  if (wShape[1] != c / group)
    return rw.fail("w has " + Twine(wShape[1]) +
                   " input channels per group; x has " + Twine(c) +
                   " channels in " + Twine(group) + " groups");
  ArrayRef<int64_t> kernel = wShape.drop_front(2);
  SmallVector<int64_t> kernelAttr = rw.getInts("kernel_shape");
  if (!kernelAttr.empty() && ArrayRef<int64_t>(kernelAttr) != kernel)
    return rw.fail("kernel_shape does not match the weight's spatial dims");
  FailureOr<WindowParams> win = resolveWindow(rw, xShape.drop_front(2), kernel);
  if (failed(win))
    return failure();

  FailureOr<Value> xZp =
      perTensorOrVector(rw, xZpIdx, 1, "x_zero_point", Vector::None, true);
  FailureOr<Value> wZp = perTensorOrVector(rw, wZpIdx, mOut, "w_zero_point",
                                           Vector::Channel, true);
  if (failed(xZp) || failed(wZp))
    return failure();
  if (failed(checkZeroPointType(rw, xZpIdx, "x_zero_point", xIdx, "x")) ||
      failed(checkZeroPointType(rw, wZpIdx, "w_zero_point", wIdx, "w")))
    return failure();

  // Padding takes the zero point's value so that padded taps contribute
  // (x_zp - x_zp) * w = 0, as in the reference.
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  low.append(win->padLow);
  high.append(win->padHigh);
  Value x = rw.input(xIdx);
  if (*xZp)
    x = padWithScalarTensor(b, loc, x, low, high, *xZp);
  else
    x = padWithValue(b, loc, x, low, high, b.getIntegerAttr(b.getI8Type(), 0));

  // Grouped form: x [N, G, C/G, ...], w [G, M/G, C/G, ...],
  // acc [N, G, M/G, out...].
  int64_t cg = c / group, mg = mOut / group;
  SmallVector<int64_t> xg = {batch, group, cg};
  for (int64_t d = 0; d < ns; ++d)
    xg.push_back(xShape[2 + d] + win->padLow[d] + win->padHigh[d]);
  SmallVector<int64_t> wg = {group, mg, cg};
  wg.append(kernel.begin(), kernel.end());
  x = reshapeTo(b, loc, x, xg);
  Value w = reshapeTo(b, loc, rw.input(wIdx), wg);
  Value wZpG = *wZp;
  if (wZpG && cast<RankedTensorType>(wZpG.getType()).getRank() == 1)
    wZpG = reshapeTo(b, loc, wZpG, {group, mg});

  // Loops: n, g, m, out..., c, k...
  unsigned numLoops = 3 + 2 * ns + 1;
  unsigned cLoop = 3 + ns;
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs = {dim(0), dim(1), dim(cLoop)};
  SmallVector<AffineExpr> wExprs = {dim(1), dim(2), dim(cLoop)};
  SmallVector<AffineExpr> outExprs = {dim(0), dim(1), dim(2)};
  for (int64_t d = 0; d < ns; ++d) {
    AffineExpr o = dim(3 + d), k = dim(cLoop + 1 + d);
    xExprs.push_back(o * win->strides[d] + k * win->dilations[d]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<utils::IteratorType> iterators(3 + ns,
                                             utils::IteratorType::parallel);
  iterators.append(1 + ns, utils::IteratorType::reduction);
  AffineMap wZpMap;
  if (wZpG) {
    wZpMap = cast<RankedTensorType>(wZpG.getType()).getRank() == 0
                 ? AffineMap::get(numLoops, 0, {}, ctx)
                 : AffineMap::get(numLoops, 0, {dim(1), dim(2)}, ctx);
  }
  IntegerOperand lhs{x, AffineMap::get(numLoops, 0, xExprs, ctx),
                     rw.isUnsigned(xIdx), *xZp,
                     *xZp ? AffineMap::get(numLoops, 0, {}, ctx) : AffineMap()};
  IntegerOperand rhs{w, AffineMap::get(numLoops, 0, wExprs, ctx),
                     rw.isUnsigned(wIdx), wZpG, wZpMap};
  SmallVector<int64_t> outShape = {batch, group, mg};
  outShape.append(win->outSize);
  Value acc =
      integerContraction(b, loc, lhs, rhs, outShape,
                         AffineMap::get(numLoops, 0, outExprs, ctx), iterators);
  SmallVector<int64_t> flat = {batch, mOut};
  flat.append(win->outSize);
  return reshapeTo(b, loc, acc, flat);
}

LogicalResult convertConvInteger(NodeRewriter &rw) {
  FailureOr<Value> acc = integerConv(rw, 0, 2, 1, 3);
  if (failed(acc))
    return failure();
  return rw.replace(*acc);
}

LogicalResult convertQLinearConv(NodeRewriter &rw) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zp, B
  for (unsigned i = 0; i < 8; ++i)
    if (failed(rw.requireInput(i, "QLinearConv operand")))
      return failure();
  FailureOr<Value> acc = integerConv(rw, 0, 2, 3, 5);
  if (failed(acc))
    return failure();
  int64_t mOut = rw.inputType(3).getDimSize(0);
  FailureOr<Value> xScale = scaleInput(rw, 1, 1, "x_scale", Vector::None);
  FailureOr<Value> wScale = scaleInput(rw, 4, mOut, "w_scale", Vector::Channel);
  FailureOr<Value> yScale = scaleInput(rw, 6, 1, "y_scale", Vector::None);
  if (failed(xScale) || failed(wScale) || failed(yScale))
    return failure();
  auto yZp = outputZeroPoint(rw, 7);
  if (failed(yZp))
    return failure();
  Value bias;
  if (rw.hasInput(8)) {
    RankedTensorType bt = rw.inputType(8);
    if (!bt.getElementType().isInteger(32) || bt.getRank() != 1 ||
        bt.getDimSize(0) != mOut)
      return rw.fail("B must be an int32 vector of " + Twine(mOut) +
                     " elements, not " + typeName(bt));
    bias = rw.input(8);
  }
  Requant q{*xScale, *wScale, *yScale, yZp->first, bias, 1, 1};
  return rw.replace(requantize(rw, *acc, q, yZp->second), {yZp->second});
}

//===--- DynamicQuantizeLinear --------------------------------------------===//

LogicalResult convertDynamicQuantizeLinear(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "x")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  if (!type.getElementType().isF32())
    return rw.fail("x must be a float (f32) tensor, not " +
                   typeName(type.getElementType()));
  auto u8 = IntegerType::get(rw.ctx(), 8, IntegerType::Unsigned);
  auto [y, scale, zp] = buildDynamicQuantize(rw.b(), rw.loc(), rw.input(0));
  return rw.replace({y, scale, zp}, {u8, rw.b().getF32Type(), u8});
}

} // namespace

std::array<Value, 3> dlc::buildDynamicQuantize(OpBuilder &b, Location loc,
                                               Value x, int64_t keptDims) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  int64_t rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  // The parameters have the shape of the kept leading dims.
  ArrayRef<int64_t> paramShape = type.getShape().take_front(keptDims);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  for (int64_t d = 0; d < keptDims; ++d)
    iterators[d] = utils::IteratorType::parallel;
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < keptDims; ++d)
    kept.push_back(getAffineDimExpr(d, ctx));
  AffineMap toParams = AffineMap::get(rank, 0, kept, ctx);

  // min and max in one pass.
  SmallVector<Value> range = buildGeneric(
      b, loc, {{x, id}},
      {{createFilled(b, loc, paramShape, f32, highestValueAttr(f32, false)),
        toParams},
       {createFilled(b, loc, paramShape, f32, lowestValueAttr(f32, false)),
        toParams}},
      iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange outs) {
        return SmallVector<Value>{
            arith::MinimumFOp::create(nb, nloc, outs[0], a[0]),
            arith::MaximumFOp::create(nb, nloc, outs[1], a[0])};
      });

  // scale = (max - min) / 255 over a range that includes 0 (1 when the range
  // is empty, as onnxruntime does); zp = round(clamp(-min / scale, 0, 255)).
  AffineMap params1 = b.getMultiDimIdentityMap(keptDims);
  SmallVector<Value> params = buildGeneric(
      b, loc, {{range[0], params1}, {range[1], params1}},
      {{createEmpty(b, loc, paramShape, f32), params1},
       {createEmpty(b, loc, paramShape, i8), params1}},
      SmallVector<utils::IteratorType>(keptDims, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        Value zero = scalarConstant(nb, nloc, f32, 0);
        Value lo = arith::MinimumFOp::create(nb, nloc, a[0], zero);
        Value hi = arith::MaximumFOp::create(nb, nloc, a[1], zero);
        Value span = arith::SubFOp::create(nb, nloc, hi, lo);
        Value empty =
            arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ, hi, lo);
        Value scale = arith::SelectOp::create(
            nb, nloc, empty, scalarConstant(nb, nloc, f32, 1),
            arith::DivFOp::create(nb, nloc, span,
                                  scalarConstant(nb, nloc, f32, 255)));
        Value zp = arith::SubFOp::create(
            nb, nloc, zero, arith::DivFOp::create(nb, nloc, lo, scale));
        zp = arith::MaxNumFOp::create(nb, nloc, zp, zero);
        zp = arith::MinNumFOp::create(nb, nloc, zp,
                                      scalarConstant(nb, nloc, f32, 255));
        zp = math::RoundEvenOp::create(nb, nloc, zp);
        return SmallVector<Value>{scale,
                                  arith::FPToUIOp::create(nb, nloc, i8, zp)};
      });

  Value y = buildGeneric(
      b, loc, {{x, id}, {params[0], toParams}, {params[1], toParams}},
      {{createEmpty(b, loc, type.getShape(), i8), id}},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        Value q = math::RoundEvenOp::create(
            nb, nloc, arith::DivFOp::create(nb, nloc, a[0], a[1]));
        Value zp = arith::UIToFPOp::create(nb, nloc, f32, a[2]);
        return SmallVector<Value>{saturate(nb, nloc, q, zp, u8)};
      })[0];
  return {y, params[0], params[1]};
}

namespace {

//===--- ONNX Runtime's QOperator operators (com.microsoft)
//----------------===//
//
// quantize_static in QOperator format writes these around QLinearConv and
// QLinearMatMul. Their arithmetic follows ONNX Runtime's CPU kernels (MLAS)
// operation for operation, in f32, so that results match it: the
// multipliers are formed in the same order, rounding is half to even, and
// the lookup tables of the activations are built at compile time the way
// ONNX Runtime builds them (its logistic approximation included). What
// ONNX Runtime computes with SIMD kernels of other rounding behaviour (a
// fused multiply-add for QLinearAdd when one operand is a scalar per
// span, u8 x s8 pairs saturated to 16 bits in QGemm) can differ by one
// unit in the last place of the quantized result.

/// A per-tensor quantization parameter pair from constant inputs: the
/// scale (f32) and the zero point (0 when absent).
struct QuantParams {
  float scale;
  int32_t zeroPoint;
};

FailureOr<QuantParams> constantQuantParams(NodeRewriter &rw, unsigned scaleIdx,
                                           unsigned zpIdx, StringRef what) {
  if (failed(rw.requireInput(scaleIdx, (what + " scale").str())))
    return failure();
  DenseElementsAttr scale = getDenseConstant(rw.input(scaleIdx));
  if (!scale || scale.getNumElements() != 1 ||
      !isa<FloatType>(scale.getElementType()))
    return rw.unsupported(what +
                          " scale must be one compile-time float constant "
                          "(quantize_static writes it so)");
  QuantParams p{static_cast<float>(firstDouble(scale)), 0};
  if (rw.hasInput(zpIdx)) {
    DenseElementsAttr zp = getDenseConstant(rw.input(zpIdx));
    if (!zp || zp.getNumElements() != 1)
      return rw.unsupported(what + " zero point must be one compile-time "
                                   "constant");
    if (!isa<IntegerType>(zp.getElementType()))
      return rw.fail(what + " zero point must be an integer, not " +
                     llvm::formatv("{0}", zp.getElementType()).str());
    APInt v = *zp.getValues<APInt>().begin();
    p.zeroPoint = static_cast<int32_t>(rw.isUnsigned(zpIdx) ? v.getZExtValue()
                                                            : v.getSExtValue());
  }
  return p;
}

/// The 8-bit quantized type of input `i` (ui8 or si8 in ONNX terms).
FailureOr<IntegerType> quantizedType(NodeRewriter &rw, unsigned i,
                                     StringRef what) {
  if (failed(require8Bit(rw, i, what)))
    return failure();
  return cast<IntegerType>(rw.onnxElementType(i));
}

/// ONNX Runtime's QuantizeLinear of one f32 value (MLAS): divide, clamp to
/// the range less the zero point (a NaN becomes the low end), round half
/// to even, add the zero point.
int32_t quantizeLikeMlas(float x, QuantParams p, IntegerType t) {
  auto [lo, hi] = quantRange(t);
  float v = x / p.scale;
  float lower = static_cast<float>(lo - p.zeroPoint);
  float upper = static_cast<float>(hi - p.zeroPoint);
  v = v > lower ? v : lower; // maxps: NaN takes the second operand
  v = v < upper ? v : upper;
  return static_cast<int32_t>(std::nearbyint(v)) + p.zeroPoint;
}

/// MLAS's logistic function (its FMA3 kernel): a rational approximation
/// on [-18, 18], not clamped above.
float logisticLikeMlas(float v) {
  float x = std::min(18.0f, std::max(-18.0f, v));
  float x2 = x * x;
  float p = std::fma(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = std::fma(x2, p, 6.08574864600143e-05f);
  p = std::fma(x2, p, 8.51377133304701e-03f);
  p = std::fma(x2, p, 2.48287947061529e-01f);
  p = x * p;
  float q = std::fma(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = std::fma(x2, q, 6.29106785017040e-06f);
  q = std::fma(x2, q, 1.70198817374094e-03f);
  q = std::fma(x2, q, 1.16817656904453e-01f);
  q = std::fma(x2, q, 9.93151921023180e-01f);
  return std::max(0.0f, p / q + 0.5f);
}

/// y = table[x] over the 256 values of an 8-bit type: one generic that
/// reads a compile-time table indexed by x's bits.
Value lookup(OpBuilder &b, Location loc, Value x, IntegerType t,
             function_ref<int32_t(int32_t)> f) {
  SmallVector<int8_t> table;
  for (int32_t bits = 0; bits < 256; ++bits) {
    int32_t v = t.isUnsigned() || bits < 128 ? bits : bits - 256;
    table.push_back(static_cast<int8_t>(f(v)));
  }
  auto tableType = RankedTensorType::get({256}, b.getI8Type());
  Value tableValue = createConstant(
      b, loc, DenseElementsAttr::get(tableType, ArrayRef(table)));
  auto type = cast<RankedTensorType>(x.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return buildGeneric(
      b, loc, {{x, id}},
      {{createEmpty(b, loc, type.getShape(), b.getI8Type()), id}},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        Value index = arith::IndexCastUIOp::create(
            nb, nloc, nb.getIndexType(),
            arith::ExtUIOp::create(nb, nloc, nb.getI32Type(), a[0]));
        return SmallVector<Value>{
            tensor::ExtractOp::create(nb, nloc, tableValue, index)};
      })[0];
}

/// QLinearSigmoid / QLinearLeakyRelu: (X, X_scale, X_zp, Y_scale, Y_zp).
template <bool sigmoid>
LogicalResult convertQLinearActivation(NodeRewriter &rw) {
  FailureOr<IntegerType> t = quantizedType(rw, 0, "X");
  if (failed(t))
    return failure();
  if (rw.hasInput(4) && rw.onnxElementType(4) != *t)
    return rw.fail("Y_zero_point must have X's type");
  FailureOr<QuantParams> x = constantQuantParams(rw, 1, 2, "X");
  FailureOr<QuantParams> y = constantQuantParams(rw, 3, 4, "Y");
  if (failed(x) || failed(y))
    return failure();
  float alpha = rw.getFloat("alpha", 0.01f);
  Value result = lookup(rw.b(), rw.loc(), rw.input(0), *t, [&](int32_t v) {
    float d = x->scale * static_cast<float>(v - x->zeroPoint);
    float f = sigmoid ? logisticLikeMlas(d) : (d >= 0 ? d : alpha * d);
    return quantizeLikeMlas(f, *y, *t);
  });
  return rw.replace(result, {*t});
}

/// QLinearAdd / QLinearMul: (A, A_scale, A_zp, B, B_scale, B_zp, C_scale,
/// C_zp), numpy broadcasting.
template <bool mul> LogicalResult convertQLinearBinary(NodeRewriter &rw) {
  FailureOr<IntegerType> t = quantizedType(rw, 0, "A");
  if (failed(t) || failed(require8Bit(rw, 3, "B")))
    return failure();
  if (rw.onnxElementType(3) != *t ||
      (rw.hasInput(7) && rw.onnxElementType(7) != *t))
    return rw.fail("A, B and C must have the same type");
  FailureOr<QuantParams> a = constantQuantParams(rw, 1, 2, "A");
  FailureOr<QuantParams> bq = constantQuantParams(rw, 4, 5, "B");
  FailureOr<QuantParams> c = constantQuantParams(rw, 6, 7, "C");
  if (failed(a) || failed(bq) || failed(c))
    return failure();
  bool isUnsigned = t->isUnsigned();
  IntegerType qType = *t;
  FailureOr<Value> y = buildElementwise(
      rw, {rw.input(0), rw.input(3)}, rw.b().getI8Type(),
      [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
        Type f32 = nb.getF32Type();
        auto cst = [&](float f) { return scalarConstant(nb, nloc, f32, f); };
        Value r;
        if (mul) {
          // ((a - za) * (b - zb)) in i32, times (sa * sb) / sc, plus zc.
          float ratio = (a->scale * bq->scale) / c->scale;
          Type i32 = nb.getI32Type();
          auto centered = [&](Value q, int32_t zp) -> Value {
            Value w = widenToI32(nb, nloc, q, isUnsigned);
            return arith::SubIOp::create(
                nb, nloc, w, arith::ConstantIntOp::create(nb, nloc, i32, zp));
          };
          Value p =
              arith::MulIOp::create(nb, nloc, centered(v[0], a->zeroPoint),
                                    centered(v[1], bq->zeroPoint));
          r = arith::MulFOp::create(
              nb, nloc, arith::SIToFPOp::create(nb, nloc, f32, p), cst(ratio));
          r = arith::AddFOp::create(nb, nloc, r,
                                    cst(static_cast<float>(c->zeroPoint)));
        } else {
          // a * (sa / sc) + (b * (sb / sc) + fixed), each step one fused
          // multiply-add, with the zero points folded into `fixed`.
          float ra = a->scale / c->scale, rb = bq->scale / c->scale;
          float fixed = static_cast<float>(c->zeroPoint) -
                        (ra * static_cast<float>(a->zeroPoint) +
                         rb * static_cast<float>(bq->zeroPoint));
          Value fa = toF32(nb, nloc, v[0], isUnsigned);
          Value fb = toF32(nb, nloc, v[1], isUnsigned);
          auto fused = [&](Value x, float m, Value c) {
            auto fma = math::FmaOp::create(nb, nloc, x, cst(m), c);
            fma->setAttr(kFusedAttr, nb.getUnitAttr());
            return fma.getResult();
          };
          r = fused(fa, ra, fused(fb, rb, cst(fixed)));
        }
        r = math::RoundEvenOp::create(nb, nloc, r);
        return saturate(nb, nloc, r, Value(), qType);
      });
  if (failed(y))
    return failure();
  return rw.replace(*y, {qType});
}

/// QLinearConcat: (Y_scale, Y_zp, then X, X_scale, X_zp per input); an
/// input quantized like the output is copied, others requantized through
/// a table.
LogicalResult convertQLinearConcat(NodeRewriter &rw) {
  if (rw.numInputs() < 5 || (rw.numInputs() - 2) % 3 != 0)
    return rw.fail("takes Y_scale, Y_zero_point and (X, X_scale, "
                   "X_zero_point) per input; it has " +
                   Twine(rw.numInputs()) + " inputs");
  FailureOr<QuantParams> y = constantQuantParams(rw, 0, 1, "Y");
  if (failed(y))
    return failure();
  FailureOr<IntegerType> t = quantizedType(rw, 2, "input 0");
  if (failed(t))
    return failure();
  int64_t rank = rw.inputType(2).getRank();
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (unsigned i = 2; i < rw.numInputs(); i += 3) {
    if (failed(require8Bit(rw, i, "X")))
      return failure();
    if (rw.onnxElementType(i) != *t)
      return rw.fail("all inputs must have the same type");
    if (rw.inputType(i).getRank() != rank)
      return rw.fail("all inputs must have rank " + Twine(rank));
    FailureOr<QuantParams> x = constantQuantParams(rw, i + 1, i + 2, "X");
    if (failed(x))
      return failure();
    if (x->scale == y->scale && x->zeroPoint == y->zeroPoint) {
      parts.push_back(rw.input(i));
      continue;
    }
    parts.push_back(lookup(rw.b(), rw.loc(), rw.input(i), *t, [&](int32_t v) {
      return quantizeLikeMlas(x->scale * static_cast<float>(v - x->zeroPoint),
                              *y, *t);
    }));
  }
  for (Value p : parts)
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis &&
          cast<RankedTensorType>(p.getType()).getDimSize(d) !=
              cast<RankedTensorType>(parts[0].getType()).getDimSize(d))
        return rw.fail("inputs differ in dim " + Twine(d) +
                       " outside the concatenation axis");
  Value result = parts.size() == 1
                     ? parts[0]
                     : tensor::ConcatOp::create(rw.b(), rw.loc(), *axis, parts)
                           .getResult();
  return rw.replace(result, {*t});
}

/// The quantized type of a QLinear pool's X, which must have rank 3 or
/// more (batch, channels and at least one spatial dim).
FailureOr<IntegerType> quantizedPoolInput(NodeRewriter &rw) {
  FailureOr<IntegerType> t = quantizedType(rw, 0, "X");
  if (failed(t))
    return failure();
  if (rw.inputType(0).getRank() < 3)
    return rw.fail("X must have rank 3 or more");
  return t;
}

/// QLinearGlobalAveragePool: (X, x_scale, x_zp, y_scale, y_zp); the sum in
/// i32 with the zero point's share taken out, then one multiplier
/// x_scale / (y_scale * count).
LogicalResult convertQLinearGlobalAveragePool(NodeRewriter &rw) {
  FailureOr<IntegerType> t = quantizedPoolInput(rw);
  if (failed(t))
    return failure();
  FailureOr<QuantParams> x = constantQuantParams(rw, 1, 2, "x");
  FailureOr<QuantParams> y = constantQuantParams(rw, 3, 4, "y");
  if (failed(x) || failed(y))
    return failure();
  RankedTensorType type = rw.inputType(0);
  int64_t rank = type.getRank();
  bool channelsLast = rw.getInt("channels_last", 0) != 0;
  SmallVector<bool> reduced(rank, true);
  reduced[0] = false;
  reduced[channelsLast ? rank - 1 : 1] = false;
  // The sums are [N, C] (a tiled kernel wants the output read through a
  // projection); the result is expanded back to rank `rank` at the end.
  int64_t count = 1;
  SmallVector<int64_t> outShape, sumShape;
  SmallVector<AffineExpr> outExprs;
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  for (int64_t d = 0; d < rank; ++d) {
    outShape.push_back(reduced[d] ? 1 : type.getDimSize(d));
    if (reduced[d]) {
      count *= type.getDimSize(d);
      continue;
    }
    sumShape.push_back(type.getDimSize(d));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  if (count == 0 || count >= (int64_t(1) << 24))
    return rw.fail("the pooled area (" + Twine(count) +
                   " elements) must be 1 to 2^24 - 1");
  float multiplier = x->scale / (y->scale * static_cast<float>(count));
  Type i32 = b.getI32Type();
  Value zeros = createFilled(b, loc, sumShape, i32, b.getI32IntegerAttr(0));
  SmallVector<utils::IteratorType> iterators;
  for (bool r : reduced)
    iterators.push_back(r ? utils::IteratorType::reduction
                          : utils::IteratorType::parallel);
  bool isUnsigned = t->isUnsigned();
  Value sums = buildGeneric(
      b, loc, {{rw.input(0), b.getMultiDimIdentityMap(rank)}},
      {{zeros, AffineMap::get(rank, 0, outExprs, ctx)}}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange outs) {
        return SmallVector<Value>{arith::AddIOp::create(
            nb, nloc, outs[0], widenToI32(nb, nloc, a[0], isUnsigned))};
      })[0];
  int32_t correction = -x->zeroPoint * static_cast<int32_t>(count);
  IntegerType qType = *t;
  AffineMap id = b.getMultiDimIdentityMap(2);
  Value result = buildGeneric(
      b, loc, {{sums, id}},
      {{createEmpty(b, loc, sumShape, b.getI8Type()), id}},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange a, ValueRange) {
        Type f32 = nb.getF32Type();
        Value sum = arith::AddIOp::create(
            nb, nloc, a[0],
            arith::ConstantIntOp::create(nb, nloc, i32, correction));
        Value v = arith::MulFOp::create(
            nb, nloc, arith::SIToFPOp::create(nb, nloc, f32, sum),
            scalarConstant(nb, nloc, f32, multiplier));
        v = math::RoundEvenOp::create(nb, nloc, v);
        return SmallVector<Value>{saturate(
            nb, nloc, v,
            scalarConstant(nb, nloc, f32, static_cast<float>(y->zeroPoint)),
            qType)};
      })[0];
  // [N, C] -> [N, C, 1, ...] or [N, 1, ..., C].
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d < rank; ++d)
    groups[channelsLast ? (d == rank - 1 ? 1 : 0) : (d == 0 ? 0 : 1)].push_back(
        d);
  result = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(outShape, b.getI8Type()), result, groups);
  return rw.replace(result, {qType});
}

/// QLinearAveragePool: ONNX Runtime averages the dequantized values in f32
/// (a window over the whole image with no padding takes the
/// QLinearGlobalAveragePool path); expressed as DequantizeLinear,
/// AveragePool and QuantizeLinear.
LogicalResult convertQLinearAveragePool(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  FailureOr<IntegerType> t = quantizedPoolInput(rw);
  if (failed(t))
    return failure();
  RankedTensorType type = rw.inputType(0);
  int64_t rank = type.getRank();
  bool channelsLast = rw.getInt("channels_last", 0) != 0;
  SmallVector<int64_t> kernel = rw.getInts("kernel_shape");
  SmallVector<int64_t> pads = rw.getInts("pads");
  SmallVector<int64_t> spatial;
  for (int64_t d = channelsLast ? 1 : 2; d < (channelsLast ? rank - 1 : rank);
       ++d)
    spatial.push_back(type.getDimSize(d));
  bool global = kernel == spatial &&
                llvm::all_of(pads, [](int64_t p) { return p == 0; }) &&
                rw.getString("auto_pad", "NOTSET") != "SAME_UPPER" &&
                rw.getString("auto_pad", "NOTSET") != "SAME_LOWER";
  OnnxEmitter e(rw);
  SmallVector<Value> ins(op.getInputs());
  if (global) {
    rw.forward(e.nodeOp("QLinearGlobalAveragePool", 1, ins,
                        {e.attr("channels_last", channelsLast ? 1 : 0)}, 1)
                   .getResult(0));
    return success();
  }
  // The emitted nodes are of the default domain; this one is not.
  SmallVector<int64_t> toFirst, toLast;
  Value x = e.node("DequantizeLinear", 13, {ins[0], ins[1], ins[2]});
  if (channelsLast) {
    toFirst.push_back(0);
    toFirst.push_back(rank - 1);
    for (int64_t d = 1; d < rank - 1; ++d)
      toFirst.push_back(d);
    toLast.push_back(0);
    for (int64_t d = 2; d < rank; ++d)
      toLast.push_back(d);
    toLast.push_back(1);
    x = e.node("Transpose", 13, {x}, {e.attr("perm", toFirst)});
  }
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : {"auto_pad", "ceil_mode", "count_include_pad",
                         "kernel_shape", "pads", "strides"})
    if (Attribute a = op.getOnnxAttr(name))
      attrs.push_back(e.b().getNamedAttr(name, a));
  x = e.node("AveragePool", 19, {x}, attrs);
  if (channelsLast)
    x = e.node("Transpose", 13, {x}, {e.attr("perm", toLast)});
  SmallVector<Value> qIns = {x, ins[3]};
  if (rw.hasInput(4))
    qIns.push_back(ins[4]);
  rw.forward(e.node("QuantizeLinear", 13, qIns));
  return success();
}

/// QGemm: (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp); the
/// integer product plus C (i32), then float(acc) * (alpha * a_scale *
/// b_scale[n] / y_scale) requantized, or without y_scale that product in
/// f32.
LogicalResult convertQGemm(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  if (failed(require8Bit(rw, 0, "A")) || failed(require8Bit(rw, 3, "B")) ||
      failed(rw.requireInput(1, "a_scale")) ||
      failed(rw.requireInput(4, "b_scale")))
    return failure();
  if (rw.inputType(0).getRank() != 2 || rw.inputType(3).getRank() != 2)
    return rw.fail("A and B must be matrices");
  if (rw.hasInput(6) && !rw.inputType(6).getElementType().isInteger(32))
    return rw.fail("C must be an int32 tensor");
  if (rw.hasInput(8) && !rw.hasInput(7))
    return rw.fail("y_zero_point needs y_scale");
  SmallVector<Value> ins(op.getInputs());
  OnnxEmitter e(rw);
  Value a = ins[0], bv = ins[3];
  if (rw.getInt("transA", 0))
    a = e.node("Transpose", 13, {a}, {e.attr("perm", {1, 0})});
  if (rw.getInt("transB", 0))
    bv = e.node("Transpose", 13, {bv}, {e.attr("perm", {1, 0})});
  SmallVector<Value> mmIns = {a, bv, rw.hasInput(2) ? ins[2] : Value(),
                              rw.hasInput(5) ? ins[5] : Value()};
  // MatMulInteger takes the zero points as inputs 2 and 3 (absent: none).
  Value none;
  for (Value v : op.getInputs())
    if (isa_and_nonnull<onnx::NoneOp>(v.getDefiningOp()))
      none = v;
  for (Value &v : mmIns)
    if (!v) {
      if (!none) {
        none = onnx::NoneOp::create(e.b(), rw.loc(), e.b().getNoneType());
      }
      v = none;
    }
  Value acc = e.node("MatMulInteger", 10, mmIns);
  if (rw.hasInput(6))
    acc = e.node("Add", 14, {acc, ins[6]});
  Type f32 = e.b().getF32Type();
  // The multiplier in ONNX Runtime's order: ((alpha * a_scale) * b_scale)
  // / y_scale; constants fold to the same f32 value.
  Value scale =
      e.node("Mul", 14, {e.scalar(f32, rw.getFloat("alpha", 1.0f)), ins[1]});
  scale = e.node("Mul", 14, {scale, ins[4]});
  if (rw.hasInput(7))
    scale = e.node("Div", 14, {scale, ins[7]});
  Value y =
      e.node("Mul", 14,
             {e.node("Cast", 13, {acc}, {e.attr("to", int64_t(1))}), scale});
  if (rw.hasInput(7)) {
    SmallVector<Value> qIns = {y, e.scalar(f32, 1.0)};
    if (rw.hasInput(8))
      qIns.push_back(ins[8]);
    y = e.node("QuantizeLinear", 13, qIns);
  }
  rw.forward(y);
  return success();
}

} // namespace

void dlc::populateQuantizationHandlers(HandlerRegistry &r) {
  r.add("QuantizeLinear", {10, 13, 19, 21, 23, 24}, convertQuantizeLinear);
  r.add("DequantizeLinear", {10, 13, 19, 21, 23, 24}, convertDequantizeLinear);
  r.add("MatMulInteger", {10}, convertMatMulInteger);
  r.add("QLinearMatMul", {10, 21}, convertQLinearMatMul);
  r.add("ConvInteger", {10}, convertConvInteger);
  r.add("QLinearConv", {10}, convertQLinearConv);
  r.add("DynamicQuantizeLinear", {11}, convertDynamicQuantizeLinear);
  StringRef ms = "com.microsoft";
  r.add("QLinearAdd", {1}, convertQLinearBinary<false>, ms);
  r.add("QLinearMul", {1}, convertQLinearBinary<true>, ms);
  r.add("QLinearSigmoid", {1}, convertQLinearActivation<true>, ms);
  r.add("QLinearLeakyRelu", {1}, convertQLinearActivation<false>, ms);
  r.add("QLinearConcat", {1}, convertQLinearConcat, ms);
  r.add("QLinearGlobalAveragePool", {1}, convertQLinearGlobalAveragePool, ms);
  r.add("QLinearAveragePool", {1}, convertQLinearAveragePool, ms);
  r.add("QGemm", {1}, convertQGemm, ms);
}
