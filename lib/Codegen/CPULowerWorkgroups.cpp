//===- CPULowerWorkgroups.cpp - the dlc-cpu-lower-workgroups pass ---------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace dlc {
#define GEN_PASS_DEF_CPULOWERWORKGROUPS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

LogicalResult lowerKernel(func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  Location loc = kernel.getLoc();
  OpBuilder b(kernel.getContext());
  Value begin = entry.addArgument(b.getIndexType(), loc);
  Value end = entry.addArgument(b.getIndexType(), loc);
  kernel.setType(b.getFunctionType(entry.getArgumentTypes(), {}));

  SmallVector<scf::ForallOp> foralls(entry.getOps<scf::ForallOp>());
  if (foralls.empty())
    return success();
  if (foralls.size() > 1)
    return kernel.emitError("a kernel must have at most one workgroup loop");
  scf::ForallOp forall = foralls.front();
  if (forall.getNumResults() != 0)
    return forall.emitError("workgroup loop must be bufferized");
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !ubs || !steps)
    return forall.emitError("workgroup loop bounds must be static");

  b.setInsertionPoint(forall);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<int64_t> tripCounts;
  for (auto [lb, ub, step] : llvm::zip(*lbs, *ubs, *steps))
    tripCounts.push_back((ub - lb + step - 1) / step);
  SmallVector<Value> ids;
  if (tripCounts.size() == 1) {
    ids.push_back(loop.getInductionVar());
  } else {
    auto delin = affine::AffineDelinearizeIndexOp::create(
        b, loc, loop.getInductionVar(), tripCounts);
    ids.append(delin.getResults().begin(), delin.getResults().end());
  }
  Block *body = forall.getBody();
  for (auto [k, iv] : llvm::enumerate(forall.getInductionVars())) {
    Value v = ids[k];
    if ((*steps)[k] != 1)
      v = arith::MulIOp::create(
          b, loc, v, arith::ConstantIndexOp::create(b, loc, (*steps)[k]));
    if ((*lbs)[k] != 0)
      v = arith::AddIOp::create(
          b, loc, v, arith::ConstantIndexOp::create(b, loc, (*lbs)[k]));
    iv.replaceAllUsesWith(v);
  }
  // Move the body (minus its empty in_parallel terminator) into the loop.
  Operation *yield = loop.getBody()->getTerminator();
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
    op.moveBefore(yield);
  forall.erase();
  return success();
}

struct CPULowerWorkgroupsPass
    : public dlc::impl::CPULowerWorkgroupsBase<CPULowerWorkgroupsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (kernel->hasAttr(dlc::kKernelAttr) && !kernel.isExternal() &&
          failed(lowerKernel(kernel)))
        return signalPassFailure();
  }
};

} // namespace
