//===- KernelTiling.cpp - the target-independent part of codegen ----------===//

#include "dlc/Target/KernelBinary.h"

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dlc::buildKernelTilingPipeline(OpPassManager &pm,
                                    const TargetDescription &target) {
  // CPUs: a few workgroups per core, each worth a thread hand-off; GPUs:
  // one thread per output element, as many workgroups as that takes, with
  // the inputs of contractions staged in workgroup memory.
  // Elementwise chains inside a kernel become one linalg.generic.
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  TileAndDistributeOptions tiling;
  tiling.targetWorkgroups = 64;
  tiling.minWork = 16384;
  tiling.maxThreads =
      target.isGPU() ? std::min<unsigned>(target.maxWorkgroupSize, 256) : 0;
  pm.addPass(createTileAndDistribute(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  BufferizeKernelsOptions bufferize;
  if (target.kind == TargetKind::Vulkan)
    bufferize.privateMemorySpace = "#spirv.storage_class<Function>";
  bufferize.stackOnly = target.isGPU();
  pm.addPass(createBufferizeKernels(bufferize));
  if (target.isGPU()) {
    // Contractions read their inputs through workgroup memory: under the
    // 16 KiB every Vulkan device has, and under CUDA's 48 KiB of static
    // shared memory.
    GPUPromoteSharedOptions promote;
    promote.budget = target.kind == TargetKind::Vulkan ? 12288 : 32768;
    // SPIR-V declares workgroup buffers as module variables (from the
    // allocations); NVVM as the kernel's workgroup attributions.
    if (target.kind == TargetKind::Vulkan)
      promote.memorySpace = "#spirv.storage_class<Workgroup>";
    pm.addPass(createGPUPromoteShared(promote));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

LogicalResult dlc::runKernelTilingPipeline(ModuleOp module,
                                           const TargetDescription &target,
                                           std::vector<KernelInfo> &kernels) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildKernelTilingPipeline(pm, target);
  if (failed(pm.run(module)))
    return failure();
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!f->hasAttr(kKernelAttr))
      continue;
    KernelInfo info;
    info.name = f.getSymName().str();
    info.bindingCount = f.getNumArguments();
    if (auto grid = f->getAttrOfType<DenseI64ArrayAttr>(kGridAttr)) {
      for (auto [i, g] : llvm::enumerate(grid.asArrayRef())) {
        if (g < 1 || g > UINT32_MAX)
          return f.emitError("invalid workgroup grid");
        info.grid[i] = static_cast<uint32_t>(g);
      }
    }
    if (auto size = f->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupSizeAttr))
      for (auto [i, s] : llvm::enumerate(size.asArrayRef()))
        info.workgroupSize[i] = static_cast<uint32_t>(s);
    kernels.push_back(info);
  }
  return success();
}
