//===- Convolution.cpp - Conv, ConvTranspose, pooling ---------------------===//
//
// Convolutions become the linalg.conv_* / depthwise_conv_* named ops where
// one fits, else one equivalent linalg.generic (grouped 1-D/3-D, 4-D and
// more), on an input padded by an explicit tensor.pad. The bias add and the
// rounding of f16/bf16 accumulators are a separate elementwise generic that
// the fusion pass folds into the convolution's kernel.
//
// ConvTranspose is the convolution of the zero-interleaved input (stride - 1
// zeros between elements, inserted by a strided tensor.insert_slice) with
// the kernel flipped in space and its channel dims swapped per group.
//
// Pooling uses linalg.pooling_* (or a generic window reduction); average
// pooling divides by a per-position tap count computed at compile time.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc;

namespace {

/// The type sums accumulate in: f32 for 16-bit floats, else the type.
Type accumulatorType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  return t;
}

std::string str(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

SmallVector<int64_t> concat(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> r(a);
  r.append(b.begin(), b.end());
  return r;
}

/// Checks that X is (N, C, D1, ..., Dn) with n >= 1.
LogicalResult requireImage(NodeRewriter &rw) {
  if (rw.inputType(0).getRank() < 3)
    return rw.fail("X must have rank 3 or more (N, C, D1, ...); it is " +
                   str(rw.inputType(0).getShape()));
  return success();
}

/// The `kernel_shape` attribute, checked against the weights' spatial dims
/// when given.
LogicalResult checkKernelShape(NodeRewriter &rw, ArrayRef<int64_t> kernel) {
  if (!rw.hasAttr("kernel_shape"))
    return success();
  SmallVector<int64_t> attr = rw.getInts("kernel_shape");
  if (ArrayRef<int64_t>(attr) != kernel)
    return rw.fail("kernel_shape " + str(attr) +
                   " does not match the weights' spatial dims " + str(kernel));
  return success();
}

Value zeroFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type type) {
  return createFilled(b, loc, shape, type, scalarAttr(type, 0));
}

/// Identity-like map over `numLoops` dims: (d0, ...) -> (d[first], ...).
AffineMap dimsMap(MLIRContext *ctx, unsigned numLoops,
                  ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<unsigned> range(unsigned begin, unsigned end) {
  SmallVector<unsigned> r;
  for (unsigned i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

/// The window read for output position `o` and tap `k` along each spatial
/// dim: o * stride + k * dilation.
AffineExpr windowExpr(MLIRContext *ctx, unsigned outDim, unsigned kDim,
                      int64_t stride, int64_t dilation) {
  return getAffineDimExpr(outDim, ctx) * stride +
         getAffineDimExpr(kDim, ctx) * dilation;
}

/// `v` widened to the accumulator type inside a region.
Value widen(OpBuilder &b, Location loc, Value v, Type acc) {
  if (v.getType() == acc)
    return v;
  return arith::ExtFOp::create(b, loc, acc, v);
}

/// out = round_to_t(conv + bias[channel]) as one elementwise generic;
/// `bias` may be null, and nothing is built when there is nothing to do.
Value biasAndRound(OpBuilder &b, Location loc, Value conv, Value bias, Type t) {
  auto type = cast<RankedTensorType>(conv.getType());
  Type acc = type.getElementType();
  if (!bias && acc == t)
    return conv;
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  SmallVector<Value> operands = {conv};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (bias) {
    operands.push_back(bias);
    maps.push_back(dimsMap(ctx, rank, {1}));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = createEmpty(b, loc, type.getShape(), t);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), operands, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               Value v = a[0];
               if (bias)
                 v = arith::AddFOp::create(nb, nloc, v,
                                           widen(nb, nloc, a[1], acc));
               linalg::YieldOp::create(nb, nloc,
                                       castScalar(nb, nloc, v, acc, t));
             })
      .getResult(0);
}

//===--- convolution ------------------------------------------------------===//

/// init[...] += lhs[...] * rhs[...] in `acc` as a linalg.generic over
/// `maps`, whose loops from `firstReduction` on are reductions.
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value init, ArrayRef<AffineMap> maps,
                         unsigned firstReduction, Type acc) {
  unsigned numLoops = maps.front().getNumDims();
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned i = firstReduction; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{lhs, rhs}, init, maps,
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               Value p =
                   arith::MulFOp::create(nb, nloc, widen(nb, nloc, a[0], acc),
                                         widen(nb, nloc, a[1], acc));
               Value sum = arith::AddFOp::create(nb, nloc, a[2], p);
               linalg::YieldOp::create(nb, nloc, sum);
             })
      .getResult(0);
}

/// A convolution of the padded input `x` (N, C, D...) with `w`
/// (M, C / groups, K...), accumulated in `acc`: (N, M, out...).
Value buildConvolution(OpBuilder &b, Location loc, Value x, Value w,
                       int64_t groups, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations,
                       ArrayRef<int64_t> outSpatial, Type acc) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  int64_t m = wType.getDimSize(0);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  ArrayRef<int64_t> inSpatial = xType.getShape().drop_front(2);
  unsigned rank = kernel.size();
  Attribute stridesAttr = b.getI64TensorAttr(strides);
  Attribute dilationsAttr = b.getI64TensorAttr(dilations);
  SmallVector<int64_t> outShape = concat({n, m}, outSpatial);
  Value init = zeroFilled(b, loc, outShape, acc);
  Type resultType = init.getType();

  // Non-overlapping windows (a vision transformer's patch embedding: a
  // 16x16 kernel with stride 16): the windows are copied out as columns
  // (each input element once), and the convolution becomes a product over
  // (c, k...) whose output pixels are contiguous in the columns. Kernels
  // vectorize it along the pixels; read in place, neighbouring pixels are
  // a stride apart.
  int64_t taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  if (groups == 1 && taps > 1 && strides == kernel && isa<FloatType>(acc) &&
      llvm::all_of(dilations, [](int64_t d) { return d == 1; })) {
    // Columns (n, c, k..., out...): the input, cut to whole windows, split
    // into (out, k) per spatial dim and transposed. A named transpose, so
    // that elementwise fusion does not fold it back into strided reads.
    SmallVector<OpFoldResult> offsets(2 + rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(n), b.getIndexAttr(c)};
    SmallVector<OpFoldResult> ones(2 + rank, b.getIndexAttr(1));
    SmallVector<int64_t> split = {n, c};
    SmallVector<ReassociationIndices> groupsOf = {{0}, {1}};
    SmallVector<int64_t> perm = {0, 1};
    bool cut = false;
    for (unsigned i = 0; i < rank; ++i) {
      int64_t whole = outSpatial[i] * kernel[i];
      cut |= whole != inSpatial[i];
      sizes.push_back(b.getIndexAttr(whole));
      split.append({outSpatial[i], kernel[i]});
      groupsOf.push_back({2 + 2 * i, 3 + 2 * i});
      perm.push_back(3 + 2 * i);
    }
    for (unsigned i = 0; i < rank; ++i)
      perm.push_back(2 + 2 * i);
    Value whole = x;
    if (cut)
      whole = tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, ones);
    Value windows = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(split, xType.getElementType()), whole,
        groupsOf);
    SmallVector<int64_t> colShape = concat(concat({n, c}, kernel), outSpatial);
    Value colInit =
        tensor::EmptyOp::create(b, loc, colShape, xType.getElementType());
    Value cols = linalg::TransposeOp::create(b, loc, windows, colInit, perm)
                     .getResult()[0];
    // Product: loops (n, m, out..., c, k...).
    unsigned numLoops = 3 + 2 * rank;
    unsigned cLoop = 2 + rank;
    SmallVector<unsigned> colDims = {0, cLoop};
    colDims.append(range(cLoop + 1, numLoops));
    colDims.append(range(2, cLoop));
    SmallVector<unsigned> wDims = {1};
    wDims.append(range(cLoop, numLoops));
    SmallVector<AffineMap> maps = {dimsMap(ctx, numLoops, colDims),
                                   dimsMap(ctx, numLoops, wDims),
                                   dimsMap(ctx, numLoops, range(0, cLoop))};
    return multiplyAccumulate(b, loc, cols, w, init, maps, cLoop, acc);
  }

  if (groups == 1 && rank <= 3) {
    SmallVector<Value> ins = {x, w};
    if (rank == 1)
      return linalg::Conv1DNcwFcwOp::create(b, loc, resultType, ins, init,
                                            stridesAttr, dilationsAttr)
          .getResult(0);
    if (rank == 2)
      return linalg::Conv2DNchwFchwOp::create(b, loc, resultType, ins, init,
                                              stridesAttr, dilationsAttr)
          .getResult(0);
    return linalg::Conv3DNcdhwFcdhwOp::create(b, loc, resultType, ins, init,
                                              stridesAttr, dilationsAttr)
        .getResult(0);
  }
  if (groups == c && m == c && rank <= 3) {
    // Depthwise with multiplier 1: the weights lose their unit dim.
    Value w2 = reshapeTo(b, loc, w, concat({c}, kernel));
    SmallVector<Value> ins = {x, w2};
    if (rank == 1)
      return linalg::DepthwiseConv1DNcwCwOp::create(
                 b, loc, resultType, ins, init, stridesAttr, dilationsAttr)
          .getResult(0);
    if (rank == 2)
      return linalg::DepthwiseConv2DNchwChwOp::create(
                 b, loc, resultType, ins, init, stridesAttr, dilationsAttr)
          .getResult(0);
    return linalg::DepthwiseConv3DNcdhwCdhwOp::create(
               b, loc, resultType, ins, init, stridesAttr, dilationsAttr)
        .getResult(0);
  }

  // Grouped: split the channel dims into (groups, per group).
  int64_t cg = c / groups, mg = m / groups;
  Value xg = reshapeTo(b, loc, x, concat({n, groups, cg}, inSpatial));
  Value wg = reshapeTo(b, loc, w, concat({groups, mg, cg}, kernel));
  SmallVector<int64_t> outG = concat({n, groups, mg}, outSpatial);
  Value initG = zeroFilled(b, loc, outG, acc);
  Value yg;
  if (rank == 2) {
    yg = linalg::Conv2DNgchwGfchwOp::create(b, loc, initG.getType(),
                                            ValueRange{xg, wg}, initG,
                                            stridesAttr, dilationsAttr)
             .getResult(0);
  } else {
    // Loops: n, g, m, out..., c, k...
    unsigned numLoops = 4 + 2 * rank;
    unsigned cLoop = 3 + rank, kLoop = 4 + rank;
    SmallVector<AffineExpr> xExprs = {getAffineDimExpr(0, ctx),
                                      getAffineDimExpr(1, ctx),
                                      getAffineDimExpr(cLoop, ctx)};
    for (unsigned i = 0; i < rank; ++i)
      xExprs.push_back(
          windowExpr(ctx, 3 + i, kLoop + i, strides[i], dilations[i]));
    SmallVector<unsigned> wDims = {1, 2, cLoop};
    wDims.append(range(kLoop, kLoop + rank));
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, xExprs, ctx),
                                   dimsMap(ctx, numLoops, wDims),
                                   dimsMap(ctx, numLoops, range(0, 3 + rank))};
    yg = multiplyAccumulate(b, loc, xg, wg, initG, maps, cLoop, acc);
  }
  return reshapeTo(b, loc, yg, outShape);
}

/// Checks X/W channel counts against `group`; returns the group count.
FailureOr<int64_t> checkGroups(NodeRewriter &rw, int64_t channels,
                               int64_t weightChannels, int64_t outChannels,
                               bool transposed) {
  int64_t group = rw.getInt("group", 1);
  if (group < 1)
    return rw.fail("group must be positive; it is " + Twine(group));
  if (channels % group != 0)
    return rw.fail("X has " + Twine(channels) + " channels, which group=" +
                   Twine(group) + " does not divide");
  if (transposed) {
    if (weightChannels != channels)
      return rw.fail("W has " + Twine(weightChannels) +
                     " input channels (dim 0) but X has " + Twine(channels));
    return group;
  }
  if (weightChannels != channels / group)
    return rw.fail("W has " + Twine(weightChannels) +
                   " input channels per group (dim 1) but X has " +
                   Twine(channels) + " channels in " + Twine(group) +
                   " groups");
  if (outChannels % group != 0)
    return rw.fail("W has " + Twine(outChannels) +
                   " output channels, which group=" + Twine(group) +
                   " does not divide");
  return group;
}

/// Checks the optional bias input B (M).
LogicalResult checkBias(NodeRewriter &rw, int64_t outChannels) {
  if (!rw.hasInput(2))
    return success();
  if (rw.onnxElementType(2) != rw.onnxElementType(0))
    return rw.fail("B and X have different element types");
  ArrayRef<int64_t> shape = rw.inputType(2).getShape();
  if (shape.size() != 1 || shape[0] != outChannels)
    return rw.fail("B must have shape [" + Twine(outChannels) +
                   "] (one per output channel); it is " + str(shape));
  return success();
}

/// Checks that X and W are float tensors of matching ranks.
LogicalResult checkConvOperands(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "W")) || failed(requireImage(rw)))
    return failure();
  if (rw.onnxElementType(1) != rw.onnxElementType(0))
    return rw.fail("W and X have different element types");
  if (rw.inputType(1).getRank() != rw.inputType(0).getRank())
    return rw.fail("W " + str(rw.inputType(1).getShape()) +
                   " must have the rank of X " +
                   str(rw.inputType(0).getShape()));
  return success();
}

LogicalResult convertConv(NodeRewriter &rw) {
  if (failed(checkConvOperands(rw)))
    return failure();
  auto xType = rw.inputType(0), wType = rw.inputType(1);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  int64_t m = wType.getDimSize(0);
  FailureOr<int64_t> group =
      checkGroups(rw, xType.getDimSize(1), wType.getDimSize(1), m, false);
  if (failed(group) || failed(checkKernelShape(rw, kernel)) ||
      failed(checkBias(rw, m)))
    return failure();
  FailureOr<WindowParams> p = resolveWindow(rw, spatial, kernel);
  if (failed(p))
    return failure();

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType();
  Value x = padWithValue(b, loc, rw.input(0), concat({0, 0}, p->padLow),
                         concat({0, 0}, p->padHigh), scalarAttr(t, 0));
  Value y = buildConvolution(b, loc, x, rw.input(1), *group, p->strides,
                             p->dilations, p->outSize, accumulatorType(t));
  y = biasAndRound(b, loc, y, rw.hasInput(2) ? rw.input(2) : Value(), t);
  return rw.replace(y);
}

//===--- ConvTranspose ----------------------------------------------------===//

/// The (M, C / groups, K...) kernel of the convolution equivalent to a
/// transposed convolution with `w` (C, M / groups, K...): per group, the
/// channel dims swap and every spatial dim is reversed.
Value flipTransposedKernel(OpBuilder &b, Location loc, Value w,
                           int64_t groups) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(w.getType());
  int64_t c = type.getDimSize(0), mg = type.getDimSize(1), cg = c / groups;
  ArrayRef<int64_t> kernel = type.getShape().drop_front(2);
  unsigned rank = kernel.size(), numLoops = 3 + rank;
  Value wg = reshapeTo(b, loc, w, concat({groups, cg, mg}, kernel));
  // Loops (g, m, c, k...) read wg[g, c, m, K - 1 - k].
  SmallVector<AffineExpr> exprs = {getAffineDimExpr(0, ctx),
                                   getAffineDimExpr(2, ctx),
                                   getAffineDimExpr(1, ctx)};
  for (unsigned i = 0; i < rank; ++i)
    exprs.push_back(kernel[i] - 1 - getAffineDimExpr(3 + i, ctx));
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, exprs, ctx),
                                 b.getMultiDimIdentityMap(numLoops)};
  Value init = createEmpty(b, loc, concat({groups, mg, cg}, kernel),
                           type.getElementType());
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  Value flipped = linalg::GenericOp::create(
                      b, loc, init.getType(), wg, init, maps, iterators,
                      [](OpBuilder &nb, Location nloc, ValueRange a) {
                        linalg::YieldOp::create(nb, nloc, a[0]);
                      })
                      .getResult(0);
  return reshapeTo(b, loc, flipped, concat({groups * mg, cg}, kernel));
}

LogicalResult convertConvTranspose(NodeRewriter &rw) {
  if (failed(checkConvOperands(rw)))
    return failure();
  auto xType = rw.inputType(0), wType = rw.inputType(1);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  size_t rank = spatial.size();
  FailureOr<int64_t> group =
      checkGroups(rw, c, wType.getDimSize(0), 0, /*transposed=*/true);
  if (failed(group) || failed(checkKernelShape(rw, kernel)))
    return failure();
  int64_t m = wType.getDimSize(1) * *group;
  if (failed(checkBias(rw, m)))
    return failure();

  SmallVector<int64_t> strides =
      rw.getInts("strides", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> dilations =
      rw.getInts("dilations", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> outputPadding =
      rw.getInts("output_padding", SmallVector<int64_t>(rank, 0));
  SmallVector<int64_t> pads =
      rw.getInts("pads", SmallVector<int64_t>(2 * rank, 0));
  if (strides.size() != rank || dilations.size() != rank ||
      outputPadding.size() != rank || pads.size() != 2 * rank)
    return rw.fail("strides, dilations, output_padding and pads must have " +
                   Twine(rank) + ", " + Twine(rank) + ", " + Twine(rank) +
                   " and " + Twine(2 * rank) + " entries for " + Twine(rank) +
                   " spatial dims");
  for (size_t i = 0; i < rank; ++i) {
    if (strides[i] < 1 || dilations[i] < 1)
      return rw.fail("strides and dilations must be positive");
    if (outputPadding[i] < 0 || pads[i] < 0 || pads[i + rank] < 0)
      return rw.fail("pads and output_padding must not be negative");
  }
  std::optional<SmallVector<int64_t>> outputShape;
  if (rw.hasAttr("output_shape")) {
    SmallVector<int64_t> s = rw.getInts("output_shape");
    // Some exporters give the full (N, C, D...) shape.
    if (s.size() == rank + 2) {
      if (s[0] != n || s[1] != m)
        return rw.fail("output_shape " + str(s) + " disagrees with the " +
                       "batch and channel counts (" + Twine(n) + ", " +
                       Twine(m) + ")");
      s.erase(s.begin(), s.begin() + 2);
    }
    if (s.size() != rank)
      return rw.fail("output_shape must have " + Twine(rank) + " entries");
    outputShape = s;
  }
  std::string autoPad = rw.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return rw.fail("unknown auto_pad '" + autoPad + "'");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";

  // Output size and pads (crop at the start / end of the full output),
  // following the ONNX formulas.
  SmallVector<int64_t> outSpatial, cropLow, cropHigh;
  for (size_t i = 0; i < rank; ++i) {
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    int64_t full = strides[i] * (spatial[i] - 1) + outputPadding[i] + extent;
    int64_t lo = pads[i], hi = pads[i + rank], out;
    if (outputShape || same) {
      out = outputShape ? (*outputShape)[i] : spatial[i] * strides[i];
      if (out < 1)
        return rw.fail("output_shape entries must be positive");
      int64_t total = full - out;
      if (total < 0 && !outputShape) {
        // SAME cannot reach in * stride without negative pads; ONNX shape
        // inference and onnxruntime keep the full output.
        out = full;
        lo = hi = 0;
      } else if (total < 0) {
        // A requested output larger than the full one gets zeros (and the
        // bias) at the end, as in onnxruntime and the reference.
        lo = 0;
        hi = total;
      } else if (autoPad == "SAME_UPPER") {
        lo = total / 2;
        hi = total - lo;
      } else {
        hi = total / 2;
        lo = total - hi;
      }
    } else {
      if (autoPad == "VALID")
        lo = hi = 0;
      out = full - lo - hi;
      if (out < 1)
        return rw.fail("the output would be empty along spatial dim " +
                       Twine(i) + " (pads " + Twine(lo) + " + " + Twine(hi) +
                       " remove all of " + Twine(full) + ")");
    }
    outSpatial.push_back(out);
    cropLow.push_back(lo);
    cropHigh.push_back(hi);
  }

  // The equivalent convolution reads the zero-interleaved input padded by
  // extent - 1 - crop on each side (plus output_padding at the end); a
  // negative pad crops the interleaved input instead.
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType();
  SmallVector<int64_t> padLow, padHigh, interleaved;
  bool unitStrides = true, needsCrop = false;
  for (size_t i = 0; i < rank; ++i) {
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    padLow.push_back(extent - 1 - cropLow[i]);
    padHigh.push_back(extent - 1 - cropHigh[i] + outputPadding[i]);
    interleaved.push_back((spatial[i] - 1) * strides[i] + 1);
    unitStrides &= strides[i] == 1;
    needsCrop |= padLow[i] < 0 || padHigh[i] < 0;
  }
  SmallVector<int64_t> posLow, posHigh;
  for (size_t i = 0; i < rank; ++i) {
    posLow.push_back(std::max<int64_t>(padLow[i], 0));
    posHigh.push_back(std::max<int64_t>(padHigh[i], 0));
  }
  Value x;
  if (unitStrides) {
    x = padWithValue(b, loc, rw.input(0), concat({0, 0}, posLow),
                     concat({0, 0}, posHigh), scalarAttr(t, 0));
  } else {
    SmallVector<int64_t> shape = {n, c};
    for (size_t i = 0; i < rank; ++i)
      shape.push_back(posLow[i] + interleaved[i] + posHigh[i]);
    Value zeros = zeroFilled(b, loc, shape, t);
    x = tensor::InsertSliceOp::create(
        b, loc, rw.input(0), zeros,
        getAsIndexOpFoldResult(rw.ctx(), concat({0, 0}, posLow)),
        getAsIndexOpFoldResult(rw.ctx(), xType.getShape()),
        getAsIndexOpFoldResult(rw.ctx(), concat({1, 1}, strides)));
  }
  if (needsCrop) {
    SmallVector<int64_t> offsets = {0, 0}, sizes = {n, c};
    for (size_t i = 0; i < rank; ++i) {
      offsets.push_back(posLow[i] - padLow[i]);
      sizes.push_back(interleaved[i] + padLow[i] + padHigh[i]);
    }
    x = tensor::ExtractSliceOp::create(
        b, loc, x, getAsIndexOpFoldResult(rw.ctx(), offsets),
        getAsIndexOpFoldResult(rw.ctx(), sizes),
        getAsIndexOpFoldResult(rw.ctx(), SmallVector<int64_t>(rank + 2, 1)));
  }
  Value w = flipTransposedKernel(b, loc, rw.input(1), *group);
  Value y =
      buildConvolution(b, loc, x, w, *group, SmallVector<int64_t>(rank, 1),
                       dilations, outSpatial, accumulatorType(t));
  y = biasAndRound(b, loc, y, rw.hasInput(2) ? rw.input(2) : Value(), t);
  return rw.replace(y);
}

//===--- pooling ----------------------------------------------------------===//

enum class Pool { Max, Average, Lp };

/// A window reduction of the padded `x` (N, C, D...) into `init`
/// (N, C, out...): a named pooling op for 1-D and 2-D, else a generic.
/// `combine(acc, element)` is the reduction for the generic form.
Value buildWindowReduction(
    OpBuilder &b, Location loc, Value x, Value init, ArrayRef<int64_t> kernel,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, bool isMax,
    bool namedOpFits,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = kernel.size();
  Type acc = cast<RankedTensorType>(init.getType()).getElementType();
  Value window = createEmpty(b, loc, kernel, acc);
  if (namedOpFits && rank <= 2) {
    Attribute s = b.getI64TensorAttr(strides),
              d = b.getI64TensorAttr(dilations);
    SmallVector<Value> ins = {x, window};
    Type types = init.getType();
    if (rank == 1)
      return isMax ? linalg::PoolingNcwMaxOp::create(b, loc, types, ins, init,
                                                     s, d)
                         .getResult(0)
                   : linalg::PoolingNcwSumOp::create(b, loc, types, ins, init,
                                                     s, d)
                         .getResult(0);
    return isMax ? linalg::PoolingNchwMaxOp::create(b, loc, types, ins, init, s,
                                                    d)
                       .getResult(0)
                 : linalg::PoolingNchwSumOp::create(b, loc, types, ins, init, s,
                                                    d)
                       .getResult(0);
  }
  // Loops: n, c, out..., k...
  unsigned numLoops = 2 + 2 * rank;
  SmallVector<AffineExpr> xExprs = {getAffineDimExpr(0, ctx),
                                    getAffineDimExpr(1, ctx)};
  for (unsigned i = 0; i < rank; ++i)
    xExprs.push_back(
        windowExpr(ctx, 2 + i, 2 + rank + i, strides[i], dilations[i]));
  // As in the named ops, the unread window operand bounds the tap loops.
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, xExprs, ctx),
      dimsMap(ctx, numLoops, range(2 + rank, numLoops)),
      dimsMap(ctx, numLoops, range(0, 2 + rank))};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned i = 2 + rank; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x, window}, init, maps,
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               linalg::YieldOp::create(nb, nloc, combine(nb, nloc, a[2], a[0]));
             })
      .getResult(0);
}

/// The taps of one window along one dim that count for the average: the k
/// in [0, kernel) whose position start + k * dilation lies inside
/// [lowLimit, highLimit) of the unpadded coordinates.
struct TapWindow {
  int64_t stride, dilation, kernel, padLow, lowLimit, highLimit;

  int64_t count(int64_t o) const {
    int64_t start = o * stride - padLow;
    // First k at or past lowLimit, first k at or past highLimit.
    int64_t first = std::clamp<int64_t>(
        llvm::divideCeilSigned(lowLimit - start, dilation), 0, kernel);
    int64_t end = std::clamp<int64_t>(
        llvm::divideCeilSigned(highLimit - start, dilation), 0, kernel);
    return std::max<int64_t>(end - first, 0);
  }
};

/// Elementwise |x|^p for LpPool, in the accumulator type.
Value powAbs(OpBuilder &b, Location loc, Value v, double p) {
  Value a = math::AbsFOp::create(b, loc, v);
  if (p == 1.0)
    return a;
  if (p == 2.0)
    return arith::MulFOp::create(b, loc, v, v);
  return math::PowFOp::create(b, loc, a,
                              scalarConstant(b, loc, v.getType(), p));
}

/// s^(1/p) for LpPool.
Value root(OpBuilder &b, Location loc, Value s, double p) {
  if (p == 1.0)
    return s;
  if (p == 2.0)
    return math::SqrtOp::create(b, loc, s);
  return math::PowFOp::create(b, loc, s,
                              scalarConstant(b, loc, s.getType(), 1.0 / p));
}

/// Reads LpPool's p: a float before opset 2, an int since.
FailureOr<double> lpExponent(NodeRewriter &rw) {
  double p = rw.getFloat("p", 2.0f);
  if (!(p > 0) || std::isinf(p))
    return rw.fail("p must be positive and finite; it is " +
                   llvm::formatv("{0}", p).str());
  return p;
}

/// Pooling windows: resolveWindow, adjusted where pooling differs from
/// convolution in onnxruntime and the ONNX reference: SAME pads are not
/// clamped at zero (a window smaller than the stride skips leading
/// elements), and ceil_mode also rounds up under VALID.
struct PoolWindow {
  WindowParams params;       ///< pads as applied after the crop
  SmallVector<int64_t> crop; ///< leading elements dropped per dim
  /// The pads the ONNX formulas give, before ceil_mode extends the end;
  /// they may be negative under SAME.
  SmallVector<int64_t> low, high;
};

FailureOr<PoolWindow> resolvePoolWindow(NodeRewriter &rw,
                                        ArrayRef<int64_t> spatial,
                                        ArrayRef<int64_t> kernel,
                                        bool ceilMode) {
  FailureOr<WindowParams> params = resolveWindow(rw, spatial, kernel, ceilMode);
  if (failed(params))
    return failure();
  size_t rank = spatial.size();
  PoolWindow w{*params, SmallVector<int64_t>(rank, 0), params->padLow, {}};
  std::string autoPad = rw.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    w.high = llvm::to_vector(
        ArrayRef<int64_t>(rw.getInts("pads", SmallVector<int64_t>(2 * rank, 0)))
            .drop_front(rank));
  else
    w.high.assign(rank, 0);
  WindowParams &p = w.params;
  for (size_t i = 0; i < rank; ++i) {
    int64_t in = spatial[i], s = p.strides[i];
    int64_t extent = (kernel[i] - 1) * p.dilations[i] + 1;
    if (autoPad == "VALID" && ceilMode) {
      int64_t out = (in - extent + s - 1) / s + 1;
      if ((out - 1) * s >= in)
        --out;
      p.outSize[i] = out;
      p.padHigh[i] = std::max<int64_t>(0, (out - 1) * s + extent - in);
    }
    if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
      continue;
    // onnxruntime's split, with C++ division rounding toward zero.
    int64_t total = (p.outSize[i] - 1) * s + extent - in;
    int64_t lo = autoPad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    w.low[i] = lo;
    w.high[i] = total - lo;
    w.crop[i] = std::max<int64_t>(0, -lo);
    p.padLow[i] = std::max<int64_t>(0, lo);
    p.padHigh[i] = std::max<int64_t>(0, (p.outSize[i] - 1) * s + extent -
                                            (in - w.crop[i]) - p.padLow[i]);
  }
  // No padding past the last window's end: ceil_mode drops a last window
  // that would start in the padding, and kernels take an input whose
  // padded size the windows' extent does not exceed by more than the
  // unpadded input's own tail.
  for (size_t i = 0; i < rank; ++i) {
    int64_t end = (p.outSize[i] - 1) * p.strides[i] +
                  (kernel[i] - 1) * p.dilations[i] + 1;
    int64_t padded = spatial[i] - w.crop[i] + p.padLow[i] + p.padHigh[i];
    if (p.outSize[i] > 0 && padded > end)
      p.padHigh[i] -= std::min(p.padHigh[i], padded - end);
  }
  return w;
}

/// MaxPool with its Indices output: one generic with two reductions that
/// keep the maximum and the flat index (into the unpadded X) of its first
/// occurrence. Ties go to the smaller index, so the result does not depend
/// on the reduction order; column-major storage_order converts the index in
/// an elementwise epilogue.
std::pair<Value, Value>
buildMaxPoolWithIndices(OpBuilder &b, Location loc, Value x, Value init,
                        ArrayRef<int64_t> xShape, const PoolWindow &window,
                        ArrayRef<int64_t> kernel, bool columnMajor,
                        bool isUnsigned) {
  MLIRContext *ctx = b.getContext();
  const WindowParams &w = window.params;
  unsigned rank = kernel.size(), numLoops = 2 + 2 * rank;
  Type elementType = cast<RankedTensorType>(init.getType()).getElementType();
  auto outType = cast<RankedTensorType>(init.getType());
  Value indexInit =
      createFilled(b, loc, outType.getShape(), b.getI64Type(),
                   b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  SmallVector<AffineExpr> xExprs = {getAffineDimExpr(0, ctx),
                                    getAffineDimExpr(1, ctx)};
  for (unsigned i = 0; i < rank; ++i)
    xExprs.push_back(
        windowExpr(ctx, 2 + i, 2 + rank + i, w.strides[i], w.dilations[i]));
  AffineMap outMap = dimsMap(ctx, numLoops, range(0, 2 + rank));
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, xExprs, ctx),
      dimsMap(ctx, numLoops, range(2 + rank, numLoops)), outMap, outMap};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned i = 2 + rank; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  Value window2 = createEmpty(b, loc, kernel, elementType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType(), indexInit.getType()},
      ValueRange{x, window2}, ValueRange{init, indexInit}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        auto index = [&](unsigned d) {
          return linalg::IndexOp::create(nb, nloc, d).getResult();
        };
        // Position in the unpadded X: o * stride + k * dilation - pad.
        Value valid;
        SmallVector<Value> pos;
        for (unsigned i = 0; i < rank; ++i) {
          Value p = arith::AddIOp::create(
              nb, nloc,
              arith::MulIOp::create(nb, nloc, index(2 + i), cst(w.strides[i])),
              arith::MulIOp::create(nb, nloc, index(2 + rank + i),
                                    cst(w.dilations[i])));
          p = arith::SubIOp::create(nb, nloc, p, cst(window.low[i]));
          Value inside = arith::AndIOp::create(
              nb, nloc,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, p,
                                    cst(0)),
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, p,
                                    cst(xShape[2 + i])));
          valid =
              valid ? arith::AndIOp::create(nb, nloc, valid, inside).getResult()
                    : inside;
          pos.push_back(p);
        }
        // The row-major flat index (n, c, p1, ..., pn); ties compare it, as
        // onnxruntime scans windows in row-major order.
        Value flat = arith::AddIOp::create(
            nb, nloc, arith::MulIOp::create(nb, nloc, index(0), cst(xShape[1])),
            index(1));
        for (unsigned i = 0; i < rank; ++i)
          flat = arith::AddIOp::create(
              nb, nloc,
              arith::MulIOp::create(nb, nloc, flat, cst(xShape[2 + i])),
              pos[i]);
        flat = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), flat);
        Value greater, equal;
        if (isa<FloatType>(elementType)) {
          greater = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OGT,
                                          a[0], a[2]);
          equal = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                        a[0], a[2]);
        } else {
          greater =
              arith::CmpIOp::create(nb, nloc,
                                    isUnsigned ? arith::CmpIPredicate::ugt
                                               : arith::CmpIPredicate::sgt,
                                    a[0], a[2]);
          equal = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                        a[0], a[2]);
        }
        Value earlier = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::slt, flat, a[3]);
        Value take = arith::AndIOp::create(
            nb, nloc, valid,
            arith::OrIOp::create(
                nb, nloc, greater,
                arith::AndIOp::create(nb, nloc, equal, earlier)));
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{arith::SelectOp::create(nb, nloc, take, a[0], a[2]),
                       arith::SelectOp::create(nb, nloc, take, flat, a[3])});
      });
  Value indices = generic.getResult(1);
  if (!columnMajor)
    return {generic.getResult(0), indices};
  // Column-major storage reverses the spatial dims in the index.
  Value columnIndices = buildBroadcastGeneric(
      b, loc, indices, outType.getShape(), b.getI64Type(),
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        auto cst = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, nloc, nb.getI64Type(), v)
              .getResult();
        };
        int64_t size = numElements(xShape.drop_front(2));
        Value image = arith::DivSIOp::create(nb, nloc, a[0], cst(size));
        Value rest = arith::RemSIOp::create(nb, nloc, a[0], cst(size));
        SmallVector<Value> pos(rank);
        for (int i = rank - 1; i >= 0; --i) {
          pos[i] = arith::RemSIOp::create(nb, nloc, rest, cst(xShape[2 + i]));
          rest = arith::DivSIOp::create(nb, nloc, rest, cst(xShape[2 + i]));
        }
        Value column = pos[rank - 1];
        for (int i = rank - 2; i >= 0; --i)
          column = arith::AddIOp::create(
              nb, nloc,
              arith::MulIOp::create(nb, nloc, column, cst(xShape[2 + i])),
              pos[i]);
        return arith::AddIOp::create(
            nb, nloc, arith::MulIOp::create(nb, nloc, image, cst(size)),
            column);
      });
  return {generic.getResult(0), columnIndices};
}

template <Pool K> LogicalResult convertPool(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(requireImage(rw)))
    return failure();
  auto xType = rw.inputType(0);
  Type t = xType.getElementType();
  bool isFloat = isa<FloatType>(t);
  if (!isFloat && (K != Pool::Max || t.isInteger(1)))
    return rw.unsupported("X has element type " +
                          llvm::formatv("{0}", rw.onnxElementType(0)).str());
  bool isUnsigned = rw.isUnsigned(0);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  size_t rank = spatial.size();
  if (!rw.hasAttr("kernel_shape"))
    return rw.fail("missing required attribute 'kernel_shape'");
  SmallVector<int64_t> kernel = rw.getInts("kernel_shape");
  if (kernel.size() != rank)
    return rw.fail("kernel_shape " + str(kernel) + " must have " + Twine(rank) +
                   " entries, one per spatial dim of X");
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return rw.fail("kernel_shape entries must be positive");
  int64_t ceilMode = rw.getInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return rw.fail("ceil_mode must be 0 or 1");
  if (K == Pool::Max) {
    int64_t order = rw.getInt("storage_order", 0);
    if (order != 0 && order != 1)
      return rw.fail("storage_order must be 0 or 1");
  }
  auto outputs = rw.getOp().getOutputs();
  bool wantIndices =
      K == Pool::Max && outputs.size() > 1 && !outputs[1].use_empty();
  double p = 0;
  if (K == Pool::Lp) {
    FailureOr<double> e = lpExponent(rw);
    if (failed(e))
      return failure();
    p = *e;
  }
  FailureOr<PoolWindow> window =
      resolvePoolWindow(rw, spatial, kernel, ceilMode);
  if (failed(window))
    return failure();
  WindowParams *w = &window->params;

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type acc = K == Pool::Max ? t : accumulatorType(t);
  Value x = rw.input(0);
  if (llvm::any_of(window->crop, [](int64_t c) { return c > 0; })) {
    SmallVector<int64_t> sizes(xType.getShape());
    for (size_t i = 0; i < rank; ++i)
      sizes[2 + i] -= window->crop[i];
    x = tensor::ExtractSliceOp::create(
        b, loc, x,
        getAsIndexOpFoldResult(rw.ctx(), concat({0, 0}, window->crop)),
        getAsIndexOpFoldResult(rw.ctx(), sizes),
        getAsIndexOpFoldResult(rw.ctx(), SmallVector<int64_t>(rank + 2, 1)));
  }
  if (K == Pool::Lp)
    x = buildBroadcastGeneric(b, loc, x, xType.getShape(), acc,
                              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                return powAbs(nb, nloc,
                                              widen(nb, nloc, a[0], acc), p);
                              });
  TypedAttr padValue = K == Pool::Max ? lowestValueAttr(t, isUnsigned)
                                      : scalarAttr(K == Pool::Lp ? acc : t, 0);
  x = padWithValue(b, loc, x, concat({0, 0}, w->padLow),
                   concat({0, 0}, w->padHigh), padValue);
  SmallVector<int64_t> outShape =
      concat({xType.getDimSize(0), xType.getDimSize(1)}, w->outSize);
  Value init = createFilled(b, loc, outShape, acc,
                            K == Pool::Max ? lowestValueAttr(t, isUnsigned)
                                           : scalarAttr(acc, 0));
  if (wantIndices) {
    auto [values, indices] = buildMaxPoolWithIndices(
        b, loc, x, init, xType.getShape(), *window, kernel,
        rw.getInt("storage_order", 0) != 0, isUnsigned);
    return rw.replace({values, indices});
  }
  bool namedOpFits = !isUnsigned;
  Value y = buildWindowReduction(
      b, loc, x, init, kernel, w->strides, w->dilations, K == Pool::Max,
      namedOpFits,
      [&](OpBuilder &nb, Location nloc, Value a, Value v) -> Value {
        if (K != Pool::Max)
          return arith::AddFOp::create(nb, nloc, a, widen(nb, nloc, v, acc));
        if (isFloat)
          return arith::MaximumFOp::create(nb, nloc, a, v);
        if (isUnsigned)
          return arith::MaxUIOp::create(nb, nloc, a, v);
        return arith::MaxSIOp::create(nb, nloc, a, v);
      });

  if (K == Pool::Max)
    return rw.replace(y);
  if (K == Pool::Lp) {
    y = buildBroadcastGeneric(b, loc, y, outShape, t,
                              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                return castScalar(
                                    nb, nloc, root(nb, nloc, a[0], p), acc, t);
                              });
    return rw.replace(y);
  }

  // Average: divide by the taps that count, which differ near the borders
  // unless padding counts; the windows that ceil_mode adds at the end never
  // count their part beyond the padding the attributes give.
  // The count is a product over the spatial dims, so the divisor is too: a
  // scalar for the dims where every window counts alike (it starts and ends
  // inside the limits, so all between do), one vector of counts along each
  // other dim, broadcast against the output.
  bool countPad = rw.getInt("count_include_pad", 0) != 0;
  constexpr int64_t kMaxCountVector = int64_t(1) << 24;
  int64_t uniformProduct = 1;
  SmallVector<Value> divisors;
  for (size_t i = 0; i < rank; ++i) {
    TapWindow tw{w->strides[i],
                 w->dilations[i],
                 kernel[i],
                 window->low[i],
                 countPad ? -window->low[i] : 0,
                 countPad ? spatial[i] + window->high[i] : spatial[i]};
    int64_t out = w->outSize[i];
    if (out == 1 ||
        (tw.count(0) == kernel[i] && tw.count(out - 1) == kernel[i])) {
      uniformProduct *= tw.count(0);
      continue;
    }
    if (out > kMaxCountVector)
      return rw.unsupported("averages whose divisor varies along a spatial "
                            "dim of " +
                            Twine(out) + " outputs (at most 2^24)");
    SmallVector<Attribute> counts;
    for (int64_t o = 0; o < out; ++o)
      counts.push_back(scalarAttr(acc, tw.count(o)));
    // [out, 1, ...]: aligned with spatial dim i of the output.
    SmallVector<int64_t> shape(rank - i, 1);
    shape[0] = out;
    divisors.push_back(createConstant(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get(shape, acc), counts)));
  }
  divisors.push_back(
      createConstant(b, loc,
                     DenseElementsAttr::get(RankedTensorType::get({}, acc),
                                            scalarAttr(acc, uniformProduct))));
  SmallVector<Value> operands = {y};
  operands.append(divisors);
  y = buildBroadcastGeneric(
      b, loc, operands, outShape, t,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value divisor = a[1];
        for (Value d : a.drop_front(2))
          divisor = arith::MulFOp::create(nb, nloc, divisor, d);
        Value q = arith::DivFOp::create(nb, nloc, a[0], divisor);
        return castScalar(nb, nloc, q, acc, t);
      });
  return rw.replace(y);
}

/// Global pooling: a reduction over every spatial dim, keeping them as 1s.
template <Pool K> LogicalResult convertGlobalPool(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) || failed(requireImage(rw)))
    return failure();
  double p = 0;
  if (K == Pool::Lp) {
    FailureOr<double> e = lpExponent(rw);
    if (failed(e))
      return failure();
    p = *e;
  }
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  auto xType = rw.inputType(0);
  Type t = xType.getElementType();
  Type acc = K == Pool::Max ? t : accumulatorType(t);
  unsigned rank = xType.getRank();
  int64_t count = numElements(xType.getShape().drop_front(2));
  SmallVector<int64_t> reducedShape = {xType.getDimSize(0),
                                       xType.getDimSize(1)};
  Value init = createFilled(b, loc, reducedShape, acc,
                            K == Pool::Max ? lowestValueAttr(t, false)
                                           : scalarAttr(acc, 0));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 dimsMap(ctx, rank, {0, 1})};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  iterators[0] = iterators[1] = utils::IteratorType::parallel;
  Value y =
      linalg::GenericOp::create(
          b, loc, init.getType(), rw.input(0), init, maps, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value v = widen(nb, nloc, a[0], acc), r;
            if (K == Pool::Max)
              r = arith::MaximumFOp::create(nb, nloc, a[1], v);
            else
              r = arith::AddFOp::create(
                  nb, nloc, a[1], K == Pool::Lp ? powAbs(nb, nloc, v, p) : v);
            linalg::YieldOp::create(nb, nloc, r);
          })
          .getResult(0);
  if (K != Pool::Max || acc != t)
    y = buildBroadcastGeneric(b, loc, y, reducedShape, t,
                              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                Value v = a[0];
                                if (K == Pool::Average)
                                  v = arith::DivFOp::create(
                                      nb, nloc, v,
                                      scalarConstant(nb, nloc, acc, count));
                                else if (K == Pool::Lp)
                                  v = root(nb, nloc, v, p);
                                return castScalar(nb, nloc, v, acc, t);
                              });
  SmallVector<int64_t> outShape(rank, 1);
  outShape[0] = reducedShape[0];
  outShape[1] = reducedShape[1];
  return rw.replace(reshapeTo(b, loc, y, outShape));
}

/// Col2Im: input [N, C * prod(block), L] holds the L sliding blocks of an
/// image (what Im2Col would make of it); the result [N, C, image...] sums
/// every block element onto the image position it came from. Each output
/// element gathers: block offset b covers image position y when t = y +
/// pad_begin - b * dilation is a multiple of the stride and t / stride is a
/// block position (per spatial dim). One kernel, a reduction over the
/// block offsets.
LogicalResult convertCol2Im(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  FailureOr<SmallVector<int64_t>> image = rw.constantInts(1, "image_shape");
  if (failed(image))
    return failure();
  FailureOr<SmallVector<int64_t>> block = rw.constantInts(2, "block_shape");
  if (failed(block))
    return failure();
  auto type = rw.inputType(0);
  if (!isa<FloatType>(type.getElementType()))
    return rw.fail("input must be a float tensor, not " +
                   typeName(type.getElementType()));
  if (type.getRank() != 3)
    return rw.fail("input must have shape [N, C * prod(block_shape), L], "
                   "not rank " +
                   Twine(type.getRank()));
  int64_t k = image->size();
  if (k < 1 || int64_t(block->size()) != k)
    return rw.fail("image_shape and block_shape must have the same non-zero "
                   "length");
  SmallVector<int64_t> dil =
      rw.getInts("dilations", SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> strides =
      rw.getInts("strides", SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> pads =
      rw.getInts("pads", SmallVector<int64_t>(2 * k, 0));
  if (int64_t(dil.size()) != k || int64_t(strides.size()) != k ||
      int64_t(pads.size()) != 2 * k)
    return rw.fail("dilations and strides need " + Twine(k) +
                   " values and pads " + Twine(2 * k));
  int64_t blockSize = 1, blocks = 1;
  SmallVector<int64_t> perDim;
  for (int64_t d = 0; d < k; ++d) {
    if ((*image)[d] < 1 || (*block)[d] < 1 || dil[d] < 1 || strides[d] < 1 ||
        pads[d] < 0 || pads[k + d] < 0)
      return rw.fail("image_shape, block_shape, dilations and strides must "
                     "be positive and pads non-negative");
    int64_t span = dil[d] * ((*block)[d] - 1) + 1;
    int64_t padded = (*image)[d] + pads[d] + pads[k + d];
    if (padded < span)
      return rw.fail("a block of extent " + Twine(span) +
                     " does not fit the padded image dim " + Twine(d) +
                     " of size " + Twine(padded));
    perDim.push_back((padded - span) / strides[d] + 1);
    blockSize *= (*block)[d];
    blocks *= perDim.back();
  }
  if (type.getDimSize(1) % blockSize)
    return rw.fail("input dim 1 (" + Twine(type.getDimSize(1)) +
                   ") is not a multiple of the block size " + Twine(blockSize));
  if (type.getDimSize(2) != blocks)
    return rw.fail("input dim 2 (" + Twine(type.getDimSize(2)) +
                   ") must be the number of blocks, " + Twine(blocks));
  int64_t channels = type.getDimSize(1) / blockSize;
  SmallVector<int64_t> outShape = {type.getDimSize(0), channels};
  llvm::append_range(outShape, *image);
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = type.getElementType();
  if (numElements(outShape) == 0 || type.getNumElements() == 0)
    return rw.replace(zeroFilled(b, loc, outShape, t));
  MLIRContext *ctx = b.getContext();
  int64_t loops = 2 + 2 * k;
  SmallVector<AffineExpr> outExprs, blockExprs;
  for (int64_t d = 0; d < 2 + k; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  for (int64_t d = 0; d < k; ++d)
    blockExprs.push_back(b.getAffineDimExpr(2 + k + d));
  // The block offsets' extent comes from an operand of the block's shape.
  Value window = createEmpty(b, loc, *block, t);
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  Value x = rw.input(0);
  Value result = buildGeneric(
      b, loc, {{window, AffineMap::get(loops, 0, blockExprs, ctx)}},
      {{zeroFilled(b, loc, outShape, t),
        AffineMap::get(loops, 0, outExprs, ctx)}},
      iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange,
          ValueRange out) -> SmallVector<Value> {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nloc, v).getResult();
        };
        auto idx = [&](int64_t d) {
          return linalg::IndexOp::create(nb, nloc, d).getResult();
        };
        Value valid, row = idx(1), column = cst(0);
        row = arith::MulIOp::create(nb, nloc, row, cst(blockSize));
        Value offset = cst(0);
        for (int64_t d = 0; d < k; ++d) {
          // t = y + pad_begin - b * dilation.
          Value tap = arith::SubIOp::create(
              nb, nloc,
              arith::AddIOp::create(nb, nloc, idx(2 + d), cst(pads[d])),
              arith::MulIOp::create(nb, nloc, idx(2 + k + d), cst(dil[d])));
          Value q = arith::DivSIOp::create(nb, nloc, tap, cst(strides[d]));
          Value ok = arith::AndIOp::create(
              nb, nloc,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, tap,
                                    cst(0)),
              arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::eq,
                  arith::RemSIOp::create(nb, nloc, tap, cst(strides[d])),
                  cst(0)));
          ok = arith::AndIOp::create(
              nb, nloc, ok,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, q,
                                    cst(perDim[d])));
          valid = valid ? arith::AndIOp::create(nb, nloc, valid, ok) : ok;
          // Clamped into range, so that every read stays inside.
          q = arith::MinSIOp::create(
              nb, nloc, arith::MaxSIOp::create(nb, nloc, q, cst(0)),
              cst(perDim[d] - 1));
          column = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, column, cst(perDim[d])),
              q);
          offset = arith::AddIOp::create(
              nb, nloc,
              arith::MulIOp::create(nb, nloc, offset, cst((*block)[d])),
              idx(2 + k + d));
        }
        row = arith::AddIOp::create(nb, nloc, row, offset);
        Value v = tensor::ExtractOp::create(nb, nloc, x,
                                            ValueRange{idx(0), row, column});
        Value sum = arith::AddFOp::create(nb, nloc, out[0], v);
        return {arith::SelectOp::create(nb, nloc, valid, sum, out[0])};
      })[0];
  return rw.replace(result);
}

/// Whether MaxUnpool's indices come from a MaxPool's Indices output with
/// the same window over an input of shape `outShape`: then every index
/// points into its own window (the position of that window's maximum),
/// and each output element can gather from the windows covering it.
bool indicesFromMatchingMaxPool(NodeRewriter &rw, ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads,
                                ArrayRef<int64_t> outShape) {
  Value indices = rw.getOp().getInputs()[1];
  auto pool = indices.getDefiningOp<onnx::NodeOp>();
  if (!pool || !pool.getDomain().empty() || pool.getOpType() != "MaxPool" ||
      pool.getNumResults() < 2 || pool.getResult(1) != indices)
    return false;
  auto ints = [&](StringRef name) -> SmallVector<int64_t> {
    auto attr = dyn_cast_or_null<ArrayAttr>(pool.getOnnxAttr(name));
    SmallVector<int64_t> out;
    if (attr)
      for (Attribute a : attr)
        out.push_back(cast<IntegerAttr>(a).getInt());
    return out;
  };
  auto intOr = [&](StringRef name, int64_t fallback) {
    auto attr = dyn_cast_or_null<IntegerAttr>(pool.getOnnxAttr(name));
    return attr ? attr.getInt() : fallback;
  };
  auto str = dyn_cast_or_null<StringAttr>(pool.getOnnxAttr("auto_pad"));
  if (str && str.getValue() != "NOTSET")
    return false;
  size_t rank = kernel.size();
  SmallVector<int64_t> poolStrides = ints("strides"), poolPads = ints("pads"),
                       dilations = ints("dilations");
  if (poolStrides.empty())
    poolStrides.assign(rank, 1);
  if (poolPads.empty())
    poolPads.assign(2 * rank, 0);
  auto poolInput = dyn_cast<RankedTensorType>(pool.getInputs()[0].getType());
  return ints("kernel_shape") == kernel && poolStrides == strides &&
         poolPads == pads &&
         llvm::all_of(dilations, [](int64_t d) { return d == 1; }) &&
         intOr("storage_order", 0) == 0 && poolInput &&
         poolInput.getShape() == outShape;
}

/// MaxUnpool: Y, zeros of the output shape, with Y.flat[I[j]] = X[j] (the
/// indices count in the whole output tensor, as ONNX Runtime reads them;
/// with an output_shape the ONNX reference reads them in the inferred
/// shape instead and pads, and the two disagree). Where the indices come
/// from a MaxPool with the same window (the usual encoder-decoder pair),
/// each output element gathers from the windows covering it: ceil(k / s)
/// candidates per dim. Other indices may point anywhere, so each output
/// element scans all of X (an error above 2^26 output x input elements).
LogicalResult convertMaxUnpool(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")) || failed(rw.requireInput(1, "I")))
    return failure();
  auto xType = rw.inputType(0), iType = rw.inputType(1);
  int64_t rank = xType.getRank() - 2;
  if (rank < 1)
    return rw.fail("X must be N x C x spatial dims, not " + typeName(xType));
  if (iType.getShape() != xType.getShape() ||
      !isa<IntegerType>(iType.getElementType()))
    return rw.fail("I must be integers of X's shape, not " + typeName(iType));
  if (!rw.hasAttr("kernel_shape"))
    return rw.fail("missing required attribute 'kernel_shape'");
  SmallVector<int64_t> kernel = rw.getInts("kernel_shape");
  SmallVector<int64_t> strides =
      rw.getInts("strides", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> pads =
      rw.getInts("pads", SmallVector<int64_t>(2 * rank, 0));
  if (int64_t(kernel.size()) != rank || int64_t(strides.size()) != rank ||
      int64_t(pads.size()) != 2 * rank)
    return rw.fail("kernel_shape and strides need " + Twine(rank) +
                   " values and pads " + Twine(2 * rank));
  SmallVector<int64_t> outShape = {xType.getDimSize(0), xType.getDimSize(1)};
  for (int64_t d = 0; d < rank; ++d)
    outShape.push_back((xType.getDimSize(2 + d) - 1) * strides[d] - pads[d] -
                       pads[rank + d] + kernel[d]);
  if (rw.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> given = rw.constantInts(2, "output_shape");
    if (failed(given))
      return failure();
    if (int64_t(given->size()) != rank + 2 || (*given)[0] != outShape[0] ||
        (*given)[1] != outShape[1])
      return rw.fail("output_shape must be [" + Twine(outShape[0]) + ", " +
                     Twine(outShape[1]) + ", spatial dims...], not " +
                     str(*given));
    outShape = *given;
  }
  if (llvm::any_of(outShape, [](int64_t d) { return d < 0; }))
    return rw.fail("the output shape " + str(outShape) + " is negative");
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = b.getContext();
  Type t = xType.getElementType();
  if (numElements(outShape) == 0 || xType.getNumElements() == 0)
    return rw.replace(zeroFilled(b, loc, outShape, t), rw.onnxElementType(0));
  Value x = rw.input(0), idx = rw.input(1);
  int64_t outRank = outShape.size();
  bool windowed =
      indicesFromMatchingMaxPool(rw, kernel, strides, pads, outShape);
  if (!windowed &&
      numElements(outShape) * xType.getNumElements() > (int64_t(1) << 26))
    return rw.unsupported(
        "MaxUnpool whose indices do not come from a MaxPool with the same "
        "window, on " +
        Twine(numElements(outShape)) + " outputs x " +
        Twine(xType.getNumElements()) +
        " inputs (each output scans every input; at most 2^26 pairs)");
  // Reduction loops: per spatial dim the candidate windows (windowed), or
  // every element of X.
  SmallVector<int64_t> candidates;
  if (windowed)
    for (int64_t d = 0; d < rank; ++d)
      candidates.push_back(llvm::divideCeil(kernel[d], strides[d]));
  else
    candidates.assign(xType.getShape().begin(), xType.getShape().end());
  int64_t loops = outRank + candidates.size();
  SmallVector<AffineExpr> outExprs, candExprs;
  for (int64_t d = 0; d < outRank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  for (size_t d = 0; d < candidates.size(); ++d)
    candExprs.push_back(b.getAffineDimExpr(outRank + d));
  SmallVector<utils::IteratorType> iterators(outRank,
                                             utils::IteratorType::parallel);
  iterators.append(candidates.size(), utils::IteratorType::reduction);
  Value result = buildGeneric(
      b, loc,
      {{createEmpty(b, loc, candidates, b.getI8Type()),
        AffineMap::get(loops, 0, candExprs, ctx)}},
      {{zeroFilled(b, loc, outShape, t),
        AffineMap::get(loops, 0, outExprs, ctx)}},
      iterators,
      [&](OpBuilder &nb, Location l, ValueRange,
          ValueRange out) -> SmallVector<Value> {
        Type index = nb.getIndexType();
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        auto at = [&](int64_t d) {
          return linalg::IndexOp::create(nb, l, index, d).getResult();
        };
        auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) {
          return arith::CmpIOp::create(nb, l, p, a, c).getResult();
        };
        // This output element's flat index in the whole output.
        Value flat = cst(0);
        for (int64_t d = 0; d < outRank; ++d)
          flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, flat, cst(outShape[d])),
              at(d));
        SmallVector<Value> source;
        Value valid;
        if (windowed) {
          source = {at(0), at(1)};
          for (int64_t d = 0; d < rank; ++d) {
            // q = (y + pad) floordiv stride - t; the window [q s - pad,
            // q s - pad + k) must cover y and q must be a window of X.
            Value shifted =
                arith::AddIOp::create(nb, l, at(2 + d), cst(pads[d]));
            Value q = arith::SubIOp::create(
                nb, l, arith::DivUIOp::create(nb, l, shifted, cst(strides[d])),
                at(outRank + d));
            Value end = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, q, cst(strides[d])),
                cst(kernel[d]));
            Value ok = arith::AndIOp::create(
                nb, l, cmp(arith::CmpIPredicate::sge, q, cst(0)),
                cmp(arith::CmpIPredicate::slt, q,
                    cst(xType.getDimSize(2 + d))));
            ok = arith::AndIOp::create(
                nb, l, ok, cmp(arith::CmpIPredicate::sgt, end, shifted));
            valid = valid ? arith::AndIOp::create(nb, l, valid, ok).getResult()
                          : ok;
            source.push_back(arith::MinSIOp::create(
                nb, l, arith::MaxSIOp::create(nb, l, q, cst(0)),
                cst(xType.getDimSize(2 + d) - 1)));
          }
        } else {
          for (size_t d = 0; d < candidates.size(); ++d)
            source.push_back(at(outRank + d));
        }
        Value i = tensor::ExtractOp::create(nb, l, idx, source);
        i = arith::IndexCastOp::create(nb, l, index, i);
        Value match = cmp(arith::CmpIPredicate::eq, i, flat);
        if (valid)
          match = arith::AndIOp::create(nb, l, match, valid);
        Value v = tensor::ExtractOp::create(nb, l, x, source);
        return {arith::SelectOp::create(nb, l, match, v, out[0])};
      })[0];
  return rw.replace(result, rw.onnxElementType(0));
}

} // namespace

void dlc::populateConvolutionHandlers(HandlerRegistry &r) {
  r.add("Conv", {1, 11, 22}, convertConv);
  r.add("ConvTranspose", {1, 11, 22}, convertConvTranspose);
  r.add("Col2Im", {18}, convertCol2Im);
  r.add("MaxUnpool", {9, 11, 22}, convertMaxUnpool);
  r.add("MaxPool", {1, 8, 10, 11, 12, 22}, convertPool<Pool::Max>);
  r.add("AveragePool", {1, 7, 10, 11, 19, 22}, convertPool<Pool::Average>);
  r.add("LpPool", {1, 2, 11, 18, 22}, convertPool<Pool::Lp>);
  r.add("GlobalMaxPool", {1, 22}, convertGlobalPool<Pool::Max>);
  r.add("GlobalAveragePool", {1, 22}, convertGlobalPool<Pool::Average>);
  r.add("GlobalLpPool", {1, 2, 22}, convertGlobalPool<Pool::Lp>);
}
