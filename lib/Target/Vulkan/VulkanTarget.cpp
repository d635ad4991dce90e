//===- VulkanTarget.cpp - kernels to SPIR-V compute shaders ---------------===//
//
// The shared tiling gives each kernel a workgroup loop and a thread loop;
// they become a gpu.func per kernel, which upstream's GPU-to-SPIR-V
// conversion turns into one spirv.module (one pipeline) per kernel. The
// target environment is Vulkan 1.1 / SPIR-V 1.3 with only the capabilities
// the target description enables (no Int64, no Float16 by default), so
// 64-bit integers are emulated with 32-bit pairs.
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/PassOptions.h"

#include "dlc/Codegen/Passes.h"

#include "dlc/artifact_format.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRVPass.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRVPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {

/// The spirv.target_env for `target`: the Vulkan 1.1 baseline plus the
/// optional capabilities it enables.
spirv::TargetEnvAttr targetEnv(MLIRContext *ctx,
                               const dlc::TargetDescription &target,
                               bool usesDotProduct) {
  SmallVector<std::string> caps = {"Shader"};
  SmallVector<std::string> exts = {"SPV_KHR_storage_buffer_storage_class"};
  if (target.hasFloat16) {
    caps.append({"Float16", "StorageBuffer16BitAccess"});
    exts.push_back("SPV_KHR_16bit_storage");
  }
  if (target.hasFloat64)
    caps.push_back("Float64");
  if (target.hasInt8Storage) {
    caps.append({"Int8", "StorageBuffer8BitAccess"});
    exts.push_back("SPV_KHR_8bit_storage");
  }
  if (target.hasInt8DotProduct) {
    caps.append(
        {"DotProduct", "DotProductInput4x8Bit", "DotProductInput4x8BitPacked"});
    exts.push_back("SPV_KHR_integer_dot_product");
  }
  if (target.hasSubgroups)
    caps.append({"GroupNonUniform", "GroupNonUniformArithmetic",
                 "GroupNonUniformShuffle"});
  if (target.hasInt64)
    caps.push_back("Int64");
  // Integer dot products are core in SPIR-V 1.6, and MLIR's SPIR-V
  // dialect asks for 1.6 for them even with the KHR extension: kernels
  // that use them are SPIR-V 1.6, for Vulkan 1.3 devices. The others stay
  // at 1.3 (a 1.6 environment would list every buffer as an entry-point
  // interface, which 1.3 modules may not).
  std::string version = usesDotProduct ? "v1.6" : "v1.3";
  std::string text =
      "#spirv.target_env<#spirv.vce<" + version + ", [" +
      llvm::join(caps, ", ") + "], [" + llvm::join(exts, ", ") +
      "]>, api=Vulkan, #spirv.resource_limits<max_compute_workgroup_size = "
      "[128, 128, 64], max_compute_workgroup_invocations = " +
      std::to_string(target.maxWorkgroupSize) +
      ", subgroup_size = " + std::to_string(std::max(target.subgroupSize, 1u)) +
      ">>";
  return cast<spirv::TargetEnvAttr>(parseAttribute(text, ctx));
}

/// Element types the target cannot hold in a buffer or register get a
/// clear error naming the kernel and the feature, rather than a failed
/// conversion or silently reinterpreted bytes.
LogicalResult checkElementTypes(ModuleOp module,
                                const dlc::TargetDescription &target) {
  WalkResult walk = module.walk([&](gpu::GPUFuncOp func) -> WalkResult {
    WalkResult inner = func.walk([&](Operation *op) -> WalkResult {
      auto check = [&](Type t) -> LogicalResult {
        if (auto shaped = dyn_cast<ShapedType>(t))
          t = shaped.getElementType();
        if (t.isF64() && !target.hasFloat64)
          return op->emitError("kernel '")
                 << func.getName()
                 << "' computes in f64, which needs the target feature +fp64 "
                    "(e.g. --target=vulkan:+fp64, for devices with "
                    "shaderFloat64; mobile GPUs lack it: convert the model to "
                    "f32 for them)";
        if (t.isBF16())
          return op->emitError("kernel '")
                 << func.getName()
                 << "' uses bf16, which SPIR-V for Vulkan does not have";
        if (t.isF16() && !target.hasFloat16)
          return op->emitError("kernel '")
                 << func.getName()
                 << "' uses f16, which needs the target feature +fp16 "
                    "(e.g. --target=vulkan:+fp16, for devices with "
                    "shaderFloat16 and storageBuffer16BitAccess)";
        return success();
      };
      for (Type t : op->getResultTypes())
        if (failed(check(t)))
          return WalkResult::interrupt();
      // GLSL.std.450's transcendental instructions (Exp, Log, Pow, Sin,
      // ...) take 16- and 32-bit floats only; f64 has the exact ones.
      if (isa<math::MathDialect>(op->getDialect()) &&
          llvm::any_of(
              op->getOperandTypes(),
              [](Type t) { return getElementTypeOrSelf(t).isF64(); }) &&
          !isa<math::SqrtOp, math::RsqrtOp, math::AbsFOp, math::FloorOp,
               math::CeilOp, math::RoundOp, math::RoundEvenOp, math::TruncOp,
               math::FmaOp>(op)) {
        op->emitError("kernel '")
            << func.getName() << "' computes " << op->getName()
            << " in f64, which Vulkan's extended instructions (GLSL.std.450) "
               "have for 16- and 32-bit floats only";
        return WalkResult::interrupt();
      }
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument a : b.getArguments())
            if (failed(check(a.getType())))
              return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return inner;
  });
  return failure(walk.wasInterrupted());
}

/// Sets each kernel module's SPIR-V target environment (SPIR-V 1.6 where it
/// uses integer dot products) and each kernel's entry point ABI (its
/// workgroup size).
void setTargetEnv(ModuleOp module, const dlc::TargetDescription &target) {
  MLIRContext *ctx = module.getContext();
  module.walk([&](gpu::GPUModuleOp m) {
    bool dot = m.walk([](Operation *op) {
                  return isa<spirv::SDotOp, spirv::UDotOp, spirv::SUDotOp>(op)
                             ? WalkResult::interrupt()
                             : WalkResult::advance();
                }).wasInterrupted();
    m->setAttr(spirv::getTargetEnvAttrName(), targetEnv(ctx, target, dot));
  });
  module.walk([&](gpu::GPUFuncOp f) {
    SmallVector<int32_t> size(f.getKnownBlockSizeAttr().asArrayRef());
    f->setAttr(spirv::getEntryPointABIAttrName(),
               spirv::getEntryPointABIAttr(ctx, size));
  });
}

} // namespace

void dlc::buildVulkanLoopsPipeline(OpPassManager &pm,
                                   const TargetDescription &target) {
  GPUOutlineKernelsOptions outline;
  outline.modulePerKernel = true;
  pm.addPass(createGPUOutlineKernels(outline));
  // With +dot8, int8 contractions become integer dot products before the
  // remaining linalg ops become loops.
  if (target.hasInt8DotProduct)
    pm.addPass(createGPUInt8Dot());
  // SPIR-V has no bf16: its arithmetic runs in f32, its conversions are
  // integer operations, and its buffers hold 16-bit integers.
  arith::ArithEmulateUnsupportedFloatsOptions bf16;
  bf16.sourceTypeStrs = {"bf16"};
  bf16.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(bf16));
  LegalizeMathOptions math;
  math.nativeRoundEven = true;
  math.expandBF16Conversions = true;
  buildGPULoopsPipeline(pm, math);
  pm.addPass(createGPUBF16Storage());
}

void dlc::buildVulkanSPIRVPipeline(OpPassManager &pm,
                                   const TargetDescription &target) {
  pm.addPass(createTargetStep(
      "dlc-vulkan-element-types",
      "Kernels computing in types the Vulkan target lacks fail",
      [target](ModuleOp module) { return checkElementTypes(module, target); }));
  pm.addPass(createTargetStep(
      "dlc-vulkan-target-env",
      "Each kernel module's SPIR-V target environment and entry point ABI",
      [target](ModuleOp module) {
        setTargetEnv(module, target);
        return success();
      }));
  if (!target.hasInt64) {
    pm.addPass(createEmulateWideInt());
    pm.addPass(createCanonicalizerPass());
  }
  // Narrow integers widen last: canonicalization would fold the
  // extensions it inserts back into narrow-to-narrow ones.
  WidenNarrowIntOptions widen;
  widen.nativeInt8 = target.hasInt8Storage;
  pm.addPass(createWidenNarrowInt(widen));
  pm.addPass(createMapMemRefStorageClassPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertMathToSPIRVPass());
  pm.addPass(createConvertGPUToSPIRVPass());
  OpPassManager &spv = pm.nest<spirv::ModuleOp>();
  spv.addPass(spirv::createSPIRVLowerABIAttributesPass());
  spv.addPass(spirv::createSPIRVUpdateVCEPass());
}

LogicalResult dlc::compileVulkanKernels(ModuleOp module,
                                        const TargetDescription &target,
                                        KernelBinary &out) {
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<spirv::SPIRVDialect, gpu::GPUDialect>();
  Location loc = module.getLoc();
  if (failed(runKernelTilingPipeline(module, target, out.kernels)))
    return failure();
  PassManager pm(ctx, ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(pm)))
    return failure();
  buildGPUKernelChecks(pm, target);
  buildVulkanLoopsPipeline(pm, target);
  if (failed(pm.run(module)))
    return failure();
  recordLoopIterations(module, out.kernels);

  PassManager lower(ctx, ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(lower)))
    return failure();
  buildVulkanSPIRVPipeline(lower, target);
  if (failed(lower.run(module)))
    return failure();

  // One SPIR-V binary per kernel, named after the gpu.module it came from
  // (the conversion prefixes the module's name).
  llvm::StringMap<std::pair<uint64_t, uint64_t>> blobs;
  for (auto spv : module.getOps<spirv::ModuleOp>()) {
    SmallVector<uint32_t> words;
    if (failed(spirv::serialize(spv, words)))
      return emitError(loc, "cannot serialize SPIR-V module ")
             << spv.getName().value_or("");
    StringRef name = spv.getName().value_or("");
    name.consume_front("__spv__");
    uint64_t offset = out.code.size();
    out.code.append(reinterpret_cast<const char *>(words.data()),
                    words.size() * sizeof(uint32_t));
    // Keep every blob 4-byte aligned (SPIR-V is a stream of words).
    blobs[name] = {offset, words.size() * sizeof(uint32_t)};
  }
  for (KernelInfo &k : out.kernels) {
    auto it = blobs.find(k.name);
    if (it == blobs.end())
      return emitError(loc, "kernel '")
             << k.name << "' produced no SPIR-V module";
    k.codeFormat = DLCX_CODE_SPIRV;
    k.codeOffset = it->second.first;
    k.codeSize = it->second.second;
    k.ownCodeBytes = k.codeSize;
  }
  uint64_t features = 0;
  if (target.hasFloat16)
    features |= DLCX_FEATURE_VK_FLOAT16;
  if (target.hasFloat64)
    features |= DLCX_FEATURE_VK_FLOAT64;
  if (target.hasInt8Storage)
    features |= DLCX_FEATURE_VK_INT8_STORAGE;
  if (target.hasInt8DotProduct)
    features |= DLCX_FEATURE_VK_INT8_DOT;
  if (target.hasSubgroups)
    features |= DLCX_FEATURE_VK_SUBGROUP;
  if (target.hasInt64)
    features |= DLCX_FEATURE_VK_INT64;
  out.features = features;
  return success();
}
