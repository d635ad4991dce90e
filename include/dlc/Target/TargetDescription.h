//===- TargetDescription.h - what a compilation target can do --*- C++ -*-===//
//
// Code generation asks this description for capabilities (vector width,
// shared memory, fp16, integer dot products, subgroups) instead of testing
// for a particular target, so one tiling and distribution pipeline serves
// CPU, Vulkan and CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TARGET_TARGETDESCRIPTION_H
#define DLC_TARGET_TARGETDESCRIPTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace dlc {

enum class TargetKind { CPU, Vulkan, CUDA };

struct TargetDescription {
  TargetKind kind = TargetKind::CPU;

  /// CPU: the LLVM target triple and CPU name ("generic", the host's or
  /// the one --cpu names).
  std::string triple;
  std::string cpu;
  /// CPU: LLVM subtarget features asked for beyond the CPU's own
  /// (+avx512vnni,-fma), comma-separated.
  std::string features;
  /// CPU: whether the code is for this machine's own CPU and features.
  bool usesHostFeatures = false;
  /// CUDA: the compute capability, e.g. 87 for sm_87.
  unsigned sm = 0;

  /// Capabilities beyond each target's baseline.
  bool hasFloat16 = false; ///< fp16 arithmetic and storage
  /// f64 arithmetic and storage: CPUs and CUDA; Vulkan with +fp64 (the
  /// Float64 capability, which desktop GPUs have and mobile ones lack).
  bool hasFloat64 = false;
  bool hasInt8Storage = false; ///< 8-bit storage buffers (Vulkan)
  /// 4-byte integer dot products into 32-bit lanes: GPUs' dp4a/dot8 (any
  /// signedness); CPUs' at vectorBits: unsigned x signed bytes (x86 VNNI's
  /// vpdpbusd, AVX-512 or AVX-VNNI; AArch64's usdot with +i8mm), or signed
  /// x signed where int8DotSigned (AArch64's sdot with +dotprod).
  bool hasInt8DotProduct = false;
  bool int8DotSigned = false;
  /// CPU: the 4-byte dot products are built, exactly, from two multiplies
  /// of 16-bit pairs summed into 32-bit lanes (x86 without VNNI: pmaddwd
  /// on the even and on the odd bytes; pmaddubsw would saturate).
  bool int8DotFromPairs = false;
  /// CPU: one instruction shuffles bytes across a whole vector of
  /// vectorBits (x86 AVX-512 VBMI's vpermb, SSSE3's pshufb on 128 bits,
  /// NEON's tbl); AVX2's byte shuffles stay within 128-bit halves.
  bool hasBytePermute = false;
  /// CPU: one instruction takes any lanes of two vectors of vectorBits
  /// (AVX-512's vpermt2ps; on 128 bits SSE's shufps and NEON's uzp1): the
  /// even lanes of a stride-2 load. AVX and AVX2 shuffle within 128-bit
  /// halves and take two (vshufps, then vpermpd across the halves).
  bool hasTwoVectorPermute = false;
  bool hasSubgroups = false; ///< subgroups of >= DLCX_MIN_SUBGROUP_SIZE
  bool hasInt64 = false;     ///< 64-bit integers in kernels
  unsigned subgroupSize = 1;
  unsigned maxWorkgroupSize = 1;  ///< threads per workgroup
  uint64_t sharedMemoryBytes = 0; ///< per workgroup
  /// GPUs: the most private (per-thread) memory a kernel may use. Beyond a
  /// device's limit a driver may refuse the pipeline or, worse, run it and
  /// compute garbage; so codegen refuses such kernels (0: no limit).
  uint64_t maxPrivateMemoryBytes = 0;
  unsigned vectorBits = 128; ///< preferred SIMD width (CPU)
  /// CPU: SIMD registers at that width (AVX-512 and AArch64: 32, AVX2 and
  /// ARMv7 NEON: 16); the register tile keeps twice as many rows with 32.
  unsigned vectorRegisters = 16;
  /// CPU: sparse 1x1 convolutions (dlc-sparse-contractions' cost model,
  /// as scripts/sparse_bench.py fits it): what a kept (group of 4 output
  /// channels, input channel) pair costs against a dense multiply-add, and
  /// what writing one output element and reading one input element of a
  /// pixel cost in multiply-adds. sparseStepCost 0: no sparse kernels.
  double sparseStepCost = 0;
  double sparseOutputCost = 0;
  double sparseInputCost = 0;
  bool isHosted = true; ///< CPU: has threads and a loader
  /// CPU: about the most bytes one workgroup builds in its thread's scratch
  /// (padded inputs, temporaries; 0: no limit). Microcontrollers, whose
  /// scratch is RAM taken from the application, split kernels further.
  uint64_t scratchBudget = 0;
  /// CPU: the largest temporary a kernel keeps on the stack; larger ones
  /// go to the thread's scratch (which the runtime sizes from the
  /// artifact). Microcontrollers' stacks are a few KiB.
  uint64_t stackTemporaryLimit = 16 * 1024;
  /// GPUs: workgroup memory one contraction may stage its inputs in
  /// (under what every device of the target has, leaving room for the
  /// kernel's other workgroup buffers).
  uint64_t stagingBytes = 0;
  /// GPUs: the memory-space attributes (MLIR syntax) of a thread's private
  /// buffers and of workgroup buffers; empty: the default memory space.
  std::string privateMemorySpace;
  std::string workgroupMemorySpace;
  /// Row reductions shared by the lanes of a subgroup (dlc-gpu-subgroup-rows
  /// and its xor shuffles), where that code generation is checked.
  bool hasSubgroupRowReductions = false;
  /// Bytes every tensor's place in memory is a multiple of: Vulkan binds
  /// tensors as descriptor ranges, whose offsets must meet
  /// minStorageBufferOffsetAlignment (256 on the strictest devices); 64
  /// (a cache line) elsewhere.
  uint64_t tensorAlignment = 64;

  /// Parses `cpu[:<triple>|:host][:+feature,-feature,...]`,
  /// `vulkan[:+feature,...]` or `cuda:sm_XX`.
  /// With `cpu` (CPU targets only), the code is for that CPU model (an
  /// LLVM processor name such as znver4 or cortex-a76) and what it
  /// implies, not the host's or a generic one.
  static llvm::Expected<TargetDescription> parse(llvm::StringRef spec,
                                                 llvm::StringRef cpu = "");

  /// The spec this description was parsed from, normalized.
  std::string str() const;

  /// Whether kernels run as workgroups of many threads.
  bool isGPU() const { return maxWorkgroupSize > 1; }
  uint64_t bufferAlignment() const { return tensorAlignment; }
};

} // namespace dlc

#endif // DLC_TARGET_TARGETDESCRIPTION_H
