//===- ModelProto.h - ONNX models as protobuf messages ----------*- C++ -*-===//
//
// For the tools that change a model before importing it (dlc-compile
// --quantize): the parsed protobuf, and the importer entry point that takes
// it. Kept apart from Importer.h, which most of dlc includes, so that the
// ONNX library's `onnx` namespace does not meet the dialect's dlc::onnx.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNX_MODELPROTO_H
#define DLC_FRONTEND_ONNX_MODELPROTO_H

#include "dlc/Frontend/ONNX/Importer.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace dlc {

/// Parses a model held in memory into `model` (`isText`: the ONNX textual
/// syntax). Emits a diagnostic at `bufferName` on failure.
mlir::LogicalResult parseONNXModel(mlir::MLIRContext &context,
                                   llvm::StringRef buffer,
                                   llvm::StringRef bufferName, bool isText,
                                   ::onnx::ModelProto &model);

/// Reads an ONNX model file (binary, or textual as importONNXFile decides)
/// into `model`.
mlir::LogicalResult readONNXFile(mlir::MLIRContext &context,
                                 llvm::StringRef path,
                                 ::onnx::ModelProto &model);

/// The main graph's nodes of a parsed model (describeONNXFile).
std::vector<ONNXGraphNode> describeONNXModel(const ::onnx::ModelProto &model);

/// Imports a parsed model. The importer rewrites `model` as it goes (bound
/// inputs, pinned shapes, inferred types): pass a copy to keep the original.
/// `modelName` is the file it came from: locations name it, and external
/// data is found next to it unless the options say where.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(mlir::MLIRContext &context, ::onnx::ModelProto &model,
                llvm::StringRef modelName, const ONNXImportOptions &options);

} // namespace dlc

#endif // DLC_FRONTEND_ONNX_MODELPROTO_H
