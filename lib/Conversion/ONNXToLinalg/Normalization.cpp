//===- Normalization.cpp - BatchNorm, LayerNorm and friends ---------------===//
//
// Statistics are two reduction generics (the mean, then the mean squared
// deviation, which is more accurate than E[x^2] - E[x]^2), a small generic
// that turns the variance into 1 / sqrt(var + eps), and one elementwise
// generic that normalizes, scales and shifts. f16/bf16 inputs compute in
// f32 and round once at the end. Inference-mode BatchNormalization is a
// per-channel x * a + b whose coefficients fold to constants when the
// statistics are constants.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace dlc;

namespace {

/// The type statistics are computed in: f32 unless the input is f64.
Type computeType(Type t) {
  if (t.isF64())
    return t;
  return Float32Type::get(t.getContext());
}

std::string str(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// A map from `numLoops` loops to the listed loop dims.
AffineMap dimsMap(MLIRContext *ctx, unsigned numLoops, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

/// The loop dims not marked in `reduced`.
SmallVector<int64_t> keptDims(ArrayRef<bool> reduced) {
  SmallVector<int64_t> dims;
  for (auto [i, r] : llvm::enumerate(reduced))
    if (!r)
      dims.push_back(i);
  return dims;
}

/// The numpy-broadcast map of an operand of `shape` into loops of
/// `loopShape` (right-aligned; size-1 dims read index 0).
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> loopShape) {
  int64_t offset = loopShape.size() - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(shape))
    exprs.push_back(d == 1 && loopShape[offset + i] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(offset + i, ctx));
  return AffineMap::get(loopShape.size(), 0, exprs, ctx);
}

/// One linalg.generic over loops of `loopShape` whose output has the dims
/// not in `reduced`; parallel when nothing is reduced. The body gets the
/// operands' elements and, last, the output element.
Value buildGeneric(
    OpBuilder &b, Location loc, ValueRange operands, ArrayRef<AffineMap> maps,
    ArrayRef<int64_t> loopShape, ArrayRef<bool> reduced, Type outType,
    Value init, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned numLoops = loopShape.size();
  SmallVector<int64_t> kept = keptDims(reduced);
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(dimsMap(b.getContext(), numLoops, kept));
  if (!init) {
    SmallVector<int64_t> outShape;
    for (int64_t d : kept)
      outShape.push_back(loopShape[d]);
    init = createEmpty(b, loc, outShape, outType);
  }
  SmallVector<utils::IteratorType> iterators;
  for (bool r : reduced)
    iterators.push_back(r ? utils::IteratorType::reduction
                          : utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), operands, init, allMaps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

/// Mean and 1 / sqrt(var + eps) of `x` over the `reduced` dims, in `ct`;
/// both have the kept dims. `invStdFn` overrides how the inverse standard
/// deviation is formed from the variance.
struct Moments {
  Value mean, invStd;
};
Moments buildMoments(
    OpBuilder &b, Location loc, Value x, Type xOnnxType, ArrayRef<bool> reduced,
    Type ct, double epsilon,
    function_ref<Value(OpBuilder &, Location, Value)> invStdFn = nullptr) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = xType.getShape();
  unsigned rank = shape.size();
  SmallVector<int64_t> kept = keptDims(reduced), statShape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      count *= shape[d];
  for (int64_t d : kept)
    statShape.push_back(shape[d]);
  SmallVector<bool> none(statShape.size(), false);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap statMap = dimsMap(ctx, rank, kept);
  AffineMap statIdentity = b.getMultiDimIdentityMap(statShape.size());
  Value zeros = createFilled(b, loc, statShape, ct, scalarAttr(ct, 0));

  Value sum =
      buildGeneric(b, loc, x, identity, shape, reduced, ct, zeros,
                   [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Value v = castScalar(nb, nloc, a[0], xOnnxType, ct);
                     return arith::AddFOp::create(nb, nloc, a[1], v);
                   });
  Value mean =
      buildGeneric(b, loc, sum, statIdentity, statShape, none, ct, Value(),
                   [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     return arith::DivFOp::create(
                         nb, nloc, a[0], scalarConstant(nb, nloc, ct, count));
                   });
  Value squares = buildGeneric(
      b, loc, {x, mean}, {identity, statMap}, shape, reduced, ct, zeros,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value v = castScalar(nb, nloc, a[0], xOnnxType, ct);
        Value d = arith::SubFOp::create(nb, nloc, v, a[1]);
        return arith::AddFOp::create(nb, nloc, a[2],
                                     arith::MulFOp::create(nb, nloc, d, d));
      });
  Value invStd =
      buildGeneric(b, loc, squares, statIdentity, statShape, none, ct, Value(),
                   [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Value var = arith::DivFOp::create(
                         nb, nloc, a[0], scalarConstant(nb, nloc, ct, count));
                     if (invStdFn)
                       return invStdFn(nb, nloc, var);
                     Value e = arith::AddFOp::create(
                         nb, nloc, var, scalarConstant(nb, nloc, ct, epsilon));
                     return math::RsqrtOp::create(nb, nloc, e);
                   });
  return {mean, invStd};
}

/// An affine operand of the final normalization: the value, its map into
/// the loops of X, and its ONNX element type.
struct Affine {
  Value value;
  AffineMap map;
  Type onnxType;
};

/// Input `i` as an operand that broadcasts to X's `shape` (numpy rules, and
/// it must not grow X).
FailureOr<Affine> broadcastOperand(NodeRewriter &rw, unsigned i, StringRef name,
                                   ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> s = rw.inputType(i).getShape();
  std::string error;
  FailureOr<SmallVector<int64_t>> out = broadcastShapes(
      {SmallVector<int64_t>(s), SmallVector<int64_t>(shape)}, error);
  if (failed(out) || ArrayRef<int64_t>(*out) != shape)
    return rw.fail(name + " " + str(s) + " does not broadcast to X " +
                   str(shape));
  return Affine{rw.input(i), broadcastMap(rw.ctx(), s, shape),
                rw.onnxElementType(i)};
}

/// y = (x - mean) * invStd [* scale] [+ bias], rounded to `t`.
Value normalize(OpBuilder &b, Location loc, Value x, Type xOnnxType, Moments m,
                AffineMap statMap, std::optional<Affine> scale,
                std::optional<Affine> bias, Type ct, Type t) {
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned rank = xType.getRank();
  SmallVector<Value> operands = {x, m.mean, m.invStd};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), statMap,
                                 statMap};
  if (scale) {
    operands.push_back(scale->value);
    maps.push_back(scale->map);
  }
  if (bias) {
    operands.push_back(bias->value);
    maps.push_back(bias->map);
  }
  SmallVector<bool> none(rank, false);
  return buildGeneric(
      b, loc, operands, maps, xType.getShape(), none, t, Value(),
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value v = castScalar(nb, nloc, a[0], xOnnxType, ct);
        v = arith::MulFOp::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, v, a[1]), a[2]);
        unsigned next = 3;
        if (scale)
          v = arith::MulFOp::create(
              nb, nloc, v,
              castScalar(nb, nloc, a[next++], scale->onnxType, ct));
        if (bias)
          v = arith::AddFOp::create(
              nb, nloc, v, castScalar(nb, nloc, a[next], bias->onnxType, ct));
        return castScalar(nb, nloc, v, ct, t);
      });
}

/// Checks that input `i` has exactly `shape`.
LogicalResult requireShape(NodeRewriter &rw, unsigned i, StringRef name,
                           ArrayRef<int64_t> shape, StringRef why) {
  if (rw.inputType(i).getShape() == shape)
    return success();
  return rw.fail(name + " must have shape " + str(shape) + " (" + why +
                 "); it is " + str(rw.inputType(i).getShape()));
}

LogicalResult requireStashFloat(NodeRewriter &rw) {
  int64_t stash = rw.getInt("stash_type", 1);
  if (stash != 1)
    return rw.unsupported("stash_type " + Twine(stash) +
                          " (only 1, float32, is implemented)");
  return success();
}

//===--- BatchNormalization -----------------------------------------------===//

LogicalResult convertBatchNormalization(NodeRewriter &rw) {
  static const char *names[] = {"X", "scale", "B", "mean", "var"};
  for (unsigned i = 0; i < 5; ++i)
    if (failed(requireFloatInput(rw, i, names[i])))
      return failure();
  auto outputs = rw.getOp().getOutputs();
  if (rw.version() < 7) {
    if (rw.getInt("is_test", 0) == 0)
      return rw.unsupported("training mode (is_test=0); dlc compiles "
                            "inference graphs");
  } else if (rw.version() < 14) {
    // The optional outputs select training mode before opset 14.
    for (unsigned i = 1; i < outputs.size(); ++i)
      if (!isa<NoneType>(outputs[i].getType()))
        return rw.unsupported("training mode (the node has the optional "
                              "running/saved statistics outputs)");
  } else if (rw.getInt("training_mode", 0) != 0) {
    return rw.unsupported("training_mode=1; dlc compiles inference graphs");
  }

  auto xType = rw.inputType(0);
  if (xType.getRank() < 2)
    return rw.fail("X must have rank 2 or more (N, C, ...); it is " +
                   str(xType.getShape()));
  int64_t c = xType.getDimSize(1);
  // Before opset 9, spatial=0 gives one statistic per activation (C, D...).
  SmallVector<int64_t> paramShape = {c};
  bool perActivation = rw.version() < 9 && rw.getInt("spatial", 1) == 0;
  if (perActivation)
    paramShape.assign(xType.getShape().begin() + 1, xType.getShape().end());
  for (unsigned i = 1; i < 5; ++i) {
    ArrayRef<int64_t> shape = rw.inputType(i).getShape();
    // A per-channel vector is also accepted under spatial=0 (the
    // statistics are then the same for every position).
    if (shape != ArrayRef<int64_t>(paramShape) &&
        !(perActivation && shape == ArrayRef<int64_t>{c}))
      return rw.fail(Twine(names[i]) + " must have shape " + str(paramShape) +
                     "; it is " + str(shape));
  }

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  unsigned rank = xType.getRank();
  SmallVector<Value> params;
  for (unsigned i = 1; i < 5; ++i) {
    Value v = rw.input(i);
    // Per-channel vectors next to per-activation ones broadcast as (C, 1...).
    if (perActivation && rank > 2 && rw.inputType(i).getRank() == 1) {
      SmallVector<int64_t> s(rank - 1, 1);
      s[0] = c;
      v = reshapeTo(b, loc, v, s);
    }
    params.push_back(v);
  }
  Type t = xType.getElementType(), ct = computeType(t);
  double epsilon = rw.getFloat("epsilon", 1e-5f);
  Type scaleT = rw.onnxElementType(1), biasT = rw.onnxElementType(2),
       meanT = rw.onnxElementType(3), varT = rw.onnxElementType(4);
  // a = scale / sqrt(var + eps) and c = B - mean * a, folded when constant.
  FailureOr<Value> a = buildElementwise(
      rw, {params[0], params[3]}, ct,
      [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
        Value var = castScalar(nb, nloc, v[1], varT, ct);
        Value e = nb.createOrFold<arith::AddFOp>(
            nloc, var, scalarConstant(nb, nloc, ct, epsilon));
        Value s = nb.createOrFold<math::SqrtOp>(nloc, e);
        return nb.createOrFold<arith::DivFOp>(
            nloc, castScalar(nb, nloc, v[0], scaleT, ct), s);
      });
  if (failed(a))
    return failure();
  FailureOr<Value> shift = buildElementwise(
      rw, {params[1], params[2], *a}, ct,
      [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
        Value m = nb.createOrFold<arith::MulFOp>(
            nloc, castScalar(nb, nloc, v[1], meanT, ct), v[2]);
        return nb.createOrFold<arith::SubFOp>(
            nloc, castScalar(nb, nloc, v[0], biasT, ct), m);
      });
  if (failed(shift))
    return failure();

  MLIRContext *ctx = rw.ctx();
  auto paramMap = [&](Value v) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    if (!perActivation)
      return dimsMap(ctx, rank, {1});
    return broadcastMap(ctx, shape, xType.getShape());
  };
  Type xOnnx = rw.onnxElementType(0);
  SmallVector<bool> none(rank, false);
  Value y = buildGeneric(
      b, loc, {rw.input(0), *a, *shift},
      {b.getMultiDimIdentityMap(rank), paramMap(*a), paramMap(*shift)},
      xType.getShape(), none, t, Value(),
      [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
        Value x = castScalar(nb, nloc, v[0], xOnnx, ct);
        Value r = arith::AddFOp::create(
            nb, nloc, arith::MulFOp::create(nb, nloc, x, v[1]), v[2]);
        return castScalar(nb, nloc, r, ct, t);
      });
  return rw.replace(y);
}

//===--- InstanceNormalization --------------------------------------------===//

LogicalResult convertInstanceNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "input")) ||
      failed(requireFloatInput(rw, 1, "scale")) ||
      failed(requireFloatInput(rw, 2, "B")))
    return failure();
  auto xType = rw.inputType(0);
  unsigned rank = xType.getRank();
  if (rank < 3)
    return rw.fail("input must have rank 3 or more (N, C, D1, ...); it is " +
                   str(xType.getShape()));
  int64_t c = xType.getDimSize(1);
  if (failed(requireShape(rw, 1, "scale", {c}, "one per channel")) ||
      failed(requireShape(rw, 2, "B", {c}, "one per channel")))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType(), ct = computeType(t);
  SmallVector<bool> reduced(rank, true);
  reduced[0] = reduced[1] = false;
  Moments m = buildMoments(b, loc, rw.input(0), rw.onnxElementType(0), reduced,
                           ct, rw.getFloat("epsilon", 1e-5f));
  MLIRContext *ctx = rw.ctx();
  AffineMap channel = dimsMap(ctx, rank, {1});
  Value y = normalize(
      b, loc, rw.input(0), rw.onnxElementType(0), m, dimsMap(ctx, rank, {0, 1}),
      Affine{rw.input(1), channel, rw.onnxElementType(1)},
      Affine{rw.input(2), channel, rw.onnxElementType(2)}, ct, t);
  return rw.replace(y);
}

//===--- LayerNormalization -----------------------------------------------===//

LogicalResult convertLayerNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "Scale")) ||
      (rw.hasInput(2) && failed(requireFloatInput(rw, 2, "B"))) ||
      failed(requireStashFloat(rw)))
    return failure();
  auto xType = rw.inputType(0);
  ArrayRef<int64_t> shape = xType.getShape();
  unsigned rank = shape.size();
  if (rank == 0)
    return rw.fail("X must have rank 1 or more");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  MLIRContext *ctx = rw.ctx();
  FailureOr<Affine> scale = broadcastOperand(rw, 1, "Scale", shape);
  if (failed(scale))
    return failure();
  std::optional<Affine> bias;
  if (rw.hasInput(2)) {
    FailureOr<Affine> b = broadcastOperand(rw, 2, "B", shape);
    if (failed(b))
      return failure();
    bias = *b;
  }

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType(), ct = computeType(t);
  SmallVector<bool> reduced(rank, false);
  SmallVector<int64_t> kept;
  for (unsigned d = 0; d < rank; ++d) {
    reduced[d] = d >= *axis;
    if (!reduced[d])
      kept.push_back(d);
  }
  Moments m = buildMoments(b, loc, rw.input(0), rw.onnxElementType(0), reduced,
                           ct, rw.getFloat("epsilon", 1e-5f));
  Value y = normalize(b, loc, rw.input(0), rw.onnxElementType(0), m,
                      dimsMap(ctx, rank, kept), *scale, bias, ct, t);

  // Mean and InvStdDev keep the reduced dims as 1s, in the stash type.
  SmallVector<Value> results = {y};
  auto outputs = rw.getOp().getOutputs();
  SmallVector<int64_t> statShape(shape.begin(), shape.begin() + *axis);
  statShape.append(rank - *axis, 1);
  Type stash = Float32Type::get(ctx);
  for (unsigned i = 1; i < outputs.size() && i < 3; ++i) {
    Value stat = i == 1 ? m.mean : m.invStd;
    if (ct != stash) {
      auto type = cast<RankedTensorType>(stat.getType());
      stat = buildBroadcastGeneric(
          b, loc, stat, type.getShape(), stash,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            return castScalar(nb, nloc, a[0], ct, stash);
          });
    }
    results.push_back(reshapeTo(b, loc, stat, statShape));
  }
  return rw.replace(results);
}

//===--- RMSNormalization -------------------------------------------------===//

/// y = x / sqrt(mean(x^2 over the dims from `axis` on) + epsilon) * scale:
/// a sum of squares, its inverse root, one elementwise generic.
LogicalResult convertRMSNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "scale")) ||
      failed(requireStashFloat(rw)))
    return failure();
  auto xType = rw.inputType(0);
  ArrayRef<int64_t> shape = xType.getShape();
  unsigned rank = shape.size();
  if (rank == 0)
    return rw.fail("X must have rank 1 or more");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  FailureOr<Affine> scale = broadcastOperand(rw, 1, "scale", shape);
  if (failed(scale))
    return failure();

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type t = xType.getElementType(), ct = computeType(t);
  Type xOnnxType = rw.onnxElementType(0);
  SmallVector<bool> reduced(rank, false);
  SmallVector<int64_t> kept, statShape;
  int64_t count = 1;
  for (unsigned d = 0; d < rank; ++d) {
    reduced[d] = d >= *axis;
    if (reduced[d]) {
      count *= shape[d];
    } else {
      kept.push_back(d);
      statShape.push_back(shape[d]);
    }
  }
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap statMap = dimsMap(ctx, rank, kept);
  SmallVector<bool> none(statShape.size(), false);
  Value squares =
      buildGeneric(b, loc, rw.input(0), identity, shape, reduced, ct,
                   createFilled(b, loc, statShape, ct, scalarAttr(ct, 0)),
                   [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Value v = castScalar(nb, nloc, a[0], xOnnxType, ct);
                     return arith::AddFOp::create(
                         nb, nloc, a[1], arith::MulFOp::create(nb, nloc, v, v));
                   });
  float epsilon = rw.getFloat("epsilon", 1e-5f);
  Value invRms = buildGeneric(
      b, loc, squares, b.getMultiDimIdentityMap(statShape.size()), statShape,
      none, ct, Value(),
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value meanSquare = arith::DivFOp::create(
            nb, nloc, a[0], scalarConstant(nb, nloc, ct, count));
        return math::RsqrtOp::create(
            nb, nloc,
            arith::AddFOp::create(nb, nloc, meanSquare,
                                  scalarConstant(nb, nloc, ct, epsilon)));
      });
  Value y = buildGeneric(
      b, loc, {rw.input(0), invRms, scale->value},
      {identity, statMap, scale->map}, shape, SmallVector<bool>(rank, false), t,
      Value(), [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value v = castScalar(nb, nloc, a[0], xOnnxType, ct);
        v = arith::MulFOp::create(nb, nloc, v, a[1]);
        v = arith::MulFOp::create(
            nb, nloc, v, castScalar(nb, nloc, a[2], scale->onnxType, ct));
        return castScalar(nb, nloc, v, ct, t);
      });
  return rw.replace(y);
}

//===--- GroupNormalization -----------------------------------------------===//

LogicalResult convertGroupNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")) ||
      failed(requireFloatInput(rw, 1, "scale")) ||
      failed(requireFloatInput(rw, 2, "bias")) || failed(requireStashFloat(rw)))
    return failure();
  std::optional<int64_t> groups = rw.getOptionalInt("num_groups");
  if (!groups)
    return rw.fail("missing required attribute 'num_groups'");
  auto xType = rw.inputType(0);
  ArrayRef<int64_t> shape = xType.getShape();
  unsigned rank = shape.size();
  if (rank < 2)
    return rw.fail("X must have rank 2 or more (N, C, ...); it is " +
                   str(shape));
  int64_t n = shape[0], c = shape[1], g = *groups;
  if (g < 1 || c % g != 0)
    return rw.fail("num_groups=" + Twine(g) +
                   " must be positive and divide "
                   "the " +
                   Twine(c) + " channels");
  // Opset 18 scales per group; opset 21 per channel.
  bool perGroup = rw.version() < 21;
  int64_t paramSize = perGroup ? g : c;
  StringRef why = perGroup ? "one per group before opset 21"
                           : "one per channel since opset 21";
  if (failed(requireShape(rw, 1, "scale", {paramSize}, why)) ||
      failed(requireShape(rw, 2, "bias", {paramSize}, why)))
    return failure();

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type t = xType.getElementType(), ct = computeType(t);
  // Loops over (N, G, C / G, D...).
  SmallVector<int64_t> grouped = {n, g, c / g};
  grouped.append(shape.begin() + 2, shape.end());
  unsigned loops = grouped.size();
  Value x = reshapeTo(b, loc, rw.input(0), grouped);
  SmallVector<bool> reduced(loops, true);
  reduced[0] = reduced[1] = false;
  Moments m = buildMoments(b, loc, x, rw.onnxElementType(0), reduced, ct,
                           rw.getFloat("epsilon", 1e-5f));
  auto param = [&](unsigned i) {
    if (perGroup)
      return Affine{rw.input(i), dimsMap(ctx, loops, {1}),
                    rw.onnxElementType(i)};
    return Affine{reshapeTo(b, loc, rw.input(i), {g, c / g}),
                  dimsMap(ctx, loops, {1, 2}), rw.onnxElementType(i)};
  };
  Value y = normalize(b, loc, x, rw.onnxElementType(0), m,
                      dimsMap(ctx, loops, {0, 1}), param(1), param(2), ct, t);
  return rw.replace(reshapeTo(b, loc, y, shape));
}

//===--- LpNormalization --------------------------------------------------===//

LogicalResult convertLpNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "input")))
    return failure();
  auto xType = rw.inputType(0);
  unsigned rank = xType.getRank();
  if (rank == 0)
    return rw.fail("input must have rank 1 or more");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  int64_t p = rw.getInt("p", 2);
  if (p != 1 && p != 2)
    return rw.fail("p must be 1 or 2; it is " + Twine(p));

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type t = xType.getElementType(), ct = computeType(t);
  Type xOnnx = rw.onnxElementType(0);
  SmallVector<bool> reduced(rank, false);
  reduced[*axis] = true;
  SmallVector<int64_t> kept = keptDims(reduced), statShape;
  for (int64_t d : kept)
    statShape.push_back(xType.getDimSize(d));
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Value zeros = createFilled(b, loc, statShape, ct, scalarAttr(ct, 0));
  Value sum = buildGeneric(
      b, loc, rw.input(0), identity, xType.getShape(), reduced, ct, zeros,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value v = castScalar(nb, nloc, a[0], xOnnx, ct);
        Value term = p == 1 ? math::AbsFOp::create(nb, nloc, v).getResult()
                            : arith::MulFOp::create(nb, nloc, v, v).getResult();
        return arith::AddFOp::create(nb, nloc, a[1], term);
      });
  SmallVector<bool> none(rank, false);
  Value y = buildGeneric(
      b, loc, {rw.input(0), sum}, {identity, dimsMap(ctx, rank, kept)},
      xType.getShape(), none, t, Value(),
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value norm =
            p == 1 ? a[1] : math::SqrtOp::create(nb, nloc, a[1]).getResult();
        // An all-zero slice stays zero (as in onnxruntime), not NaN.
        Value zero = scalarConstant(nb, nloc, ct, 0);
        Value isZero = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OEQ, norm, zero);
        norm = arith::SelectOp::create(nb, nloc, isZero,
                                       scalarConstant(nb, nloc, ct, 1), norm);
        Value v = arith::DivFOp::create(
            nb, nloc, castScalar(nb, nloc, a[0], xOnnx, ct), norm);
        return castScalar(nb, nloc, v, ct, t);
      });
  return rw.replace(y);
}

//===--- LRN --------------------------------------------------------------===//

/// Local response normalization across channels: each element divided by
/// (bias + alpha / size * the sum of squares over a window of `size`
/// channels around it)^beta; the window is zero-padded at the ends.
LogicalResult convertLRN(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")))
    return failure();
  auto xType = rw.inputType(0);
  int64_t rank = xType.getRank();
  if (rank < 3)
    return rw.fail("X must have rank 3 or more ([N, C, D1, ...]), not " +
                   Twine(rank));
  std::optional<int64_t> size = rw.getOptionalInt("size");
  if (!size || *size < 1)
    return rw.fail("attribute 'size' must be a positive integer");
  double alpha = rw.getFloat("alpha", 1e-4f), beta = rw.getFloat("beta", 0.75f);
  double bias = rw.getFloat("bias", 1.0f);
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type t = xType.getElementType(), ct = computeType(t);
  Type xOnnx = rw.onnxElementType(0);
  ArrayRef<int64_t> shape = xType.getShape();
  // Squares, padded along C by the window's reach on each side.
  int64_t before = (*size - 1) / 2, after = *size - 1 - before;
  SmallVector<bool> none(rank, false);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Value squares =
      buildGeneric(b, loc, rw.input(0), identity, shape, none, ct, Value(),
                   [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Value v = castScalar(nb, nloc, a[0], xOnnx, ct);
                     return arith::MulFOp::create(nb, nloc, v, v);
                   });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = before;
  high[1] = after;
  squares = padWithValue(b, loc, squares, low, high, scalarAttr(ct, 0));
  // Loops: X's dims, then the window; squares read at channel c + w.
  SmallVector<int64_t> loopShape(shape);
  loopShape.push_back(*size);
  SmallVector<AffineExpr> window;
  for (int64_t d = 0; d < rank; ++d)
    window.push_back(d == 1 ? getAffineDimExpr(1, ctx) +
                                  getAffineDimExpr(rank, ctx)
                            : getAffineDimExpr(d, ctx));
  SmallVector<bool> reduced(rank + 1, false);
  reduced[rank] = true;
  Value zeros = createFilled(b, loc, shape, ct, scalarAttr(ct, 0));
  // The window's extent comes from an operand of its size (linalg derives
  // loop bounds from operand shapes).
  Value extent = createEmpty(b, loc, {*size}, ct);
  Value sums = buildGeneric(
      b, loc, {squares, extent},
      {AffineMap::get(rank + 1, 0, window, ctx), dimsMap(ctx, rank + 1, rank)},
      loopShape, reduced, ct, zeros,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, nloc, a[2], a[0]);
      });
  Value y = buildGeneric(
      b, loc, {rw.input(0), sums}, {identity, identity}, shape, none, t,
      Value(), [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        Value scaled = arith::MulFOp::create(
            nb, nloc, a[1], scalarConstant(nb, nloc, ct, alpha / *size));
        Value base = arith::AddFOp::create(nb, nloc, scaled,
                                           scalarConstant(nb, nloc, ct, bias));
        Value denom = math::PowFOp::create(nb, nloc, base,
                                           scalarConstant(nb, nloc, ct, beta));
        Value v = arith::DivFOp::create(
            nb, nloc, castScalar(nb, nloc, a[0], xOnnx, ct), denom);
        return castScalar(nb, nloc, v, ct, t);
      });
  return rw.replace(y);
}

//===--- MeanVarianceNormalization ----------------------------------------===//

LogicalResult convertMeanVarianceNormalization(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")))
    return failure();
  auto xType = rw.inputType(0);
  unsigned rank = xType.getRank();
  if (rank == 0)
    return rw.fail("X must have rank 1 or more");
  SmallVector<int64_t> axes = rw.getInts("axes", {0, 2, 3});
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    FailureOr<int64_t> axis = rw.normalizeAxis(a, rank, "axes entry");
    if (failed(axis))
      return failure();
    if (reduced[*axis])
      return rw.fail("axes has a repeated entry " + Twine(a));
    reduced[*axis] = true;
  }
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = xType.getElementType(), ct = computeType(t);
  // The ONNX function divides by sqrt(var) + 1e-9, not sqrt(var + eps).
  Moments m = buildMoments(
      b, loc, rw.input(0), rw.onnxElementType(0), reduced, ct, 0.0,
      [&](OpBuilder &nb, Location nloc, Value var) -> Value {
        Value s =
            arith::AddFOp::create(nb, nloc, math::SqrtOp::create(nb, nloc, var),
                                  scalarConstant(nb, nloc, ct, 1e-9));
        return arith::DivFOp::create(nb, nloc, scalarConstant(nb, nloc, ct, 1),
                                     s);
      });
  Value y = normalize(b, loc, rw.input(0), rw.onnxElementType(0), m,
                      dimsMap(rw.ctx(), rank, keptDims(reduced)), std::nullopt,
                      std::nullopt, ct, t);
  return rw.replace(y);
}

} // namespace

void dlc::populateNormalizationHandlers(HandlerRegistry &r) {
  r.add("BatchNormalization", {1, 6, 7, 9, 14, 15}, convertBatchNormalization);
  r.add("InstanceNormalization", {1, 6, 22}, convertInstanceNormalization);
  r.add("LayerNormalization", {17}, convertLayerNormalization);
  r.add("RMSNormalization", {23}, convertRMSNormalization);
  r.add("GroupNormalization", {18, 21}, convertGroupNormalization);
  r.add("LpNormalization", {1, 22}, convertLpNormalization);
  r.add("MeanVarianceNormalization", {9, 13}, convertMeanVarianceNormalization);
  r.add("LRN", {1, 13}, convertLRN);
}
