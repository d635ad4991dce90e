//===- ConvertONNXToLinalg.cpp - the dlc-convert-onnx-to-linalg pass ------===//
//
// The driver: walks each function in program order, hands every onnx.node to
// its handler with converted inputs, and rewires results. It does not use
// the dialect conversion framework because handlers need converted inputs
// with exact static types (to fold shape subgraphs and size their outputs)
// while the remaining onnx.node ops keep their ONNX-typed operands.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/ONNXToLinalg/ONNXToLinalg.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"
#include "dlc/Frontend/ONNX/Importer.h"

#include "Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

namespace dlc {
#define GEN_PASS_DEF_CONVERTONNXTOLINALG
#include "dlc/Conversion/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

//===----------------------------------------------------------------------===//
// HandlerRegistry
//===----------------------------------------------------------------------===//

void HandlerRegistry::add(StringRef opType,
                          std::initializer_list<int64_t> versions,
                          NodeHandlerFn handler, StringRef domain) {
  Entry &e = entries[(domain + "::" + opType).str()];
  e.sinceVersions.assign(versions.begin(), versions.end());
  llvm::sort(e.sinceVersions);
  e.handler = handler;
}

const HandlerRegistry::Entry *HandlerRegistry::lookup(StringRef domain,
                                                      StringRef opType) const {
  auto it = entries.find((domain + "::" + opType).str());
  return it == entries.end() ? nullptr : &it->second;
}

SmallVector<std::pair<std::string, std::string>>
HandlerRegistry::listOps() const {
  SmallVector<std::pair<std::string, std::string>> ops;
  for (const auto &e : entries) {
    auto [domain, op] = e.getKey().split("::");
    ops.emplace_back(domain.str(), op.str());
  }
  llvm::sort(ops);
  return ops;
}

const HandlerRegistry &dlc::getHandlerRegistry() {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    populateElementwiseHandlers(r);
    populateConvolutionHandlers(r);
    populateNormalizationHandlers(r);
    populateMatrixHandlers(r);
    populateReductionHandlers(r);
    populateShapeHandlers(r);
    populateResizeHandlers(r);
    populateSignalHandlers(r);
    populateTextHandlers(r);
    populateQuantizationHandlers(r);
    populateRecurrentHandlers(r);
    populateControlFlowHandlers(r);
    populateSequenceHandlers(r);
    populateAttentionHandlers(r);
    populateMicrosoftHandlers(r);
    populateWeightOnlyHandlers(r);
    return r;
  }();
  return registry;
}

//===----------------------------------------------------------------------===//
// NodeRewriter
//===----------------------------------------------------------------------===//

Type NodeRewriter::declaredResultElementType(unsigned i) {
  if (auto t = dyn_cast<TensorType>(op.getOutputs()[i].getType()))
    return t.getElementType();
  return {};
}

/// The op type as diagnostics name it: qualified by its domain outside
/// the default one ("com.microsoft.QLinearAdd").
static std::string qualifiedOpType(onnx::NodeOp op) {
  StringRef domain = op.getDomain();
  if (domain.empty() || domain == "ai.onnx")
    return op.getOpType().str();
  return (domain + "." + op.getOpType()).str();
}

NodeFailure NodeRewriter::fail(const Twine &message) {
  emitError(op.getLoc()) << "node '" << op.getDisplayName() << "' ("
                         << qualifiedOpType(op) << ", opset " << op.getVersion()
                         << "): " << message;
  return {};
}

NodeFailure NodeRewriter::unsupported(const Twine &what) {
  return fail("not supported: " + what);
}

LogicalResult NodeRewriter::requireInput(unsigned i, StringRef what) {
  if (hasInput(i))
    return success();
  return fail("missing required input " + Twine(i) + " (" + what + ")");
}

ElementsAttr NodeRewriter::constantInput(unsigned i) {
  ElementsAttr attr;
  if (hasInput(i) && matchPattern(inputs[i], m_Constant(&attr)))
    return attr;
  return {};
}

FailureOr<SmallVector<int64_t>> NodeRewriter::constantInts(unsigned i,
                                                           StringRef what) {
  if (failed(requireInput(i, what)))
    return failure();
  DenseElementsAttr attr = getDenseConstant(inputs[i]);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return fail("input " + Twine(i) + " (" + what +
                ") must be a compile-time integer constant; it is computed "
                "at run time");
  if (attr.getNumElements() > kMaxConstantTable)
    return fail("input " + Twine(i) + " (" + what + ") has " +
                Twine(attr.getNumElements()) + " elements (at most 2^24)");
  return toInt64Vector(attr);
}

FailureOr<SmallVector<double>> NodeRewriter::constantFloats(unsigned i,
                                                            StringRef what) {
  if (failed(requireInput(i, what)))
    return failure();
  DenseElementsAttr attr = getDenseConstant(inputs[i]);
  if (!attr)
    return fail("input " + Twine(i) + " (" + what +
                ") must be a compile-time constant");
  if (attr.getNumElements() > kMaxConstantTable)
    return fail("input " + Twine(i) + " (" + what + ") has " +
                Twine(attr.getNumElements()) + " elements (at most 2^24)");
  return toDoubleVector(attr);
}

int64_t NodeRewriter::getInt(StringRef name, int64_t defaultValue) {
  return getOptionalInt(name).value_or(defaultValue);
}

std::optional<int64_t> NodeRewriter::getOptionalInt(StringRef name) {
  if (auto a = dyn_cast_or_null<IntegerAttr>(op.getOnnxAttr(name)))
    return a.getInt();
  return std::nullopt;
}

float NodeRewriter::getFloat(StringRef name, float defaultValue) {
  Attribute a = op.getOnnxAttr(name);
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return static_cast<float>(i.getInt());
  return defaultValue;
}

std::string NodeRewriter::getString(StringRef name, StringRef defaultValue) {
  if (auto s = dyn_cast_or_null<StringAttr>(op.getOnnxAttr(name)))
    return s.str();
  return defaultValue.str();
}

SmallVector<int64_t> NodeRewriter::getInts(StringRef name,
                                           ArrayRef<int64_t> defaultValue) {
  auto a = dyn_cast_or_null<ArrayAttr>(op.getOnnxAttr(name));
  if (!a)
    return SmallVector<int64_t>(defaultValue);
  SmallVector<int64_t> out;
  for (Attribute e : a)
    out.push_back(cast<IntegerAttr>(e).getInt());
  return out;
}

SmallVector<float> NodeRewriter::getFloats(StringRef name) {
  SmallVector<float> out;
  if (auto a = dyn_cast_or_null<ArrayAttr>(op.getOnnxAttr(name)))
    for (Attribute e : a)
      out.push_back(cast<FloatAttr>(e).getValueAsDouble());
  return out;
}

ElementsAttr NodeRewriter::getTensor(StringRef name) {
  return dyn_cast_or_null<ElementsAttr>(op.getOnnxAttr(name));
}

FailureOr<int64_t> NodeRewriter::normalizeAxis(int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return fail(what + " " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

LogicalResult NodeRewriter::replace(ValueRange values,
                                    ArrayRef<Type> onnxTypes) {
  unsigned expected = op.getNumResults();
  if (values.size() < expected) {
    // Trailing optional outputs the model does not use may be left out.
    for (unsigned i = values.size(); i < expected; ++i)
      if (!op.getOutputs()[i].use_empty())
        return fail("output " + Twine(i) +
                    " is used by the model but dlc does not compute it");
  }
  results.assign(values.begin(), values.end());
  resultOnnxTypes.assign(values.size(), Type());
  for (auto [i, v] : llvm::enumerate(values)) {
    Type elem = cast<ShapedType>(v.getType()).getElementType();
    Type onnxType =
        i < onnxTypes.size() && onnxTypes[i] ? onnxTypes[i] : Type();
    if (!onnxType) {
      // Infer unsignedness: from the declared type, else from input 0.
      Type declared = i < expected ? declaredResultElementType(i) : Type();
      if (declared && signlessType(declared) == elem)
        onnxType = declared;
      else if (hasInput(0) && onnxElementType(0) &&
               signlessType(onnxElementType(0)) == elem)
        onnxType = onnxElementType(0);
      else
        onnxType = elem;
    }
    resultOnnxTypes[i] = onnxType;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

/// Checks the handler's result against the type the model declares.
static LogicalResult checkDeclaredType(NodeRewriter &rw, unsigned i,
                                       Value computed, Type computedOnnx) {
  auto declared = dyn_cast<TensorType>(rw.getOp().getOutputs()[i].getType());
  if (!declared)
    return success();
  auto type = cast<RankedTensorType>(computed.getType());
  if (signlessType(declared.getElementType()) != type.getElementType())
    return rw.fail("inconsistent types: the model declares output " + Twine(i) +
                   " with element type " +
                   llvm::formatv("{0}", declared.getElementType()).str() +
                   " but the node computes " +
                   llvm::formatv("{0}", computedOnnx).str());
  if (!declared.hasRank())
    return success();
  bool compatible = declared.getRank() == type.getRank();
  for (int64_t d = 0; compatible && d < type.getRank(); ++d)
    compatible = declared.isDynamicDim(d) ||
                 declared.getDimSize(d) == type.getDimSize(d);
  if (!compatible)
    return rw.fail("inconsistent shapes: the model declares output " +
                   Twine(i) + " as " + llvm::formatv("{0}", declared).str() +
                   " but the node computes " +
                   llvm::formatv("{0}", type).str());
  return success();
}

/// The handler for `op`, or null after reporting why there is none.
static const HandlerRegistry::Entry *
findHandler(onnx::NodeOp op, const HandlerRegistry &registry) {
  auto report = [&](const Twine &why) {
    emitError(op.getLoc()) << "node '" << op.getDisplayName() << "' ("
                           << op.getOpType() << ", opset " << op.getVersion()
                           << "): " << why;
    return nullptr;
  };
  const HandlerRegistry::Entry *entry =
      registry.lookup(op.getDomain(), op.getOpType());
  if (!entry)
    return report(op.getDomain().empty() ? Twine("unsupported operator")
                                         : "unsupported operator in domain '" +
                                               op.getDomain() + "'");
  if (op.getDomain().empty() &&
      static_cast<int64_t>(op.getVersion()) > kMaxKnownOpset)
    return report("the model uses ai.onnx opset " + Twine(op.getVersion()) +
                  ", newer than the newest dlc knows (" +
                  Twine(kMaxKnownOpset) +
                  "); the operator may have changed since");
  if (static_cast<int64_t>(op.getVersion()) < entry->sinceVersions.front())
    return report("opset " + Twine(op.getVersion()) +
                  " of this operator is older than the oldest dlc supports (" +
                  Twine(entry->sinceVersions.front()) + ")");
  return entry;
}

/// Checks that every node of the function's own graph has a handler for its
/// opset before converting anything, so that all unsupported nodes are
/// reported at once. Nodes in subgraphs are checked when control flow puts
/// them into the graph: an If's branch not taken may hold anything.
static LogicalResult checkSupport(func::FuncOp func,
                                  const HandlerRegistry &registry) {
  bool ok = true;
  for (auto op : func.getBody().front().getOps<onnx::NodeOp>())
    ok &= findHandler(op, registry) != nullptr;
  return success(ok);
}

// int4 and uint4 graph inputs and outputs cross the artifact boundary
// packed, two elements per byte with the first in the low nibble, as ONNX
// stores them and the runtime checks; kernels keep one element per byte.
// Such an argument arrives as the packed bytes (`dlc.packed_shape` keeps its
// dims for the artifact) and is unpacked by a kernel; such a result is packed
// by one.

static bool isNibble(Type t) {
  return isa<IntegerType, FloatType>(t) && t.getIntOrFloatBitWidth() == 4;
}

static int64_t packedBytes(int64_t elements) { return (elements + 1) / 2; }

/// The elements of `packed` (bytes) as a tensor<shape x i4>.
static Value unpackNibbles(OpBuilder &b, Location loc, Value packed,
                           ArrayRef<int64_t> shape) {
  int64_t n = numElements(shape);
  Type i4 = b.getIntegerType(4), i8 = b.getI8Type();
  AffineMap id = b.getMultiDimIdentityMap(1);
  Value flat = buildGeneric(
      b, loc, {}, {{createEmpty(b, loc, {n}, i4), id}},
      {utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange) {
        Value i = linalg::IndexOp::create(nb, nl, 0);
        Value one = arith::ConstantIndexOp::create(nb, nl, 1);
        Value byte = tensor::ExtractOp::create(
            nb, nl, packed, ValueRange{arith::ShRUIOp::create(nb, nl, i, one)});
        Value odd = arith::IndexCastOp::create(
            nb, nl, i8, arith::AndIOp::create(nb, nl, i, one));
        Value shift = arith::ShLIOp::create(
            nb, nl, odd, arith::ConstantIntOp::create(nb, nl, i8, 2));
        Value nibble = arith::ShRUIOp::create(nb, nl, byte, shift);
        return SmallVector<Value>{arith::TruncIOp::create(nb, nl, i4, nibble)};
      })[0];
  return reshapeTo(b, loc, flat, shape);
}

/// The elements of `v` (tensor<... x i4>) packed into bytes.
static Value packNibbles(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t n = type.getNumElements();
  Value flat = reshapeTo(b, loc, v, {n});
  Type i8 = b.getI8Type();
  AffineMap id = b.getMultiDimIdentityMap(1);
  return buildGeneric(
      b, loc, {}, {{createEmpty(b, loc, {packedBytes(n)}, i8), id}},
      {utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange) {
        Value j = linalg::IndexOp::create(nb, nl, 0);
        Value one = arith::ConstantIndexOp::create(nb, nl, 1);
        Value last = arith::ConstantIndexOp::create(nb, nl, n - 1);
        Value lo = arith::ShLIOp::create(nb, nl, j, one);
        Value hi = arith::AddIOp::create(nb, nl, lo, one);
        Value hasHi =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, hi, last);
        hi = arith::MinUIOp::create(nb, nl, hi, last);
        auto nibble = [&](Value idx) -> Value {
          Value e = tensor::ExtractOp::create(nb, nl, flat, ValueRange{idx});
          return arith::ExtUIOp::create(nb, nl, i8, e);
        };
        Value high = arith::ShLIOp::create(
            nb, nl, nibble(hi), arith::ConstantIntOp::create(nb, nl, i8, 4));
        high = arith::SelectOp::create(
            nb, nl, hasHi, high, arith::ConstantIntOp::create(nb, nl, i8, 0));
        return SmallVector<Value>{
            arith::OrIOp::create(nb, nl, nibble(lo), high)};
      })[0];
}

/// Whether `node` may read 8- and 4-bit floats, which kernels hold as
/// their bits: nodes that convert them, and nodes that only move values.
static bool readsFloatBits(onnx::NodeOp node) {
  if (!node.getDomain().empty() && node.getDomain() != "ai.onnx")
    return false;
  return llvm::is_contained({"Cast", "CastLike", "QuantizeLinear",
                             "DequantizeLinear", "Identity", "Reshape",
                             "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                             "Shape", "Size"},
                            node.getOpType());
}

/// Whether `v` is a sequence (Sequence.cpp).
static bool isSequence(Value v) { return bool(sequenceConstructOf(v)); }

/// Passes a node's branch of a run-time condition (kBranchAttr) on to what
/// its handler made: the ops before it (from `before`'s successor) and the
/// nodes after it (up to `after`) that carry no branch of their own (an If
/// on a run-time condition gives its branches their own). A selecting node
/// (kSelectsAttr) passes the mark to the op that computes its result.
static void markBranch(onnx::NodeOp node, Operation *before, Operation *after,
                       ArrayRef<Value> results) {
  if (Attribute selects = node->getAttr(kSelectsAttr))
    if (!results.empty())
      if (Operation *def = results.front().getDefiningOp())
        def->setAttr(kSelectsAttr, selects);
  Attribute branch = node->getAttr(kBranchAttr);
  if (!branch)
    return;
  Block *block = node->getBlock();
  auto mark = [&](Operation &op) {
    if (!isa<arith::ConstantOp, tensor::EmptyOp>(op) &&
        !op.hasAttr(kBranchAttr))
      op.setAttr(kBranchAttr, branch);
  };
  for (auto it = before ? std::next(before->getIterator()) : block->begin();
       &*it != node.getOperation(); ++it)
    mark(*it);
  for (auto it = std::next(node->getIterator());
       it != block->end() && &*it != after; ++it)
    mark(*it);
}

LogicalResult dlc::convertONNXFunction(func::FuncOp func) {
  const HandlerRegistry &registry = getHandlerRegistry();
  if (failed(checkSupport(func, registry)))
    return failure();

  OpBuilder builder(func.getContext());
  DenseMap<Value, Value> mapped;
  DenseMap<Value, Type> onnxTypes;

  // Arguments: unsigned integer tensors become signless.
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    Type elem = type.getElementType();
    onnxTypes[arg] = elem;
    if (isNibble(elem)) {
      arg.setType(RankedTensorType::get({packedBytes(type.getNumElements())},
                                        builder.getI8Type()));
      setIOElementType(func, IOSide::Argument, arg.getArgNumber(), elem);
      setIOPackedShape(func, IOSide::Argument, arg.getArgNumber(),
                       type.getShape());
      builder.setInsertionPointToStart(&entry);
      Value unpacked =
          unpackNibbles(builder, arg.getLoc(), arg, type.getShape());
      mapped[arg] = unpacked;
      onnxTypes[unpacked] = elem;
      continue;
    }
    if (elem != signlessType(elem)) {
      arg.setType(type.clone(signlessType(elem)));
      setIOElementType(func, IOSide::Argument, arg.getArgNumber(), elem);
    }
  }
  // A node's result maps to its converted value, or, for control flow, to
  // a value of the ONNX graph that maps on in turn once converted.
  auto lookup = [&](Value v) -> Value {
    for (auto it = mapped.find(v); it != mapped.end(); it = mapped.find(v))
      v = it->second;
    return v;
  };
  auto onnxTypeOf = [&](Value v) -> Type {
    auto it = onnxTypes.find(v);
    if (it != onnxTypes.end())
      return it->second;
    if (auto t = dyn_cast<ShapedType>(v.getType()))
      return t.getElementType();
    return {};
  };

  SmallVector<Operation *> toErase;
  int64_t branchIds = 0;
  // Control-flow handlers insert nodes right after theirs: the next op is
  // taken once the current one is converted.
  for (Operation *opPtr = &entry.front(), *nextOp = nullptr; opPtr;
       opPtr = nextOp) {
    Operation &op = *opPtr;
    nextOp = op.getNextNode();
    if (auto none = dyn_cast<onnx::NoneOp>(op)) {
      toErase.push_back(&op);
      continue;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      // Constants with unsigned element types become signless.
      auto type = dyn_cast<RankedTensorType>(cst.getType());
      if (!type || type.getElementType() == signlessType(type.getElementType()))
        continue;
      builder.setInsertionPoint(cst);
      auto newType = type.clone(signlessType(type.getElementType()));
      Attribute value;
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
        value = dense.bitcast(newType.getElementType());
      else if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue()))
        value = DenseResourceElementsAttr::get(newType, res.getRawHandle());
      else
        return cst.emitError("unsupported constant of unsigned type");
      Value replacement = arith::ConstantOp::create(
          builder, cst.getLoc(), newType, cast<TypedAttr>(value));
      mapped[cst.getResult()] = replacement;
      onnxTypes[replacement] = type.getElementType();
      toErase.push_back(cst);
      continue;
    }
    auto node = dyn_cast<onnx::NodeOp>(op);
    if (!node)
      continue;
    SmallVector<Value> inputs;
    SmallVector<Type> inputTypes;
    for (Value in : node.getInputs()) {
      if (isa_and_nonnull<onnx::NoneOp>(in.getDefiningOp())) {
        inputs.push_back(Value());
        inputTypes.push_back(Type());
        continue;
      }
      Value v = lookup(in);
      inputs.push_back(v);
      inputTypes.push_back(onnxTypeOf(v));
    }
    builder.setInsertionPoint(node);
    NodeRewriter rw(node, builder, inputs, inputTypes);
    rw.setBranchIdCounter(&branchIds);
    Operation *before = node->getPrevNode();
    Operation *after = node->getNextNode();
    // Sequences stay ONNX values (Sequence.cpp): the sequence handlers read
    // the SequenceConstruct node that holds their elements, Identity and
    // OptionalGetElement pass one on, other nodes take tensors only.
    if (llvm::any_of(inputs, [](Value v) { return v && isSequence(v); }) &&
        !takesSequences(node)) {
      if (node.getDomain().empty() && node.getNumResults() == 1 &&
          inputs.size() == 1 &&
          (node.getOpType() == "Identity" ||
           node.getOpType() == "OptionalGetElement")) {
        node->getResult(0).replaceAllUsesWith(inputs[0]);
        mapped[node->getResult(0)] = inputs[0];
        toErase.push_back(node);
        continue;
      }
      for (auto [i, v] : llvm::enumerate(inputs))
        if (v && isSequence(v))
          return rw.fail("input " + Twine(i) + " is a sequence; " +
                         node.getOpType() + " takes tensors");
    }
    for (auto [i, v] : llvm::enumerate(inputs)) {
      if (v && !isa<RankedTensorType>(v.getType()) && !isSequence(v))
        return rw.fail("input " + Twine(i) + " has no static type");
      // Other float formats this small only come from hand-written IR.
      if (auto f = dyn_cast_if_present<FloatType>(inputTypes[i]);
          f && f.getWidth() <= 8 && !isFloatHeldAsBits(f))
        return rw.unsupported("input " + Twine(i) + " of type " +
                              llvm::formatv("{0}", f).str() +
                              ", a float format dlc does not support");
      if (isFloatHeldAsBits(inputTypes[i]) && !readsFloatBits(node))
        return rw.unsupported(
            "input " + Twine(i) + " of type " +
            onnx::getDataTypeName(onnx::getDataType(inputTypes[i])) +
            "; 8- and 4-bit floats are read by Cast, CastLike, "
            "QuantizeLinear, DequantizeLinear and the reshapes (Identity, "
            "Reshape, Flatten, Squeeze, Unsqueeze, Transpose) only");
    }
    const HandlerRegistry::Entry *handler = findHandler(node, registry);
    if (!handler || failed(handler->handler(rw)))
      return failure();
    nextOp = node->getNextNode();
    markBranch(node, before, after, rw.getResults());
    toErase.push_back(node);
    if (rw.keepsSequences())
      continue;
    if (!rw.getForwarded().empty() || node.getNumResults() == 0) {
      // A node may list more outputs than its handler forwards (a fuzzed
      // Identity with two): fine while the model reads none of them.
      ArrayRef<Value> forwarded = rw.getForwarded();
      for (auto [i, result] : llvm::enumerate(node.getOutputs())) {
        if (i < forwarded.size())
          mapped[result] = forwarded[i];
        else if (!result.use_empty())
          return rw.fail("output " + Twine(i) +
                         " is used by the model but dlc does not compute it");
      }
      continue;
    }
    if (rw.getResults().empty())
      return rw.fail("internal error: the handler produced no results");
    for (auto [i, v] : llvm::enumerate(rw.getResults())) {
      if (i >= node.getNumResults())
        break;
      if (failed(checkDeclaredType(rw, i, v, rw.getResultOnnxTypes()[i])))
        return failure();
      mapped[node.getOutputs()[i]] = v;
      onnxTypes[v] = rw.getResultOnnxTypes()[i];
    }
  }

  // Results: rewire the return and the function type.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  // A sequence output leaves as one output per element, NAME[0], NAME[1],
  // ... (none for an empty sequence).
  if (llvm::any_of(ret.getOperands(),
                   [&](Value v) { return isSequence(lookup(v)); })) {
    SmallVector<Value> operands;
    SmallVector<std::string> names;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      StringAttr name = getIOName(func, IOSide::Result, i);
      std::string base = name ? name.str() : "output" + std::to_string(i);
      Value converted = lookup(v);
      if (!isSequence(converted)) {
        operands.push_back(v);
        names.push_back(base);
        continue;
      }
      for (auto [k, element] :
           llvm::enumerate(sequenceConstructOf(converted).getInputs())) {
        operands.push_back(element);
        names.push_back(base + "[" + std::to_string(k) + "]");
      }
    }
    ret->setOperands(operands);
    func->removeAttr(func.getResAttrsAttrName());
    func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                   ret.getOperandTypes()));
    for (auto [k, name] : llvm::enumerate(names))
      setIOName(func, IOSide::Result, k, name);
  }
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = lookup(operand.get());
    if (!v || !isa<RankedTensorType>(v.getType()))
      return ret.emitError("graph output ")
             << operand.getOperandNumber() << " is not a computed tensor";
    Type onnxType = onnxTypeOf(v);
    auto type = cast<RankedTensorType>(v.getType());
    if (isNibble(type.getElementType())) {
      builder.setInsertionPoint(ret);
      v = packNibbles(builder, ret.getLoc(), v);
      setIOPackedShape(func, IOSide::Result, operand.getOperandNumber(),
                       type.getShape());
      if (!onnxType || !isNibble(onnxType))
        onnxType = type.getElementType();
      setIOElementType(func, IOSide::Result, operand.getOperandNumber(),
                       onnxType);
    }
    operand.set(v);
    if (onnxType && onnxType != signlessType(onnxType))
      setIOElementType(func, IOSide::Result, operand.getOperandNumber(),
                       onnxType);
  }
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 ret.getOperandTypes()));
  for (Operation *op : llvm::reverse(toErase)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

namespace {
struct ConvertONNXToLinalgPass
    : public dlc::impl::ConvertONNXToLinalgBase<ConvertONNXToLinalgPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(convertONNXFunction(func)))
        return signalPassFailure();
  }
};
} // namespace
