//===- Artifact.h - host plan and .dlcx writer ------------------*- C++ -*-===//
//
// The host program (the function of `dlc.launch` ops left after kernel
// outlining) becomes the launch plan of the artifact: every tensor gets a
// place (an arena offset planned from liveness, or the constant section),
// every launch gets its kernel and bindings.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TARGET_ARTIFACT_H
#define DLC_TARGET_ARTIFACT_H

#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc {

/// One buffer of the arena: its size and the interval of launch indices
/// during which it must hold its value (inclusive).
struct BufferLifetime {
  uint64_t size = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// The result of memory planning.
struct MemoryPlan {
  std::vector<uint64_t> offsets; ///< per buffer, aligned
  uint64_t arenaSize = 0;
  uint64_t lowerBound = 0;  ///< the largest set of simultaneously live bytes
  uint64_t noReuseSize = 0; ///< every buffer in its own place
};

/// Assigns arena offsets so that buffers whose lifetimes overlap do not
/// overlap in memory: greedy best fit, largest buffer first.
MemoryPlan planMemory(const std::vector<BufferLifetime> &buffers,
                      uint64_t alignment);

/// Numbers reported by `dlc-compile --stats`.
struct ArtifactStats {
  int64_t onnxNodes = 0;
  unsigned kernels = 0;
  unsigned launches = 0;
  MemoryPlan plan;
  uint64_t constantBytes = 0;
  uint64_t codeBytes = 0;
  uint64_t cubinBytes = 0; ///< CUDA: the cubin next to the PTX, if any
  uint64_t fileBytes = 0;
  uint64_t scratchBytes = 0; ///< CPU: per thread
  /// The arena's buffers (plan.offsets holds where each went): their
  /// sizes and the launches they live across (a graph output to the end).
  std::vector<BufferLifetime> buffers;
  /// The kernel each launch runs, in order.
  std::vector<std::string> launchKernels;
  /// Model inputs whose bytes a later buffer takes over
  /// (DLCX_TENSOR_INPUT_REUSED): set again before each run.
  std::vector<std::string> reusedInputs;
};

/// Writes the artifact for `hostModule` (whose `main` function launches the
/// kernels compiled into `binary`) to `os`.
mlir::LogicalResult writeArtifact(mlir::ModuleOp hostModule,
                                  const TargetDescription &target,
                                  const KernelBinary &binary,
                                  llvm::raw_ostream &os,
                                  ArtifactStats *stats = nullptr);

} // namespace dlc

#endif // DLC_TARGET_ARTIFACT_H
