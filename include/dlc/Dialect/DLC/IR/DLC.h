//===- DLC.h - dlc host and dispatch dialect --------------------*- C++ -*-===//

#ifndef DLC_DIALECT_DLC_IR_DLC_H
#define DLC_DIALECT_DLC_IR_DLC_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dlc/Dialect/DLC/IR/DLCDialect.h.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/DLC/IR/DLCOps.h.inc"

namespace dlc {

/// Bytes one element of integer or float type `t` takes in the artifact's
/// arena and constants: booleans and other sub-byte types one byte each.
/// The memory planner lays tensors out with it, and the passes that place
/// tensors relative to each other (dlc-concat-in-place) must agree.
int64_t storedElementBytes(mlir::Type t);

} // namespace dlc

#endif // DLC_DIALECT_DLC_IR_DLC_H
