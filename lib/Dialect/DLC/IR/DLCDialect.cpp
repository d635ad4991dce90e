//===- DLCDialect.cpp - dlc host and dispatch dialect ---------------------===//

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

//===--- Attributes ------------------------------------------------------===//

namespace {

bool isIntAtLeast(Attribute a, int64_t min = 0) {
  auto i = dyn_cast<IntegerAttr>(a);
  return i && isa<IntegerType, IndexType>(i.getType()) && i.getInt() >= min;
}

LogicalResult verifyIOAttribute(Operation *op, NamedAttribute attr,
                                StringRef where) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto fail = [&](const Twine &what) {
    return op->emitError() << "'" << name << "' on " << where << " must be "
                           << what;
  };
  if (name == kNameAttr)
    return isa<StringAttr>(value) ? success() : fail("a string");
  if (name == kElementTypeAttr) {
    auto type = dyn_cast<TypeAttr>(value);
    if (!type || !type.getValue().isIntOrFloat())
      return fail("an integer or float type");
    return success();
  }
  if (name == kPackedShapeAttr) {
    auto shape = dyn_cast<DenseI64ArrayAttr>(value);
    if (!shape ||
        llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
      return fail("an array of non-negative i64 dims");
    return success();
  }
  return op->emitError() << "unknown attribute '" << name << "' on " << where
                         << " (the dlc dialect declares dlc.name, "
                            "dlc.element_type and dlc.packed_shape there)";
}

} // namespace

LogicalResult DLCDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto fail = [&](const Twine &what) {
    return op->emitError() << "'" << name << "' must be " << what;
  };
  auto onFunction = [&]() -> LogicalResult {
    if (isa<FunctionOpInterface>(op))
      return success();
    return fail("on a function");
  };
  if (name == kKernelAttr) {
    if (!isa<UnitAttr>(value))
      return fail("a unit attribute");
    return onFunction();
  }
  if (name == kGridAttr || name == kWorkgroupSizeAttr) {
    auto dims = dyn_cast<DenseI64ArrayAttr>(value);
    if (!dims || dims.size() != 3 ||
        llvm::any_of(dims.asArrayRef(), [](int64_t d) { return d < 1; }))
      return fail("three positive integers (x, y, z)");
    return onFunction();
  }
  if (name == kScratchSizeAttr || name == kSubgroupLanesAttr) {
    if (!isIntAtLeast(value, name == kScratchSizeAttr ? 0 : 1))
      return fail(name == kScratchSizeAttr ? "a non-negative integer"
                                           : "a positive integer");
    return onFunction();
  }
  if (name == kGraphNameAttr) {
    if (!isa<StringAttr>(value))
      return fail("a string");
    return onFunction();
  }
  if (name == kOnnxNodeCountAttr || name == kOnnxOpsetsAttr ||
      name == kOnnxProducerAttr) {
    if (!isa<ModuleOp>(op))
      return fail("on a module");
    if (name == kOnnxNodeCountAttr && !isIntAtLeast(value))
      return fail("a non-negative integer");
    if (name == kOnnxProducerAttr && !isa<StringAttr>(value))
      return fail("a string");
    if (name == kOnnxOpsetsAttr) {
      auto opsets = dyn_cast<DictionaryAttr>(value);
      if (!opsets || llvm::any_of(opsets, [](NamedAttribute a) {
            return !isa<IntegerAttr>(a.getValue());
          }))
        return fail("a dictionary of domains to integer versions");
    }
    return success();
  }
  if (name == kFusedAttr || name == kMaterializeAttr)
    return isa<UnitAttr>(value) ? success() : fail("a unit attribute");
  if (name == kLoopIterationAttr)
    return isIntAtLeast(value) ? success() : fail("a non-negative integer");
  if (name == kBranchAttr || name == kRunIfAttr) {
    auto pair = dyn_cast<DenseI64ArrayAttr>(value);
    if (!pair || pair.size() != 2 || pair[0] < 0 || pair[1] < 0 || pair[1] > 1)
      return fail(name == kBranchAttr
                      ? "two integers (branch id >= 0, arm 0 or 1)"
                      : "two integers (operand index >= 0, value 0 or 1)");
    if (name == kRunIfAttr && !isa<FunctionOpInterface, DispatchOp>(op))
      return fail("on a dispatch or a function");
    return success();
  }
  if (name == kSelectsAttr)
    return isIntAtLeast(value) ? success() : fail("a non-negative integer");
  if (name == kSparseRowsAttr) {
    if (!isIntAtLeast(value, 1))
      return fail("a positive integer");
    return isa<linalg::GenericOp>(op) ? success() : fail("on a linalg.generic");
  }
  if (name == kSparsePairsAttr) {
    auto pairs = dyn_cast<DenseI64ArrayAttr>(value);
    if (!pairs || pairs.size() != 2 ||
        llvm::any_of(pairs.asArrayRef(), [](int64_t v) { return v < 0; }))
      return fail("two non-negative integers (kept, all)");
    return isa<linalg::GenericOp>(op) ? success() : fail("on a linalg.generic");
  }
  return op->emitError() << "unknown attribute '" << name
                         << "' of the dlc dialect";
}

LogicalResult DLCDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned /*region*/,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  return verifyIOAttribute(op, attr, "argument " + std::to_string(argIndex));
}

LogicalResult DLCDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned /*region*/,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  return verifyIOAttribute(op, attr, "result " + std::to_string(resultIndex));
}

template <typename AttrT>
static AttrT getIOAttr(FunctionOpInterface f, IOSide side, unsigned i,
                       StringRef name) {
  return side == IOSide::Argument ? f.getArgAttrOfType<AttrT>(i, name)
                                  : f.getResultAttrOfType<AttrT>(i, name);
}

static void setIOAttr(FunctionOpInterface f, IOSide side, unsigned i,
                      StringRef name, Attribute value) {
  if (side == IOSide::Argument)
    f.setArgAttr(i, name, value);
  else
    f.setResultAttr(i, name, value);
}

StringAttr dlc::getIOName(FunctionOpInterface f, IOSide side, unsigned i) {
  return getIOAttr<StringAttr>(f, side, i, kNameAttr);
}

Type dlc::getIOElementType(FunctionOpInterface f, IOSide side, unsigned i) {
  auto attr = getIOAttr<TypeAttr>(f, side, i, kElementTypeAttr);
  return attr ? attr.getValue() : Type();
}

DenseI64ArrayAttr dlc::getIOPackedShape(FunctionOpInterface f, IOSide side,
                                        unsigned i) {
  return getIOAttr<DenseI64ArrayAttr>(f, side, i, kPackedShapeAttr);
}

void dlc::setIOName(FunctionOpInterface f, IOSide side, unsigned i,
                    StringRef name) {
  setIOAttr(f, side, i, kNameAttr, StringAttr::get(f->getContext(), name));
}

void dlc::setIOElementType(FunctionOpInterface f, IOSide side, unsigned i,
                           Type type) {
  setIOAttr(f, side, i, kElementTypeAttr, TypeAttr::get(type));
}

void dlc::setIOPackedShape(FunctionOpInterface f, IOSide side, unsigned i,
                           ArrayRef<int64_t> shape) {
  setIOAttr(f, side, i, kPackedShapeAttr,
            DenseI64ArrayAttr::get(f->getContext(), shape));
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
  if (!kernel->hasAttr(kKernelAttr))
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
