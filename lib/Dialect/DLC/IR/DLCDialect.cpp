//===- DLCDialect.cpp - dlc host and dispatch dialect ---------------------===//

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dlc;

#include "dlc/Dialect/DLC/IR/DLCDialect.cpp.inc"

void DLCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dlc/Dialect/DLC/IR/DLCOps.cpp.inc"
      >();
}

YieldOp DispatchOp::getYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

LogicalResult DispatchOp::verify() {
  Block &body = getBodyBlock();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments but the dispatch has "
           << getInputs().size() << " operands";
  for (auto [i, arg, input] :
       llvm::enumerate(body.getArguments(), getInputs())) {
    if (arg.getType() != input.getType())
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << " but operand #" << i
             << " has type " << input.getType();
  }
  YieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().getTypes() << " but its results are "
           << getResultTypes();
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("refers to '")
           << getKernel() << "', which is not a function";
  if (!kernel->hasAttr("dlc.kernel"))
    return emitOpError("refers to '")
           << getKernel() << "', which is not marked dlc.kernel";
  FunctionType type = kernel.getFunctionType();
  if (TypeRange(type.getInputs()) != TypeRange(getInputs().getTypes()) ||
      TypeRange(type.getResults()) != TypeRange(getResultTypes()))
    return emitOpError("operand or result types do not match the type ")
           << type << " of kernel '" << getKernel() << "'";
  return success();
}

#define GET_OP_CLASSES
#include "dlc/Dialect/DLC/IR/DLCOps.cpp.inc"
