//===- TargetDescription.cpp - what a compilation target can do -----------===//

#include "dlc/Target/TargetDescription.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace dlc;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Expected<TargetDescription> parseCPU(StringRef rest) {
  TargetDescription t;
  t.kind = TargetKind::CPU;
  if (rest.empty()) {
    t.triple = llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple());
    t.cpu = llvm::sys::getHostCPUName().str();
  } else {
    llvm::Triple triple(llvm::Triple::normalize(rest));
    switch (triple.getArch()) {
    case llvm::Triple::x86_64:
    case llvm::Triple::aarch64:
    case llvm::Triple::arm:
    case llvm::Triple::riscv64:
      break;
    default:
      return makeError("unsupported CPU target triple '" + rest +
                       "' (supported: x86_64-linux-gnu, aarch64-linux-gnu, "
                       "armv7a-linux-gnueabihf, riscv64-linux-gnu)");
    }
    t.triple = triple.str();
    t.cpu = "generic";
  }
  llvm::Triple triple(t.triple);
  t.isHosted = triple.getOS() != llvm::Triple::UnknownOS;
  t.vectorBits = triple.getArch() == llvm::Triple::x86_64 ? 256 : 128;
  if (triple.getArch() == llvm::Triple::x86_64 && t.cpu == "generic")
    t.vectorBits = 128;
  // The host's own CPU: AVX-512 doubles the registers and their width.
  if (rest.empty() && triple.getArch() == llvm::Triple::x86_64 &&
      llvm::sys::getHostCPUFeatures().lookup("avx512f"))
    t.vectorBits = 512;
  // VNNI's vpdpbusd at that width: the AVX-512 form, or AVX-VNNI's 256-bit
  // one.
  if (rest.empty() && triple.getArch() == llvm::Triple::x86_64) {
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    t.hasInt8DotProduct =
        t.vectorBits == 512
            ? host.lookup("avx512vnni") && host.lookup("avx512bw")
            : t.vectorBits == 256 && host.lookup("avxvnni");
  }
  t.hasFloat16 = true;
  t.hasInt64 = true;
  t.maxWorkgroupSize = 1;
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
                     .Case("+int8", &t.hasInt8Storage)
                     .Case("+dot8", &t.hasInt8DotProduct)
                     .Case("+subgroup", &t.hasSubgroups)
                     .Case("+int64", &t.hasInt64)
                     .Default(nullptr);
    if (!flag)
      return makeError("unknown Vulkan target feature '" + f +
                       "' (known: +fp16, +int8, +dot8, +subgroup, +int64)");
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

llvm::Expected<TargetDescription> TargetDescription::parse(StringRef spec) {
  auto [name, rest] = spec.split(':');
  if (name == "cpu")
    return parseCPU(rest);
  if (name == "vulkan")
    return parseVulkan(rest);
  if (name == "cuda")
    return parseCUDA(rest);
  return makeError("unknown target '" + spec +
                   "' (expected cpu, cpu:<triple>, vulkan[:+features] or "
                   "cuda:sm_XX)");
}

std::string TargetDescription::str() const {
  switch (kind) {
  case TargetKind::CPU:
    return "cpu:" + triple;
  case TargetKind::Vulkan: {
    std::string s = "vulkan";
    llvm::SmallVector<std::string> f;
    if (hasFloat16)
      f.push_back("+fp16");
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
