//===- CPUInt8Conv.cpp - the dlc-cpu-int8-conv pass -----------------------===//
//
// Integer convolutions (ConvInteger, QLinearConv, folded QDQ convolutions)
// put into the forms dlc-cpu-register-tile vectorizes.
//
// With 4-byte dot products (x86 VNNI's vpdpbusd: 4 adjacent unsigned bytes
// times 4 adjacent signed bytes, summed into a 32-bit lane), both operands
// get 4 input channels adjacent: the filter, a constant, is packed at
// compile time; the input goes through an elementwise repack to
// (N, C / 4, H, W, 4) unsigned bytes. The convolution is then written with
// its 4-channel reduction innermost, vectorized along output pixels (NCHW
// out, filter taps broadcast) where a row of pixels fills vectors, else
// along output channels (channels-last out, read back by a transpose).
//
// Depthwise convolutions reduce over filter taps only; they keep their
// layout and lose the zero points from their body.
//
// In both, the zero points leave the reduction: with filter values
// w' = w - w_zp and the input's zero point z,
//   sum (x - z) * w' = sum x * w' - z * sum w'
// and the second term is a per-channel constant (times z where z is only
// known at run time: quantize_dynamic's DynamicQuantizeLinear), added
// afterwards. Where w' spans more than a signed byte (uint8 filters with a
// zero point far from 128), each output channel's filter is centred by an
// offset o, w' = w'' + o, and with dot products
//   sum (x - z) * w' = sum x * w'' - z * (sum w'' + K o) + o * sum x
// over the K taps of a window: the last term is o times the input's window
// sums, one more (small) contraction with a filter of ones.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

namespace dlc {
#define GEN_PASS_DEF_CPUINT8CONV
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Looks through reshapes to the op that made `v`.
Value throughReshapes(Value v) {
  while (true) {
    if (auto e = v.getDefiningOp<tensor::ExpandShapeOp>())
      v = e.getSrc();
    else if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>())
      v = c.getSrc();
    else
      return v;
  }
}

/// The 8-bit constant behind `v` (through reshapes), as int64 values in
/// row-major order.
std::optional<std::vector<int64_t>> byteConstant(Value v, bool isUnsigned) {
  ElementsAttr attr;
  if (!matchPattern(throughReshapes(v), m_Constant(&attr)) ||
      !attr.getElementType().isInteger(8))
    return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(attr.getNumElements());
  auto push = [&](int8_t x) {
    out.push_back(isUnsigned ? static_cast<int64_t>(static_cast<uint8_t>(x))
                             : static_cast<int64_t>(x));
  };
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    ArrayRef<char> data = res.getData();
    if (static_cast<int64_t>(data.size()) != attr.getNumElements())
      return std::nullopt; // released or malformed
    for (char c : data)
      push(static_cast<int8_t>(c));
    return out;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  for (APInt x : dense.getValues<APInt>())
    push(static_cast<int8_t>(x.getSExtValue()));
  return out;
}

/// A constant of signed bytes of `type`: a resource named after the one
/// `like` comes from (plus `suffix`) when that is one, else inline.
Value byteConstantOp(OpBuilder &b, Location loc, RankedTensorType type,
                     ArrayRef<int8_t> values, Value like, StringRef suffix) {
  ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                       values.size());
  auto cst = throughReshapes(like).getDefiningOp<arith::ConstantOp>();
  auto res = cst ? dyn_cast<DenseResourceElementsAttr>(cst.getValue())
                 : DenseResourceElementsAttr();
  if (res)
    return arith::ConstantOp::create(
        b, loc,
        DenseResourceElementsAttr::get(
            type, (res.getRawHandle().getKey() + suffix).str(),
            HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64)));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

/// An i32 tensor of `shape` filled with zeros: a contraction's accumulator.
Value zeroAccumulator(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Type i32 = b.getI32Type();
  return linalg::FillOp::create(
             b, loc,
             ValueRange{
                 arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0))},
             ValueRange{tensor::EmptyOp::create(b, loc, shape, i32)})
      .getResult(0);
}

/// The contraction acc += ext(x) * ext(w) over bytes, x zero- or
/// sign-extended as `xUnsigned` says, w sign-extended, into a zero
/// accumulator of `type`.
Value byteProduct(OpBuilder &b, Location loc, RankedTensorType type, Value x,
                  Value w, ArrayRef<AffineMap> maps,
                  ArrayRef<utils::IteratorType> iterators, bool xUnsigned) {
  Type i32 = b.getI32Type();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, w},
             zeroAccumulator(b, loc, type.getShape()), maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value xv =
                   xUnsigned ? Value(arith::ExtUIOp::create(nb, nl, i32, a[0]))
                             : Value(arith::ExtSIOp::create(nb, nl, i32, a[0]));
               Value wv = arith::ExtSIOp::create(nb, nl, i32, a[1]);
               Value p = arith::MulIOp::create(nb, nl, xv, wv);
               linalg::YieldOp::create(
                   nb, nl, arith::AddIOp::create(nb, nl, a[2], p).getResult());
             })
      .getResult(0);
}

/// What the zero points leave behind once they are out of a contraction's
/// reduction, per output channel c and output element p:
///   constant[c] - ext(zp) * zpTimes[c] + sumTimes[c] * sums[p]
/// (`zp`, the input's run-time zero point, and `sums`, the input's window
/// sums, only where present). All of it is 32-bit wrapping arithmetic,
/// exact where the reference's int32 result is.
struct Correction {
  std::vector<int32_t> constant;
  Value zp;
  bool zpUnsigned = false;
  std::vector<int32_t> zpTimes;
  Value sums;
  std::vector<int32_t> sumTimes;
  /// `sums`'s indices in the result's loops.
  AffineMap sumsRead;
};

bool hasOffsets(ArrayRef<int64_t> offset) {
  return llvm::any_of(offset, [](int64_t o) { return o != 0; });
}

/// A constant i32 vector.
Value i32Vector(OpBuilder &b, Location loc, ArrayRef<int32_t> values) {
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(values.size())},
                                b.getI32Type()),
          values));
}

/// `acc` read through `read`, plus `corr` with its per-channel vectors read
/// through `channel`, as a new tensor of `type`.
Value addPerChannel(OpBuilder &b, Location loc, Value acc,
                    const Correction &corr, RankedTensorType type,
                    AffineMap read, AffineMap channel) {
  Type i32 = b.getI32Type();
  unsigned rank = type.getRank();
  SmallVector<Value> ins = {acc, i32Vector(b, loc, corr.constant)};
  SmallVector<AffineMap> maps = {read, channel};
  if (corr.zp) {
    ins.append({corr.zp, i32Vector(b, loc, corr.zpTimes)});
    maps.append({AffineMap::get(rank, 0, {}, b.getContext()), channel});
  }
  if (corr.sums) {
    ins.append({corr.sums, i32Vector(b, loc, corr.sumTimes)});
    maps.append({corr.sumsRead, channel});
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             b, loc, type, ins,
             tensor::EmptyOp::create(b, loc, type.getShape(), i32).getResult(),
             maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value v = arith::AddIOp::create(nb, nl, a[0], a[1]);
               unsigned next = 2;
               if (corr.zp) {
                 Value z =
                     corr.zpUnsigned
                         ? Value(arith::ExtUIOp::create(nb, nl, i32, a[next]))
                         : Value(arith::ExtSIOp::create(nb, nl, i32, a[next]));
                 v = arith::SubIOp::create(
                     nb, nl, v, arith::MulIOp::create(nb, nl, z, a[next + 1]));
                 next += 2;
               }
               if (corr.sums)
                 v = arith::AddIOp::create(
                     nb, nl, v,
                     arith::MulIOp::create(nb, nl, a[next], a[next + 1]));
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

/// The input zero point of a contraction: a constant, or a scalar tensor
/// computed at run time (DynamicQuantizeLinear's).
struct ZeroPoint {
  int64_t constant = 0;
  Value runtime;
};

/// Per output channel, `sum_i w'[i]` plus `taps` times the channel's
/// offset: what the input's zero point multiplies.
std::vector<int64_t> zeroPointTimes(ArrayRef<int64_t> filter,
                                    ArrayRef<int64_t> offset, int64_t taps) {
  std::vector<int64_t> out(offset.size());
  for (size_t o = 0; o < offset.size(); ++o) {
    int64_t sum = 0;
    for (int64_t i = 0; i < taps; ++i)
      sum += filter[o * taps + i];
    out[o] = sum + taps * offset[o];
  }
  return out;
}

/// The correction of a contraction whose input, shifted by `shift` (128
/// where signed bytes were flipped to unsigned ones), has zero point `zp`,
/// with `times` from zeroPointTimes; `offset` the filter's per-channel
/// offsets (their window sums are added by the caller).
Correction zeroPointCorrection(const ZeroPoint &zp, bool zpUnsigned,
                               int64_t shift, ArrayRef<int64_t> times) {
  Correction c;
  auto wrap = [](int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  };
  for (int64_t t : times) {
    c.constant.push_back(wrap(-(zp.constant + shift) * t));
    if (zp.runtime)
      c.zpTimes.push_back(wrap(t));
  }
  if (zp.runtime) {
    c.zp = zp.runtime;
    c.zpUnsigned = zpUnsigned;
  }
  return c;
}

/// Signed-byte filter values: `values` (rows of `taps`, one per output
/// channel) minus a per-channel offset, 0 where a row fits in a signed
/// byte, else the one that centres it. Rows spanning more than 256 values
/// do not fit at all.
std::optional<std::vector<int64_t>> centreRows(std::vector<int64_t> &values,
                                               int64_t taps) {
  int64_t rows = taps ? static_cast<int64_t>(values.size()) / taps : 0;
  std::vector<int64_t> offset(rows, 0);
  for (int64_t o = 0; o < rows; ++o) {
    auto row = ArrayRef<int64_t>(values).slice(o * taps, taps);
    auto [lo, hi] = std::minmax_element(row.begin(), row.end());
    if (*lo >= -128 && *hi <= 127)
      continue;
    if (*hi - *lo > 255)
      return std::nullopt;
    offset[o] = *lo < -128 ? *lo + 128 : *hi - 127;
    for (int64_t i = 0; i < taps; ++i)
      values[o * taps + i] -= offset[o];
  }
  return offset;
}

/// A widened byte operand of the contraction's body: `ext(arg)` or
/// `ext(arg) - ext(zp)`, as block argument numbers.
struct Widened {
  unsigned arg = 0;
  bool isUnsigned = false;
  std::optional<unsigned> zp;
};

std::optional<Widened> widened(Value v) {
  Widened w;
  Value x = v;
  Value zp;
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    x = sub.getLhs();
    zp = sub.getRhs();
  }
  auto argOf = [&](Value e, bool &isUnsigned) -> std::optional<unsigned> {
    Operation *op = e.getDefiningOp();
    if (!isa_and_nonnull<arith::ExtUIOp, arith::ExtSIOp>(op))
      return std::nullopt;
    isUnsigned = isa<arith::ExtUIOp>(op);
    auto arg = dyn_cast<BlockArgument>(op->getOperand(0));
    if (!arg || !arg.getType().isInteger(8))
      return std::nullopt;
    return arg.getArgNumber();
  };
  std::optional<unsigned> a = argOf(x, w.isUnsigned);
  if (!a)
    return std::nullopt;
  w.arg = *a;
  if (zp) {
    bool zpUnsigned = false;
    w.zp = argOf(zp, zpUnsigned);
    if (!w.zp || zpUnsigned != w.isUnsigned)
      return std::nullopt;
  }
  return w;
}

/// The two widened inputs (input 0 first, then input 1) of an integer
/// contraction's body out + widened(in0) * widened(in1), in either order.
std::optional<std::pair<Widened, Widened>>
widenedProduct(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  Value acc = body.getArgument(op.getNumDpsInputs());
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulIOp>();
  if (!mul || (add.getLhs() != acc && add.getRhs() != acc) ||
      !mul.getType().isInteger(32))
    return std::nullopt;
  std::optional<Widened> l = widened(mul.getLhs());
  std::optional<Widened> r = widened(mul.getRhs());
  if (!l || !r)
    return std::nullopt;
  if (l->arg != 0)
    std::swap(l, r);
  if (l->arg != 0 || r->arg != 1)
    return std::nullopt;
  return std::make_pair(*l, *r);
}

/// The scalar zero point of widened operand `w` of `op`: 0 when it has
/// none, its value when it is a constant, else the scalar tensor.
std::optional<ZeroPoint> scalarZeroPoint(linalg::GenericOp op,
                                         const Widened &w) {
  if (!w.zp)
    return ZeroPoint();
  Value v = op.getDpsInputs()[*w.zp];
  if (op.getIndexingMapsArray()[*w.zp].getNumResults() != 0)
    return std::nullopt;
  std::optional<std::vector<int64_t>> z = byteConstant(v, w.isUnsigned);
  if (z && z->size() == 1)
    return ZeroPoint{(*z)[0], Value()};
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (z || !type || type.getRank() != 0)
    return std::nullopt;
  return ZeroPoint{0, v};
}

/// The constant zero points of widened operand `w` of `op` for each of
/// `count` output channels: all 0 without one, a scalar repeated, or a
/// vector read through `perChannel`.
std::optional<std::vector<int64_t>> channelZeroPoints(linalg::GenericOp op,
                                                      const Widened &w,
                                                      int64_t count,
                                                      AffineMap perChannel) {
  if (!w.zp)
    return std::vector<int64_t>(count, 0);
  std::optional<std::vector<int64_t>> z =
      byteConstant(op.getDpsInputs()[*w.zp], w.isUnsigned);
  AffineMap map = op.getIndexingMapsArray()[*w.zp];
  if (!z)
    return std::nullopt;
  if (map.getNumResults() == 0 && z->size() == 1)
    return std::vector<int64_t>(count, (*z)[0]);
  if (map == perChannel && static_cast<int64_t>(z->size()) == count)
    return z;
  return std::nullopt;
}

/// The 2-D integer convolution the ONNX lowering writes: loops (n, g, m,
/// oh, ow, c, kh, kw); x (n, g, c, <oh, kh>, <ow, kw>), w (g, m, c, kh,
/// kw), out (n, g, m, oh, ow) in i32; body (ext(x) - z) * (ext(w) - w_zp)
/// with the zero points optional, scalars (the filter's per (g, m) too).
struct IntegerConv {
  linalg::GenericOp op;
  Value x, w;
  bool xUnsigned = false;
  ZeroPoint xZp;
  /// w - w_zp - offset, in the filter's (G, M/G, C/G, KH, KW) order.
  std::vector<int64_t> filter;
  /// Per output channel: 0 where w - w_zp fits in a signed byte, else
  /// what centres it there (uint8 filters with a zero point far from 128).
  std::vector<int64_t> offset;
  int64_t n = 0, g = 0, mg = 0, cg = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  /// The input's spatial index expressions in the original loops.
  AffineExpr rowExpr, colExpr;
};

std::optional<IntegerConv> matchConv(linalg::GenericOp op) {
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (op.getNumLoops() != 8 || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 || op.getNumDpsInputs() > 4 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap xMap = maps[0];
  if (xMap.getNumResults() != 5 || xMap.getResult(0) != d(0) ||
      xMap.getResult(1) != d(1) || xMap.getResult(2) != d(5) ||
      maps[1] != AffineMap::get(8, 0, {d(1), d(2), d(5), d(6), d(7)}, ctx) ||
      maps.back() != AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx))
    return std::nullopt;
  // The input's rows use only (oh, kh), its columns only (ow, kw).
  const unsigned spatialLoops[2][2] = {{3, 6}, {4, 7}};
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned i = 0; i < 8; ++i)
      if (i != spatialLoops[s][0] && i != spatialLoops[s][1] &&
          xMap.getResult(3 + s).isFunctionOfDim(i))
        return std::nullopt;
  std::optional<std::pair<Widened, Widened>> operands = widenedProduct(op);
  if (!operands)
    return std::nullopt;
  std::optional<Widened> l = operands->first, r = operands->second;

  IntegerConv k;
  k.op = op;
  k.x = op.getDpsInputs()[0];
  k.w = op.getDpsInputs()[1];
  auto xType = cast<RankedTensorType>(k.x.getType());
  auto wType = cast<RankedTensorType>(k.w.getType());
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  if (!xType.hasStaticShape() || !wType.hasStaticShape() ||
      !outType.hasStaticShape())
    return std::nullopt;
  k.n = outType.getDimSize(0);
  k.g = wType.getDimSize(0);
  k.mg = wType.getDimSize(1);
  k.cg = wType.getDimSize(2);
  k.kh = wType.getDimSize(3);
  k.kw = wType.getDimSize(4);
  k.oh = outType.getDimSize(3);
  k.ow = outType.getDimSize(4);
  k.rowExpr = xMap.getResult(3);
  k.colExpr = xMap.getResult(4);
  k.xUnsigned = l->isUnsigned;
  std::optional<ZeroPoint> xZp = scalarZeroPoint(op, *l);
  if (!xZp)
    return std::nullopt;
  k.xZp = *xZp;
  std::optional<std::vector<int64_t>> filter = byteConstant(k.w, r->isUnsigned);
  if (!filter)
    return std::nullopt;
  int64_t m = k.g * k.mg, taps = k.cg * k.kh * k.kw;
  std::optional<std::vector<int64_t>> wZp =
      channelZeroPoints(op, *r, m, AffineMap::get(8, 0, {d(1), d(2)}, ctx));
  if (!wZp)
    return std::nullopt;
  k.filter = std::move(*filter);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < taps; ++i)
      k.filter[o * taps + i] -= (*wZp)[o];
  std::optional<std::vector<int64_t>> offset = centreRows(k.filter, taps);
  if (!offset)
    return std::nullopt;
  k.offset = std::move(*offset);
  return k;
}

/// The integer matrix product the ONNX lowering writes (MatMulInteger,
/// QLinearMatMul, QGemm) with a constant right operand: loops (m, n, k);
/// a (m, k), b (k, n) (a constant, or a transpose of one), out (m, n) in
/// i32; body (ext(a) - z) * (ext(b) - b_zp), the zero points optional,
/// scalars (b's per column too).
struct IntegerMatmul {
  linalg::GenericOp op;
  Value a;
  bool aUnsigned = false;
  ZeroPoint aZp;
  /// b - b_zp - offset, (N, K) row-major: each output column's reduction
  /// contiguous.
  std::vector<int64_t> filter;
  /// Per output column, as IntegerConv::offset.
  std::vector<int64_t> offset;
  Value filterSource; ///< the constant it comes from (resource naming)
  int64_t m = 0, n = 0, k = 0;
};

std::optional<IntegerMatmul> matchMatmul(linalg::GenericOp op) {
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (op.getNumLoops() != 3 || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 || op.getNumDpsInputs() > 4 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(3, 0, {d(0), d(2)}, ctx) ||
      maps[1] != AffineMap::get(3, 0, {d(2), d(1)}, ctx) ||
      maps.back() != AffineMap::get(3, 0, {d(0), d(1)}, ctx))
    return std::nullopt;
  std::optional<std::pair<Widened, Widened>> operands = widenedProduct(op);
  if (!operands)
    return std::nullopt;
  std::optional<Widened> l = operands->first, r = operands->second;
  IntegerMatmul mm;
  mm.op = op;
  mm.a = op.getDpsInputs()[0];
  auto aType = cast<RankedTensorType>(mm.a.getType());
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  if (!aType.hasStaticShape() || !outType.hasStaticShape())
    return std::nullopt;
  mm.m = outType.getDimSize(0);
  mm.n = outType.getDimSize(1);
  mm.k = aType.getDimSize(1);
  mm.aUnsigned = l->isUnsigned;
  std::optional<ZeroPoint> aZp = scalarZeroPoint(op, *l);
  if (!aZp)
    return std::nullopt;
  mm.aZp = *aZp;
  // b: a constant (K, N), or the transpose of a constant (N, K).
  Value b = op.getDpsInputs()[1];
  bool transposed = false;
  if (auto t = b.getDefiningOp<linalg::TransposeOp>()) {
    if (t.getPermutation() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    b = t.getInput();
    transposed = true;
  }
  std::optional<std::vector<int64_t>> values = byteConstant(b, r->isUnsigned);
  if (!values || static_cast<int64_t>(values->size()) != mm.n * mm.k)
    return std::nullopt;
  std::optional<std::vector<int64_t>> zp =
      channelZeroPoints(op, *r, mm.n, AffineMap::get(3, 0, {d(1)}, ctx));
  if (!zp)
    return std::nullopt;
  mm.filterSource = b;
  mm.filter.resize(mm.n * mm.k);
  for (int64_t j = 0; j < mm.n; ++j)
    for (int64_t i = 0; i < mm.k; ++i)
      mm.filter[j * mm.k + i] =
          (transposed ? (*values)[j * mm.k + i] : (*values)[i * mm.n + j]) -
          (*zp)[j];
  std::optional<std::vector<int64_t>> offset = centreRows(mm.filter, mm.k);
  if (!offset)
    return std::nullopt;
  mm.offset = std::move(*offset);
  return mm;
}

struct CPUInt8ConvPass : public dlc::impl::CPUInt8ConvBase<CPUInt8ConvPass> {
  using Base::Base;

  /// How a flip of the sign bit moves the input's values (and so its zero
  /// point): +128 to unsigned bytes, -128 to signed ones (signedDot).
  int64_t shiftOf(bool flip) const {
    return flip ? (signedDot ? -128 : 128) : 0;
  }

  /// What `k`'s input zero point leaves (the input shifted by `shift`):
  /// -z * (sum(w') + taps * offset) per output channel.
  static Correction correction(const IntegerConv &k, int64_t shift) {
    return zeroPointCorrection(
        k.xZp, k.xUnsigned, shift,
        zeroPointTimes(k.filter, k.offset, k.cg * k.kh * k.kw));
  }

  /// Replaces `k.op`'s result by `value` + `corr` per output channel, in
  /// the result's layout (N, G, M/G, OH, OW), or in (N, M, OH, OW) when the
  /// result's one user is the reshape to that and `foldReshape`. `read`
  /// maps those loops to `value`'s indices.
  void finish(OpBuilder &b, IntegerConv &k, Value value, Correction corr,
              function_ref<SmallVector<AffineExpr>(bool grouped)> read,
              bool foldReshape = true) {
    MLIRContext *ctx = b.getContext();
    Location loc = k.op.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    int64_t m = k.g * k.mg;
    Operation *replaced = k.op;
    auto resultType = cast<RankedTensorType>(k.op.getResult(0).getType());
    auto collapse =
        k.op->hasOneUse()
            ? dyn_cast<tensor::CollapseShapeOp>(*k.op->getUsers().begin())
            : nullptr;
    bool grouped = true;
    if (foldReshape && collapse &&
        collapse.getResultType().getShape() ==
            ArrayRef<int64_t>{k.n, m, k.oh, k.ow}) {
      replaced = collapse;
      resultType = collapse.getResultType();
      grouped = false;
    }
    unsigned rank = resultType.getRank();
    AffineExpr channel = grouped ? d(1) * k.mg + d(2) : d(1);
    // The window sums are (N, 1, OH, OW).
    if (corr.sums)
      corr.sumsRead = AffineMap::get(
          rank, 0,
          {d(0), getAffineConstantExpr(0, ctx), d(rank - 2), d(rank - 1)}, ctx);
    Value result = addPerChannel(b, loc, value, corr, resultType,
                                 AffineMap::get(rank, 0, read(grouped), ctx),
                                 AffineMap::get(rank, 0, channel, ctx));
    replaced->getResult(0).replaceAllUsesWith(result);
    if (replaced != k.op.getOperation())
      replaced->erase();
    Value x = k.x, w = k.w;
    k.op.erase();
    // The reshapes that fed only the old convolution: dead uses would keep
    // dispatch formation from fusing the input's padding into the repack.
    for (Value v : {x, w})
      if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
          expand && expand->use_empty())
        expand->erase();
    ++numRewritten;
  }

  /// Whether a row of `k`'s output pixels fills vectors well. A 1x1
  /// convolution over its whole input at stride 1 reads its pixels as one
  /// run (dlc-cpu-loop-order merges its rows and columns), so the run is
  /// all of them: MobileNetV2's 1x1 layers at 28x28 and 14x14 (rows of 28
  /// and 14) go along pixels too, NCHW out, rather than along channels
  /// with the transposing epilogue (3x slower at 28x28 on AVX-512).
  bool pixelsFill(const IntegerConv &k) const {
    auto laneUse = [&](int64_t n) {
      return static_cast<double>(n) /
             static_cast<double>((n + lanes - 1) / lanes * lanes);
    };
    auto xType = cast<RankedTensorType>(k.x.getType());
    bool wholeInput = k.kh == 1 && k.kw == 1 && xType.getDimSize(3) == k.oh &&
                      xType.getDimSize(4) == k.ow;
    int64_t run = wholeInput ? k.oh * k.ow : k.ow;
    return run >= 2 * lanes && laneUse(run) >= 0.8;
  }

  /// Dot product layout, one group.
  void rewriteDot(IntegerConv &k) {
    OpBuilder b(k.op);
    MLIRContext *ctx = b.getContext();
    Location loc = k.op.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    int64_t f = k.mg, c = k.cg, c4 = (c + 3) / 4;
    auto xType = cast<RankedTensorType>(k.x.getType());
    int64_t h = xType.getDimSize(3), wd = xType.getDimSize(4);
    // The stride of the output columns in the input's columns: the
    // coefficient of ow (loop 4) in its index expression (ow * s + kw * d).
    SmallVector<AffineExpr> onlyColumns(8, getAffineConstantExpr(0, ctx));
    onlyColumns[4] = getAffineConstantExpr(1, ctx);
    auto stride =
        dyn_cast<AffineConstantExpr>(k.colExpr.replaceDims(onlyColumns));
    // Along pixels: a's vectors are 4 channels of `lanes` neighbouring
    // pixels, contiguous at stride 1, every other group of 4 bytes at
    // stride 2 (two loads and a shuffle).
    bool pixels = pixelsFill(k) && stride &&
                  (stride.getValue() == 1 || stride.getValue() == 2);
    int64_t fb = 1, fp = f;
    // Along channels, the kernel's epilogue reads the convolution's
    // (block, lane) result as (c floordiv B, c mod B); tiling computes the
    // slice of a range of c through `mod` from its ends, which is right for
    // ranges of whole blocks only, and workgroup tiles are static, so a
    // channel count that ends in a partial block would lose the lanes past
    // its remainder in every other block. Such convolutions keep their
    // layout (integer multiply-adds, no dot products).
    if (!pixels && f % lanes != 0) {
      // (Filters with offsets need the window sums, which only this
      // layout computes: those convolutions stay as they are.)
      if (!hasOffsets(k.offset))
        rewriteCentered(k);
      return;
    }
    if (!pixels) {
      // Output channels in blocks of fb (a register block's width),
      // padded with zero filters to a whole number of vectors.
      fp = (f + lanes - 1) / lanes * lanes;
      fb = fp % (2 * lanes) == 0 ? 2 * lanes : lanes;
    }

    // The filter: (F / fb, C / 4, KH, KW, fb, 4) along channels,
    // (F, C / 4, KH, KW, 4) along pixels.
    std::vector<int8_t> packed(fp * c4 * 4 * k.kh * k.kw, 0);
    for (int64_t o = 0; o < f; ++o)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t y = 0; y < k.kh; ++y)
          for (int64_t z = 0; z < k.kw; ++z) {
            int64_t tap = ((o / fb) * c4 + i / 4) * k.kh * k.kw + y * k.kw + z;
            packed[(tap * fb + o % fb) * 4 + i % 4] = static_cast<int8_t>(
                k.filter[((o * c + i) * k.kh + y) * k.kw + z]);
          }
    SmallVector<int64_t> packedShape =
        pixels ? SmallVector<int64_t>{f, c4, k.kh, k.kw, 4}
               : SmallVector<int64_t>{fp / fb, c4, k.kh, k.kw, fb, 4};
    Value packedFilter = byteConstantOp(
        b, loc, RankedTensorType::get(packedShape, i8), packed, k.w, ".dot4");

    // The input as unsigned bytes, 4 channels adjacent: (N, C/4, H, W, 4),
    // read from before the reshape that added the group dim when there is
    // one (so that the padding before it fuses into the repack).
    Value xIn = k.x;
    unsigned cDim = 2;
    if (auto expand = k.x.getDefiningOp<tensor::ExpandShapeOp>();
        expand && expand.getSrcType().getShape() ==
                      ArrayRef<int64_t>{xType.getDimSize(0), c, h, wd}) {
      xIn = expand.getSrc();
      cDim = 1;
    }
    if (c % 4 != 0) {
      // The extra channels meet zero filter taps; their value is moot.
      auto inType = cast<RankedTensorType>(xIn.getType());
      SmallVector<OpFoldResult> low(inType.getRank(), b.getIndexAttr(0)),
          high(inType.getRank(), b.getIndexAttr(0));
      high[cDim] = b.getIndexAttr(c4 * 4 - c);
      SmallVector<int64_t> padded(inType.getShape());
      padded[cDim] = c4 * 4;
      Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, 0));
      xIn = tensor::PadOp::create(b, loc, RankedTensorType::get(padded, i8),
                                  xIn, low, high, zero);
    }
    SmallVector<AffineExpr> packRead = {d(0), d(1) * 4 + d(4), d(2), d(3)};
    if (cDim == 2)
      packRead.insert(packRead.begin() + 1, getAffineConstantExpr(0, ctx));
    auto xPackedType =
        RankedTensorType::get({xType.getDimSize(0), c4, h, wd, 4}, i8);
    // The dot product's activation bytes: unsigned (VNNI, usdot) or signed
    // (sdot); the other kind flips its sign bit on the way.
    bool flip = k.xUnsigned == signedDot;
    auto repack = linalg::GenericOp::create(
        b, loc, xPackedType, xIn,
        tensor::EmptyOp::create(b, loc, xPackedType.getShape(), i8).getResult(),
        ArrayRef<AffineMap>{AffineMap::get(5, 0, packRead, ctx),
                            b.getMultiDimIdentityMap(5)},
        SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value v = a[0];
          // Signed to unsigned (+ 128) or back (- 128): the sign bit.
          if (flip)
            v = arith::XOrIOp::create(
                nb, nl, v,
                arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i8, -128)));
          linalg::YieldOp::create(nb, nl, v);
        });
    repack->setAttr(dlc::kMaterializeAttr, b.getUnitAttr());

    // The convolution with the 4 adjacent channels (loop k) innermost.
    // Along pixels: loops (n, f, oh, ow, c4, kh, kw, k), out (n, f, oh,
    // ow); along channels: (n, oh, ow, block, lane, c4, kh, kw, k), out
    // (n, oh, ow, block, lane). The spatial index expressions keep their
    // strides and dilations.
    auto zero = getAffineConstantExpr(0, ctx);
    SmallVector<AffineExpr> old =
        pixels ? SmallVector<AffineExpr>{d(0), zero, d(1), d(2),
                                         d(3), d(4), d(5), d(6)}
               : SmallVector<AffineExpr>{d(0), zero, d(4), d(1),
                                         d(2), d(5), d(6), d(7)};
    AffineExpr row = k.rowExpr.replaceDims(old),
               col = k.colExpr.replaceDims(old);
    unsigned loops = pixels ? 8 : 9;
    AffineMap xpMap, wpMap, outMap;
    SmallVector<int64_t> outShape;
    if (pixels) {
      xpMap = AffineMap::get(8, 0, {d(0), d(4), row, col, d(7)}, ctx);
      wpMap = AffineMap::get(8, 0, {d(1), d(4), d(5), d(6), d(7)}, ctx);
      outMap = AffineMap::get(8, 0, {d(0), d(1), d(2), d(3)}, ctx);
      outShape = {k.n, f, k.oh, k.ow};
    } else {
      xpMap = AffineMap::get(9, 0, {d(0), d(5), row, col, d(8)}, ctx);
      wpMap = AffineMap::get(9, 0, {d(3), d(5), d(6), d(7), d(4), d(8)}, ctx);
      outMap = AffineMap::get(9, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx);
      outShape = {k.n, k.oh, k.ow, fp / fb, fb};
    }
    SmallVector<utils::IteratorType> iterators(loops - 4,
                                               utils::IteratorType::parallel);
    iterators.append(4, utils::IteratorType::reduction);
    Value conv = byteProduct(b, loc, RankedTensorType::get(outShape, i32),
                             repack.getResult(0), packedFilter,
                             {xpMap, wpMap, outMap}, iterators,
                             /*xUnsigned=*/!signedDot);

    // Its zero point moves with the flip.
    Correction corr = correction(k, shiftOf(flip));
    if (hasOffsets(k.offset)) {
      // The window sums of the (shifted) input, which the filter offsets
      // multiply: a convolution with a filter of ones, along pixels
      // whatever the layout above (a 1/F share of the work).
      std::vector<int8_t> ones(c4 * 4 * k.kh * k.kw, 0);
      for (int64_t i = 0; i < c; ++i)
        for (int64_t t = 0; t < k.kh * k.kw; ++t)
          ones[((i / 4) * k.kh * k.kw + t) * 4 + i % 4] = 1;
      SmallVector<AffineExpr> pixelLoops = {d(0), zero, d(1), d(2),
                                            d(3), d(4), d(5), d(6)};
      AffineExpr pRow = k.rowExpr.replaceDims(pixelLoops),
                 pCol = k.colExpr.replaceDims(pixelLoops);
      SmallVector<utils::IteratorType> pixelIterators(
          4, utils::IteratorType::parallel);
      pixelIterators.append(4, utils::IteratorType::reduction);
      corr.sums = byteProduct(
          b, loc, RankedTensorType::get({k.n, 1, k.oh, k.ow}, i32),
          repack.getResult(0),
          arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(
                  RankedTensorType::get({1, c4, k.kh, k.kw, 4}, i8),
                  ArrayRef<int8_t>(ones))),
          {AffineMap::get(8, 0, {d(0), d(4), pRow, pCol, d(7)}, ctx),
           AffineMap::get(8, 0, {d(1), d(4), d(5), d(6), d(7)}, ctx),
           AffineMap::get(8, 0, {d(0), d(1), d(2), d(3)}, ctx)},
          pixelIterators, /*xUnsigned=*/!signedDot);
      for (int64_t off : k.offset)
        corr.sumTimes.push_back(static_cast<int32_t>(off));
    }
    finish(b, k, conv, std::move(corr), [&](bool grouped) {
      // Result loops: (n, g, m, oh, ow) or (n, m, oh, ow).
      AffineExpr mm = grouped ? d(2) : d(1);
      AffineExpr y = grouped ? d(3) : d(2), xx = grouped ? d(4) : d(3);
      if (pixels)
        return SmallVector<AffineExpr>{d(0), mm, y, xx};
      return SmallVector<AffineExpr>{d(0), y, xx, mm.floorDiv(fb), mm % fb};
    });
  }

  /// The zero points out of the body (depthwise convolutions, and all of
  /// them without dot products). Where the result's one user is the
  /// reshape to (N, M, OH, OW) and the input comes through the reshape
  /// that added the group dim, one-group and depthwise convolutions drop
  /// the unit loops and write (N, M, OH, OW) themselves, so that the
  /// correction and what follows fuse into their kernel as an epilogue;
  /// other ones keep the grouped loops and layout.
  void rewriteCentered(IntegerConv &k) {
    OpBuilder b(k.op);
    MLIRContext *ctx = b.getContext();
    Location loc = k.op.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Type i8 = b.getI8Type();
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    int64_t m = k.g * k.mg;
    std::vector<int8_t> values(k.filter.begin(), k.filter.end());
    auto collapse =
        k.op->hasOneUse()
            ? dyn_cast<tensor::CollapseShapeOp>(*k.op->getUsers().begin())
            : nullptr;
    auto expand = k.x.getDefiningOp<tensor::ExpandShapeOp>();
    auto xType = cast<RankedTensorType>(k.x.getType());
    bool flat = collapse &&
                collapse.getResultType().getShape() ==
                    ArrayRef<int64_t>{k.n, m, k.oh, k.ow} &&
                expand &&
                expand.getSrcType().getShape() ==
                    ArrayRef<int64_t>{k.n, k.g * k.cg, xType.getDimSize(3),
                                      xType.getDimSize(4)} &&
                (k.g == 1 || (k.mg == 1 && k.cg == 1));
    if (!flat) {
      Value filter = byteConstantOp(
          b, loc, RankedTensorType::get({k.g, k.mg, k.cg, k.kh, k.kw}, i8),
          values, k.w, ".centered");
      SmallVector<AffineMap> maps = k.op.getIndexingMapsArray();
      Value conv = byteProduct(
          b, loc, cast<RankedTensorType>(k.op.getResult(0).getType()), k.x,
          filter, {maps[0], maps[1], maps.back()}, k.op.getIteratorTypesArray(),
          k.xUnsigned);
      // The grouped layout stays, and so does the reshape after it.
      finish(
          b, k, conv, correction(k, 0),
          [&](bool) {
            return SmallVector<AffineExpr>{d(0), d(1), d(2), d(3), d(4)};
          },
          /*foldReshape=*/false);
      return;
    }
    // One group: loops (n, m, oh, ow, c, kh, kw), filter (M, C, KH, KW).
    // Depthwise: loops (n, g, oh, ow, kh, kw), filter (G, KH, KW).
    bool depthwise = k.g != 1;
    SmallVector<AffineExpr> old =
        depthwise ? SmallVector<AffineExpr>{d(0), d(1), zero, d(2),
                                            d(3), zero, d(4), d(5)}
                  : SmallVector<AffineExpr>{d(0), zero, d(1), d(2),
                                            d(3), d(4), d(5), d(6)};
    unsigned loops = depthwise ? 6 : 7;
    AffineExpr row = k.rowExpr.replaceDims(old),
               col = k.colExpr.replaceDims(old);
    AffineMap xMap = AffineMap::get(
        loops, 0, {d(0), depthwise ? d(1) : d(4), row, col}, ctx);
    AffineMap wMap =
        depthwise ? AffineMap::get(loops, 0, {d(1), d(4), d(5)}, ctx)
                  : AffineMap::get(loops, 0, {d(1), d(4), d(5), d(6)}, ctx);
    AffineMap outMap = AffineMap::get(loops, 0, {d(0), d(1), d(2), d(3)}, ctx);
    SmallVector<int64_t> wShape =
        depthwise ? SmallVector<int64_t>{k.g, k.kh, k.kw}
                  : SmallVector<int64_t>{m, k.cg, k.kh, k.kw};
    Value filter = byteConstantOp(b, loc, RankedTensorType::get(wShape, i8),
                                  values, k.w, ".centered");
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(loops - 4, utils::IteratorType::reduction);
    Value conv =
        byteProduct(b, loc, collapse.getResultType(), expand.getSrc(), filter,
                    {xMap, wMap, outMap}, iterators, k.xUnsigned);
    finish(b, k, conv, correction(k, 0), [&](bool grouped) {
      return SmallVector<AffineExpr>{d(0), d(1), d(2), d(3)};
    });
  }

  /// A matrix product with dot products: a as (M, K/4, 4) unsigned bytes
  /// (a reshape, after padding K and flipping signed bytes where needed),
  /// b packed at compile time to (N'/fb, K/4, fb, 4), loops (m, block,
  /// lane, k/4, k) writing (M, N'/fb, fb), read back as (M, N) with the
  /// zero point's correction.
  void rewriteMatmulDot(IntegerMatmul &mm) {
    OpBuilder b(mm.op);
    MLIRContext *ctx = b.getContext();
    Location loc = mm.op.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    // As for convolutions along channels (rewriteDot): columns that end
    // in a partial block stay a plain integer product, unless there is one
    // row (a classifier on one image): then the only loop workgroups could
    // split is the column loop, which dlc-tile-and-distribute never splits
    // into partial blocks, so nothing is sliced.
    if (mm.n % lanes != 0 && mm.m != 1)
      return;
    int64_t k4 = (mm.k + 3) / 4;
    int64_t np = (mm.n + lanes - 1) / lanes * lanes;
    int64_t fb = np % (2 * lanes) == 0 ? 2 * lanes : lanes;
    std::vector<int8_t> packed(np * k4 * 4, 0);
    bool flip = mm.aUnsigned == signedDot;
    Correction corr =
        zeroPointCorrection(mm.aZp, mm.aUnsigned, shiftOf(flip),
                            zeroPointTimes(mm.filter, mm.offset, mm.k));
    for (int64_t j = 0; j < mm.n; ++j)
      for (int64_t i = 0; i < mm.k; ++i)
        packed[(((j / fb) * k4 + i / 4) * fb + j % fb) * 4 + i % 4] =
            static_cast<int8_t>(mm.filter[j * mm.k + i]);
    Value w =
        byteConstantOp(b, loc, RankedTensorType::get({np / fb, k4, fb, 4}, i8),
                       packed, mm.filterSource, ".dot4");
    Value a = mm.a;
    if (mm.k % 4 != 0) {
      SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)),
          high(2, b.getIndexAttr(0));
      high[1] = b.getIndexAttr(k4 * 4 - mm.k);
      Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, 0));
      a = tensor::PadOp::create(b, loc,
                                RankedTensorType::get({mm.m, k4 * 4}, i8), a,
                                low, high, zero);
    }
    if (flip) {
      auto type = RankedTensorType::get({mm.m, k4 * 4}, i8);
      a = linalg::GenericOp::create(
              b, loc, type, a,
              tensor::EmptyOp::create(b, loc, type.getShape(), i8).getResult(),
              ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2),
                                  b.getMultiDimIdentityMap(2)},
              SmallVector<utils::IteratorType>(2,
                                               utils::IteratorType::parallel),
              [&](OpBuilder &nb, Location nl, ValueRange v) {
                linalg::YieldOp::create(
                    nb, nl,
                    arith::XOrIOp::create(
                        nb, nl, v[0],
                        arith::ConstantOp::create(nb, nl,
                                                  nb.getIntegerAttr(i8, -128)))
                        .getResult());
              })
              .getResult(0);
    }
    a = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({mm.m, k4, 4}, i8), a,
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
    SmallVector<utils::IteratorType> iterators(3,
                                               utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value acc = byteProduct(
        b, loc, RankedTensorType::get({mm.m, np / fb, fb}, i32), a, w,
        {AffineMap::get(5, 0, {d(0), d(3), d(4)}, ctx),
         AffineMap::get(5, 0, {d(1), d(3), d(2), d(4)}, ctx),
         AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx)},
        iterators, /*xUnsigned=*/!signedDot);
    if (hasOffsets(mm.offset)) {
      // The row sums of the (shifted) a, which the column offsets
      // multiply: a product with a column of ones (zeros in the padding).
      std::vector<int8_t> ones(k4 * 4, 0);
      std::fill(ones.begin(), ones.begin() + mm.k, 1);
      corr.sums = byteProduct(
          b, loc, RankedTensorType::get({mm.m}, i32), a,
          arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(RankedTensorType::get({k4, 4}, i8),
                                     ArrayRef<int8_t>(ones))),
          {AffineMap::get(3, 0, {d(0), d(1), d(2)}, ctx),
           AffineMap::get(3, 0, {d(1), d(2)}, ctx),
           AffineMap::get(3, 0, {d(0)}, ctx)},
          {utils::IteratorType::parallel, utils::IteratorType::reduction,
           utils::IteratorType::reduction},
          /*xUnsigned=*/!signedDot);
      corr.sumsRead = AffineMap::get(2, 0, {d(0)}, ctx);
      for (int64_t off : mm.offset)
        corr.sumTimes.push_back(static_cast<int32_t>(off));
    }
    Value result = addPerChannel(
        b, loc, acc, corr, cast<RankedTensorType>(mm.op.getResult(0).getType()),
        AffineMap::get(2, 0, {d(0), d(1).floorDiv(fb), d(1) % fb}, ctx),
        AffineMap::get(2, 0, {d(1)}, ctx));
    Value oldB = mm.op.getDpsInputs()[1];
    mm.op.getResult(0).replaceAllUsesWith(result);
    mm.op.erase();
    if (auto t = oldB.getDefiningOp<linalg::TransposeOp>(); t && t->use_empty())
      t.erase();
    ++numRewritten;
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> products;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.getNumLoops() == 3)
        products.push_back(op);
    });
    if (dotProducts)
      for (linalg::GenericOp op : products)
        if (std::optional<IntegerMatmul> mm = matchMatmul(op))
          rewriteMatmulDot(*mm);
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.getNumLoops() == 8)
        candidates.push_back(op);
    });
    for (linalg::GenericOp op : candidates) {
      std::optional<IntegerConv> k = matchConv(op);
      if (!k)
        continue;
      if (k->g == 1 && dotProducts)
        rewriteDot(*k);
      else if (!hasOffsets(k->offset))
        rewriteCentered(*k);
    }
  }
};

} // namespace
