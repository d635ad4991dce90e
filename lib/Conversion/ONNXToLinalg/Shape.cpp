//===- Shape.cpp - reshapes, slices, gathers, pads, shape computations ----===//
//
// Data movement and the small ops exporters chain into shape subgraphs
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape,
// Range). Every op here folds to an arith.constant when its inputs are
// constants (up to kFoldLimit elements, splats of any size), so those chains
// disappear at compile time and later nodes read their shape inputs with
// constantInts.
//
// Gathers with run-time indices become a linalg.generic that reads the source
// with tensor.extract. ONNX leaves out-of-range indices undefined; the index
// is wrapped (negative values count from the end) and clamped into range so
// that generated code never reads outside the source buffer.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc;

namespace {

/// Largest non-splat result that folding materializes as an attribute.
constexpr int64_t kFoldLimit = 4096;
/// Largest Range output (always a constant).
constexpr int64_t kRangeLimit = int64_t(1) << 24;

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

std::string typeStr(Type t) { return llvm::formatv("{0}", t).str(); }

/// Dims, pads and repeats come from the model; results beyond the bound
/// every imported shape is within are rejected before any arithmetic on
/// them can overflow.
constexpr int64_t kMaxElements = onnx::kMaxTensorElements;

LogicalResult checkShapeSize(NodeRewriter &rw, ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxElements || (d != 0 && n > kMaxElements / d))
      return rw.fail("the result shape " + shapeStr(shape) + " is too large");
    n *= d;
  }
  return success();
}

int64_t flatIndex(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (auto [i, d] : llvm::zip(index, shape))
    flat = flat * d + i;
  return flat;
}

/// Where one output element of a folded data-movement op comes from: element
/// `flat` of constant input `input`, or the fill value when `input` is -1.
struct Source {
  int input;
  int64_t flat;
};
using SourceFn = llvm::function_ref<Source(ArrayRef<int64_t>)>;

/// Folds a data-movement op whose inputs are all constants. Returns null when
/// the result is not a splat and has more than kFoldLimit elements.
Value foldCopy(OpBuilder &b, Location loc, ArrayRef<DenseElementsAttr> inputs,
               RankedTensorType type, SourceFn source, Attribute fill = {}) {
  Attribute splat = fill;
  bool allSplat = true;
  for (DenseElementsAttr c : inputs) {
    if (c.getNumElements() == 0)
      continue;
    if (!c.isSplat()) {
      allSplat = false;
      break;
    }
    Attribute v = c.getSplatValue<Attribute>();
    if (splat && splat != v)
      allSplat = false;
    splat = v;
  }
  if (type.getNumElements() == 0)
    return createConstant(b, loc,
                          DenseElementsAttr::get(type, ArrayRef<Attribute>()));
  if (allSplat && splat)
    return createConstant(b, loc, DenseElementsAttr::get(type, splat));
  if (type.getNumElements() > kFoldLimit)
    return {};
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr c : inputs)
    values.emplace_back(
        c.isSplat() && c.getNumElements() > 0
            ? SmallVector<Attribute>{c.getSplatValue<Attribute>()}
            : SmallVector<Attribute>(c.getValues<Attribute>()));
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<Attribute> out;
  out.reserve(type.getNumElements());
  for (int64_t linear = 0, e = type.getNumElements(); linear < e; ++linear) {
    int64_t rem = linear;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      index[d] = rem % shape[d];
      rem /= shape[d];
    }
    Source s = source(index);
    if (s.input < 0) {
      out.push_back(fill);
      continue;
    }
    const SmallVector<Attribute> &v = values[s.input];
    out.push_back(v.size() == 1 ? v[0] : v[s.flat]);
  }
  return createConstant(b, loc, DenseElementsAttr::get(type, out));
}

/// The dense constants behind inputs `ids`, or an empty vector when one of
/// them is not a constant.
SmallVector<DenseElementsAttr> constantInputs(NodeRewriter &rw,
                                              ArrayRef<unsigned> ids) {
  SmallVector<DenseElementsAttr> out;
  for (unsigned i : ids) {
    DenseElementsAttr c =
        rw.hasInput(i) ? getDenseConstant(rw.input(i)) : DenseElementsAttr();
    if (!c)
      return {};
    out.push_back(c);
  }
  return out;
}

/// Replaces the node with a data-movement result: the ONNX element type
/// (signedness) is that of input `from`.
LogicalResult replaceLike(NodeRewriter &rw, Value v, unsigned from = 0) {
  return rw.replace(v, rw.onnxElementType(from));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value loopIndex(OpBuilder &b, Location loc, int64_t dim) {
  return linalg::IndexOp::create(b, loc, b.getIndexType(), dim);
}

/// Checks that input `i` holds integer indices (int32 or int64).
LogicalResult requireIndices(NodeRewriter &rw, unsigned i) {
  Type t = rw.inputType(i).getElementType();
  if (isa<IntegerType>(t) && !t.isInteger(1))
    return success();
  return rw.fail("indices must be int32 or int64, not " +
                 typeStr(rw.onnxElementType(i)));
}

/// Checks that every index of a constant is within [-dim, dim - 1].
LogicalResult checkIndexRange(NodeRewriter &rw, ArrayRef<int64_t> indices,
                              int64_t dim, const Twine &what) {
  for (int64_t v : indices)
    if (v < -dim || v >= dim)
      return rw.fail("index " + Twine(v) + " is out of range for " + what +
                     " of size " + Twine(dim));
  return success();
}

/// Normalizes a list of distinct axes against `rank`. Unlike a single axis
/// (which may name dim 0 of a scalar), a list names dims that exist.
FailureOr<SmallVector<int64_t>>
normalizeAxes(NodeRewriter &rw, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    if (rank == 0)
      return rw.fail("axis " + Twine(a) + " is out of range for rank 0");
    FailureOr<int64_t> n = rw.normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    if (llvm::is_contained(out, *n))
      return rw.fail("axis " + Twine(a) + " is repeated");
    out.push_back(*n);
  }
  return out;
}

/// A result with no elements; nothing needs to be computed.
LogicalResult replaceWithEmpty(NodeRewriter &rw, ArrayRef<int64_t> shape,
                               unsigned from = 0) {
  Type t = rw.inputType(from).getElementType();
  return replaceLike(rw, createEmpty(rw.b(), rw.loc(), shape, t), from);
}

/// A parallel linalg.generic over `outShape` that reads `inputs` through
/// `inputMaps`; the body may read other tensors with tensor.extract.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                   ArrayRef<AffineMap> inputMaps, ArrayRef<int64_t> outShape,
                   Type elementType, ScalarBodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(outShape.size()));
  Value init = createEmpty(b, loc, outShape, elementType);
  SmallVector<utils::IteratorType> iterators(outShape.size(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

/// A 1-D i64 constant tensor (index tables for generics).
Value indexTable(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.getI64Type());
  return createConstant(b, loc, DenseElementsAttr::get(type, values));
}

//===--- reshapes ---------------------------------------------------------===//

LogicalResult convertReshape(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  SmallVector<int64_t> target;
  if (rw.version() < 5) {
    if (!rw.hasAttr("shape"))
      return rw.fail("missing required attribute 'shape'");
    target = rw.getInts("shape");
  } else {
    FailureOr<SmallVector<int64_t>> s = rw.constantInts(1, "shape");
    if (failed(s))
      return failure();
    target = *s;
  }
  bool allowZero = rw.version() >= 14 && rw.getInt("allowzero", 0) != 0;
  auto inType = rw.inputType(0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  bool hasZero = false;
  for (auto [i, v] : llvm::enumerate(target)) {
    if (v > kMaxElements)
      return rw.fail("shape " + shapeStr(target) + " is too large");
    if (v == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= inType.getRank())
        return rw.fail("shape entry " + Twine(i) +
                       " is 0 (copy the input dim) but the input has rank " +
                       Twine(inType.getRank()));
      v = inType.getDimSize(i);
    } else if (v == -1) {
      if (inferred >= 0)
        return rw.fail("shape " + shapeStr(target) + " has more than one -1");
      inferred = i;
      shape.push_back(-1);
      continue;
    } else if (v < -1) {
      return rw.fail("shape " + shapeStr(target) + " has a negative entry");
    }
    hasZero |= v == 0;
    if (v != 0 && known > kMaxElements / v)
      return rw.fail("shape " + shapeStr(target) + " is too large");
    known *= v;
    shape.push_back(v);
  }
  if (allowZero && hasZero && inferred >= 0)
    return rw.fail("with allowzero=1 the shape cannot contain both 0 and -1");
  int64_t total = inType.getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return rw.fail("cannot infer the -1 entry of shape " + shapeStr(target) +
                     " for an input of shape " + shapeStr(inType.getShape()));
    shape[inferred] = total / known;
  }
  if (numElements(shape) != total)
    return rw.fail("cannot reshape an input of shape " +
                   shapeStr(inType.getShape()) + " (" + Twine(total) +
                   " elements) to " + shapeStr(shape));
  return replaceLike(rw, reshapeTo(rw.b(), rw.loc(), rw.input(0), shape));
}

LogicalResult convertFlatten(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank(), axis = rw.getInt("axis", 1);
  int64_t lowest = rw.version() < 11 ? 0 : -rank;
  if (axis < lowest || axis > rank)
    return rw.fail("axis " + Twine(axis) + " is out of range [" +
                   Twine(lowest) + ", " + Twine(rank) + "]");
  if (axis < 0)
    axis += rank;
  int64_t outer = numElements(type.getShape().take_front(axis));
  int64_t inner = numElements(type.getShape().drop_front(axis));
  return replaceLike(rw,
                     reshapeTo(rw.b(), rw.loc(), rw.input(0), {outer, inner}));
}

LogicalResult convertSqueeze(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  auto type = rw.inputType(0);
  std::optional<SmallVector<int64_t>> axes;
  if (rw.version() < 13) {
    if (rw.hasAttr("axes"))
      axes = rw.getInts("axes");
  } else if (rw.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> a = rw.constantInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  SmallVector<int64_t> shape;
  if (!axes) {
    for (int64_t d : type.getShape())
      if (d != 1)
        shape.push_back(d);
  } else {
    FailureOr<SmallVector<int64_t>> norm =
        normalizeAxes(rw, *axes, type.getRank());
    if (failed(norm))
      return failure();
    for (int64_t a : *norm)
      if (type.getDimSize(a) != 1)
        return rw.fail("cannot squeeze axis " + Twine(a) + " of size " +
                       Twine(type.getDimSize(a)) + " (input shape " +
                       shapeStr(type.getShape()) + ")");
    for (auto [i, d] : llvm::enumerate(type.getShape()))
      if (!llvm::is_contained(*norm, static_cast<int64_t>(i)))
        shape.push_back(d);
  }
  return replaceLike(rw, reshapeTo(rw.b(), rw.loc(), rw.input(0), shape));
}

LogicalResult convertUnsqueeze(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  SmallVector<int64_t> axes;
  if (rw.version() < 13) {
    if (!rw.hasAttr("axes"))
      return rw.fail("missing required attribute 'axes'");
    axes = rw.getInts("axes");
  } else {
    FailureOr<SmallVector<int64_t>> a = rw.constantInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  auto type = rw.inputType(0);
  int64_t outRank = type.getRank() + axes.size();
  FailureOr<SmallVector<int64_t>> norm = normalizeAxes(rw, axes, outRank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> shape;
  auto in = type.getShape().begin();
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(*norm, i) ? 1 : *in++);
  return replaceLike(rw, reshapeTo(rw.b(), rw.loc(), rw.input(0), shape));
}

LogicalResult convertTranspose(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  int64_t rank = rw.inputType(0).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i)
    perm.push_back(i);
  perm = rw.getInts("perm", perm);
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return rw.fail("perm has " + Twine(perm.size()) +
                   " entries for an input of rank " + Twine(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return rw.fail("perm " + shapeStr(perm) +
                     " is not a permutation of [0, " + Twine(rank) + ")");
    seen[p] = true;
  }
  return replaceLike(rw, transposeTo(rw.b(), rw.loc(), rw.input(0), perm));
}

/// DepthToSpace and SpaceToDepth are a reshape, a transpose and a reshape.
LogicalResult reshapeTransposeReshape(NodeRewriter &rw,
                                      ArrayRef<int64_t> expanded,
                                      ArrayRef<int64_t> perm,
                                      ArrayRef<int64_t> result) {
  OpBuilder &b = rw.b();
  Value v = reshapeTo(b, rw.loc(), rw.input(0), expanded);
  v = transposeTo(b, rw.loc(), v, perm);
  return replaceLike(rw, reshapeTo(b, rw.loc(), v, result));
}

LogicalResult convertDepthToSpace(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  if (type.getRank() != 4)
    return rw.fail("input must have rank 4 (N, C, H, W), not " +
                   Twine(type.getRank()));
  std::optional<int64_t> bs = rw.getOptionalInt("blocksize");
  if (!bs || *bs < 1)
    return rw.fail("blocksize must be given and positive");
  std::string mode = rw.version() < 11 ? "DCR" : rw.getString("mode", "DCR");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3), s = *bs;
  // A fuzzed blocksize of 2^32 + 1 overflowed these products.
  int64_t s2, hs, ws;
  if (llvm::MulOverflow(s, s, s2) || llvm::MulOverflow(h, s, hs) ||
      llvm::MulOverflow(w, s, ws))
    return rw.fail("blocksize " + Twine(s) + " is too large for input " +
                   shapeStr(type.getShape()));
  if (c % s2 != 0)
    return rw.fail("channels (" + Twine(c) + ") must be divisible by " +
                   "blocksize^2 (" + Twine(s2) + ")");
  SmallVector<int64_t> result = {n, c / s2, hs, ws};
  if (mode == "DCR")
    return reshapeTransposeReshape(rw, {n, s, s, c / (s * s), h, w},
                                   {0, 3, 4, 1, 5, 2}, result);
  if (mode == "CRD")
    return reshapeTransposeReshape(rw, {n, c / (s * s), s, s, h, w},
                                   {0, 1, 4, 2, 5, 3}, result);
  return rw.fail("unknown mode '" + mode + "' (expected DCR or CRD)");
}

LogicalResult convertSpaceToDepth(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  if (type.getRank() != 4)
    return rw.fail("input must have rank 4 (N, C, H, W), not " +
                   Twine(type.getRank()));
  std::optional<int64_t> bs = rw.getOptionalInt("blocksize");
  if (!bs || *bs < 1)
    return rw.fail("blocksize must be given and positive");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3), s = *bs;
  if (h % s != 0 || w % s != 0)
    return rw.fail("height and width (" + Twine(h) + ", " + Twine(w) +
                   ") must be divisible by blocksize " + Twine(s));
  int64_t cs, css;
  if (llvm::MulOverflow(c, s, cs) || llvm::MulOverflow(cs, s, css))
    return rw.fail("blocksize " + Twine(s) + " is too large for input " +
                   shapeStr(type.getShape()));
  return reshapeTransposeReshape(rw, {n, c, h / s, s, w / s, s},
                                 {0, 3, 5, 1, 2, 4}, {n, css, h / s, w / s});
}

//===--- concat, split, slice ---------------------------------------------===//

LogicalResult convertConcat(NodeRewriter &rw) {
  if (rw.numInputs() == 0)
    return rw.fail("needs at least one input");
  for (unsigned i = 0; i < rw.numInputs(); ++i)
    if (failed(rw.requireInput(i, "input")))
      return failure();
  std::optional<int64_t> axisAttr = rw.getOptionalInt("axis");
  if (!axisAttr && rw.version() >= 4)
    return rw.fail("missing required attribute 'axis'");
  auto first = rw.inputType(0);
  int64_t rank = first.getRank();
  if (rank == 0)
    return rw.fail("inputs must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis(axisAttr.value_or(1), rank);
  if (failed(axis))
    return failure();
  int64_t a = *axis, total = 0;
  SmallVector<Value> parts;
  SmallVector<int64_t> offsets;
  for (unsigned i = 0; i < rw.numInputs(); ++i) {
    auto t = rw.inputType(i);
    if (rw.onnxElementType(i) != rw.onnxElementType(0))
      return rw.fail("inputs have different element types (" +
                     typeStr(rw.onnxElementType(0)) + " and " +
                     typeStr(rw.onnxElementType(i)) + ")");
    bool same = t.getRank() == rank;
    for (int64_t d = 0; same && d < rank; ++d)
      same = d == a || t.getDimSize(d) == first.getDimSize(d);
    if (!same)
      return rw.fail("input " + Twine(i) + " has shape " +
                     shapeStr(t.getShape()) + ", which does not match " +
                     shapeStr(first.getShape()) + " outside axis " + Twine(a));
    offsets.push_back(total);
    total += t.getDimSize(a);
    if (t.getDimSize(a) != 0)
      parts.push_back(rw.input(i));
  }
  SmallVector<int64_t> shape(first.getShape());
  shape[a] = total;
  auto outType = RankedTensorType::get(shape, first.getElementType());
  SmallVector<unsigned> ids;
  for (unsigned i = 0; i < rw.numInputs(); ++i)
    ids.push_back(i);
  SmallVector<DenseElementsAttr> constants = constantInputs(rw, ids);
  if (!constants.empty()) {
    Value folded = foldCopy(
        rw.b(), rw.loc(), constants, outType, [&](ArrayRef<int64_t> idx) {
          // The last input starting at or before idx[a]; empty inputs that
          // share its offset come before it.
          int input = llvm::upper_bound(offsets, idx[a]) - offsets.begin() - 1;
          SmallVector<int64_t> src(idx);
          src[a] -= offsets[input];
          return Source{input, flatIndex(src, rw.inputType(input).getShape())};
        });
    if (folded)
      return replaceLike(rw, folded);
  }
  if (parts.empty())
    return replaceWithEmpty(rw, shape);
  if (parts.size() == 1)
    return replaceLike(rw, parts[0]);
  return replaceLike(rw, tensor::ConcatOp::create(rw.b(), rw.loc(), a, parts));
}

/// A strided slice of `v` (folded when `v` is a constant).
Value sliceOf(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> offsets,
              ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == sizes)
    return v;
  auto outType = RankedTensorType::get(sizes, type.getElementType());
  if (DenseElementsAttr c = getDenseConstant(v)) {
    Value folded = foldCopy(b, loc, c, outType, [&](ArrayRef<int64_t> idx) {
      SmallVector<int64_t> src;
      for (auto [i, o, s] : llvm::zip(idx, offsets, strides))
        src.push_back(o + i * s);
      return Source{0, flatIndex(src, type.getShape())};
    });
    if (folded)
      return folded;
  }
  if (outType.getNumElements() == 0)
    return createEmpty(b, loc, sizes, type.getElementType());
  MLIRContext *ctx = b.getContext();
  return tensor::ExtractSliceOp::create(
      b, loc, outType, v, getAsIndexOpFoldResult(ctx, offsets),
      getAsIndexOpFoldResult(ctx, sizes), getAsIndexOpFoldResult(ctx, strides));
}

LogicalResult convertSplit(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("input must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  int64_t numOutputs = rw.getOp().getNumResults();
  SmallVector<int64_t> sizes;
  if (rw.version() < 13 && rw.hasAttr("split")) {
    sizes = rw.getInts("split");
  } else if ((rw.version() >= 13 || rw.version() < 2) && rw.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = rw.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else {
    std::optional<int64_t> n =
        rw.version() >= 18 ? rw.getOptionalInt("num_outputs") : std::nullopt;
    if (n && *n != numOutputs)
      return rw.fail("num_outputs is " + Twine(*n) + " but the node has " +
                     Twine(numOutputs) + " outputs");
    if (numOutputs < 1)
      return rw.fail("the node has no outputs");
    // Equal parts; when the dim does not divide evenly the last part is
    // smaller.
    int64_t part = (dim + numOutputs - 1) / numOutputs;
    sizes.assign(numOutputs, part);
    sizes.back() = dim - part * (numOutputs - 1);
    if (sizes.back() < 0)
      return rw.fail("cannot split a dim of size " + Twine(dim) + " into " +
                     Twine(numOutputs) + " parts of " + Twine(part) +
                     " with a smaller last part");
  }
  if (static_cast<int64_t>(sizes.size()) != numOutputs)
    return rw.fail("split has " + Twine(sizes.size()) +
                   " entries but the node has " + Twine(numOutputs) +
                   " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return rw.fail("split " + shapeStr(sizes) + " has a negative entry");
    sum += std::min(s, dim + 1);
  }
  if (sum != dim)
    return rw.fail("split " + shapeStr(sizes) + " does not sum to " +
                   Twine(dim) + ", the size of axis " + Twine(*axis));
  SmallVector<Value> results;
  SmallVector<Type> onnxTypes;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    SmallVector<int64_t> offsets(rank, 0), shape(type.getShape()),
        strides(rank, 1);
    offsets[*axis] = offset;
    shape[*axis] = s;
    results.push_back(
        sliceOf(rw.b(), rw.loc(), rw.input(0), offsets, shape, strides));
    onnxTypes.push_back(rw.onnxElementType(0));
    offset += s;
  }
  return rw.replace(results, onnxTypes);
}

LogicalResult convertSlice(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("data is a scalar; Slice needs rank 1 or more");
  SmallVector<int64_t> starts, ends, axes, steps;
  if (rw.version() < 10) {
    if (!rw.hasAttr("starts") || !rw.hasAttr("ends"))
      return rw.fail("missing required attribute 'starts' or 'ends'");
    starts = rw.getInts("starts");
    ends = rw.getInts("ends");
    if (rw.hasAttr("axes"))
      axes = rw.getInts("axes");
  } else {
    FailureOr<SmallVector<int64_t>> s = rw.constantInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = rw.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (rw.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = rw.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (rw.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = rw.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  size_t n = starts.size();
  if (axes.empty() && !(rw.version() >= 10 && rw.hasInput(3)))
    for (size_t i = 0; i < n; ++i)
      axes.push_back(i);
  if (steps.empty() && !(rw.version() >= 10 && rw.hasInput(4)))
    steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return rw.fail("starts, ends, axes and steps must have the same length "
                   "(" +
                   Twine(n) + ", " + Twine(ends.size()) + ", " +
                   Twine(axes.size()) + ", " + Twine(steps.size()) + ")");
  FailureOr<SmallVector<int64_t>> normAxes = normalizeAxes(rw, axes, rank);
  if (failed(normAxes))
    return failure();
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  bool negative = false;
  for (size_t i = 0; i < n; ++i) {
    int64_t a = (*normAxes)[i], dim = type.getDimSize(a);
    int64_t start = starts[i], end = ends[i], step = steps[i];
    if (step == 0)
      return rw.fail("steps must not be 0");
    // Steps beyond the dim select one element; bounding them keeps the
    // arithmetic below from overflowing.
    step = std::clamp<int64_t>(step, -dim - 1, dim + 1);
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t size = 0;
    if (dim == 0) {
      start = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? (start - end - 1) / -step + 1 : 0;
      negative |= size > 1;
    }
    offsets[a] = size ? start : 0;
    sizes[a] = size;
    strides[a] = step;
  }
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (!negative) {
    // A single element along a negative step is a unit-stride slice.
    for (int64_t &s : strides)
      s = std::abs(s);
    return replaceLike(rw,
                       sliceOf(b, loc, rw.input(0), offsets, sizes, strides));
  }
  auto outType = RankedTensorType::get(sizes, type.getElementType());
  if (DenseElementsAttr c = getDenseConstant(rw.input(0))) {
    Value folded = foldCopy(b, loc, c, outType, [&](ArrayRef<int64_t> idx) {
      SmallVector<int64_t> src;
      for (auto [i, o, s] : llvm::zip(idx, offsets, strides))
        src.push_back(o + i * s);
      return Source{0, flatIndex(src, type.getShape())};
    });
    if (folded)
      return replaceLike(rw, folded);
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, sizes);
  // Negative steps: the input map walks each dim from `offset` by `stride`.
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(b.getAffineConstantExpr(offsets[d]) +
                    b.getAffineDimExpr(d) * strides[d]);
  AffineMap map = AffineMap::get(rank, 0, exprs, b.getContext());
  return replaceLike(
      rw,
      buildGeneric(b, loc, rw.input(0), map, sizes, type.getElementType(),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
}

//===--- gathers and scatters ---------------------------------------------===//

/// Whether `values` is start, start + step, ... with step >= 1.
std::optional<int64_t> progressionStep(ArrayRef<int64_t> values) {
  if (values.size() < 2)
    return 1;
  int64_t step = values[1] - values[0];
  if (step < 1)
    return std::nullopt;
  for (size_t i = 2; i < values.size(); ++i)
    if (values[i] - values[i - 1] != step)
      return std::nullopt;
  return step;
}

LogicalResult convertGather(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")) ||
      failed(rw.requireInput(1, "indices")) || failed(requireIndices(rw, 1)))
    return failure();
  auto dataType = rw.inputType(0), idxType = rw.inputType(1);
  int64_t rank = dataType.getRank(), q = idxType.getRank();
  if (rank == 0)
    return rw.fail("data must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t a = *axis, dim = dataType.getDimSize(a);
  SmallVector<int64_t> shape(dataType.getShape().take_front(a));
  llvm::append_range(shape, idxType.getShape());
  llvm::append_range(shape, dataType.getShape().drop_front(a + 1));
  auto outType = RankedTensorType::get(shape, dataType.getElementType());
  OpBuilder &b = rw.b();
  Location loc = rw.loc();

  if (DenseElementsAttr idxConst = getConstantTable(rw.input(1))) {
    SmallVector<int64_t> indices = toInt64Vector(idxConst);
    if (failed(checkIndexRange(rw, indices, dim, "axis " + Twine(a))))
      return failure();
    for (int64_t &v : indices)
      v = v < 0 ? v + dim : v;
    if (DenseElementsAttr data = getDenseConstant(rw.input(0))) {
      Value folded =
          foldCopy(b, loc, data, outType, [&](ArrayRef<int64_t> idx) {
            SmallVector<int64_t> src(idx.take_front(a));
            src.push_back(
                indices[flatIndex(idx.slice(a, q), idxType.getShape())]);
            llvm::append_range(src, idx.drop_front(a + q));
            return Source{0, flatIndex(src, dataType.getShape())};
          });
      if (folded)
        return replaceLike(rw, folded);
    }
    if (outType.getNumElements() == 0)
      return replaceWithEmpty(rw, shape);
    // Scalar and evenly spaced constant indices select a strided slice.
    if (q <= 1) {
      if (std::optional<int64_t> step = progressionStep(indices)) {
        SmallVector<int64_t> offsets(rank, 0), sizes(dataType.getShape()),
            strides(rank, 1);
        offsets[a] = indices[0];
        sizes[a] = indices.size();
        strides[a] = *step;
        Value v = sliceOf(b, loc, rw.input(0), offsets, sizes, strides);
        return replaceLike(rw, reshapeTo(b, loc, v, shape));
      }
    }
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, shape);

  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < q; ++d)
    idxExprs.push_back(b.getAffineDimExpr(a + d));
  AffineMap idxMap = AffineMap::get(shape.size(), 0, idxExprs, b.getContext());
  Value data = rw.input(0);
  int64_t outRank = shape.size();
  Value result = buildGeneric(
      b, loc, rw.input(1), idxMap, shape, dataType.getElementType(),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < a; ++d)
          coords.push_back(loopIndex(nb, nloc, d));
        coords.push_back(wrapAndClamp(nb, nloc, args[0], dim));
        for (int64_t d = a + q; d < outRank; ++d)
          coords.push_back(loopIndex(nb, nloc, d));
        return tensor::ExtractOp::create(nb, nloc, data, coords);
      });
  return replaceLike(rw, result);
}

LogicalResult convertGatherElements(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")) ||
      failed(rw.requireInput(1, "indices")) || failed(requireIndices(rw, 1)))
    return failure();
  auto dataType = rw.inputType(0), idxType = rw.inputType(1);
  int64_t rank = dataType.getRank();
  if (rank == 0)
    return rw.fail("data must have rank >= 1");
  if (idxType.getRank() != rank)
    return rw.fail("indices must have the rank of data (" + Twine(rank) +
                   "), not " + Twine(idxType.getRank()));
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t a = *axis, dim = dataType.getDimSize(a);
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && idxType.getDimSize(d) > dataType.getDimSize(d))
      return rw.fail("indices shape " + shapeStr(idxType.getShape()) +
                     " exceeds data shape " + shapeStr(dataType.getShape()) +
                     " outside axis " + Twine(a));
  ArrayRef<int64_t> shape = idxType.getShape();
  auto outType = RankedTensorType::get(shape, dataType.getElementType());
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (DenseElementsAttr idxConst = getConstantTable(rw.input(1))) {
    SmallVector<int64_t> indices = toInt64Vector(idxConst);
    if (failed(checkIndexRange(rw, indices, dim, "axis " + Twine(a))))
      return failure();
    if (DenseElementsAttr data = getDenseConstant(rw.input(0))) {
      Value folded =
          foldCopy(b, loc, data, outType, [&](ArrayRef<int64_t> idx) {
            SmallVector<int64_t> src(idx);
            int64_t v = indices[flatIndex(idx, shape)];
            src[a] = v < 0 ? v + dim : v;
            return Source{0, flatIndex(src, dataType.getShape())};
          });
      if (folded)
        return replaceLike(rw, folded);
    }
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, shape);
  Value data = rw.input(0);
  Value result = buildGeneric(
      b, loc, rw.input(1), b.getMultiDimIdentityMap(rank), shape,
      dataType.getElementType(),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(d == a ? wrapAndClamp(nb, nloc, args[0], dim)
                                  : loopIndex(nb, nloc, d));
        return tensor::ExtractOp::create(nb, nloc, data, coords);
      });
  return replaceLike(rw, result);
}

/// TensorScatter (a KV cache update): present = past_cache with, for each
/// batch entry b, `update`'s sequence written along `axis` from position
/// write_indices[b] (0 without them), wrapping around the cache in
/// "circular" mode; in "linear" mode positions past the cache's end are not
/// written. One elementwise kernel over the cache: each element reads the
/// update when its position falls in the written range.
LogicalResult convertTensorScatter(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "past_cache")) ||
      failed(rw.requireInput(1, "update")))
    return failure();
  auto cacheType = rw.inputType(0), updType = rw.inputType(1);
  int64_t rank = cacheType.getRank();
  if (rank < 2)
    return rw.fail("past_cache must have rank >= 2 (batch and sequence "
                   "dims), not " +
                   Twine(rank));
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -2), rank);
  if (failed(axis))
    return failure();
  if (*axis == 0)
    return rw.fail("axis must not be the batch dim 0");
  if (updType.getRank() != rank ||
      rw.onnxElementType(1) != rw.onnxElementType(0))
    return rw.fail("update must have past_cache's rank and element type");
  for (int64_t d = 0; d < rank; ++d)
    if (d == *axis ? updType.getDimSize(d) > cacheType.getDimSize(d)
                   : updType.getDimSize(d) != cacheType.getDimSize(d))
      return rw.fail("update of shape " + shapeStr(updType.getShape()) +
                     " does not fit past_cache of shape " +
                     shapeStr(cacheType.getShape()) + " along axis " +
                     Twine(*axis));
  std::string mode = rw.getString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return rw.fail("mode must be 'linear' or 'circular', not '" + mode + "'");
  int64_t batch = cacheType.getDimSize(0);
  if (rw.hasInput(2)) {
    if (failed(requireIndices(rw, 2)))
      return failure();
    if (rw.inputType(2).getShape() != ArrayRef<int64_t>{batch})
      return rw.fail("write_indices must have shape [" + Twine(batch) +
                     "], not " + shapeStr(rw.inputType(2).getShape()));
  }
  if (cacheType.getNumElements() == 0 || updType.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = b.getContext();
  int64_t cacheLen = cacheType.getDimSize(*axis),
          updLen = updType.getDimSize(*axis);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<GenericOperand> ins = {{rw.input(0), id}};
  if (rw.hasInput(2))
    ins.push_back(
        {rw.input(2), AffineMap::get(rank, 0, {b.getAffineDimExpr(0)}, ctx)});
  Value update = rw.input(1);
  bool circular = mode == "circular";
  Value result = buildGeneric(
      b, loc, ins,
      {{createEmpty(b, loc, cacheType.getShape(), cacheType.getElementType()),
        id}},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange in,
          ValueRange) -> SmallVector<Value> {
        Type i64 = nb.getI64Type();
        Value pos = arith::IndexCastOp::create(nb, nloc, i64,
                                               loopIndex(nb, nloc, *axis));
        Value start = in.size() > 1
                          ? in[1]
                          : arith::ConstantIntOp::create(nb, nloc, i64, 0);
        if (start.getType() != i64)
          start = arith::ExtSIOp::create(nb, nloc, i64, start);
        // j: the update position this element would take.
        Value j = arith::SubIOp::create(nb, nloc, pos, start);
        if (circular) {
          Value len = arith::ConstantIntOp::create(nb, nloc, i64, cacheLen);
          j = arith::RemSIOp::create(nb, nloc, j, len);
          Value negative = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt, j,
              arith::ConstantIntOp::create(nb, nloc, i64, 0));
          j = arith::SelectOp::create(
              nb, nloc, negative, arith::AddIOp::create(nb, nloc, j, len), j);
        }
        // Unsigned j < updLen also rejects negative j.
        Value written = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, j,
            arith::ConstantIntOp::create(nb, nloc, i64, updLen));
        Value clamped = arith::IndexCastOp::create(
            nb, nloc, nb.getIndexType(),
            arith::SelectOp::create(
                nb, nloc, written, j,
                arith::ConstantIntOp::create(nb, nloc, i64, 0)));
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(d == *axis ? clamped : loopIndex(nb, nloc, d));
        Value v = tensor::ExtractOp::create(nb, nloc, update, coords);
        return {arith::SelectOp::create(nb, nloc, written, v, in[0])};
      })[0];
  return replaceLike(rw, result);
}

/// Compress: the slices along `axis` (of the flattened input without one)
/// whose condition entry is true. The result's shape depends on the
/// condition's values, so the condition must be a compile-time constant
/// (or bound with --bind-input); the node becomes a Gather of the selected
/// indices.
LogicalResult convertCompress(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  FailureOr<SmallVector<int64_t>> condition = rw.constantInts(1, "condition");
  if (failed(condition))
    return failure();
  if (rw.inputType(1).getRank() != 1)
    return rw.fail("condition must be 1-D, not of rank " +
                   Twine(rw.inputType(1).getRank()));
  auto type = rw.inputType(0);
  onnx::NodeOp op = rw.getOp();
  std::optional<int64_t> axisAttr = rw.getOptionalInt("axis");
  int64_t axis = 0, dim = type.getNumElements();
  if (axisAttr) {
    FailureOr<int64_t> a = rw.normalizeAxis(*axisAttr, type.getRank());
    if (failed(a))
      return failure();
    axis = *a;
    dim = type.getDimSize(axis);
  }
  if (int64_t(condition->size()) > dim)
    return rw.fail("condition has " + Twine(condition->size()) +
                   " entries, more than the " + Twine(dim) +
                   (axisAttr ? " slices along axis " + Twine(axis)
                             : Twine(" elements of the flattened input")));
  SmallVector<int64_t> selected;
  for (auto [i, c] : llvm::enumerate(*condition))
    if (c)
      selected.push_back(i);
  OnnxEmitter e(rw);
  Value data = op.getInputs()[0];
  if (!axisAttr)
    data = e.node("Reshape", 14, {data, e.ints({dim})});
  rw.forward(
      e.node("Gather", 13, {data, e.ints(selected)}, {e.attr("axis", axis)}));
  return success();
}

/// Shapes shared by GatherND and ScatterND: `k` index components address the
/// data dims [batch, batch + k).
struct NDIndexing {
  int64_t batch, k;
};

FailureOr<NDIndexing> checkNDIndexing(NodeRewriter &rw,
                                      RankedTensorType dataType,
                                      RankedTensorType idxType, int64_t batch) {
  int64_t r = dataType.getRank(), q = idxType.getRank();
  if (r < 1 || q < 1)
    return rw.fail("data and indices must have rank >= 1");
  if (batch < 0 || batch >= std::min(r, q))
    return rw.fail("batch_dims " + Twine(batch) +
                   " must be less than the ranks of data and indices");
  int64_t k = idxType.getShape().back();
  if (k < 1 || k > r - batch)
    return rw.fail("the last dim of indices (" + Twine(k) +
                   ") must be between 1 and the data rank minus batch_dims (" +
                   Twine(r - batch) + ")");
  for (int64_t d = 0; d < batch; ++d)
    if (dataType.getDimSize(d) != idxType.getDimSize(d))
      return rw.fail("the batch dims of data " + shapeStr(dataType.getShape()) +
                     " and indices " + shapeStr(idxType.getShape()) +
                     " differ");
  return NDIndexing{batch, k};
}

/// Splits indices [..., k] into k tensors of the leading shape, so that a
/// generic reads each index component through an indexing map.
SmallVector<Value> splitIndexComponents(OpBuilder &b, Location loc,
                                        Value indices) {
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t q = type.getRank(), k = type.getShape().back();
  SmallVector<Value> parts;
  for (int64_t j = 0; j < k; ++j) {
    SmallVector<int64_t> offsets(q, 0), sizes(type.getShape()), strides(q, 1);
    offsets.back() = j;
    sizes.back() = 1;
    Value v = sliceOf(b, loc, indices, offsets, sizes, strides);
    parts.push_back(reshapeTo(b, loc, v, type.getShape().drop_back()));
  }
  return parts;
}

LogicalResult convertGatherND(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")) ||
      failed(rw.requireInput(1, "indices")) || failed(requireIndices(rw, 1)))
    return failure();
  auto dataType = rw.inputType(0), idxType = rw.inputType(1);
  int64_t batch = rw.version() >= 12 ? rw.getInt("batch_dims", 0) : 0;
  FailureOr<NDIndexing> nd = checkNDIndexing(rw, dataType, idxType, batch);
  if (failed(nd))
    return failure();
  int64_t k = nd->k, q = idxType.getRank();
  SmallVector<int64_t> shape(idxType.getShape().drop_back());
  llvm::append_range(shape, dataType.getShape().drop_front(batch + k));
  auto outType = RankedTensorType::get(shape, dataType.getElementType());
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (DenseElementsAttr idxConst = getConstantTable(rw.input(1))) {
    SmallVector<int64_t> indices = toInt64Vector(idxConst);
    for (auto [i, v] : llvm::enumerate(indices))
      if (failed(checkIndexRange(rw, v, dataType.getDimSize(batch + i % k),
                                 "data dim " + Twine(batch + i % k))))
        return failure();
    if (DenseElementsAttr data = getDenseConstant(rw.input(0))) {
      Value folded =
          foldCopy(b, loc, data, outType, [&](ArrayRef<int64_t> idx) {
            SmallVector<int64_t> src(idx.take_front(batch));
            int64_t tuple = flatIndex(idx.take_front(q - 1),
                                      idxType.getShape().drop_back()) *
                            k;
            for (int64_t j = 0; j < k; ++j) {
              int64_t v = indices[tuple + j];
              src.push_back(v < 0 ? v + dataType.getDimSize(batch + j) : v);
            }
            llvm::append_range(src, idx.drop_front(q - 1));
            return Source{0, flatIndex(src, dataType.getShape())};
          });
      if (folded)
        return replaceLike(rw, folded);
    }
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, shape);
  SmallVector<Value> parts = splitIndexComponents(b, loc, rw.input(1));
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < q - 1; ++d)
    exprs.push_back(b.getAffineDimExpr(d));
  int64_t outRank = shape.size();
  AffineMap idxMap = AffineMap::get(outRank, 0, exprs, b.getContext());
  SmallVector<AffineMap> maps(k, idxMap);
  Value data = rw.input(0);
  Value result =
      buildGeneric(b, loc, parts, maps, shape, dataType.getElementType(),
                   [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     SmallVector<Value> coords;
                     for (int64_t d = 0; d < batch; ++d)
                       coords.push_back(loopIndex(nb, nloc, d));
                     for (int64_t j = 0; j < k; ++j)
                       coords.push_back(wrapAndClamp(
                           nb, nloc, args[j], dataType.getDimSize(batch + j)));
                     for (int64_t d = q - 1; d < outRank; ++d)
                       coords.push_back(loopIndex(nb, nloc, d));
                     return tensor::ExtractOp::create(nb, nloc, data, coords);
                   });
  return replaceLike(rw, result);
}

/// data, indices (integers) and updates: the inputs of every scatter.
LogicalResult requireScatterInputs(NodeRewriter &rw) {
  for (unsigned i = 0; i < 3; ++i)
    if (failed(rw.requireInput(i, i == 0   ? "data"
                                  : i == 1 ? "indices"
                                           : "updates")))
      return failure();
  return requireIndices(rw, 1);
}

/// A scatter's `reduction`: none before opset 16, max and min from 18.
FailureOr<std::string> scatterReduction(NodeRewriter &rw) {
  std::string reduction =
      rw.version() >= 16 ? rw.getString("reduction", "none") : "none";
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      !(rw.version() >= 18 && (reduction == "max" || reduction == "min")))
    return rw.fail("unknown reduction '" + reduction + "'");
  return reduction;
}

/// A scatter's accumulator: `data` in the first iteration of the reduction
/// loops [from, to), else `acc`.
Value startFrom(OpBuilder &nb, Location nloc, int64_t from, int64_t to,
                Value data, Value acc) {
  Value first;
  for (int64_t d = from; d < to; ++d) {
    Value zero =
        arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                              loopIndex(nb, nloc, d), indexConst(nb, nloc, 0));
    first = first ? arith::AndIOp::create(nb, nloc, first, zero) : zero;
  }
  return arith::SelectOp::create(nb, nloc, first, data, acc);
}

/// `acc` combined with `upd` by a scatter's `reduction` (none: `upd`);
/// booleans add as or and multiply as and.
Value combineScatter(OpBuilder &nb, Location nloc, StringRef reduction,
                     Value acc, Value upd, bool isUnsigned) {
  Type t = acc.getType();
  bool isFloat = isa<FloatType>(t);
  if (reduction == "add")
    return isFloat ? arith::AddFOp::create(nb, nloc, acc, upd).getResult()
           : t.isInteger(1)
               ? arith::OrIOp::create(nb, nloc, acc, upd).getResult()
               : arith::AddIOp::create(nb, nloc, acc, upd).getResult();
  if (reduction == "mul")
    return isFloat ? arith::MulFOp::create(nb, nloc, acc, upd).getResult()
           : t.isInteger(1)
               ? arith::AndIOp::create(nb, nloc, acc, upd).getResult()
               : arith::MulIOp::create(nb, nloc, acc, upd).getResult();
  if (reduction == "max")
    return isFloat ? arith::MaximumFOp::create(nb, nloc, acc, upd).getResult()
           : isUnsigned || t.isInteger(1)
               ? arith::MaxUIOp::create(nb, nloc, acc, upd).getResult()
               : arith::MaxSIOp::create(nb, nloc, acc, upd).getResult();
  if (reduction == "min")
    return isFloat ? arith::MinimumFOp::create(nb, nloc, acc, upd).getResult()
           : isUnsigned || t.isInteger(1)
               ? arith::MinUIOp::create(nb, nloc, acc, upd).getResult()
               : arith::MinSIOp::create(nb, nloc, acc, upd).getResult();
  return upd;
}

/// ScatterND as one linalg.generic over (data dims, update dims): the data
/// dims are parallel, the update dims a reduction that folds every update
/// whose index tuple addresses the current element into it, in order (so
/// the last of duplicate indices wins for reduction "none"). This works for
/// run-time indices without scatter ops; it costs data size x update count.
LogicalResult convertScatterND(NodeRewriter &rw) {
  if (failed(requireScatterInputs(rw)))
    return failure();
  auto dataType = rw.inputType(0), idxType = rw.inputType(1),
       updType = rw.inputType(2);
  FailureOr<NDIndexing> nd = checkNDIndexing(rw, dataType, idxType, 0);
  if (failed(nd))
    return failure();
  int64_t r = dataType.getRank(), q = idxType.getRank(), k = nd->k;
  SmallVector<int64_t> updShape(idxType.getShape().drop_back());
  llvm::append_range(updShape, dataType.getShape().drop_front(k));
  if (updType.getShape() != ArrayRef<int64_t>(updShape))
    return rw.fail("updates have shape " + shapeStr(updType.getShape()) +
                   " but indices " + shapeStr(idxType.getShape()) +
                   " and data " + shapeStr(dataType.getShape()) + " need " +
                   shapeStr(updShape));
  if (rw.onnxElementType(2) != rw.onnxElementType(0))
    return rw.fail("updates and data have different element types");
  FailureOr<std::string> reduction = scatterReduction(rw);
  if (failed(reduction))
    return failure();
  if (DenseElementsAttr idxConst = getConstantTable(rw.input(1))) {
    SmallVector<int64_t> indices = toInt64Vector(idxConst);
    for (auto [i, v] : llvm::enumerate(indices))
      if (failed(checkIndexRange(rw, v, dataType.getDimSize(i % k),
                                 "data dim " + Twine(i % k))))
        return failure();
  }
  if (dataType.getNumElements() == 0 || updType.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  bool isUnsigned = rw.isUnsigned(0);
  SmallVector<Value> inputs = splitIndexComponents(b, loc, rw.input(1));
  inputs.push_back(rw.input(2));
  int64_t u = q - 1, loops = r + u;
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> updDims, updExprs;
  for (int64_t d = 0; d < u; ++d)
    updDims.push_back(b.getAffineDimExpr(r + d));
  updExprs = updDims;
  for (int64_t d = k; d < r; ++d)
    updExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps(k, AffineMap::get(loops, 0, updDims, ctx));
  maps.push_back(AffineMap::get(loops, 0, updExprs, ctx));
  // data is read, not updated in place: the first update iteration starts
  // from it, so that each output element (a GPU thread's) is its own.
  AffineMap dataMap =
      AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(r);
  inputs.push_back(rw.input(0));
  maps.append({dataMap, dataMap});
  SmallVector<utils::IteratorType> iterators(r, utils::IteratorType::parallel);
  iterators.append(u, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, dataType, inputs,
      createEmpty(b, loc, dataType.getShape(), dataType.getElementType()), maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value match;
        for (int64_t j = 0; j < k; ++j) {
          Value i = wrapNegative(nb, nloc, args[j], dataType.getDimSize(j));
          Value eq = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                           i, loopIndex(nb, nloc, j));
          match = match ? arith::AndIOp::create(nb, nloc, match, eq) : eq;
        }
        Value upd = args[k];
        Value acc = startFrom(nb, nloc, r, loops, args[k + 1], args[k + 2]);
        Value combined =
            combineScatter(nb, nloc, *reduction, acc, upd, isUnsigned);
        linalg::YieldOp::create(
            nb, nloc,
            Value(arith::SelectOp::create(nb, nloc, match, combined, acc)));
      });
  return replaceLike(rw, generic.getResult(0));
}

/// ScatterElements (and Scatter, its older name): updates[p] goes to data
/// at p with its `axis` coordinate replaced by indices[p]. The part of
/// data the updates can reach (their extent in every dim but `axis`) is
/// one linalg.generic over (its dims, the updates' axis dim): each element
/// folds, in order, the updates of its line along `axis` whose index
/// addresses it (the last of duplicates wins for reduction "none"); the
/// rest of data stays as it is. Costs that part's size x the updates' axis
/// extent.
LogicalResult convertScatterElements(NodeRewriter &rw) {
  if (failed(requireScatterInputs(rw)))
    return failure();
  auto dataType = rw.inputType(0), idxType = rw.inputType(1),
       updType = rw.inputType(2);
  int64_t r = dataType.getRank();
  if (r == 0)
    return rw.fail("data must have rank 1 or more");
  if (idxType.getShape() != updType.getShape() || idxType.getRank() != r)
    return rw.fail("indices " + shapeStr(idxType.getShape()) + " and updates " +
                   shapeStr(updType.getShape()) +
                   " must have one shape, of data's rank " + Twine(r));
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", 0), r);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < r; ++d)
    if (d != *axis && updType.getDimSize(d) > dataType.getDimSize(d))
      return rw.fail("updates " + shapeStr(updType.getShape()) +
                     " exceed data " + shapeStr(dataType.getShape()) +
                     " in dim " + Twine(d));
  if (rw.onnxElementType(2) != rw.onnxElementType(0))
    return rw.fail("updates and data have different element types");
  FailureOr<std::string> reduction = scatterReduction(rw);
  if (failed(reduction))
    return failure();
  int64_t extent = dataType.getDimSize(*axis);
  if (DenseElementsAttr idxConst = getConstantTable(rw.input(1)))
    for (int64_t v : toInt64Vector(idxConst))
      if (failed(checkIndexRange(rw, v, extent, "data dim " + Twine(*axis))))
        return failure();
  if (dataType.getNumElements() == 0 || updType.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> reach(updType.getShape());
  reach[*axis] = extent;
  Value data = rw.input(0), part = data;
  SmallVector<OpFoldResult> offsets(r, b.getIndexAttr(0)), sizes,
      strides(r, b.getIndexAttr(1));
  for (int64_t d : reach)
    sizes.push_back(b.getIndexAttr(d));
  bool whole = ArrayRef<int64_t>(reach) == dataType.getShape();
  if (!whole)
    part = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(reach, dataType.getElementType()), data,
        offsets, sizes, strides);
  // Loops: the part's dims, then the updates' axis dim (a reduction).
  SmallVector<AffineExpr> updExprs;
  for (int64_t d = 0; d < r; ++d)
    updExprs.push_back(b.getAffineDimExpr(d == *axis ? r : d));
  AffineMap updMap = AffineMap::get(r + 1, 0, updExprs, ctx);
  SmallVector<utils::IteratorType> iterators(r, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  bool isUnsigned = rw.isUnsigned(0);
  // data is read, not updated in place (as in ScatterND).
  AffineMap partMap =
      AffineMap::getMultiDimIdentityMap(r + 1, ctx).getMajorSubMap(r);
  auto generic = linalg::GenericOp::create(
      b, loc, part.getType(), ValueRange{rw.input(1), rw.input(2), part},
      createEmpty(b, loc, reach, dataType.getElementType()),
      ArrayRef<AffineMap>{updMap, updMap, partMap, partMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value i = wrapNegative(nb, nloc, args[0], extent);
        Value match = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                            i, loopIndex(nb, nloc, *axis));
        Value acc = startFrom(nb, nloc, r, r + 1, args[2], args[3]);
        Value combined =
            combineScatter(nb, nloc, *reduction, acc, args[1], isUnsigned);
        linalg::YieldOp::create(
            nb, nloc,
            Value(arith::SelectOp::create(nb, nloc, match, combined, acc)));
      });
  Value result = generic.getResult(0);
  if (!whole)
    result = tensor::InsertSliceOp::create(b, loc, result, data, offsets, sizes,
                                           strides);
  return replaceLike(rw, result);
}

//===--- broadcasts, tiles, pads ------------------------------------------===//

LogicalResult convertExpand(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  FailureOr<SmallVector<int64_t>> target = rw.constantInts(1, "shape");
  if (failed(target))
    return failure();
  auto type = rw.inputType(0);
  std::string error;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({llvm::to_vector(type.getShape()), *target}, error);
  if (failed(shape))
    return rw.fail("cannot expand shape " + shapeStr(type.getShape()) + " to " +
                   shapeStr(*target) + ": " + error);
  if (failed(checkShapeSize(rw, *shape)))
    return failure();
  auto outType = RankedTensorType::get(*shape, type.getElementType());
  if (DenseElementsAttr c = getDenseConstant(rw.input(0))) {
    int64_t offset = shape->size() - type.getRank();
    Value folded =
        foldCopy(rw.b(), rw.loc(), c, outType, [&](ArrayRef<int64_t> idx) {
          SmallVector<int64_t> src;
          for (auto [i, d] : llvm::enumerate(type.getShape()))
            src.push_back(d == 1 ? 0 : idx[offset + i]);
          return Source{0, flatIndex(src, type.getShape())};
        });
    if (folded)
      return replaceLike(rw, folded);
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, *shape);
  return replaceLike(rw, broadcastTo(rw.b(), rw.loc(), rw.input(0), *shape));
}

LogicalResult convertTile(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> repeats;
  if (rw.version() < 6) {
    // Tile-1 repeats one axis: inputs (input, tiles, axis) as scalars.
    FailureOr<SmallVector<int64_t>> tiles = rw.constantInts(1, "tiles");
    if (failed(tiles))
      return failure();
    FailureOr<SmallVector<int64_t>> axis = rw.constantInts(2, "axis");
    if (failed(axis))
      return failure();
    if (tiles->size() != 1 || axis->size() != 1)
      return rw.fail("tiles and axis must be scalars");
    FailureOr<int64_t> a = rw.normalizeAxis((*axis)[0], rank);
    if (failed(a))
      return failure();
    repeats.assign(rank, 1);
    repeats[*a] = (*tiles)[0];
  } else {
    FailureOr<SmallVector<int64_t>> r = rw.constantInts(1, "repeats");
    if (failed(r))
      return failure();
    repeats = *r;
  }
  if (static_cast<int64_t>(repeats.size()) != rank)
    return rw.fail("repeats has " + Twine(repeats.size()) +
                   " entries for an input of rank " + Twine(rank));
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(type.getShape(), repeats)) {
    if (r < 0)
      return rw.fail("repeats " + shapeStr(repeats) + " has a negative entry");
    if (r > kMaxElements)
      return rw.fail("repeats " + shapeStr(repeats) + " is too large");
    shape.push_back(d * r);
  }
  if (failed(checkShapeSize(rw, shape)))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  auto outType = RankedTensorType::get(shape, type.getElementType());
  if (DenseElementsAttr c = getDenseConstant(rw.input(0))) {
    Value folded = foldCopy(b, loc, c, outType, [&](ArrayRef<int64_t> idx) {
      SmallVector<int64_t> src;
      for (auto [i, d] : llvm::zip(idx, type.getShape()))
        src.push_back(i % d);
      return Source{0, flatIndex(src, type.getShape())};
    });
    if (folded)
      return replaceLike(rw, folded);
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, shape);
  if (llvm::all_of(repeats, [](int64_t r) { return r == 1; }))
    return replaceLike(rw, rw.input(0));
  // Broadcast to [r0, d0, r1, d1, ...] (dims with one repeat stay single)
  // and collapse each pair: plain affine maps, no modulo indexing.
  SmallVector<int64_t> expanded;
  SmallVector<AffineExpr> exprs;
  for (auto [d, r] : llvm::zip(type.getShape(), repeats)) {
    if (r != 1)
      expanded.push_back(r);
    exprs.push_back(b.getAffineDimExpr(expanded.size()));
    expanded.push_back(d);
  }
  AffineMap map = AffineMap::get(expanded.size(), 0, exprs, b.getContext());
  Value v =
      buildGeneric(b, loc, rw.input(0), map, expanded, type.getElementType(),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return replaceLike(rw, reshapeTo(b, loc, v, shape));
}

/// The source index along one dim of size `n` for output position `i` of a
/// pad by `lo` in `mode` (reflect, edge or wrap).
int64_t padSource(StringRef mode, int64_t i, int64_t lo, int64_t n) {
  int64_t s = i - lo;
  if (mode == "edge")
    return std::clamp<int64_t>(s, 0, n - 1);
  if (mode == "wrap")
    return ((s % n) + n) % n;
  if (n == 1)
    return 0;
  // Reflect: the index sequence is periodic with period 2 (n - 1).
  int64_t period = 2 * (n - 1);
  int64_t t = ((s % period) + period) % period;
  return t < n ? t : period - t;
}

LogicalResult convertPad(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  Type t = type.getElementType();
  std::string mode = rw.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      !(mode == "wrap" && rw.version() >= 19))
    return rw.fail("unknown mode '" + mode + "'");

  SmallVector<int64_t> pads;
  if (rw.version() < 11) {
    StringRef name = rw.version() < 2 ? "paddings" : "pads";
    if (!rw.hasAttr(name))
      return rw.fail("missing required attribute '" + name + "'");
    pads = rw.getInts(name);
  } else {
    FailureOr<SmallVector<int64_t>> p = rw.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
  }
  SmallVector<int64_t> axes;
  if (rw.version() >= 18 && rw.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = rw.constantInts(3, "axes");
    if (failed(a))
      return failure();
    FailureOr<SmallVector<int64_t>> norm = normalizeAxes(rw, *a, rank);
    if (failed(norm))
      return failure();
    axes = *norm;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t n = axes.size();
  if (static_cast<int64_t>(pads.size()) != 2 * n)
    return rw.fail("pads has " + Twine(pads.size()) + " entries; expected " +
                   Twine(2 * n) + " (begin and end for " + Twine(n) + " axes)");
  for (int64_t p : pads)
    if (p > kMaxElements || p < -kMaxElements)
      return rw.fail("pads " + shapeStr(pads) + " are too large");
  SmallVector<int64_t> lo(rank, 0), hi(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    lo[axes[i]] = pads[i];
    hi[axes[i]] = pads[n + i];
  }

  // The pad value: an attribute before opset 11, else an optional input
  // that may be computed at run time.
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  TypedAttr fillAttr = scalarAttr(t, 0);
  Value fillValue;
  if (mode == "constant") {
    if (rw.version() < 11) {
      fillAttr = scalarAttr(t, rw.getFloat("value", 0.0f));
    } else if (rw.hasInput(2)) {
      auto vt = rw.inputType(2);
      if (vt.getNumElements() != 1)
        return rw.fail("constant_value must be a scalar");
      if (vt.getElementType() != t)
        return rw.fail("constant_value has element type " +
                       typeStr(rw.onnxElementType(2)) + " but data has " +
                       typeStr(rw.onnxElementType(0)));
      if (DenseElementsAttr c = getDenseConstant(rw.input(2)))
        fillAttr = cast<TypedAttr>(c.getValues<Attribute>()[0]);
      else
        fillValue = rw.input(2);
    }
  }

  // Negative pads crop; the positive ones then pad what is left.
  SmallVector<int64_t> cropOffsets(rank, 0), cropSizes(type.getShape()),
      ones(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t cut = std::max<int64_t>(0, -lo[d]) + std::max<int64_t>(0, -hi[d]);
    if (cut > type.getDimSize(d))
      return rw.fail("negative pads remove " + Twine(cut) +
                     " elements from dim " + Twine(d) + " of size " +
                     Twine(type.getDimSize(d)));
    cropOffsets[d] = std::max<int64_t>(0, -lo[d]);
    cropSizes[d] -= cut;
    lo[d] = std::max<int64_t>(0, lo[d]);
    hi[d] = std::max<int64_t>(0, hi[d]);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    shape.push_back(cropSizes[d] + lo[d] + hi[d]);
    if (mode != "constant" && cropSizes[d] == 0 && (lo[d] || hi[d]))
      return rw.fail("cannot pad an empty dim (" + Twine(d) + ") in mode " +
                     mode);
  }
  if (failed(checkShapeSize(rw, shape)))
    return failure();
  auto outType = RankedTensorType::get(shape, t);
  // The source index along padded dim d of output position i; -1 is the pad
  // value.
  auto source = [&](int64_t d, int64_t i) -> int64_t {
    if (!lo[d] && !hi[d])
      return i;
    if (mode != "constant")
      return padSource(mode, i, lo[d], cropSizes[d]);
    int64_t s = i - lo[d];
    return s >= 0 && s < cropSizes[d] ? s : -1;
  };
  if (DenseElementsAttr c = getDenseConstant(rw.input(0)); c && !fillValue) {
    Value folded = foldCopy(
        b, loc, c, outType,
        [&](ArrayRef<int64_t> idx) {
          SmallVector<int64_t> src;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t s = source(d, idx[d]);
            if (s < 0)
              return Source{-1, 0};
            src.push_back(cropOffsets[d] + s);
          }
          return Source{0, flatIndex(src, type.getShape())};
        },
        fillAttr);
    if (folded)
      return replaceLike(rw, folded);
  }
  if (outType.getNumElements() == 0)
    return replaceWithEmpty(rw, shape);
  Value cropped = sliceOf(b, loc, rw.input(0), cropOffsets, cropSizes, ones);
  if (mode == "constant") {
    if (!fillValue)
      return replaceLike(rw, padWithValue(b, loc, cropped, lo, hi, fillAttr));
    // A run-time pad value is read inside the pad region, so that the pad
    // stays one op over tensors (kernel formation does not take scalars).
    MLIRContext *ctx = b.getContext();
    auto pad = tensor::PadOp::create(b, loc, outType, cropped,
                                     getAsIndexOpFoldResult(ctx, lo),
                                     getAsIndexOpFoldResult(ctx, hi));
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.createBlock(&pad.getRegion(), {},
                                 SmallVector<Type>(rank, b.getIndexType()),
                                 SmallVector<Location>(rank, loc));
    b.setInsertionPointToEnd(block);
    Value scalar = tensor::ExtractOp::create(
        b, loc, fillValue,
        SmallVector<Value>(rw.inputType(2).getRank(), indexConst(b, loc, 0)));
    tensor::YieldOp::create(b, loc, scalar);
    return replaceLike(rw, pad.getResult());
  }
  // Reflect, edge and wrap read the source through per-dim index tables,
  // constants of one entry per output position.
  constexpr int64_t kMaxIndexTable = int64_t(1) << 24;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> tableDims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!lo[d] && !hi[d])
      continue;
    if (shape[d] > kMaxIndexTable)
      return rw.unsupported("padding in mode " + mode + " along a dim of " +
                            Twine(shape[d]) + " (at most 2^24)");
    SmallVector<int64_t> table;
    for (int64_t i = 0; i < shape[d]; ++i)
      table.push_back(source(d, i));
    inputs.push_back(indexTable(b, loc, table));
    maps.push_back(
        AffineMap::get(rank, 0, b.getAffineDimExpr(d), b.getContext()));
    tableDims.push_back(d);
  }
  Value result = buildGeneric(
      b, loc, inputs, maps, shape, t,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          auto it = llvm::find(tableDims, d);
          if (it == tableDims.end()) {
            coords.push_back(loopIndex(nb, nloc, d));
            continue;
          }
          coords.push_back(arith::IndexCastOp::create(
              nb, nloc, nb.getIndexType(), args[it - tableDims.begin()]));
        }
        return tensor::ExtractOp::create(nb, nloc, cropped, coords);
      });
  return replaceLike(rw, result);
}

//===--- shape computations -----------------------------------------------===//

Value i64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return createConstant(b, loc, DenseElementsAttr::get(type, values));
}

LogicalResult convertShape(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  ArrayRef<int64_t> dims = rw.inputType(0).getShape();
  int64_t rank = dims.size();
  int64_t start = 0, end = rank;
  if (rw.version() >= 15) {
    auto clampAxis = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
    };
    start = clampAxis(rw.getInt("start", 0));
    end = clampAxis(rw.getInt("end", rank));
  }
  SmallVector<int64_t> values;
  for (int64_t d = start; d < end; ++d)
    values.push_back(dims[d]);
  return rw.replace(i64Constant(rw.b(), rw.loc(),
                                {static_cast<int64_t>(values.size())}, values));
}

LogicalResult convertSize(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  return rw.replace(
      i64Constant(rw.b(), rw.loc(), {}, rw.inputType(0).getNumElements()));
}

/// A splat tensor of `value` (any size: splats are cheap to keep as
/// attributes and later passes fold them into their consumers).
Value splatConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    Attribute value) {
  auto type = RankedTensorType::get(shape, cast<TypedAttr>(value).getType());
  return createConstant(b, loc, DenseElementsAttr::get(type, value));
}

LogicalResult convertConstantOfShape(NodeRewriter &rw) {
  FailureOr<SmallVector<int64_t>> shape = rw.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return rw.fail("shape " + shapeStr(*shape) + " has a negative entry");
  if (failed(checkShapeSize(rw, *shape)))
    return failure();
  Attribute value = FloatAttr::get(rw.b().getF32Type(), 0.0);
  Type onnxType = rw.b().getF32Type();
  if (ElementsAttr attr = rw.getTensor("value")) {
    auto dense = dyn_cast<DenseElementsAttr>(attr);
    if (!dense || dense.getNumElements() != 1)
      return rw.fail("value must be a tensor with one element");
    onnxType = dense.getElementType();
    Type signless = signlessType(onnxType);
    if (signless != onnxType)
      dense = dense.bitcast(signless);
    value = dense.getValues<Attribute>()[0];
  }
  return rw.replace(splatConstant(rw.b(), rw.loc(), *shape, value), onnxType);
}

LogicalResult convertRange(NodeRewriter &rw) {
  for (unsigned i = 0; i < 3; ++i) {
    if (failed(rw.requireInput(i, i == 0   ? "start"
                                  : i == 1 ? "limit"
                                           : "delta")))
      return failure();
    if (rw.inputType(i).getNumElements() != 1)
      return rw.fail("start, limit and delta must be scalars");
    if (rw.onnxElementType(i) != rw.onnxElementType(0))
      return rw.fail("start, limit and delta have different element types");
  }
  SmallVector<DenseElementsAttr> c = constantInputs(rw, {0, 1, 2});
  if (c.empty())
    return rw.fail("start, limit and delta must be compile-time constants: "
                   "the output length depends on them");
  Type t = rw.inputType(0).getElementType();
  OpBuilder &b = rw.b();
  int64_t count;
  SmallVector<Attribute> values;
  if (isa<FloatType>(t)) {
    double start = firstDouble(c[0]), limit = firstDouble(c[1]),
           delta = firstDouble(c[2]);
    if (delta == 0)
      return rw.fail("delta must not be 0");
    double n = std::ceil((limit - start) / delta);
    if (!(n <= static_cast<double>(kRangeLimit)))
      return rw.unsupported("ranges of more than " + Twine(kRangeLimit) +
                            " elements");
    count = std::max<int64_t>(0, static_cast<int64_t>(n));
    for (int64_t i = 0; i < count; ++i)
      values.push_back(FloatAttr::get(t, start + i * delta));
  } else if (isa<IntegerType>(t) && !t.isInteger(1)) {
    int64_t start = firstInt64(c[0]), limit = firstInt64(c[1]),
            delta = firstInt64(c[2]);
    if (delta == 0)
      return rw.fail("delta must not be 0");
    // In 128 bits so that extreme bounds cannot overflow.
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 n =
        span / delta + ((span % delta != 0) && ((span > 0) == (delta > 0)));
    if (n > kRangeLimit)
      return rw.unsupported("ranges of more than " + Twine(kRangeLimit) +
                            " elements");
    count = std::max<int64_t>(0, static_cast<int64_t>(n));
    for (int64_t i = 0; i < count; ++i)
      values.push_back(IntegerAttr::get(t, start + i * delta));
  } else {
    return rw.fail("unsupported element type " +
                   typeStr(rw.onnxElementType(0)));
  }
  auto type = RankedTensorType::get({count}, t);
  return rw.replace(
      createConstant(b, rw.loc(), DenseElementsAttr::get(type, values)),
      rw.onnxElementType(0));
}

//===--- identity-like ----------------------------------------------------===//

LogicalResult convertIdentity(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  return replaceLike(rw, rw.input(0));
}

/// Inference-mode dropout: the output is the input and the mask is all
/// ones (every element kept).
LogicalResult convertDropout(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "data")))
    return failure();
  if (rw.version() >= 12 && rw.hasInput(2)) {
    // Training mode drops elements at random, unless the ratio is 0.
    DenseElementsAttr ratio =
        rw.hasInput(1) ? getDenseConstant(rw.input(1)) : DenseElementsAttr();
    DenseElementsAttr training = getDenseConstant(rw.input(2));
    if ((ratio && ratio.getNumElements() != 1) ||
        (training && training.getNumElements() != 1))
      return rw.fail("ratio and training_mode must be scalars");
    bool zeroRatio = ratio && firstDouble(ratio) == 0.0;
    if (!zeroRatio && !training)
      return rw.unsupported("training_mode computed at run time");
    if (!zeroRatio && firstInt64(training) != 0) {
      if (rw.hasInput(1) && !ratio)
        return rw.unsupported("training-mode dropout whose ratio is "
                              "computed at run time (only a ratio of 0, "
                              "which keeps every element, compiles)");
      return rw.unsupported("training-mode dropout with a non-zero ratio "
                            "(random masks)");
    }
  }
  SmallVector<Value> results = {rw.input(0)};
  SmallVector<Type> onnxTypes = {rw.onnxElementType(0)};
  if (rw.getOp().getNumResults() > 1) {
    // Before opset 10 the mask has the data type.
    Type maskType = rw.declaredResultElementType(1);
    if (!maskType)
      maskType =
          rw.version() >= 10 ? rw.b().getI1Type() : rw.onnxElementType(0);
    Attribute one = scalarAttr(signlessType(maskType), 1.0);
    results.push_back(
        splatConstant(rw.b(), rw.loc(), rw.inputType(0).getShape(), one));
    onnxTypes.push_back(maskType);
  }
  return rw.replace(results, onnxTypes);
}

LogicalResult convertConstant(NodeRewriter &rw) {
  // sparse_value arrives as `value`: the importer densifies it.
  if (rw.hasAttr("value_string") || rw.hasAttr("value_strings"))
    return rw.unsupported("string constants");
  OpBuilder &b = rw.b();
  ElementsAttr value;
  if (ElementsAttr t = rw.getTensor("value")) {
    value = t;
  } else if (rw.hasAttr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   rw.getFloat("value_float", 0));
  } else if (rw.hasAttr("value_floats")) {
    SmallVector<float> v = rw.getFloats("value_floats");
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (rw.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   rw.getInt("value_int", 0));
  } else if (rw.hasAttr("value_ints")) {
    SmallVector<int64_t> v = rw.getInts("value_ints");
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getI64Type()),
        ArrayRef<int64_t>(v));
  } else {
    return rw.fail("has no value attribute");
  }
  auto type = cast<RankedTensorType>(value.getType());
  Type onnxType = type.getElementType();
  Type signless = signlessType(onnxType);
  if (signless != onnxType) {
    auto newType = type.clone(signless);
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      value = dense.bitcast(signless);
    else if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
      value = DenseResourceElementsAttr::get(newType, res.getRawHandle());
    else
      return rw.unsupported("this kind of constant of unsigned type");
  }
  return rw.replace(
      arith::ConstantOp::create(b, rw.loc(), cast<TypedAttr>(value))
          .getResult(),
      onnxType);
}

//===--- scans and masks --------------------------------------------------===//

/// CumSum as a generic with a reduction over a second copy of the axis:
/// out[i] = sum of x[j] for j before (or after, reversed) i. Quadratic in
/// the axis length, but a plain linalg op that tiles and vectorizes.
LogicalResult convertCumSum(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "x")))
    return failure();
  FailureOr<SmallVector<int64_t>> axisValue = rw.constantInts(1, "axis");
  if (failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return rw.fail("axis must be a scalar");
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank == 0)
    return rw.fail("x must have rank >= 1");
  FailureOr<int64_t> axis = rw.normalizeAxis((*axisValue)[0], rank);
  if (failed(axis))
    return failure();
  Type t = type.getElementType();
  if (t.isInteger(1))
    return rw.fail("x must be numeric, not bool");
  bool exclusive = rw.getInt("exclusive", 0) != 0;
  bool reverse = rw.getInt("reverse", 0) != 0;
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (type.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> xExprs;
  for (int64_t d = 0; d < rank; ++d)
    xExprs.push_back(b.getAffineDimExpr(d == *axis ? rank : d));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, xExprs, ctx),
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = createFilled(b, loc, type.getShape(), t, scalarAttr(t, 0));
  arith::CmpIPredicate pred =
      reverse
          ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
          : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  int64_t a = *axis;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), rw.input(0), init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value i = loopIndex(nb, nloc, a), j = loopIndex(nb, nloc, rank);
        Value take = arith::CmpIOp::create(nb, nloc, pred, j, i);
        Value zero = scalarConstant(nb, nloc, t, 0);
        Value x = arith::SelectOp::create(nb, nloc, take, args[0], zero);
        Value sum =
            isa<FloatType>(t)
                ? arith::AddFOp::create(nb, nloc, args[1], x)
                : arith::AddIOp::create(nb, nloc, args[1], x).getResult();
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return replaceLike(rw, generic.getResult(0));
}

LogicalResult convertTrilu(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2)
    return rw.fail("input must have rank >= 2");
  bool upper = rw.getInt("upper", 1) != 0;
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  SmallVector<Value> inputs = {rw.input(0)};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  std::optional<int64_t> k = 0;
  if (rw.hasInput(1)) {
    if (rw.inputType(1).getNumElements() != 1 ||
        !isa<IntegerType>(rw.inputType(1).getElementType()))
      return rw.fail("k must be an int64 scalar");
    if (DenseElementsAttr c = getDenseConstant(rw.input(1))) {
      k = firstInt64(c);
    } else {
      k.reset();
      inputs.push_back(reshapeTo(b, loc, rw.input(1), {}));
      maps.push_back(AffineMap::get(rank, 0, {}, b.getContext()));
    }
  }
  if (type.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));
  Type t = type.getElementType();
  Value result = buildGeneric(
      b, loc, inputs, maps, type.getShape(), t,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value i = loopIndex(nb, nloc, rank - 2);
        Value j = loopIndex(nb, nloc, rank - 1);
        Value diff = arith::SubIOp::create(nb, nloc, j, i);
        Value kv =
            k ? indexConst(nb, nloc, *k)
              : arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), args[1])
                    .getResult();
        Value keep = arith::CmpIOp::create(nb, nloc,
                                           upper ? arith::CmpIPredicate::sge
                                                 : arith::CmpIPredicate::sle,
                                           diff, kv);
        return arith::SelectOp::create(nb, nloc, keep, args[0],
                                       scalarConstant(nb, nloc, t, 0));
      });
  return replaceLike(rw, result);
}

//===--- generators -------------------------------------------------------===//

/// EyeLike: ones on diagonal k of a 2-D tensor shaped like the input.
LogicalResult convertEyeLike(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  auto type = rw.inputType(0);
  if (type.getRank() != 2)
    return rw.fail("input must have rank 2, not " + Twine(type.getRank()));
  FailureOr<Type> onnxType = dtypeAttr(rw, "dtype", rw.onnxElementType(0));
  if (failed(onnxType))
    return failure();
  Type t = signlessType(*onnxType);
  int64_t k = rw.getInt("k", 0);
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (type.getNumElements() == 0)
    return rw.replace(createEmpty(b, loc, type.getShape(), t), *onnxType);
  Value result = buildGeneric(
      b, loc, {}, {}, type.getShape(), t,
      [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
        Value diff = arith::SubIOp::create(nb, nloc, loopIndex(nb, nloc, 1),
                                           loopIndex(nb, nloc, 0));
        Value onDiagonal = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::eq, diff, indexConst(nb, nloc, k));
        return arith::SelectOp::create(nb, nloc, onDiagonal,
                                       scalarConstant(nb, nloc, t, 1),
                                       scalarConstant(nb, nloc, t, 0));
      });
  return rw.replace(result, *onnxType);
}

/// OneHot: a new axis of `depth` entries, `on` where it equals the index
/// (negative indices count from the end), `off` elsewhere.
LogicalResult convertOneHot(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "indices")) ||
      failed(rw.requireInput(1, "depth")) ||
      failed(rw.requireInput(2, "values")))
    return failure();
  auto idxType = rw.inputType(0);
  Type idxElem = idxType.getElementType();
  if (idxElem.isInteger(1))
    return rw.fail("indices must be numbers, not booleans");
  DenseElementsAttr depthAttr = getDenseConstant(rw.input(1));
  if (!depthAttr)
    return rw.fail("depth must be a compile-time constant (it sizes the "
                   "output); it is computed at run time");
  if (depthAttr.getNumElements() != 1)
    return rw.fail("depth must hold one value");
  double depthValue = firstDouble(depthAttr);
  int64_t depth = static_cast<int64_t>(depthValue);
  if (depth < 1)
    return rw.fail("depth must be positive; it is " + Twine(depth));
  auto valuesType = rw.inputType(2);
  if (valuesType.getNumElements() != 2)
    return rw.fail("values must hold two elements (off, on), not " +
                   Twine(valuesType.getNumElements()));
  int64_t rank = idxType.getRank() + 1;
  FailureOr<int64_t> axis = rw.normalizeAxis(rw.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(idxType.getShape());
  shape.insert(shape.begin() + *axis, depth);
  if (failed(checkShapeSize(rw, shape)))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = valuesType.getElementType();
  if (numElements(shape) == 0)
    return replaceWithEmpty(rw, shape, 2);
  Value values = reshapeTo(b, loc, rw.input(2), {2});
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      idxExprs.push_back(b.getAffineDimExpr(d));
  AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, b.getContext());
  bool isUnsigned = rw.isUnsigned(0);
  Value result = buildGeneric(
      b, loc, rw.input(0), idxMap, shape, t,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value idx = args[0];
        Type i64 = nb.getI64Type();
        if (isa<FloatType>(idx.getType()))
          idx = arith::FPToSIOp::create(nb, nloc, i64, idx);
        else if (idx.getType() != i64)
          idx = isUnsigned
                    ? arith::ExtUIOp::create(nb, nloc, i64, idx).getResult()
                    : arith::ExtSIOp::create(nb, nloc, i64, idx).getResult();
        Value i = arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), idx);
        Value zero = indexConst(nb, nloc, 0);
        Value neg =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, i, zero);
        Value wrapped =
            arith::AddIOp::create(nb, nloc, i, indexConst(nb, nloc, depth));
        i = arith::SelectOp::create(nb, nloc, neg, wrapped, i);
        Value hot = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, i,
                                          loopIndex(nb, nloc, *axis));
        Value off = tensor::ExtractOp::create(nb, nloc, values,
                                              indexConst(nb, nloc, 0));
        Value on = tensor::ExtractOp::create(nb, nloc, values,
                                             indexConst(nb, nloc, 1));
        return arith::SelectOp::create(nb, nloc, hot, on, off);
      });
  return replaceLike(rw, result, 2);
}

/// CenterCropPad: each listed axis cropped or zero-padded to its target
/// size around the center (the extra element of an odd difference goes to
/// the end).
LogicalResult convertCenterCropPad(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input_data")))
    return failure();
  FailureOr<SmallVector<int64_t>> target = rw.constantInts(1, "shape");
  if (failed(target))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes = rw.getInts("axes");
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(rw, axes, rank);
  if (failed(normalized))
    return failure();
  if (normalized->size() != target->size())
    return rw.fail("shape has " + Twine(target->size()) + " entries for " +
                   Twine(normalized->size()) + " axes");
  SmallVector<int64_t> shape(type.getShape());
  // Output index o reads input index o + offset along each axis.
  SmallVector<int64_t> offset(rank, 0);
  for (auto [a, size] : llvm::zip(*normalized, *target)) {
    if (size < 0)
      return rw.fail("shape entry " + Twine(size) + " is negative");
    int64_t dim = shape[a];
    offset[a] = size <= dim ? (dim - size) / 2 : -((size - dim) / 2);
    shape[a] = size;
  }
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = type.getElementType();
  if (numElements(shape) == 0 || type.getNumElements() == 0)
    return replaceLike(rw, createFilled(b, loc, shape, t, scalarAttr(t, 0)));
  Value input = rw.input(0);
  Value result = buildGeneric(
      b, loc, {}, {}, shape, t,
      [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
        SmallVector<Value> coords;
        Value inside;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = loopIndex(nb, nloc, d);
          if (offset[d] == 0 && shape[d] <= type.getDimSize(d)) {
            coords.push_back(i);
            continue;
          }
          i = arith::AddIOp::create(nb, nloc, i,
                                    indexConst(nb, nloc, offset[d]));
          if (shape[d] > type.getDimSize(d)) {
            // Padded: zero outside the input.
            Value lo =
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, i,
                                      indexConst(nb, nloc, 0));
            Value hi =
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, i,
                                      indexConst(nb, nloc, type.getDimSize(d)));
            Value in = arith::AndIOp::create(nb, nloc, lo, hi);
            inside =
                inside ? arith::AndIOp::create(nb, nloc, inside, in).getResult()
                       : in;
            i = arith::MaxSIOp::create(nb, nloc, i, indexConst(nb, nloc, 0));
            i = arith::MinSIOp::create(
                nb, nloc, i, indexConst(nb, nloc, type.getDimSize(d) - 1));
          }
          coords.push_back(i);
        }
        Value v = tensor::ExtractOp::create(nb, nloc, input, coords);
        if (!inside)
          return v;
        return arith::SelectOp::create(nb, nloc, inside, v,
                                       scalarConstant(nb, nloc, t, 0));
      });
  return replaceLike(rw, result);
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] entries of
/// batch entry b in reverse order, the rest as they are.
LogicalResult convertReverseSequence(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")) ||
      failed(rw.requireInput(1, "sequence_lens")) ||
      failed(requireIndices(rw, 1)))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2)
    return rw.fail("input must have rank 2 or more, not " + Twine(rank));
  int64_t batchAxis = rw.getInt("batch_axis", 1);
  int64_t timeAxis = rw.getInt("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return rw.fail("batch_axis and time_axis must be 0 and 1 or 1 and 0; "
                   "they are " +
                   Twine(batchAxis) + " and " + Twine(timeAxis));
  int64_t batch = type.getDimSize(batchAxis), steps = type.getDimSize(timeAxis);
  if (rw.inputType(1).getRank() != 1 || rw.inputType(1).getDimSize(0) != batch)
    return rw.fail("sequence_lens must have shape [" + Twine(batch) + "]");
  if (DenseElementsAttr lens = getConstantTable(rw.input(1)))
    for (int64_t len : toInt64Vector(lens))
      if (len < 0 || len > steps)
        return rw.fail("sequence_lens entry " + Twine(len) +
                       " is outside [0, " + Twine(steps) + "]");
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (type.getNumElements() == 0)
    return replaceLike(rw, rw.input(0));
  Value input = rw.input(0), lens = rw.input(1);
  Value result = buildGeneric(
      b, loc, {}, {}, type.getShape(), type.getElementType(),
      [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(loopIndex(nb, nloc, d));
        Value len =
            tensor::ExtractOp::create(nb, nloc, lens, coords[batchAxis]);
        // A length out of range is clamped (the kernel must stay in bounds).
        len = wrapAndClamp(nb, nloc, len, steps + 1);
        Value t = coords[timeAxis];
        Value reversed = arith::SubIOp::create(
            nb, nloc,
            arith::SubIOp::create(nb, nloc, len, indexConst(nb, nloc, 1)), t);
        Value inPrefix =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, t, len);
        coords[timeAxis] =
            arith::SelectOp::create(nb, nloc, inPrefix, reversed, t);
        return tensor::ExtractOp::create(nb, nloc, input, coords);
      });
  return replaceLike(rw, result);
}

/// HannWindow, HammingWindow, BlackmanWindow: a constant of `size` values
/// (size must be known at compile time; it sizes the output).
enum class Window { Hann, Hamming, Blackman };
template <Window kind> LogicalResult convertWindow(NodeRewriter &rw) {
  FailureOr<SmallVector<int64_t>> size = rw.constantInts(0, "size");
  if (failed(size))
    return failure();
  if (size->size() != 1 || size->front() < 0)
    return rw.fail("size must hold one non-negative integer");
  FailureOr<Type> onnxType =
      dtypeAttr(rw, "output_datatype", Float32Type::get(rw.ctx()));
  if (failed(onnxType))
    return failure();
  int64_t n = size->front();
  if (n > kRangeLimit)
    return rw.fail("size " + Twine(n) + " is above the " + Twine(kRangeLimit) +
                   " elements dlc folds");
  Type t = signlessType(*onnxType);
  // A periodic window is one period of a window one longer.
  double period = rw.getInt("periodic", 1) ? n : n - 1;
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double x = period > 0 ? 2 * M_PI * i / period : 0;
    double w = kind == Window::Hann ? 0.5 - 0.5 * std::cos(x)
               : kind == Window::Hamming
                   ? 25.0 / 46 - 21.0 / 46 * std::cos(x)
                   : 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
    values.push_back(scalarAttr(t, isa<FloatType>(t) ? w : std::trunc(w)));
  }
  auto type = RankedTensorType::get({n}, t);
  return rw.replace(
      createConstant(rw.b(), rw.loc(), DenseElementsAttr::get(type, values)),
      *onnxType);
}

} // namespace

void dlc::populateShapeHandlers(HandlerRegistry &r) {
  r.add("Reshape", {1, 5, 13, 14, 19, 21, 23, 24}, convertReshape);
  r.add("EyeLike", {9, 22}, convertEyeLike);
  r.add("OneHot", {9, 11}, convertOneHot);
  r.add("CenterCropPad", {18}, convertCenterCropPad);
  r.add("ReverseSequence", {10}, convertReverseSequence);
  r.add("HannWindow", {17}, convertWindow<Window::Hann>);
  r.add("HammingWindow", {17}, convertWindow<Window::Hamming>);
  r.add("BlackmanWindow", {17}, convertWindow<Window::Blackman>);
  r.add("Flatten", {1, 9, 11, 13, 21, 23, 24}, convertFlatten);
  r.add("Squeeze", {1, 11, 13, 21, 23, 24}, convertSqueeze);
  r.add("Unsqueeze", {1, 11, 13, 21, 23, 24}, convertUnsqueeze);
  r.add("Transpose", {1, 13, 21, 23, 24}, convertTranspose);
  r.add("DepthToSpace", {1, 11, 13}, convertDepthToSpace);
  r.add("SpaceToDepth", {1, 13}, convertSpaceToDepth);
  r.add("Concat", {1, 4, 11, 13}, convertConcat);
  r.add("Split", {1, 2, 11, 13, 18}, convertSplit);
  r.add("Slice", {1, 10, 11, 13}, convertSlice);
  r.add("Gather", {1, 11, 13}, convertGather);
  r.add("GatherElements", {11, 13}, convertGatherElements);
  r.add("GatherND", {11, 12, 13}, convertGatherND);
  r.add("Compress", {9, 11}, convertCompress);
  r.add("ScatterND", {11, 13, 16, 18}, convertScatterND);
  r.add("ScatterElements", {11, 13, 16, 18}, convertScatterElements);
  r.add("TensorScatter", {24}, convertTensorScatter);
  r.add("Scatter", {9, 11}, convertScatterElements);
  r.add("Expand", {8, 13}, convertExpand);
  r.add("Tile", {1, 6, 13}, convertTile);
  r.add("Pad", {1, 2, 11, 13, 18, 19, 21, 23, 24}, convertPad);
  r.add("Shape", {1, 13, 15, 19, 21, 23, 24}, convertShape);
  r.add("Size", {1, 13, 19, 21, 23, 24}, convertSize);
  r.add("ConstantOfShape", {9, 20, 21, 23, 24}, convertConstantOfShape);
  r.add("Range", {11}, convertRange);
  r.add("Identity", {1, 13, 14, 16, 19, 21, 23, 24}, convertIdentity);
  r.add("Dropout", {1, 6, 7, 10, 12, 13, 22}, convertDropout);
  r.add("Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24}, convertConstant);
  r.add("CumSum", {11, 14}, convertCumSum);
  r.add("Trilu", {14}, convertTrilu);
}
