//===- GPUOutlineKernels.cpp - the dlc-gpu-outline-kernels pass -----------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/DeviceMappingInterface.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace dlc {
#define GEN_PASS_DEF_GPUOUTLINEKERNELS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The widest access LLVM's NVPTX backend forms on workgroup memory
/// (four 32-bit lanes).
constexpr uint64_t kWorkgroupBufferAlignment = 16;

/// Replaces `forall`'s induction variables by `lb + id(dim) * step`, with
/// the dimension its mapping gives (else the last forall dimension is x,
/// then y, then z), and inlines its body.
template <typename IdOp> LogicalResult inlineForall(scf::ForallOp forall) {
  if (forall.getNumResults() != 0)
    return forall.emitError("workgroup loops must be bufferized");
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  unsigned rank = forall.getRank();
  if (!lbs || !steps || rank > 3)
    return forall.emitError("GPU loops need static bounds and at most three "
                            "dimensions");
  OpBuilder b(forall);
  Location loc = forall.getLoc();
  static const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                        gpu::Dimension::z};
  std::optional<ArrayAttr> mapping = forall.getMapping();
  for (auto [k, iv] : llvm::enumerate(forall.getInductionVars())) {
    gpu::Dimension dim = dims[rank - 1 - k];
    if (mapping)
      if (auto m = dyn_cast<DeviceMappingAttrInterface>((*mapping)[k]))
        dim = dims[m.getMappingId() % 3];
    Value v = IdOp::create(b, loc, dim);
    if ((*steps)[k] != 1)
      v = arith::MulIOp::create(
          b, loc, v, arith::ConstantIndexOp::create(b, loc, (*steps)[k]));
    if ((*lbs)[k] != 0)
      v = arith::AddIOp::create(
          b, loc, v, arith::ConstantIndexOp::create(b, loc, (*lbs)[k]));
    iv.replaceAllUsesWith(v);
  }
  Block *body = forall.getBody();
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
    op.moveBefore(forall);
  forall.erase();
  return success();
}

/// A kernel of a branch on a run-time condition (dlc.run_if = [i, v]):
/// every thread reads argument i's one boolean and runs the body only when
/// it equals v; otherwise the kernel writes nothing. The branch is uniform
/// across the launch, so barriers inside stay reached by all threads or by
/// none.
LogicalResult predicate(func::FuncOp kernel, gpu::GPUFuncOp gpuFunc) {
  auto runIf = kernel->getAttrOfType<DenseI64ArrayAttr>(dlc::kRunIfAttr);
  if (!runIf)
    return success();
  if (runIf[0] >= gpuFunc.getNumArguments())
    return kernel.emitError("dlc.run_if names argument ")
           << runIf[0] << " of a kernel with " << gpuFunc.getNumArguments()
           << " arguments";
  Block &entry = gpuFunc.getBody().front();
  Value flag = entry.getArgument(runIf[0]);
  auto type = dyn_cast<MemRefType>(flag.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1 ||
      !type.getElementType().isInteger(1))
    return kernel.emitError("dlc.run_if names argument ")
           << runIf[0] << " of type " << flag.getType()
           << ", not a buffer of one boolean";
  Location loc = kernel.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value value = memref::LoadOp::create(
      b, loc, flag, SmallVector<Value>(type.getRank(), zero));
  if (runIf[1] == 0)
    value = arith::XOrIOp::create(
        b, loc, value, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  auto guard = scf::IfOp::create(b, loc, value, /*withElseRegion=*/false);
  Block *then = guard.thenBlock();
  Operation *first = guard->getNextNode();
  Operation *last = entry.getTerminator();
  then->getOperations().splice(then->begin(), entry.getOperations(),
                               first->getIterator(), last->getIterator());
  return success();
}

LogicalResult outline(func::FuncOp kernel, gpu::GPUModuleOp module) {
  auto funcType = kernel.getFunctionType();
  if (funcType.getNumResults() != 0)
    return kernel.emitError("GPU kernels must be bufferized first");
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(&module.getBodyRegion().front());
  auto gpuFunc =
      gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getSymName(), funcType);
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SmallVector<int32_t> block = {1, 1, 1};
  if (auto size =
          kernel->getAttrOfType<DenseI64ArrayAttr>(dlc::kWorkgroupSizeAttr))
    for (auto [i, s] : llvm::enumerate(size.asArrayRef()))
      block[i] = static_cast<int32_t>(s);
  gpuFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(block));
  for (StringRef attr : {dlc::kGridAttr, dlc::kWorkgroupSizeAttr})
    if (Attribute a = kernel->getAttr(attr))
      gpuFunc->setAttr(attr, a);

  // Move the body, with its entry block arguments, into the gpu.func.
  Region &dst = gpuFunc.getBody();
  dst.getBlocks().clear();
  dst.takeBody(kernel.getBody());
  Block &entry = dst.front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  OpBuilder rb(ret);
  gpu::ReturnOp::create(rb, ret.getLoc());
  ret.erase();

  // Workgroup memory is declared by the function, not allocated.
  SmallVector<memref::AllocOp> shared;
  entry.walk([&](memref::AllocOp alloc) {
    if (auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
            alloc.getType().getMemorySpace()))
      if (space.getValue() == gpu::AddressSpace::Workgroup)
        shared.push_back(alloc);
  });
  for (memref::AllocOp alloc : shared) {
    if (!alloc.getType().hasStaticShape())
      return alloc.emitError("workgroup buffers must have a static shape");
    Value buffer =
        gpuFunc.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
    // LLVM's load/store vectorizer merges neighbouring scalar accesses of a
    // workgroup buffer into 16-byte vector accesses (ld.shared.v4.b32) and
    // assumes the buffer allows it; a buffer placed at a 4-byte boundary
    // then faults with a misaligned address on the GPU. Every buffer starts
    // at a 16-byte boundary, or at the alignment the allocation asks for.
    uint64_t align = std::max<uint64_t>(kWorkgroupBufferAlignment,
                                        alloc.getAlignment().value_or(0));
    gpuFunc.setWorkgroupAttributionAttr(
        gpuFunc.getNumWorkgroupAttributions() - 1,
        LLVM::LLVMDialect::getAlignAttrName(),
        OpBuilder(alloc).getI64IntegerAttr(align));
    alloc.getResult().replaceAllUsesWith(buffer);
    alloc.erase();
  }

  // Loops mapped to threads are thread loops; the others are workgroups.
  auto isThreadLoop = [](scf::ForallOp f) {
    std::optional<ArrayAttr> mapping = f.getMapping();
    return mapping && !mapping->empty() &&
           isa<gpu::GPUThreadMappingAttr>((*mapping)[0]);
  };
  SmallVector<scf::ForallOp> workgroups, threads;
  entry.walk([&](scf::ForallOp f) {
    (isThreadLoop(f) ? threads : workgroups).push_back(f);
  });
  if (workgroups.size() > 1)
    return kernel.emitError("a kernel must have at most one workgroup loop");
  if (threads.size() > 1)
    return kernel.emitError("a workgroup must have at most one thread loop");
  if (!workgroups.empty() &&
      failed(inlineForall<gpu::BlockIdOp>(workgroups.front())))
    return failure();
  if (!threads.empty() && failed(inlineForall<gpu::ThreadIdOp>(threads[0])))
    return failure();
  if (failed(predicate(kernel, gpuFunc)))
    return failure();
  kernel.erase();
  return success();
}

struct GPUOutlineKernelsPass
    : public dlc::impl::GPUOutlineKernelsBase<GPUOutlineKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    SmallVector<func::FuncOp> kernels;
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(dlc::kKernelAttr) && !f.isExternal())
        kernels.push_back(f);
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    gpu::GPUModuleOp shared;
    for (func::FuncOp kernel : kernels) {
      gpu::GPUModuleOp target = shared;
      if (modulePerKernel || !target) {
        target = gpu::GPUModuleOp::create(
            b, kernel.getLoc(),
            modulePerKernel ? kernel.getSymName() : StringRef("dlc_kernels"));
        if (!modulePerKernel)
          shared = target;
      }
      if (failed(outline(kernel, target)))
        return signalPassFailure();
    }
  }
};

} // namespace
