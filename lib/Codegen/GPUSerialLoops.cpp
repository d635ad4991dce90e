//===- GPUSerialLoops.cpp - the dlc-gpu-serial-loops pass -----------------===//
//
// A kernel whose work is a sequential loop (a recurrent layer's time loop:
// each step reads what the previous one wrote) has no parallel root to tile,
// so dlc-tile-and-distribute gives it one thread. This pass spreads each
// step over the threads of one workgroup: every linalg op in the loop body
// is tiled along its largest parallel loop, cyclically over the threads,
// with a barrier after it; the buffers the steps pass between threads (the
// step's temporaries and the state the loop carries) move to workgroup
// memory, and the state is copied to its output buffer after the loop.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "dlc-gpu-serial-loops"

namespace dlc {
#define GEN_PASS_DEF_GPUSERIALLOOPS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Bytes of `type` in workgroup memory, integers at least `minIntBits`
/// wide.
uint64_t bytesOf(MemRefType type, unsigned minIntBits) {
  unsigned bits = type.getElementTypeBitWidth();
  if (type.getElementType().isInteger())
    bits = std::max(bits, minIntBits);
  return static_cast<uint64_t>(type.getNumElements()) *
         llvm::divideCeil(bits, 8);
}

bool inside(Operation *op, scf::ForOp loop) { return loop->isAncestor(op); }

/// The buffers a step passes between threads: stack buffers the loop uses
/// (the step's temporaries) and kernel arguments that the loop both writes
/// and reads (the carried state). Both must be shared by the workgroup.
struct SharedBuffers {
  SmallVector<memref::AllocaOp> temporaries;
  SmallVector<BlockArgument> states;
  uint64_t bytes = 0;
};

/// The base buffer `v` is a view of.
Value baseOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

std::optional<SharedBuffers> findShared(func::FuncOp kernel, scf::ForOp loop,
                                        unsigned minIntBits) {
  SharedBuffers shared;
  for (auto alloca : kernel.getOps<memref::AllocaOp>()) {
    if (!alloca.getType().hasStaticShape())
      return std::nullopt;
    shared.bytes += bytesOf(alloca.getType(), minIntBits);
    shared.temporaries.push_back(alloca);
  }
  bool nested = false;
  loop.walk([&](memref::AllocaOp alloca) {
    if (!alloca.getType().hasStaticShape()) {
      nested = true;
      return;
    }
    shared.bytes += bytesOf(alloca.getType(), minIntBits);
    shared.temporaries.push_back(alloca);
  });
  if (nested)
    return std::nullopt;
  llvm::SetVector<BlockArgument> written, read;
  loop.walk([&](linalg::LinalgOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto arg = dyn_cast<BlockArgument>(baseOf(operand.get()));
      if (!arg || arg.getOwner()->getParentOp() != kernel)
        continue;
      if (op.isDpsInit(&operand))
        written.insert(arg);
      if (!op.isDpsInit(&operand) || op.payloadUsesValueFromOperand(&operand))
        read.insert(arg);
    }
  });
  for (BlockArgument arg : written)
    if (read.contains(arg)) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.hasStaticShape())
        return std::nullopt;
      shared.bytes += bytesOf(type, minIntBits);
      shared.states.push_back(arg);
    }
  return shared;
}

/// Views of `buffer` (subviews, reshapes) take its memory space.
void moveViewsTo(Value buffer, Attribute space) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (!view || view.getViewSource() != v)
        continue;
      for (Value r : user->getResults()) {
        auto type = dyn_cast<MemRefType>(r.getType());
        if (!type || type.getMemorySpace() == space)
          continue;
        r.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                  type.getLayout(), space));
        worklist.push_back(r);
      }
    }
  }
}

/// Tiles `op` along its largest parallel loop, one iteration per step,
/// cyclically over `threads` threads (or, without a parallel loop, lets
/// thread 0 run it), and puts a barrier after it.
LogicalResult distribute(RewriterBase &rewriter, linalg::LinalgOp op,
                         Value threadId, Value threads) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t best = -1;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel && ranges[i] > 0 &&
        !ShapedType::isDynamic(ranges[i]) &&
        (best < 0 || ranges[i] > ranges[best]))
      best = i;
  rewriter.setInsertionPointAfter(op);
  gpu::BarrierOp::create(rewriter, op.getLoc());
  if (best < 0) {
    // Nothing to spread (a reduction to one value): thread 0 runs it.
    rewriter.setInsertionPoint(op);
    Value zero = arith::ConstantIndexOp::create(rewriter, op.getLoc(), 0);
    Value first = arith::CmpIOp::create(
        rewriter, op.getLoc(), arith::CmpIPredicate::eq, threadId, zero);
    auto guard = scf::IfOp::create(rewriter, op.getLoc(), first,
                                   /*withElseRegion=*/false);
    rewriter.moveOpBefore(op, guard.thenBlock()->getTerminator());
    return success();
  }
  SmallVector<int64_t> tiles(ranges.size(), 0);
  tiles[best] = 1;
  linalg::LinalgLoopDistributionOptions distribution;
  distribution.procInfo = [&](OpBuilder &, Location, ArrayRef<Range> loops) {
    return SmallVector<linalg::ProcInfo>(
        loops.size(), linalg::ProcInfo{threadId, threads,
                                       linalg::DistributionMethod::Cyclic});
  };
  linalg::LinalgTilingOptions options;
  options.setTileSizes(tiles)
      .setLoopType(linalg::LinalgTilingLoopType::Loops)
      .setDistributionOptions(distribution);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, options);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

struct GPUSerialLoopsPass
    : public dlc::impl::GPUSerialLoopsBase<GPUSerialLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    Attribute space = parseAttribute(memorySpace, &getContext());
    if (!space) {
      getOperation().emitError("invalid memory space '") << memorySpace << "'";
      return signalPassFailure();
    }
    func::FuncOp kernel = getOperation();
    if (kernel->hasAttr(dlc::kKernelAttr) && !kernel.isExternal() &&
        failed(runOnKernel(kernel, space)))
      signalPassFailure();
  }

  LogicalResult runOnKernel(func::FuncOp kernel, Attribute space) {
    // Kernels tiled over threads already have a thread loop.
    if (kernel.walk([](scf::ForallOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      return success();
    SmallVector<scf::ForOp> loops;
    for (auto loop : kernel.getOps<scf::ForOp>())
      if (!loop.getOps<linalg::LinalgOp>().empty())
        loops.push_back(loop);
    if (loops.size() != 1) {
      LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << loops.size()
                              << " top-level loops with linalg ops\n");
      return success();
    }
    scf::ForOp loop = loops.front();
    std::optional<SharedBuffers> shared = findShared(kernel, loop, minIntBits);
    if (!shared || shared->bytes > static_cast<uint64_t>(budget)) {
      LLVM_DEBUG(llvm::dbgs()
                 << kernel.getName() << ": shared buffers "
                 << (shared ? shared->bytes : 0) << " bytes over the budget\n");
      return success();
    }
    IRRewriter rewriter(kernel.getContext());
    Location loc = loop.getLoc();
    Block &entry = kernel.getBody().front();
    rewriter.setInsertionPointToStart(&entry);
    Value threadId = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    Value threads =
        arith::ConstantIndexOp::create(rewriter, loc, this->threads);

    // Temporaries to workgroup memory.
    auto shareType = [&](MemRefType t) {
      return MemRefType::get(t.getShape(), t.getElementType(),
                             MemRefLayoutAttrInterface(), space);
    };
    for (memref::AllocaOp alloca : shared->temporaries) {
      rewriter.setInsertionPoint(alloca);
      auto alloc = memref::AllocOp::create(rewriter, alloca.getLoc(),
                                           shareType(alloca.getType()),
                                           alloca.getAlignmentAttr());
      alloca.getResult().replaceAllUsesWith(alloc.getResult());
      rewriter.eraseOp(alloca);
      moveViewsTo(alloc.getResult(), space);
    }
    // The carried state: in workgroup memory during the loop, copied from
    // its argument before and back after.
    SmallVector<std::pair<Value, BlockArgument>> copies;
    for (BlockArgument state : shared->states) {
      rewriter.setInsertionPoint(loop);
      auto type = cast<MemRefType>(state.getType());
      Value buffer = memref::AllocOp::create(rewriter, loc, shareType(type));
      state.replaceUsesWithIf(
          buffer, [&](OpOperand &use) { return inside(use.getOwner(), loop); });
      moveViewsTo(buffer, space);
      copies.push_back({buffer, state});
    }
    // The state's value before the loop comes in, and its last one goes
    // out (a barrier after the loop's last step first).
    SmallVector<linalg::LinalgOp> ops;
    rewriter.setInsertionPoint(loop);
    for (auto [buffer, state] : copies)
      ops.push_back(linalg::CopyOp::create(rewriter, loc, state, buffer));
    rewriter.setInsertionPointAfter(loop);
    gpu::BarrierOp::create(rewriter, loc);
    for (auto [buffer, state] : copies)
      ops.push_back(linalg::CopyOp::create(rewriter, loc, buffer, state));
    loop.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops)
      if (failed(distribute(rewriter, op, threadId, threads)))
        return op->emitError("internal error: cannot tile this op of a "
                             "sequential loop over the workgroup's threads");
    kernel->setAttr(dlc::kWorkgroupSizeAttr,
                    rewriter.getDenseI64ArrayAttr({this->threads, 1, 1}));
    return success();
  }
};

} // namespace
