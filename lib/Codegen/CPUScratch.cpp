//===- CPUScratch.cpp - the dlc-cpu-scratch pass --------------------------===//
//
// A CPU kernel's temporaries too large for the stack (a workgroup's padded
// input rows, a convolution's accumulator tile) come from one scratch
// buffer that the runtime hands each thread, instead of from the C
// library's allocator: kernels then import no allocator (static builds for
// boards without one), and a run makes no allocation calls. Every
// temporary has a static shape, so its place in the scratch is decided
// here: in program order, 64-byte aligned; the two branches of an scf.if
// (at most one runs) start at the same offset; a loop's body reuses its
// offsets every iteration, which is why a temporary must not outlive the
// iteration that made it (its deallocation is in the same loop body).
// The kernel gets the scratch as a new last argument, `memref<Nxi8>` with
// N its scratch size, recorded as `dlc.scratch_size` for the runtime.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace dlc {
#define GEN_PASS_DEF_CPUSCRATCH
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// Places the allocations of `block` (and of the regions inside it) from
/// `offset` on; returns the end of what it placed.
FailureOr<int64_t> place(Block &block, int64_t offset,
                         DenseMap<Operation *, int64_t> &offsets) {
  int64_t end = offset;
  for (Operation &op : block) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrIndexOrFloat() ||
          alloc.getDynamicSizes().size() || alloc.getSymbolOperands().size())
        return alloc.emitError("a kernel temporary in scratch memory must "
                               "have a static shape and identity layout");
      int64_t bits = type.getElementTypeBitWidth();
      int64_t bytes = (type.getNumElements() * bits + 7) / 8;
      end = alignUp(end);
      offsets[alloc] = end;
      end += bytes;
      continue;
    }
    if (op.getNumRegions() == 0)
      continue;
    // The branches of an scf.if exclude each other; other ops' regions
    // (loop bodies) get places of their own.
    bool exclusive = isa<scf::IfOp>(op);
    int64_t regionsEnd = end;
    for (Region &region : op.getRegions()) {
      for (Block &inner : region) {
        FailureOr<int64_t> e =
            place(inner, exclusive ? end : regionsEnd, offsets);
        if (failed(e))
          return failure();
        regionsEnd = std::max(regionsEnd, *e);
      }
    }
    end = regionsEnd;
  }
  return end;
}

/// Whether a temporary escapes the loop iteration that made it: a view of
/// it, or it, is yielded by a loop body (an scf.if may pass it out of a
/// branch).
bool escapesIteration(memref::AllocOp alloc) {
  SmallVector<Value> values = {alloc.getResult()};
  DenseSet<Value> seen;
  while (!values.empty()) {
    Value v = values.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == v)
          values.push_back(view->getResult(0));
        continue;
      }
      if (isa<memref::CastOp>(user)) {
        values.push_back(user->getResult(0));
        continue;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = yield->getParentOp();
        if (!isa<scf::IfOp>(parent))
          return true;
        values.push_back(parent->getResult(use.getOperandNumber()));
      }
    }
  }
  return false;
}

LogicalResult useScratch(func::FuncOp kernel) {
  SmallVector<memref::AllocOp> allocs;
  kernel.walk([&](memref::AllocOp a) { allocs.push_back(a); });
  if (allocs.empty())
    return success();
  for (memref::AllocOp a : allocs)
    if (escapesIteration(a))
      return a.emitError("a kernel temporary outlives the loop iteration "
                         "that allocates it; it cannot live in scratch");
  DenseMap<Operation *, int64_t> offsets;
  FailureOr<int64_t> size = place(kernel.getBody().front(), 0, offsets);
  if (failed(size))
    return failure();

  OpBuilder b(kernel.getContext());
  auto scratchType =
      MemRefType::get({std::max<int64_t>(alignUp(*size), 1)}, b.getI8Type());
  Block &entry = kernel.getBody().front();
  Value scratch = entry.addArgument(scratchType, kernel.getLoc());
  kernel.setType(b.getFunctionType(entry.getArgumentTypes(),
                                   kernel.getFunctionType().getResults()));
  // The scratch is the thread's own: nothing else the kernel reads or
  // writes aliases it. LLVM needs to know that to vectorize the copies
  // into it (of a convolution's input rows, for example).
  kernel.setArgAttr(entry.getNumArguments() - 1,
                    LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
  for (memref::AllocOp a : allocs) {
    b.setInsertionPoint(a);
    Value offset = arith::ConstantIndexOp::create(b, a.getLoc(), offsets[a]);
    Value view = memref::ViewOp::create(b, a.getLoc(), a.getType(), scratch,
                                        offset, ValueRange());
    a.replaceAllUsesWith(view);
    a.erase();
  }
  // Every deallocation in a kernel is of a temporary: arguments are never
  // freed.
  SmallVector<memref::DeallocOp> deallocs;
  kernel.walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
  for (memref::DeallocOp d : deallocs)
    d.erase();
  kernel->setAttr(dlc::kScratchSizeAttr,
                  b.getI64IntegerAttr(scratchType.getNumElements()));
  return success();
}

struct CPUScratchPass : public dlc::impl::CPUScratchBase<CPUScratchPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel->hasAttr(dlc::kKernelAttr) && !kernel.isExternal() &&
        failed(useScratch(kernel)))
      signalPassFailure();
  }
};

} // namespace
