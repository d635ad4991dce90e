//===- Importer.h - ONNX protobuf to the onnx dialect -----------*- C++ -*-===//
//
// The importer is syntactic: it turns every ONNX node into an `onnx.node` op
// and every initializer into an `arith.constant`, and gives values the types
// the model (and ONNX shape inference) states. Meaning is added later by the
// conversion handlers.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_IMPORTER_H
#define DLC_FRONTEND_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace dlc {

struct ONNXImportOptions {
  /// Shapes that pin the dims of graph inputs, by input name. Every entry
  /// gives the full shape; it must agree with the static dims of the model.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Optional graph inputs given as empty (--input-shape NAME=none); any
  /// other optional input holds a value, pinned as a tensor or sequence
  /// input is.
  llvm::StringSet<> emptyOptionals;
  /// Directory that external-data locations are relative to. Defaults to the
  /// directory of the model file.
  std::string externalDataDirectory;
  /// Run ONNX shape inference to type intermediate values.
  bool inferShapes = true;
  /// Graph inputs bound to fixed values at compile time, by input name: the
  /// path of an ONNX TensorProto (.pb) file holding the value. The input
  /// becomes an initializer, so shape parameters that a model takes as
  /// inputs (Reshape's shape, Slice's starts, ...) become constants.
  llvm::StringMap<std::string> boundInputs;
};

/// Parses `spec`, a comma-separated list of `name=d0,d1,...` entries joined
/// by ';' or given as separate strings, into `options.inputShapes`. Returns
/// an error message, or an empty string on success.
std::string parseInputShapeSpec(llvm::StringRef spec,
                                ONNXImportOptions &options);

/// Reads an ONNX model file (binary protobuf, or the ONNX textual syntax when
/// the file starts with '<' or ends in .onnxtxt) and imports it. Emits
/// diagnostics and returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXFile(mlir::MLIRContext &context, llvm::StringRef path,
               const ONNXImportOptions &options);

/// Imports an ONNX model held in memory. `bufferName` is used in locations.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXBuffer(mlir::MLIRContext &context, llvm::StringRef buffer,
                 llvm::StringRef bufferName, bool isText,
                 const ONNXImportOptions &options);

/// One node of a model's main graph, for pictures of it (--report).
struct ONNXGraphNode {
  /// As the importer names it in locations: the node's name, or
  /// "<op type>#<index>" when it has none.
  std::string name;
  std::string opType;
  /// The tensors it reads and writes (empty names: omitted optional ones).
  std::vector<std::string> inputs, outputs;
};

/// The main graph's nodes of the model in `path` (as importONNXFile reads
/// it), in the file's order. Emits a diagnostic on failure.
mlir::LogicalResult describeONNXFile(mlir::MLIRContext &context,
                                     llvm::StringRef path,
                                     std::vector<ONNXGraphNode> &nodes);

/// The same for a model held in memory.
mlir::LogicalResult describeONNXBuffer(mlir::MLIRContext &context,
                                       llvm::StringRef buffer,
                                       llvm::StringRef bufferName, bool isText,
                                       std::vector<ONNXGraphNode> &nodes);

/// The newest ai.onnx opset that dlc's conversion handlers know about.
constexpr int64_t kMaxKnownOpset = 24;

} // namespace dlc

#endif // DLC_FRONTEND_ONNX_IMPORTER_H
