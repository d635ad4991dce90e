//===- SparseContractions.cpp - the dlc-sparse-contractions pass ----------===//
//
// A pruned convolution or matrix product multiplies most of its inputs by
// zero, and the zeros are known when the kernel is generated. This pass
// gives each group of outputs (4 filters of a convolution, a vector of a
// matrix product's columns) the list of reduction inputs where any of them
// is nonzero, and rewrites the op to read only those through a table:
// out[n, f, p] += w[f, j] * x[n, idx[f, j + 1], p] for a 1x1 convolution
// (pixels collapsed), x read at the table's offset + y * W + x for a
// larger window (on x's phases when strided), and out[m, g, l] +=
// x[m, idx[g, j + 1]] * w[g, j, l] for a matrix product. The weights are
// compressed alongside, padded to the longest list with weight 0. A cost
// model decides per layer: the kept share of the multiply-adds at what a
// sparse step costs (over the share of vector lanes at work), plus the
// memory traffic both kernels have; its numbers come from the target
// (measured by scripts/sparse_bench.py). dlc-cpu-sparse-tile writes the
// register-tiled loop nest of the rewritten op.
//===----------------------------------------------------------------------===//

#include "ConstantWeights.h"

#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

namespace dlc {
#define GEN_PASS_DEF_SPARSECONTRACTIONS
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The kept input channels of each group of `rows` filters of a [F, C]
/// filter (row-major), in increasing order (or, for a matrix product's
/// [N, K] weight, the kept reduction indices of each group of columns).
std::vector<std::vector<int32_t>>
keptChannels(const std::vector<float> &w, int64_t f, int64_t c, int64_t rows) {
  std::vector<std::vector<int32_t>> kept(f / rows);
  for (int64_t g = 0; g < f / rows; ++g)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t r = 0; r < rows; ++r)
        if (w[(g * rows + r) * c + ch] != 0.0f) {
          kept[g].push_back(static_cast<int32_t>(ch));
          break;
        }
  return kept;
}

struct SparseContractionsPass
    : public dlc::impl::SparseContractionsBase<SparseContractionsPass> {
  using Base::Base;

  /// Whether `conv` has the form this pass rewrites: static shapes, a 1x1
  /// filter, unit strides, a whole number of row groups.
  bool matches(linalg::Conv2DNchwFchwOp conv) const {
    auto x = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
    auto w = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
    auto out = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
    if (!x || !w || !out || !x.hasStaticShape() || !w.hasStaticShape() ||
        !out.hasStaticShape() || !x.getElementType().isF32() ||
        !w.getElementType().isF32() || !out.getElementType().isF32() ||
        !conv.hasPureTensorSemantics())
      return false;
    if (w.getDimSize(0) % rows != 0)
      return false;
    auto ones = [](DenseIntElementsAttr a) {
      return llvm::all_of(a.getValues<int64_t>(),
                          [](int64_t v) { return v == 1; });
    };
    // One stride for both dims; a 1x1 filter only at stride 1. The
    // table's entries (offsets into x, or into its phases) are i32.
    int64_t stride = strideOf(conv);
    if (!stride || !ones(conv.getDilations()) ||
        (stride > 1 && w.getDimSize(2) == 1 && w.getDimSize(3) == 1))
      return false;
    return (x.getDimSize(2) - w.getDimSize(2)) / stride + 1 ==
               out.getDimSize(2) &&
           (x.getDimSize(3) - w.getDimSize(3)) / stride + 1 ==
               out.getDimSize(3) &&
           x.getNumElements() * stride * stride < (int64_t(1) << 31);
  }

  /// The convolution's stride when both dims have the same one, else 0.
  static int64_t strideOf(linalg::Conv2DNchwFchwOp conv) {
    SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
    return strides.size() == 2 && strides[0] == strides[1] && strides[0] >= 1
               ? strides[0]
               : 0;
  }

  /// x [N, C, H, W] split into its stride x stride phases, flattened per
  /// image: [N, S * S * C * Hs * Ws] holding x[n, c, S * y + py, S * x + px]
  /// at ((py * S + px) * C + c) * Hs * Ws + y * Ws + x (x padded with
  /// zeros at the bottom and right to S * Hs x S * Ws first, where it is
  /// smaller). A stride-S window then reads each tap as a contiguous run:
  /// tap (kh, kw) of output pixel (y, x) is phase (kh mod S, kw mod S) at
  /// (y + kh / S, x + kw / S). Its own kernel (dlc.materialize): one pass
  /// over x.
  Value phases(OpBuilder &b, Location loc, Value x, int64_t stride, int64_t hs,
               int64_t ws) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    int64_t h = type.getDimSize(2), w = type.getDimSize(3);
    Type f32 = b.getF32Type();
    if (h < stride * hs || w < stride * ws) {
      auto paddedType = RankedTensorType::get(
          {n, c, std::max(h, stride * hs), std::max(w, stride * ws)}, f32);
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
      x = tensor::createPadHighOp(paddedType, x, zero, /*nofold=*/false, loc,
                                  b);
    }
    auto splitType = RankedTensorType::get({n, stride, stride, c, hs, ws}, f32);
    Value empty =
        tensor::EmptyOp::create(b, loc, splitType.getShape(), f32).getResult();
    MLIRContext *ctx = b.getContext();
    AffineExpr dn, dpy, dpx, dc, dy, dx;
    bindDims(ctx, dn, dpy, dpx, dc, dy, dx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(6, 0, {dn, dc, dy * stride + dpy, dx * stride + dpx},
                       ctx),
        AffineMap::getMultiDimIdentityMap(6, ctx)};
    SmallVector<utils::IteratorType> iterators(6,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{splitType}, ValueRange{x}, ValueRange{empty}, maps,
        iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, args[0]);
        });
    generic->setAttr(dlc::kMaterializeAttr, b.getUnitAttr());
    return tensor::CollapseShapeOp::create(
        b, loc, generic.getResult(0),
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3, 4, 5}});
  }

  /// The op's output `init` seen as `type` (`groups` collapse or expand
  /// it): a fill stays a fill, of the new shape, so that dispatch
  /// formation takes it in; anything else is reshaped.
  static Value reshapedInit(OpBuilder &b, Location loc, Value init,
                            RankedTensorType type,
                            ArrayRef<ReassociationIndices> groups) {
    if (auto fill = init.getDefiningOp<linalg::FillOp>())
      return linalg::FillOp::create(
                 b, loc, fill.getInputs()[0],
                 tensor::EmptyOp::create(b, loc, type.getShape(),
                                         type.getElementType())
                     .getResult())
          .getResult(0);
    if (type.getRank() < cast<RankedTensorType>(init.getType()).getRank())
      return tensor::CollapseShapeOp::create(b, loc, init, groups);
    return tensor::ExpandShapeOp::create(b, loc, type, init, groups);
  }

  /// A convolution's compressed filter [F, J] and table [F, J + 1] (per
  /// filter: its group's count, then `entry` of each kept reduction index;
  /// padded to the longest list J with entry 0 and weight 0), as
  /// constants.
  std::pair<Value, Value>
  rowTables(OpBuilder &b, Location loc, const std::vector<float> &w, int64_t f,
            int64_t reduction, const std::vector<std::vector<int32_t>> &kept,
            function_ref<int64_t(int64_t)> entry, StringRef key) const {
    int64_t longest = 1;
    for (const std::vector<int32_t> &k : kept)
      longest = std::max<int64_t>(longest, k.size());
    std::vector<float> compressed(f * longest, 0.0f);
    std::vector<int32_t> table(f * (longest + 1), 0);
    for (int64_t row = 0; row < f; ++row) {
      const std::vector<int32_t> &k = kept[row / rows];
      table[row * (longest + 1)] = static_cast<int32_t>(k.size());
      for (auto [j, r] : llvm::enumerate(k)) {
        compressed[row * longest + j] = w[row * reduction + r];
        table[row * (longest + 1) + 1 + j] = static_cast<int32_t>(entry(r));
      }
    }
    Value weights = dlc::createF32Constant(
        b, loc, RankedTensorType::get({f, longest}, b.getF32Type()), compressed,
        key, ".sparse");
    auto tableType = RankedTensorType::get({f, longest + 1}, b.getI32Type());
    Value indices = arith::ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(tableType, ArrayRef(table)));
    return {weights, indices};
  }

  /// The sparse op: out += w * x, the weights and the table read through
  /// `maps`, x by `read` in the body (from the loop indices and the table
  /// entry, an index); marked with its group and its kept pairs of `all`
  /// for dlc-cpu-sparse-tile and --stats.
  linalg::GenericOp
  buildSparse(OpBuilder &b, Location loc, Type resultType, Value weights,
              Value table, Value init, ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iterators,
              function_ref<Value(OpBuilder &, Location, Value)> read,
              int64_t group, const std::vector<std::vector<int32_t>> &kept,
              int64_t all) {
    auto fastmath =
        arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{resultType}, ValueRange{weights, table},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value entry =
              arith::IndexCastOp::create(nb, l, nb.getIndexType(), args[1]);
          Value in = read(nb, l, entry);
          Value product = arith::MulFOp::create(nb, l, in, args[0], fastmath);
          Value sum = arith::AddFOp::create(nb, l, args[2], product, fastmath);
          linalg::YieldOp::create(nb, l, sum);
        });
    generic->setAttr(dlc::kSparseRowsAttr, b.getI64IntegerAttr(group));
    int64_t pairs = 0;
    for (const std::vector<int32_t> &k : kept)
      pairs += k.size();
    generic->setAttr(dlc::kSparsePairsAttr,
                     b.getDenseI64ArrayAttr({pairs, all}));
    ++numSparse;
    return generic;
  }

  /// A convolution with a window larger than 1x1: out[n, f, y, x] +=
  /// w[f, j] * x[n, idx[f, j + 1] + y * W + x] on x flattened per image
  /// ([N, C * H * W], H and W its padded size), each kept (channel, tap)
  /// an offset c * H * W + kh * W + kw in the table; strided, on x's
  /// phases (phases()). Vectors run along the output's rows x (each window
  /// tap a contiguous run of x).
  void rewriteWindow(linalg::Conv2DNchwFchwOp conv, const std::vector<float> &w,
                     const std::vector<std::vector<int32_t>> &kept,
                     StringRef key) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto xType = cast<RankedTensorType>(conv.getInputs()[0].getType());
    auto wType = cast<RankedTensorType>(conv.getInputs()[1].getType());
    auto outType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
    int64_t c = xType.getDimSize(1);
    int64_t f = wType.getDimSize(0), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3);
    // Stride 1: x as it is; else its phases, each (Ho + (KH - 1) / S) x
    // (Wo + (KW - 1) / S).
    int64_t stride = strideOf(conv);
    int64_t h = xType.getDimSize(2), width = xType.getDimSize(3);
    if (stride > 1) {
      h = outType.getDimSize(2) + (kh - 1) / stride;
      width = outType.getDimSize(3) + (kw - 1) / stride;
    }
    int64_t reduction = c * kh * kw;
    auto [weights, indices] = rowTables(
        b, loc, w, f, reduction, kept,
        [&](int64_t r) {
          int64_t ch = r / (kh * kw), ty = r % (kh * kw) / kw, tx = r % kw;
          int64_t phase = (ty % stride) * stride + tx % stride;
          return (phase * c + ch) * h * width + (ty / stride) * width +
                 tx / stride;
        },
        key);
    Value x = stride > 1
                  ? phases(b, loc, conv.getInputs()[0], stride, h, width)
                  : tensor::CollapseShapeOp::create(
                        b, loc, conv.getInputs()[0],
                        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}})
                        .getResult();
    Value init = conv.getOutputs()[0];
    MLIRContext *ctx = b.getContext();
    AffineExpr dn, df, dj, dy, dx;
    bindDims(ctx, dn, df, dj, dy, dx);
    SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {df, dj}, ctx),
                                   AffineMap::get(5, 0, {df, dj + 1}, ctx),
                                   AffineMap::get(5, 0, {dn, df, dy, dx}, ctx)};
    SmallVector<utils::IteratorType> iterators(5,
                                               utils::IteratorType::parallel);
    iterators[2] = utils::IteratorType::reduction;
    auto generic = buildSparse(
        b, loc, init.getType(), weights, indices, init, maps, iterators,
        [&](OpBuilder &nb, Location l, Value offset) -> Value {
          Value batch = linalg::IndexOp::create(nb, l, 0);
          Value y = linalg::IndexOp::create(nb, l, 3);
          Value xi = linalg::IndexOp::create(nb, l, 4);
          Value rowStart = arith::MulIOp::create(
              nb, l, y, arith::ConstantIndexOp::create(nb, l, width));
          Value at = arith::AddIOp::create(
              nb, l, arith::AddIOp::create(nb, l, offset, rowStart), xi);
          return tensor::ExtractOp::create(nb, l, x, ValueRange{batch, at});
        },
        rows, kept, f / rows * reduction);
    conv.getResult(0).replaceAllUsesWith(generic.getResult(0));
    conv.erase();
  }

  void rewrite(linalg::Conv2DNchwFchwOp conv, const std::vector<float> &w,
               const std::vector<std::vector<int32_t>> &kept, StringRef key) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    auto xType = cast<RankedTensorType>(conv.getInputs()[0].getType());
    auto outType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
    int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
    int64_t f = outType.getDimSize(1);
    int64_t pixels = xType.getDimSize(2) * xType.getDimSize(3);
    auto [weights, indices] =
        rowTables(b, loc, w, f, c, kept, [](int64_t ch) { return ch; }, key);
    SmallVector<ReassociationIndices> pixelsCollapsed = {{0}, {1}, {2, 3}};
    Value x = tensor::CollapseShapeOp::create(b, loc, conv.getInputs()[0],
                                              pixelsCollapsed);
    auto initType = RankedTensorType::get({n, f, pixels}, b.getF32Type());
    Value init =
        reshapedInit(b, loc, conv.getOutputs()[0], initType, pixelsCollapsed);
    MLIRContext *ctx = b.getContext();
    AffineExpr dn, df, dj, dp;
    bindDims(ctx, dn, df, dj, dp);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {df, dj}, ctx),
                                   AffineMap::get(4, 0, {df, dj + 1}, ctx),
                                   AffineMap::get(4, 0, {dn, df, dp}, ctx)};
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::reduction, utils::IteratorType::parallel};
    auto generic = buildSparse(
        b, loc, initType, weights, indices, init, maps, iterators,
        [&](OpBuilder &nb, Location l, Value channel) -> Value {
          Value batch = linalg::IndexOp::create(nb, l, 0);
          Value pixel = linalg::IndexOp::create(nb, l, 3);
          return tensor::ExtractOp::create(nb, l, x,
                                           ValueRange{batch, channel, pixel});
        },
        rows, kept, f / rows * c);
    Value result = tensor::ExpandShapeOp::create(
        b, loc, outType, generic.getResult(0), pixelsCollapsed);
    conv.getResult(0).replaceAllUsesWith(result);
    conv.erase();
  }

  /// Whether the cost model (or force) makes a layer of `outputs` x
  /// `reduction` weights sparse, with groups of `group` outputs keeping
  /// `kept` lists.
  bool worthIt(const std::vector<std::vector<int32_t>> &kept, int64_t outputs,
               int64_t reduction, int64_t group, double laneUse = 1.0) const {
    int64_t pairs = 0;
    for (const std::vector<int32_t> &k : kept)
      pairs += k.size();
    int64_t all = outputs / group * reduction;
    if (force)
      return pairs < all;
    double share = static_cast<double>(pairs) / static_cast<double>(all);
    double products = static_cast<double>(outputs) * reduction;
    double moved = outputCost * static_cast<double>(outputs) +
                   inputCost * static_cast<double>(reduction);
    return (stepCost * share * products / laneUse + moved) /
               (products + moved) <
           maxRatio;
  }

  /// A matrix product x[M, K] * w with a constant w ([K, N], or [N, K]
  /// read transposed: Gemm with transB) whose columns come in groups of
  /// `columns`: the roles of its operands, or nothing.
  struct Product {
    linalg::LinalgOp op;
    bool transposed = false; ///< w is [N, K]
    int64_t m = 0, n = 0, k = 0;
  };
  std::optional<Product> matchProduct(linalg::LinalgOp op) const {
    if (!isa<linalg::MatmulOp>(op) || !op.hasPureTensorSemantics() ||
        op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
      return std::nullopt;
    auto x = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto w = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    auto out = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
    if (!x || !w || !out || !x.hasStaticShape() || !w.hasStaticShape() ||
        !out.hasStaticShape() || !x.getElementType().isF32() ||
        !w.getElementType().isF32() || !out.getElementType().isF32())
      return std::nullopt;
    // Loops (m, n, k): x must be (m, k); w (k, n) or (n, k).
    MLIRContext *ctx = op.getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (maps[0] != AffineMap::get(3, 0, {m, k}, ctx) ||
        maps[2] != AffineMap::get(3, 0, {m, n}, ctx))
      return std::nullopt;
    Product p;
    p.op = op;
    if (maps[1] == AffineMap::get(3, 0, {n, k}, ctx))
      p.transposed = true;
    else if (maps[1] != AffineMap::get(3, 0, {k, n}, ctx))
      return std::nullopt;
    p.m = out.getDimSize(0);
    p.n = out.getDimSize(1);
    p.k = x.getDimSize(1);
    if (p.n % columns != 0)
      return std::nullopt;
    return p;
  }

  /// out[m, g, l] += x[m, idx[g, j + 1]] * w[g, j, l] on the output seen
  /// as [M, N / columns, columns]: each group g of `columns` output columns
  /// (the kernel's vectors) with its count and kept reduction indices in
  /// the table, its compressed weights [J, columns] contiguous.
  void rewriteProduct(const Product &p, const std::vector<float> &wNK,
                      const std::vector<std::vector<int32_t>> &kept,
                      StringRef key) {
    linalg::LinalgOp op = p.op;
    OpBuilder b(op);
    Location loc = op.getLoc();
    int64_t groups = p.n / columns;
    int64_t longest = 1;
    for (const std::vector<int32_t> &k : kept)
      longest = std::max<int64_t>(longest, k.size());
    std::vector<float> compressed(groups * longest * columns, 0.0f);
    std::vector<int32_t> table(groups * (longest + 1), 0);
    for (int64_t g = 0; g < groups; ++g) {
      const std::vector<int32_t> &k = kept[g];
      table[g * (longest + 1)] = static_cast<int32_t>(k.size());
      for (auto [j, r] : llvm::enumerate(k)) {
        table[g * (longest + 1) + 1 + j] = r;
        for (int64_t l = 0; l < columns; ++l)
          compressed[(g * longest + j) * columns + l] =
              wNK[(g * columns + l) * p.k + r];
      }
    }
    Type f32 = b.getF32Type();
    Value weights = dlc::createF32Constant(
        b, loc, RankedTensorType::get({groups, longest, columns}, f32),
        compressed, key, ".sparse");
    auto tableType =
        RankedTensorType::get({groups, longest + 1}, b.getI32Type());
    Value indices = arith::ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(tableType, ArrayRef(table)));
    Value x = op.getDpsInputs()[0];
    auto outType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
    auto initType = RankedTensorType::get({p.m, groups, columns}, f32);
    SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
    Value init = reshapedInit(b, loc, op.getDpsInits()[0], initType, split);
    MLIRContext *ctx = b.getContext();
    AffineExpr dm, dg, dl, dj;
    bindDims(ctx, dm, dg, dl, dj);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {dg, dj, dl}, ctx),
                                   AffineMap::get(4, 0, {dg, dj + 1}, ctx),
                                   AffineMap::get(4, 0, {dm, dg, dl}, ctx)};
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::parallel, utils::IteratorType::reduction};
    auto generic = buildSparse(
        b, loc, initType, weights, indices, init, maps, iterators,
        [&](OpBuilder &nb, Location l, Value r) -> Value {
          Value row = linalg::IndexOp::create(nb, l, 0);
          return tensor::ExtractOp::create(nb, l, x, ValueRange{row, r});
        },
        columns, kept, groups *p.k);
    Value result = tensor::CollapseShapeOp::create(b, loc, outType,
                                                   generic.getResult(0), split);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }

  void runOnOperation() override {
    if (rows < 1 || columns < 1) {
      getOperation().emitError(
          "dlc-sparse-contractions: rows and columns must be >= 1");
      return signalPassFailure();
    }
    SmallVector<Product> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<Product> p = matchProduct(op))
        products.push_back(*p);
    });
    for (Product &p : products) {
      std::string key;
      std::optional<std::vector<float>> w =
          dlc::f32ConstantValues(p.op.getDpsInputs()[1], &key);
      if (!w)
        continue;
      // As [outputs, reduction] = [N, K].
      std::vector<float> wNK = *w;
      if (!p.transposed)
        for (int64_t r = 0; r < p.k; ++r)
          for (int64_t c = 0; c < p.n; ++c)
            wNK[c * p.k + r] = (*w)[r * p.n + c];
      std::vector<std::vector<int32_t>> kept =
          keptChannels(wNK, p.n, p.k, columns);
      if (worthIt(kept, p.n, p.k, columns))
        rewriteProduct(p, wNK, kept, key);
    }
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (matches(conv))
        convs.push_back(conv);
    });
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      std::string key;
      std::optional<std::vector<float>> w =
          dlc::f32ConstantValues(conv.getInputs()[1], &key);
      if (!w)
        continue;
      auto wType = cast<RankedTensorType>(conv.getInputs()[1].getType());
      int64_t f = wType.getDimSize(0);
      int64_t reduction =
          wType.getDimSize(1) * wType.getDimSize(2) * wType.getDimSize(3);
      std::vector<std::vector<int32_t>> kept =
          keptChannels(*w, f, reduction, rows);
      bool pointwise = wType.getDimSize(2) == 1 && wType.getDimSize(3) == 1;
      // Vectors run along the output's pixels (1x1: all of them, a window:
      // its rows), whose last vector is partly masked: the share of lanes
      // at work.
      auto outType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
      int64_t width = outType.getDimSize(3);
      if (pointwise)
        width *= outType.getDimSize(2);
      double laneUse =
          static_cast<double>(width) /
          static_cast<double>((width + columns - 1) / columns * columns);
      // A strided window first splits x into its phases (a kernel of its
      // own) and reads taps from 4 planes: its kept pairs measured at about
      // 2.5 times a stride-1 window's against the dense strided kernel
      // (scripts/sparse_bench.py --windows --stride 2).
      if (strideOf(conv) > 1)
        laneUse /= 2.5;
      if (!worthIt(kept, f, reduction, rows, laneUse))
        continue;
      if (pointwise)
        rewrite(conv, *w, kept, key);
      else
        rewriteWindow(conv, *w, kept, key);
    }
  }
};

} // namespace
