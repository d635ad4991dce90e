//===- CPURegisterTile.cpp - the dlc-cpu-register-tile pass ---------------===//
//
// LLVM's loop vectorizer turns the innermost loop of a contraction into SIMD
// code but keeps the output in memory: every multiply-add loads and stores
// it. This pass writes the register-tiled loop nest itself for f32
// contractions out[.., f, .., p] += a[.., p + .., ..] * b[.., f, ..]
// (matmul, stride-1/2 convolutions including depthwise ones, 1x1 convolutions
// after dlc-cpu-loop-order merged their rows and columns): a block of
// `rows` x `vectors` SIMD accumulators stays in registers through all
// reduction loops, each step loading `vectors` vectors of `a`, broadcasting
// `rows` scalars of `b` and issuing rows x vectors fused
// multiply-adds. Where no loop of `b` is a row (depthwise convolutions and
// pooling windows: every operand uses the channel), the rows are a loop of
// `a` instead, the output's rows: each step then loads rows x vectors
// vectors of `a` and broadcasts one scalar of `b`, so that a block still
// has rows x vectors independent accumulators. Columns past the last full
// block get one narrower block whose last vector is masked; rows past the
// last full block and ops the pattern does not fit keep the scalar loops
// (which LLVM vectorizes).
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace dlc {
#define GEN_PASS_DEF_CPUREGISTERTILE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The roles of a contraction's loops and operands.
struct Contraction {
  unsigned a = 0, b = 0;            ///< input operand numbers
  std::optional<unsigned> f;        ///< row loop (absent: one row)
  bool rowsInA = false;             ///< f indexes a, not b
  unsigned p = 0;                   ///< column (vector) loop
  SmallVector<unsigned> reductions; ///< reduction loops, outermost first
  SmallVector<unsigned> outer;      ///< other parallel loops
  int64_t stride = 1;               ///< of p in `a` (1, or 2: strided conv)
  /// How a step folds into the accumulators: out + a * b, or (pooling,
  /// `b` only the window's shape) max(out, a) or out + a.
  enum class Combine { MultiplyAdd, Max, Add } combine = Combine::MultiplyAdd;
};

/// Whether `e` uses loop `d`.
bool uses(AffineMap map, unsigned d) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(d); });
}

/// The coefficient of loop `d` in `e`, when `e` is linear in it.
std::optional<int64_t> coefficient(AffineExpr e, unsigned d) {
  if (auto dim = dyn_cast<AffineDimExpr>(e))
    return dim.getPosition() == d ? 1 : 0;
  if (isa<AffineConstantExpr, AffineSymbolExpr>(e))
    return 0;
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = coefficient(bin.getLHS(), d);
  std::optional<int64_t> r = coefficient(bin.getRHS(), d);
  if (!l || !r)
    return std::nullopt;
  if (bin.getKind() == AffineExprKind::Add)
    return *l + *r;
  if (bin.getKind() == AffineExprKind::Mul)
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return *l * c.getValue();
  if (*l == 0 && *r == 0)
    return 0;
  return std::nullopt;
}

/// Whether loop `d` walks `operand` with a small stride: it appears only in
/// the last result, with coefficient 1 (alone for the output, `ow + kw` for
/// a convolution's input; 2 too unless `exact`: a stride-2 convolution),
/// over a memref whose innermost stride is 1 (what vector.load needs).
bool unitStride(AffineMap map, Value operand, unsigned d, bool exact) {
  auto type = dyn_cast<MemRefType>(operand.getType());
  if (!type || map.getNumResults() == 0)
    return false;
  AffineExpr last = map.getResults().back();
  if (exact) {
    auto dim = dyn_cast<AffineDimExpr>(last);
    if (!dim || dim.getPosition() != d)
      return false;
  } else if (std::optional<int64_t> c = coefficient(last, d);
             !c || (*c != 1 && *c != 2)) {
    return false;
  }
  for (AffineExpr e : map.getResults().drop_back())
    if (e.isFunctionOfDim(d))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Matches out += a * b in f32 (matmul, 1x1 and depthwise convolutions,
/// after dlc-cpu-loop-order) and assigns the loops their roles.
std::optional<Contraction> match(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  if (!isa<MemRefType>(op.getDpsInitOperand(0)->get().getType()))
    return std::nullopt;
  auto outType = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outType.getElementType().isF32())
    return std::nullopt;
  // Body: yield(addf(out, mulf(in0, in1))), in any operand order; or a
  // pooling window's yield(maximumf(out, in0)) / yield(addf(out, in0)),
  // in1 being the window's shape only.
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MaximumFOp>(combiner))
    return std::nullopt;
  Value acc = body.getArgument(2);
  Value lhs = combiner->getOperand(0), rhs = combiner->getOperand(1);
  if ((lhs == acc) == (rhs == acc))
    return std::nullopt;
  Value step = lhs == acc ? rhs : lhs;
  Contraction::Combine combine = Contraction::Combine::MultiplyAdd;
  if (body.getOperations().size() == 2 && step == body.getArgument(0) &&
      body.getArgument(1).use_empty()) {
    combine = isa<arith::MaximumFOp>(combiner) ? Contraction::Combine::Max
                                               : Contraction::Combine::Add;
  } else {
    auto mul = step.getDefiningOp<arith::MulFOp>();
    if (!isa<arith::AddFOp>(combiner) || body.getOperations().size() != 3 ||
        !mul ||
        !((mul.getLhs() == body.getArgument(0) &&
           mul.getRhs() == body.getArgument(1)) ||
          (mul.getLhs() == body.getArgument(1) &&
           mul.getRhs() == body.getArgument(0))))
      return std::nullopt;
  }

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (llvm::any_of(trips, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value out = op.getDpsInitOperand(0)->get();
  Contraction k;
  k.combine = combine;
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction) {
      if (uses(maps[2], d))
        return std::nullopt;
      k.reductions.push_back(d);
    }
  if (k.reductions.empty())
    return std::nullopt;
  // p: stride 1 in the output and in one input (a), absent from the other
  // (b); f: in the output (as a plain dim) and b only, preferably b's
  // innermost dim, so that a block's broadcasts read neighbours.
  bool pooling = combine != Contraction::Combine::MultiplyAdd;
  for (unsigned ai = 0; ai < (pooling ? 1u : 2u); ++ai) {
    unsigned bi = 1 - ai;
    Value aValue = op.getDpsInputs()[ai];
    std::optional<unsigned> p, f;
    bool fInnermost = false; // f walks b's innermost dim
    for (unsigned d = 0; d < iterators.size(); ++d) {
      if (iterators[d] != utils::IteratorType::parallel)
        continue;
      if (unitStride(maps[2], out, d, /*exact=*/true) &&
          unitStride(maps[ai], aValue, d, /*exact=*/false) &&
          !uses(maps[bi], d)) {
        p = d;
        continue;
      }
      // A row: in the output as a plain dim, in b linearly (a window
      // `ow * s + kw` of a channels-last convolution's input included).
      bool plainInOut = llvm::any_of(maps[2].getResults(), [&](AffineExpr e) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        return dim && dim.getPosition() == d;
      });
      bool linear = llvm::all_of(maps, [&](AffineMap m) {
        return llvm::all_of(m.getResults(), [&](AffineExpr e) {
          return coefficient(e, d).has_value();
        });
      });
      if (!plainInOut || !linear || !uses(maps[bi], d) || uses(maps[ai], d))
        continue;
      bool innermost = maps[bi].getNumResults() > 0 &&
                       maps[bi].getResults().back().isFunctionOfDim(d);
      if (!f || innermost || !fInnermost) {
        f = d;
        fInnermost = innermost;
      }
    }
    if (!p)
      continue;
    // No row of b: a row of a, in the output as a plain dim, linear, off
    // a's innermost (vector) index, and unused by b.
    bool rowsInA = false;
    if (!f) {
      for (unsigned d = 0; d < iterators.size() && !f; ++d) {
        if (iterators[d] != utils::IteratorType::parallel || d == *p)
          continue;
        bool plainInOut = llvm::any_of(maps[2].getResults(), [&](AffineExpr e) {
          auto dim = dyn_cast<AffineDimExpr>(e);
          return dim && dim.getPosition() == d;
        });
        bool linear = llvm::all_of(maps, [&](AffineMap m) {
          return llvm::all_of(m.getResults(), [&](AffineExpr e) {
            return coefficient(e, d).has_value();
          });
        });
        if (plainInOut && linear && uses(maps[ai], d) &&
            !maps[ai].getResults().back().isFunctionOfDim(d) &&
            !uses(maps[bi], d)) {
          f = d;
          rowsInA = true;
        }
      }
    }
    k.a = ai;
    k.b = bi;
    k.p = *p;
    k.stride = *coefficient(maps[ai].getResults().back(), *p);
    k.f = f;
    k.rowsInA = rowsInA;
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] == utils::IteratorType::parallel && d != k.p &&
          (!f || d != *f))
        k.outer.push_back(d);
    return k;
  }
  return std::nullopt;
}

struct CPURegisterTilePass
    : public dlc::impl::CPURegisterTileBase<CPURegisterTilePass> {
  using Base::Base;

  /// The indices of `operand` at loop values `ivs`.
  SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> ivs) {
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        result.push_back(ivs[dim.getPosition()]);
        continue;
      }
      if (auto cst = dyn_cast<AffineConstantExpr>(e)) {
        result.push_back(
            arith::ConstantIndexOp::create(b, loc, cst.getValue()));
        continue;
      }
      AffineMap single = AffineMap::get(map.getNumDims(), 0, e);
      result.push_back(affine::AffineApplyOp::create(b, loc, single, ivs));
    }
    return result;
  }

  /// Rows per block: all of them when few, else the largest count in
  /// (max/2, max] that divides them (no remainder block), else `max`.
  static int64_t rowsPerBlock(int64_t trips, int64_t max) {
    if (trips <= max)
      return trips;
    for (int64_t r = max; r > max / 2; --r)
      if (trips % r == 0)
        return r;
    return max;
  }

  LogicalResult tile(linalg::GenericOp op, const Contraction &k) {
    SmallVector<int64_t> trips = op.getStaticLoopRanges();
    if (llvm::any_of(trips, [](int64_t t) { return t == 0; }))
      return failure();
    bool pooling = k.combine != Contraction::Combine::MultiplyAdd;
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    int64_t vectors = 2;
    int64_t rows =
        k.f ? rowsPerBlock(trips[*k.f], vectorBits >= 512 ? 8 : 4) : 1;
    int64_t block = lanes * vectors;
    int64_t fullCols = trips[k.p] / block * block;
    int64_t fullRows = k.f ? trips[*k.f] / rows * rows : 1;

    IRRewriter rewriter(op.getContext());
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Value a = op.getDpsInputs()[k.a], b = op.getDpsInputs()[k.b];
    Value out = op.getDpsInitOperand(0)->get();
    auto cst = [&](OpBuilder &bld, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(bld, loc, v);
    };
    VectorType vecType = VectorType::get({lanes}, rewriter.getF32Type());
    unsigned numLoops = trips.size();
    SmallVector<Value> ivs(numLoops);

    /// A loop [lb, ub) by `step`; `at` moves into its body.
    auto loop = [&](OpBuilder &at, int64_t lb, int64_t ub,
                    int64_t step) -> Value {
      auto f =
          scf::ForOp::create(at, loc, cst(at, lb), cst(at, ub), cst(at, step));
      at.setInsertionPoint(f.getBody()->getTerminator());
      return f.getInductionVar();
    };

    // The outermost reduction loop runs in chunks when a block's operands
    // over all reduction steps would not stay in cache: every block then
    // reuses a chunk's operands from cache (a filter's slice, read again
    // by each block of pixels, would otherwise come from memory each
    // time), at the price of loading and storing its accumulators once per
    // chunk.
    unsigned r0 = k.reductions.front();
    int64_t stepBytes = (k.rowsInA ? rows * block + 1 : block + rows) * 4;
    for (unsigned r : k.reductions)
      if (r != r0)
        stepBytes *= trips[r];
    int64_t chunk = trips[r0];
    if (trips[r0] * stepBytes > chunkBytes) {
      int64_t fit = std::max<int64_t>(chunkBytes / stepBytes, 1);
      while (trips[r0] % fit != 0)
        --fit;
      chunk = fit;
    }
    Value chunk0;

    // One block of `nRows` rows from f0 x n vectors from column p0; the
    // last vector covers only `lastLanes` columns (masked loads and
    // stores) when below `lanes`.
    auto emitBlock = [&](OpBuilder &at, Value f0, int64_t nRows, Value p0,
                         int64_t n, int64_t lastLanes) {
      auto row = [&](OpBuilder &bb, int64_t i) {
        if (k.f)
          ivs[*k.f] = arith::AddIOp::create(bb, loc, f0, cst(bb, i));
      };
      Value mask;
      if (lastLanes < lanes)
        mask = vector::CreateMaskOp::create(
            at, loc, VectorType::get({lanes}, at.getI1Type()),
            ValueRange{cst(at, lastLanes)});
      Value zero = arith::ConstantOp::create(
          at, loc, DenseElementsAttr::get(vecType, at.getF32FloatAttr(0)));
      auto load = [&](OpBuilder &bb, Value memref, ValueRange idx,
                      bool last) -> Value {
        if (last && mask)
          return vector::MaskedLoadOp::create(bb, loc, vecType, memref, idx,
                                              mask, zero);
        return vector::LoadOp::create(bb, loc, vecType, memref, idx);
      };
      SmallVector<Value> accs;
      SmallVector<SmallVector<Value>> outIdx;
      for (int64_t i = 0; i < nRows; ++i)
        for (int64_t j = 0; j < n; ++j) {
          row(at, i);
          ivs[k.p] = arith::AddIOp::create(at, loc, p0, cst(at, j * lanes));
          for (unsigned r : k.reductions)
            ivs[r] = cst(at, 0);
          outIdx.push_back(indices(at, loc, maps[2], ivs));
          accs.push_back(load(at, out, outIdx.back(), j == n - 1));
        }
      // The reduction loops, nested, carrying the accumulators.
      SmallVector<scf::ForOp> nest;
      OpBuilder in = at;
      ValueRange carried = accs;
      for (unsigned r : k.reductions) {
        Value lb = cst(in, 0), ub = cst(in, trips[r]);
        if (r == k.reductions.front() && chunk0) {
          lb = chunk0;
          ub = arith::AddIOp::create(in, loc, chunk0, cst(in, chunk));
        }
        auto loop = scf::ForOp::create(in, loc, lb, ub, cst(in, 1), carried);
        ivs[r] = loop.getInductionVar();
        carried = loop.getRegionIterArgs();
        nest.push_back(loop);
        in = OpBuilder::atBlockBegin(loop.getBody());
      }
      // The vectors of a: one set, or one per row when the rows are a's.
      SmallVector<Value> avec;
      for (int64_t j = 0; j < (k.rowsInA ? nRows : 1) * n; ++j) {
        if (k.rowsInA)
          row(in, j / n);
        else if (k.f)
          ivs[*k.f] = cst(in, 0);
        ivs[k.p] = arith::AddIOp::create(in, loc, p0, cst(in, (j % n) * lanes));
        SmallVector<Value> idx = indices(in, loc, maps[k.a], ivs);
        if (k.stride == 1) {
          avec.push_back(load(in, a, idx, j % n == n - 1));
          continue;
        }
        // Stride 2: the even elements of 2 * lanes contiguous ones. Only
        // offsets up to 2 * (valid lanes - 1) are needed; masks keep the
        // loads inside them.
        int64_t valid = j % n == n - 1 ? lastLanes : lanes;
        int64_t needed = 2 * valid - 1;
        auto chunk = [&](Value base, int64_t count) -> Value {
          SmallVector<Value> at(idx);
          at.back() = base;
          if (count >= lanes)
            return vector::LoadOp::create(in, loc, vecType, a, at);
          Value m = vector::CreateMaskOp::create(
              in, loc, VectorType::get({lanes}, in.getI1Type()),
              ValueRange{cst(in, std::max<int64_t>(count, 0))});
          return vector::MaskedLoadOp::create(in, loc, vecType, a, at, m, zero);
        };
        Value lo = chunk(idx.back(), needed);
        Value hi =
            chunk(arith::AddIOp::create(in, loc, idx.back(), cst(in, lanes)),
                  needed - lanes);
        SmallVector<int64_t> even;
        for (int64_t t = 0; t < lanes; ++t)
          even.push_back(2 * t);
        avec.push_back(vector::ShuffleOp::create(in, loc, lo, hi, even));
      }
      SmallVector<Value> next;
      Value bv;
      for (int64_t i = 0; i < nRows; ++i) {
        auto aOf = [&](int64_t j) { return avec[k.rowsInA ? i * n + j : j]; };
        if (pooling) {
          for (int64_t j = 0; j < n; ++j)
            next.push_back(k.combine == Contraction::Combine::Max
                               ? Value(arith::MaximumFOp::create(
                                     in, loc, carried[i * n + j], aOf(j)))
                               : Value(arith::AddFOp::create(
                                     in, loc, carried[i * n + j], aOf(j))));
          continue;
        }
        // b's scalar: one per row, or one for all when the rows are a's.
        if (!bv || !k.rowsInA) {
          row(in, i);
          ivs[k.p] = cst(in, 0);
          Value s = memref::LoadOp::create(in, loc, b,
                                           indices(in, loc, maps[k.b], ivs));
          bv = vector::BroadcastOp::create(in, loc, vecType, s);
        }
        for (int64_t j = 0; j < n; ++j)
          next.push_back(
              vector::FMAOp::create(in, loc, aOf(j), bv, carried[i * n + j]));
      }
      scf::YieldOp::create(in, loc, next);
      for (size_t l = nest.size() - 1; l > 0; --l) {
        OpBuilder y = OpBuilder::atBlockEnd(nest[l - 1].getBody());
        scf::YieldOp::create(y, loc, nest[l].getResults());
      }
      at.setInsertionPointAfter(nest.front());
      for (auto [j, r] : llvm::enumerate(nest.front().getResults())) {
        bool last = static_cast<int64_t>(j % n) == n - 1;
        if (last && mask)
          vector::MaskedStoreOp::create(at, loc, out, outIdx[j], mask, r);
        else
          vector::StoreOp::create(at, loc, r, out, outIdx[j]);
      }
    };

    using RowBody = llvm::function_ref<void(OpBuilder &, Value, int64_t)>;
    using ColBody =
        llvm::function_ref<void(OpBuilder &, Value, int64_t, int64_t)>;
    // The outer dims, then full blocks of rows, then one block of the rows
    // left over.
    auto forEachRowBlock = [&](OpBuilder at, RowBody body) {
      for (unsigned d : k.outer)
        ivs[d] = loop(at, 0, trips[d], 1);
      if (!k.f) {
        body(at, Value(), 1);
        return;
      }
      if (fullRows > 0) {
        OpBuilder inRows = at;
        body(inRows, loop(inRows, 0, fullRows, rows), rows);
      }
      if (int64_t rest = trips[*k.f] - fullRows)
        body(at, cst(at, fullRows), rest);
    };
    // Full column blocks, then one narrower block for the rest.
    auto forEachColBlock = [&](OpBuilder at, ColBody body) {
      if (fullCols > 0) {
        OpBuilder inCols = at;
        body(inCols, loop(inCols, 0, fullCols, block), vectors, lanes);
      }
      if (int64_t rest = trips[k.p] - fullCols) {
        int64_t n = (rest + lanes - 1) / lanes;
        body(at, cst(at, fullCols), n, rest - (n - 1) * lanes);
      }
    };

    // Column blocks innermost keep a block of b's rows in cache while the
    // columns stream past; outermost keep a column slice of `a` (a
    // filter's, when it uses neither outer nor row loops) in cache while
    // all rows stream past. Whichever reads fewer bytes in all.
    auto volume = [&](AffineMap map) {
      int64_t v = 1;
      for (unsigned d = 0; d < numLoops; ++d)
        if (uses(map, d))
          v *= trips[d];
      return v;
    };
    bool aIndependent = !pooling && llvm::none_of(k.outer, [&](unsigned d) {
      return uses(maps[k.a], d);
    });
    int64_t rowBlocks = 1;
    for (unsigned d : k.outer)
      rowBlocks *= trips[d];
    if (k.f)
      rowBlocks *= (trips[*k.f] + rows - 1) / rows;
    int64_t colBlocks = (trips[k.p] + block - 1) / block;
    bool columnsOuter =
        aIndependent && volume(maps[k.a]) + volume(maps[k.b]) * colBlocks <
                            volume(maps[k.b]) + volume(maps[k.a]) * rowBlocks;

    OpBuilder start = rewriter;
    if (chunk < trips[r0])
      chunk0 = loop(start, 0, trips[r0], chunk);
    if (columnsOuter) {
      forEachColBlock(
          start, [&](OpBuilder &at, Value p0, int64_t n, int64_t lastLanes) {
            forEachRowBlock(at, [&](OpBuilder &in, Value f0, int64_t nRows) {
              emitBlock(in, f0, nRows, p0, n, lastLanes);
            });
          });
    } else {
      forEachRowBlock(start, [&](OpBuilder &at, Value f0, int64_t nRows) {
        forEachColBlock(
            at, [&](OpBuilder &in, Value p0, int64_t n, int64_t lastLanes) {
              emitBlock(in, f0, nRows, p0, n, lastLanes);
            });
      });
    }
    rewriter.eraseOp(op);
    return success();
  }

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Contraction>> work;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Contraction> k = match(op))
        work.push_back({op, *k});
    });
    for (auto &[op, k] : work)
      (void)tile(op, k);
  }
};

} // namespace
