//===- KernelBinary.h - compiled kernels of one target ----------*- C++ -*-===//

#ifndef DLC_TARGET_KERNELBINARY_H
#define DLC_TARGET_KERNELBINARY_H

#include "dlc/Codegen/Passes.h"
#include "dlc/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace dlc {

/// What the host plan needs to know about one compiled kernel.
struct KernelInfo {
  std::string name;
  uint32_t bindingCount = 0;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  uint32_t codeFormat = 0; ///< dlcx_code_format_t
  uint64_t codeOffset = 0; ///< into KernelBinary::code
  uint64_t codeSize = 0;
  uint64_t scratchSize = 0; ///< CPU: bytes of per-thread scratch it takes
  /// The kernel's own code, for reports: CPU, the sizes of its functions'
  /// symbols in the object; Vulkan, its SPIR-V module; CUDA, its `.entry`
  /// in the PTX text.
  uint64_t ownCodeBytes = 0;
  /// GPU: at most this many loop iterations, all loops together, run in one
  /// thread (UINT64_MAX: unknown); see recordLoopIterations.
  uint64_t maxLoopIterations = 0;
};

/// The code of all kernels of a model for one target.
struct KernelBinary {
  std::string code;
  std::vector<KernelInfo> kernels;
  uint64_t features = 0; ///< dlcx_feature_t bits the code needs
  /// CUDA: the kernels assembled by ptxas for the target's sm (may be empty).
  std::string cubin;
  /// CPU: dlcx_checksum of the relocatable object of all kernels (what
  /// --emit=obj writes and the shared object is linked from): the
  /// artifact's CPU_CODE_ID, and the fingerprint of --emit=obj's kernel
  /// table. 0 for GPU targets.
  uint64_t cpuCodeId = 0;
};

/// The target-independent part of kernel code generation: fuse elementwise
/// ops, tile into workgroups, bufferize with the kernel ABI.
void buildKernelTilingPipeline(mlir::OpPassManager &pm,
                               const TargetDescription &target);

/// Runs buildKernelTilingPipeline on `module` and reads the binding counts,
/// grids and workgroup sizes of the bufferized kernels into `kernels`.
mlir::LogicalResult runKernelTilingPipeline(mlir::ModuleOp module,
                                            const TargetDescription &target,
                                            std::vector<KernelInfo> &kernels);

/// GPU targets: fails with an error naming the kernel when a kernel
/// updates a stack copy of an input from all its threads (ScatterND,
/// ScatterElements bufferize that way). On a GPU each thread would update
/// its own copy; the grid shares no stack. Call on the tiled kernels
/// (after runKernelTilingPipeline), while the thread loops are still there.
mlir::LogicalResult rejectGridSharedStackCopies(mlir::ModuleOp module);

/// Sets each kernel's KernelInfo::maxLoopIterations from its gpu.func, once
/// linalg ops are loops: the sum over every loop of its trip count times
/// those of the loops around it (UINT64_MAX when a trip count is not a
/// constant). Some drivers bound the loop iterations of an invocation
/// (Mesa's lavapipe ends loops after 65535, silently); the runtime checks.
void recordLoopIterations(mlir::ModuleOp module,
                          std::vector<KernelInfo> &kernels);

/// Fails with an error naming the kernel when its private (per-thread) stack
/// buffers add up to more than the target's maxPrivateMemoryBytes. Call on
/// the tiled GPU kernels (after runKernelTilingPipeline).
mlir::LogicalResult rejectLargePrivateMemory(mlir::ModuleOp module,
                                             const TargetDescription &target);

/// The passes that lower tiled CPU kernels (after buildKernelTilingPipeline)
/// to LLVM dialect functions with the kernel C entry points. Which
/// instructions exist (roundeven, FMA, f64 to f16) comes from the LLVM
/// target machine of `target`, which this creates; fails (with `error`)
/// when LLVM has no such target.
mlir::LogicalResult buildCPULoweringPipeline(mlir::OpPassManager &pm,
                                             const TargetDescription &target,
                                             std::string &error);
/// Same, with the target machine given.
void buildCPULoweringPipeline(mlir::OpPassManager &pm,
                              const TargetDescription &target,
                              const llvm::TargetMachine &tm);

/// Compiles the kernel functions of `module` (tensor level, as produced by
/// dlc-outline-dispatches) to native code: an ELF shared object, or with
/// `relocatable` a relocatable object for static linking.
mlir::LogicalResult compileCPUKernels(mlir::ModuleOp module,
                                      const TargetDescription &target,
                                      bool relocatable, KernelBinary &out);

/// A step of a target's code generation that checks the kernels or sets
/// what the target's conversion reads (not a transformation a pass of its
/// own would be reused for), as a pass of its pipeline named `argument`.
std::unique_ptr<mlir::Pass>
createTargetStep(llvm::StringRef argument, llvm::StringRef description,
                 std::function<mlir::LogicalResult(mlir::ModuleOp)> step);

/// GPU targets: rejectGridSharedStackCopies and rejectLargePrivateMemory as
/// steps of a pipeline, after buildKernelTilingPipeline.
void buildGPUKernelChecks(mlir::OpPassManager &pm,
                          const TargetDescription &target);

/// GPU targets, after outlining: the threads' outputs in registers
/// (dlc-gpu-register-tile), linalg ops as loops, and the math functions the
/// target lacks (`math`) expanded.
void buildGPULoopsPipeline(mlir::OpPassManager &pm,
                           const LegalizeMathOptions &math);

/// Vulkan: the tiled kernels to one gpu.module per kernel whose linalg ops
/// are loops (recordLoopIterations reads them there).
void buildVulkanLoopsPipeline(mlir::OpPassManager &pm,
                              const TargetDescription &target);

/// Vulkan: the gpu.modules of buildVulkanLoopsPipeline to SPIR-V modules
/// in the target's environment (element types checked first).
void buildVulkanSPIRVPipeline(mlir::OpPassManager &pm,
                              const TargetDescription &target);

/// CUDA: the tiled kernels to one gpu.binary holding their PTX.
void buildCUDALoweringPipeline(mlir::OpPassManager &pm,
                               const TargetDescription &target);

/// Compiles the kernel functions of `module` to one SPIR-V module each.
mlir::LogicalResult compileVulkanKernels(mlir::ModuleOp module,
                                         const TargetDescription &target,
                                         KernelBinary &out);

/// What compileCUDAKernels does with ptxas, when it is installed.
enum class CubinMode {
  /// Assemble the PTX for the target's sm at -O3 and keep the cubin: the
  /// driver loads it without compiling.
  Assemble,
  /// Only check that ptxas accepts the PTX (-O0, its output discarded):
  /// the artifact carries PTX alone, which the driver compiles at load.
  CheckOnly,
};

/// Compiles the kernel functions of `module` to one PTX module, checked (and
/// by default assembled into a cubin for the target's sm) by ptxas when it
/// is installed.
mlir::LogicalResult compileCUDAKernels(mlir::ModuleOp module,
                                       const TargetDescription &target,
                                       CubinMode cubin, KernelBinary &out);

} // namespace dlc

#endif // DLC_TARGET_KERNELBINARY_H
