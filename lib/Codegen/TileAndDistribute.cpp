//===- TileAndDistribute.cpp - the dlc-tile-and-distribute pass -----------===//

#include "KernelAnalysis.h"

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace dlc {
#define GEN_PASS_DEF_TILEANDDISTRIBUTE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using dlc::codegen::ChannelLoop;
using dlc::codegen::channelsLastLoop;
using dlc::codegen::loopRanges;
using dlc::codegen::resultOp;

namespace {

/// The largest divisor of `n` that is at most `limit` (at least 1).
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// Loops of `root` that some other op of the kernel reduces over: splitting
/// them would make every workgroup (or thread) recompute the whole
/// reduction, and hold all of its input. Found two ways, from the
/// reductions' own indexing (not from where reductions usually are: a
/// softmax over a channel axis reduces a middle dim):
/// - a root operand that a reduction of the kernel computes stays the same
///   along the root loops its indexing map omits (the broadcast of a row
///   statistic along its row);
/// - a reduction whose input has the shape of the root's result reduces the
///   root loops that write the input dims it reduces.
llvm::SmallBitVector reducedLoops(func::FuncOp kernel, TilingInterface root,
                                  unsigned numLoops) {
  llvm::SmallBitVector reduced(numLoops);
  auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
  if (!rootOp || rootOp.getNumDpsInits() != 1 ||
      rootOp.getNumLoops() != numLoops)
    return reduced;
  auto isStatistic = [&](linalg::LinalgOp op) {
    return op && op != rootOp && op.getNumReductionLoops() > 0 &&
           !linalg::isaContractionOpInterface(op) &&
           !linalg::isaConvolutionOpInterface(op);
  };
  for (OpOperand *operand : rootOp.getDpsInputOperands()) {
    if (!isStatistic(operand->get().getDefiningOp<linalg::LinalgOp>()))
      continue;
    AffineMap map = rootOp.getMatchingIndexingMap(operand);
    for (unsigned d = 0; d < numLoops; ++d)
      if (rootOp.getIteratorTypesArray()[d] == utils::IteratorType::parallel &&
          !map.isFunctionOfDim(d))
        reduced.set(d);
  }
  // The root loop that writes each dim of its result (identity or
  // permuted output maps).
  AffineMap out = rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0));
  SmallVector<int64_t> loopOfDim(out.getNumResults(), -1);
  for (auto [r, e] : llvm::enumerate(out.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      loopOfDim[r] = dim.getPosition();
  Type resultType = rootOp.getDpsInitOperand(0)->get().getType();
  kernel.walk([&](linalg::LinalgOp op) {
    if (!isStatistic(op))
      return;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (input->get().getType() != resultType)
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      for (auto [r, e] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (dim &&
            iterators[dim.getPosition()] == utils::IteratorType::reduction &&
            loopOfDim[r] >= 0)
          reduced.set(loopOfDim[r]);
      }
    }
  });
  return reduced;
}

/// Root loops standing for the loops `d` of a kernel op that `matches`
/// for which `pick(op, d)` holds: the root's own parallel loops when the
/// root matches; else, for a root that writes a matching op's output shape
/// with an identity map (its epilogue), the root loops of the output dims
/// that op's loops write.
llvm::SmallBitVector
rootLoopsOf(func::FuncOp kernel, linalg::LinalgOp rootOp, unsigned numLoops,
            function_ref<bool(linalg::LinalgOp)> matches,
            function_ref<bool(linalg::LinalgOp, unsigned)> pick) {
  llvm::SmallBitVector loops(numLoops);
  if (!rootOp || rootOp.getNumDpsInits() != 1)
    return loops;
  if (matches(rootOp)) {
    SmallVector<utils::IteratorType> iterators = rootOp.getIteratorTypesArray();
    for (unsigned d = 0; d < numLoops; ++d)
      if (iterators[d] == utils::IteratorType::parallel && pick(rootOp, d))
        loops.set(d);
    return loops;
  }
  if (!rootOp.getMatchingIndexingMap(rootOp.getDpsInitOperand(0)).isIdentity())
    return loops;
  kernel.walk([&](linalg::LinalgOp op) {
    if (!matches(op))
      return;
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (out.getNumResults() != numLoops)
      return;
    for (auto [r, e] : llvm::enumerate(out.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        if (pick(op, dim.getPosition()))
          loops.set(r);
  });
  return loops;
}

/// Loops of `root` that index the padded input of a convolution in the
/// kernel. Every CPU workgroup computes the padding its tile reads; split
/// along output channels, each one would pad the whole input, so these
/// loops are split first; likewise for an unpadded image larger than the
/// filter, which each workgroup would otherwise read whole. Assumes the root
/// writes the convolution's output shape with an identity map (its epilogue),
/// else returns none.
llvm::SmallBitVector paddedInputLoops(func::FuncOp kernel, TilingInterface root,
                                      unsigned numLoops) {
  auto rootOp = dyn_cast<linalg::LinalgOp>(root.getOperation());
  // Also a convolution whose image outweighs its filter (a 1x1
  // convolution on a large image): split along output channels, every
  // workgroup would read the whole image; along rows, only the filter,
  // which is smaller.
  auto elements = [](Value v) {
    auto type = dyn_cast<ShapedType>(v.getType());
    return type && type.hasStaticShape() ? type.getNumElements() : 0;
  };
  // Likewise a contraction whose first input the kernel computes (the
  // columns of a patch convolution, transposed in the kernel) and that
  // outweighs the other: split along the other's loops (output channels),
  // every workgroup would compute all of it again.
  auto computed = [](Value v) {
    return v.getDefiningOp<linalg::LinalgOp>() ||
           v.getDefiningOp<tensor::PadOp>();
  };
  auto padded = [&](linalg::LinalgOp op) {
    if (op.getNumDpsInputs() < 2 || op.getNumDpsInits() != 1)
      return false;
    Value image = op.getDpsInputs()[0];
    bool convolution = linalg::isaConvolutionOpInterface(op);
    if (!convolution && (op.getNumReductionLoops() == 0 || !computed(image)))
      return false;
    return image.getDefiningOp<tensor::PadOp>() ||
           elements(image) > elements(op.getDpsInputs()[1]);
  };
  // Loops that index the padded input.
  return rootLoopsOf(
      kernel, rootOp, numLoops, padded, [](linalg::LinalgOp op, unsigned d) {
        return op.getMatchingIndexingMap(op.getDpsInputOperand(0))
            .isFunctionOfDim(d);
      });
}

/// How one kernel is split: workgroup tile sizes (0: not split), thread
/// tile sizes within a workgroup (GPUs), and the resulting grid and
/// workgroup size, both x-fastest.
struct TilingPlan {
  SmallVector<int64_t> workgroupTiles;
  SmallVector<int64_t> threadTiles;
  SmallVector<int64_t> grid;          ///< in loop order (x last)
  SmallVector<int64_t> workgroupSize; ///< x, y, z
  /// GPUs: the loop spread over workgroups only whose iterations each
  /// thread takes several of.
  std::optional<unsigned> registerLoop;
};

/// The work of a kernel in units of root-op iterations: the root's, its
/// reductions' (a convolution's multiply-adds) at 64 to one iteration, or
/// for a reduction that reads an input's elements about once each (a
/// matrix-vector product), that input's size; whichever is most. A
/// register-tiled multiply-add costs a small fraction of an elementwise output;
/// counted one for one, small convolutions would be split into workgroups too
/// small to tile well. `streams`: whether such a once-read input is what
/// bounds the kernel (it is then bound by memory).
struct KernelWork {
  int64_t work = 1;
  bool streams = false;
};

KernelWork kernelWork(func::FuncOp kernel, ArrayRef<int64_t> rootExtents) {
  constexpr int64_t kMultiplyAddsPerIteration = 64;
  auto volume = [](ArrayRef<int64_t> extents) {
    int64_t v = 1;
    for (int64_t e : extents)
      v *= ShapedType::isDynamic(e) ? 1 : std::max<int64_t>(e, 1);
    return v;
  };
  int64_t computed = volume(rootExtents), streamed = 0;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return;
    std::optional<SmallVector<int64_t>> ranges = loopRanges(op);
    if (!ranges)
      return;
    int64_t multiplyAdds = volume(*ranges);
    computed = std::max(computed, multiplyAdds / kMultiplyAddsPerIteration);
    // A product that reads each element of an operand about once (a
    // matrix-vector product) is bound by memory: its work is that
    // operand's size. It streams that operand along the output's columns
    // where they are its innermost dim (a weight's rows; not a pooled
    // image's channels).
    AffineMap outMap = op.getIndexingMapsArray().back();
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<ShapedType>(input->get().getType());
      if (!type || !type.hasStaticShape() ||
          multiplyAdds > 4 * type.getNumElements())
        continue;
      computed = std::max(computed, type.getNumElements());
      AffineMap map = op.getMatchingIndexingMap(input);
      if (outMap.getNumResults() > 0 && map.getNumResults() > 0 &&
          outMap.getResults().back() == map.getResults().back() &&
          isa<AffineDimExpr>(map.getResults().back()))
        streamed = std::max(streamed, type.getNumElements());
    }
  });
  return KernelWork{computed, streamed > 0 && streamed >= computed};
}

/// CPUs: split outer parallel loops until there are about `target`
/// workgroups of at least `minWork` iterations (of `work` in all) each.
TilingPlan planCPU(ArrayRef<utils::IteratorType> iterators,
                   ArrayRef<int64_t> extents,
                   const llvm::SmallBitVector &reduced,
                   const llvm::SmallBitVector &preferred, KernelWork work,
                   int64_t target, int64_t minWork,
                   std::optional<ChannelLoop> channels, bool padsInput,
                   std::optional<unsigned> columns) {
  TilingPlan plan;
  plan.workgroupTiles.assign(iterators.size(), 0);
  plan.workgroupSize = {1, 1, 1};
  int64_t remaining =
      std::clamp<int64_t>(work.work / std::max<int64_t>(minWork, 1), 1, target);
  // Output channels that end in a partial block (42 in blocks of 16) are
  // read back as (c floordiv 16, c mod 16); a tile of all of them would be
  // sliced through `mod` to the remainder's lanes, and tiles of whole
  // blocks cannot be static. Such a kernel is not split at all
  // (dlc-cpu-int8-conv only leaves ones with nothing else to split).
  if (channels && channels->block > 1 &&
      extents[channels->loop] > channels->block &&
      extents[channels->loop] % channels->block != 0)
    return plan;
  // The loop kernels vectorize, the output's columns (the last parallel
  // loop) or the output channels of a channels-last convolution, keeps
  // tiles of at least kMinColumns iterations. A channels-last convolution
  // is split along output channels only: each workgroup then reads its
  // slice of the filter once, for all pixels. A kernel bound by streaming
  // an operand (a matrix-vector product's matrix, read once) keeps
  // kStreamColumns: each of its rows is then read as 512 contiguous bytes
  // (f32), 8 cache lines, where 32 columns read 2 lines and then jumped a
  // row ahead, which the prefetchers did not follow (a [512 x 2048] weight
  // at batch 1: 164 -> 60 us on one Zen 4 core).
  constexpr int64_t kMinColumns = 32;
  constexpr int64_t kStreamColumns = 128;
  int64_t minColumns = work.streams ? kStreamColumns : kMinColumns;
  int64_t lastParallel = -1;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      lastParallel = i;
  if (channels)
    lastParallel = channels->loop;
  else if (columns)
    lastParallel = *columns;
  // Preferred loops first (in order), then the others; the grid keeps
  // loop order.
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (preferred.test(i))
      order.push_back(i);
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (!preferred.test(i))
      order.push_back(i);
  // Every workgroup of a convolution that pads its input (`padsInput`)
  // copies the padded input rows its tile reads: a tile of one output row
  // of a 3x3 convolution copies three input rows, and a split along other
  // loops (output channels) copies them all again. So an image's rows
  // (preferred) go in tiles of at least two rows, and once they give
  // kEnoughWorkgroups, no other loop is split. Few rows too: a tile of
  // one row leaves the register tiler no row loop to skip the filter taps
  // that fall on padding rows with (its input channels and taps merge
  // into one loop), a third of a 3x3 convolution's multiply-adds over 2
  // rows (CRNN's 192-channel 2x80 convolution 0.94 -> 0.70 ms on one Zen 4
  // core, 4x80 1.88 -> 1.60; the model 0.88x at 1 and 2 threads). A
  // channels-last convolution, which every workgroup pads whole, gets at
  // most kEnoughWorkgroups.
  constexpr int64_t kEnoughWorkgroups = 8;
  int64_t preferredWorkgroups = 1;
  SmallVector<int64_t> counts(iterators.size(), 0);
  for (unsigned i : order) {
    utils::IteratorType it = iterators[i];
    if (remaining <= 1 ||
        llvm::count_if(counts, [](int64_t c) { return c > 0; }) == 3)
      break;
    if (padsInput && !channels && !preferred.test(i) &&
        preferredWorkgroups >= kEnoughWorkgroups)
      break;
    // A channels-last convolution that pads its input in the kernel is
    // split along output channels only (each workgroup pads all of it);
    // one that reads its input from memory also along other loops when
    // its channel blocks are too few.
    if (it != utils::IteratorType::parallel || reduced.test(i) ||
        extents[i] <= 1 || (channels && padsInput && i != channels->loop))
      continue;
    int64_t limit = remaining;
    if (padsInput && !channels && preferred.test(i))
      limit = std::min(limit, extents[i] / 2);
    if (static_cast<int64_t>(i) == lastParallel)
      limit = std::min(limit, std::max<int64_t>(extents[i] / minColumns, 1));
    // Tiles the register tiler fills: channel tiles are whole channel
    // blocks; column tiles whole vectors (16 f32 lanes on the widest
    // CPUs), or no worse filled than the whole row; the other loops,
    // the register tiler's rows among them, in multiples of 8 where the
    // extent allows, except an image's rows (preferred), split freely.
    int64_t granule = 1;
    if (channels && i == channels->loop)
      granule = std::max<int64_t>(channels->block, 1);
    else if (static_cast<int64_t>(i) == lastParallel && extents[i] % 16 == 0)
      granule = 16;
    else if (!preferred.test(i) && extents[i] % 8 == 0)
      granule = 8;
    if (extents[i] % granule != 0)
      continue;
    // A channels-last convolution is split along output channels only:
    // each of those workgroups copies the whole padded input. Likewise an
    // image with too few rows for kEnoughWorkgroups (CRNN's 4 and 2): its
    // other loops make up the difference, not more, since each of their
    // tiles copies the same padded rows again.
    if (padsInput && channels)
      limit = std::min(limit, kEnoughWorkgroups);
    if (padsInput && !channels && !preferred.test(i) && preferred.any())
      limit = std::min(
          limit, std::max<int64_t>(kEnoughWorkgroups / preferredWorkgroups, 1));
    int64_t count = largestDivisorAtMost(extents[i] / granule, limit);
    // Columns that are no whole number of vectors: tiles that leave no
    // more lanes idle than the whole row does.
    if (granule == 1 && static_cast<int64_t>(i) == lastParallel) {
      auto laneUse = [](int64_t n) {
        return static_cast<double>(n) / static_cast<double>((n + 15) / 16 * 16);
      };
      while (count > 1 &&
             laneUse(extents[i] / count) < laneUse(extents[i]) - 0.05)
        count = largestDivisorAtMost(extents[i], count - 1);
    }
    if (count <= 1)
      continue;
    plan.workgroupTiles[i] = extents[i] / count;
    counts[i] = count;
    if (preferred.test(i))
      preferredWorkgroups *= count;
    remaining = (remaining + count - 1) / count;
  }
  for (int64_t c : counts)
    if (c > 0)
      plan.grid.push_back(c);
  return plan;
}

/// Targets with little memory (a `scratch-bytes` budget): splits the
/// root's loops further until what one workgroup builds in its thread's
/// scratch fits `budget`: a convolution's padded input (`paddedBytes` in
/// all), which shrinks with the splits of the loops that index it
/// (`preferred`), and the kernel's largest intermediate tensor
/// (`intermediateBytes`), which shrinks with every split. On a
/// microcontroller that scratch is RAM taken from everything else, and
/// workgroups run one after another on its one core, so more of them cost
/// little. Loops that index the padded input are split first (outer
/// first), then the others; never the last parallel loop (the vectorized
/// columns); channel blocks only whole; at most three split loops. A
/// budget that cannot be met leaves the smallest tiles found.
void fitScratchTiles(TilingPlan &plan, ArrayRef<utils::IteratorType> iterators,
                     ArrayRef<int64_t> extents,
                     const llvm::SmallBitVector &reduced,
                     const llvm::SmallBitVector &preferred,
                     std::optional<ChannelLoop> channels, int64_t paddedBytes,
                     int64_t intermediateBytes, int64_t budget) {
  unsigned n = iterators.size();
  SmallVector<int64_t> counts(n, 1);
  for (unsigned i = 0; i < n; ++i)
    if (plan.workgroupTiles.size() == n && plan.workgroupTiles[i] > 0)
      counts[i] = extents[i] / plan.workgroupTiles[i];
  int64_t lastParallel = -1;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      lastParallel = i;
  auto perWorkgroup = [&]() {
    int64_t indexing = 1, all = 1;
    for (unsigned i = 0; i < n; ++i) {
      all *= counts[i];
      if (preferred.test(i))
        indexing *= counts[i];
    }
    return (paddedBytes + indexing - 1) / indexing +
           (intermediateBytes + all - 1) / all;
  };
  auto splitLoops = [&]() {
    return llvm::count_if(counts, [](int64_t c) { return c > 1; });
  };
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < n; ++i)
    if (preferred.test(i))
      order.push_back(i);
  for (unsigned i = 0; i < n; ++i)
    if (!preferred.test(i))
      order.push_back(i);
  bool changed = false;
  while (perWorkgroup() > budget) {
    bool grew = false;
    for (unsigned i : order) {
      bool channelLoop = channels && i == channels->loop;
      int64_t granule = channelLoop ? std::max<int64_t>(channels->block, 1) : 1;
      if (grew || reduced.test(i) ||
          iterators[i] != utils::IteratorType::parallel ||
          (static_cast<int64_t>(i) == lastParallel && !channelLoop) ||
          extents[i] % granule != 0 || (counts[i] == 1 && splitLoops() == 3))
        continue;
      // The next count that leaves whole granules per tile.
      int64_t units = extents[i] / granule;
      for (int64_t d = counts[i] + 1; d <= units && !grew; ++d)
        if (units % d == 0) {
          counts[i] = d;
          grew = changed = true;
        }
    }
    if (!grew)
      break;
  }
  if (!changed)
    return;
  plan.workgroupTiles.assign(n, 0);
  plan.grid.clear();
  for (unsigned i = 0; i < n; ++i)
    if (counts[i] > 1) {
      plan.workgroupTiles[i] = extents[i] / counts[i];
      plan.grid.push_back(counts[i]);
    }
}

/// The root loops planGPU distributes: x, y, z.
SmallVector<unsigned> gpuLoops(ArrayRef<utils::IteratorType> iterators,
                               ArrayRef<int64_t> extents,
                               const llvm::SmallBitVector &reduced) {
  SmallVector<unsigned> dims;
  for (int i = static_cast<int>(iterators.size()) - 1;
       i >= 0 && dims.size() < 3; --i)
    if (iterators[i] == utils::IteratorType::parallel && !reduced.test(i) &&
        extents[i] > 1)
      dims.push_back(i);
  return dims;
}

/// GPUs: threads along the innermost (x) and next (y) parallel loops, up
/// to `maxThreads` per workgroup; a third loop (z) is spread over
/// workgroups only. Other loops run inside each thread. Each thread takes
/// `tx` consecutive iterations of x and `tw` of the first loop spread over
/// workgroups only (z, or y when it gets one thread): its register tile
/// (dlc-gpu-register-tile). Returns no plan when those do not divide.
std::optional<TilingPlan> planGPU(ArrayRef<utils::IteratorType> iterators,
                                  ArrayRef<int64_t> extents,
                                  const llvm::SmallBitVector &reduced,
                                  int64_t maxThreads, int64_t tx = 1,
                                  int64_t tw = 1) {
  TilingPlan plan;
  unsigned n = iterators.size();
  plan.workgroupTiles.assign(n, 0);
  plan.threadTiles.assign(n, 0);
  plan.workgroupSize = {1, 1, 1};
  SmallVector<unsigned> dims = gpuLoops(iterators, extents, reduced);
  int64_t threadsLeft = maxThreads;
  // Thread loops are mapped x, y, z in order over the dims that have more
  // than one thread, so the workgroup size lists only those.
  unsigned slot = 0;
  bool tiledW = tw == 1;
  for (auto [k, d] : llvm::enumerate(dims)) {
    int64_t perThread = k == 0 ? tx : 1;
    if (extents[d] % perThread != 0)
      return std::nullopt;
    int64_t threads = 1;
    if (k < 2)
      threads = largestDivisorAtMost(extents[d] / perThread,
                                     k == 0 ? std::min<int64_t>(64, threadsLeft)
                                            : threadsLeft);
    if (threads == 1 && k > 0 && !tiledW) {
      if (extents[d] % tw != 0)
        return std::nullopt;
      perThread = tw;
      tiledW = true;
      plan.registerLoop = d;
    }
    threadsLeft /= threads;
    plan.workgroupTiles[d] = threads * perThread;
    if (threads > 1) {
      plan.threadTiles[d] = perThread;
      plan.workgroupSize[slot++] = threads;
    }
  }
  if (!tiledW)
    return std::nullopt;
  for (unsigned i = 0; i < n; ++i)
    if (plan.workgroupTiles[i])
      plan.grid.push_back(extents[i] / plan.workgroupTiles[i]);
  return plan;
}

/// The kernel's convolution with a filter window (not 1x1) and at least
/// kMinReduction multiply-adds per output and, for each root loop, whether a
/// thread taking several of its iterations reuses elements it loads: some input
/// of the convolution does not depend on the loop that writes that root loop's
/// output dim (output channels reuse the image, columns the filter; a depthwise
/// convolution's channels nothing).
llvm::SmallBitVector reusingLoops(func::FuncOp kernel, TilingInterface root,
                                  unsigned numLoops) {
  // Measured on an H200 (docs/benchmarks.md): register tiles paid off for
  // convolutions with a filter window and long reductions; matrix
  // products (whose threads then read the right operand's rows with
  // gaps), 1x1 convolutions (matrix products too) and short reductions (a
  // depthwise 3x3) got slower.
  constexpr int64_t kMinReduction = 64;
  auto windowedConvolution = [](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0 || op.getNumDpsInputs() < 2 ||
        op.getNumDpsInits() != 1 || !linalg::isaConvolutionOpInterface(op))
      return false;
    std::optional<SmallVector<int64_t>> known = loopRanges(op);
    if (!known)
      return false;
    SmallVector<int64_t> ranges = *known;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    AffineMap image = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    int64_t steps = 1;
    bool window = false;
    for (unsigned d = 0; d < ranges.size(); ++d) {
      if (iterators[d] != utils::IteratorType::reduction)
        continue;
      steps *= ShapedType::isDynamic(ranges[d]) ? 1 : ranges[d];
      if (ranges[d] <= 1)
        continue;
      // A filter tap: a reduction loop of more than one step that the
      // image reads together with an output loop (oh + kh).
      for (AffineExpr e : image.getResults())
        for (unsigned p = 0; p < ranges.size(); ++p)
          window |= iterators[p] == utils::IteratorType::parallel &&
                    e.isFunctionOfDim(d) && e.isFunctionOfDim(p);
    }
    return window && steps >= kMinReduction;
  };
  // Some input does not depend on the loop.
  auto reused = [](linalg::LinalgOp op, unsigned d) {
    return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
      return !op.getMatchingIndexingMap(input).isFunctionOfDim(d);
    });
  };
  return rootLoopsOf(kernel, dyn_cast<linalg::LinalgOp>(root.getOperation()),
                     numLoops, windowedConvolution, reused);
}

/// GPUs with a contraction in the kernel: the plan whose threads take the
/// most outputs each (at most kMaxTile) along loops that reuse loaded
/// elements, while the grid keeps at least kMinWorkgroups workgroups (or
/// what one output per thread gives, if fewer) of at least a warp each (or
/// as many threads as one output per thread gives) and kMinThreads threads
/// in all (or as many as one output per thread gives).
TilingPlan planGPUTiled(ArrayRef<utils::IteratorType> iterators,
                        ArrayRef<int64_t> extents,
                        const llvm::SmallBitVector &reduced,
                        const llvm::SmallBitVector &reuse, int64_t maxThreads) {
  constexpr int64_t kMaxTile = 16, kMinWorkgroups = 128, kWarp = 32,
                    kMinThreads = 16384;
  TilingPlan best = *planGPU(iterators, extents, reduced, maxThreads);
  auto workgroups = [](const TilingPlan &p) {
    int64_t w = 1;
    for (int64_t g : p.grid)
      w *= g;
    return w;
  };
  auto threads = [](const TilingPlan &p) {
    return p.workgroupSize[0] * p.workgroupSize[1] * p.workgroupSize[2];
  };
  // Threads keep enough of them in all (what hides latency; a register
  // tile that left a 14x14 convolution of 256 channels 12K threads was
  // slower), enough workgroups, and workgroups of at least a warp.
  int64_t minTotal = std::min(workgroups(best) * threads(best), kMinThreads);
  int64_t floor = std::min(workgroups(best), kMinWorkgroups);
  int64_t minThreads = std::min(threads(best), kWarp);
  SmallVector<unsigned> dims = gpuLoops(iterators, extents, reduced);
  int64_t bestTile = 1;
  for (int64_t tx : {1, 2, 4}) {
    if (tx > 1 && (dims.empty() || !reuse.test(dims[0])))
      continue;
    for (int64_t tw : {1, 2, 4, 8}) {
      if (tx * tw > kMaxTile || tx * tw <= bestTile)
        continue;
      std::optional<TilingPlan> p =
          planGPU(iterators, extents, reduced, maxThreads, tx, tw);
      if (!p || workgroups(*p) < floor || threads(*p) < minThreads ||
          workgroups(*p) * threads(*p) < minTotal)
        continue;
      // The loop that took `tw` must reuse too.
      if (p->registerLoop && !reuse.test(*p->registerLoop))
        continue;
      best = *p;
      bestTile = tx * tw;
    }
  }
  return best;
}

/// Tiles `op` by `tiles` into an scf.forall and fuses its producers. The
/// loop is marked as distributed over blocks (workgroups) or threads, the
/// last tiled loop being x; marked loops are never folded away, even with a
/// single iteration, so later passes find them.
FailureOr<Operation *> tileAndFuse(IRRewriter &rewriter, TilingInterface op,
                                   ArrayRef<int64_t> tiles, bool threads) {
  MLIRContext *ctx = op.getContext();
  unsigned tiled = llvm::count_if(tiles, [](int64_t t) { return t != 0; });
  SmallVector<Attribute> mapping;
  for (unsigned k = 0; k < tiled; ++k) {
    auto dim = static_cast<gpu::MappingId>(tiled - 1 - k);
    mapping.push_back(threads
                          ? Attribute(gpu::GPUThreadMappingAttr::get(ctx, dim))
                          : Attribute(gpu::GPUBlockMappingAttr::get(ctx, dim)));
  }
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, tiles));
  tiling.setMapping(mapping);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  rewriter.setInsertionPoint(op);
  // Upstream reports a producer it cannot fuse as an error and goes on
  // without fusing it (the producer then runs whole, before the loop):
  // that is no failure of the compile, so such reports are kept back and
  // shown only if tiling fails as a whole.
  SmallVector<Diagnostic> held;
  FailureOr<scf::SCFTileAndFuseResult> result;
  {
    ScopedDiagnosticHandler hold(ctx, [&](Diagnostic &d) {
      held.push_back(std::move(d));
      return success();
    });
    result = scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
  }
  if (failed(result)) {
    for (Diagnostic &d : held)
      ctx->getDiagEngine().emit(std::move(d));
    return op->emitError("cannot tile the kernel's result op"), failure();
  }
  for (OpResult r : op->getResults())
    if (Value replacement = result->replacements.lookup(r))
      rewriter.replaceAllUsesWith(r, replacement);
  return result->tiledAndFusedOps.front();
}

LogicalResult tileKernel(func::FuncOp kernel,
                         const dlc::TileAndDistributeOptions &options) {
  Builder b(kernel.getContext());
  // CPUs: a channels-last convolution and the root loop of its channels.
  std::optional<ChannelLoop> channels;
  if (options.maxThreads == 0)
    if (linalg::LinalgOp root = resultOp(kernel))
      channels = channelsLastLoop(kernel, root);
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  auto record = [&](ArrayRef<int64_t> grid, ArrayRef<int64_t> wgSize) {
    SmallVector<int64_t> xyz(grid.rbegin(), grid.rend());
    xyz.resize(3, 1);
    kernel->setAttr(dlc::kGridAttr, b.getDenseI64ArrayAttr(xyz));
    SmallVector<int64_t> size(wgSize);
    size.resize(3, 1);
    kernel->setAttr(dlc::kWorkgroupSizeAttr, b.getDenseI64ArrayAttr(size));
  };
  Operation *rootOp =
      ret.getNumOperands() ? ret.getOperand(0).getDefiningOp() : nullptr;
  auto root = dyn_cast_or_null<TilingInterface>(rootOp);
  if (!root || rootOp->getParentOp() != kernel.getOperation()) {
    record({}, {});
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
  // A loop of zero trips anywhere in the kernel (a reduction over an empty
  // dim): upstream tiling and fusion do not expect it, and such kernels
  // are tiny.
  bool emptyLoop = llvm::is_contained(extents, 0);
  kernel.walk([&](linalg::LinalgOp op) {
    std::optional<SmallVector<int64_t>> ranges = loopRanges(op);
    emptyLoop |= ranges && llvm::is_contained(*ranges, 0);
  });
  if (emptyLoop) {
    record({}, {});
    return success();
  }
  llvm::SmallBitVector reduced = reducedLoops(kernel, root, iterators.size());
  // A repack for dot products (dlc-cpu-int8-conv's (N, C / 4, H, W, 4) of
  // (N, C, H, W)) as the root, after the convolution that computes what it
  // repacks: the convolution vectorizes the pixels, so the root's columns
  // are W, not the 4 bytes of a word, which are never split. Split along
  // W, MobileNetV2's 1x1 convolutions at 14x14 ran rows of 7 pixels, under
  // half of a 16-lane vector.
  std::optional<unsigned> columns;
  if (options.maxThreads == 0 && extents.size() == 5 && extents.back() == 4 &&
      reduced.none()) {
    auto generic = dyn_cast<linalg::GenericOp>(rootOp);
    bool producedHere = false;
    kernel.walk([&](linalg::LinalgOp op) {
      producedHere |= op.getNumReductionLoops() > 0;
    });
    MLIRContext *ctx = kernel.getContext();
    AffineExpr d[5];
    bindDims(ctx, d[0], d[1], d[2], d[3], d[4]);
    AffineMap repack =
        AffineMap::get(5, 0, {d[0], d[1] * 4 + d[4], d[2], d[3]}, ctx);
    // (The repack has taken the elementwise ops before it by now, and
    // lost its dlc.materialize: it is known by how it reads them.)
    if (generic && producedHere &&
        llvm::is_contained(generic.getIndexingMapsArray(), repack)) {
      columns = 3;
      reduced.set(4);
    }
  }
  bool padsInput = false;
  kernel.walk([&](tensor::PadOp) { padsInput = true; });
  llvm::SmallBitVector preferred(iterators.size());
  if (channels)
    preferred.set(channels->loop);
  else
    preferred = paddedInputLoops(kernel, root, iterators.size());
  // Rows reduced by a subgroup: S lanes split the row (the innermost loop,
  // which the kernel's reductions reduce), each a contiguous part of it;
  // dlc-gpu-subgroup-rows then makes the reductions cooperative. Some
  // reduction of the kernel must reduce the root's rows: its input has the
  // root's shape and it reduces the last dim.
  int64_t lanes = options.subgroupLanes;
  auto reducesRows = [&]() {
    auto type = dyn_cast<RankedTensorType>(rootOp->getResult(0).getType());
    bool found = false;
    kernel.walk([&](linalg::GenericOp op) {
      if (op.getOperation() == rootOp || op.getNumReductionLoops() != 1 ||
          op.getNumDpsInputs() != 1 || !type)
        return;
      unsigned last = op.getNumLoops() - 1;
      found |=
          op.getIteratorTypesArray()[last] == utils::IteratorType::reduction &&
          op.getDpsInputs()[0].getType() == type;
    });
    return found;
  };
  std::optional<TilingPlan> lanePlan;
  if (options.maxThreads > 0 && lanes > 1 && reduced.count() == 1 &&
      reduced.test(iterators.size() - 1) &&
      iterators.back() == utils::IteratorType::parallel &&
      extents.back() % lanes == 0 && extents.back() >= 2 * lanes &&
      reducesRows()) {
    lanePlan = planGPU(iterators, extents, llvm::SmallBitVector(reduced.size()),
                       options.maxThreads, extents.back() / lanes);
    // The lanes must be the row's threads (x = the root's last loop).
    if (lanePlan && (lanePlan->workgroupSize[0] != lanes ||
                     lanePlan->threadTiles.back() != extents.back() / lanes))
      lanePlan.reset();
  }
  TilingPlan plan;
  if (lanePlan)
    plan = *lanePlan;
  else if (options.maxThreads > 0)
    plan = planGPUTiled(iterators, extents, reduced,
                        reusingLoops(kernel, root, iterators.size()),
                        options.maxThreads);
  else
    plan = planCPU(iterators, extents, reduced, preferred,
                   kernelWork(kernel, extents), options.targetWorkgroups,
                   options.minWork, channels, padsInput, columns);
  // What a workgroup builds in its scratch, when the target bounds it:
  // the padding of convolution inputs and the largest other temporary.
  if (options.maxThreads == 0 && options.scratchBytes > 0) {
    auto bytes = [](Type t) -> int64_t {
      auto type = dyn_cast<RankedTensorType>(t);
      if (!type || !type.hasStaticShape() ||
          !type.getElementType().isIntOrFloat())
        return 0;
      return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    };
    int64_t paddedBytes = 0, intermediateBytes = 0;
    kernel.walk(
        [&](tensor::PadOp pad) { paddedBytes += bytes(pad.getType()); });
    kernel.walk([&](linalg::LinalgOp op) {
      if (op.getOperation() != rootOp)
        for (Value r : op->getResults())
          intermediateBytes = std::max(intermediateBytes, bytes(r.getType()));
    });
    fitScratchTiles(plan, iterators, extents, reduced, preferred, channels,
                    paddedBytes, intermediateBytes, options.scratchBytes);
  }
  // On GPUs one thread for the whole kernel is the worst plan: splitting
  // reduced loops after all costs recomputation (or none, when the other
  // reduction runs over different dims, as global pooling's does).
  if (options.maxThreads > 0 && plan.grid.empty() && reduced.any())
    plan = *planGPU(iterators, extents, llvm::SmallBitVector(reduced.size()),
                    options.maxThreads);
  if (plan.grid.empty()) {
    record({}, {});
    return success();
  }
  FailureOr<Operation *> tiled =
      tileAndFuse(rewriter, root, plan.workgroupTiles, /*threads=*/false);
  if (failed(tiled))
    return failure();
  if (llvm::any_of(plan.threadTiles, [](int64_t t) { return t != 0; })) {
    auto inner = dyn_cast<TilingInterface>(*tiled);
    FailureOr<Operation *> threadOp;
    if (inner)
      threadOp = tileAndFuse(rewriter, inner, plan.threadTiles,
                             /*threads=*/true);
    if (!inner || failed(threadOp))
      return failure();
    // Threads that take several iterations each step by more than one:
    // later passes expect thread loops from 0 in steps of 1.
    auto threads = (*threadOp)->getParentOfType<scf::ForallOp>();
    if (threads && !threads.isNormalized() &&
        failed(normalizeForallOp(rewriter, threads)))
      return rootOp->emitError("cannot normalize the thread loop");
  }
  record(plan.grid, plan.workgroupSize);
  if (lanePlan)
    kernel->setAttr(dlc::kSubgroupLanesAttr, b.getI64IntegerAttr(lanes));
  return success();
}

struct TileAndDistributePass
    : public dlc::impl::TileAndDistributeBase<TileAndDistributePass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(dlc::kKernelAttr) || kernel.isExternal())
      return;
    if (failed(tileKernel(kernel, {targetWorkgroups, minWork, maxThreads,
                                   subgroupLanes, scratchBytes})))
      signalPassFailure();
  }
};

} // namespace
