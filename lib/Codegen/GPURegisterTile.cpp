//===- GPURegisterTile.cpp - the dlc-gpu-register-tile pass ---------------===//
//
// After tiling, each GPU thread runs a linalg op with reduction loops
// (matmul, convolution, pooling, a row reduction) on its own small tile of
// the output. Lowered as loops, such an op loads and stores its output
// element in memory at every step of the reduction, and the output is in
// global memory. This pass writes the thread's loops itself: every output
// element of the tile is an accumulator carried through the reduction loops
// (registers after LLVM's SSA construction), each step evaluates the op's
// body once per output element on operand elements loaded once per step
// (an element read by several output elements of the tile is loaded once:
// that reuse is what a tile of several outputs per thread buys), and the
// accumulators are stored once at the end. Each output element sees its
// reduction in the same order as before; multiplications and additions
// of floating-point bodies may contract into fused multiply-adds.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace dlc {
#define GEN_PASS_DEF_GPUREGISTERTILE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

bool isReduction(linalg::LinalgOp op, unsigned d) {
  return op.getIteratorTypesArray()[d] == utils::IteratorType::reduction;
}

/// Whether `op` is a thread's op this pass rewrites: on buffers, one
/// output, static loop ranges, a reduction of more than one step and at
/// most `maxAccumulators` output elements; a body of plain scalar ops.
bool qualifies(linalg::LinalgOp op, int64_t maxAccumulators) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return false;
  if (llvm::any_of(op->getOperandTypes(),
                   [](Type t) { return !isa<MemRefType>(t); }))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t outputs = 1, steps = 1;
  for (auto [d, r] : llvm::enumerate(ranges)) {
    if (ShapedType::isDynamic(r) || r == 0)
      return false;
    (isReduction(op, d) ? steps : outputs) *= r;
  }
  if (outputs > maxAccumulators || steps < 2)
    return false;
  // Each output element is loaded before the reduction loops and stored
  // after them: its indices must not depend on a reduction loop.
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (auto [d, r] : llvm::enumerate(ranges))
    if (isReduction(op, d) && out.isFunctionOfDim(d))
      return false;
  // Bodies with regions (nested loops) are left to the generic lowering.
  for (Operation &inner : op.getBlock()->without_terminator())
    if (inner.getNumRegions() != 0)
      return false;
  return true;
}

class Rewriter {
public:
  explicit Rewriter(linalg::LinalgOp op)
      : op(op), loc(op.getLoc()), ranges(op.getStaticLoopRanges()) {}

  void run() {
    IRRewriter b(op->getContext());
    b.setInsertionPoint(op);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    // Every output element of the tile, as its parallel loop values.
    SmallVector<unsigned> parallel;
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (!isReduction(op, d))
        parallel.push_back(d);
    SmallVector<SmallVector<int64_t>> points(1, SmallVector<int64_t>());
    for (unsigned d : parallel) {
      SmallVector<SmallVector<int64_t>> next;
      for (const auto &p : points)
        for (int64_t i = 0; i < ranges[d]; ++i) {
          next.push_back(p);
          next.back().push_back(i);
        }
      points = std::move(next);
    }
    auto ivsAt = [&](ArrayRef<int64_t> point, ArrayRef<Value> reductionIvs) {
      SmallVector<OpFoldResult> ivs(ranges.size());
      for (auto [k, d] : llvm::enumerate(parallel))
        ivs[d] = b.getIndexAttr(point[k]);
      unsigned r = 0;
      for (unsigned d = 0; d < ranges.size(); ++d)
        if (isReduction(op, d))
          ivs[d] = reductionIvs.empty() ? OpFoldResult(zero)
                                        : OpFoldResult(reductionIvs[r++]);
      return ivs;
    };
    OpOperand *out = op.getDpsInitOperand(0);
    SmallVector<Value> accs;
    for (const auto &p : points)
      accs.push_back(load(b, out, ivsAt(p, {})));
    cache.clear();

    // The reduction loops, outermost first, carrying the accumulators.
    SmallVector<Value> reductionIvs;
    SmallVector<scf::ForOp> loops;
    for (unsigned d = 0; d < ranges.size(); ++d) {
      if (!isReduction(op, d))
        continue;
      auto loop =
          scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                             arith::ConstantIndexOp::create(b, loc, ranges[d]),
                             arith::ConstantIndexOp::create(b, loc, 1), accs);
      if (!loops.empty())
        scf::YieldOp::create(b, loc, loop.getResults());
      loops.push_back(loop);
      reductionIvs.push_back(loop.getInductionVar());
      accs.assign(loop.getRegionIterArgs().begin(),
                  loop.getRegionIterArgs().end());
      b.setInsertionPointToStart(loop.getBody());
    }
    Block *body = op.getBlock();
    SmallVector<Value> next;
    for (auto [k, p] : llvm::enumerate(points)) {
      SmallVector<OpFoldResult> ivs = ivsAt(p, reductionIvs);
      IRMapping map;
      for (OpOperand *input : op.getDpsInputOperands()) {
        BlockArgument arg = body->getArgument(input->getOperandNumber());
        if (!arg.use_empty())
          map.map(arg, load(b, input, ivs));
      }
      map.map(body->getArgument(op.getNumDpsInputs()), accs[k]);
      for (Operation &inner : body->without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          map.map(index.getResult(),
                  getValueOrCreateConstantIndexOp(b, loc, ivs[index.getDim()]));
          continue;
        }
        Operation *clone = b.clone(inner, map);
        // out + a * b may become one fused multiply-add.
        if (auto fm = dyn_cast<arith::ArithFastMathInterface>(clone);
            fm && isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(clone))
          clone->setAttr(
              fm.getFastMathAttrName(),
              arith::FastMathFlagsAttr::get(
                  op->getContext(), fm.getFastMathFlagsAttr().getValue() |
                                        arith::FastMathFlags::contract));
      }
      next.push_back(map.lookupOrDefault(body->getTerminator()->getOperand(0)));
    }
    cache.clear();
    SmallVector<Value> results = next;
    if (!loops.empty()) {
      scf::YieldOp::create(b, loc, next);
      results.assign(loops.front().getResults().begin(),
                     loops.front().getResults().end());
      b.setInsertionPointAfter(loops.front());
    }
    for (auto [k, p] : llvm::enumerate(points))
      memref::StoreOp::create(b, loc, results[k], out->get(),
                              indices(b, out, ivsAt(p, {})));
    op->erase();
  }

private:
  /// `operand`'s indices at loop values `ivs` (constants folded).
  SmallVector<Value> indices(OpBuilder &b, OpOperand *operand,
                             ArrayRef<OpFoldResult> ivs) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> result;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      AffineMap sub = map.getSubMap({r});
      // Keyed by the loop values the index uses, so that output elements
      // that differ only in other loops share it.
      SmallVector<const void *> key = {sub.getAsOpaquePointer()};
      for (auto [d, iv] : llvm::enumerate(ivs))
        if (sub.isFunctionOfDim(d))
          key.push_back(iv.getOpaqueValue());
      auto [it, inserted] = cache.try_emplace(key, Value());
      if (inserted) {
        OpFoldResult at =
            affine::makeComposedFoldedAffineApply(b, loc, sub, ivs);
        if (auto attr = dyn_cast<Attribute>(at)) {
          // One constant per value.
          auto [c, fresh] = cache.try_emplace(
              SmallVector<const void *>{attr.getAsOpaquePointer()}, Value());
          if (fresh)
            c->second = getValueOrCreateConstantIndexOp(b, loc, at);
          it->second = c->second;
        } else {
          it->second = cast<Value>(at);
        }
      }
      result.push_back(it->second);
    }
    return result;
  }

  /// The element of `operand` at `ivs`, loaded once per reduction step
  /// however many output elements read it. (The cache holds index values
  /// under their map and the loop values it uses, constants under their
  /// attribute, loads under their memref, a null, and their indices.)
  Value load(OpBuilder &b, OpOperand *operand, ArrayRef<OpFoldResult> ivs) {
    SmallVector<Value> at = indices(b, operand, ivs);
    SmallVector<const void *> key = {operand->get().getAsOpaquePointer(),
                                     nullptr};
    for (Value v : at)
      key.push_back(v.getAsOpaquePointer());
    auto [it, inserted] = cache.try_emplace(key, Value());
    if (inserted)
      it->second = memref::LoadOp::create(b, loc, operand->get(), at);
    return it->second;
  }

  linalg::LinalgOp op;
  Location loc;
  SmallVector<int64_t> ranges;
  std::map<SmallVector<const void *>, Value> cache;
};

struct GPURegisterTilePass
    : public dlc::impl::GPURegisterTileBase<GPURegisterTilePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (qualifies(op, maxAccumulators))
        found.push_back(op);
    });
    for (linalg::LinalgOp op : found)
      Rewriter(op).run();
  }
};

} // namespace
