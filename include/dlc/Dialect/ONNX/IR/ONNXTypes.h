//===- ONNXTypes.h - ONNX data types as MLIR types --------------*- C++ -*-===//

#ifndef DLC_DIALECT_ONNX_IR_ONNXTYPES_H
#define DLC_DIALECT_ONNX_IR_ONNXTYPES_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace dlc::onnx {

/// The MLIR element type of an ONNX TensorProto data type number: f32, f16,
/// bf16, f64, i1 (BOOL), signless i8/i16/i32/i64 for the signed integers,
/// ui8/ui16/ui32/ui64 for the unsigned ones, i4/ui4. Null for types dlc does
/// not support (strings, complex, 8-bit floats).
mlir::Type getElementType(mlir::MLIRContext *context, int64_t dataType);

/// The ONNX data type number of an element type (inverse of the above; a
/// signless integer is the signed ONNX type). 0 when there is none.
int64_t getDataType(mlir::Type elementType);

/// The ONNX name of a data type number ("FLOAT", "UINT8", ...).
std::string getDataTypeName(int64_t dataType);

/// The most elements a tensor may have (2^48: 1 PiB of float32, far beyond
/// any model for an edge device). Every static shape the importer accepts is
/// within it, so that element counts, byte sizes and index arithmetic on
/// them cannot overflow int64_t; a larger one is refused by name.
constexpr int64_t kMaxTensorElements = int64_t(1) << 48;

/// The product of `shape`'s known dims (negative ones, dynamic or unknown,
/// are left out), or -1 if the product of its nonzero known dims exceeds
/// kMaxTensorElements.
int64_t boundedElementCount(llvm::ArrayRef<int64_t> shape);

} // namespace dlc::onnx

#endif // DLC_DIALECT_ONNX_IR_ONNXTYPES_H
