//===- FoldQDQ.cpp - the dlc-fold-qdq pass --------------------------------===//
//
// QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w),
// DequantizeLinear(b))) -> QLinearConv, and the same around MatMul
// (QLinearMatMul) and Gemm (com.microsoft QGemm), on onnx.node ops, so that
// QDQ models run as integer kernels with int8 activations between them.
// The pass description in Passes.td states the conditions.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/ONNX/IR/ONNX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <type_traits>

namespace dlc {
#define GEN_PASS_DEF_FOLDQDQ
#include "dlc/Conversion/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// The default-domain node of `type` that defines `v`, if any, and if its
/// first `inputs` inputs are present. This pass runs before the conversion
/// handlers check arity, so a node missing an input its schema requires
/// (a fuzzed Conv without W reached here) is simply not folded.
onnx::NodeOp producer(Value v, StringRef type, unsigned inputs) {
  auto node = v ? v.getDefiningOp<onnx::NodeOp>() : nullptr;
  if (!node || node.getOpType() != type || !node.getDomain().empty())
    return nullptr;
  for (unsigned i = 0; i < inputs; ++i)
    if (!node.hasInput(i))
      return nullptr;
  return node;
}

int64_t elementCount(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : -1;
}

Type elementType(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type ? type.getElementType() : Type();
}

bool isByte(Type t) {
  auto i = dyn_cast_or_null<IntegerType>(t);
  return i && i.getWidth() == 8;
}

/// The values of a constant tensor of `T` (inline or resource), if `v` is
/// one.
template <typename T> std::optional<SmallVector<T>> constantValues(Value v) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  // Only a constant of T itself (a fuzzed model passed an f16 scale).
  Type elem = attr.getElementType();
  if constexpr (std::is_same_v<T, float>) {
    if (!elem.isF32())
      return std::nullopt;
  } else {
    if (!elem.isInteger(sizeof(T) * 8))
      return std::nullopt;
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    SmallVector<T> out;
    for (auto x : dense.getValues<T>())
      out.push_back(x);
    return out;
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    ArrayRef<char> data = res.getData();
    if (data.size() != attr.getNumElements() * sizeof(T))
      return std::nullopt;
    SmallVector<T> out(attr.getNumElements());
    std::memcpy(out.data(), data.data(), data.size());
    return out;
  }
  return std::nullopt;
}

/// A DequantizeLinear with a zero point, per tensor, or per slice along
/// `axis` when that is allowed.
bool isDequantize(onnx::NodeOp dq, std::optional<int64_t> perAxis) {
  if (!dq || !dq.hasInput(2) || !isByte(elementType(dq.getInputs()[0])))
    return false;
  Value x = dq.getInputs()[0], scale = dq.getInputs()[1],
        zero = dq.getInputs()[2];
  int64_t n = elementCount(scale);
  if (n == 1)
    return elementCount(zero) == 1;
  if (!perAxis || n < 1 || elementCount(zero) != n)
    return false;
  // Unranked, or an axis outside the rank: not this pattern; the
  // conversion handlers report what is wrong (a fuzzed model reached both).
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type)
    return false;
  int64_t axis = 1;
  if (auto a = dyn_cast_or_null<IntegerAttr>(dq.getOnnxAttr("axis")))
    axis = a.getInt();
  if (axis < 0)
    axis += type.getRank();
  if (axis < 0 || axis >= type.getRank())
    return false;
  return axis == *perAxis && type.getDimSize(axis) == n;
}

/// Whether the Conv's bias, `DequantizeLinear(bq, sb, zb)`, is the int32
/// bias QLinearConv takes: zero point 0 and scale sx * sw[m].
bool isIntegerBias(onnx::NodeOp db, Value sxValue, Value swValue) {
  if (!db || !elementType(db.getInputs()[0]).isInteger(32))
    return false;
  std::optional<SmallVector<float>> sb =
      constantValues<float>(db.getInputs()[1]);
  std::optional<SmallVector<float>> sx = constantValues<float>(sxValue);
  std::optional<SmallVector<float>> sw = constantValues<float>(swValue);
  if (!sb || !sx || !sw || sx->size() != 1)
    return false;
  int64_t m = elementCount(db.getInputs()[0]);
  if (static_cast<int64_t>(sb->size()) != 1 &&
      static_cast<int64_t>(sb->size()) != m)
    return false;
  if (sw->size() != 1 && static_cast<int64_t>(sw->size()) != m)
    return false;
  for (int64_t i = 0; i < m; ++i) {
    float want = (*sx)[0] * (*sw)[sw->size() == 1 ? 0 : i];
    float have = (*sb)[sb->size() == 1 ? 0 : i];
    if (std::fabs(have - want) > 1e-6f * std::fabs(want))
      return false;
  }
  if (!db.hasInput(2))
    return true;
  std::optional<SmallVector<int32_t>> zb =
      constantValues<int32_t>(db.getInputs()[2]);
  return zb && llvm::all_of(*zb, [](int32_t z) { return z == 0; });
}

/// Rewrites `q` = QuantizeLinear(Conv(...)) when it matches; returns the
/// nodes that may have become dead.
SmallVector<onnx::NodeOp> foldConv(onnx::NodeOp q) {
  if (!q.hasInput(2) || elementCount(q.getInputs()[1]) != 1 ||
      elementCount(q.getInputs()[2]) != 1 || q.getNumResults() != 1)
    return {};
  onnx::NodeOp conv = producer(q.getInputs()[0], "Conv", 2);
  if (!conv || !conv.getResult(0).hasOneUse())
    return {};
  onnx::NodeOp dx = producer(conv.getInputs()[0], "DequantizeLinear", 2);
  onnx::NodeOp dw = producer(conv.getInputs()[1], "DequantizeLinear", 2);
  if (!isDequantize(dx, std::nullopt) || !isDequantize(dw, 0))
    return {};
  onnx::NodeOp db;
  if (conv.hasInput(2)) {
    db = producer(conv.getInputs()[2], "DequantizeLinear", 2);
    if (!isIntegerBias(db, dx.getInputs()[1], dw.getInputs()[1]))
      return {};
  }
  SmallVector<Value> inputs = {dx.getInputs()[0], dx.getInputs()[1],
                               dx.getInputs()[2], dw.getInputs()[0],
                               dw.getInputs()[1], dw.getInputs()[2],
                               q.getInputs()[1],  q.getInputs()[2]};
  if (db)
    inputs.push_back(db.getInputs()[0]);
  OpBuilder b(q);
  // QLinearConv exists since opset 10 and has not changed since.
  auto folded =
      onnx::NodeOp::create(b, conv.getLoc(), q->getResultTypes(), "QLinearConv",
                           "", 10, conv.getNameAttr(), conv.getAttrs(),
                           /*graph_attrs=*/ArrayAttr(), inputs,
                           /*graphsCount=*/0);
  q.getResult(0).replaceAllUsesWith(folded.getResult(0));
  q.erase();
  conv.erase();
  SmallVector<onnx::NodeOp> maybeDead = {dx, dw};
  if (db)
    maybeDead.push_back(db);
  return maybeDead;
}

/// The quantized matrix product `q` = QuantizeLinear(MatMul(DQ(a), DQ(b)))
/// or QuantizeLinear(Gemm(DQ(a), DQ(b)[, DQ(c)])) stands for, when it
/// matches: QLinearMatMul, or ONNX Runtime's com.microsoft QGemm (which
/// keeps Gemm's transA, transB and alpha and takes c as an int32 bias).
/// Returns the nodes that may have become dead.
SmallVector<onnx::NodeOp> foldMatrixProduct(onnx::NodeOp q) {
  if (!q.hasInput(2) || elementCount(q.getInputs()[1]) != 1 ||
      elementCount(q.getInputs()[2]) != 1 || q.getNumResults() != 1)
    return {};
  onnx::NodeOp mm = producer(q.getInputs()[0], "MatMul", 2);
  onnx::NodeOp gemm = producer(q.getInputs()[0], "Gemm", 2);
  onnx::NodeOp product = mm ? mm : gemm;
  if (!product || !product.getResult(0).hasOneUse())
    return {};
  onnx::NodeOp da = producer(product.getInputs()[0], "DequantizeLinear", 2);
  onnx::NodeOp db = producer(product.getInputs()[1], "DequantizeLinear", 2);
  auto bType = db ? dyn_cast<RankedTensorType>(db.getInputs()[0].getType())
                  : RankedTensorType();
  // a may be unranked before shape subgraphs fold (a Reshape to a computed
  // shape before the classifier): Gemm has rank 2 by definition.
  auto aType =
      da ? dyn_cast<TensorType>(da.getInputs()[0].getType()) : TensorType();
  if (!bType || !aType || bType.getRank() != 2 ||
      (gemm && aType.hasRank() && aType.getRank() != 2))
    return {};
  // b per tensor or per output column: its last dim, or its first when a
  // Gemm transposes it.
  int64_t transB = 0;
  if (gemm)
    if (auto t = dyn_cast_or_null<IntegerAttr>(gemm.getOnnxAttr("transB")))
      transB = t.getInt();
  if (!isDequantize(da, std::nullopt) || !isDequantize(db, transB ? 0 : 1))
    return {};
  onnx::NodeOp dc;
  if (gemm && gemm.hasInput(2)) {
    auto beta = dyn_cast_or_null<FloatAttr>(gemm.getOnnxAttr("beta"));
    dc = producer(gemm.getInputs()[2], "DequantizeLinear", 2);
    if ((beta && beta.getValueAsDouble() != 1.0) ||
        !isIntegerBias(dc, da.getInputs()[1], db.getInputs()[1]))
      return {};
  }
  OpBuilder b(q);
  onnx::NodeOp folded;
  if (mm) {
    SmallVector<Value> inputs = {da.getInputs()[0], da.getInputs()[1],
                                 da.getInputs()[2], db.getInputs()[0],
                                 db.getInputs()[1], db.getInputs()[2],
                                 q.getInputs()[1],  q.getInputs()[2]};
    // QLinearMatMul exists since opset 10.
    folded = onnx::NodeOp::create(b, mm.getLoc(), q->getResultTypes(),
                                  "QLinearMatMul", "", 10, mm.getNameAttr(),
                                  mm.getAttrs(), /*graph_attrs=*/ArrayAttr(),
                                  inputs, /*graphsCount=*/0);
  } else {
    Value bias = dc ? dc.getInputs()[0]
                    : onnx::NoneOp::create(b, gemm.getLoc(), b.getNoneType())
                          .getResult();
    SmallVector<Value> inputs = {da.getInputs()[0],
                                 da.getInputs()[1],
                                 da.getInputs()[2],
                                 db.getInputs()[0],
                                 db.getInputs()[1],
                                 db.getInputs()[2],
                                 bias,
                                 q.getInputs()[1],
                                 q.getInputs()[2]};
    // QGemm is version 1 of ONNX Runtime's com.microsoft domain.
    folded = onnx::NodeOp::create(
        b, gemm.getLoc(), q->getResultTypes(), "QGemm", "com.microsoft", 1,
        gemm.getNameAttr(), gemm.getAttrs(), /*graph_attrs=*/ArrayAttr(),
        inputs, /*graphsCount=*/0);
  }
  q.getResult(0).replaceAllUsesWith(folded.getResult(0));
  q.erase();
  product.erase();
  SmallVector<onnx::NodeOp> maybeDead = {da, db};
  if (dc)
    maybeDead.push_back(dc);
  return maybeDead;
}

/// The float bias of a Conv, per output channel, when it is known at
/// compile time: a constant, or the DequantizeLinear of constants (an int32
/// bias as quantizers write it). `m` is the output channel count.
std::optional<SmallVector<float>> constantBias(Value bias, int64_t m) {
  if (std::optional<SmallVector<float>> v = constantValues<float>(bias))
    return static_cast<int64_t>(v->size()) == m ? v : std::nullopt;
  onnx::NodeOp db = producer(bias, "DequantizeLinear", 2);
  if (!db)
    return std::nullopt;
  std::optional<SmallVector<int32_t>> q =
      constantValues<int32_t>(db.getInputs()[0]);
  std::optional<SmallVector<float>> scale =
      constantValues<float>(db.getInputs()[1]);
  std::optional<SmallVector<int32_t>> zero = SmallVector<int32_t>{0};
  if (db.hasInput(2))
    zero = constantValues<int32_t>(db.getInputs()[2]);
  if (!q || !scale || !zero || static_cast<int64_t>(q->size()) != m ||
      (scale->size() != 1 && static_cast<int64_t>(scale->size()) != m) ||
      (zero->size() != 1 && static_cast<int64_t>(zero->size()) != m))
    return std::nullopt;
  SmallVector<float> out(m);
  for (int64_t i = 0; i < m; ++i)
    out[i] = static_cast<float>((*q)[i] - (*zero)[zero->size() == 1 ? 0 : i]) *
             (*scale)[scale->size() == 1 ? 0 : i];
  return out;
}

/// sx * sw[c] for each of `channels` output channels, when the two
/// DequantizeLinear nodes of a product's inputs have constant scales (x's
/// one, w's one or one per channel) and constant zero points.
std::optional<SmallVector<float>>
productScales(onnx::NodeOp dx, onnx::NodeOp dw, int64_t channels) {
  std::optional<SmallVector<float>> sx =
      constantValues<float>(dx.getInputs()[1]);
  std::optional<SmallVector<float>> sw =
      constantValues<float>(dw.getInputs()[1]);
  ElementsAttr zx, zw;
  if (ShapedType::isDynamic(channels) || !sx || sx->size() != 1 || !sw ||
      (sw->size() != 1 && static_cast<int64_t>(sw->size()) != channels) ||
      !matchPattern(dx.getInputs()[2], m_Constant(&zx)) ||
      !matchPattern(dw.getInputs()[2], m_Constant(&zw)))
    return std::nullopt;
  SmallVector<float> scale(channels);
  for (int64_t i = 0; i < channels; ++i)
    scale[i] = (*sx)[0] * (*sw)[sw->size() == 1 ? 0 : i];
  return scale;
}

/// The float result of a product of dequantized inputs computed on their
/// 8-bit values: `opType` (ConvInteger or MatMulInteger, opset 10, with
/// `name` and `attrs`) of dx's and dw's quantized inputs and zero points,
/// cast to `yType`'s f32 and times `scale`, a constant of shape
/// `scaleShape` that broadcasts along the output channels.
Value integerProduct(OpBuilder &b, Location loc, StringRef opType,
                     StringAttr name, DictionaryAttr attrs, onnx::NodeOp dx,
                     onnx::NodeOp dw, RankedTensorType yType,
                     ArrayRef<float> scale, ArrayRef<int64_t> scaleShape) {
  auto i32Type = RankedTensorType::get(yType.getShape(), b.getI32Type());
  auto sums = onnx::NodeOp::create(
      b, loc, TypeRange{i32Type}, opType, "", 10, name, attrs,
      /*graph_attrs=*/ArrayAttr(),
      ValueRange{dx.getInputs()[0], dw.getInputs()[0], dx.getInputs()[2],
                 dw.getInputs()[2]},
      /*graphsCount=*/0);
  auto cast = onnx::NodeOp::create(
      b, loc, TypeRange{yType}, "Cast", "", 13, StringAttr(),
      b.getDictionaryAttr(
          b.getNamedAttr("to", b.getI64IntegerAttr(1 /*TensorProto::FLOAT*/))),
      /*graph_attrs=*/ArrayAttr(), ValueRange{sums.getResult(0)},
      /*graphsCount=*/0);
  Value scales = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get(scaleShape, b.getF32Type()),
                             scale));
  return onnx::NodeOp::create(b, loc, TypeRange{yType}, "Mul", "", 14,
                              StringAttr(), b.getDictionaryAttr({}),
                              /*graph_attrs=*/ArrayAttr(),
                              ValueRange{cast.getResult(0), scales},
                              /*graphsCount=*/0)
      .getResult(0);
}

/// Rewrites a Conv of dequantized 8-bit input and weights whose result
/// stays float (TensorRT-style QDQ: QuantizeLinear before a convolution's
/// inputs only, its output going on in float to the next ones) into
/// ConvInteger and the dequantization of its sums, (sum) * sx * sw[m] +
/// b[m], when the scales, zero points and bias are constants. Returns the
/// nodes that may have become dead.
SmallVector<onnx::NodeOp> foldConvFloatOut(onnx::NodeOp conv) {
  if (conv.getNumResults() != 1)
    return {};
  auto yType = dyn_cast<RankedTensorType>(conv.getResult(0).getType());
  onnx::NodeOp dx = producer(conv.getInputs()[0], "DequantizeLinear", 2);
  onnx::NodeOp dw = producer(conv.getInputs()[1], "DequantizeLinear", 2);
  if (!yType || !yType.getElementType().isF32() || yType.getRank() != 4 ||
      !isDequantize(dx, std::nullopt) || !isDequantize(dw, 0))
    return {};
  int64_t m = yType.getDimSize(1);
  std::optional<SmallVector<float>> scale = productScales(dx, dw, m);
  if (!scale)
    return {};
  std::optional<SmallVector<float>> bias;
  if (conv.hasInput(2) && !(bias = constantBias(conv.getInputs()[2], m)))
    return {};
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  auto perChannel = RankedTensorType::get({1, m, 1, 1}, b.getF32Type());
  // ConvInteger takes Conv's attributes.
  Value result =
      integerProduct(b, loc, "ConvInteger", conv.getNameAttr(), conv.getAttrs(),
                     dx, dw, yType, *scale, perChannel.getShape());
  if (bias) {
    Value biases = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(perChannel, ArrayRef(*bias)));
    result = onnx::NodeOp::create(b, loc, TypeRange{yType}, "Add", "", 14,
                                  StringAttr(), b.getDictionaryAttr({}),
                                  /*graph_attrs=*/ArrayAttr(),
                                  ValueRange{result, biases},
                                  /*graphsCount=*/0)
                 .getResult(0);
  }
  SmallVector<onnx::NodeOp> maybeDead = {dx, dw};
  if (conv.hasInput(2))
    if (onnx::NodeOp db = producer(conv.getInputs()[2], "DequantizeLinear", 2))
      maybeDead.push_back(db);
  conv.getResult(0).replaceAllUsesWith(result);
  conv.erase();
  return maybeDead;
}

/// Likewise a MatMul of a dequantized 8-bit activation (per tensor) and
/// matrix (per tensor or per output column) whose result stays float:
/// MatMulInteger, cast to f32, times sa * sb[n].
SmallVector<onnx::NodeOp> foldMatMulFloatOut(onnx::NodeOp mm) {
  if (mm.getNumResults() != 1)
    return {};
  auto yType = dyn_cast<RankedTensorType>(mm.getResult(0).getType());
  onnx::NodeOp da = producer(mm.getInputs()[0], "DequantizeLinear", 2);
  onnx::NodeOp db = producer(mm.getInputs()[1], "DequantizeLinear", 2);
  auto bType = db ? dyn_cast<RankedTensorType>(db.getInputs()[0].getType())
                  : RankedTensorType();
  if (!yType || !yType.getElementType().isF32() || yType.getRank() < 2 ||
      !bType || bType.getRank() != 2 || !bType.hasStaticShape() ||
      !isDequantize(da, std::nullopt) || !isDequantize(db, 1))
    return {};
  int64_t n = bType.getDimSize(1);
  std::optional<SmallVector<float>> scale = productScales(da, db, n);
  if (!scale)
    return {};
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  mm.getResult(0).replaceAllUsesWith(
      integerProduct(b, loc, "MatMulInteger", mm.getNameAttr(),
                     b.getDictionaryAttr({}), da, db, yType, *scale, {n}));
  mm.erase();
  return {da, db};
}

/// Rewrites `mul` = Mul(DequantizeLinear(q, 1, z), c), with c a constant
/// that varies along axis 1 only ([1, C, 1, ...]), to DequantizeLinear(q,
/// c, z) per axis 1: the per-channel activations of `dlc-compile
/// --quantize` write their dequantization that way (ONNX Runtime fuses a
/// per-axis DequantizeLinear into kernels that take scalars), and one op
/// joins the kernel that reads it where two would be a kernel of their
/// own. Bit-exact: (q - z) * 1 * c is (q - z) * c. Returns the
/// DequantizeLinear that may have become dead, or null.
onnx::NodeOp foldChannelScale(onnx::NodeOp mul) {
  if (mul.getOpType() != "Mul" || !mul.getDomain().empty() ||
      !mul.hasInput(0) || !mul.hasInput(1) || mul.getNumResults() != 1)
    return nullptr;
  for (unsigned side = 0; side < 2; ++side) {
    onnx::NodeOp dq = producer(mul.getInputs()[side], "DequantizeLinear", 3);
    Value c = mul.getInputs()[1 - side];
    if (!dq || !dq.getResult(0).hasOneUse() || !isDequantize(dq, std::nullopt))
      continue;
    auto type = dyn_cast<RankedTensorType>(dq.getResult(0).getType());
    auto cType = dyn_cast<RankedTensorType>(c.getType());
    if (!type || !cType || type != mul.getResult(0).getType() ||
        !type.getElementType().isF32() || type.getRank() < 2 ||
        cType.getRank() != type.getRank() || !type.hasStaticShape())
      continue;
    int64_t channels = type.getDimSize(1);
    bool alongAxis1 = true;
    for (int64_t d = 0; d < cType.getRank(); ++d)
      alongAxis1 &= cType.getDimSize(d) == (d == 1 ? channels : 1);
    std::optional<SmallVector<float>> scale =
        constantValues<float>(dq.getInputs()[1]);
    std::optional<SmallVector<float>> values = constantValues<float>(c);
    ElementsAttr zero;
    if (!alongAxis1 || !scale || (*scale)[0] != 1.0f || !values ||
        !matchPattern(dq.getInputs()[2], m_Constant(&zero)) ||
        !isa<DenseElementsAttr>(zero))
      continue;
    OpBuilder b(mul);
    Location loc = mul.getLoc();
    auto vector = [&](Type element) {
      return RankedTensorType::get({channels}, element);
    };
    Value scales = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vector(b.getF32Type()), ArrayRef(*values)));
    Value zeros = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            vector(zero.getElementType()),
            cast<DenseElementsAttr>(zero).getSplatValue<Attribute>()));
    auto folded = onnx::NodeOp::create(
        b, loc, mul->getResultTypes(), "DequantizeLinear", "", 13,
        mul.getNameAttr(),
        b.getDictionaryAttr(b.getNamedAttr("axis", b.getI64IntegerAttr(1))),
        /*graph_attrs=*/ArrayAttr(),
        ValueRange{dq.getInputs()[0], scales, zeros}, /*graphsCount=*/0);
    mul.getResult(0).replaceAllUsesWith(folded.getResult(0));
    mul.erase();
    return dq;
  }
  return nullptr;
}

struct FoldQDQPass : public dlc::impl::FoldQDQBase<FoldQDQPass> {
  void runOnOperation() override {
    SmallVector<onnx::NodeOp> quantizes, muls;
    getOperation().walk([&](onnx::NodeOp node) {
      if (node.getOpType() == "QuantizeLinear" && node.getDomain().empty())
        quantizes.push_back(node);
      if (node.getOpType() == "Mul" && node.getDomain().empty())
        muls.push_back(node);
    });
    SmallVector<onnx::NodeOp> maybeDead;
    for (onnx::NodeOp q : quantizes) {
      SmallVector<onnx::NodeOp> dead = foldConv(q);
      if (dead.empty())
        dead = foldMatrixProduct(q);
      maybeDead.append(dead);
    }
    // The convolutions and matrix products of dequantized inputs left:
    // their results stay float.
    SmallVector<onnx::NodeOp> convs, matmuls;
    getOperation().walk([&](onnx::NodeOp node) {
      if (!node.getDomain().empty() || !node.hasInput(0) || !node.hasInput(1))
        return;
      if (node.getOpType() == "Conv")
        convs.push_back(node);
      if (node.getOpType() == "MatMul")
        matmuls.push_back(node);
    });
    for (onnx::NodeOp conv : convs)
      maybeDead.append(foldConvFloatOut(conv));
    for (onnx::NodeOp mm : matmuls)
      maybeDead.append(foldMatMulFloatOut(mm));
    // After the convolutions: a DequantizeLinear they read is then read by
    // the Mul alone.
    for (onnx::NodeOp mul : muls)
      if (onnx::NodeOp dq = foldChannelScale(mul))
        maybeDead.push_back(dq);
    // A DequantizeLinear several convolutions shared dies with the last.
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (onnx::NodeOp node : maybeDead)
      if (!erased.contains(node) && node->use_empty()) {
        erased.insert(node);
        node.erase();
      }
  }
};

} // namespace
