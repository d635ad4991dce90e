//===- Signal.cpp - DFT, STFT and MelWeightMatrix -------------------------===//
//
// With static shapes a discrete Fourier transform of length N is a matrix
// product: bin k of a signal is the sum over its samples n of the sample
// times e^(-+2 pi i k n / N). The handlers build that matrix at compile
// time, in double precision and rounded once to the compute type, as a
// constant table W[n][r][k][c] (r: the real or imaginary part of the
// sample, c: of the bin), and the kernel is one linalg.generic contraction
// over (n, r): a reduction like a 1x1 convolution's, which every backend
// tiles. That is O(N^2) work per signal where an FFT is O(N log N); for the
// frame lengths of speech front ends (N <= 512) it is a few hundred
// thousand multiply-adds per frame, run as dense vector code.
//
// STFT is the same contraction over frames read through an affine map
// (sample f * step + n), with the window, a constant or a run-time input,
// multiplied into each sample. MelWeightMatrix depends on its parameters
// only and folds to a constant.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>

using namespace mlir;
using namespace dlc;

namespace {

/// Transforms above this length are refused: the table holds 4 * N * K
/// elements.
constexpr int64_t kMaxDftLength = 1 << 13;

/// The type a transform of `t` accumulates in: f64 for f64, else f32.
Type computeType(Type t) {
  return t.isF64() ? Type(Float64Type::get(t.getContext()))
                   : Type(Float32Type::get(t.getContext()));
}

/// The DFT matrix for samples n < `samples` (each with `parts` parts: 1 for
/// a real signal, 2 for a complex one) and bins k < `bins` of a transform
/// of length `length`, as a [samples, parts, bins, 2] constant of `type`
/// (f32 or f64). The inverse transform is scaled by 1 / length.
Value fourierTable(OpBuilder &b, Location loc, int64_t samples, int64_t parts,
                   int64_t bins, int64_t length, bool inverse, Type type) {
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / length : 1.0;
  // Entry (n, k) is e^(sign 2 pi i (k n mod N) / N): N distinct values.
  // Reducing k n mod N first keeps the angle exact for long signals.
  std::vector<double> cosines(length), sines(length);
  for (int64_t m = 0; m < length; ++m) {
    double angle = 2 * M_PI * double(m) / double(length);
    cosines[m] = std::cos(angle) * scale;
    sines[m] = sign * std::sin(angle) * scale;
  }
  std::vector<double> values;
  values.reserve(samples * parts * bins * 2);
  for (int64_t n = 0; n < samples; ++n)
    for (int64_t r = 0; r < parts; ++r)
      for (int64_t k = 0; k < bins; ++k) {
        int64_t m = (k * n) % length;
        double c = cosines[m], s = sines[m];
        // (xr + i xi) * (c + i s) = (xr c - xi s) + i (xr s + xi c).
        // + 0.0: no negative zeros (sin 0 times -1) in the table.
        values.push_back((r == 0 ? c : -s) + 0.0);
        values.push_back((r == 0 ? s : c) + 0.0);
      }
  auto tableType = RankedTensorType::get({samples, parts, bins, 2}, type);
  if (type.isF64())
    return createConstant(
        b, loc, DenseElementsAttr::get(tableType, ArrayRef<double>(values)));
  std::vector<float> narrow(values.begin(), values.end());
  return createConstant(
      b, loc, DenseElementsAttr::get(tableType, ArrayRef<float>(narrow)));
}

/// Fails when the transform's table would exceed kMaxConstantTable
/// elements (a 2048-point complex DFT is 2^24).
LogicalResult checkTableSize(NodeRewriter &rw, int64_t samples, int64_t parts,
                             int64_t bins) {
  int64_t elements = samples * parts * bins * 2;
  if (elements > kMaxConstantTable)
    return rw.unsupported("a transform whose matrix has " + Twine(elements) +
                          " entries (at most 2^24: " + Twine(samples) +
                          " samples x " + Twine(bins) + " bins)");
  return success();
}

/// The contraction out[outDims] = sum over (n, r) of x[xMap] * W[n, r, k,
/// c] (* window[n]). The loops are the output's `rank` dims, then n and r;
/// `binDim` is the output dim of k (c is the last one). Accumulates in the
/// table's type and converts to `elementType`.
Value fourierContraction(OpBuilder &b, Location loc, Value x, AffineMap xMap,
                         Value table, Value window, ArrayRef<int64_t> outShape,
                         int64_t binDim, Type elementType) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = outShape.size(), loops = rank + 2;
  Type acc = cast<RankedTensorType>(table.getType()).getElementType();
  AffineExpr n = getAffineDimExpr(rank, ctx),
             r = getAffineDimExpr(rank + 1, ctx);
  AffineMap tableMap = AffineMap::get(
      loops, 0,
      {n, r, getAffineDimExpr(binDim, ctx), getAffineDimExpr(rank - 1, ctx)},
      ctx);
  SmallVector<GenericOperand> ins = {{x, xMap}, {table, tableMap}};
  if (window)
    ins.push_back({window, AffineMap::get(loops, 0, {n}, ctx)});
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  Value init = createFilled(b, loc, outShape, acc, b.getZeroAttr(acc));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  Value sum = buildGeneric(
      b, loc, ins, {{init, AffineMap::get(loops, 0, outExprs, ctx)}}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange in,
          ValueRange out) -> SmallVector<Value> {
        Value v = in[0];
        if (v.getType() != acc)
          v = arith::ExtFOp::create(nb, nloc, acc, v);
        if (window) {
          Value w = in[2];
          if (w.getType() != acc)
            w = arith::ExtFOp::create(nb, nloc, acc, w);
          v = arith::MulFOp::create(nb, nloc, v, w);
        }
        Value p = arith::MulFOp::create(nb, nloc, v, in[1]);
        return {arith::AddFOp::create(nb, nloc, out[0], p)};
      })[0];
  if (elementType == acc)
    return sum;
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return buildGeneric(
      b, loc, {{sum, id}}, {{createEmpty(b, loc, outShape, elementType), id}},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange in,
          ValueRange) -> SmallVector<Value> {
        return {arith::TruncFOp::create(nb, nloc, elementType, in[0])};
      })[0];
}

/// Checks the last dim of signal input 0 (1: real, 2: complex); returns it.
FailureOr<int64_t> signalParts(NodeRewriter &rw, RankedTensorType type) {
  if (!isa<FloatType>(type.getElementType()))
    return rw.fail("input must be a float tensor, not " +
                   typeName(type.getElementType()));
  if (type.getRank() < 2)
    return rw.fail("input must have rank >= 2 (the last dim holds the real "
                   "and imaginary parts), not " +
                   Twine(type.getRank()));
  int64_t parts = type.getShape().back();
  if (parts != 1 && parts != 2)
    return rw.fail("the last dim of the input must be 1 (real) or 2 "
                   "(complex), not " +
                   Twine(parts));
  return parts;
}

/// A scalar integer parameter input, or `fallback` when it is omitted.
FailureOr<int64_t> scalarParameter(NodeRewriter &rw, unsigned i, StringRef what,
                                   int64_t fallback) {
  if (!rw.hasInput(i))
    return fallback;
  FailureOr<SmallVector<int64_t>> v = rw.constantInts(i, what);
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return rw.fail(what + " must hold one value, not " + Twine(v->size()));
  return v->front();
}

/// DFT: the signal axis (an attribute before opset 20, input 2 since) is
/// transformed to `dft_length` bins (the signal truncated or zero-padded),
/// the first N/2+1 when `onesided`.
LogicalResult convertDFT(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  FailureOr<int64_t> parts = signalParts(rw, type);
  if (failed(parts))
    return failure();
  int64_t rank = type.getRank();
  FailureOr<int64_t> axisValue = rw.version() >= 20
                                     ? scalarParameter(rw, 2, "axis", -2)
                                     : FailureOr<int64_t>(rw.getInt("axis", 1));
  if (failed(axisValue))
    return failure();
  FailureOr<int64_t> axis = rw.normalizeAxis(*axisValue, rank);
  if (failed(axis))
    return failure();
  if (*axis == rank - 1)
    return rw.fail("axis " + Twine(*axisValue) +
                   " is the last dim, which holds the real and imaginary "
                   "parts; the signal axis must be another one");
  int64_t length = type.getDimSize(*axis);
  FailureOr<int64_t> n = scalarParameter(rw, 1, "dft_length", length);
  if (failed(n))
    return failure();
  if (*n < 1 || *n > kMaxDftLength)
    return rw.fail("dft_length " + Twine(*n) + " is outside [1, " +
                   Twine(kMaxDftLength) + "]");
  bool inverse = rw.getInt("inverse", 0) != 0;
  bool onesided = rw.getInt("onesided", 0) != 0;
  int64_t bins = onesided ? *n / 2 + 1 : *n;
  // Samples beyond dft_length are dropped; missing ones are zeros, which
  // add nothing to the sums.
  int64_t samples = std::min(length, *n);
  if (failed(checkTableSize(rw, samples, *parts, bins)))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value x = rw.input(0);
  if (samples < length) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        strides(rank, b.getIndexAttr(1)), sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          b.getIndexAttr(d == *axis ? samples : type.getDimSize(d)));
    x = tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
  }
  SmallVector<int64_t> outShape(type.getShape());
  outShape[*axis] = bins;
  outShape.back() = 2;
  Type elementType = type.getElementType();
  if (numElements(outShape) == 0)
    return rw.replace(createEmpty(b, loc, outShape, elementType));
  MLIRContext *ctx = rw.ctx();
  SmallVector<AffineExpr> xExprs;
  for (int64_t d = 0; d < rank; ++d)
    xExprs.push_back(getAffineDimExpr(d == *axis      ? rank
                                      : d == rank - 1 ? rank + 1
                                                      : d,
                                      ctx));
  Value table = fourierTable(b, loc, samples, *parts, bins, *n, inverse,
                             computeType(elementType));
  return rw.replace(
      fourierContraction(b, loc, x, AffineMap::get(rank + 2, 0, xExprs, ctx),
                         table, Value(), outShape, *axis, elementType));
}

/// STFT: signal [batch, length, 1 or 2] -> [batch, frames, bins, 2], frame
/// f the samples [f * frame_step, f * frame_step + frame_length) times the
/// window.
LogicalResult convertSTFT(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "signal")))
    return failure();
  auto type = rw.inputType(0);
  FailureOr<int64_t> parts = signalParts(rw, type);
  if (failed(parts))
    return failure();
  if (type.getRank() != 3)
    return rw.fail("signal must have shape [batch, length, 1 or 2], not " +
                   typeName(type));
  FailureOr<int64_t> step = scalarParameter(rw, 1, "frame_step", 0);
  if (failed(step))
    return failure();
  if (*step < 1)
    return rw.fail("frame_step must be positive, not " + Twine(*step));
  int64_t length = type.getDimSize(1);
  Value window = rw.hasInput(2) ? rw.input(2) : Value();
  if (window) {
    auto wType = rw.inputType(2);
    if (wType.getRank() != 1 || wType.getElementType() != type.getElementType())
      return rw.fail("window must be a 1-D tensor of the signal's type, not " +
                     typeName(wType));
  }
  int64_t fallback = window ? rw.inputType(2).getDimSize(0) : length;
  FailureOr<int64_t> frame = scalarParameter(rw, 3, "frame_length", fallback);
  if (failed(frame))
    return failure();
  if (window && *frame != fallback)
    return rw.fail("frame_length " + Twine(*frame) +
                   " differs from the window's length " + Twine(fallback));
  if (*frame < 1 || *frame > std::min(length, kMaxDftLength))
    return rw.fail("frame_length " + Twine(*frame) + " is outside [1, " +
                   Twine(std::min(length, kMaxDftLength)) +
                   "] (the signal length and the longest transform)");
  bool onesided = rw.getInt("onesided", 1) != 0;
  int64_t frames = (length - *frame) / *step + 1;
  int64_t bins = onesided ? *frame / 2 + 1 : *frame;
  if (failed(checkTableSize(rw, *frame, *parts, bins)))
    return failure();
  SmallVector<int64_t> outShape = {type.getDimSize(0), frames, bins, 2};
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type elementType = type.getElementType();
  if (numElements(outShape) == 0)
    return rw.replace(createEmpty(b, loc, outShape, elementType));
  MLIRContext *ctx = rw.ctx();
  // Loops (batch, frame, bin, part, n, r): sample frame * step + n.
  AffineMap xMap = AffineMap::get(
      6, 0,
      {getAffineDimExpr(0, ctx),
       getAffineDimExpr(1, ctx) * *step + getAffineDimExpr(4, ctx),
       getAffineDimExpr(5, ctx)},
      ctx);
  Value table = fourierTable(b, loc, *frame, *parts, bins, *frame,
                             /*inverse=*/false, computeType(elementType));
  return rw.replace(fourierContraction(b, loc, rw.input(0), xMap, table, window,
                                       outShape, 2, elementType));
}

/// MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] matrix of
/// triangular filters, spaced evenly in mel between the edge frequencies
/// (num_mel_bins + 2 points, rounded down to DFT bins), as the ONNX
/// specification computes it.
LogicalResult convertMelWeightMatrix(NodeRewriter &rw) {
  FailureOr<int64_t> mels = scalarParameter(rw, 0, "num_mel_bins", 0);
  FailureOr<int64_t> dft = scalarParameter(rw, 1, "dft_length", 0);
  FailureOr<int64_t> rate = scalarParameter(rw, 2, "sample_rate", 0);
  if (failed(mels) || failed(dft) || failed(rate))
    return failure();
  FailureOr<SmallVector<double>> low = rw.constantFloats(3, "lower_edge_hertz");
  if (failed(low))
    return failure();
  FailureOr<SmallVector<double>> high =
      rw.constantFloats(4, "upper_edge_hertz");
  if (failed(high))
    return failure();
  if (low->size() != 1 || high->size() != 1)
    return rw.fail("the edge frequencies must be scalars");
  if (*mels < 1 || *dft < 1 || *rate < 1)
    return rw.fail("num_mel_bins, dft_length and sample_rate must be "
                   "positive");
  int64_t spectrum = *dft / 2 + 1;
  if (*mels > kMaxDftLength || spectrum > kMaxDftLength)
    return rw.fail("num_mel_bins and dft_length / 2 + 1 must be at most " +
                   Twine(kMaxDftLength));
  FailureOr<Type> onnxType =
      dtypeAttr(rw, "output_datatype", Float32Type::get(rw.ctx()));
  if (failed(onnxType))
    return failure();
  Type t = signlessType(*onnxType);
  auto toMel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lowMel = toMel(low->front()), highMel = toMel(high->front());
  double step = (highMel - lowMel) / double(*mels + 2);
  SmallVector<int64_t> points;
  for (int64_t i = 0; i < *mels + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (i * step + lowMel) / 2595) - 1);
    double bin = std::floor(double(*dft + 1) * hz / double(*rate));
    points.push_back(int64_t(bin));
  }
  for (int64_t p : points)
    if (p < 0 || p >= spectrum)
      return rw.fail("a filter edge falls on DFT bin " + Twine(p) +
                     ", outside [0, " + Twine(spectrum) +
                     "); check the edge frequencies against sample_rate");
  std::vector<double> matrix(spectrum * *mels, 0.0);
  for (int64_t m = 0; m < *mels; ++m) {
    int64_t left = points[m], center = points[m + 1], right = points[m + 2];
    if (center == left)
      matrix[center * *mels + m] = 1;
    else
      for (int64_t j = left; j <= center; ++j)
        matrix[j * *mels + m] = double(j - left) / double(center - left);
    for (int64_t j = center; j < right; ++j)
      matrix[j * *mels + m] = double(right - j) / double(right - center);
  }
  SmallVector<Attribute> values;
  for (double v : matrix)
    values.push_back(scalarAttr(t, v));
  auto type = RankedTensorType::get({spectrum, *mels}, t);
  return rw.replace(
      createConstant(rw.b(), rw.loc(), DenseElementsAttr::get(type, values)),
      *onnxType);
}

} // namespace

void dlc::populateSignalHandlers(HandlerRegistry &r) {
  r.add("DFT", {17, 20}, convertDFT);
  r.add("STFT", {17}, convertSTFT);
  r.add("MelWeightMatrix", {17}, convertMelWeightMatrix);
}
