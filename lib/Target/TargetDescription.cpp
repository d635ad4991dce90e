//===- TargetDescription.cpp - what a compilation target can do -----------===//

#include "dlc/Target/TargetDescription.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace dlc;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What `triple` with CPU `cpu` and subtarget `features` can do, from
/// LLVM's own description (which knows what each feature implies).
static std::unique_ptr<llvm::MCSubtargetInfo>
subtargetInfo(const llvm::Triple &triple, StringRef cpu, StringRef features,
              std::string &error) {
  static bool initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    return true;
  }();
  (void)initialized;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, features));
}

static llvm::Expected<TargetDescription> parseCPU(StringRef rest,
                                                  StringRef cpuModel) {
  TargetDescription t;
  t.kind = TargetKind::CPU;
  // cpu[:<triple>|:host][:+feature,-feature,...]
  auto [tripleSpec, featureSpec] = rest.split(':');
  bool host = tripleSpec.empty() || tripleSpec == "host";
  if (host) {
    t.triple = llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple());
    t.cpu = llvm::sys::getHostCPUName().str();
  } else {
    llvm::Triple triple(llvm::Triple::normalize(tripleSpec));
    switch (triple.getArch()) {
    case llvm::Triple::x86_64:
    case llvm::Triple::aarch64:
    case llvm::Triple::arm:
    case llvm::Triple::riscv64:
      break;
    case llvm::Triple::thumb:
      // Microcontrollers: ARMv7E-M (Cortex-M4/M7) with an FPU, no OS.
      if (triple.getSubArch() == llvm::Triple::ARMSubArch_v7em &&
          triple.getOS() == llvm::Triple::UnknownOS &&
          triple.getEnvironment() == llvm::Triple::EABIHF)
        break;
      [[fallthrough]];
    default:
      return makeError("unsupported CPU target triple '" + tripleSpec +
                       "' (supported: x86_64-linux-gnu, aarch64-linux-gnu, "
                       "armv7a-linux-gnueabihf, riscv64-linux-gnu, "
                       "thumbv7em-none-eabihf, host)");
    }
    t.triple = triple.str();
    // ARMv7E-M's generic CPU has no FPU, which the hard-float ABI needs:
    // the Cortex-M4 (single-precision FPU, DSP) is the baseline.
    t.cpu = triple.getArch() == llvm::Triple::thumb ? "cortex-m4" : "generic";
  }
  llvm::Triple triple(t.triple);
  // The features: each +name or -name, a feature LLVM knows for the
  // architecture; on the host, added to the host's own.
  llvm::SmallVector<StringRef> features;
  featureSpec.split(features, ',', -1, /*KeepEmpty=*/false);
  if (!featureSpec.empty() && features.empty())
    return makeError("empty CPU feature list in 'cpu:" + rest + "'");
  std::string error;
  std::unique_ptr<llvm::MCSubtargetInfo> base =
      subtargetInfo(triple, "generic", "", error);
  if (!base)
    return makeError("no LLVM target for '" + t.triple + "': " + error);
  if (!cpuModel.empty()) {
    if (!base->isCPUStringValid(cpuModel))
      return makeError("unknown CPU '" + cpuModel + "' for " +
                       triple.getArchName() + " (llc -mtriple=" + t.triple +
                       " -mcpu=help lists them)");
    t.cpu = cpuModel.str();
    host = false;
  }
  t.usesHostFeatures = host;
  for (StringRef f : features) {
    StringRef name = f.drop_front();
    if ((!f.starts_with("+") && !f.starts_with("-")) || name.empty())
      return makeError("CPU feature '" + f +
                       "' must be +name or -name (cpu:<triple>:+avx2,+fma)");
    if (!llvm::any_of(
            base->getAllProcessorFeatures(),
            [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; }))
      return makeError("unknown CPU feature '" + name + "' for " +
                       triple.getArchName() + " (llc -mtriple=" + t.triple +
                       " -mattr=help lists them)");
  }
  t.features = llvm::join(features, ",");
  t.isHosted = triple.getOS() != llvm::Triple::UnknownOS;
  // Without an OS, a microcontroller: RAM in hundreds of KiB, one core,
  // a stack of a few KiB.
  if (!t.isHosted) {
    t.scratchBudget = 8192;
    t.stackTemporaryLimit = 512;
  }
  std::string all = t.features;
  if (host) {
    llvm::SubtargetFeatures f;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature.getKey(), feature.getValue());
    for (StringRef extra : features)
      f.AddFeature(extra);
    all = f.getString();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sub =
      subtargetInfo(triple, t.cpu, all, error);
  if (!sub)
    return makeError("no LLVM target for '" + t.triple + "': " + error);
  auto has = [&](StringRef feature) {
    return sub->checkFeatures(("+" + feature).str());
  };
  // thumbv7em-none-eabihf passes floats in FPU registers: the CPU must be
  // a Cortex-M (M-profile) with one.
  if (triple.getArch() == llvm::Triple::thumb &&
      !(has("mclass") && has("vfp2sp")))
    return makeError("CPU '" + t.cpu +
                     "' is not a Cortex-M with an FPU, "
                     "which " +
                     triple.str() +
                     " needs (cortex-m4, "
                     "cortex-m7, cortex-m33, ...)");
  // Vector width: what the features give x86 (AVX-512 doubles the
  // registers and their width), 128 bits elsewhere.
  t.vectorBits = 128;
  t.vectorRegisters = triple.getArch() == llvm::Triple::aarch64 ? 32 : 16;
  // M-profile FPUs have no vector unit: 32 single-precision registers,
  // which 128-bit vectors (lowered lane by lane) fill 8 times.
  if (triple.getArch() == llvm::Triple::thumb)
    t.vectorRegisters = 8;
  if (triple.getArch() == llvm::Triple::x86_64) {
    if (has("avx512f")) {
      t.vectorBits = 512;
      t.vectorRegisters = 32;
    } else if (has("avx2") || has("avx"))
      t.vectorBits = 256;
    // VNNI's vpdpbusd at that width: the AVX-512 form, or AVX-VNNI's
    // 256-bit one.
    t.hasInt8DotProduct = t.vectorBits == 512
                              ? has("avx512vnni")
                              : t.vectorBits == 256 && has("avxvnni");
    // Without VNNI, pmaddwd's 16-bit pair products at that width (AVX-512
    // BW, AVX2, or SSE2 on 128 bits; AVX alone has no 256-bit integers).
    if (!t.hasInt8DotProduct)
      t.int8DotFromPairs = t.vectorBits == 512   ? has("avx512bw")
                           : t.vectorBits == 256 ? has("avx2")
                                                 : true;
    t.hasInt8DotProduct |= t.int8DotFromPairs;
    t.hasBytePermute = t.vectorBits == 512   ? has("avx512vbmi")
                       : t.vectorBits == 256 ? false
                                             : has("ssse3");
    t.hasTwoVectorPermute = t.vectorBits != 256;
  } else {
    t.hasBytePermute = true; // NEON's tbl on the 128-bit vectors used
    t.hasTwoVectorPermute = true;
  }
  // AArch64: usdot (unsigned x signed, as VNNI) with +i8mm; sdot (signed x
  // signed) with +dotprod alone.
  if (triple.getArch() == llvm::Triple::aarch64) {
    t.hasInt8DotProduct = has("i8mm") || has("dotprod");
    t.int8DotSigned = !has("i8mm") && has("dotprod");
  }
  t.hasFloat16 = true;
  t.hasFloat64 = true;
  t.hasInt64 = true;
  t.maxWorkgroupSize = 1;
  // Sparse convolutions and matrix products (dlc-cpu-sparse-tile) on
  // every CPU, their cost model as scripts/sparse_bench.py fit it
  // (docs/sparsity.md): with AVX-512's 32 registers of 16 lanes a step of
  // 24 fused multiply-adds hides the table's loads; with 16 registers of
  // 8 (AVX2, measured on the same host) a kept pair costs 1.6 dense ones.
  // NEON and RISC-V take AVX2's numbers until measured.
  bool wide = t.vectorBits >= 512 && t.vectorRegisters >= 32;
  t.sparseStepCost = wide ? 1.05 : 1.6;
  t.sparseOutputCost = wide ? 3 : 2;
  t.sparseInputCost = 0;
  return t;
}

static llvm::Expected<TargetDescription> parseVulkan(StringRef rest) {
  TargetDescription t;
  t.kind = TargetKind::Vulkan;
  // The baseline every Vulkan 1.1 device offers (mobile GPUs included).
  t.subgroupSize = 1;
  t.maxWorkgroupSize = 128;
  t.sharedMemoryBytes = 16384;
  // Vulkan states no private memory limit. Mesa's lavapipe ran kernels with
  // 76 KiB per invocation correctly and with 95 KiB silently wrong; NVIDIA's
  // driver refused a pipeline of 300 KiB. Kernels stay under 64 KiB.
  t.maxPrivateMemoryBytes = 64 * 1024;
  // Three quarters of the 16 KiB every Vulkan device has.
  t.stagingBytes = 12288;
  t.privateMemorySpace = "#spirv.storage_class<Function>";
  t.workgroupMemorySpace = "#spirv.storage_class<Workgroup>";
  t.tensorAlignment = 256;
  llvm::SmallVector<StringRef> features;
  rest.split(features, ',', -1, /*KeepEmpty=*/false);
  for (StringRef f : features) {
    bool *flag = llvm::StringSwitch<bool *>(f)
                     .Case("+fp16", &t.hasFloat16)
                     .Case("+fp64", &t.hasFloat64)
                     .Case("+int8", &t.hasInt8Storage)
                     .Case("+dot8", &t.hasInt8DotProduct)
                     .Case("+subgroup", &t.hasSubgroups)
                     .Case("+int64", &t.hasInt64)
                     .Default(nullptr);
    if (!flag)
      return makeError(
          "unknown Vulkan target feature '" + f +
          "' (known: +fp16, +fp64, +int8, +dot8, +subgroup, +int64)");
    *flag = true;
  }
  if (t.hasInt8DotProduct)
    t.hasInt8Storage = true;
  if (t.hasSubgroups)
    t.subgroupSize = 32;
  t.hasSubgroupRowReductions = t.hasSubgroups;
  return t;
}

static llvm::Expected<TargetDescription> parseCUDA(StringRef rest) {
  TargetDescription t;
  t.kind = TargetKind::CUDA;
  unsigned sm;
  if (!rest.consume_front("sm_") || rest.getAsInteger(10, sm))
    return makeError("CUDA targets are written cuda:sm_XX (e.g. cuda:sm_87)");
  static const unsigned supported[] = {75, 80, 86, 87, 89, 90};
  if (!llvm::is_contained(supported, sm))
    return makeError("unsupported CUDA architecture sm_" + llvm::Twine(sm) +
                     " (supported: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90)");
  t.sm = sm;
  t.hasFloat16 = true;
  t.hasFloat64 = true;
  t.hasInt8Storage = true;
  t.hasInt8DotProduct = true; // dp4a exists from sm_61
  t.hasSubgroups = true;
  t.hasInt64 = true;
  t.subgroupSize = 32;
  t.maxWorkgroupSize = 1024;
  t.sharedMemoryBytes = 48 * 1024;
  // Under the 48 KiB of static shared memory.
  t.stagingBytes = 32768;
  t.workgroupMemorySpace = "#gpu.address_space<workgroup>";
  // CUDA's local memory limit per thread (every sm_XX dlc supports).
  t.maxPrivateMemoryBytes = 512 * 1024;
  return t;
}

llvm::Expected<TargetDescription> TargetDescription::parse(StringRef spec,
                                                           StringRef cpu) {
  auto [name, rest] = spec.split(':');
  if (name == "cpu")
    return parseCPU(rest, cpu);
  if (!cpu.empty())
    return makeError("--cpu applies to cpu targets, not '" + spec + "'");
  if (name == "vulkan")
    return parseVulkan(rest);
  if (name == "cuda")
    return parseCUDA(rest);
  return makeError(
      "unknown target '" + spec +
      "' (expected cpu[:<triple>][:+features], vulkan[:+features] or "
      "cuda:sm_XX)");
}

std::string TargetDescription::str() const {
  switch (kind) {
  case TargetKind::CPU:
    return "cpu:" + triple + (features.empty() ? "" : ":" + features);
  case TargetKind::Vulkan: {
    std::string s = "vulkan";
    llvm::SmallVector<std::string> f;
    if (hasFloat16)
      f.push_back("+fp16");
    if (hasFloat64)
      f.push_back("+fp64");
    if (hasInt8Storage)
      f.push_back("+int8");
    if (hasInt8DotProduct)
      f.push_back("+dot8");
    if (hasSubgroups)
      f.push_back("+subgroup");
    if (hasInt64)
      f.push_back("+int64");
    if (!f.empty())
      s += ":" + llvm::join(f, ",");
    return s;
  }
  case TargetKind::CUDA:
    return "cuda:sm_" + std::to_string(sm);
  }
  return "";
}
