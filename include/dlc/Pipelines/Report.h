//===- Report.h - dlc-compile --report: one HTML page -----------*- C++ -*-===//
//
// What a compile did, for people: the ONNX nodes coloured by the kernel each
// was fused into, every kernel with its workgroups, nodes, operand shapes,
// own code size and what its products compute in (integer, float, float on
// 4/8-bit weights: the quantization decisions), and its measured time,
// given dlc-run's --profile trace; and the arena as a timeline of
// buffer lifetimes and offsets. One self-contained file: no scripts or
// styles from the network.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_REPORT_H
#define DLC_PIPELINES_REPORT_H

#include "dlc/Frontend/ONNX/Importer.h"
#include "dlc/Target/Artifact.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace dlc {

struct ReportKernel {
  std::string name;
  uint64_t workgroups = 0;
  unsigned bindings = 0;
  /// Operands and results: "1x3x8x8xf32, 4x3x3x3xf32 -> 1x4x8x8xf32".
  std::string shapes;
  /// What its products compute in: "float", "integer", "float on 8/4-bit
  /// weights", "float on int8 activations", "no products".
  std::string arithmetic;
  /// Its own code (KernelInfo::ownCodeBytes).
  uint64_t codeBytes = 0;
  /// "Conv#3": op type and the node's position in the graph.
  std::vector<std::string> onnxNodes;
};

struct CompileReport {
  std::string model;
  std::string target;
  /// The model's main graph as its file has it (empty: not drawn).
  std::vector<ONNXGraphNode> graph;
  std::vector<ReportKernel> kernels;
  ArtifactStats stats;
  double seconds = 0;
};

/// Writes `report` as HTML to `path`. With `profilePath` (dlc-run
/// --profile's trace of a run of this artifact), each kernel's measured
/// time too; a trace that names a kernel the report lacks is refused.
mlir::LogicalResult writeReportHTML(mlir::Location loc, llvm::StringRef path,
                                    const CompileReport &report,
                                    llvm::StringRef profilePath);

} // namespace dlc

#endif // DLC_PIPELINES_REPORT_H
