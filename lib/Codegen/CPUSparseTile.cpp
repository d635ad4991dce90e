//===- CPUSparseTile.cpp - the dlc-cpu-sparse-tile pass -------------------===//
//
// dlc-sparse-contractions turns a pruned convolution into
// out[.., f, p] += w[f, j] * x[.., idx[f, j + 1], p] (a window's x read at
// the table's offset + y * W + p): each row's kept inputs listed in a
// table, its weights compressed alongside. Scalar loops over that op would
// gather one pixel at a time. This pass writes its loop nest the way
// dlc-cpu-register-tile writes a dense one: a block of R rows (one row
// group, sharing one list) by `vectors` SIMD vectors of pixels stays in
// registers while a loop runs over the group's kept inputs; each step
// loads the input's vectors of x (contiguous pixels), broadcasts the R
// rows' weights and issues R x vectors fused multiply-adds. The trip count
// comes from the table (idx[f, 0]), so a group does exactly as many steps
// as it keeps inputs, and a padded entry is never read. A pruned matrix
// product's groups are output columns instead (emitColumns): the weights
// are the vectors, x a scalar broadcast per row.
//
//===----------------------------------------------------------------------===//

#include "KernelAnalysis.h"
#include "TileEpilogue.h"

#include "dlc/Codegen/Passes.h"
#include "dlc/Dialect/DLC/IR/DLC.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace dlc {
#define GEN_PASS_DEF_CPUSPARSETILE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The coefficient of loop `d` in the index `v` that `body` computes from
/// linalg.index, affine.apply, index additions and multiplications by
/// constants, and values from outside the body (0); nothing when it is not
/// linear in the loop or depends on a block argument (data). `entry` (the
/// table entry, which the kernel supplies) counts as 0.
std::optional<int64_t> loopCoefficient(Value v, unsigned d, Block &body,
                                       Value entry) {
  if (v == entry)
    return 0;
  if (isa<BlockArgument>(v))
    return cast<BlockArgument>(v).getOwner() == &body
               ? std::nullopt
               : std::optional<int64_t>(0);
  Operation *def = v.getDefiningOp();
  if (def->getBlock() != &body || matchPattern(v, m_Constant()))
    return 0;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == d ? 1 : 0;
  if (isa<arith::AddIOp, arith::SubIOp>(def)) {
    std::optional<int64_t> l =
        loopCoefficient(def->getOperand(0), d, body, entry);
    std::optional<int64_t> r =
        loopCoefficient(def->getOperand(1), d, body, entry);
    if (!l || !r)
      return std::nullopt;
    return isa<arith::AddIOp>(def) ? *l + *r : *l - *r;
  }
  if (isa<arith::MulIOp>(def)) {
    for (unsigned i = 0; i < 2; ++i) {
      APInt c;
      if (matchPattern(def->getOperand(1 - i), m_ConstantInt(&c)))
        if (std::optional<int64_t> x =
                loopCoefficient(def->getOperand(i), d, body, entry))
          return *x * c.getSExtValue();
    }
    return std::nullopt;
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    // Symbols as dims after the map's own, so that each operand is one
    // position.
    SmallVector<AffineExpr> symbols;
    for (unsigned s = 0; s < map.getNumSymbols(); ++s)
      symbols.push_back(getAffineDimExpr(map.getNumDims() + s, v.getContext()));
    AffineExpr e = map.getResult(0).replaceSymbols(symbols);
    int64_t total = 0;
    for (auto [pos, operand] : llvm::enumerate(apply.getMapOperands())) {
      std::optional<int64_t> inner = loopCoefficient(operand, d, body, entry);
      if (!inner)
        return std::nullopt;
      if (*inner == 0)
        continue;
      std::optional<int64_t> outer = dlc::codegen::linearCoefficient(e, pos);
      if (!outer)
        return std::nullopt;
      total += *outer * *inner;
    }
    return total;
  }
  return std::nullopt;
}

/// Whether `v` is a multiple of `m` for every value it takes.
bool isMultipleOf(Value v, int64_t m) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue() % m == 0;
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return isMultipleOf(mul.getLhs(), m) || isMultipleOf(mul.getRhs(), m);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return isMultipleOf(add.getLhs(), m) && isMultipleOf(add.getRhs(), m);
  return false;
}

/// Whether dim `dim` of `weights`, a workgroup's slice of a compressed
/// weight or the whole of it, starts at a multiple of `rows`.
bool startsAligned(Value weights, int64_t rows, unsigned dim) {
  auto subview = weights.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return isa<BlockArgument>(weights) ||
           weights.getDefiningOp<memref::GetGlobalOp>();
  OpFoldResult offset = subview.getMixedOffsets()[dim];
  if (std::optional<int64_t> c = getConstantIntValue(offset))
    return *c % rows == 0;
  return isMultipleOf(cast<Value>(offset), rows);
}

bool unitInnerStride(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() >= 1 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// A sparse convolution's or matrix product's op, its loops' roles and the
/// load of `x`.
struct SparseOp {
  linalg::GenericOp op;
  int64_t rows = 1; ///< the group: outputs that share a table row
  /// Matrix products: the table's groups are the output's columns (the
  /// vectors), `w` is read along them and `x` a scalar per row `m`.
  /// Convolutions: the groups are rows `f` (scalar weights), `x` is read
  /// along the pixels `p`.
  bool columns = false;
  unsigned f = 0, j = 0, p = 0; ///< group loop, reduction, vector loop
  std::optional<unsigned> m;    ///< columns: the row loop, if any
  Value weights, table, out;    ///< memrefs
  memref::LoadOp load;          ///< of x, in the body
  Value channelCast;            ///< the table entry as an index, in the body
};

std::optional<SparseOp> match(linalg::GenericOp op) {
  auto rowsAttr = op->getAttrOfType<IntegerAttr>(dlc::kSparseRowsAttr);
  if (!rowsAttr || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1)
    return std::nullopt;
  SparseOp s;
  s.op = op;
  s.rows = rowsAttr.getInt();
  s.weights = op.getDpsInputs()[0];
  s.table = op.getDpsInputs()[1];
  s.out = op.getDpsInits()[0];
  auto wType = dyn_cast<MemRefType>(s.weights.getType());
  auto tType = dyn_cast<MemRefType>(s.table.getType());
  auto oType = dyn_cast<MemRefType>(s.out.getType());
  if (!wType || !tType || !oType || !wType.getElementType().isF32() ||
      !tType.getElementType().isInteger(32) || !oType.getElementType().isF32())
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineMap wMap = op.getIndexingMapsArray()[0];
  AffineMap tMap = op.getIndexingMapsArray()[1];
  AffineMap oMap = op.getIndexingMapsArray()[2];
  if (tMap.getNumResults() != 2 || oMap.getNumResults() == 0)
    return std::nullopt;
  // The table is [group loop, j + 1]; w is [f, j] (rows) or [g, j, l]
  // (columns: l the vectors' loop).
  auto gExpr = dyn_cast<AffineDimExpr>(tMap.getResult(0));
  s.columns = wMap.getNumResults() == 3;
  if (!gExpr || (wMap.getNumResults() != 2 && !s.columns) ||
      wMap.getResult(0) != gExpr)
    return std::nullopt;
  s.f = gExpr.getPosition();
  auto jExpr = dyn_cast<AffineDimExpr>(wMap.getResult(1));
  if (!jExpr || tMap.getResult(1) != jExpr + getAffineConstantExpr(1, ctx))
    return std::nullopt;
  s.j = jExpr.getPosition();
  if (op.getIteratorTypesArray()[s.j] != utils::IteratorType::reduction)
    return std::nullopt;
  // The output: plain dims (the vectors' loop last) and constants.
  auto pExpr = dyn_cast<AffineDimExpr>(oMap.getResults().back());
  if (!pExpr || pExpr.getPosition() == s.f || !oMap.isFunctionOfDim(s.f) ||
      !unitInnerStride(s.out) || (s.columns && wMap.getResult(2) != pExpr))
    return std::nullopt;
  s.p = pExpr.getPosition();
  for (AffineExpr e : oMap.getResults())
    if (!isa<AffineDimExpr, AffineConstantExpr>(e))
      return std::nullopt;
  if (s.columns) {
    // w along the vectors; the row loop is the output's dim before the
    // groups.
    if (!unitInnerStride(s.weights) || oMap.getNumResults() < 2 ||
        oMap.getResult(oMap.getNumResults() - 2) != gExpr)
      return std::nullopt;
    if (oMap.getNumResults() >= 3)
      if (auto mExpr =
              dyn_cast<AffineDimExpr>(oMap.getResult(oMap.getNumResults() - 3)))
        s.m = mExpr.getPosition();
  }
  // The body: out + x * w (either order of each).
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value outArg = body.getArgument(2), wArg = body.getArgument(0);
  Value product = add.getLhs() == outArg   ? add.getRhs()
                  : add.getRhs() == outArg ? add.getLhs()
                                           : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return std::nullopt;
  Value loaded = mul.getLhs() == wArg   ? mul.getRhs()
                 : mul.getRhs() == wArg ? mul.getLhs()
                                        : Value();
  s.load = loaded ? loaded.getDefiningOp<memref::LoadOp>() : nullptr;
  if (!s.load || s.load->getBlock() != &body ||
      s.load.getMemRef().getParentBlock() == &body ||
      !loaded.getType().isF32() ||
      (!s.columns && !unitInnerStride(s.load.getMemRef())))
    return std::nullopt;
  // x's indices: one of them is, or adds to, the table entry; none moves
  // with the group loop or j but through the entry; with rows, the last
  // walks p at unit stride (the others stay as p moves); with columns,
  // nothing moves with the columns.
  Value tableArg = body.getArgument(1);
  if (!tableArg.hasOneUse())
    return std::nullopt;
  auto entryCast = dyn_cast<arith::IndexCastOp>(*tableArg.getUsers().begin());
  if (!entryCast)
    return std::nullopt;
  s.channelCast = entryCast.getResult();
  unsigned withEntry = 0;
  unsigned rank = s.load.getIndices().size();
  std::optional<SmallVector<int64_t>> extents =
      dlc::codegen::loopRanges(cast<linalg::LinalgOp>(op.getOperation()));
  bool onePixel = extents && (*extents)[s.p] == 1;
  for (auto [i, index] : llvm::enumerate(s.load.getIndices())) {
    // Whether the entry is in this index's expression.
    bool has = false;
    SmallVector<Value> work = {index};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (v == s.channelCast) {
        has = true;
        break;
      }
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == &body)
        work.append(def->getOperands().begin(), def->getOperands().end());
    }
    withEntry += has;
    for (unsigned d : {s.f, s.j, s.p}) {
      std::optional<int64_t> c = loopCoefficient(index, d, body, s.channelCast);
      int64_t expected = (!s.columns && i + 1 == rank && d == s.p) ? 1 : 0;
      // A loop of one trip may have been folded to its index 0.
      if (!c || (*c != expected && !(d == s.p && onePixel && *c == 0)))
        return std::nullopt;
    }
  }
  // The entry is in one index, once.
  if (withEntry != 1 || !s.channelCast.hasOneUse())
    return std::nullopt;
  // Other users of the weight than the product would be computed by no
  // one.
  if (!wArg.hasOneUse())
    return std::nullopt;
  return s;
}

struct CPUSparseTilePass
    : public dlc::impl::CPUSparseTileBase<CPUSparseTilePass> {
  using Base::Base;

  /// The value of `v`, computed in `s`'s body, at the loop values `loops`
  /// (cloning what computes it before `b`'s insertion point).
  static Value materialize(OpBuilder &b, Value v, Block &body,
                           ArrayRef<Value> loops, IRMapping &map) {
    if (Value known = map.lookupOrNull(v))
      return known;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return v;
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      return loops[index.getDim()];
    for (Value operand : def->getOperands())
      map.map(operand, materialize(b, operand, body, loops, map));
    Operation *clone = b.clone(*def, map);
    return clone->getResult(cast<OpResult>(v).getResultNumber());
  }

  /// The fill before `op` (the accumulators start from its constant) and
  /// the elementwise op after (applied to them as they are stored), to
  /// take over; `b` goes where the nest goes: where the epilogue was, since
  /// what it reads may be made after the op.
  static dlc::codegen::Surroundings takeOver(linalg::GenericOp op,
                                             OpBuilder &b) {
    dlc::codegen::Surroundings around = dlc::codegen::surroundingsOf(op);
    if (around.fill && !around.fillValue.getType().isF32())
      around.fill = nullptr;
    b.setInsertionPoint(around.epilogue ? around.epilogue.getOperation()
                                        : op.getOperation());
    return around;
  }

  /// Matrix products: blocks of rows x one vector of a column group, the
  /// group's list of kept reduction indices walked once per block: each
  /// step loads the compressed weight's vector and broadcasts x for each
  /// row. False when the columns do not fall in whole groups of vectors.
  bool emitColumns(SparseOp s) {
    linalg::GenericOp op = s.op;
    Location loc = op.getLoc();
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    std::optional<SmallVector<int64_t>> ranges =
        dlc::codegen::loopRanges(cast<linalg::LinalgOp>(op.getOperation()));
    // Whole groups of whole vectors.
    if (!ranges ||
        llvm::any_of(*ranges,
                     [](int64_t r) { return ShapedType::isDynamic(r); }) ||
        (*ranges)[s.p] != s.rows || s.rows % lanes != 0)
      return false;
    int64_t vectors = s.rows / lanes;
    IRRewriter b(op.getContext());
    dlc::codegen::Surroundings around = takeOver(op, b);
    Block &body = *op.getBlock();
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    auto idx = [&](int64_t c) -> Value {
      return arith::ConstantIndexOp::create(b, loc, c);
    };
    auto loopTo = [&](int64_t lb, int64_t ub, int64_t step) {
      auto loop = scf::ForOp::create(b, loc, idx(lb), idx(ub), idx(step));
      b.setInsertionPointToStart(loop.getBody());
      return loop.getInductionVar();
    };
    SmallVector<Value> loops(op.getNumLoops(), idx(0));
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      if (d != s.f && d != s.j && d != s.p && (!s.m || d != *s.m))
        loops[d] = loopTo(0, (*ranges)[d], 1);
    // Groups outer: a group's compressed weights stay in cache for all
    // row blocks.
    Value group = loopTo(0, (*ranges)[s.f], 1);
    Value count = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, s.table, ValueRange{group, idx(0)}));
    int64_t rowsTotal = s.m ? (*ranges)[*s.m] : 1;
    // Accumulators for all but a few registers (the weight vectors, x).
    int64_t perBlock = std::max<int64_t>(
        1,
        std::min<int64_t>(vectorRegisters - vectorRegisters / 4, 24) / vectors);
    AffineMap outMap = op.getIndexingMapsArray()[2];
    auto block = [&](Value row0, int64_t n) {
      SmallVector<Value> rowValues;
      for (int64_t r = 0; r < n; ++r)
        rowValues.push_back(
            r ? arith::AddIOp::create(b, loc, row0, idx(r)).getResult() : row0);
      auto outIndices = [&](int64_t r, int64_t v) {
        SmallVector<Value> at(loops);
        at[s.f] = group;
        at[s.p] = idx(v * lanes);
        if (s.m)
          at[*s.m] = rowValues[r];
        return dlc::codegen::indicesAt(b, loc, outMap, at);
      };
      int64_t tile = n * vectors; // accumulators per step
      // Fewer than 4 rows would chain each accumulator's fused
      // multiply-adds one after the other (a matrix-vector product's one
      // row): `unroll` steps at a time go to as many accumulators each,
      // summed at the end.
      int64_t unroll = std::max<int64_t>(1, 4 / tile);
      Value zeroVec = arith::ConstantOp::create(b, loc, b.getZeroAttr(vecType));
      SmallVector<Value> acc;
      for (int64_t u = 0; u < unroll; ++u)
        for (int64_t r = 0; r < n; ++r)
          for (int64_t v = 0; v < vectors; ++v) {
            if (u) {
              acc.push_back(zeroVec);
              continue;
            }
            acc.push_back(around.fill
                              ? vector::BroadcastOp::create(b, loc, vecType,
                                                            around.fillValue)
                                    .getResult()
                              : vector::LoadOp::create(b, loc, vecType, s.out,
                                                       outIndices(r, v))
                                    .getResult());
          }
      // One step of the kept list into accumulators `first`...
      auto step = [&](Value j, ValueRange first) {
        Value entry = memref::LoadOp::create(
            b, loc, s.table,
            ValueRange{group, arith::AddIOp::create(b, loc, j, idx(1))});
        Value reduced =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
        SmallVector<Value> w;
        for (int64_t v = 0; v < vectors; ++v)
          w.push_back(
              vector::LoadOp::create(b, loc, vecType, s.weights,
                                     ValueRange{group, j, idx(v * lanes)}));
        SmallVector<Value> next;
        for (int64_t r = 0; r < n; ++r) {
          IRMapping map;
          map.map(s.channelCast, reduced);
          SmallVector<Value> at(loops);
          at[s.f] = group;
          at[s.j] = j;
          at[s.p] = idx(0);
          if (s.m)
            at[*s.m] = rowValues[r];
          SmallVector<Value> indices;
          for (Value index : s.load.getIndices())
            indices.push_back(materialize(b, index, body, at, map));
          Value x = memref::LoadOp::create(b, loc, s.load.getMemRef(), indices);
          Value wide = vector::BroadcastOp::create(b, loc, vecType, x);
          for (int64_t v = 0; v < vectors; ++v)
            next.push_back(vector::FMAOp::create(b, loc, wide, w[v],
                                                 first[r * vectors + v]));
        }
        return next;
      };
      SmallVector<Value> sums(acc.begin(), acc.begin() + tile);
      if (unroll > 1) {
        // Whole groups of `unroll` steps, each into its own accumulators.
        Value whole = arith::SubIOp::create(
            b, loc, count, arith::RemUIOp::create(b, loc, count, idx(unroll)));
        auto groups =
            scf::ForOp::create(b, loc, idx(0), whole, idx(unroll), acc);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(groups.getBody());
          SmallVector<Value> next;
          for (int64_t u = 0; u < unroll; ++u) {
            Value j = u ? arith::AddIOp::create(
                              b, loc, groups.getInductionVar(), idx(u))
                              .getResult()
                        : groups.getInductionVar();
            next.append(
                step(j, groups.getRegionIterArgs().slice(u * tile, tile)));
          }
          scf::YieldOp::create(b, loc, next);
        }
        for (int64_t i = 0; i < tile; ++i) {
          Value total = groups.getResult(i);
          for (int64_t u = 1; u < unroll; ++u)
            total = arith::AddFOp::create(b, loc, total,
                                          groups.getResult(u * tile + i));
          sums[i] = total;
        }
        auto rest = scf::ForOp::create(b, loc, whole, count, idx(1), sums);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(rest.getBody());
        scf::YieldOp::create(
            b, loc, step(rest.getInductionVar(), rest.getRegionIterArgs()));
        sums.assign(rest.getResults().begin(), rest.getResults().end());
      } else {
        auto steps = scf::ForOp::create(b, loc, idx(0), count, idx(1), acc);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(steps.getBody());
        scf::YieldOp::create(
            b, loc, step(steps.getInductionVar(), steps.getRegionIterArgs()));
        sums.assign(steps.getResults().begin(), steps.getResults().end());
      }
      for (int64_t r = 0; r < n; ++r)
        for (int64_t v = 0; v < vectors; ++v) {
          SmallVector<Value> indices = outIndices(r, v);
          Value sum = sums[r * vectors + v];
          if (around.epilogue)
            dlc::codegen::storeThroughEpilogue(b, loc, around, s.out, lanes,
                                               sum, indices, Value());
          else
            vector::StoreOp::create(b, loc, sum, s.out, indices);
        }
    };
    int64_t full = rowsTotal - rowsTotal % perBlock;
    if (full > 0) {
      OpBuilder::InsertionGuard guard(b);
      block(loopTo(0, full, perBlock), perBlock);
    }
    if (rowsTotal > full)
      block(idx(full), rowsTotal - full);
    b.eraseOp(op);
    dlc::codegen::eraseSurroundings(b, around, /*keepTemporary=*/false);
    ++numTiled;
    return true;
  }

  void emit(SparseOp s) {
    linalg::GenericOp op = s.op;
    Location loc = op.getLoc();
    IRRewriter b(op.getContext());
    dlc::codegen::Surroundings around = takeOver(op, b);
    Block &body = *op.getBlock();
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    auto vecType = VectorType::get({lanes}, b.getF32Type());
    auto maskType = VectorType::get({lanes}, b.getI1Type());
    auto idx = [&](int64_t c) -> Value {
      return arith::ConstantIndexOp::create(b, loc, c);
    };
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    auto extent = [&](unsigned d) {
      return getValueOrCreateConstantIndexOp(b, loc, ranges[d].size);
    };
    std::optional<int64_t> fStatic = getConstantIntValue(ranges[s.f].size);
    std::optional<int64_t> pStatic = getConstantIntValue(ranges[s.p].size);
    // Whole aligned row groups share a table row; anything else goes row
    // by row, each with its own (equal) copy of its group's list.
    int64_t rows = (fStatic && *fStatic % s.rows == 0 &&
                    startsAligned(s.weights, s.rows, 0))
                       ? s.rows
                       : 1;
    // rows x vectors accumulators, `vectors` loads of x, one broadcast.
    int64_t registers = std::max<int64_t>(vectorRegisters, 8);
    int64_t vectors = std::clamp<int64_t>((registers - 1) / (rows + 1), 1, 8);
    if (pStatic)
      vectors = std::min(vectors, std::max<int64_t>(1, *pStatic / lanes));
    int64_t block = lanes * vectors;
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(vecType));

    SmallVector<Value> loops(op.getNumLoops(), idx(0));
    // Outer loops (batch), one scf.for each.
    for (unsigned d = 0; d < op.getNumLoops(); ++d) {
      if (d == s.f || d == s.j || d == s.p)
        continue;
      auto loop = scf::ForOp::create(b, loc, idx(0), extent(d), idx(1));
      b.setInsertionPointToStart(loop.getBody());
      loops[d] = loop.getInductionVar();
    }
    Value fExtent = extent(s.f), pExtent = extent(s.p);
    auto rowLoop = scf::ForOp::create(b, loc, idx(0), fExtent, idx(rows));
    b.setInsertionPointToStart(rowLoop.getBody());
    Value row0 = rowLoop.getInductionVar();
    Value count = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, s.table, ValueRange{row0, idx(0)}));

    AffineMap outMap = op.getIndexingMapsArray()[2];
    auto outIndices = [&](Value row, Value column) {
      SmallVector<Value> indices;
      for (AffineExpr e : outMap.getResults()) {
        if (auto c = dyn_cast<AffineConstantExpr>(e)) {
          indices.push_back(idx(c.getValue()));
          continue;
        }
        unsigned d = cast<AffineDimExpr>(e).getPosition();
        indices.push_back(d == s.f ? row : d == s.p ? column : loops[d]);
      }
      return indices;
    };

    // One block of rows x n vectors at column `col`; `masks[v]` for the
    // vectors that may pass the last pixel.
    auto emitBlock = [&](Value col, int64_t n, ArrayRef<Value> masks) {
      SmallVector<Value> rowValues, colValues;
      for (int64_t r = 0; r < rows; ++r)
        rowValues.push_back(
            r ? arith::AddIOp::create(b, loc, row0, idx(r)).getResult() : row0);
      for (int64_t v = 0; v < n; ++v)
        colValues.push_back(
            v ? arith::AddIOp::create(b, loc, col, idx(v * lanes)).getResult()
              : col);
      auto load = [&](Value memref, ValueRange indices, int64_t v) -> Value {
        if (masks[v])
          return vector::MaskedLoadOp::create(b, loc, vecType, memref, indices,
                                              masks[v], zero);
        return vector::LoadOp::create(b, loc, vecType, memref, indices);
      };
      SmallVector<Value> acc;
      Value start = around.fill ? vector::BroadcastOp::create(b, loc, vecType,
                                                              around.fillValue)
                                      .getResult()
                                : Value();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < n; ++v)
          acc.push_back(
              start ? start
                    : load(s.out, outIndices(rowValues[r], colValues[v]), v));
      auto steps = scf::ForOp::create(b, loc, idx(0), count, idx(1), acc);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(steps.getBody());
        Value step = steps.getInductionVar();
        Value entry = memref::LoadOp::create(
            b, loc, s.table,
            ValueRange{row0, arith::AddIOp::create(b, loc, step, idx(1))});
        IRMapping map;
        map.map(s.channelCast,
                arith::IndexCastOp::create(b, loc, b.getIndexType(), entry));
        SmallVector<Value> at(loops);
        at[s.f] = row0;
        at[s.j] = step;
        at[s.p] = col;
        SmallVector<Value> base;
        for (Value index : s.load.getIndices())
          base.push_back(materialize(b, index, body, at, map));
        SmallVector<Value> x;
        for (int64_t v = 0; v < n; ++v) {
          SmallVector<Value> indices(base);
          if (v)
            indices.back() =
                arith::AddIOp::create(b, loc, base.back(), idx(v * lanes));
          x.push_back(load(s.load.getMemRef(), indices, v));
        }
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value w = memref::LoadOp::create(b, loc, s.weights,
                                           ValueRange{rowValues[r], step});
          Value wide = vector::BroadcastOp::create(b, loc, vecType, w);
          for (int64_t v = 0; v < n; ++v)
            next.push_back(vector::FMAOp::create(
                b, loc, wide, x[v], steps.getRegionIterArgs()[r * n + v]));
        }
        scf::YieldOp::create(b, loc, next);
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < n; ++v) {
          Value sum = steps.getResult(r * n + v);
          SmallVector<Value> indices = outIndices(rowValues[r], colValues[v]);
          if (around.epilogue)
            dlc::codegen::storeThroughEpilogue(b, loc, around, s.out, lanes,
                                               sum, indices, masks[v]);
          else if (masks[v])
            vector::MaskedStoreOp::create(b, loc, s.out, indices, masks[v],
                                          sum);
          else
            vector::StoreOp::create(b, loc, sum, s.out, indices);
        }
    };

    // Full blocks, then what is left of the pixels.
    Value blockSize = idx(block);
    Value full = pStatic
                     ? idx(*pStatic - *pStatic % block)
                     : arith::SubIOp::create(
                           b, loc, pExtent,
                           arith::RemUIOp::create(b, loc, pExtent, blockSize))
                           .getResult();
    auto columns = scf::ForOp::create(b, loc, idx(0), full, blockSize);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(columns.getBody());
      emitBlock(columns.getInductionVar(), vectors,
                SmallVector<Value>(vectors, Value()));
    }
    if (pStatic) {
      int64_t rest = *pStatic % block;
      if (rest) {
        int64_t n = (rest + lanes - 1) / lanes;
        SmallVector<Value> masks(n, Value());
        if (rest % lanes)
          masks.back() = vector::ConstantMaskOp::create(
              b, loc, maskType, ArrayRef<int64_t>{rest % lanes});
        emitBlock(idx(*pStatic - rest), n, masks);
      }
    } else {
      Value some = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         full, pExtent);
      auto tail = scf::IfOp::create(b, loc, some, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(tail.thenBlock()->getTerminator());
      SmallVector<Value> masks;
      for (int64_t v = 0; v < vectors; ++v) {
        Value left = arith::SubIOp::create(
            b, loc, pExtent,
            arith::AddIOp::create(b, loc, full, idx(v * lanes)));
        Value clamped = arith::MinSIOp::create(
            b, loc, arith::MaxSIOp::create(b, loc, left, idx(0)), idx(lanes));
        masks.push_back(vector::CreateMaskOp::create(b, loc, maskType,
                                                     ValueRange{clamped}));
      }
      emitBlock(full, vectors, masks);
    }
    b.eraseOp(op);
    dlc::codegen::eraseSurroundings(b, around, /*keepTemporary=*/false);
    ++numTiled;
  }

  void runOnOperation() override {
    SmallVector<SparseOp> work;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<SparseOp> s = match(op))
        work.push_back(*s);
      else if (op->hasAttr(dlc::kSparseRowsAttr))
        op.emitRemark("dlc-cpu-sparse-tile: not the form of a sparse "
                      "convolution; left to the scalar loops");
    });
    for (SparseOp &s : work) {
      if (!s.columns)
        emit(s);
      else if (!emitColumns(s))
        s.op.emitRemark("dlc-cpu-sparse-tile: a workgroup's columns are not "
                        "whole groups of whole vectors; left to the scalar "
                        "loops");
    }
  }
};

} // namespace
