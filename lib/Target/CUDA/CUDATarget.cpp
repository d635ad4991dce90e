//===- CUDATarget.cpp - kernels to PTX (and cubin) ------------------------===//
//
// Same tiling as every target; the workgroup and thread loops become block
// and thread ids of one gpu.module, lowered through NVVM to PTX for the
// requested sm. Kernel parameters are bare device pointers, one per binding.
// When ptxas is available the PTX is also assembled into a cubin, which
// both checks it and saves the driver a JIT compilation (or, with
// --cubin=false, only checked: ptxas -O0, its output discarded).
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/PassOptions.h"

#include "dlc/Codegen/Passes.h"

#include "dlc/artifact_format.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace {

/// ptxas from $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, /usr/local/cuda or PATH.
std::string findPtxas() {
  for (const char *var : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *dir = std::getenv(var)) {
      SmallString<256> p(dir);
      llvm::sys::path::append(p, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(p))
        return std::string(p);
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

/// The oldest PTX ISA version that supports a chip: the oldest drivers can
/// still JIT the module.
std::string ptxFeatures(unsigned sm) {
  if (sm >= 89)
    return "+ptx78";
  if (sm >= 87)
    return "+ptx74";
  if (sm >= 86)
    return "+ptx71";
  if (sm >= 80)
    return "+ptx70";
  return "+ptx63";
}

LogicalResult assemble(Location loc, StringRef ptx, unsigned sm,
                       dlc::CubinMode mode, std::string &cubin) {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return success();
  SmallString<128> in, outPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("dlc-kernels", "ptx", fd, in))
    return emitError(loc, "cannot create a temporary file");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  if (llvm::sys::fs::createTemporaryFile("dlc-kernels", "cubin", outPath)) {
    llvm::sys::fs::remove(in);
    return emitError(loc, "cannot create a temporary file");
  }
  SmallString<128> errPath;
  llvm::sys::fs::createTemporaryFile("dlc-ptxas", "log", errPath);
  std::string arch = "-arch=sm_" + std::to_string(sm);
  std::string outArg = std::string(outPath);
  // A check needs no optimized code: -O0 takes a sixth of -O3's time
  // (YOLOv8n's PTX for sm_80: 0.56 s against 3.3 s) and rejects the same
  // malformed or unsupported PTX.
  bool keep = mode == dlc::CubinMode::Assemble;
  SmallVector<StringRef> args = {ptxas, arch, keep ? "-O3" : "-O0",
                                 in,    "-o", outArg};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(errPath),
                                          StringRef(errPath)};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  llvm::sys::fs::remove(in);
  if (rc != 0) {
    std::string log;
    if (auto buf = llvm::MemoryBuffer::getFile(errPath))
      log = (*buf)->getBuffer().trim().str();
    llvm::sys::fs::remove(errPath);
    llvm::sys::fs::remove(outPath);
    return emitError(loc, "ptxas rejected the generated PTX for sm_")
           << sm << ": " << log;
  }
  llvm::sys::fs::remove(errPath);
  if (!keep) {
    llvm::sys::fs::remove(outPath);
    return success();
  }
  auto buf = llvm::MemoryBuffer::getFile(outPath);
  llvm::sys::fs::remove(outPath);
  if (!buf)
    return emitError(loc, "cannot read the cubin ptxas wrote");
  cubin = (*buf)->getBuffer().str();
  return success();
}

} // namespace

void dlc::buildCUDALoweringPipeline(OpPassManager &pm,
                                    const TargetDescription &target) {
  pm.addPass(createGPUOutlineKernels());
  // int8 contractions take four bytes a step through dp4a (every supported
  // sm has it); then the threads' outputs go to registers.
  GPUInt8DotOptions dot;
  dot.nvvm = true;
  pm.addPass(createGPUInt8Dot(dot));
  LegalizeMathOptions math;
  math.nativeRoundEven = true;
  math.nativeFma = true;
  buildGPULoopsPipeline(pm, math);
  OpPassManager &gpuModule = pm.nest<gpu::GPUModuleOp>();
  gpuModule.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  gpuModule.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  gpuModule.addPass(createCanonicalizerPass());
  gpuModule.addPass(createCSEPass());
  gpuModule.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = "sm_" + std::to_string(target.sm);
  attach.features = ptxFeatures(target.sm);
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

LogicalResult dlc::compileCUDAKernels(ModuleOp module,
                                      const TargetDescription &target,
                                      CubinMode cubin, KernelBinary &out) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  if (failed(runKernelTilingPipeline(module, target, out.kernels)))
    return failure();
  {
    PassManager checks(ctx, ModuleOp::getOperationName());
    if (failed(dlc::applyCommandLinePassOptions(checks)))
      return failure();
    buildGPUKernelChecks(checks, target);
    if (failed(checks.run(module)))
      return failure();
  }
  // A model whose outputs need no kernel (empty tensors, pure reshapes of
  // constants) has no PTX module.
  if (out.kernels.empty())
    return success();
  PassManager pm(ctx, ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(pm)))
    return failure();
  buildCUDALoweringPipeline(pm, target);
  if (failed(pm.run(module)))
    return failure();

  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a))
        ptx = object.getObject().getValue().str();
  });
  if (ptx.empty())
    return emitError(loc, "NVVM lowering produced no PTX");
  if (failed(assemble(loc, ptx, target.sm, cubin, out.cubin)))
    return failure();
  out.code = ptx;
  out.code.push_back('\0');
  for (KernelInfo &k : out.kernels) {
    k.codeFormat = DLCX_CODE_PTX;
    k.codeOffset = 0;
    k.codeSize = out.code.size();
    // Its entry: from `.entry <name>(` to the `}` that closes it, the
    // first at the start of a line.
    size_t begin = ptx.find(".entry " + k.name + "(");
    size_t end = begin == std::string::npos ? begin : ptx.find("\n}", begin);
    if (end != std::string::npos)
      k.ownCodeBytes = end + 2 - begin;
  }
  out.features = out.cubin.empty() ? 0 : DLCX_FEATURE_CUDA_CUBIN;
  return success();
}
