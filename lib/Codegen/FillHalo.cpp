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

#include "KernelAnalysis.h"

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

void fillOutside(IRRewriter &rewriter, dlc::codegen::FilledCopy h) {
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
    SmallVector<dlc::codegen::FilledCopy> halos;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (std::optional<dlc::codegen::FilledCopy> h =
              dlc::codegen::filledCopy(alloc))
        halos.push_back(*h);
    });
    IRRewriter rewriter(&getContext());
    for (dlc::codegen::FilledCopy &h : halos)
      fillOutside(rewriter, h);
  }
};

} // namespace
