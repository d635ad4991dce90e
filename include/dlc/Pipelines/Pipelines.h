//===- Pipelines.h - dlc's compilation pipelines ----------------*- C++ -*-===//
//
// The pipelines are C++ builder functions; dlc-compile strings them together
// and dlc-opt exposes each as a named pipeline (dlc-legalize, ...).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_PIPELINES_H
#define DLC_PIPELINES_PIPELINES_H

#include "dlc/Frontend/ONNX/Importer.h"
#include "dlc/Target/TargetDescription.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace dlc {

/// Stages of dlc-compile, in order.
enum class Stage { Import, Legalize, Optimize, Dispatch, Kernels, Codegen };

/// What dlc-compile writes.
enum class EmitKind {
  MLIR,
  Dispatches,
  PTX,
  SPIRV,
  Object,
  Artifact,
  /// The model after --quantize, as a QDQ ONNX model (dlc-compile only).
  QDQONNX
};

/// Whether convolutions over sparse constant weights read only their
/// nonzeros (dlc-sparse-contractions): where the target's cost model
/// predicts a gain, never, or wherever a zero can be skipped.
enum class SparsityMode { Auto, Off, Force };

struct CompileOptions {
  TargetDescription target;
  SparsityMode sparsity = SparsityMode::Auto;
  EmitKind emit = EmitKind::Artifact;
  /// With EmitKind::MLIR: the last stage to run.
  Stage stopAfter = Stage::Codegen;
  bool printStats = false;
  ONNXImportOptions importOptions;
  /// With EmitKind::SPIRV or PTX: write one file per kernel into this
  /// directory, named after the kernel (`<name>.spv`, `<name>.ptx`), each a
  /// complete module, instead of the output stream.
  std::string kernelDirectory;
  /// With EmitKind::Object: also write the C source of the kernel table
  /// that the CPU driver's static mode takes (dlc_cpu_driver_create_static)
  /// to this path, so that no table is written by hand.
  std::string kernelTablePath;
  /// With EmitKind::Artifact: also write the compile report (HTML) here,
  /// with the kernel times of `reportProfilePath` (dlc-run --profile) when
  /// given.
  std::string reportPath;
  std::string reportProfilePath;
  /// CUDA artifacts: carry a cubin for the target's sm (ptxas -O3) next to
  /// the PTX; false keeps PTX only, still checked by ptxas.
  bool cudaCubin = true;
  /// CPU targets: prepended to every kernel's symbol and to the kernel
  /// table's names (a C identifier), so that the objects of several models
  /// link into one program.
  std::string symbolPrefix;
};

/// Why `options` cannot be compiled as asked before anything runs (an
/// --emit of one target's code for another target), or "".
std::string checkCompileOptions(const CompileOptions &options);

/// ONNX nodes to linalg/tensor/arith/math, then cleanup. QDQ convolutions
/// fold into integer ones first when the `target` (or, without one, any
/// target) computes them with 4-byte dot products: elsewhere the integer
/// kernels are slower than the float ones they would replace.
void buildLegalizePipeline(mlir::OpPassManager &pm,
                           const TargetDescription *target = nullptr);

/// Graph-level optimization of the legalized program.
void buildOptimizePipeline(mlir::OpPassManager &pm);

/// Dispatch formation and kernel outlining; with a `target`, preceded by
/// the layout choices made for it (sparse and channels-last convolutions
/// on CPUs).
void buildDispatchPipeline(mlir::OpPassManager &pm,
                           const TargetDescription *target = nullptr,
                           SparsityMode sparsity = SparsityMode::Off);

/// Registers the pipelines with the global registry for dlc-opt: the
/// front half (dlc-legalize, dlc-optimize, dlc-dispatch) and kernel code
/// generation on a module of kernels (`--stage=kernels` output):
/// dlc-codegen-tiling{target=...} for every target, dlc-codegen-cpu
/// {target=...} down to the LLVM dialect as dlc-compile does it.
void registerPipelines();

/// Runs everything from the ONNX file to the requested output.
mlir::LogicalResult compileONNXFile(mlir::MLIRContext &context,
                                    llvm::StringRef inputPath,
                                    const CompileOptions &options,
                                    llvm::raw_ostream &output);

/// Same, for a model held in memory (`isText`: the ONNX textual syntax).
mlir::LogicalResult compileONNXBuffer(mlir::MLIRContext &context,
                                      llvm::StringRef buffer,
                                      llvm::StringRef bufferName, bool isText,
                                      const CompileOptions &options,
                                      llvm::raw_ostream &output);

} // namespace dlc

#endif // DLC_PIPELINES_PIPELINES_H
