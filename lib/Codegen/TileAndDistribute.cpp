//===- TileAndDistribute.cpp - the dlc-tile-and-distribute pass -----------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace dlc {
#define GEN_PASS_DEF_TILEANDDISTRIBUTE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The largest divisor of `n` that is at most `limit` (at least 1).
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// Loops of `root` that some other op of the kernel reduces over: splitting
/// them would make every workgroup recompute the whole reduction.
llvm::SmallBitVector reducedLoops(func::FuncOp kernel, TilingInterface root,
                                  unsigned numLoops) {
  llvm::SmallBitVector reduced(numLoops);
  bool hasReduction = false;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op.getOperation() != root.getOperation() &&
        op.getNumReductionLoops() > 0 &&
        !linalg::isaContractionOpInterface(op) &&
        !linalg::isaConvolutionOpInterface(op))
      hasReduction = true;
  });
  // Statistics reductions (softmax, norms) reduce over trailing dims in
  // practice; keep the innermost loop whole when there is one.
  if (hasReduction && numLoops > 0)
    reduced.set(numLoops - 1);
  return reduced;
}

LogicalResult tileKernel(func::FuncOp kernel, int64_t targetWorkgroups,
                         int64_t minWork) {
  Builder b(kernel.getContext());
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  auto setGrid = [&](ArrayRef<int64_t> grid) {
    SmallVector<int64_t> xyz(grid.rbegin(), grid.rend());
    xyz.resize(3, 1);
    kernel->setAttr(dlc::kGridAttr, b.getDenseI64ArrayAttr(xyz));
  };
  Operation *rootOp =
      ret.getNumOperands() ? ret.getOperand(0).getDefiningOp() : nullptr;
  auto root = dyn_cast_or_null<TilingInterface>(rootOp);
  if (!root || rootOp->getParentOp() != kernel.getOperation()) {
    setGrid({});
    return success();
  }
  SmallVector<utils::IteratorType> iterators = root.getLoopIteratorTypes();
  IRRewriter rewriter(kernel.getContext());
  rewriter.setInsertionPoint(rootOp);
  SmallVector<Range> domain = root.getIterationDomain(rewriter);
  SmallVector<int64_t> extents;
  for (Range r : domain) {
    std::optional<int64_t> size = getConstantIntValue(r.size);
    if (!size)
      return rootOp->emitError("kernel loop extents must be static");
    extents.push_back(*size);
  }
  llvm::SmallBitVector reduced = reducedLoops(kernel, root, iterators.size());

  // Split outer parallel loops until there are about targetWorkgroups
  // workgroups, using divisors so that every tile has the same static size.
  SmallVector<int64_t> tileSizes(iterators.size(), 0);
  SmallVector<int64_t> grid;
  int64_t work = 1;
  for (int64_t e : extents)
    work *= std::max<int64_t>(e, 1);
  int64_t remaining = std::clamp<int64_t>(work / std::max<int64_t>(minWork, 1),
                                          1, targetWorkgroups);
  for (auto [i, it] : llvm::enumerate(iterators)) {
    if (remaining <= 1 || grid.size() == 3)
      break;
    if (it != utils::IteratorType::parallel || reduced.test(i) ||
        extents[i] <= 1)
      continue;
    int64_t count = largestDivisorAtMost(extents[i], remaining);
    if (count <= 1)
      continue;
    tileSizes[i] = extents[i] / count;
    grid.push_back(count);
    remaining = (remaining + count - 1) / count;
  }
  if (grid.empty()) {
    setGrid({});
    return success();
  }

  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(getAsIndexOpFoldResult(kernel.getContext(), tileSizes));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result))
    return rootOp->emitError("cannot tile the kernel's result op");
  for (OpResult r : rootOp->getResults())
    if (Value replacement = result->replacements.lookup(r))
      rewriter.replaceAllUsesWith(r, replacement);
  setGrid(grid);
  return success();
}

struct TileAndDistributePass
    : public dlc::impl::TileAndDistributeBase<TileAndDistributePass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      if (!kernel->hasAttr(dlc::kKernelAttr) || kernel.isExternal())
        continue;
      if (failed(tileKernel(kernel, targetWorkgroups, minWork)))
        return signalPassFailure();
    }
  }
};

} // namespace
