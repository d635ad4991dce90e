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

int64_t dlc::storedElementBytes(Type t) {
  return std::max<int64_t>((t.getIntOrFloatBitWidth() + 7) / 8, 1);
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

LogicalResult ViewOp::verify() {
  auto source = cast<RankedTensorType>(getSource().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (!source.hasStaticShape() || !result.hasStaticShape())
    return emitOpError("needs static shapes: it places buffers");
  if (source.getElementType() != result.getElementType())
    return emitOpError("result element type ")
           << result.getElementType() << " differs from the operand's "
           << source.getElementType();
  int64_t offset = getOffset();
  if (offset < 0 || offset + result.getNumElements() > source.getNumElements())
    return emitOpError("elements ")
           << offset << " to " << offset + result.getNumElements() - 1
           << " are not all inside the operand's " << source.getNumElements();
  return success();
}

LogicalResult ConcatOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t rank = result.getRank();
  int64_t dim = getDim();
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  if (!result.hasStaticShape() ||
      llvm::any_of(getInputs().getTypes(), [](Type t) {
        return !cast<RankedTensorType>(t).hasStaticShape();
      }))
    return emitOpError("needs static shapes: it places buffers");
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " is out of range for rank " << rank;
  for (int64_t d = 0; d < dim; ++d)
    if (result.getDimSize(d) != 1)
      return emitOpError("dim ")
             << d << " before the concatenated dim " << dim << " has size "
             << result.getDimSize(d)
             << ", so an operand is not one contiguous range of the result";
  int64_t total = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != result.getElementType() ||
        type.getRank() != rank)
      return emitOpError("operand #")
             << i << " has type " << type << ", incompatible with the result "
             << result;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && type.getDimSize(d) != result.getDimSize(d))
        return emitOpError("operand #")
               << i << " has size " << type.getDimSize(d) << " in dim " << d
               << " but the result has " << result.getDimSize(d);
    total += type.getDimSize(dim);
  }
  if (total != result.getDimSize(dim))
    return emitOpError("operands add up to ")
           << total << " in dim " << dim << " but the result has "
           << result.getDimSize(dim);
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
