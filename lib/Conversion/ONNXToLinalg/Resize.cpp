//===- Resize.cpp - Resize and Upsample -----------------------------------===//
//
// With static shapes, where each output element of a resize reads from
// depends only on sizes, scales and attributes. So the interpolation is
// planned at compile time, per resized dim and output position: the source
// indices ("taps") and their weights, computed the way the ONNX reference
// implementation does (double precision, edge clamping, exclude_outside
// renormalization, antialias footprints).
//
// The kernel is one linalg.generic over the output. It reads the tap tables
// as 1-D constant inputs indexed by the output position and the source with
// tensor.extract, and sums the products of the per-dim weights. A nearest
// resize whose taps are o * k + c or o floordiv k on every dim reads the
// source through an affine indexing map instead: a copy-like generic that
// fuses like any elementwise op.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace dlc;

namespace {

enum class Mode { Nearest, Linear, Cubic };

/// Everything that decides the taps, after attributes and inputs are read.
struct ResizeSpec {
  Mode mode = Mode::Nearest;
  std::string coordMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  /// Resize-10 and Upsample: asymmetric coordinates; nearest rounds down
  /// when upsampling and up when downsampling (what ONNX Runtime does, as
  /// those versions do not define the rounding).
  bool legacyNearest = false;
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
  double extrapolation = 0.0;
  SmallVector<double> scales, roiStart, roiEnd;
  SmallVector<int64_t> outShape;
};

/// The taps of one dim: `taps` source indices and weights per output
/// position, and for tf_crop_and_resize the positions outside the source.
struct DimPlan {
  int64_t taps = 1;
  SmallVector<int64_t> index;
  SmallVector<double> weight;
  SmallVector<bool> outside;
  bool anyOutside = false;
};

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

//===--- planning ---------------------------------------------------------===//

/// The source coordinate of output position `x` (the reference's x_ori).
double sourceCoordinate(const ResizeSpec &s, double x, int64_t in, int64_t out,
                        double scale, double roiStart, double roiEnd) {
  double width = scale * in;
  const std::string &m = s.coordMode;
  if (m == "align_corners")
    return width == 1 ? 0.0 : x * (in - 1) / (width - 1);
  if (m == "asymmetric")
    return x / scale;
  if (m == "tf_crop_and_resize") {
    double o = width == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                          : x * (roiEnd - roiStart) * (in - 1) / (width - 1);
    return o + roiStart * (in - 1);
  }
  if (m == "pytorch_half_pixel")
    return width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double adjustment = out / width;
    double center = in / 2.0;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  if (m == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  return (x + 0.5) / scale - 0.5; // half_pixel
}

double cubicKernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1)
    return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2)
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

/// Interpolation coefficients for the fractional part `ratio` in (0, 1].
SmallVector<double> coefficients(const ResizeSpec &s, double ratio,
                                 double scale) {
  switch (s.mode) {
  case Mode::Nearest: {
    bool up = ratio == 1 || s.nearestMode == "ceil" ||
              (s.nearestMode == "round_prefer_floor" && ratio > 0.5) ||
              (s.nearestMode == "round_prefer_ceil" && ratio >= 0.5);
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  case Mode::Linear: {
    if (!s.antialias)
      return {1 - ratio, ratio};
    // A triangle filter stretched by 1/scale when downsampling.
    double sc = std::min(scale, 1.0);
    int64_t start = static_cast<int64_t>(std::floor(-1 / sc) + 1);
    int64_t footprint = 2 - 2 * start;
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < start + footprint; ++i) {
      double v = std::clamp(1 - std::abs((i - ratio) * sc), 0.0, 1.0);
      c.push_back(v);
      sum += v;
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  case Mode::Cubic: {
    double a = s.cubicA;
    if (!s.antialias)
      return {cubicKernel(ratio + 1, a), cubicKernel(ratio, a),
              cubicKernel(1 - ratio, a), cubicKernel(2 - ratio, a)};
    double sc = std::min(scale, 1.0);
    int64_t start = static_cast<int64_t>(std::floor(-2 / sc) + 1);
    SmallVector<double> c;
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      double v = cubicKernel(sc * (i - ratio), a);
      c.push_back(v);
      sum += v;
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  }
  llvm_unreachable("unknown resize mode");
}

/// The `n` integers nearest to `x` (ties to the smaller one) within the
/// source padded by ceil(n / 2) on each side, in ascending order and in
/// unpadded coordinates (so possibly outside [0, in)).
SmallVector<int64_t> neighbors(double x, int64_t n, int64_t in) {
  int64_t pad = (n + 1) / 2;
  double xp = x + pad;
  int64_t limit = in + 2 * pad;
  // The n nearest lie within n of x, or at the border when x is outside.
  int64_t center = static_cast<int64_t>(
      std::floor(std::clamp(xp, 0.0, static_cast<double>(limit - 1))));
  int64_t lo = std::max<int64_t>(0, center - n);
  int64_t hi = std::min<int64_t>(limit - 1, center + n + 1);
  SmallVector<int64_t> cand;
  for (int64_t i = lo; i <= hi; ++i)
    cand.push_back(i);
  llvm::sort(cand, [&](int64_t p, int64_t q) {
    double dp = std::abs(xp - p), dq = std::abs(xp - q);
    return dp < dq || (dp == dq && p < q);
  });
  cand.resize(std::min<size_t>(cand.size(), n));
  llvm::sort(cand);
  for (int64_t &i : cand)
    i -= pad;
  return cand;
}

/// Drops taps with zero weight: unscaled dims of a linear or cubic resize
/// become one-tap copies, and integer coordinates need fewer reads.
void compactTaps(DimPlan &p, int64_t out) {
  int64_t taps = 0;
  for (int64_t o = 0; o < out; ++o) {
    int64_t live = 0;
    for (int64_t k = 0; k < p.taps; ++k)
      live += p.weight[o * p.taps + k] != 0;
    taps = std::max(taps, live);
  }
  taps = std::max<int64_t>(taps, 1);
  if (taps == p.taps)
    return;
  SmallVector<int64_t> index;
  SmallVector<double> weight;
  for (int64_t o = 0; o < out; ++o) {
    int64_t kept = 0;
    for (int64_t k = 0; k < p.taps; ++k) {
      if (p.weight[o * p.taps + k] == 0)
        continue;
      index.push_back(p.index[o * p.taps + k]);
      weight.push_back(p.weight[o * p.taps + k]);
      ++kept;
    }
    // Pad with weightless reads of a valid index.
    for (; kept < taps; ++kept) {
      index.push_back(p.index[o * p.taps]);
      weight.push_back(0.0);
    }
  }
  p.taps = taps;
  p.index = std::move(index);
  p.weight = std::move(weight);
}

DimPlan planDim(const ResizeSpec &s, int64_t in, int64_t out, double scale,
                double roiStart, double roiEnd) {
  DimPlan p;
  bool multiTap = s.mode != Mode::Nearest;
  for (int64_t o = 0; o < out; ++o) {
    double x = sourceCoordinate(s, o, in, out, scale, roiStart, roiEnd);
    bool outside = s.coordMode == "tf_crop_and_resize" && (x < 0 || x > in - 1);
    p.outside.push_back(outside);
    p.anyOutside |= outside;
    SmallVector<int64_t> idx;
    SmallVector<double> coef;
    if (s.legacyNearest && !multiTap) {
      // Clamped first: tiny scales put x far beyond any int64.
      double r = scale < 1 ? std::ceil(x) : std::floor(x);
      idx = {static_cast<int64_t>(std::clamp(r, -1.0, double(in)))};
      coef = {1.0};
    } else {
      double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
      coef = coefficients(s, ratio, scale);
      idx = neighbors(x, coef.size(), in);
      if (s.excludeOutside) {
        double sum = 0;
        for (auto [i, c] : llvm::zip(idx, coef)) {
          if (i < 0 || i >= in)
            c = 0;
          sum += c;
        }
        if (sum != 0)
          for (double &c : coef)
            c /= sum;
      }
      if (!multiTap) {
        // Nearest: keep the one neighbor with a non-zero coefficient.
        int64_t chosen = coef[0] != 0 ? idx[0] : idx[1];
        idx = {chosen};
        coef = {1.0};
      }
    }
    if (o == 0)
      p.taps = idx.size();
    // Outside positions take extrapolation_value; one plain read keeps the
    // kernel a copy when nothing else interpolates.
    for (auto [k, ic] : llvm::enumerate(llvm::zip(idx, coef))) {
      auto [i, c] = ic;
      p.index.push_back(std::clamp<int64_t>(i, 0, in - 1));
      p.weight.push_back(outside ? (k == 0 ? 1.0 : 0.0) : c);
    }
  }
  compactTaps(p, out);
  return p;
}

/// Whether every output position reads one source element unweighted.
bool isCopy(const DimPlan &p) {
  return p.taps == 1 &&
         llvm::all_of(p.weight, [&](double w) { return w == 1.0; });
}

/// Whether a dim is copied unchanged.
bool isIdentity(const DimPlan &p, int64_t in, int64_t out) {
  if (!isCopy(p) || in != out || p.anyOutside)
    return false;
  for (int64_t o = 0; o < out; ++o)
    if (p.index[o] != o)
      return false;
  return true;
}

/// An affine expression of output dim `d` equal to a one-tap plan's source
/// index, when there is one (o * k + c, or o floordiv k).
std::optional<AffineExpr> affineIndex(const DimPlan &p, int64_t d, int64_t out,
                                      MLIRContext *ctx) {
  if (!isCopy(p) || p.anyOutside)
    return std::nullopt;
  AffineExpr dim = getAffineDimExpr(d, ctx);
  int64_t c = p.index[0], k = out > 1 ? p.index[1] - p.index[0] : 0;
  bool linear = k >= 0;
  for (int64_t o = 0; linear && o < out; ++o)
    linear = p.index[o] == o * k + c;
  if (linear)
    return dim * k + c;
  // o floordiv f: f is the first position with a non-zero index.
  int64_t f = 1;
  while (f < out && p.index[f] == 0)
    ++f;
  for (int64_t o = 0; o < out; ++o)
    if (p.index[o] != o / f)
      return std::nullopt;
  return dim.floorDiv(f);
}

//===--- building ---------------------------------------------------------===//

Value tableConstant(OpBuilder &b, Location loc, Type elementType,
                    ArrayRef<Attribute> values) {
  auto type =
      RankedTensorType::get({static_cast<int64_t>(values.size())}, elementType);
  return createConstant(b, loc, DenseElementsAttr::get(type, values));
}

/// Converts the interpolated value back to the element type; integers are
/// rounded half to even and saturated, like the reference.
Value fromCompute(OpBuilder &b, Location loc, Value v, Type t,
                  bool isUnsigned) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    if (ft == v.getType())
      return v;
    if (ft.getWidth() < v.getType().getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, t, v);
    return arith::ExtFOp::create(b, loc, t, v);
  }
  Type ct = v.getType();
  v = math::RoundEvenOp::create(b, loc, v);
  unsigned w = t.getIntOrFloatBitWidth();
  APInt lo = isUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
  APInt hi = isUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
  double loD = isUnsigned ? static_cast<double>(lo.getZExtValue())
                          : static_cast<double>(lo.getSExtValue());
  double hiD = isUnsigned ? static_cast<double>(hi.getZExtValue())
                          : static_cast<double>(hi.getSExtValue());
  // 64-bit maxima round up to a power of two that does not convert back.
  if (w > 53)
    hiD = std::nextafter(hiD, 0.0);
  v = arith::MaximumFOp::create(b, loc, v, scalarConstant(b, loc, ct, loD));
  v = arith::MinimumFOp::create(b, loc, v, scalarConstant(b, loc, ct, hiD));
  if (isUnsigned)
    return arith::FPToUIOp::create(b, loc, t, v);
  return arith::FPToSIOp::create(b, loc, t, v);
}

Value toCompute(OpBuilder &b, Location loc, Value v, Type ct, bool isUnsigned) {
  Type t = v.getType();
  if (t == ct)
    return v;
  if (isa<FloatType>(t)) {
    if (t.getIntOrFloatBitWidth() < ct.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, ct, v);
    return arith::TruncFOp::create(b, loc, ct, v);
  }
  if (isUnsigned)
    return arith::UIToFPOp::create(b, loc, ct, v);
  return arith::SIToFPOp::create(b, loc, ct, v);
}

Value buildResize(NodeRewriter &rw, const ResizeSpec &s,
                  ArrayRef<DimPlan> plans) {
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = b.getContext();
  Value x = rw.input(0);
  auto type = rw.inputType(0);
  Type t = type.getElementType();
  bool isUnsigned = rw.isUnsigned(0);
  int64_t rank = type.getRank();
  ArrayRef<int64_t> outShape = s.outShape;
  SmallVector<bool> identity;
  for (int64_t d = 0; d < rank; ++d)
    identity.push_back(isIdentity(plans[d], type.getDimSize(d), outShape[d]));
  if (llvm::all_of(identity, [](bool i) { return i; }))
    return x;
  Value init = createEmpty(b, loc, outShape, t);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  AffineMap outMap = b.getMultiDimIdentityMap(rank);

  // Every dim one tap with an affine source index: a copy through an
  // indexing map.
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    if (identity[d]) {
      exprs.push_back(b.getAffineDimExpr(d));
      continue;
    }
    std::optional<AffineExpr> e = affineIndex(plans[d], d, outShape[d], ctx);
    if (!e)
      break;
    exprs.push_back(*e);
  }
  if (static_cast<int64_t>(exprs.size()) == rank) {
    AffineMap map = AffineMap::get(rank, 0, exprs, ctx);
    return linalg::GenericOp::create(
               b, loc, init.getType(), x, init,
               ArrayRef<AffineMap>{map, outMap}, iterators,
               [](OpBuilder &nb, Location nloc, ValueRange args) {
                 linalg::YieldOp::create(nb, nloc, args[0]);
               })
        .getResult(0);
  }

  // General case: tap tables as inputs, the source through tensor.extract.
  bool interpolate =
      llvm::any_of(plans, [](const DimPlan &p) { return !isCopy(p); });
  // f32 arithmetic, or f64 where f32 cannot hold every value exactly.
  Type ct = t.isF64() || (isa<IntegerType>(t) && t.getIntOrFloatBitWidth() > 16)
                ? b.getF64Type()
                : b.getF32Type();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  struct DimOperands {
    SmallVector<int64_t> indexArgs, weightArgs;
    int64_t outsideArg = -1;
  };
  SmallVector<DimOperands> operands(rank);
  bool anyOutside = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (identity[d])
      continue;
    const DimPlan &p = plans[d];
    AffineMap map = AffineMap::get(rank, 0, b.getAffineDimExpr(d), ctx);
    for (int64_t k = 0; k < p.taps; ++k) {
      SmallVector<Attribute> idx, w;
      for (int64_t o = 0; o < outShape[d]; ++o) {
        idx.push_back(b.getI64IntegerAttr(p.index[o * p.taps + k]));
        w.push_back(FloatAttr::get(ct, p.weight[o * p.taps + k]));
      }
      operands[d].indexArgs.push_back(inputs.size());
      inputs.push_back(tableConstant(b, loc, b.getI64Type(), idx));
      maps.push_back(map);
      if (interpolate) {
        operands[d].weightArgs.push_back(inputs.size());
        inputs.push_back(tableConstant(b, loc, ct, w));
        maps.push_back(map);
      }
    }
    if (p.anyOutside) {
      SmallVector<Attribute> flags;
      for (bool f : p.outside)
        flags.push_back(b.getBoolAttr(f));
      operands[d].outsideArg = inputs.size();
      inputs.push_back(tableConstant(b, loc, b.getI1Type(), flags));
      maps.push_back(map);
      anyOutside = true;
    }
  }
  maps.push_back(outMap);
  double extrapolation = s.extrapolation;
  auto body = [&](OpBuilder &nb, Location nloc, ValueRange args) {
    SmallVector<Value> coords(rank);
    SmallVector<int64_t> tap(rank, 0);
    Value acc;
    // Visit every combination of taps, like an odometer over the dims.
    while (true) {
      Value weight;
      for (int64_t d = 0; d < rank; ++d) {
        if (identity[d]) {
          coords[d] = linalg::IndexOp::create(nb, nloc, nb.getIndexType(), d);
          continue;
        }
        coords[d] = arith::IndexCastOp::create(
            nb, nloc, nb.getIndexType(), args[operands[d].indexArgs[tap[d]]]);
        if (interpolate) {
          Value w = args[operands[d].weightArgs[tap[d]]];
          weight = weight ? arith::MulFOp::create(nb, nloc, weight, w) : w;
        }
      }
      Value v = tensor::ExtractOp::create(nb, nloc, x, coords);
      if (interpolate) {
        v = toCompute(nb, nloc, v, ct, isUnsigned);
        v = weight ? arith::MulFOp::create(nb, nloc, v, weight).getResult() : v;
        acc = acc ? arith::AddFOp::create(nb, nloc, acc, v).getResult() : v;
      } else {
        acc = v;
      }
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        if (identity[d])
          continue;
        if (++tap[d] < plans[d].taps)
          break;
        tap[d] = 0;
      }
      if (d < 0)
        break;
    }
    Value result =
        interpolate ? fromCompute(nb, nloc, acc, t, isUnsigned) : acc;
    if (anyOutside) {
      Value out;
      for (int64_t d = 0; d < rank; ++d) {
        if (operands[d].outsideArg < 0)
          continue;
        Value f = args[operands[d].outsideArg];
        out = out ? arith::OrIOp::create(nb, nloc, out, f) : f;
      }
      Value ex = scalarConstant(nb, nloc, t, extrapolation);
      result = arith::SelectOp::create(nb, nloc, out, ex, result);
    }
    linalg::YieldOp::create(nb, nloc, result);
  };
  return linalg::GenericOp::create(b, loc, init.getType(), inputs, init, maps,
                                   iterators, body)
      .getResult(0);
}

/// Plans and builds the resize once `s` is complete.
LogicalResult emitResize(NodeRewriter &rw, ResizeSpec &s) {
  auto type = rw.inputType(0);
  Type t = type.getElementType();
  if (s.mode != Mode::Nearest && t.isInteger(1))
    return rw.fail("linear and cubic modes need numeric data, not bool");
  int64_t rank = type.getRank();
  if (numElements(s.outShape) > (int64_t(1) << 40))
    return rw.fail("the output shape " + shapeStr(s.outShape) +
                   " is too large");
  if (numElements(s.outShape) == 0)
    return rw.replace(createEmpty(rw.b(), rw.loc(), s.outShape, t),
                      rw.onnxElementType(0));
  if (type.getNumElements() == 0)
    return rw.fail("cannot resize an empty input (shape " +
                   shapeStr(type.getShape()) + ") to " + shapeStr(s.outShape));
  // Each dim is planned as tables of one entry per output index.
  for (int64_t d = 0; d < rank; ++d)
    if (s.outShape[d] > kMaxConstantTable)
      return rw.unsupported("resizing to " + Twine(s.outShape[d]) +
                            " elements along dim " + Twine(d) +
                            " (at most 2^24 per dim)");
  SmallVector<DimPlan> plans;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = type.getDimSize(d), out = s.outShape[d];
    // tf_half_pixel_for_nn would shift unscaled dims by half a pixel; ONNX
    // Runtime copies them (the reference has no such mode), and so does dlc.
    if (s.coordMode == "tf_half_pixel_for_nn" && in == out &&
        s.scales[d] == 1.0) {
      DimPlan copy;
      copy.weight.assign(out, 1.0);
      copy.outside.assign(out, false);
      for (int64_t o = 0; o < out; ++o)
        copy.index.push_back(o);
      plans.push_back(copy);
      continue;
    }
    plans.push_back(
        planDim(s, in, out, s.scales[d], s.roiStart[d], s.roiEnd[d]));
  }
  return rw.replace(buildResize(rw, s, plans), rw.onnxElementType(0));
}

/// Output sizes from scales: floor(in * scale). The spec scales the ROI
/// extent in for tf_crop_and_resize too, but the reference implementation
/// and ONNX Runtime both ignore it; dlc follows them.
void sizesFromScales(ResizeSpec &s, ArrayRef<int64_t> in) {
  s.outShape.clear();
  for (auto [i, d] : llvm::enumerate(in)) {
    // Saturates before the conversion: scales are user input.
    double size = std::floor(d * s.scales[i]);
    s.outShape.push_back(static_cast<int64_t>(std::min(size, 1e15)));
  }
}

FailureOr<Mode> parseMode(NodeRewriter &rw, StringRef mode, bool allowCubic) {
  if (mode == "nearest")
    return Mode::Nearest;
  if (mode == "linear" || mode == "bilinear")
    return Mode::Linear;
  if (mode == "cubic" && allowCubic)
    return Mode::Cubic;
  return rw.fail("unknown mode '" + mode + "'");
}

/// Reads an optional float or int input; absent and empty inputs give
/// std::nullopt.
template <typename T>
FailureOr<std::optional<SmallVector<T>>>
optionalConstant(NodeRewriter &rw, unsigned i, StringRef what) {
  if (!rw.hasInput(i) || rw.inputType(i).getNumElements() == 0)
    return std::optional<SmallVector<T>>();
  if constexpr (std::is_same_v<T, double>) {
    FailureOr<SmallVector<double>> v = rw.constantFloats(i, what);
    if (failed(v))
      return failure();
    return std::optional<SmallVector<T>>(*v);
  } else {
    FailureOr<SmallVector<int64_t>> v = rw.constantInts(i, what);
    if (failed(v))
      return failure();
    return std::optional<SmallVector<T>>(*v);
  }
}

LogicalResult convertResize(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  int64_t v = rw.version();
  ResizeSpec s;
  FailureOr<Mode> mode =
      parseMode(rw, rw.getString("mode", "nearest"), /*allowCubic=*/v >= 11);
  if (failed(mode))
    return failure();
  s.mode = *mode;
  if (v < 11) {
    s.coordMode = "asymmetric";
    s.legacyNearest = true;
  } else {
    s.coordMode = rw.getString("coordinate_transformation_mode", "half_pixel");
    s.nearestMode = rw.getString("nearest_mode", "round_prefer_floor");
    s.cubicA = rw.getFloat("cubic_coeff_a", -0.75f);
    s.excludeOutside = rw.getInt("exclude_outside", 0) != 0;
    s.extrapolation = rw.getFloat("extrapolation_value", 0.0f);
  }
  static const char *const kCoordModes[] = {
      "half_pixel",          "half_pixel_symmetric", "pytorch_half_pixel",
      "align_corners",       "asymmetric",           "tf_crop_and_resize",
      "tf_half_pixel_for_nn"};
  bool knownCoord = llvm::is_contained(kCoordModes, s.coordMode);
  if (s.coordMode == "half_pixel_symmetric" && v < 19)
    knownCoord = false;
  if (s.coordMode == "tf_half_pixel_for_nn" && v >= 18)
    knownCoord = false;
  if (!knownCoord)
    return rw.fail("unknown coordinate_transformation_mode '" + s.coordMode +
                   "' for opset " + Twine(v));
  if (s.nearestMode != "round_prefer_floor" &&
      s.nearestMode != "round_prefer_ceil" && s.nearestMode != "floor" &&
      s.nearestMode != "ceil")
    return rw.fail("unknown nearest_mode '" + s.nearestMode + "'");
  if (v >= 18) {
    s.antialias = rw.getInt("antialias", 0) != 0;
    if (s.antialias && s.mode == Mode::Nearest)
      return rw.fail("antialias applies to linear and cubic modes only");
  }

  // The resized axes (opset 18) and the ROI.
  SmallVector<int64_t> axes;
  if (v >= 18 && rw.hasAttr("axes")) {
    for (int64_t a : rw.getInts("axes")) {
      FailureOr<int64_t> n = rw.normalizeAxis(a, rank);
      if (failed(n))
        return failure();
      if (llvm::is_contained(axes, *n))
        return rw.fail("axis " + Twine(a) + " is repeated");
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t n = axes.size();
  s.roiStart.assign(rank, 0.0);
  s.roiEnd.assign(rank, 1.0);
  if (s.coordMode == "tf_crop_and_resize") {
    FailureOr<std::optional<SmallVector<double>>> roi =
        optionalConstant<double>(rw, 1, "roi");
    if (failed(roi))
      return failure();
    if (!*roi)
      return rw.fail("tf_crop_and_resize needs the roi input");
    if (static_cast<int64_t>((*roi)->size()) != 2 * n)
      return rw.fail("roi has " + Twine((*roi)->size()) +
                     " entries; expected " + Twine(2 * n));
    for (int64_t i = 0; i < n; ++i) {
      s.roiStart[axes[i]] = (**roi)[i];
      s.roiEnd[axes[i]] = (**roi)[n + i];
    }
  }

  unsigned scalesIdx = v < 11 ? 1 : 2;
  FailureOr<std::optional<SmallVector<double>>> scales =
      optionalConstant<double>(rw, scalesIdx, "scales");
  if (failed(scales))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> sizes =
      v >= 11 ? optionalConstant<int64_t>(rw, 3, "sizes")
              : FailureOr<std::optional<SmallVector<int64_t>>>(
                    std::optional<SmallVector<int64_t>>());
  if (failed(sizes))
    return failure();
  if (bool(*scales) == bool(*sizes))
    return rw.fail("exactly one of scales and sizes must be given");
  s.scales.assign(rank, 1.0);
  if (*scales) {
    if (static_cast<int64_t>((*scales)->size()) != n)
      return rw.fail("scales has " + Twine((*scales)->size()) +
                     " entries; expected " + Twine(n));
    for (int64_t i = 0; i < n; ++i) {
      double sc = (**scales)[i];
      if (!(sc > 0) || !std::isfinite(sc))
        return rw.fail("scales must be positive and finite");
      s.scales[axes[i]] = sc;
    }
    sizesFromScales(s, type.getShape());
    return emitResize(rw, s);
  }
  if (static_cast<int64_t>((*sizes)->size()) != n)
    return rw.fail("sizes has " + Twine((*sizes)->size()) +
                   " entries; expected " + Twine(n));
  s.outShape.assign(type.getShape().begin(), type.getShape().end());
  for (int64_t i = 0; i < n; ++i) {
    int64_t size = (**sizes)[i];
    if (size < 1)
      return rw.fail("sizes must be positive");
    if (size > (int64_t(1) << 40))
      return rw.fail("sizes " + shapeStr(**sizes) + " are too large");
    s.outShape[axes[i]] = size;
    s.scales[axes[i]] = static_cast<double>(size) / type.getDimSize(axes[i]);
  }
  std::string policy =
      v >= 18 ? rw.getString("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy == "not_larger" || policy == "not_smaller") {
    double scale = s.scales[axes[0]];
    for (int64_t a : axes)
      scale = policy == "not_larger" ? std::min(scale, s.scales[a])
                                     : std::max(scale, s.scales[a]);
    for (int64_t a : axes) {
      s.scales[a] = scale;
      s.outShape[a] = static_cast<int64_t>(scale * type.getDimSize(a) + 0.5);
    }
  } else if (policy != "stretch") {
    return rw.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
  }
  return emitResize(rw, s);
}

LogicalResult convertUpsample(NodeRewriter &rw) {
  if (rw.version() >= 10)
    return rw.fail("Upsample is deprecated since opset 10; use Resize");
  if (failed(rw.requireInput(0, "X")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  ResizeSpec s;
  s.coordMode = "asymmetric";
  s.legacyNearest = true;
  FailureOr<Mode> mode = parseMode(rw, rw.getString("mode", "nearest"),
                                   /*allowCubic=*/false);
  if (failed(mode))
    return failure();
  s.mode = *mode;
  if (rw.version() < 7) {
    if (rank != 4)
      return rw.fail("X must have rank 4 (N, C, H, W)");
    if (!rw.hasAttr("height_scale") || !rw.hasAttr("width_scale"))
      return rw.fail("missing required attribute 'height_scale' or "
                     "'width_scale'");
    s.scales = {1.0, 1.0, rw.getFloat("height_scale", 1),
                rw.getFloat("width_scale", 1)};
  } else if (rw.version() < 9) {
    if (!rw.hasAttr("scales"))
      return rw.fail("missing required attribute 'scales'");
    for (float f : rw.getFloats("scales"))
      s.scales.push_back(f);
  } else {
    FailureOr<SmallVector<double>> sc = rw.constantFloats(1, "scales");
    if (failed(sc))
      return failure();
    s.scales = *sc;
  }
  if (static_cast<int64_t>(s.scales.size()) != rank)
    return rw.fail("scales has " + Twine(s.scales.size()) +
                   " entries for an input of rank " + Twine(rank));
  for (double sc : s.scales)
    if (!(sc >= 1) || !std::isfinite(sc))
      return rw.fail("scales must be finite and >= 1");
  s.roiStart.assign(rank, 0.0);
  s.roiEnd.assign(rank, 1.0);
  sizesFromScales(s, type.getShape());
  return emitResize(rw, s);
}

//===--- GridSample -------------------------------------------------------===//

/// Float arithmetic in type `t` (f32, or f64 for f64 models) inside a
/// kernel body: the sampling formulas below read as formulas.
struct FloatOps {
  OpBuilder &b;
  Location loc;
  Type t;
  Value c(double v) { return scalarConstant(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value lt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// linalg.index `dim` as a float (dims below 2^31).
  Value index(int64_t dim) {
    Value i = linalg::IndexOp::create(b, loc, b.getIndexType(), dim);
    i = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), i);
    return arith::UIToFPOp::create(b, loc, t, i);
  }
};

/// GridSample: each output point samples X at the location the grid gives
/// in [-1, 1] coordinates (x, y[, z]: the innermost dim first), by nearest,
/// linear or cubic (Keys, a = -0.75) interpolation; taps outside X read
/// zeros, the border, or X reflected at its edges (`padding_mode`). One
/// kernel: the coordinates are computed from the grid in the body and X is
/// gathered with tensor.extract; the sums nest from the outermost spatial
/// dim in, as ONNX's reference (and PyTorch) compute them.
LogicalResult convertGridSample(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "grid")))
    return failure();
  RankedTensorType xType = rw.inputType(0), gType = rw.inputType(1);
  int64_t rank = xType.getRank(), k = rank - 2;
  if (k < 1 || (rw.version() < 20 && k != 2))
    return rw.fail(
        "X must be N x C x spatial dims (" +
        Twine(rw.version() < 20 ? "4-D before opset 20" : "rank 3 or more") +
        "), not " + typeName(xType));
  if (gType.getRank() != rank || gType.getDimSize(0) != xType.getDimSize(0) ||
      gType.getDimSize(rank - 1) != k)
    return rw.fail("grid has shape " + typeName(gType) + "; for X of shape " +
                   typeName(xType) + " it must be N x output dims x " +
                   Twine(k));
  // Opset 16 spelled linear and cubic "bilinear" and "bicubic".
  std::string modeName = rw.getString("mode", "linear");
  FailureOr<Mode> mode = modeName == "bicubic"
                             ? FailureOr<Mode>(Mode::Cubic)
                             : parseMode(rw, modeName, /*allowCubic=*/true);
  if (failed(mode))
    return failure();
  std::string padding = rw.getString("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return rw.fail("unknown padding_mode '" + padding +
                   "' (zeros, border or reflection)");
  bool alignCorners = rw.getInt("align_corners", 0) != 0;
  if (*mode == Mode::Cubic && k != 2)
    return rw.unsupported("cubic mode on " + Twine(k) +
                          " spatial dims (ONNX defines it for 2)");

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value x = rw.input(0), grid = rw.input(1);
  Type t = xType.getElementType();
  Type ct = t.isF64() ? b.getF64Type() : b.getF32Type();
  SmallVector<int64_t> outShape = {xType.getDimSize(0), xType.getDimSize(1)};
  for (int64_t d = 1; d <= k; ++d)
    outShape.push_back(gType.getDimSize(d));
  int64_t outRank = outShape.size();
  Value init = createEmpty(b, loc, outShape, t);
  AffineMap outMap = b.getMultiDimIdentityMap(outRank);
  Type gOnnx = rw.onnxElementType(1), xOnnx = rw.onnxElementType(0);

  auto body = [&](OpBuilder &nb, Location l, ValueRange args) {
    FloatOps f{nb, l, ct};
    // Tap positions in i32 (64-bit integers are pairs of 32-bit ones on
    // some GPU targets).
    Type i32 = nb.getI32Type();
    auto clamp = [&](Value v, double lo, double hi) {
      v = arith::MaximumFOp::create(nb, l, v, f.c(lo));
      return arith::MinimumFOp::create(nb, l, v, f.c(hi)).getResult();
    };
    // v reflected at lo and hi until inside [lo, hi].
    auto reflect = [&](Value v, double lo, double hi) {
      double range = hi - lo;
      if (range <= 0)
        return f.c(lo);
      auto fold = [&](Value dx, Value nearEdge, Value farEdge, bool below) {
        Value n = f.floor(f.mul(dx, f.c(1.0 / range)));
        Value r = f.sub(dx, f.mul(n, f.c(range)));
        Value half = f.floor(f.mul(n, f.c(0.5)));
        Value even =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                  f.sub(n, f.mul(half, f.c(2))), f.c(0));
        Value towardsFar = below ? f.add(nearEdge, r) : f.sub(nearEdge, r);
        Value towardsNear = below ? f.sub(farEdge, r) : f.add(farEdge, r);
        return f.select(even, towardsFar, towardsNear);
      };
      Value lowV = fold(f.sub(f.c(lo), v), f.c(lo), f.c(hi), true);
      Value highV = fold(f.sub(v, f.c(hi)), f.c(hi), f.c(lo), false);
      return f.select(f.lt(v, f.c(lo)), lowV,
                      f.select(f.lt(f.c(hi), v), highV, v));
    };
    Type index = nb.getIndexType();
    Value n = linalg::IndexOp::create(nb, l, index, 0);
    Value ch = linalg::IndexOp::create(nb, l, index, 1);
    // The grid's point for this output point: [n, output dims..., comp].
    SmallVector<Value> gIdx = {n};
    for (int64_t j = 0; j < k; ++j)
      gIdx.push_back(linalg::IndexOp::create(nb, l, index, 2 + j));
    gIdx.push_back(Value());
    // The source coordinate of each spatial dim (grid's last dim holds
    // them innermost first), after rounding and the padding's remapping.
    SmallVector<Value> coord(k);
    SmallVector<double> lo(k), hi(k);
    SmallVector<int64_t> dims(k);
    for (int64_t i = 0; i < k; ++i) {
      dims[i] = xType.getDimSize(2 + i);
      double d = dims[i];
      lo[i] = alignCorners ? 0.0 : -0.5;
      hi[i] = alignCorners ? d - 1 : d - 0.5;
      gIdx.back() = arith::ConstantIndexOp::create(nb, l, k - 1 - i);
      Value g = castScalar(nb, l, tensor::ExtractOp::create(nb, l, grid, gIdx),
                           gOnnx, ct);
      Value v =
          alignCorners
              ? f.mul(f.mul(f.add(g, f.c(1)), f.c(0.5)), f.c(d - 1))
              : f.mul(f.sub(f.mul(f.add(g, f.c(1)), f.c(d)), f.c(1)), f.c(0.5));
      if (*mode == Mode::Nearest)
        v = math::RoundEvenOp::create(nb, l, v);
      // Coordinates outside [lo, hi] move inside; between -0.5 and 0 (and
      // d - 1 and d - 0.5) they stay, as in ONNX's reference (cubic taps
      // there differ from PyTorch's and ONNX Runtime's, which clamp).
      if (padding == "border")
        v = f.select(arith::OrIOp::create(nb, l, f.lt(v, f.c(lo[i])),
                                          f.lt(f.c(hi[i]), v)),
                     clamp(v, 0, d - 1), v);
      else if (padding == "reflection")
        v = reflect(v, lo[i], hi[i]);
      // Far outside (or NaN) reads as just outside: every tap then is, and
      // the conversions to integers below stay defined.
      v = arith::MaxNumFOp::create(nb, l, v, f.c(-4));
      coord[i] = arith::MinNumFOp::create(nb, l, v, f.c(d + 3));
    }
    // X at integer position `pos` (index values, possibly outside), with
    // the padding mode's rule; zeros padding also returns whether inside.
    auto pixel = [&](ArrayRef<Value> pos) -> Value {
      SmallVector<Value> idx = {n, ch};
      Value inside;
      for (int64_t i = 0; i < k; ++i) {
        Value p = pos[i];
        Value zero = arith::ConstantIntOp::create(nb, l, i32, 0);
        Value last = arith::ConstantIntOp::create(nb, l, i32, dims[i] - 1);
        if (padding == "zeros") {
          Value in = arith::AndIOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, p, zero),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, p, last));
          inside = inside ? arith::AndIOp::create(nb, l, inside, in) : in;
        } else if (padding == "reflection") {
          Value pf = arith::SIToFPOp::create(nb, l, ct, p);
          p = arith::FPToSIOp::create(nb, l, i32, reflect(pf, lo[i], hi[i]));
        }
        // In range for the read in every mode (border's clamp; a no-op
        // after reflection; zeros reads index 0 and discards it).
        p = arith::MaxSIOp::create(nb, l, p, zero);
        p = arith::MinSIOp::create(nb, l, p, last);
        idx.push_back(arith::IndexCastOp::create(nb, l, nb.getIndexType(), p));
      }
      Value v = castScalar(nb, l, tensor::ExtractOp::create(nb, l, x, idx),
                           xOnnx, ct);
      return inside ? f.select(inside, v, f.c(0)) : v;
    };
    // Taps of each dim: first index and weights.
    SmallVector<Value> first(k);
    SmallVector<SmallVector<Value>> weights(k);
    for (int64_t i = 0; i < k; ++i) {
      if (*mode == Mode::Nearest) {
        first[i] = arith::FPToSIOp::create(nb, l, i32, coord[i]);
        continue;
      }
      Value base = f.floor(coord[i]);
      Value frac = f.sub(coord[i], base);
      Value start = arith::FPToSIOp::create(nb, l, i32, base);
      if (*mode == Mode::Linear) {
        first[i] = start;
        weights[i] = {f.sub(f.c(1), frac), frac};
        continue;
      }
      first[i] = arith::SubIOp::create(
          nb, l, start, arith::ConstantIntOp::create(nb, l, i32, 1));
      // Keys' cubic convolution weights at distances 1+f, f, 1-f, 2-f.
      const double a = -0.75;
      auto far = [&](Value s) { // 1 <= s <= 2
        return f.sub(f.mul(f.add(f.mul(f.sub(f.mul(f.c(a), s), f.c(5 * a)), s),
                                 f.c(8 * a)),
                           s),
                     f.c(4 * a));
      };
      auto near = [&](Value s) { // 0 <= s <= 1
        return f.add(
            f.mul(f.mul(f.sub(f.mul(f.c(a + 2), s), f.c(a + 3)), s), s),
            f.c(1));
      };
      weights[i] = {far(f.add(frac, f.c(1))), near(frac),
                    near(f.sub(f.c(1), frac)), far(f.sub(f.c(2), frac))};
    }
    SmallVector<Value> pos(k);
    std::function<Value(int64_t)> sample = [&](int64_t i) -> Value {
      if (i == k)
        return pixel(pos);
      if (*mode == Mode::Nearest) {
        pos[i] = first[i];
        return sample(i + 1);
      }
      Value acc;
      for (auto [tap, w] : llvm::enumerate(weights[i])) {
        pos[i] = arith::AddIOp::create(
            nb, l, first[i],
            arith::ConstantIntOp::create(nb, l, i32, int64_t(tap)));
        Value term = f.mul(w, sample(i + 1));
        acc = acc ? f.add(acc, term) : term;
      }
      return acc;
    };
    Value y = castScalar(nb, l, sample(0), ct, xOnnx);
    linalg::YieldOp::create(nb, l, y);
  };
  Value y =
      linalg::GenericOp::create(b, loc, init.getType(), ValueRange{}, init,
                                ArrayRef<AffineMap>{outMap},
                                SmallVector<utils::IteratorType>(
                                    outRank, utils::IteratorType::parallel),
                                body)
          .getResult(0);
  return rw.replace(y);
}

//===--- AffineGrid -------------------------------------------------------===//

/// AffineGrid: the sampling grid of an affine transform, theta [N, k, k+1]
/// applied to every output point's normalized coordinates (x innermost)
/// for `size` = [N, C, spatial dims] (known at compile time): the grid
/// GridSample reads.
LogicalResult convertAffineGrid(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "theta")) ||
      failed(rw.requireInput(1, "size")))
    return failure();
  RankedTensorType thetaType = rw.inputType(0);
  FailureOr<SmallVector<int64_t>> size = rw.constantInts(1, "size");
  if (failed(size))
    return failure();
  int64_t k = static_cast<int64_t>(size->size()) - 2;
  if (k != 2 && k != 3)
    return rw.fail("size must be [N, C, H, W] or [N, C, D, H, W], not " +
                   Twine(size->size()) + " values");
  if (thetaType.getRank() != 3 || thetaType.getDimSize(0) != (*size)[0] ||
      thetaType.getDimSize(1) != k || thetaType.getDimSize(2) != k + 1)
    return rw.fail("theta has shape " + typeName(thetaType) + "; it must be [" +
                   Twine((*size)[0]) + ", " + Twine(k) + ", " + Twine(k + 1) +
                   "] for size [" + Twine((*size)[0]) + ", ...] of " +
                   Twine(k) + " spatial dims");
  for (int64_t d : ArrayRef<int64_t>(*size).drop_front(2))
    if (d <= 0)
      return rw.fail("size has a spatial dim of " + Twine(d));
  bool alignCorners = rw.getInt("align_corners", 0) != 0;

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value theta = rw.input(0);
  Type t = thetaType.getElementType(), xOnnx = rw.onnxElementType(0);
  Type ct = t.isF64() ? b.getF64Type() : b.getF32Type();
  SmallVector<int64_t> outShape = {(*size)[0]};
  for (int64_t i = 0; i < k; ++i)
    outShape.push_back((*size)[2 + i]);
  outShape.push_back(k);
  int64_t outRank = outShape.size();
  Value init = createEmpty(b, loc, outShape, t);
  auto body = [&](OpBuilder &nb, Location l, ValueRange) {
    Type index = nb.getIndexType();
    FloatOps f{nb, l, ct};
    Value n = linalg::IndexOp::create(nb, l, index, 0);
    Value j = linalg::IndexOp::create(nb, l, index, outRank - 1);
    auto thetaAt = [&](int64_t m) {
      Value col = arith::ConstantIndexOp::create(nb, l, m);
      return castScalar(
          nb, l, tensor::ExtractOp::create(nb, l, theta, ValueRange{n, j, col}),
          xOnnx, ct);
    };
    // The translation, then theta's column m times coordinate m, where
    // coordinate 0 is the innermost spatial dim's.
    Value acc = thetaAt(k);
    for (int64_t m = 0; m < k; ++m) {
      int64_t dim = k - m; // loop dim of that spatial dim
      double s = outShape[dim];
      Value i = f.index(dim);
      // align_corners: -1 + i * 2 / (s - 1) (just -1 for one point);
      // otherwise the centers, -1 + (2 i + 1) / s.
      Value coord =
          alignCorners
              ? (s == 1 ? f.c(-1) : f.add(f.c(-1), f.mul(i, f.c(2 / (s - 1)))))
              : f.add(f.c(-1),
                      f.mul(f.add(f.mul(i, f.c(2)), f.c(1)), f.c(1 / s)));
      acc = f.add(acc, f.mul(thetaAt(m), coord));
    }
    linalg::YieldOp::create(nb, l, castScalar(nb, l, acc, ct, xOnnx));
  };
  Value y = linalg::GenericOp::create(
                b, loc, init.getType(), ValueRange{}, init,
                ArrayRef<AffineMap>{b.getMultiDimIdentityMap(outRank)},
                SmallVector<utils::IteratorType>(outRank,
                                                 utils::IteratorType::parallel),
                body)
                .getResult(0);
  return rw.replace(y);
}

/// The index value of f32/f64 `v`, which the caller has clamped into the
/// range of valid positions.
Value toIndex(OpBuilder &b, Location loc, Value v) {
  Value i = arith::FPToSIOp::create(b, loc, b.getI32Type(), v);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
}

/// RoiAlign: each output bin of each region of interest averages (or takes
/// the maximum of) a grid of bilinear samples of its batch entry's feature
/// map, the way ONNX's reference and ONNX Runtime compute them (samples
/// beyond one pixel outside the map count as 0, others are clamped to the
/// edge; max mode takes the largest weighted corner). One kernel over
/// [rois, channels, bins] with the sample grid as reduction loops; the rois
/// are read at run time. The grid must have a fixed size: a positive
/// sampling_ratio.
LogicalResult convertRoiAlign(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "rois")) ||
      failed(rw.requireInput(2, "batch_indices")))
    return failure();
  RankedTensorType xType = rw.inputType(0), rType = rw.inputType(1),
                   bType = rw.inputType(2);
  if (xType.getRank() != 4)
    return rw.fail("X must be N x C x H x W, not " + typeName(xType));
  int64_t rois = rType.getRank() == 2 ? rType.getDimSize(0) : -1;
  if (rType.getRank() != 2 || rType.getDimSize(1) != 4)
    return rw.fail("rois must be num_rois x 4, not " + typeName(rType));
  if (bType.getShape() != ArrayRef<int64_t>{rois} ||
      !isa<IntegerType>(bType.getElementType()))
    return rw.fail("batch_indices must be " + Twine(rois) + " integers, not " +
                   typeName(bType));
  std::string modeName = rw.getString("mode", "avg");
  if (modeName != "avg" && modeName != "max")
    return rw.fail("mode must be 'avg' or 'max', not '" + modeName + "'");
  bool isMax = modeName == "max";
  // Opset 16 added the attribute; before, coordinates were output_half_pixel.
  std::string transform =
      rw.getString("coordinate_transformation_mode",
                   rw.version() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return rw.fail("coordinate_transformation_mode must be 'half_pixel' or "
                   "'output_half_pixel', not '" +
                   transform + "'");
  bool halfPixel = transform == "half_pixel";
  int64_t outH = rw.getInt("output_height", 1),
          outW = rw.getInt("output_width", 1);
  int64_t ratio = rw.getInt("sampling_ratio", 0);
  double scale = rw.getFloat("spatial_scale", 1.0f);
  if (outH < 1 || outW < 1)
    return rw.fail("output_height and output_width must be positive");
  if (ratio < 0)
    return rw.fail("sampling_ratio must not be negative");
  if (ratio == 0)
    return rw.unsupported(
        "sampling_ratio 0 (adaptive: the number of samples depends on each "
        "roi's size at run time); a positive sampling_ratio is");
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType();
  Type ct = t.isF64() ? b.getF64Type() : b.getF32Type();
  int64_t channels = xType.getDimSize(1), height = xType.getDimSize(2),
          width = xType.getDimSize(3), batch = xType.getDimSize(0);
  SmallVector<int64_t> outShape = {rois, channels, outH, outW};
  if (numElements(outShape) == 0)
    return rw.replace(createEmpty(b, loc, outShape, t));
  if (xType.getNumElements() == 0)
    return rw.fail("X has no elements to sample");
  MLIRContext *ctx = b.getContext();
  AffineMap outMap =
      AffineMap::getMultiDimIdentityMap(6, ctx).getMajorSubMap(4);
  AffineMap gridMap =
      AffineMap::get(6, 0, {b.getAffineDimExpr(4), b.getAffineDimExpr(5)}, ctx);
  AffineMap roiMap = AffineMap::get(6, 0, {b.getAffineDimExpr(0)}, ctx);
  Value init = createFilled(b, loc, outShape, ct,
                            isMax ? lowestValueAttr(ct, false)
                                  : cast<TypedAttr>(b.getZeroAttr(ct)));
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  Value x = rw.input(0), roiTensor = rw.input(1);
  Type rOnnx = rw.onnxElementType(1);
  Value sum = buildGeneric(
      b, loc,
      {{createEmpty(b, loc, {ratio, ratio}, ct), gridMap},
       {rw.input(2), roiMap}},
      {{init, outMap}}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange in,
          ValueRange out) -> SmallVector<Value> {
        FloatOps f{nb, l, ct};
        Type index = nb.getIndexType();
        Value r = linalg::IndexOp::create(nb, l, index, 0);
        Value ch = linalg::IndexOp::create(nb, l, index, 1);
        auto roi = [&](int64_t j) {
          Value v = tensor::ExtractOp::create(
              nb, l, roiTensor,
              ValueRange{r, arith::ConstantIndexOp::create(nb, l, j)});
          return f.mul(castScalar(nb, l, v, rOnnx, ct), f.c(scale));
        };
        double offset = halfPixel ? 0.5 : 0.0;
        Value startW = f.sub(roi(0), f.c(offset)),
              startH = f.sub(roi(1), f.c(offset));
        Value roiW = f.sub(f.sub(roi(2), f.c(offset)), startW),
              roiH = f.sub(f.sub(roi(3), f.c(offset)), startH);
        if (!halfPixel) {
          roiW = arith::MaxNumFOp::create(nb, l, roiW, f.c(1));
          roiH = arith::MaxNumFOp::create(nb, l, roiH, f.c(1));
        }
        Value binH = f.mul(roiH, f.c(1.0 / outH)),
              binW = f.mul(roiW, f.c(1.0 / outW));
        // Sample (iy, ix) of bin (ph, pw).
        auto sample = [&](Value start, Value bin, int64_t binDim,
                          int64_t gridDim) {
          Value pos = f.add(start, f.mul(f.index(binDim), bin));
          Value frac =
              f.mul(f.add(f.index(gridDim), f.c(0.5)), f.c(1.0 / ratio));
          return f.add(pos, f.mul(frac, bin));
        };
        Value y = sample(startH, binH, 2, 4), xx = sample(startW, binW, 3, 5);
        Value outside = arith::OrIOp::create(
            nb, l,
            arith::OrIOp::create(nb, l, f.lt(y, f.c(-1)), f.lt(f.c(height), y)),
            arith::OrIOp::create(nb, l, f.lt(xx, f.c(-1)),
                                 f.lt(f.c(width), xx)));
        // The corners of one dim: low, high and the weight of high, with
        // positions at or past the last pixel clamped to it.
        auto corners = [&](Value v, int64_t size) {
          v = arith::MinNumFOp::create(
              nb, l, arith::MaxNumFOp::create(nb, l, v, f.c(0)), f.c(size - 1));
          Value low = f.floor(v);
          Value high = arith::MinNumFOp::create(nb, l, f.add(low, f.c(1)),
                                                f.c(size - 1));
          return std::array<Value, 3>{toIndex(nb, l, low), toIndex(nb, l, high),
                                      f.sub(v, low)};
        };
        auto [y0, y1, ly] = corners(y, height);
        auto [x0, x1, lx] = corners(xx, width);
        Value hy = f.sub(f.c(1), ly), hx = f.sub(f.c(1), lx);
        Value bi = arith::IndexCastOp::create(nb, l, index, in[1]);
        bi = arith::MinSIOp::create(
            nb, l,
            arith::MaxSIOp::create(nb, l, bi,
                                   arith::ConstantIndexOp::create(nb, l, 0)),
            arith::ConstantIndexOp::create(nb, l, batch - 1));
        auto tap = [&](Value yy, Value xi, Value w) {
          Value v =
              tensor::ExtractOp::create(nb, l, x, ValueRange{bi, ch, yy, xi});
          return f.mul(w, castScalar(nb, l, v, t, ct));
        };
        Value t1 = tap(y0, x0, f.mul(hy, hx)), t2 = tap(y0, x1, f.mul(hy, lx)),
              t3 = tap(y1, x0, f.mul(ly, hx)), t4 = tap(y1, x1, f.mul(ly, lx));
        if (isMax) {
          Value v = arith::MaximumFOp::create(
              nb, l, arith::MaximumFOp::create(nb, l, t1, t2),
              arith::MaximumFOp::create(nb, l, t3, t4));
          v = f.select(outside, f.c(0), v);
          return {arith::MaximumFOp::create(nb, l, out[0], v)};
        }
        Value v = f.add(f.add(t1, t2), f.add(t3, t4));
        v = f.select(outside, f.c(0), f.mul(v, f.c(1.0 / (ratio * ratio))));
        return {f.add(out[0], v)};
      })[0];
  if (ct == t)
    return rw.replace(sum);
  return rw.replace(
      buildBroadcastGeneric(b, loc, sum, outShape, t,
                            [&](OpBuilder &nb, Location l, ValueRange args) {
                              return castScalar(nb, l, args[0], ct, t);
                            }));
}

/// DeformConv (2-D): a convolution whose taps move by a learned offset per
/// output position, kernel position and offset group, sampled bilinearly
/// (zeros outside X) and scaled by an optional mask. Two kernels: the
/// sampled taps [N, C, kh, kw, out_h, out_w] (im2col with the offsets; the
/// offsets and mask are read through affine maps), then their contraction
/// with W per group, plus the bias.
LogicalResult convertDeformConv(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "W")) ||
      failed(requireFloatInput(rw, 2, "offset")))
    return failure();
  RankedTensorType xType = rw.inputType(0), wType = rw.inputType(1),
                   oType = rw.inputType(2);
  if (xType.getRank() != 4)
    return rw.unsupported("DeformConv on " + Twine(xType.getRank() - 2) +
                          " spatial dims (2 are)");
  if (wType.getRank() != 4 || oType.getRank() != 4)
    return rw.fail("W and offset must be 4-D like X");
  Type t = xType.getElementType();
  if (wType.getElementType() != t || oType.getElementType() != t)
    return rw.fail("X, W and offset must have the same element type");
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1),
          h = xType.getDimSize(2), w = xType.getDimSize(3);
  int64_t oc = wType.getDimSize(0), icpg = wType.getDimSize(1);
  SmallVector<int64_t> kernel =
      rw.getInts("kernel_shape", {wType.getDimSize(2), wType.getDimSize(3)});
  SmallVector<int64_t> dil = rw.getInts("dilations", {1, 1});
  SmallVector<int64_t> strides = rw.getInts("strides", {1, 1});
  SmallVector<int64_t> pads = rw.getInts("pads", {0, 0, 0, 0});
  int64_t group = rw.getInt("group", 1), og = rw.getInt("offset_group", 1);
  if (kernel.size() != 2 || dil.size() != 2 || strides.size() != 2 ||
      pads.size() != 4)
    return rw.fail("kernel_shape, dilations and strides need 2 values and "
                   "pads 4");
  if (kernel[0] != wType.getDimSize(2) || kernel[1] != wType.getDimSize(3))
    return rw.fail("kernel_shape differs from W's spatial dims");
  if (group < 1 || og < 1 || c != icpg * group || oc % group || c % og)
    return rw.fail("group " + Twine(group) + " and offset_group " + Twine(og) +
                   " do not divide X's " + Twine(c) + " channels and W's " +
                   Twine(oc) + " outputs (W has " + Twine(icpg) +
                   " inputs per group)");
  int64_t outH =
      (h + pads[0] + pads[2] - (dil[0] * (kernel[0] - 1) + 1)) / strides[0] + 1;
  int64_t outW =
      (w + pads[1] + pads[3] - (dil[1] * (kernel[1] - 1) + 1)) / strides[1] + 1;
  int64_t taps = kernel[0] * kernel[1];
  if (outH < 1 || outW < 1 || oType.getDimSize(0) != n ||
      oType.getDimSize(1) != og * taps * 2 || oType.getDimSize(2) != outH ||
      oType.getDimSize(3) != outW)
    return rw.fail("offset must have shape [" + Twine(n) + ", " +
                   Twine(og * taps * 2) + ", " + Twine(outH) + ", " +
                   Twine(outW) + "], not " + typeName(oType));
  if (rw.hasInput(3) && rw.inputType(3).getShape() != ArrayRef<int64_t>{oc})
    return rw.fail("B must have shape [" + Twine(oc) + "]");
  if (rw.hasInput(4) &&
      rw.inputType(4).getShape() != ArrayRef<int64_t>{n, og * taps, outH, outW})
    return rw.fail("mask must have shape [" + Twine(n) + ", " +
                   Twine(og * taps) + ", " + Twine(outH) + ", " + Twine(outW) +
                   "]");
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = b.getContext();
  Type ct = t.isF64() ? b.getF64Type() : b.getF32Type();
  SmallVector<int64_t> outShape = {n, oc, outH, outW};
  if (numElements(outShape) == 0)
    return rw.replace(createEmpty(b, loc, outShape, t));

  // Kernel 1: loops (n, c, i, j, oy, ox).
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  int64_t cpog = c / og;
  AffineExpr tap = d(2) * kernel[1] + d(3);
  AffineExpr offsetGroup = d(1).floorDiv(cpog);
  SmallVector<GenericOperand> ins = {
      {rw.input(2),
       AffineMap::get(
           6, 0, {d(0), offsetGroup * (2 * taps) + tap * 2, d(4), d(5)}, ctx)},
      {rw.input(2),
       AffineMap::get(
           6, 0, {d(0), offsetGroup * (2 * taps) + tap * 2 + 1, d(4), d(5)},
           ctx)}};
  if (rw.hasInput(4))
    ins.push_back(
        {rw.input(4),
         AffineMap::get(6, 0, {d(0), offsetGroup * taps + tap, d(4), d(5)},
                        ctx)});
  SmallVector<int64_t> colShape = {n, c, kernel[0], kernel[1], outH, outW};
  Value x = rw.input(0);
  Value columns = buildGeneric(
      b, loc, ins,
      {{createEmpty(b, loc, colShape, ct), b.getMultiDimIdentityMap(6)}},
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange in,
          ValueRange) -> SmallVector<Value> {
        FloatOps f{nb, l, ct};
        Type index = nb.getIndexType();
        Value bi = linalg::IndexOp::create(nb, l, index, 0);
        Value ch = linalg::IndexOp::create(nb, l, index, 1);
        // The sample position: the tap's place plus its offset.
        auto position = [&](int64_t dim, Value off) {
          Value base = f.add(f.mul(f.index(4 + dim), f.c(strides[dim])),
                             f.mul(f.index(2 + dim), f.c(dil[dim])));
          base = f.sub(base, f.c(pads[dim]));
          return f.add(base, castScalar(nb, l, off, t, ct));
        };
        Value py = position(0, in[0]), px = position(1, in[1]);
        // Far outside (or NaN) reads as just outside, so that the integer
        // conversions stay defined.
        auto bound = [&](Value v, int64_t size) {
          v = arith::MaxNumFOp::create(nb, l, v, f.c(-2));
          return arith::MinNumFOp::create(nb, l, v, f.c(size + 1)).getResult();
        };
        py = bound(py, h);
        px = bound(px, w);
        Value y0 = f.floor(py), x0 = f.floor(px);
        Value ly = f.sub(py, y0), lx = f.sub(px, x0);
        Value sum;
        for (int64_t dy = 0; dy < 2; ++dy)
          for (int64_t dx = 0; dx < 2; ++dx) {
            Value yy = f.add(y0, f.c(dy)), xi = f.add(x0, f.c(dx));
            Value inside = arith::AndIOp::create(
                nb, l,
                arith::AndIOp::create(
                    nb, l,
                    arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, yy,
                                          f.c(0)),
                    f.lt(yy, f.c(h))),
                arith::AndIOp::create(
                    nb, l,
                    arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, xi,
                                          f.c(0)),
                    f.lt(xi, f.c(w))));
            auto clampTo = [&](Value v, int64_t size) {
              v = arith::MaxNumFOp::create(nb, l, v, f.c(0));
              return toIndex(nb, l,
                             arith::MinNumFOp::create(nb, l, v, f.c(size - 1)));
            };
            Value v = tensor::ExtractOp::create(
                nb, l, x, ValueRange{bi, ch, clampTo(yy, h), clampTo(xi, w)});
            v = castScalar(nb, l, v, t, ct);
            Value wy = dy ? ly : f.sub(f.c(1), ly);
            Value wx = dx ? lx : f.sub(f.c(1), lx);
            Value term = f.select(inside, f.mul(f.mul(wy, wx), v), f.c(0));
            sum = sum ? f.add(sum, term) : term;
          }
        if (in.size() > 2)
          sum = f.mul(sum, castScalar(nb, l, in[2], t, ct));
        return {sum};
      })[0];

  // Kernel 2: loops (n, oc, oy, ox, ic in group, i, j).
  int64_t ocpg = oc / group;
  AffineExpr inChannel = d(1).floorDiv(ocpg) * icpg + d(4);
  SmallVector<GenericOperand> convIns = {
      {columns,
       AffineMap::get(7, 0, {d(0), inChannel, d(5), d(6), d(2), d(3)}, ctx)},
      {rw.input(1), AffineMap::get(7, 0, {d(1), d(4), d(5), d(6)}, ctx)}};
  Value init = createFilled(b, loc, outShape, ct, b.getZeroAttr(ct));
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value y = buildGeneric(
      b, loc, convIns,
      {{init, AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx)}}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange in,
          ValueRange out) -> SmallVector<Value> {
        FloatOps f{nb, l, ct};
        return {f.add(out[0], f.mul(in[0], castScalar(nb, l, in[1], t, ct)))};
      })[0];
  Value bias = rw.hasInput(3) ? rw.input(3) : Value();
  if (!bias && ct == t)
    return rw.replace(y);
  SmallVector<Value> operands = {y};
  if (bias)
    operands.push_back(reshapeTo(b, loc, bias, {1, oc, 1, 1}));
  return rw.replace(buildBroadcastGeneric(
      b, loc, operands, outShape, t,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = args[0];
        if (args.size() > 1)
          v = arith::AddFOp::create(nb, l, v,
                                    castScalar(nb, l, args[1], t, ct));
        return castScalar(nb, l, v, ct, t);
      }));
}

} // namespace

void dlc::populateResizeHandlers(HandlerRegistry &r) {
  r.add("Resize", {10, 11, 13, 18, 19}, convertResize);
  r.add("Upsample", {1, 7, 9, 10}, convertUpsample);
  r.add("GridSample", {16, 20, 22}, convertGridSample);
  r.add("RoiAlign", {10, 16, 22}, convertRoiAlign);
  r.add("DeformConv", {19, 22}, convertDeformConv);
  r.add("AffineGrid", {20}, convertAffineGrid);
}
