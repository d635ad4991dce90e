//===- Passes.h - kernel code generation passes -----------------*- C++ -*-===//

#ifndef DLC_CODEGEN_PASSES_H
#define DLC_CODEGEN_PASSES_H

#include "dlc/Dialect/DLC/IR/DLC.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "mlir/Pass/Pass.h"

namespace dlc {

#define GEN_PASS_DECL
#include "dlc/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Codegen/Passes.h.inc"

} // namespace dlc

#endif // DLC_CODEGEN_PASSES_H
