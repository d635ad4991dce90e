//===- KernelTiling.cpp - the target-independent part of codegen ----------===//

#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/PassOptions.h"

#include "dlc/Codegen/Passes.h"

#include "dlc/artifact_format.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

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
  tiling.scratchBytes = static_cast<int64_t>(target.scratchBudget);
  // Vulkan with subgroup operations: lanes share each row reduction
  // (`+subgroup` asks for subgroups of at least that many invocations).
  bool subgroupRows = target.hasSubgroupRowReductions;
  if (subgroupRows)
    tiling.subgroupLanes = DLCX_MIN_SUBGROUP_SIZE;
  TileableGathersOptions gathers;
  gathers.copies = target.isGPU();
  pm.addNestedPass<func::FuncOp>(createTileableGathers(gathers));
  pm.addNestedPass<func::FuncOp>(createTileAndDistribute(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  BufferizeKernelsOptions bufferize;
  if (!target.privateMemorySpace.empty())
    bufferize.privateMemorySpace = target.privateMemorySpace;
  bufferize.stackOnly = target.isGPU();
  bufferize.stackLimit = static_cast<int64_t>(target.stackTemporaryLimit);
  pm.addPass(createBufferizeKernels(bufferize));
  if (target.isGPU()) {
    // Sequential loops (recurrent layers) over a workgroup, their shared
    // buffers within three quarters of the device's workgroup memory.
    GPUSerialLoopsOptions serial;
    serial.threads = tiling.maxThreads;
    serial.budget = static_cast<int64_t>(target.sharedMemoryBytes * 3 / 4);
    // Without 8-bit storage, SPIR-V keeps narrow integers in 32 bits.
    serial.minIntBits = target.hasInt8Storage ? 8 : 32;
    if (!target.workgroupMemorySpace.empty())
      serial.memorySpace = target.workgroupMemorySpace;
    pm.addNestedPass<func::FuncOp>(createGPUSerialLoops(serial));
    // Contractions read their inputs through workgroup memory, within the
    // target's staging budget.
    GPUPromoteSharedOptions promote;
    promote.budget = static_cast<int64_t>(target.stagingBytes);
    // SPIR-V declares workgroup buffers as module variables (from the
    // allocations); NVVM as the kernel's workgroup attributions.
    if (!target.workgroupMemorySpace.empty())
      promote.memorySpace = target.workgroupMemorySpace;
    // Row reductions shared by lanes first: each lane then reads only its
    // part of the row, which needs no staging.
    if (subgroupRows) {
      GPUSubgroupRowsOptions rows;
      rows.subgroupSize = target.subgroupSize;
      pm.addNestedPass<func::FuncOp>(createGPUSubgroupRows(rows));
    }
    pm.addNestedPass<func::FuncOp>(createGPUPromoteShared(promote));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

LogicalResult dlc::runKernelTilingPipeline(ModuleOp module,
                                           const TargetDescription &target,
                                           std::vector<KernelInfo> &kernels) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(pm)))
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

/// Whether threads would share `alloca` as one buffer: an op inside a
/// parallel loop that does not enclose the buffer (a workgroup or thread
/// loop below it) writes the buffer or a view of it, so each thread updates
/// its part of what must be one buffer. Written only outside such loops,
/// every thread computes the whole buffer itself (a reduction all threads
/// then read), which is redundant but correct.
static bool isSharedByThreads(memref::AllocaOp alloca) {
  SmallVector<Value> views = {alloca.getResult()};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == v)
          views.push_back(view->getResult(0));
        continue;
      }
      auto loop = user->getParentOfType<scf::ForallOp>();
      if (!loop || loop->isAncestor(alloca))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(v))
        return true;
    }
  }
  return false;
}

void dlc::buildGPULoopsPipeline(OpPassManager &pm,
                                const LegalizeMathOptions &math) {
  pm.addPass(createGPURegisterTile());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createFoldMemRefAliasOpsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLegalizeMath(math));
  pm.addPass(createCanonicalizerPass());
}

namespace {

/// A target's check or attribute step as a pass (createTargetStep).
class TargetStepPass
    : public PassWrapper<TargetStepPass, OperationPass<ModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TargetStepPass)

  TargetStepPass(StringRef argument, StringRef description,
                 std::function<LogicalResult(ModuleOp)> step)
      : argument(argument.str()), description(description.str()),
        step(std::move(step)) {}
  TargetStepPass(const TargetStepPass &other) = default;

  StringRef getArgument() const override { return argument; }
  StringRef getDescription() const override { return description; }
  void runOnOperation() override {
    if (failed(step(getOperation())))
      signalPassFailure();
  }

private:
  std::string argument, description;
  std::function<LogicalResult(ModuleOp)> step;
};

} // namespace

std::unique_ptr<Pass>
dlc::createTargetStep(StringRef argument, StringRef description,
                      std::function<LogicalResult(ModuleOp)> step) {
  return std::make_unique<TargetStepPass>(argument, description,
                                          std::move(step));
}

void dlc::buildGPUKernelChecks(OpPassManager &pm,
                               const TargetDescription &target) {
  pm.addPass(createTargetStep(
      "dlc-gpu-reject-grid-shared-stack-copies",
      "Kernels whose threads update one stack copy of an input fail",
      [](ModuleOp module) { return rejectGridSharedStackCopies(module); }));
  pm.addPass(
      createTargetStep("dlc-gpu-reject-large-private-memory",
                       "Kernels whose private buffers exceed the target's fail",
                       [target](ModuleOp module) {
                         return rejectLargePrivateMemory(module, target);
                       }));
}

LogicalResult dlc::rejectGridSharedStackCopies(ModuleOp module) {
  // A stack buffer in the default memory space outside the thread loop that
  // the threads update in parts is a copy of an input they update in place
  // together: it would have to be shared by every thread of the grid, and a
  // GPU thread's stack is its own. Inside the thread loop a stack buffer is
  // the thread's private tile, which is fine.
  WalkResult shared = module.walk([&](memref::AllocaOp alloca) {
    if (alloca.getType().getMemorySpace() || !isSharedByThreads(alloca))
      return WalkResult::advance();
    for (auto loop = alloca->getParentOfType<scf::ForallOp>(); loop;
         loop = loop->getParentOfType<scf::ForallOp>()) {
      std::optional<ArrayAttr> mapping = loop.getMapping();
      if (mapping && llvm::any_of(*mapping, [](Attribute a) {
            return isa<gpu::GPUThreadMappingAttr>(a);
          }))
        return WalkResult::advance();
    }
    auto func = alloca->getParentOfType<func::FuncOp>();
    alloca.emitError("kernel '")
        << (func ? func.getName() : StringRef("?"))
        << "' updates one stack buffer from all its threads (a copy of an "
           "input updated in place?); a GPU thread's stack is its own, so "
           "GPU targets refuse it";
    return WalkResult::interrupt();
  });
  return failure(shared.wasInterrupted());
}

/// Whether `type` lives in a thread's private memory: the default memory
/// space (CUDA's local memory) or SPIR-V's Function storage class.
static bool isPrivate(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return true;
  if (auto storage = dyn_cast<spirv::StorageClassAttr>(space))
    return storage.getValue() == spirv::StorageClass::Function;
  return false;
}

LogicalResult dlc::rejectLargePrivateMemory(ModuleOp module,
                                            const TargetDescription &target) {
  uint64_t limit = target.maxPrivateMemoryBytes;
  if (limit == 0)
    return success();
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!f->hasAttr(kKernelAttr))
      continue;
    // An upper bound: buffers that are live one after another still count
    // twice; the kernels that come near the limit hold a few large ones.
    uint64_t total = 0;
    memref::AllocaOp largest;
    uint64_t largestBytes = 0;
    bool largestWidened = false;
    f.walk([&](memref::AllocaOp alloca) {
      MemRefType type = alloca.getType();
      if (!isPrivate(type) || !type.hasStaticShape())
        return;
      // Without 8-bit storage, narrow integers are kept in 32 bits.
      unsigned bits = type.getElementTypeBitWidth();
      bool widened = type.getElementType().isInteger() && bits < 32 &&
                     !target.hasInt8Storage;
      if (widened)
        bits = 32;
      uint64_t bytes = static_cast<uint64_t>(type.getNumElements()) *
                       llvm::divideCeil(bits, 8);
      total += bytes;
      if (bytes > largestBytes) {
        largestBytes = bytes;
        largest = alloca;
        largestWidened = widened;
      }
    });
    if (total <= limit)
      continue;
    llvm::SetVector<StringRef> nodes;
    f.walk([&](Operation *op) {
      op->getLoc()->walk([&](Location l) {
        if (auto name = dyn_cast<NameLoc>(l))
          nodes.insert(name.getName().getValue());
        return WalkResult::advance();
      });
    });
    InFlightDiagnostic diag =
        emitError(largest.getLoc(), "kernel '")
        << f.getSymName() << "' needs " << total
        << " bytes of private memory per thread, more than the "
        << target.maxPrivateMemoryBytes << " that " << target.str()
        << " allows (its largest buffer: " << largestBytes << " bytes of "
        << largest.getType()
        << (largestWidened ? ", its integers kept in 32 bits without +int8"
                           : "")
        << ")";
    if (!nodes.empty())
      diag << "; ONNX nodes in the kernel: " << llvm::join(nodes, ", ");
    return failure();
  }
  return success();
}

/// The loop iterations of `op`'s region bodies, each loop counted `times`
/// times per execution of `op` (UINT64_MAX: unknown or overflowing).
static uint64_t loopIterationsIn(Operation *op, uint64_t times) {
  uint64_t total = 0;
  auto add = [&](uint64_t v) {
    total = v > UINT64_MAX - total ? UINT64_MAX : total + v;
  };
  for (Region &region : op->getRegions())
    for (Operation &inner : region.getOps()) {
      uint64_t runs = times;
      if (auto loop = dyn_cast<scf::ForOp>(inner)) {
        // Loops a thread shares with others (the staging copies) start at
        // its thread id: bounded by the trip count from 0, as every index
        // in dlc's kernels is non-negative.
        std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
        std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
        std::optional<int64_t> step = getConstantIntValue(loop.getStep());
        if (!ub || !step || *step <= 0)
          return UINT64_MAX;
        int64_t from = lb ? *lb : 0;
        uint64_t n =
            *ub > from ? static_cast<uint64_t>((*ub - from + *step - 1) / *step)
                       : 0;
        runs = n && times > UINT64_MAX / n ? UINT64_MAX : times * n;
        add(runs);
      } else if (isa<scf::WhileOp>(inner)) {
        return UINT64_MAX;
      }
      if (inner.getNumRegions())
        add(loopIterationsIn(&inner, runs));
      if (total == UINT64_MAX)
        return total;
    }
  return total;
}

void dlc::recordLoopIterations(ModuleOp module,
                               std::vector<KernelInfo> &kernels) {
  llvm::StringMap<uint64_t> byName;
  module.walk([&](gpu::GPUFuncOp f) {
    if (f.isKernel())
      byName[f.getName()] = loopIterationsIn(f, 1);
  });
  for (KernelInfo &k : kernels) {
    auto it = byName.find(k.name);
    if (it != byName.end())
      k.maxLoopIterations = it->second;
  }
}
