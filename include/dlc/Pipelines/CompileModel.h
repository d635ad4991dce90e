//===- CompileModel.h - compile a parsed ONNX model -------------*- C++ -*-===//
//
// compileONNXFile for a model already parsed (and perhaps changed, as
// --quantize does). Apart from Pipelines.h for the reason ModelProto.h is.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_COMPILEMODEL_H
#define DLC_PIPELINES_COMPILEMODEL_H

#include "dlc/Frontend/ONNX/ModelProto.h"
#include "dlc/Pipelines/Pipelines.h"

namespace dlc {

/// compileONNXFile for a parsed model (which the importer rewrites; see
/// importONNXModel).
mlir::LogicalResult compileONNXModel(mlir::MLIRContext &context,
                                     ::onnx::ModelProto &model,
                                     llvm::StringRef modelName,
                                     const CompileOptions &options,
                                     llvm::raw_ostream &output);

} // namespace dlc

#endif // DLC_PIPELINES_COMPILEMODEL_H
