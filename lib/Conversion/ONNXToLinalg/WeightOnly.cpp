//===- WeightOnly.cpp - weight-only quantized matrix products -------------===//
//
// com.microsoft.MatMulNBits, what ONNX Runtime's and Olive's 4-bit
// quantizers and GenAI exports write: Y = A * dequant(B)^T (+ bias), with
// B's N rows of K values quantized in blocks of `block_size` along K, each
// block with its own scale and zero point:
//   B        uint8 [N, ceil(K / block_size), block_size * bits / 8]: two
//            4-bit values a byte, the even k in the low nibble (bits = 4),
//            or one a byte (bits = 8);
//   scales   float [N * blocks] (or [N, blocks]);
//   zero_points (optional) uint8 packed like B along the blocks of a row
//            ([N * ceil(blocks * bits / 8)]), or float [N * blocks];
//            absent: 2^(bits - 1);
//   g_idx    (optional) the block of each k: only the plain k / block_size
//            is taken;
//   bias     (optional) float [N].
//
// The product is one linalg.generic over (m, n, block, byte, field), k =
// (block * bytes + byte) * fields + field, whose body takes each weight's
// bits out of its byte, subtracts the block's zero point and scales it
// next to the multiply: the packed bytes are what the kernel reads, and no
// float copy of the weights exists anywhere (constants are not folded
// through a product with an activation). Constant B, scales and zero
// points are laid out at compile time with the N columns innermost (B
// [blocks, bytes, N]; scales and zero points, one byte each or floats,
// [blocks, N]), so that neighbouring columns are neighbouring bytes.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace dlc;

namespace {

constexpr StringLiteral kDomain = "com.microsoft";

/// The `bits`-wide field of `byte` (i8) at field index `index` (index
/// type) of the fields packed low to high, as f32.
Value unpackField(OpBuilder &b, Location loc, Value byte, Value index,
                  int64_t bits) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  if (bits == 8)
    return arith::UIToFPOp::create(b, loc, f32, byte);
  int64_t perByte = 8 / bits;
  Value slot = arith::RemUIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, perByte));
  Value shift = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, i8, slot),
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, bits)));
  Value field = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, byte, shift),
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, (1 << bits) - 1)));
  return arith::UIToFPOp::create(b, loc, f32, field);
}

/// `v` with its float elements converted to `to` (extended or rounded),
/// as any elementwise op (folded when `v` is a small constant); `v` itself
/// when they already are.
Value convertFloats(NodeRewriter &rw, Value v, Type to) {
  Type from = cast<RankedTensorType>(v.getType()).getElementType();
  if (from == to)
    return v;
  FailureOr<Value> converted = buildElementwise(
      rw, {v}, to, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return castScalar(nb, nl, a[0], from, to);
      });
  assert(succeeded(converted) && "one operand always broadcasts");
  return *converted;
}

/// Float values of `bytes` (`count` elements of float type `t`: f32, f16
/// or bf16, little-endian) as f32.
std::vector<float> floatsOf(const std::vector<char> &bytes, int64_t count,
                            Type t) {
  std::vector<float> out(count);
  unsigned width = t.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < count; ++i) {
    if (width == 4) {
      std::memcpy(&out[i], bytes.data() + i * 4, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + i * 2, 2);
    llvm::APFloat f(cast<FloatType>(t).getFloatSemantics(),
                    llvm::APInt(16, bits));
    out[i] = f.convertToFloat();
  }
  return out;
}

/// A constant of `type` holding `bytes`, as a resource blob named after
/// `name` (weights stay out of the IR's text).
Value resourceConstant(OpBuilder &b, Location loc, RankedTensorType type,
                       ArrayRef<char> bytes, StringRef name) {
  return arith::ConstantOp::create(
      b, loc,
      DenseResourceElementsAttr::get(
          type, name,
          HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64)));
}

/// B, scales and zero points laid out with the N output columns innermost,
/// at compile time: B' [blocks, bytes, N], scales' and zero points' (as
/// floats, the default filled in) [blocks, N]. A kernel then reads
/// neighbouring columns from neighbouring bytes (vectors on CPUs,
/// coalesced loads on GPUs), and the zero points need no unpacking.
struct ColumnsInnermost {
  Value b, scales, zeroPoints;
};

std::optional<ColumnsInnermost>
columnsInnermost(NodeRewriter &rw, int64_t n, int64_t blocks, int64_t blob,
                 int64_t bits, int64_t zpKind /*0 none, 1 packed, 2 float*/,
                 int64_t zpCols, Type floatType) {
  int64_t floatBytes = floatType.getIntOrFloatBitWidth() / 8;
  std::optional<std::vector<char>> bBytes =
      constantBytes(rw.input(1), n * blocks * blob, 1);
  std::optional<std::vector<char>> sBytes =
      constantBytes(rw.input(2), n * blocks, floatBytes);
  std::optional<std::vector<char>> zBytes;
  if (zpKind != 0)
    zBytes =
        constantBytes(rw.input(3), n * zpCols, zpKind == 1 ? 1 : floatBytes);
  if (!bBytes || !sBytes || (zpKind != 0 && !zBytes))
    return std::nullopt;
  std::vector<float> scales = floatsOf(*sBytes, n * blocks, floatType);
  std::vector<float> floatZps;
  if (zpKind == 2)
    floatZps = floatsOf(*zBytes, n * blocks, floatType);
  std::vector<char> bt(bBytes->size());
  for (int64_t c = 0; c < n; ++c)
    for (int64_t blk = 0; blk < blocks; ++blk)
      for (int64_t j = 0; j < blob; ++j)
        bt[(blk * blob + j) * n + c] = (*bBytes)[(c * blocks + blk) * blob + j];
  std::vector<float> st(n * blocks), zt(n * blocks);
  std::vector<char> zb(n * blocks);
  float defaultZp = static_cast<float>(int64_t(1) << (bits - 1));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      st[blk * n + c] = scales[c * blocks + blk];
      float z = defaultZp;
      if (zpKind == 2) {
        z = floatZps[c * blocks + blk];
      } else if (zpKind == 1) {
        int64_t perByte = 8 / bits;
        auto byte = static_cast<uint8_t>((*zBytes)[c * zpCols + blk / perByte]);
        z = static_cast<float>((byte >> ((blk % perByte) * bits)) &
                               ((1 << bits) - 1));
      }
      zt[blk * n + c] = z;
      zb[blk * n + c] = static_cast<char>(static_cast<uint8_t>(z));
    }
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type f32 = b.getF32Type();
  auto asBytes = [](const std::vector<float> &v) {
    return ArrayRef<char>(reinterpret_cast<const char *>(v.data()),
                          v.size() * sizeof(float));
  };
  std::string name = rw.getOp().getDisplayName().str();
  return ColumnsInnermost{
      resourceConstant(b, loc,
                       RankedTensorType::get({blocks, blob, n}, b.getI8Type()),
                       bt, name + ".B"),
      resourceConstant(b, loc, RankedTensorType::get({blocks, n}, f32),
                       asBytes(st), name + ".scales"),
      // Zero points from bytes (or the default) stay bytes.
      zpKind == 2
          ? resourceConstant(b, loc, RankedTensorType::get({blocks, n}, f32),
                             asBytes(zt), name + ".zero_points")
          : resourceConstant(b, loc,
                             RankedTensorType::get({blocks, n}, b.getI8Type()),
                             zb, name + ".zero_points")};
}

LogicalResult convertMatMulNBits(NodeRewriter &rw) {
  // A, B, scales, zero_points, g_idx, bias
  if (failed(rw.requireInput(0, "A")) || failed(rw.requireInput(1, "B")) ||
      failed(rw.requireInput(2, "scales")))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type f32 = b.getF32Type();
  RankedTensorType aType = rw.inputType(0);
  // T1: A, scales, float zero points, bias and Y. 16-bit ones are
  // computed in float32 (converted on the way in, rounded once at the
  // end), as every 16-bit product is.
  Type t1 = aType.getElementType();
  if (!t1.isF32() && !t1.isF16() && !t1.isBF16())
    return rw.unsupported("A of type " + typeName(t1) +
                          " (float32, float16 and bfloat16 are)");
  std::string t1Name =
      t1.isF32() ? "float32" : (t1.isF16() ? "float16" : "bfloat16");
  std::optional<int64_t> kAttr = rw.getOptionalInt("K");
  std::optional<int64_t> nAttr = rw.getOptionalInt("N");
  std::optional<int64_t> bsAttr = rw.getOptionalInt("block_size");
  if (!kAttr || !nAttr || !bsAttr)
    return rw.fail("attributes K, N and block_size are required");
  int64_t k = *kAttr, n = *nAttr, bs = *bsAttr, bits = rw.getInt("bits", 4);
  if (k < 1 || n < 1)
    return rw.fail("K (" + Twine(k) + ") and N (" + Twine(n) +
                   ") must be positive");
  if (bits != 4 && bits != 8)
    return rw.unsupported("bits=" + Twine(bits) + " (4 and 8 are)");
  if (bs < 16 || (bs & (bs - 1)) != 0)
    return rw.fail("block_size must be a power of 2 and at least 16, not " +
                   Twine(bs));
  if (aType.getRank() < 1 || !aType.hasStaticShape() ||
      aType.getDimSize(aType.getRank() - 1) != k)
    return rw.fail("A must be [..., K] with K = " + Twine(k) + ", not " +
                   typeName(aType));
  int64_t blocks = (k + bs - 1) / bs, blob = bs * bits / 8;
  RankedTensorType bType = rw.inputType(1);
  if (!bType.getElementType().isInteger(8) || !rw.isUnsigned(1) ||
      bType.getShape() != ArrayRef<int64_t>{n, blocks, blob})
    return rw.fail("B must be uint8 [N, ceil(K / block_size), block_size * "
                   "bits / 8] = [" +
                   Twine(n) + ", " + Twine(blocks) + ", " + Twine(blob) +
                   "], not " + typeName(bType));
  RankedTensorType sType = rw.inputType(2);
  if (sType.getElementType() != t1 || !sType.hasStaticShape() ||
      sType.getNumElements() != n * blocks)
    return rw.fail("scales must hold N * blocks = " + Twine(n * blocks) + " " +
                   t1Name + " values (A's type), not " + typeName(sType));
  // Zero points: packed unsigned fields, float values, or none.
  // (Bytes: one unsigned zero point a byte, columnsInnermost's.)
  enum class Zp {
    None = 0,
    Packed = 1,
    Float = 2,
    Bytes = 3
  } zpKind = Zp::None;
  int64_t zpCols = 0;
  if (rw.hasInput(3)) {
    RankedTensorType zType = rw.inputType(3);
    int64_t packedCols = (blocks * bits + 7) / 8;
    if (zType.getElementType().isInteger(8) && rw.isUnsigned(3) &&
        zType.hasStaticShape() && zType.getNumElements() == n * packedCols) {
      zpKind = Zp::Packed;
      zpCols = packedCols;
    } else if (zType.getElementType() == t1 && zType.hasStaticShape() &&
               zType.getNumElements() == n * blocks) {
      zpKind = Zp::Float;
      zpCols = blocks;
    } else {
      return rw.fail("zero_points must be uint8 [N * ceil(blocks * bits / "
                     "8)] = [" +
                     Twine(n * packedCols) + "] or " + t1Name +
                     " [N * blocks] = [" + Twine(n * blocks) + "], not " +
                     typeName(zType));
    }
  }
  if (rw.hasInput(4)) {
    // g_idx: the group of each k. Only the one blocks imply is taken.
    DenseElementsAttr g = getConstantTable(rw.input(4));
    bool plain = g && g.getNumElements() == k;
    if (plain) {
      SmallVector<int64_t> groups = toInt64Vector(g);
      for (int64_t i = 0; i < k && plain; ++i)
        plain = groups[i] == i / bs;
    }
    if (!plain)
      return rw.unsupported("g_idx other than k / block_size (act-order "
                            "quantization)");
  }
  if (rw.hasInput(5)) {
    RankedTensorType biasType = rw.inputType(5);
    if (biasType.getElementType() != t1 || biasType.getRank() != 1 ||
        biasType.getDimSize(0) != n)
      return rw.fail("bias must be " + t1Name + " [N] = [" + Twine(n) +
                     "], not " + typeName(biasType));
  }

  // A as [M, blocks * block_size], zero-padded past K.
  int64_t m = aType.getNumElements() / k;
  // A is read in its own type and extended next to the multiply.
  Value a = reshapeTo(b, loc, rw.input(0), {m, k});
  if (blocks * bs != k)
    a = padWithValue(b, loc, a, {0, 0}, {0, blocks * bs - k},
                     b.getFloatAttr(t1, 0));
  Value scales =
      reshapeTo(b, loc, convertFloats(rw, rw.input(2), f32), {n, blocks});
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops (m, n, block, byte, field), k = (block * blob + byte) * fields +
  // field: A is read as [M, blocks, blob, fields], every loop a plain
  // index of some operand.
  int64_t fields = 8 / bits;
  a = reshapeTo(b, loc, a, {m, blocks, blob, fields});
  std::optional<ColumnsInnermost> packed = columnsInnermost(
      rw, n, blocks, blob, bits, static_cast<int64_t>(zpKind), zpCols, t1);
  SmallVector<GenericOperand> ins = {
      {a, AffineMap::get(5, 0, {d(0), d(2), d(3), d(4)}, ctx)},
      {rw.input(1), AffineMap::get(5, 0, {d(1), d(2), d(3)}, ctx)},
      {scales, AffineMap::get(5, 0, {d(1), d(2)}, ctx)}};
  if (packed) {
    ins[1] = {packed->b, AffineMap::get(5, 0, {d(2), d(3), d(1)}, ctx)};
    ins[2] = {packed->scales, AffineMap::get(5, 0, {d(2), d(1)}, ctx)};
    ins.push_back(
        {packed->zeroPoints, AffineMap::get(5, 0, {d(2), d(1)}, ctx)});
    if (zpKind != Zp::Float)
      zpKind = Zp::Bytes;
  } else if (zpKind != Zp::None)
    ins.push_back(
        {reshapeTo(b, loc,
                   zpKind == Zp::Float ? convertFloats(rw, rw.input(3), f32)
                                       : rw.input(3),
                   {n, zpCols}),
         AffineMap::get(5, 0,
                        {d(1), zpKind == Zp::Packed && bits == 4
                                   ? d(2).floorDiv(2)
                                   : d(2)},
                        ctx)});
  double defaultZp = static_cast<double>(int64_t(1) << (bits - 1));
  Value acc = buildGeneric(
      b, loc, ins,
      {{createFilled(b, loc, {m, n}, f32, b.getF32FloatAttr(0)),
        AffineMap::get(5, 0, {d(0), d(1)}, ctx)}},
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction, utils::IteratorType::reduction,
       utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange args, ValueRange outs) {
        Value q = unpackField(nb, nl, args[1],
                              linalg::IndexOp::create(nb, nl, 4), bits);
        Value zp;
        if (zpKind == Zp::Float)
          zp = args[3];
        else if (zpKind == Zp::Bytes)
          zp = arith::UIToFPOp::create(nb, nl, nb.getF32Type(), args[3]);
        else if (zpKind == Zp::Packed)
          zp = unpackField(nb, nl, args[3], linalg::IndexOp::create(nb, nl, 2),
                           bits);
        else
          zp = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(defaultZp));
        Value w = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, q, zp), args[2]);
        Value x = args[0];
        if (x.getType() != f32)
          x = arith::ExtFOp::create(nb, nl, f32, x);
        Value p = arith::MulFOp::create(nb, nl, x, w);
        return SmallVector<Value>{arith::AddFOp::create(nb, nl, outs[0], p)};
      })[0];
  if (rw.hasInput(5))
    acc = buildGeneric(
        b, loc,
        {{acc, b.getMultiDimIdentityMap(2)},
         {convertFloats(rw, rw.input(5), f32),
          AffineMap::get(2, 0, {d(1)}, ctx)}},
        {{createEmpty(b, loc, {m, n}, f32), b.getMultiDimIdentityMap(2)}},
        {utils::IteratorType::parallel, utils::IteratorType::parallel},
        [](OpBuilder &nb, Location nl, ValueRange args, ValueRange) {
          return SmallVector<Value>{
              arith::AddFOp::create(nb, nl, args[0], args[1])};
        })[0];
  SmallVector<int64_t> outShape(aType.getShape());
  outShape.back() = n;
  return rw.replace(reshapeTo(b, loc, convertFloats(rw, acc, t1), outShape));
}

/// com.microsoft.GatherBlockQuantized, what ONNX Runtime's quantizer writes
/// for a 4-bit embedding table: rows of constant int4/uint4 `data` [R, H]
/// gathered by `indices` (gather_axis 0), each dequantized in blocks of
/// `block_size` along H (quantize_axis, the last dim) with `scales` [R,
/// H / block_size] and `zero_points` like them (4-bit; absent: 0 for int4,
/// 8 for uint4). The table is packed two values a byte at compile time
/// (4-bit constants do not cross kernel boundaries), and the kernel
/// dequantizes only the rows it gathers.
LogicalResult convertGatherBlockQuantized(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")) ||
      failed(rw.requireInput(1, "indices")) ||
      failed(rw.requireInput(2, "scales")))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type f32 = b.getF32Type();
  RankedTensorType dataType = rw.inputType(0), idxType = rw.inputType(1),
                   sType = rw.inputType(2);
  int64_t gatherAxis = rw.getInt("gather_axis", 0);
  int64_t bs = rw.getInt("block_size", 128), bits = rw.getInt("bits", 4);
  // int4/uint4 values, or uint8 bytes holding two 4-bit values (bits 4,
  // the even h in the low nibble) or one 8-bit value (bits 8).
  bool nibbles = dataType.getElementType().isInteger(4);
  bool bytes = dataType.getElementType().isInteger(8) && rw.isUnsigned(0) &&
               (bits == 4 || bits == 8);
  if (dataType.getRank() != 2 || (!nibbles && !bytes) || (nibbles && bits != 4))
    return rw.unsupported("data other than a 2-D int4/uint4 table, or uint8 "
                          "with bits 4 or 8 (" +
                          typeName(dataType) + ", bits=" + Twine(bits) + ")");
  FailureOr<int64_t> qAxis =
      rw.normalizeAxis(rw.getInt("quantize_axis", 1), 2, "quantize_axis");
  if (failed(qAxis))
    return failure();
  if (gatherAxis != 0 || *qAxis != 1)
    return rw.unsupported("gather_axis " + Twine(gatherAxis) +
                          " and quantize_axis " + Twine(*qAxis) +
                          " (0 and 1 are)");
  if (!isa<IntegerType>(idxType.getElementType()))
    return rw.fail("indices must be int32 or int64, not " + typeName(idxType));
  int64_t perByte = bytes && bits == 4 ? 2 : 1;
  int64_t rows = dataType.getDimSize(0), h = dataType.getDimSize(1) * perByte;
  if (bs < 16 || (bs & (bs - 1)) != 0)
    return rw.fail("block_size must be a power of 2 and at least 16, not " +
                   Twine(bs));
  int64_t blocks = (h + bs - 1) / bs;
  if (sType.getElementType() != f32 ||
      sType.getShape() != ArrayRef<int64_t>{rows, blocks})
    return rw.fail("scales must be float32 [" + Twine(rows) + ", " +
                   Twine(blocks) + "], not " + typeName(sType));
  bool isUnsigned = rw.isUnsigned(0);
  auto i8 = b.getI8Type();
  // The table as bytes the kernel reads: uint8 data as it is, 4-bit data
  // packed two a byte at compile time ([R, ceil(H / 2)]).
  int64_t cols = nibbles ? (h + 1) / 2 : dataType.getDimSize(1);
  Value table = rw.input(0);
  if (nibbles) {
    std::optional<SmallVector<int64_t>> data =
        integerValues(rw.input(0), isUnsigned);
    if (!data)
      return rw.unsupported("data that is not a constant");
    SmallVector<int8_t> packed(rows * cols, 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < h; ++c)
        packed[r * cols + c / 2] |=
            static_cast<int8_t>(((*data)[r * h + c] & 15) << ((c % 2) * 4));
    table = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({rows, cols}, i8),
                               ArrayRef<int8_t>(packed)));
  }
  // Zero points, one byte each; absent: 0 for int4, 8 for uint4 and 4-bit
  // fields of bytes, 128 for 8-bit ones.
  int64_t defaultZp = !isUnsigned ? 0 : bits == 8 ? 128 : 8;
  SmallVector<int64_t> zp(rows * blocks, defaultZp);
  if (rw.hasInput(3)) {
    RankedTensorType zType = rw.inputType(3);
    std::optional<SmallVector<int64_t>> z;
    bool ok = false;
    if (nibbles) {
      z = integerValues(rw.input(3), rw.isUnsigned(3));
      ok = z && zType.getElementType().isInteger(4) &&
           zType.getShape() == ArrayRef<int64_t>{rows, blocks} &&
           rw.isUnsigned(3) == isUnsigned;
    } else if (DenseElementsAttr attr = getParameterConstant(rw.input(3));
               attr && attr.getElementType().isInteger(8) && rw.isUnsigned(3)) {
      // Bytes: 4-bit zero points packed two a byte along each row's blocks.
      int64_t zCols = (blocks + perByte - 1) / perByte;
      SmallVector<int64_t> raw;
      for (const APInt &x : attr.getValues<APInt>())
        raw.push_back(static_cast<int64_t>(x.getZExtValue()));
      ok = zType.getNumElements() == rows * zCols;
      if (ok) {
        z.emplace(rows * blocks);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t k = 0; k < blocks; ++k)
            (*z)[r * blocks + k] =
                perByte == 2 ? (raw[r * zCols + k / 2] >> ((k % 2) * 4)) & 15
                             : raw[r * zCols + k];
      }
    }
    if (!ok)
      return rw.fail("zero_points must be a constant of data's type [" +
                     Twine(rows) + ", " + Twine(blocks) +
                     "] (packed like data for uint8), not " + typeName(zType));
    zp = std::move(*z);
  }
  SmallVector<int8_t> zeroBytes(rows * blocks);
  for (auto [i, z] : llvm::enumerate(zp))
    zeroBytes[i] = static_cast<int8_t>(z);
  Value zeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({rows, blocks}, i8),
                             ArrayRef<int8_t>(zeroBytes)));
  Value scales = rw.input(2);
  SmallVector<int64_t> shape(idxType.getShape());
  shape.push_back(h);
  int64_t q = idxType.getRank();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < q; ++d)
    idxExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<utils::IteratorType> iterators(q + 1,
                                             utils::IteratorType::parallel);
  Value result = buildGeneric(
      b, loc,
      {{rw.input(1), AffineMap::get(q + 1, 0, idxExprs, b.getContext())}},
      {{createEmpty(b, loc, shape, f32), b.getMultiDimIdentityMap(q + 1)}},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args, ValueRange) {
        Value row = wrapAndClamp(nb, nl, args[0], rows);
        Value col = linalg::IndexOp::create(nb, nl, q);
        auto index = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        if (perByte == 1 && bytes) {
          Value byte =
              tensor::ExtractOp::create(nb, nl, table, ValueRange{row, col});
          Value block = arith::DivUIOp::create(nb, nl, col, index(bs));
          Value z =
              tensor::ExtractOp::create(nb, nl, zeros, ValueRange{row, block});
          Value s =
              tensor::ExtractOp::create(nb, nl, scales, ValueRange{row, block});
          return SmallVector<Value>{arith::MulFOp::create(
              nb, nl,
              arith::SubFOp::create(nb, nl,
                                    arith::UIToFPOp::create(nb, nl, f32, byte),
                                    arith::UIToFPOp::create(nb, nl, f32, z)),
              s)};
        }
        Value byte = tensor::ExtractOp::create(
            nb, nl, table,
            ValueRange{row, arith::DivUIOp::create(nb, nl, col, index(2))});
        Value shift = arith::MulIOp::create(
            nb, nl,
            arith::IndexCastUIOp::create(
                nb, nl, i8, arith::RemUIOp::create(nb, nl, col, index(2))),
            arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i8, 4)));
        Value field = arith::AndIOp::create(
            nb, nl, arith::ShRUIOp::create(nb, nl, byte, shift),
            arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i8, 15)));
        Value value;
        if (isUnsigned) {
          value = arith::UIToFPOp::create(nb, nl, f32, field);
        } else {
          // A signed nibble: its bit 3 is the sign (v - 16 when set).
          Value wide = arith::ExtUIOp::create(nb, nl, nb.getI32Type(), field);
          Value neg = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::uge, wide,
              arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(8)));
          wide = arith::SelectOp::create(
              nb, nl, neg,
              arith::SubIOp::create(
                  nb, nl, wide,
                  arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(16))),
              wide);
          value = arith::SIToFPOp::create(nb, nl, f32, wide);
        }
        Value block = arith::DivUIOp::create(nb, nl, col, index(bs));
        Value z =
            tensor::ExtractOp::create(nb, nl, zeros, ValueRange{row, block});
        Value zf = isUnsigned ? Value(arith::UIToFPOp::create(nb, nl, f32, z))
                              : Value(arith::SIToFPOp::create(nb, nl, f32, z));
        Value s =
            tensor::ExtractOp::create(nb, nl, scales, ValueRange{row, block});
        return SmallVector<Value>{arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, value, zf), s)};
      })[0];
  return rw.replace(result);
}

} // namespace

void dlc::populateWeightOnlyHandlers(HandlerRegistry &r) {
  r.add("MatMulNBits", {1}, convertMatMulNBits, kDomain);
  r.add("GatherBlockQuantized", {1}, convertGatherBlockQuantized, kDomain);
}
