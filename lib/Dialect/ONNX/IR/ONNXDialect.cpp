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

Region *NodeOp::getGraph(StringRef attrName) {
  std::optional<ArrayAttr> names = getGraphAttrs();
  if (!names)
    return nullptr;
  for (auto [i, name] : llvm::enumerate(names->getAsValueRange<StringAttr>()))
    if (name == attrName && i < getGraphs().size())
      return &getGraphs()[i];
  return nullptr;
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError("has an empty op_type");
  size_t named = getGraphAttrs() ? getGraphAttrs()->size() : 0;
  if (named != getGraphs().size())
    return emitOpError("has ")
           << getGraphs().size() << " subgraph regions but names " << named
           << " in graph_attrs";
  return success();
}

#define GET_OP_CLASSES
#include "dlc/Dialect/ONNX/IR/ONNXOps.cpp.inc"
