//===- CPUTarget.cpp - kernels to native code -----------------------------===//
//
// Kernels are lowered to the LLVM dialect with the bare-pointer calling
// convention, wrapped in the C ABI entry points of artifact_format.h,
// optimized by LLVM, emitted as an object for the target triple and linked
// into a shared object with ld.lld (hosted targets), which the runtime loads.
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/PassOptions.h"

#include "dlc/Codegen/Passes.h"

#include "dlc/artifact_format.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace {

/// The ISA feature bit of the artifact for a triple.
uint64_t isaFeature(const llvm::Triple &triple) {
  switch (triple.getArch()) {
  case llvm::Triple::x86_64:
    return DLCX_FEATURE_CPU_X86_64;
  case llvm::Triple::aarch64:
    return DLCX_FEATURE_CPU_AARCH64;
  case llvm::Triple::arm:
    return DLCX_FEATURE_CPU_ARMV7;
  case llvm::Triple::riscv64:
    return DLCX_FEATURE_CPU_RISCV64;
  case llvm::Triple::thumb: // ARMv7E-M (TargetDescription accepts no other)
    return DLCX_FEATURE_CPU_ARMV7EM;
  default:
    return 0;
  }
}

/// The instruction-set extensions of the artifact's table that `tm` may
/// use: the CPU driver checks them at load.
uint64_t extensionFeatures(const llvm::TargetMachine &tm, uint64_t isa) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  uint64_t bits = 0;
#define DLC_EXTENSION(name, bit, extensionIsa, text)                           \
  if (isa == (extensionIsa) && sti->checkFeatures("+" text))                   \
    bits |= DLCX_CPU_EXTENSION_MASK(bit);
  DLCX_CPU_EXTENSIONS(DLC_EXTENSION)
#undef DLC_EXTENSION
  return bits;
}

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const dlc::TargetDescription &target, std::string &error) {
  static bool initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(target.triple);
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return nullptr;
  llvm::SubtargetFeatures f;
  if (target.usesHostFeatures) {
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature.getKey(), feature.getValue());
  } else if (target.cpu != "generic") {
    // A named CPU model: its own features (LLVM knows them).
  } else if (triple.getArch() == llvm::Triple::arm) {
    f.AddFeature("+neon");
    f.AddFeature("+vfp4");
  } else if (triple.getArch() == llvm::Triple::riscv64) {
    for (const char *name : {"+m", "+a", "+f", "+d", "+c"})
      f.AddFeature(name);
  }
  // What the target spec asked for comes last and wins.
  llvm::SmallVector<llvm::StringRef> asked;
  llvm::StringRef(target.features).split(asked, ',', -1, false);
  for (llvm::StringRef feature : asked)
    f.AddFeature(feature);
  std::string features = f.getString();
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(llvmTarget->createTargetMachine(
      triple, target.cpu, features, options,
      // A shared object where there is a loader; bare metal links the
      // object into the firmware at fixed addresses.
      target.isHosted ? llvm::Reloc::PIC_ : llvm::Reloc::Static, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    error = "cannot create an LLVM target machine for " + target.triple;
  return tm;
}

/// Whether the target has an instruction for something LLVM would
/// otherwise call a library function for: on x86 when it has
/// `x86Feature`, on AArch64 always, elsewhere never.
bool hasNativeInstruction(const llvm::TargetMachine &tm,
                          llvm::StringRef x86Feature) {
  switch (tm.getTargetTriple().getArch()) {
  case llvm::Triple::x86_64:
  case llvm::Triple::x86:
    return tm.getMCSubtargetInfo()->checkFeatures(x86Feature);
  case llvm::Triple::aarch64:
    return true;
  default:
    return false;
  }
}

/// llvm.roundeven in one instruction (roundps/vroundps from SSE4.1,
/// frintn on AArch64) rather than a libm call, which kernels must not make.
bool hasNativeRoundEven(const llvm::TargetMachine &tm) {
  return hasNativeInstruction(tm, "+sse4.1");
}

/// f64 to f16 in one instruction (AArch64's fcvt, x86's AVX512-FP16
/// vcvtsd2sh) rather than a call of __truncdfhf2.
bool hasNativeF64ToF16(const llvm::TargetMachine &tm) {
  return hasNativeInstruction(tm, "+avx512fp16");
}

/// f32 <-> f16 in one instruction (x86's F16C, AArch64's fcvt, ARMv7's
/// vcvt with fp16, RISC-V's fcvt with Zfhmin) rather than calls of
/// __extendhfsf2/__truncsfhf2.
bool hasNativeF16Conversion(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo &sti = *tm.getMCSubtargetInfo();
  switch (tm.getTargetTriple().getArch()) {
  case llvm::Triple::arm:
  case llvm::Triple::thumb:
    return sti.checkFeatures("+fp16");
  case llvm::Triple::riscv32:
  case llvm::Triple::riscv64:
    return sti.checkFeatures("+zfhmin");
  default:
    return hasNativeInstruction(tm, "+f16c");
  }
}

/// f32 -> bf16 without a call of __truncsfbf2: x86 with AVX512-BF16 (and
/// VL for the narrow vectors), AArch64 (bfcvt, or an inline sequence).
bool hasNativeBF16Conversion(const llvm::TargetMachine &tm) {
  return hasNativeInstruction(tm, "+avx512bf16,+avx512vl");
}

/// A multiply-add fused in one rounding (x86's FMA3, AArch64's fmadd)
/// rather than a call of fmaf.
bool hasNativeFma(const llvm::TargetMachine &tm) {
  return hasNativeInstruction(tm, "+fma");
}

/// Finds ld.lld: next to the LLVM tools dlc was built against, else on PATH.
std::string findLinker() {
  for (const char *dir : {DLC_LLVM_TOOLS_DIR})
    if (llvm::ErrorOr<std::string> p =
            llvm::sys::findProgramByName("ld.lld", {dir}))
      return *p;
  for (const char *name : {"ld.lld-22", "ld.lld"})
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(name))
      return *p;
  return "";
}

LogicalResult linkSharedObject(Location loc, StringRef object,
                               std::string &shared) {
  std::string lld = findLinker();
  if (lld.empty())
    return emitError(loc, "cannot find ld.lld (Debian package lld-22), which "
                          "links CPU kernels into a shared object");
  SmallString<128> objPath, soPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("dlc-kernels", "o", fd, objPath))
    return emitError(loc, "cannot create a temporary file");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << object;
  }
  if (llvm::sys::fs::createTemporaryFile("dlc-kernels", "so", soPath)) {
    llvm::sys::fs::remove(objPath);
    return emitError(loc, "cannot create a temporary file");
  }
  std::string soArg = soPath.str().str();
  SmallVector<StringRef> args = {lld,  "-shared", "--no-undefined-version",
                                 "-z", "now",     "--hash-style=both",
                                 "-o", soArg,     objPath.str()};
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(lld, args, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  llvm::sys::fs::remove(objPath);
  if (rc != 0) {
    llvm::sys::fs::remove(soPath);
    return emitError(loc, "ld.lld failed to link the kernels")
           << (errorMessage.empty() ? "" : ": ") << errorMessage;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> so =
      llvm::MemoryBuffer::getFile(soPath);
  llvm::sys::fs::remove(soPath);
  if (!so)
    return emitError(loc, "cannot read the linked kernels");
  shared = (*so)->getBuffer().str();
  return success();
}

} // namespace

void dlc::buildCPULoweringPipeline(OpPassManager &pm,
                                   const TargetDescription &target,
                                   const llvm::TargetMachine &tm) {
  pm.addPass(createCPULowerWorkgroups());
  CPUSparseTileOptions sparseTile;
  sparseTile.vectorBits = target.vectorBits;
  sparseTile.vectorRegisters = target.vectorRegisters;
  pm.addNestedPass<func::FuncOp>(createCPUSparseTile(sparseTile));
  pm.addNestedPass<func::FuncOp>(createCPULoopOrder());
  CPURegisterTileOptions registerTile;
  registerTile.vectorBits = target.vectorBits;
  registerTile.vectorRegisters = target.vectorRegisters;
  // A CPU's 4-byte dot products (TargetDescription.h): x86 VNNI's, or
  // built from pmaddwd's pair products without it, or AArch64's usdot
  // (+i8mm) or sdot (+dotprod) on 128-bit vectors.
  if (target.hasInt8DotProduct && tm.getTargetTriple().isX86()) {
    registerTile.int8Dot =
        "llvm.x86.avx512.vpdpbusd." + std::to_string(target.vectorBits);
    if (target.int8DotFromPairs)
      registerTile.int8Dot =
          target.vectorBits == 512   ? "llvm.x86.avx512.pmaddw.d.512"
          : target.vectorBits == 256 ? "llvm.x86.avx2.pmadd.wd"
                                     : "llvm.x86.sse2.pmadd.wd";
    registerTile.int8DotPairs = target.int8DotFromPairs;
  }
  if (target.hasInt8DotProduct && tm.getTargetTriple().isAArch64()) {
    registerTile.int8Dot = target.int8DotSigned
                               ? "llvm.aarch64.neon.sdot.v4i32.v16i8"
                               : "llvm.aarch64.neon.usdot.v4i32.v16i8";
    registerTile.int8DotSigned = target.int8DotSigned;
  }
  registerTile.windowDot = target.hasBytePermute;
  registerTile.twoVectorPermute = target.hasTwoVectorPermute;
  pm.addNestedPass<func::FuncOp>(createCPURegisterTile(registerTile));
  // Padded tiles: fill only what the copy of the input rows leaves.
  pm.addNestedPass<func::FuncOp>(createFillHalo());
  pm.addNestedPass<func::FuncOp>(createCPUScratch());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  // What the target has one instruction for; the rest is expanded before
  // LLVM would call libm. ARMv7's VFP has no maxnum instruction.
  // 16-bit floats whose conversions the target lacks: arithmetic in f32,
  // conversions in integer operations (dlc-legalize-math).
  LegalizeMathOptions math;
  math.expandF16Conversions = !hasNativeF16Conversion(tm);
  math.expandBF16Conversions = !hasNativeBF16Conversion(tm);
  {
    arith::ArithEmulateUnsupportedFloatsOptions emulate;
    if (math.expandF16Conversions)
      emulate.sourceTypeStrs.push_back("f16");
    if (math.expandBF16Conversions)
      emulate.sourceTypeStrs.push_back("bf16");
    emulate.targetTypeStr = "f32";
    if (!emulate.sourceTypeStrs.empty())
      pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  }
  math.nativeRoundEven = hasNativeRoundEven(tm);
  // The same instructions round down (roundps, frintm).
  math.expandFloor = !math.nativeRoundEven;
  math.expandNumMinMax =
      tm.getTargetTriple().isARM() || tm.getTargetTriple().isThumb();
  math.expandF64ToF16 = !hasNativeF64ToF16(tm);
  math.nativeFma = hasNativeFma(tm);
  // 32-bit targets convert i64 to float through a helper call.
  math.expandI64ToF32 = tm.getPointerSizeInBits(0) == 32;
  // x86's vcvtneps2bf16 treats subnormal inputs as zero; the other
  // targets convert in integer operations (expand-bf16-conversions).
  math.exactBF16Subnormals =
      !math.expandBF16Conversions && tm.getTargetTriple().isX86();
  pm.addPass(createLegalizeMath(math));
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // 32-bit pointers: index divisions in i32, or LLVM calls libgcc.
  if (tm.getPointerSizeInBits(0) == 32)
    pm.addPass(createNarrowIndexDivision());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (math.expandBF16Conversions)
    pm.addPass(createCPUBF16Memory());
  pm.addPass(createCPUKernelEntry());
  pm.addPass(createCanonicalizerPass());
}

LogicalResult dlc::buildCPULoweringPipeline(OpPassManager &pm,
                                            const TargetDescription &target,
                                            std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target, error);
  if (!tm)
    return failure();
  buildCPULoweringPipeline(pm, target, *tm);
  return success();
}

LogicalResult dlc::compileCPUKernels(ModuleOp module,
                                     const TargetDescription &target,
                                     bool relocatable, KernelBinary &out) {
  Location loc = module.getLoc();
  if (failed(runKernelTilingPipeline(module, target, out.kernels)))
    return failure();

  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target, error);
  if (!tm)
    return emitError(loc, error);

  PassManager lower(module.getContext(), ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(lower)))
    return failure();
  buildCPULoweringPipeline(lower, target, *tm);
  if (failed(lower.run(module)))
    return failure();

  // What dlc-cpu-scratch recorded survives on the lowered kernels.
  for (KernelInfo &k : out.kernels)
    if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(k.name + ".impl"))
      if (auto size = f->getAttrOfType<IntegerAttr>(kScratchSizeAttr))
        k.scratchSize = size.getInt();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "dlc_kernels");
  if (!llvmModule)
    return emitError(loc, "cannot translate the kernels to LLVM IR");
  llvmModule->setTargetTriple(tm->getTargetTriple());
  llvmModule->setDataLayout(tm->createDataLayout());

  // LLVM's standard -O3 pipeline (vectorizes the inner loops).
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm =
        pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*llvmModule, mam);
  }

  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return emitError(loc, "the LLVM target cannot emit object files");
    codegen.run(*llvmModule);
  }
  uint64_t isa = isaFeature(llvm::Triple(target.triple));
  out.features = isa | extensionFeatures(*tm, isa);
  out.cpuCodeId = dlcx_checksum(
      reinterpret_cast<const uint8_t *>(object.data()), object.size());
  // Without a loader (bare metal) the artifact carries no code: the
  // application links the object (--emit=obj), which CPU_CODE_ID names.
  if (relocatable) {
    out.code = object.str().str();
  } else if (target.isHosted &&
             failed(linkSharedObject(loc, object.str(), out.code))) {
    return failure();
  }
  for (KernelInfo &k : out.kernels) {
    k.codeFormat = relocatable       ? 0
                   : target.isHosted ? DLCX_CODE_ELF_SHARED
                                     : DLCX_CODE_LINKED;
    k.codeOffset = 0;
    k.codeSize = out.code.size();
  }
  // Each kernel's own code: its entry and its functions (`<name>.impl`,
  // ...) in the object's symbol table.
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(
          llvm::MemoryBufferRef(object.str(), "kernels"));
  if (!file)
    return emitError(loc, "cannot read the kernels' object: ")
           << llvm::toString(file.takeError());
  llvm::StringMap<uint64_t> sizes;
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<llvm::object::SymbolRef::Type> type = symbol.getType();
    llvm::Expected<StringRef> name = symbol.getName();
    if (!type || !name) {
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*type == llvm::object::SymbolRef::ST_Function)
      sizes[name->split('.').first] +=
          llvm::object::ELFSymbolRef(symbol).getSize();
  }
  for (KernelInfo &k : out.kernels)
    k.ownCodeBytes = sizes.lookup(k.name);
  return success();
}
