//===- CPULoopOrder.cpp - the dlc-cpu-loop-order pass ---------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SmallBitVector.h"

namespace dlc {
#define GEN_PASS_DEF_CPULOOPORDER
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// How far operand element addresses move, in elements, when loop `d`
/// steps by one: the map's coefficient of d in each result times that
/// dimension's stride. Nothing when the memref's strides are unknown or the
/// map is not linear in d.
std::optional<int64_t> loopStride(AffineMap map, MemRefType type, unsigned d) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  std::function<std::optional<int64_t>(AffineExpr)> coefficient =
      [&](AffineExpr e) -> std::optional<int64_t> {
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      return dim.getPosition() == d ? 1 : 0;
    if (isa<AffineConstantExpr, AffineSymbolExpr>(e))
      return 0;
    auto bin = cast<AffineBinaryOpExpr>(e);
    std::optional<int64_t> l = coefficient(bin.getLHS());
    std::optional<int64_t> r = coefficient(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    if (bin.getKind() == AffineExprKind::Add)
      return *l + *r;
    if (bin.getKind() == AffineExprKind::Mul) {
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        return *l * c.getValue();
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
        return *r * c.getValue();
    }
    if (*l == 0 && *r == 0)
      return 0;
    return std::nullopt; // mod, div or a product of dims involving d
  };
  int64_t total = 0;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    std::optional<int64_t> c = coefficient(e);
    if (!c)
      return std::nullopt;
    if (*c == 0)
      continue;
    if (ShapedType::isDynamic(strides[i]))
      return std::nullopt;
    total += *c * strides[i];
  }
  return total;
}

/// How well loop `d` vectorizes as the innermost loop: +1 for each operand
/// it walks contiguously or leaves in place (an input hoisted into a
/// register, an output accumulated in one), -1 for each it walks with a
/// larger or unknown stride, and a penalty for trip counts too short to
/// fill vectors. An output left in place counts +1 only for reductions:
/// there it saves a load and a store per iteration.
int64_t innermostScore(linalg::LinalgOp op, unsigned d, int64_t trip) {
  bool reduction =
      op.getIteratorTypesArray()[d] == utils::IteratorType::reduction;
  int64_t score = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue; // a scalar
    std::optional<int64_t> stride =
        loopStride(op.getMatchingIndexingMap(&operand), type, d);
    bool output = op.isDpsInit(&operand);
    if (stride && *stride == 1)
      score += 1;
    else if (stride && *stride == 0)
      score += output && reduction ? 1 : 0;
    else
      score -= output ? 2 : 1;
  }
  if (trip < 4)
    score -= 8;
  else if (trip < 16)
    score -= 2;
  return score;
}

/// The new loop order (a list of old loop indices) that puts the loop that
/// vectorizes best innermost, the other parallel loops outermost and the
/// remaining reductions in between, or nothing when the op's order is
/// already right.
std::optional<SmallVector<unsigned>> loopOrder(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  std::optional<unsigned> inner;
  int64_t best = 0;
  // Ties go to parallel loops, then to the later loop.
  for (unsigned pass = 0; pass < 2; ++pass) {
    auto kind = pass == 0 ? utils::IteratorType::parallel
                          : utils::IteratorType::reduction;
    for (unsigned d = 0; d < iterators.size(); ++d) {
      if (iterators[d] != kind || ShapedType::isDynamic(trips[d]))
        continue;
      int64_t score = innermostScore(op, d, trips[d]);
      if (!inner || score > best ||
          (score == best && iterators[*inner] == kind && d > *inner)) {
        inner = d;
        best = score;
      }
    }
  }
  if (!inner)
    return std::nullopt;
  // An output that the best loop walks in steps of t, where a parallel
  // loop of t trips fills the elements between (a repack to (..., W, 4),
  // the next convolution's 4 bytes a word): that loop goes inside the best
  // one. LLVM unrolls it whole, and the best loop's iterations then store
  // t neighbouring elements, which it vectorizes as interleaved stores;
  // with the best loop innermost, every store was strided and the loop
  // stayed scalar (MobileNetV2's residual blocks ending in such a repack).
  std::optional<unsigned> interleaved;
  OpOperand *out = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(out->get().getType());
  if (outType && iterators[*inner] == utils::IteratorType::parallel) {
    AffineMap outMap = op.getMatchingIndexingMap(out);
    std::optional<int64_t> innerStride = loopStride(outMap, outType, *inner);
    for (unsigned d = 0; d < iterators.size() && innerStride; ++d) {
      if (d == *inner || iterators[d] != utils::IteratorType::parallel ||
          trips[d] < 2 || trips[d] > 4 || *innerStride != trips[d])
        continue;
      if (loopStride(outMap, outType, d) == std::optional<int64_t>(1))
        interleaved = d;
    }
  }
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != *inner && i != interleaved &&
        iterators[i] == utils::IteratorType::parallel)
      order.push_back(i);
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (i != *inner && iterators[i] == utils::IteratorType::reduction)
      order.push_back(i);
  order.push_back(*inner);
  if (interleaved)
    order.push_back(*interleaved);
  bool identity = true;
  for (auto [i, o] : llvm::enumerate(order))
    identity &= i == o;
  if (identity)
    return std::nullopt;
  return order;
}

/// Moves `from`'s body into `to` (a rebuilt op with other loops) and
/// returns the linalg.index ops in it, which the caller renumbers.
SmallVector<linalg::IndexOp>
moveBody(IRRewriter &rewriter, linalg::GenericOp from, linalg::GenericOp to) {
  rewriter.inlineRegionBefore(from.getRegion(), to.getRegion(),
                              to.getRegion().end());
  SmallVector<linalg::IndexOp> indices;
  to.getRegion().walk([&](linalg::IndexOp i) { indices.push_back(i); });
  return indices;
}

/// Where the dims of `group` appear among `map`'s results: nothing when
/// they do not appear, their result positions when they appear exactly as
/// consecutive results in group order, failure otherwise (partly, out of
/// order, or inside a compound expression like `oh + kh`).
FailureOr<SmallVector<int64_t>> groupPositions(AffineMap map,
                                               ArrayRef<int64_t> group) {
  SmallVector<int64_t> positions;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim) {
      for (int64_t d : group)
        if (e.isFunctionOfDim(d))
          return failure();
      continue;
    }
    const int64_t *at = llvm::find(group, dim.getPosition());
    if (at == group.end())
      continue;
    if (at - group.begin() != static_cast<int64_t>(positions.size()) ||
        (!positions.empty() && positions.back() != static_cast<int64_t>(i) - 1))
      return failure();
    positions.push_back(i);
  }
  if (!positions.empty() && positions.size() != group.size())
    return failure();
  return positions;
}

/// Merges runs of adjacent loops of one kind that every operand walks as
/// one contiguous block (a 1x1 convolution's oh and ow, a global pool's
/// window), so that the innermost loop is long enough to vectorize.
/// Operands are collapsed with memref.collapse_shape where their strides
/// allow it; loops whose index the body reads are not merged.
linalg::GenericOp collapseLoops(IRRewriter &rewriter, linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (llvm::any_of(trips, ShapedType::isDynamic))
    return op;
  auto reassociationFor = [&](OpOperand &operand, ArrayRef<int64_t> group,
                              ReassociationIndices &dims) -> bool {
    FailureOr<SmallVector<int64_t>> at =
        groupPositions(op.getMatchingIndexingMap(&operand), group);
    if (failed(at))
      return false;
    dims.assign(at->begin(), at->end());
    return true;
  };
  auto legal = [&](ArrayRef<int64_t> group) {
    for (OpOperand &operand : op->getOpOperands()) {
      ReassociationIndices dims;
      if (!reassociationFor(operand, group, dims))
        return false;
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (dims.empty() || !type)
        continue;
      SmallVector<ReassociationIndices> reassociation;
      for (int64_t i = 0; i < type.getRank(); ++i)
        if (i == dims.front())
          reassociation.push_back(dims);
        else if (!llvm::is_contained(dims, i))
          reassociation.push_back({i});
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type,
                                                            reassociation))
        return false;
    }
    return true;
  };

  // Loops whose index the body reads (a gather's coordinates: nearest
  // upsampling reads in[.., h floordiv 2, w floordiv 2]) stay loops of
  // their own: merged, each element would take its indices apart from the
  // merged one by division, a division by a constant per merged dim and
  // element (YOLOv8n's 2x upsampling of 128 x 20 x 20 values: 449 -> 58 us
  // on one Zen 4 core with the loops kept; PP-OCR's text detector 4%
  // faster).
  llvm::SmallBitVector indexed(iterators.size());
  op.getBody()->walk(
      [&](linalg::IndexOp index) { indexed.set(index.getDim()); });
  // Greedy runs of adjacent loops of one kind.
  SmallVector<SmallVector<int64_t>> groups;
  for (unsigned d = 0; d < iterators.size();) {
    SmallVector<int64_t> group = {static_cast<int64_t>(d)};
    unsigned next = d + 1;
    while (next < iterators.size() && iterators[next] == iterators[d] &&
           !indexed.test(d) && !indexed.test(next)) {
      SmallVector<int64_t> wider = group;
      wider.push_back(next);
      if (!legal(wider))
        break;
      group = wider;
      ++next;
    }
    groups.push_back(group);
    d = next;
  }
  if (groups.size() == iterators.size())
    return op;

  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> groupOf(iterators.size());
  SmallVector<AffineExpr> replacements(iterators.size());
  SmallVector<utils::IteratorType> newIterators;
  for (auto [g, group] : llvm::enumerate(groups)) {
    for (int64_t d : group) {
      groupOf[d] = g;
      replacements[d] = getAffineDimExpr(g, ctx);
    }
    newIterators.push_back(iterators[group.front()]);
  }

  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  SmallVector<AffineMap> newMaps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    // Map results: each merged group's results become one.
    SmallVector<AffineExpr> results;
    SmallVector<ReassociationIndices> reassociation;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (dim && groups[groupOf[dim.getPosition()]].size() > 1 &&
          groups[groupOf[dim.getPosition()]].front() != dim.getPosition()) {
        reassociation.back().push_back(i);
        continue;
      }
      results.push_back(e.replaceDims(replacements));
      reassociation.push_back({static_cast<int64_t>(i)});
    }
    newMaps.push_back(AffineMap::get(groups.size(), 0, results, ctx));
    Value value = operand.get();
    if (results.size() != map.getNumResults())
      value =
          memref::CollapseShapeOp::create(rewriter, loc, value, reassociation);
    operands.push_back(value);
  }
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange(),
      ArrayRef<Value>(operands).take_front(op.getNumDpsInputs()),
      ArrayRef<Value>(operands).drop_front(op.getNumDpsInputs()), newMaps,
      newIterators);
  // Loops whose index the body reads are never merged (above): their
  // indices are only renumbered.
  for (linalg::IndexOp i : moveBody(rewriter, op, generic)) {
    assert(groups[groupOf[i.getDim()]].size() == 1 && "indexed loop merged");
    rewriter.setInsertionPoint(i);
    rewriter.replaceOp(
        i, linalg::IndexOp::create(rewriter, loc, groupOf[i.getDim()]));
  }
  rewriter.eraseOp(op);
  return generic;
}

/// Removes loops of trip count 1 (a 1x1 kernel's window, a batch of one)
/// by putting index 0 in their place in every map, so that the loops around
/// them can be merged. Operands keep their shapes.
linalg::GenericOp dropUnitLoops(IRRewriter &rewriter, linalg::GenericOp op) {
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> replacements;
  SmallVector<utils::IteratorType> kept;
  SmallVector<int64_t> newIndex;
  for (auto [d, trip] : llvm::enumerate(trips)) {
    if (trip == 1) {
      replacements.push_back(getAffineConstantExpr(0, ctx));
      newIndex.push_back(-1);
      continue;
    }
    newIndex.push_back(kept.size());
    replacements.push_back(getAffineDimExpr(kept.size(), ctx));
    kept.push_back(iterators[d]);
  }
  if (kept.size() == trips.size() || kept.empty())
    return op;
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray())
    maps.push_back(simplifyAffineMap(
        map.replaceDimsAndSymbols(replacements, {}, kept.size(), 0)));
  rewriter.setInsertionPoint(op);
  auto generic = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), op.getDpsInputs(),
      op.getDpsInits(), maps, kept);
  for (linalg::IndexOp i : moveBody(rewriter, op, generic)) {
    rewriter.setInsertionPoint(i);
    int64_t to = newIndex[i.getDim()];
    if (to < 0)
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(i, 0);
    else
      rewriter.replaceOpWithNewOp<linalg::IndexOp>(i, to);
  }
  rewriter.eraseOp(op);
  return generic;
}

/// Floating-point add/mul in bodies of reductions may be contracted into
/// FMAs and reassociated. Elementwise ones round as the model writes them:
/// a Mul then an Add fused into one FMA rounds once where ONNX Runtime (and
/// Vulkan, CUDA) round twice, and in a quantized model that last bit can
/// move a value across a rounding boundary of the next quantization (the
/// zoo's quantize_dynamic CRNN: its conv's `acc * scale + bias` as an FMA
/// changed the next DynamicQuantizeLinear's scale by one ulp and the
/// output by 2e-4).
void setFastMath(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return;
  arith::FastMathFlags flags =
      arith::FastMathFlags::contract | arith::FastMathFlags::reassoc;
  op->walk([&](Operation *inner) {
    if (!isa<arith::AddFOp, arith::MulFOp, arith::SubFOp, arith::MaximumFOp,
             arith::MinimumFOp>(inner))
      return;
    auto fm = cast<arith::ArithFastMathInterface>(inner);
    inner->setAttr(fm.getFastMathAttrName(),
                   arith::FastMathFlagsAttr::get(inner->getContext(), flags));
  });
}

struct CPULoopOrderPass : public dlc::impl::CPULoopOrderBase<CPULoopOrderPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      setFastMath(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          continue; // ops without a region builder keep their order
        generic = *g;
      }
      generic = dropUnitLoops(rewriter, generic);
      generic = collapseLoops(rewriter, generic);
      std::optional<SmallVector<unsigned>> order = loopOrder(generic);
      if (!order)
        continue;
      rewriter.setInsertionPoint(generic);
      (void)linalg::interchangeGenericOp(rewriter, generic, *order);
    }
  }
};

} // namespace
