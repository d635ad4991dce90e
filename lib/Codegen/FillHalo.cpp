//===- FillHalo.cpp - the dlc-fill-halo pass ------------------------------===//
//
// A convolution or pooling window that pads its input in the kernel gets,
// per workgroup, a temporary of the padded tile: bufferized, the tile is
// filled with the padding value whole and then the input rows are copied
// over its middle. The fill of the middle is wasted: on MobileNetV2's
// depthwise layers it was a memset of each tile, a third of the time spent
// padding. This pass finds a buffer that is filled whole with one value and
// then has a subview overwritten whole by the next op that touches it, and
// fills only the buffer outside that subview: along each dim in turn, the
// slab before the subview's range and the slab after it, restricted to the
// subview's range in the dims before (so the slabs never overlap and
// together are exactly the rest of the buffer, for any dynamic offsets and
// sizes, an empty subview included).
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace dlc {
#define GEN_PASS_DEF_FILLHALO
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Whether `op` (all loops parallel) writes every element of its only
/// output: each result of the output's map is a distinct loop, or the
/// constant 0 on a dim of extent 1.
bool writesAll(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.payloadUsesValueFromOperand(init))
    return false;
  auto type = dyn_cast<MemRefType>(init->get().getType());
  if (!type)
    return false;
  AffineMap map = op.getMatchingIndexingMap(init);
  llvm::SmallBitVector seen(op.getNumLoops());
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || type.getDimSize(i) != 1)
      return false;
  }
  return true;
}

/// The value `op` writes to every element of its output, when it is one
/// value: a linalg.fill's, or a generic's that yields a value from outside
/// its body or its scalar input.
Value fillValue(linalg::LinalgOp op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation()))
    return fill.value();
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !writesAll(op))
    return {};
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 1)
    return {};
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != &body || arg.getArgNumber() >= op.getNumDpsInputs())
      return {};
    Value input = op.getDpsInputs()[arg.getArgNumber()];
    return input.getType().isIntOrIndexOrFloat() ? input : Value();
  }
  return yielded.getParentRegion()->isAncestor(&generic.getRegion()) ? yielded
                                                                     : Value();
}

/// The buffer whose elements all of `view` covers: `view` itself or a
/// reshape of it.
Value wholeBuffer(Value view) {
  Operation *def = view.getDefiningOp();
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def))
    return collapse.getSrc();
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
    return expand.getSrc();
  return view;
}

struct Halo {
  linalg::LinalgOp fill;
  Value value;
  memref::SubViewOp middle;
  linalg::LinalgOp copy;
};

/// The fill of `alloc` whole and the op after it that overwrites one
/// subview of it whole, when the alloc's uses are exactly that (and
/// readers after the copy).
std::optional<Halo> findHalo(memref::AllocOp alloc) {
  auto type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Halo h;
  // Ops that use the buffer, each through at most one view.
  SmallVector<std::pair<Operation *, Value>> users;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::SubViewOp>(
            user)) {
      for (OpOperand &viewUse : user->getResult(0).getUses())
        users.push_back({viewUse.getOwner(), user->getResult(0)});
      continue;
    }
    users.push_back({user, alloc.getResult()});
  }
  Block *block = alloc->getBlock();
  for (auto &[user, through] : users)
    if (user->getBlock() != block)
      return std::nullopt;
  llvm::sort(users, [](auto &x, auto &y) {
    return x.first->isBeforeInBlock(y.first);
  });
  if (users.size() < 2)
    return std::nullopt;
  // First the fill, of the whole buffer.
  auto fill = dyn_cast<linalg::LinalgOp>(users[0].first);
  if (!fill || !fill.hasPureBufferSemantics() || fill.getNumDpsInits() != 1 ||
      fill.getDpsInitOperand(0)->get() != users[0].second ||
      wholeBuffer(users[0].second) != alloc.getResult())
    return std::nullopt;
  h.fill = fill;
  h.value = fillValue(fill);
  if (!h.value)
    return std::nullopt;
  // Then an op that writes one subview whole and reads nothing of the
  // buffer.
  auto copy = dyn_cast<linalg::LinalgOp>(users[1].first);
  auto middle = users[1].second.getDefiningOp<memref::SubViewOp>();
  if (!copy || !middle || !copy.hasPureBufferSemantics() || !writesAll(copy) ||
      copy.getDpsInitOperand(0)->get() != middle.getResult() ||
      middle.getSourceType().getRank() != middle.getType().getRank() ||
      !llvm::all_of(middle.getMixedStrides(),
                    [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
    return std::nullopt;
  for (Value in : copy.getDpsInputs())
    if (llvm::any_of(
            users, [&](auto &u) { return u.first == copy && u.second == in; }))
      return std::nullopt;
  // The same op may use the buffer only once.
  if (users.size() > 2 && users[2].first == copy)
    return std::nullopt;
  h.middle = middle;
  h.copy = copy;
  return h;
}

void fillOutside(IRRewriter &rewriter, Halo h) {
  Location loc = h.fill.getLoc();
  rewriter.setInsertionPoint(h.copy);
  MemRefType type = h.middle.getSourceType();
  Value buffer = h.middle.getSource();
  SmallVector<OpFoldResult> offsets = h.middle.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = h.middle.getMixedSizes();
  int64_t rank = type.getRank();
  AffineExpr x, y;
  bindSymbols(rewriter.getContext(), x, y);
  OpFoldResult zero = rewriter.getIndexAttr(0);
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  auto fillSlab = [&](ArrayRef<OpFoldResult> at, ArrayRef<OpFoldResult> n) {
    if (llvm::any_of(n,
                     [](OpFoldResult s) { return isConstantIntValue(s, 0); }))
      return;
    Value slab = memref::SubViewOp::create(rewriter, loc, buffer, at, n, ones);
    linalg::FillOp::create(rewriter, loc, ValueRange{h.value},
                           ValueRange{slab});
  };
  for (int64_t d = 0; d < rank; ++d) {
    int64_t extent = type.getDimSize(d);
    if (isConstantIntValue(offsets[d], 0) &&
        isConstantIntValue(sizes[d], extent))
      continue; // the middle spans this dim
    SmallVector<OpFoldResult> at, n;
    for (int64_t e = 0; e < rank; ++e) {
      at.push_back(e < d ? offsets[e] : zero);
      n.push_back(e < d ? sizes[e] : rewriter.getIndexAttr(type.getDimSize(e)));
    }
    // Before the middle's range along d.
    n[d] = offsets[d];
    fillSlab(at, n);
    // After it.
    at[d] = affine::makeComposedFoldedAffineApply(rewriter, loc, x + y,
                                                  {offsets[d], sizes[d]});
    n[d] = affine::makeComposedFoldedAffineApply(
        rewriter, loc, rewriter.getAffineConstantExpr(extent) - x - y,
        {offsets[d], sizes[d]});
    fillSlab(at, n);
  }
  Value whole = h.fill.getDpsInitOperand(0)->get();
  rewriter.eraseOp(h.fill);
  if (Operation *reshape = whole.getDefiningOp();
      reshape && reshape->use_empty())
    rewriter.eraseOp(reshape);
}

struct FillHaloPass : public dlc::impl::FillHaloBase<FillHaloPass> {
  void runOnOperation() override {
    SmallVector<Halo> halos;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (std::optional<Halo> h = findHalo(alloc))
        halos.push_back(*h);
    });
    IRRewriter rewriter(&getContext());
    for (Halo &h : halos)
      fillOutside(rewriter, h);
  }
};

} // namespace
