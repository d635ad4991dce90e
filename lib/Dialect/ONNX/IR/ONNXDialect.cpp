//===- ONNXDialect.cpp - the generic ONNX node dialect --------------------===//

#include "dlc/Dialect/ONNX/IR/ONNX.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dlc::onnx;

#include "dlc/Dialect/ONNX/IR/ONNXDialect.cpp.inc"

void ONNXDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dlc/Dialect/ONNX/IR/ONNXOps.cpp.inc"
      >();
}

StringRef NodeOp::getDisplayName() {
  std::optional<StringRef> name = getName();
  if (name && !name->empty())
    return *name;
  // The importer names unnamed nodes "OpType#index" in their location.
  if (auto loc = dyn_cast<NameLoc>(getLoc()))
    return loc.getName().getValue();
  return "<unnamed>";
}

bool NodeOp::hasInput(unsigned i) {
  return i < getInputs().size() && !isa<NoneType>(getInputs()[i].getType());
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError("has an empty op_type");
  return success();
}

#define GET_OP_CLASSES
#include "dlc/Dialect/ONNX/IR/ONNXOps.cpp.inc"
