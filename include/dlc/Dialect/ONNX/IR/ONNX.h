//===- ONNX.h - the generic ONNX node dialect -------------------*- C++ -*-===//

#ifndef DLC_DIALECT_ONNX_IR_ONNX_H
#define DLC_DIALECT_ONNX_IR_ONNX_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dlc/Dialect/ONNX/IR/ONNXDialect.h.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/ONNX/IR/ONNXOps.h.inc"

#endif // DLC_DIALECT_ONNX_IR_ONNX_H
