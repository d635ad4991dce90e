//===- Passes.h - dlc dispatch and host passes ------------------*- C++ -*-===//

#ifndef DLC_DIALECT_DLC_TRANSFORMS_PASSES_H
#define DLC_DIALECT_DLC_TRANSFORMS_PASSES_H

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dlc {

#define GEN_PASS_DECL
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"

} // namespace dlc

#endif // DLC_DIALECT_DLC_TRANSFORMS_PASSES_H
