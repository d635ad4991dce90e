//===- Importer.cpp - ONNX protobuf to the onnx dialect -------------------===//
//
// Errors are reported as MLIR diagnostics at the location of the file (and
// node); the ONNX library reports failures with C++ exceptions, so this file
// is built with exceptions enabled and catches them at the library boundary.
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/ONNX/Importer.h"
#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Frontend/ONNX/ModelProto.h"

#include "ShapeInferenceGuard.h"
#include "dlc/Dialect/ONNX/IR/ONNX.h"
#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

using namespace mlir;

namespace {

/// Tensors with at most this many elements are imported as inline dense
/// attributes (so folding can look at them); larger ones become resource
/// blobs that reference the protobuf or the mapped external file.
constexpr int64_t kInlineElementLimit = 64;

std::string shapeToString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ",";
    s += ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
  }
  return s + "]";
}

Type convertElementType(MLIRContext *ctx, int32_t dtype) {
  return dlc::onnx::getElementType(ctx, dtype);
}

std::string dtypeName(int32_t dtype) {
  return dlc::onnx::getDataTypeName(dtype);
}

/// Bytes per element as stored in raw_data; 0 for sub-byte types.
int64_t storageBytes(Type t) {
  if (t.getIntOrFloatBitWidth() == 4)
    return 0;
  if (t.isInteger(1))
    return 1;
  return t.getIntOrFloatBitWidth() / 8;
}

class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, ::onnx::ModelProto &model,
                const dlc::ONNXImportOptions &options, Location fileLoc,
                std::string baseDir)
      : ctx(ctx), builder(&ctx), model(model), options(options),
        fileLoc(fileLoc), baseDir(std::move(baseDir)) {}

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult readOpsets();
  LogicalResult validateGraph();
  /// Checks one graph or subgraph (`what` names it in diagnostics): unique
  /// names, every node against its schema, nested subgraphs, and puts the
  /// nodes in topological order.
  LogicalResult validateNodes(::onnx::GraphProto &graph, const Twine &what);
  LogicalResult checkAgainstSchema(const ::onnx::NodeProto &node,
                                   unsigned index);
  LogicalResult sortNodes(::onnx::GraphProto &graph, const Twine &what);
  /// Sparse tensors (a Constant's sparse_value, the graph's
  /// sparse_initializer), in this graph and its subgraphs, become the dense
  /// tensors they stand for, before anything reads them.
  LogicalResult densifySparseTensors(::onnx::GraphProto &graph);
  FailureOr<::onnx::TensorProto> densify(::onnx::SparseTensorProto &sparse,
                                         Location loc);
  LogicalResult bindInputs();
  LogicalResult pinInputShapes();
  LogicalResult runShapeInference();
  /// Whether runShapeInference runs the ONNX library's inference on this
  /// model (it does not on opsets newer than it knows, nor on a newer IR
  /// version's element types and function overloads).
  bool shapeInferenceRuns();
  /// usesOnlyLibraryTypes of the main graph, once asked (the validation
  /// asks shapeInferenceRuns for every node).
  std::optional<bool> libraryTypesOnly;
  LogicalResult collectValueTypes(const ::onnx::GraphProto &graph);
  FailureOr<Type> convertType(const ::onnx::TypeProto &type, StringRef what);
  FailureOr<ElementsAttr> importTensor(::onnx::TensorProto &tensor,
                                       Location loc);
  FailureOr<ElementsAttr> importExternalTensor(::onnx::TensorProto &tensor,
                                               RankedTensorType type,
                                               Location loc);
  FailureOr<NamedAttribute> importAttribute(::onnx::AttributeProto &attr,
                                            const ::onnx::NodeProto &node,
                                            Location loc);
  LogicalResult importNode(::onnx::NodeProto &node, unsigned index);
  /// Imports `graph` (attribute `attrName` of the node named `owner`) into
  /// `region`: its inputs become block arguments, its outputs the operands
  /// of an onnx.yield; names of enclosing graphs stay visible.
  LogicalResult importSubgraph(::onnx::GraphProto &graph, Region &region,
                               StringRef owner, StringRef attrName);
  Location nodeLoc(const ::onnx::NodeProto &node, unsigned index);
  /// The node's name, or "OpType#index" for unnamed nodes (inside a
  /// subgraph, prefixed with "node/attribute/" of each enclosing node).
  std::string nodeName(const ::onnx::NodeProto &node, unsigned index) const;

  MLIRContext &ctx;
  OpBuilder builder;
  ::onnx::ModelProto &model;
  const dlc::ONNXImportOptions &options;
  Location fileLoc;
  std::string baseDir;

  std::map<std::string, int64_t> opsets;
  /// "node/attribute/" of each enclosing subgraph; empty in the main graph.
  std::string scope;
  llvm::StringMap<Value> values;
  llvm::StringMap<Type> valueTypes;
  /// Sequence graph inputs: the shape of each element, in order, from the
  /// --input-shape entries NAME[0], NAME[1], ...
  llvm::StringMap<SmallVector<SmallVector<int64_t>>> sequenceShapes;
  /// Sequence graph inputs pinned empty (--input-shape NAME[]=).
  llvm::StringSet<> emptySequences;
  Value noneValue;
};

/// A node's name in locations: its own, or "<scope><op type>#<index in its
/// graph>" when it has none.
static std::string scopedNodeName(const ::onnx::NodeProto &node, size_t index,
                                  const std::string &scope) {
  return node.name().empty()
             ? scope + node.op_type() + "#" + std::to_string(index)
             : node.name();
}

std::string ModelImporter::nodeName(const ::onnx::NodeProto &node,
                                    unsigned index) const {
  return scopedNodeName(node, index, scope);
}

/// The names that nodes inside `node`'s subgraphs (at any depth) read: a
/// node reads its subgraphs' captures from the enclosing graph like inputs.
static void collectSubgraphReads(const ::onnx::NodeProto &node,
                                 llvm::StringSet<> &reads) {
  for (const ::onnx::AttributeProto &attr : node.attribute()) {
    if (attr.type() != ::onnx::AttributeProto::GRAPH)
      continue;
    for (const ::onnx::NodeProto &inner : attr.g().node()) {
      for (const std::string &in : inner.input())
        if (!in.empty())
          reads.insert(in);
      collectSubgraphReads(inner, reads);
    }
  }
}

Location ModelImporter::nodeLoc(const ::onnx::NodeProto &node, unsigned index) {
  return NameLoc::get(StringAttr::get(&ctx, nodeName(node, index)), fileLoc);
}

LogicalResult ModelImporter::readOpsets() {
  if (model.opset_import_size() == 0)
    return emitError(fileLoc, "the model imports no opset (opset_import is "
                              "empty); dlc needs at least the ai.onnx opset");
  for (const ::onnx::OperatorSetIdProto &opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    if (opset.version() <= 0)
      return emitError(fileLoc, "opset_import for domain '")
             << domain << "' has invalid version " << opset.version();
    opsets[domain] = opset.version();
  }
  return success();
}

FailureOr<Type> ModelImporter::convertType(const ::onnx::TypeProto &type,
                                           StringRef what) {
  if (!type.has_tensor_type())
    return emitError(fileLoc) << what
                              << " is not a tensor (sequence, map and optional "
                                 "types are not supported)",
           failure();
  const ::onnx::TypeProto_Tensor &tensor = type.tensor_type();
  Type elementType = convertElementType(&ctx, tensor.elem_type());
  if (!elementType)
    return emitError(fileLoc)
               << what << " has element type " << dtypeName(tensor.elem_type())
               << ", which dlc does not support",
           failure();
  if (!tensor.has_shape())
    return Type(UnrankedTensorType::get(elementType));
  SmallVector<int64_t> shape;
  for (const ::onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                        ? dim.dim_value()
                        : ShapedType::kDynamic);
  if (dlc::onnx::boundedElementCount(shape) < 0)
    return emitError(fileLoc)
               << what << " has shape " << shapeToString(shape)
               << ": more than 2^48 elements, beyond what dlc supports",
           failure();
  return Type(RankedTensorType::get(shape, elementType));
}

/// The newest ONNX IR version (onnx 1.19's); newer files may still import,
/// but a version far beyond it is a damaged or hostile header.
constexpr int64_t kNewestIRVersion = 12;

/// Attributes that divide or size a window: ONNX's shape inference divides
/// by them, so they are checked before it runs.
static bool mustBePositive(StringRef op, StringRef attr) {
  static const llvm::StringSet<> windowed = {
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv",
      "MaxPool", "AveragePool",   "LpPool",      "MaxUnpool",
      "Col2Im",  "DeformConv"};
  if (!windowed.contains(op))
    return false;
  return attr == "strides" || attr == "dilations" || attr == "kernel_shape" ||
         attr == "group";
}

/// Integer attributes size, index or count something (axes, pads, strides,
/// block sizes, head counts, ...); ONNX's shape inference and dlc's handlers
/// compute with them, so they are bounded once here instead of at every
/// product (a blocksize of 2^32 + 1 overflowed DepthToSpace). The
/// exceptions carry data or sentinels: Slice-1's starts and ends (INT64_MAX
/// means "to the end"), Shape's start and end (clamped), constants' values,
/// loss ignore_index.
constexpr int64_t kMaxIntAttribute = int64_t(1) << 31;
static bool isBoundedIntAttribute(StringRef attr) {
  static const llvm::StringSet<> unbounded = {
      "starts",    "ends",       "start",        "end",
      "value_int", "value_ints", "ignore_index", "default_int64"};
  return !unbounded.contains(attr);
}

/// Attributes that ONNX's shape inference uses as counts of leading dims.
static bool mustBeNonNegative(StringRef op, StringRef attr) {
  return op == "GatherND" && attr == "batch_dims";
}

LogicalResult ModelImporter::validateGraph() {
  if (model.ir_version() < 1)
    return emitError(fileLoc, "the model's ir_version is ")
           << model.ir_version() << "; an ONNX model declares 1 or more";
  if (model.ir_version() > kNewestIRVersion)
    return emitError(fileLoc, "the model's ir_version is ")
           << model.ir_version() << ", newer than any ONNX IR version dlc "
           << "knows (the newest is " << kNewestIRVersion << ")";
  ::onnx::GraphProto &graph = *model.mutable_graph();
  if (failed(validateNodes(graph, "the graph")))
    return failure();
  // Every value the graph's nodes read is defined somewhere in it, before
  // ONNX's shape inference runs: some operators' inference reads an input's
  // type unchecked (an ai.onnx.ml LabelEncoder of an undefined value
  // segfaulted inside it). Subgraphs' reads are checked at import.
  llvm::StringSet<> defined;
  for (const ::onnx::ValueInfoProto &vi : graph.input())
    defined.insert(vi.name());
  for (const ::onnx::TensorProto &t : graph.initializer())
    defined.insert(t.name());
  for (const ::onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    for (const std::string &name : node.input())
      if (!name.empty() && !defined.contains(name))
        return emitError(nodeLoc(node, static_cast<unsigned>(index)))
               << "node '" << nodeName(node, static_cast<unsigned>(index))
               << "' (" << node.op_type() << ") reads '" << name
               << "', which no earlier node, initializer or graph input "
                  "produces";
  }
  return success();
}

LogicalResult ModelImporter::validateNodes(::onnx::GraphProto &graph,
                                           const Twine &what) {
  // Names a graph may give once: initializers, inputs (which IR < 4 also
  // lists for initializers), outputs, and the values nodes define.
  llvm::StringSet<> initializers, inputs, outputs;
  for (const ::onnx::TensorProto &t : graph.initializer())
    if (!initializers.insert(t.name()).second)
      return emitError(fileLoc)
             << what << " has two initializers named '" << t.name() << "'";
  for (const ::onnx::ValueInfoProto &vi : graph.input())
    if (!inputs.insert(vi.name()).second)
      return emitError(fileLoc)
             << what << " has two inputs named '" << vi.name() << "'";
  for (const ::onnx::ValueInfoProto &vi : graph.output())
    if (!outputs.insert(vi.name()).second)
      return emitError(fileLoc)
             << what << " has two outputs named '" << vi.name() << "'";
  // Declared shapes within kMaxTensorElements: ONNX's shape inference
  // computes with them unchecked (a dim of 2^63-1 crashed it).
  auto tooLarge = [&](ArrayRef<int64_t> dims,
                      const std::string &name) -> LogicalResult {
    if (dlc::onnx::boundedElementCount(dims) >= 0)
      return success();
    return emitError(fileLoc)
           << what << " declares '" << name
           << "' with more than 2^48 elements, beyond what dlc supports";
  };
  for (const ::onnx::TensorProto &t : graph.initializer()) {
    ArrayRef<int64_t> dims(t.dims().data(), t.dims_size());
    for (int64_t d : dims)
      if (d < 0)
        return emitError(fileLoc) << what << " declares initializer '"
                                  << t.name() << "' with negative dim " << d;
    if (failed(tooLarge(dims, t.name())))
      return failure();
  }
  // A negative dim in a value's type is how some exporters write an
  // unknown one, and how the rest of the importer reads it; ONNX's shape
  // inference would compute with it (a dim of -3 crashed it), so it is
  // made unknown here.
  for (auto *list : {graph.mutable_input(), graph.mutable_output(),
                     graph.mutable_value_info()})
    for (::onnx::ValueInfoProto &vi : *list) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
        continue;
      SmallVector<int64_t> dims;
      for (::onnx::TensorShapeProto_Dimension &d : *vi.mutable_type()
                                                        ->mutable_tensor_type()
                                                        ->mutable_shape()
                                                        ->mutable_dim()) {
        if (d.has_dim_value() && d.dim_value() < 0)
          d.clear_dim_value();
        if (d.has_dim_value())
          dims.push_back(d.dim_value());
      }
      if (failed(tooLarge(dims, vi.name())))
        return failure();
    }
  for (auto [index, node] : llvm::enumerate(*graph.mutable_node())) {
    if (failed(checkAgainstSchema(node, index)))
      return failure();
    std::string owner = nodeName(node, index);
    for (::onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.type() != ::onnx::AttributeProto::GRAPH)
        continue;
      std::string outer = scope;
      scope = owner + "/" + attr.name() + "/";
      LogicalResult inner = validateNodes(
          *attr.mutable_g(), "the subgraph '" + attr.name() + "' of node '" +
                                 owner + "' (" + node.op_type() + ")");
      scope = outer;
      if (failed(inner))
        return failure();
    }
  }
  return sortNodes(graph, what);
}

LogicalResult ModelImporter::checkAgainstSchema(const ::onnx::NodeProto &node,
                                                unsigned index) {
  Location loc = nodeLoc(node, index);
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto opset = opsets.find(domain);
  std::string header =
      "node '" + nodeName(node, index) + "' (" + node.op_type();
  if (opset != opsets.end())
    header += ", opset " + std::to_string(opset->second);
  header += "): ";
  auto error = [&]() { return emitError(loc) << header; };
  for (const ::onnx::AttributeProto &attr : node.attribute()) {
    if (isBoundedIntAttribute(attr.name())) {
      SmallVector<int64_t> values;
      if (attr.type() == ::onnx::AttributeProto::INT)
        values.push_back(attr.i());
      else if (attr.type() == ::onnx::AttributeProto::INTS)
        values.assign(attr.ints().begin(), attr.ints().end());
      for (int64_t v : values)
        if (v > kMaxIntAttribute || v < -kMaxIntAttribute)
          return error() << "attribute '" << attr.name() << "' holds " << v
                         << ", beyond the +-2^31 dlc takes for sizes, "
                            "indices and counts";
    }
    if (mustBeNonNegative(node.op_type(), attr.name()) &&
        attr.type() == ::onnx::AttributeProto::INT && attr.i() < 0)
      return error() << "attribute '" << attr.name()
                     << "' must not be negative, but is " << attr.i();
    // Scan's shape inference sizes vectors by it (2^32 + 1 ran it out of
    // memory).
    if (node.op_type() == "Scan" && attr.name() == "num_scan_inputs" &&
        attr.type() == ::onnx::AttributeProto::INT &&
        (attr.i() < 1 || attr.i() > node.input_size()))
      return error() << "attribute 'num_scan_inputs' is " << attr.i()
                     << " for a node with " << node.input_size() << " inputs";
    if (!mustBePositive(node.op_type(), attr.name()))
      continue;
    if (attr.type() == ::onnx::AttributeProto::INTS) {
      for (int64_t v : attr.ints())
        if (v <= 0)
          return error() << "attribute '" << attr.name()
                         << "' must be positive, but holds " << v;
    } else if (attr.type() == ::onnx::AttributeProto::INT && attr.i() <= 0) {
      return error() << "attribute '" << attr.name()
                     << "' must be positive, but is " << attr.i();
    }
  }
  // The operator's schema at the model's opset, from the ONNX library:
  // input and output counts, attribute names and types, required
  // attributes. Opsets newer than the library knows are left to the
  // conversion handlers, which check what they read.
  if (opset == opsets.end())
    return success(); // importNode names the missing domain.
  const auto &ranges =
      ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = ranges.find(domain);
  bool libraryKnowsOpset =
      range != ranges.end() && opset->second <= range->second.second;
  // An empty name leaves an input out; only optional ones may be. Checked
  // against the schema the library's shape inference will use, which for
  // an opset newer than it knows is its newest one: its inference reads a
  // required input's type unchecked. Where the inference does not run at
  // all (shapeInferenceRuns: a default-domain opset newer than the library
  // knows, among others), the input may have become optional since
  // (OptionalHasElement's in opset 18) and the handler checks it.
  if (const ::onnx::OpSchema *inferred =
          shapeInferenceRuns()
              ? ::onnx::OpSchemaRegistry::Schema(
                    node.op_type(), static_cast<int>(opset->second), domain)
              : nullptr) {
    const auto &formals = inferred->inputs();
    for (int i = 0; i < node.input_size() && !formals.empty(); ++i) {
      const auto &formal =
          formals[std::min<size_t>(static_cast<size_t>(i), formals.size() - 1)];
      if (node.input(i).empty() &&
          formal.GetOption() != ::onnx::OpSchema::Optional)
        return error() << "input " << i << " (" << formal.GetName()
                       << ") is required, but the node names no value for it";
    }
  }
  if (!libraryKnowsOpset)
    return success();
  const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset->second), domain);
  if (!schema || schema->Deprecated())
    return success(); // Conversion reports unsupported operators.
  auto counts = [](int min, int max) {
    if (min == max)
      return std::to_string(min);
    if (max == std::numeric_limits<int>::max())
      return std::to_string(min) + " or more";
    return std::to_string(min) + " to " + std::to_string(max);
  };
  std::string wants = "; " + node.op_type() + " takes ";
  if (node.input_size() < schema->min_input() ||
      node.input_size() > schema->max_input())
    return error() << "has " << node.input_size() << " inputs" << wants
                   << counts(schema->min_input(), schema->max_input());
  if (node.output_size() < schema->min_output() ||
      node.output_size() > schema->max_output())
    return error() << "has " << node.output_size() << " outputs" << wants
                   << counts(schema->min_output(), schema->max_output());
  const auto &declared = schema->attributes();
  for (const ::onnx::AttributeProto &attr : node.attribute()) {
    auto it = declared.find(attr.name());
    if (it == declared.end())
      return error() << "has an attribute '" << attr.name() << "', which "
                     << node.op_type() << " does not have at this opset";
    if (attr.type() != it->second.type)
      return error() << "attribute '" << attr.name() << "' is "
                     << ::onnx::AttributeProto_AttributeType_Name(attr.type())
                     << wants
                     << ::onnx::AttributeProto_AttributeType_Name(
                            it->second.type);
  }
  for (const auto &entry : declared) {
    const std::string &name = entry.first;
    if (entry.second.required &&
        llvm::none_of(node.attribute(), [&](const ::onnx::AttributeProto &a) {
          return a.name() == name;
        }))
      return error() << "missing required attribute '" << name << "'";
  }
  // What the checks above do not cover (output counts an operator allows
  // only some of, ...).
  try {
    schema->Verify(node);
  } catch (const std::exception &e) {
    // The library's first line says what is wrong, after naming the node
    // as "Node (name) " (or "Node (" alone for some messages).
    StringRef why = StringRef(e.what()).split('\n').first.trim();
    if (why.consume_front("Node (") && !node.name().empty())
      why.consume_front(node.name());
    why.consume_front(")");
    why = why.trim();
    return error() << "does not match the ONNX schema of " << node.op_type()
                   << ": " << why;
  }
  return success();
}

LogicalResult ModelImporter::sortNodes(::onnx::GraphProto &graph,
                                       const Twine &what) {
  int numNodes = graph.node_size();
  llvm::StringMap<int> producer;
  for (auto [index, node] : llvm::enumerate(graph.node()))
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      if (!producer.insert({out, static_cast<int>(index)}).second)
        return emitError(nodeLoc(node, index))
               << "node '" << nodeName(node, index) << "' (" << node.op_type()
               << ") defines '" << out << "', which node '"
               << nodeName(graph.node(producer[out]), producer[out])
               << "' also defines";
    }
  // Edges from producers to readers; values from inputs, initializers or
  // nowhere add none (importNode reports a value nobody defines).
  std::vector<SmallVector<int>> readers(numNodes);
  SmallVector<int> pending(numNodes, 0);
  bool ordered = true;
  std::vector<SmallVector<std::string>> reads(numNodes);
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    reads[index].assign(node.input().begin(), node.input().end());
    llvm::StringSet<> captured;
    collectSubgraphReads(node, captured);
    for (const auto &name : captured)
      reads[index].push_back(name.getKey().str());
  }
  for (auto [index, node] : llvm::enumerate(graph.node()))
    for (const std::string &in : reads[index]) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end())
        continue;
      readers[it->second].push_back(index);
      ++pending[index];
      ordered &= it->second < static_cast<int>(index);
    }
  if (ordered)
    return success();
  // ONNX asks for nodes in topological order; exporters mostly comply and
  // ONNX Runtime sorts the rest. Sort stably (a node as early as allowed).
  std::vector<int> order;
  std::set<int> ready;
  for (int i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.insert(i);
  while (!ready.empty()) {
    int n = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(n);
    for (int r : readers[n])
      if (--pending[r] == 0)
        ready.insert(r);
  }
  if (static_cast<int>(order.size()) != numNodes) {
    // Walk back from a node left over along inputs still pending: every
    // such node has one, so the walk repeats a node: that is the cycle.
    int n = 0;
    while (pending[n] == 0)
      ++n;
    SmallVector<int> path;
    llvm::DenseMap<int, unsigned> seen;
    while (!seen.count(n)) {
      seen[n] = path.size();
      path.push_back(n);
      for (const std::string &in : reads[n]) {
        auto it = producer.find(in);
        if (!in.empty() && it != producer.end() && pending[it->second] > 0) {
          n = it->second;
          break;
        }
      }
    }
    // The path runs from readers to producers; print it the other way.
    std::string cycle;
    for (unsigned i = path.size(); i-- > seen[n];)
      cycle += nodeName(graph.node(path[i]), path[i]) + " -> ";
    cycle += nodeName(graph.node(path.back()), path.back());
    return emitError(fileLoc) << what << " has a cycle: " << cycle;
  }
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
  for (int i : order)
    *sorted.Add() = std::move(*graph.mutable_node(i));
  graph.mutable_node()->Swap(&sorted);
  return success();
}

LogicalResult ModelImporter::bindInputs() {
  ::onnx::GraphProto &graph = *model.mutable_graph();
  for (const auto &entry : options.boundInputs) {
    StringRef name = entry.getKey();
    auto *inputs = graph.mutable_input();
    auto it = llvm::find_if(*inputs, [&](const ::onnx::ValueInfoProto &vi) {
      return vi.name() == name;
    });
    if (it == inputs->end())
      return emitError(fileLoc, "--bind-input names '")
             << name << "', which is not a graph input";
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(entry.getValue(), /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!file)
      return emitError(fileLoc, "--bind-input for '")
             << name << "': cannot read '" << entry.getValue()
             << "': " << file.getError().message();
    ::onnx::TensorProto tensor;
    if (!tensor.ParseFromArray((*file)->getBufferStart(),
                               static_cast<int>((*file)->getBufferSize())))
      return emitError(fileLoc, "--bind-input for '")
             << name << "': '" << entry.getValue()
             << "' is not an ONNX TensorProto file";
    if (it->type().has_tensor_type() &&
        it->type().tensor_type().elem_type() != tensor.data_type())
      return emitError(fileLoc, "--bind-input for '")
             << name << "': the file holds " << dtypeName(tensor.data_type())
             << " but the input is "
             << dtypeName(it->type().tensor_type().elem_type());
    tensor.set_name(name.str());
    *graph.add_initializer() = std::move(tensor);
    inputs->erase(it);
  }
  return success();
}

LogicalResult ModelImporter::pinInputShapes() {
  ::onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringSet<> initializerNames;
  for (const ::onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());
  llvm::StringSet<> seen;
  std::string inputList;
  for (::onnx::ValueInfoProto &input : *graph.mutable_input()) {
    if (initializerNames.contains(input.name()))
      continue;
    inputList += (inputList.empty() ? "" : ", ") + input.name();
    // An optional input is empty (NAME=none) or is its value, a tensor or a
    // sequence pinned like any other.
    if (input.type().has_optional_type()) {
      if (options.emptyOptionals.contains(input.name()))
        continue;
      ::onnx::TypeProto value = input.type().optional_type().elem_type();
      *input.mutable_type() = value;
    } else if (options.emptyOptionals.contains(input.name())) {
      return emitError(fileLoc, "--input-shape ")
             << input.name() << "=none: '" << input.name()
             << "' is not an optional input";
    }
    if (input.type().has_sequence_type()) {
      // A sequence's elements: NAME[0], NAME[1], ... as far as given.
      SmallVector<SmallVector<int64_t>> &elements =
          sequenceShapes[input.name()];
      for (;;) {
        std::string key =
            input.name() + "[" + std::to_string(elements.size()) + "]";
        auto element = options.inputShapes.find(key);
        if (element == options.inputShapes.end())
          break;
        seen.insert(key);
        elements.push_back(element->second);
      }
      if (options.inputShapes.count(input.name() + "[]")) {
        if (!elements.empty())
          return emitError(fileLoc, "--input-shape gives both elements of ")
                 << input.name() << " and " << input.name()
                 << "[]= (an empty sequence)";
        seen.insert(input.name() + "[]");
        emptySequences.insert(input.name());
      }
      continue;
    }
    auto it = options.inputShapes.find(input.name());
    if (it == options.inputShapes.end())
      continue;
    seen.insert(input.name());
    ArrayRef<int64_t> pinned = it->second;
    if (!input.type().has_tensor_type())
      continue; // convertType reports non-tensor inputs.
    ::onnx::TypeProto_Tensor *tensor =
        input.mutable_type()->mutable_tensor_type();
    ::onnx::TensorShapeProto *shape = tensor->mutable_shape();
    if (tensor->has_shape() &&
        shape->dim_size() != static_cast<int>(pinned.size()))
      return emitError(fileLoc, "--input-shape for '")
             << input.name() << "' has rank " << pinned.size()
             << " but the model declares rank " << shape->dim_size();
    for (auto [i, d] : llvm::enumerate(pinned)) {
      if (d < 0)
        return emitError(fileLoc, "--input-shape for '")
               << input.name() << "' has negative dim " << d << " at index "
               << i;
      if (static_cast<int>(i) >= shape->dim_size())
        shape->add_dim();
      ::onnx::TensorShapeProto_Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() != d)
        return emitError(fileLoc, "--input-shape for '")
               << input.name() << "' sets dim " << i << " to " << d
               << " but the model fixes it to " << dim->dim_value();
      dim->set_dim_value(d);
    }
  }
  // An optional output is what it holds (a tensor or a sequence), which
  // inference works out.
  for (::onnx::ValueInfoProto &output : *graph.mutable_output())
    if (output.type().has_optional_type())
      output.clear_type();
  for (const auto &entry : options.emptyOptionals)
    if (!llvm::any_of(graph.input(), [&](const ::onnx::ValueInfoProto &in) {
          return in.name() == entry.getKey();
        }))
      return emitError(fileLoc, "--input-shape names '")
             << entry.getKey()
             << "', which is not a graph input (inputs: " << inputList << ")";
  for (const auto &entry : options.inputShapes)
    if (!seen.contains(entry.getKey()))
      return emitError(fileLoc, "--input-shape names '")
             << entry.getKey()
             << "', which is not a graph input (inputs: " << inputList << ")";
  return success();
}

namespace {

bool isLibraryType(int32_t elemType) {
  return ::onnx::TensorProto_DataType_IsValid(elemType);
}

bool usesOnlyLibraryTypes(const ::onnx::TypeProto &type) {
  switch (type.value_case()) {
  case ::onnx::TypeProto::kTensorType:
    return isLibraryType(type.tensor_type().elem_type());
  case ::onnx::TypeProto::kSequenceType:
    return usesOnlyLibraryTypes(type.sequence_type().elem_type());
  case ::onnx::TypeProto::kOptionalType:
    return usesOnlyLibraryTypes(type.optional_type().elem_type());
  case ::onnx::TypeProto::VALUE_NOT_SET:
    return true;
  default:
    return false; // maps and sparse tensors: dlc refuses them anyway
  }
}

/// Whether `graph` and its subgraphs name only element types the ONNX
/// library knows: in its values' types, its tensors, and the attributes
/// that choose an output's type (Cast's `to`, the generators' `dtype`).
bool usesOnlyLibraryTypes(const ::onnx::GraphProto &graph) {
  auto values = [](const auto &list) {
    return llvm::all_of(list, [](const ::onnx::ValueInfoProto &vi) {
      return usesOnlyLibraryTypes(vi.type());
    });
  };
  if (!values(graph.input()) || !values(graph.output()) ||
      !values(graph.value_info()))
    return false;
  auto tensorOk = [](const ::onnx::TensorProto &t) {
    return isLibraryType(t.data_type());
  };
  if (!llvm::all_of(graph.initializer(), tensorOk))
    return false;
  for (const ::onnx::NodeProto &node : graph.node())
    for (const ::onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_t() && !tensorOk(attr.t()))
        return false;
      if (!llvm::all_of(attr.tensors(), tensorOk))
        return false;
      if ((attr.name() == "to" || attr.name() == "dtype") && attr.has_i() &&
          !isLibraryType(static_cast<int32_t>(attr.i())))
        return false;
      if (attr.has_g() && !usesOnlyLibraryTypes(attr.g()))
        return false;
      for (const ::onnx::GraphProto &g : attr.graphs())
        if (!usesOnlyLibraryTypes(g))
          return false;
    }
  return true;
}

} // namespace

bool ModelImporter::shapeInferenceRuns() {
  // ONNX's shape inference here is the one of the installed ONNX library;
  // it only knows the opsets of its release, and on newer ones it would
  // apply old operator semantics. There, the conversion handlers alone
  // derive types.
  auto range =
      ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("");
  auto it = opsets.find("");
  if (it != opsets.end() && it->second > range.second)
    return false;
  if (model.ir_version() <= ::onnx::Version::IR_VERSION)
    return true;
  // A newer IR version (ONNX Runtime's and PyTorch's exporters write IR 9
  // and 10 with opsets the library knows) changes no operator: what the
  // library cannot read are the element types added since (float8, int4)
  // and local functions, which IR 10 tells apart by overload (so models
  // with local functions are left alone). A model using neither is one the
  // library's inference reads as its writer meant; without it, values the
  // model does not declare stay untyped and, among others, dlc-fold-qdq
  // cannot match a QDQ layer whose tensors are untyped.
  if (model.functions_size() != 0)
    return false;
  if (!libraryTypesOnly)
    libraryTypesOnly = usesOnlyLibraryTypes(model.graph());
  return *libraryTypesOnly;
}

LogicalResult ModelImporter::runShapeInference() {
  if (!shapeInferenceRuns())
    return success();
  try {
    ::onnx::ShapeInferenceOptions inferenceOptions(/*check_type=*/false,
                                                   /*error_mode=*/0,
                                                   /*data_prop=*/true);
    ::onnx::shape_inference::InferShapes(model, dlc::guardedSchemaRegistry(),
                                         inferenceOptions);
  } catch (const std::exception &e) {
    return emitError(fileLoc, "ONNX shape inference rejects the model: ")
           << e.what();
  }
  return success();
}

LogicalResult
ModelImporter::collectValueTypes(const ::onnx::GraphProto &graph) {
  auto add = [&](const ::onnx::ValueInfoProto &vi) -> LogicalResult {
    if (!vi.has_type() || !vi.type().has_tensor_type() ||
        !convertElementType(&ctx, vi.type().tensor_type().elem_type()))
      return success(); // Unknown here; handlers derive it.
    FailureOr<Type> t = convertType(vi.type(), "value '" + vi.name() + "'");
    if (failed(t))
      return failure();
    valueTypes[vi.name()] = *t;
    return success();
  };
  for (const ::onnx::ValueInfoProto &vi : graph.value_info())
    if (failed(add(vi)))
      return failure();
  for (const ::onnx::ValueInfoProto &vi : graph.output())
    if (failed(add(vi)))
      return failure();
  // Subgraphs: their names are unique across the model, as ONNX asks.
  for (const ::onnx::NodeProto &node : graph.node())
    for (const ::onnx::AttributeProto &attr : node.attribute())
      if (attr.type() == ::onnx::AttributeProto::GRAPH &&
          failed(collectValueTypes(attr.g())))
        return failure();
  return success();
}

FailureOr<ElementsAttr>
ModelImporter::importExternalTensor(::onnx::TensorProto &tensor,
                                    RankedTensorType type, Location loc) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const ::onnx::StringStringEntryProto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v;
      if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
        return emitError(loc) << "tensor '" << tensor.name()
                              << "' has invalid external data " << kv.key()
                              << " '" << kv.value() << "'",
               failure();
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' is stored externally but names no location",
           failure();
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has external data location '" << location
                          << "' outside the model's directory",
           failure();
  SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  // The text of the location stays inside the directory; the file it
  // resolves to must too (a symbolic link could point anywhere).
  SmallString<256> realPath, realDir;
  if (!llvm::sys::fs::real_path(path, realPath) &&
      !llvm::sys::fs::real_path(baseDir, realDir)) {
    llvm::sys::path::append(realDir, "");
    if (!StringRef(realPath).starts_with(realDir))
      return emitError(loc) << "tensor '" << tensor.name()
                            << "' has external data location '" << location
                            << "', which resolves to '" << realPath
                            << "' outside the model's directory",
             failure();
  }
  uint64_t fileSize;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize))
    return emitError(loc) << "external data file '" << path << "' of tensor '"
                          << tensor.name()
                          << "' cannot be read: " << ec.message(),
           failure();
  int64_t bytes = type.getNumElements() * storageBytes(type.getElementType());
  if (length >= 0 && length != bytes)
    return emitError(loc) << "tensor '" << tensor.name() << "' of shape "
                          << shapeToString(type.getShape()) << " needs "
                          << bytes << " bytes but its external data length is "
                          << length,
           failure();
  if (static_cast<uint64_t>(offset) > fileSize ||
      fileSize - offset < static_cast<uint64_t>(bytes))
    return emitError(loc) << "external data of tensor '" << tensor.name()
                          << "' (offset " << offset << ", " << bytes
                          << " bytes) lies beyond the end of '" << path << "' ("
                          << fileSize << " bytes)",
           failure();
  // Map the slice: the weights are read straight from the file's pages.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(path, bytes, offset,
                                       /*IsVolatile=*/false);
  if (!buffer)
    return emitError(loc) << "cannot map external data file '" << path
                          << "': " << buffer.getError().message(),
           failure();
  std::shared_ptr<llvm::MemoryBuffer> owned(std::move(*buffer));
  size_t align = std::max<int64_t>(1, storageBytes(type.getElementType()));
  ArrayRef<char> data(owned->getBufferStart(), owned->getBufferSize());
  if (reinterpret_cast<uintptr_t>(data.data()) % align != 0) {
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, tensor.name(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, align)));
  }
  return ElementsAttr(DenseResourceElementsAttr::get(
      type, tensor.name(),
      AsmResourceBlob(
          data, align,
          [owned](void *, size_t, size_t) mutable { owned.reset(); },
          /*dataIsMutable=*/false)));
}

FailureOr<::onnx::TensorProto>
ModelImporter::densify(::onnx::SparseTensorProto &sparse, Location loc) {
  ::onnx::TensorProto &values = *sparse.mutable_values();
  std::string name = values.name();
  auto fail = [&](const Twine &why) {
    emitError(loc) << "sparse tensor '" << name << "': " << why;
    return failure();
  };
  if (values.dims_size() != 1)
    return fail("values must be a 1-D tensor, not of rank " +
                Twine(values.dims_size()));
  FailureOr<ElementsAttr> valueAttr = importTensor(values, loc);
  if (failed(valueAttr))
    return failure();
  if (valueAttr->getElementType().getIntOrFloatBitWidth() == 4)
    return fail("4-bit values are not supported");
  int64_t nonzeros = valueAttr->getNumElements();
  Type elementType = valueAttr->getElementType();
  int64_t elemBytes = storageBytes(elementType);
  // The values' bytes, one element after the other.
  std::string valueBytes;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*valueAttr)) {
    ArrayRef<char> data = resource.getData();
    valueBytes.assign(data.begin(), data.end());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(*valueAttr)) {
    if (elementType.isInteger(1)) {
      for (bool v : dense.getValues<bool>())
        valueBytes.push_back(v ? 1 : 0);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      for (int64_t i = 0; i < (dense.isSplat() ? nonzeros : 1); ++i)
        valueBytes.append(raw.begin(), raw.end());
    }
  }
  if (static_cast<int64_t>(valueBytes.size()) != nonzeros * elemBytes)
    return fail("cannot read its values");

  SmallVector<int64_t> shape(sparse.dims().begin(), sparse.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return fail("negative dim " + Twine(d));
  int64_t total = dlc::onnx::boundedElementCount(shape);
  // A few bytes of sparse tensor can declare any dense size.
  constexpr int64_t kMaxDenseBytes = int64_t(1) << 30;
  if (total < 0 || total > kMaxDenseBytes / std::max<int64_t>(elemBytes, 1))
    return fail("its dense form " + shapeToString(shape) +
                " would take more than 1 GiB");

  // Indices: [nonzeros] linear, or [nonzeros, rank] coordinates, int64.
  ::onnx::TensorProto &indices = *sparse.mutable_indices();
  if (indices.data_type() != ::onnx::TensorProto::INT64)
    return fail("indices must be int64, not " + dtypeName(indices.data_type()));
  SmallVector<int64_t> indexDims(indices.dims().begin(), indices.dims().end());
  int64_t rank = static_cast<int64_t>(shape.size());
  bool linear = indexDims.size() == 1 && indexDims[0] == nonzeros;
  bool coordinates =
      indexDims.size() == 2 && indexDims[0] == nonzeros && indexDims[1] == rank;
  if (!linear && !coordinates)
    return fail("indices of shape " + shapeToString(indexDims) + " for " +
                Twine(nonzeros) + " values of a rank-" + Twine(rank) +
                " tensor (need [" + Twine(nonzeros) + "] or [" +
                Twine(nonzeros) + ", " + Twine(rank) + "])");
  FailureOr<ElementsAttr> indexAttr = importTensor(indices, loc);
  if (failed(indexAttr))
    return failure();
  SmallVector<int64_t> index;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*indexAttr)) {
    ArrayRef<char> data = resource.getData();
    index.resize(data.size() / sizeof(int64_t));
    std::memcpy(index.data(), data.data(), index.size() * sizeof(int64_t));
  } else {
    for (int64_t v : cast<DenseElementsAttr>(*indexAttr).getValues<int64_t>())
      index.push_back(v);
  }

  std::string bytes(static_cast<size_t>(total * elemBytes), '\0');
  int64_t previous = -1;
  for (int64_t i = 0; i < nonzeros; ++i) {
    int64_t at = 0;
    if (linear) {
      at = index[i];
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        int64_t c = index[i * rank + d];
        if (c < 0 || c >= shape[d])
          return fail("index " + Twine(c) + " of value " + Twine(i) +
                      " is outside dim " + Twine(d) + " (" + Twine(shape[d]) +
                      ")");
        at = at * shape[d] + c;
      }
    }
    if (at < 0 || at >= total)
      return fail("index " + Twine(at) + " of value " + Twine(i) +
                  " is outside its " + Twine(total) + " elements");
    if (at <= previous)
      return fail("indices must be in increasing order without repeats; "
                  "value " +
                  Twine(i) + " is at " + Twine(at) + " after " +
                  Twine(previous));
    previous = at;
    std::memcpy(&bytes[at * elemBytes], &valueBytes[i * elemBytes], elemBytes);
  }
  ::onnx::TensorProto dense;
  dense.set_name(name);
  dense.set_data_type(values.data_type());
  for (int64_t d : shape)
    dense.add_dims(d);
  dense.set_raw_data(std::move(bytes));
  return dense;
}

LogicalResult ModelImporter::densifySparseTensors(::onnx::GraphProto &graph) {
  for (::onnx::SparseTensorProto &sparse :
       *graph.mutable_sparse_initializer()) {
    FailureOr<::onnx::TensorProto> dense = densify(sparse, fileLoc);
    if (failed(dense))
      return failure();
    *graph.add_initializer() = std::move(*dense);
  }
  graph.clear_sparse_initializer();
  for (auto [i, node] : llvm::enumerate(*graph.mutable_node())) {
    for (::onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.type() == ::onnx::AttributeProto::GRAPH &&
          failed(densifySparseTensors(*attr.mutable_g())))
        return failure();
      if (attr.type() == ::onnx::AttributeProto::GRAPHS)
        for (::onnx::GraphProto &g : *attr.mutable_graphs())
          if (failed(densifySparseTensors(g)))
            return failure();
      // Constant's sparse_value is its value, densely.
      if (attr.type() == ::onnx::AttributeProto::SPARSE_TENSOR &&
          node.op_type() == "Constant" && node.domain().empty() &&
          attr.name() == "sparse_value") {
        FailureOr<::onnx::TensorProto> dense =
            densify(*attr.mutable_sparse_tensor(),
                    nodeLoc(node, static_cast<unsigned>(i)));
        if (failed(dense))
          return failure();
        attr.clear_sparse_tensor();
        attr.set_name("value");
        attr.set_type(::onnx::AttributeProto::TENSOR);
        *attr.mutable_t() = std::move(*dense);
      }
    }
  }
  return success();
}

FailureOr<ElementsAttr> ModelImporter::importTensor(::onnx::TensorProto &tensor,
                                                    Location loc) {
  Type elementType = convertElementType(&ctx, tensor.data_type());
  if (!elementType)
    return emitError(loc) << "tensor '" << tensor.name() << "' has type "
                          << dtypeName(tensor.data_type())
                          << ", which dlc does not support",
           failure();
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' has negative dim " << d,
             failure();
  int64_t numElements = dlc::onnx::boundedElementCount(shape);
  if (numElements < 0)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has more than 2^48 elements, beyond what "
                             "dlc supports",
           failure();
  auto type = RankedTensorType::get(shape, elementType);
  if (tensor.data_location() == ::onnx::TensorProto::EXTERNAL)
    return importExternalTensor(tensor, type, loc);

  int64_t elemBytes = storageBytes(elementType);
  // 4-bit integers and floats are packed two per byte on disk, low nibble
  // first; MLIR stores one element per byte, so unpack them.
  if (elementType.getIntOrFloatBitWidth() == 4) {
    std::string packed;
    if (tensor.has_raw_data())
      packed = tensor.raw_data();
    else
      for (int32_t v : tensor.int32_data())
        packed.push_back(static_cast<char>(v));
    if (static_cast<int64_t>(packed.size()) != (numElements + 1) / 2)
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' of shape "
                 << shapeToString(shape) << " needs " << (numElements + 1) / 2
                 << " bytes of packed 4-bit data but has " << packed.size(),
             failure();
    SmallVector<APInt> elems;
    for (int64_t i = 0; i < numElements; ++i) {
      uint8_t byte = static_cast<uint8_t>(packed[i / 2]);
      uint8_t nibble = (i % 2) ? (byte >> 4) : (byte & 0xf);
      elems.push_back(APInt(4, nibble));
    }
    auto bits =
        DenseElementsAttr::get(type.clone(builder.getIntegerType(4)), elems);
    return ElementsAttr(bits.bitcast(elementType));
  }

  std::string storage;
  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) !=
        numElements * elemBytes)
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' of shape "
                 << shapeToString(shape) << " and type "
                 << dtypeName(tensor.data_type()) << " needs "
                 << numElements * elemBytes << " bytes of raw data but has "
                 << tensor.raw_data().size(),
             failure();
  } else {
    // Typed fields: copy into a raw little-endian buffer.
    auto append = [&](const void *p, size_t n) {
      storage.append(static_cast<const char *>(p), n);
    };
    int64_t count = 0;
    switch (tensor.data_type()) {
    case ::onnx::TensorProto::FLOAT:
      count = tensor.float_data_size();
      append(tensor.float_data().data(), count * 4);
      break;
    case ::onnx::TensorProto::DOUBLE:
      count = tensor.double_data_size();
      append(tensor.double_data().data(), count * 8);
      break;
    case ::onnx::TensorProto::INT64:
      count = tensor.int64_data_size();
      append(tensor.int64_data().data(), count * 8);
      break;
    case ::onnx::TensorProto::UINT32:
    case ::onnx::TensorProto::UINT64:
      count = tensor.uint64_data_size();
      for (uint64_t v : tensor.uint64_data())
        append(&v, elemBytes);
      break;
    default: // int32_data holds every other type, one element per entry.
      count = tensor.int32_data_size();
      for (int32_t v : tensor.int32_data())
        append(&v, elemBytes);
      break;
    }
    if (count != numElements)
      return emitError(loc) << "tensor '" << tensor.name() << "' of shape "
                            << shapeToString(shape) << " needs " << numElements
                            << " values but has " << count,
             failure();
  }
  const std::string &bytes =
      tensor.has_raw_data() ? tensor.raw_data() : storage;
  if (numElements <= kInlineElementLimit || elementType.isInteger(1)) {
    if (elementType.isInteger(1)) {
      SmallVector<bool> bools;
      for (char c : bytes)
        bools.push_back(c != 0);
      return ElementsAttr(DenseElementsAttr::get(type, bools));
    }
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(bytes.data(), bytes.size())));
  }
  // Large tensors: hand the bytes to a resource blob without another copy.
  auto owned = std::make_shared<std::string>();
  if (tensor.has_raw_data())
    owned.reset(tensor.release_raw_data());
  else
    owned->swap(storage);
  size_t align = elemBytes;
  if (reinterpret_cast<uintptr_t>(owned->data()) % align != 0)
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, tensor.name(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(
            ArrayRef<char>(owned->data(), owned->size()), align)));
  ArrayRef<char> data(owned->data(), owned->size());
  return ElementsAttr(DenseResourceElementsAttr::get(
      type, tensor.name(),
      AsmResourceBlob(
          data, align,
          [owned](void *, size_t, size_t) mutable { owned.reset(); },
          /*dataIsMutable=*/false)));
}

FailureOr<NamedAttribute>
ModelImporter::importAttribute(::onnx::AttributeProto &attr,
                               const ::onnx::NodeProto &node, Location loc) {
  Builder &b = builder;
  auto fail = [&](const Twine &why) -> FailureOr<NamedAttribute> {
    StringRef nodeName = cast<NameLoc>(loc).getName().getValue();
    emitError(loc) << "node '" << nodeName << "' (" << node.op_type()
                   << "): attribute '" << attr.name() << "' " << why;
    return failure();
  };
  Attribute value;
  switch (attr.type()) {
  case ::onnx::AttributeProto::INT:
    value = b.getI64IntegerAttr(attr.i());
    break;
  case ::onnx::AttributeProto::FLOAT:
    value = b.getF32FloatAttr(attr.f());
    break;
  case ::onnx::AttributeProto::STRING:
    value = b.getStringAttr(attr.s());
    break;
  case ::onnx::AttributeProto::INTS:
    value = b.getI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end()));
    break;
  case ::onnx::AttributeProto::FLOATS:
    value = b.getF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end()));
    break;
  case ::onnx::AttributeProto::STRINGS:
    value = b.getStrArrayAttr(
        SmallVector<StringRef>(attr.strings().begin(), attr.strings().end()));
    break;
  case ::onnx::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> t = importTensor(*attr.mutable_t(), loc);
    if (failed(t))
      return failure();
    value = *t;
    break;
  }
  case ::onnx::AttributeProto::GRAPHS:
    return fail("is a list of subgraphs, which no operator dlc supports "
                "takes");
  case ::onnx::AttributeProto::TYPE_PROTO: {
    FailureOr<Type> t = convertType(attr.tp(), "attribute " + attr.name());
    if (failed(t))
      return failure();
    value = TypeAttr::get(*t);
    break;
  }
  case ::onnx::AttributeProto::UNDEFINED:
    if (!attr.ref_attr_name().empty())
      return fail("refers to a function attribute, which only appears in "
                  "model-local functions (not supported)");
    [[fallthrough]];
  default:
    return fail("has type " + std::to_string(attr.type()) +
                ", which dlc does not support");
  }
  return NamedAttribute(b.getStringAttr(attr.name()), value);
}

LogicalResult ModelImporter::importNode(::onnx::NodeProto &node,
                                        unsigned index) {
  Location loc = nodeLoc(node, index);
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto opsetIt = opsets.find(domain);
  if (opsetIt == opsets.end())
    return emitError(loc) << "node '" << nodeName(node, index) << "' ("
                          << node.op_type() << ") is in domain '" << domain
                          << "', which the model does not import";
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(noneValue);
      continue;
    }
    auto it = values.find(name);
    if (it == values.end())
      return emitError(loc) << "node '" << nodeName(node, index) << "' ("
                            << node.op_type() << ") reads '" << name
                            << "', which no earlier node, initializer or "
                               "graph input produces";
    inputs.push_back(it->second);
  }
  SmallVector<NamedAttribute> attrs;
  SmallVector<::onnx::AttributeProto *> graphs;
  for (::onnx::AttributeProto &attr : *node.mutable_attribute()) {
    if (attr.type() == ::onnx::AttributeProto::GRAPH) {
      graphs.push_back(&attr);
      continue;
    }
    FailureOr<NamedAttribute> a = importAttribute(attr, node, loc);
    if (failed(a))
      return failure();
    attrs.push_back(*a);
  }
  SmallVector<Type> resultTypes;
  for (const std::string &name : node.output()) {
    auto it = valueTypes.find(name);
    resultTypes.push_back(!name.empty() && it != valueTypes.end()
                              ? it->second
                              : Type(builder.getNoneType()));
  }
  auto op = dlc::onnx::NodeOp::create(
      builder, loc, resultTypes, builder.getStringAttr(node.op_type()),
      builder.getStringAttr(domain), builder.getI64IntegerAttr(opsetIt->second),
      node.name().empty() ? StringAttr() : builder.getStringAttr(node.name()),
      builder.getDictionaryAttr(attrs),
      graphs.empty() ? ArrayAttr()
                     : builder.getStrArrayAttr(llvm::map_to_vector(
                           graphs,
                           [](::onnx::AttributeProto *a) -> StringRef {
                             return a->name();
                           })),
      inputs, graphs.size());
  for (auto [i, attr] : llvm::enumerate(graphs))
    if (failed(importSubgraph(*attr->mutable_g(), op.getGraphs()[i],
                              nodeName(node, index), attr->name())))
      return failure();
  for (auto [name, result] : llvm::zip(node.output(), op.getOutputs())) {
    if (name.empty())
      continue;
    if (!values.insert({name, result}).second)
      return emitError(loc)
             << "node '" << nodeName(node, index) << "' (" << node.op_type()
             << ") defines '" << name << "', which is already defined";
  }
  return success();
}

LogicalResult ModelImporter::importSubgraph(::onnx::GraphProto &graph,
                                            Region &region, StringRef owner,
                                            StringRef attrName) {
  OpBuilder::InsertionGuard guard(builder);
  Location loc =
      NameLoc::get(builder.getStringAttr(owner + "/" + attrName), fileLoc);
  std::string what =
      ("the subgraph '" + attrName + "' of node '" + owner + "'").str();
  SmallVector<Type> argTypes;
  for (const ::onnx::ValueInfoProto &input : graph.input()) {
    // Loop and Scan bodies may leave an input's type to inference; a
    // sequence or an optional (a Loop carrying one) is an ONNX value the
    // sequence and optional handlers follow to what made it.
    if (!input.has_type() || input.type().has_sequence_type() ||
        input.type().has_optional_type()) {
      argTypes.push_back(builder.getNoneType());
      continue;
    }
    FailureOr<Type> t =
        convertType(input.type(), "input '" + input.name() + "' of " + what);
    if (failed(t))
      return failure();
    argTypes.push_back(*t);
  }
  Block *block = builder.createBlock(
      &region, {}, argTypes, SmallVector<Location>(argTypes.size(), loc));
  // Names the subgraph defines are visible only inside it.
  llvm::StringMap<Value> outer = values;
  std::string outerScope = scope;
  scope = (owner + "/" + attrName + "/").str();
  llvm::scope_exit restore([&] {
    values = std::move(outer);
    scope = std::move(outerScope);
  });
  for (auto [input, arg] : llvm::zip(graph.input(), block->getArguments()))
    values[input.name()] = arg;
  for (::onnx::TensorProto &init : *graph.mutable_initializer()) {
    Location initLoc =
        NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
    FailureOr<ElementsAttr> value = importTensor(init, initLoc);
    if (failed(value))
      return failure();
    values[init.name()] =
        arith::ConstantOp::create(builder, initLoc, cast<TypedAttr>(*value));
  }
  for (auto [i, node] : llvm::enumerate(*graph.mutable_node()))
    if (failed(importNode(node, i)))
      return failure();
  SmallVector<Value> results;
  for (const ::onnx::ValueInfoProto &output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end())
      return emitError(loc) << "output '" << output.name() << "' of " << what
                            << " is not produced by any node";
    results.push_back(it->second);
  }
  dlc::onnx::YieldOp::create(builder, loc, results);
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run() {
  if (!model.has_graph())
    return emitError(fileLoc, "the model has no graph"), nullptr;
  if (failed(readOpsets()) ||
      failed(densifySparseTensors(*model.mutable_graph())) ||
      failed(validateGraph()) || failed(bindInputs()) ||
      failed(pinInputShapes()) ||
      (options.inferShapes && failed(runShapeInference())) ||
      failed(collectValueTypes(model.graph())))
    return nullptr;

  ::onnx::GraphProto &graph = *model.mutable_graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  Builder &b = builder;
  SmallVector<NamedAttribute> opsetAttrs;
  for (auto &[domain, version] : opsets)
    opsetAttrs.push_back(b.getNamedAttr(domain.empty() ? "ai.onnx" : domain,
                                        b.getI64IntegerAttr(version)));
  (*module)->setAttr(dlc::kOnnxOpsetsAttr, b.getDictionaryAttr(opsetAttrs));
  (*module)->setAttr(dlc::kOnnxNodeCountAttr,
                     b.getI64IntegerAttr(graph.node_size()));
  if (!model.producer_name().empty())
    (*module)->setAttr(dlc::kOnnxProducerAttr,
                       b.getStringAttr(model.producer_name() + " " +
                                       model.producer_version()));

  // Graph inputs that are initializers (IR < 4 lists them) are constants.
  llvm::StringSet<> initializerNames;
  for (const ::onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  // Sequence inputs: one argument per element, then a SequenceConstruct of
  // them stands for the input (the sequence handlers follow it).
  SmallVector<std::pair<std::string, std::pair<unsigned, unsigned>>>
      sequenceInputs;
  SmallVector<std::string> emptyOptionalInputs;
  for (const ::onnx::ValueInfoProto &input : graph.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    if (input.type().has_optional_type() &&
        options.emptyOptionals.contains(input.name())) {
      emptyOptionalInputs.push_back(input.name());
      continue;
    }
    if (input.type().has_sequence_type()) {
      const ::onnx::TypeProto &elem = input.type().sequence_type().elem_type();
      SmallVector<SmallVector<int64_t>> shapes =
          sequenceShapes.lookup(input.name());
      Type elementType =
          elem.has_tensor_type()
              ? convertElementType(&ctx, elem.tensor_type().elem_type())
              : Type();
      if (!elementType)
        return emitError(fileLoc, "graph input '")
                   << input.name()
                   << "' is a sequence of something other than tensors of "
                      "a type dlc supports",
               nullptr;
      if (shapes.empty() && !emptySequences.contains(input.name()))
        return emitError(fileLoc, "graph input '")
                   << input.name()
                   << "' is a sequence; give the shape of each element with "
                      "--input-shape "
                   << input.name() << "[0]=d0,d1,... " << input.name()
                   << "[1]=..., one entry per element (" << input.name()
                   << "[]= for an empty one)",
               nullptr;
      const ::onnx::TensorShapeProto *declared =
          elem.tensor_type().has_shape() ? &elem.tensor_type().shape()
                                         : nullptr;
      sequenceInputs.push_back({input.name(),
                                {static_cast<unsigned>(argTypes.size()),
                                 static_cast<unsigned>(shapes.size())}});
      for (auto [k, shape] : llvm::enumerate(shapes)) {
        if (declared && declared->dim_size() != static_cast<int>(shape.size()))
          return emitError(fileLoc, "--input-shape for '")
                     << input.name() << "[" << k << "]' has rank "
                     << shape.size() << " but the model declares rank "
                     << declared->dim_size() << " for the elements",
                 nullptr;
        for (auto [i, d] : llvm::enumerate(shape))
          if (declared && declared->dim(i).has_dim_value() &&
              declared->dim(i).dim_value() != d)
            return emitError(fileLoc, "--input-shape for '")
                       << input.name() << "[" << k << "]' sets dim " << i
                       << " to " << d << " but the model fixes it to "
                       << declared->dim(i).dim_value(),
                   nullptr;
        argTypes.push_back(RankedTensorType::get(shape, elementType));
        argNames.push_back(input.name() + "[" + std::to_string(k) + "]");
      }
      continue;
    }
    FailureOr<Type> t =
        convertType(input.type(), "graph input '" + input.name() + "'");
    if (failed(t))
      return nullptr;
    auto ranked = dyn_cast<RankedTensorType>(*t);
    if (!ranked)
      return emitError(fileLoc, "graph input '")
                 << input.name()
                 << "' has no shape; give one with --input-shape "
                 << input.name() << "=d0,d1,...",
             nullptr;
    for (auto [i, d] : llvm::enumerate(ranked.getShape())) {
      if (!ShapedType::isDynamic(d))
        continue;
      const auto &dim = input.type().tensor_type().shape().dim(i);
      InFlightDiagnostic diag = emitError(fileLoc, "graph input '")
                                << input.name() << "' has dynamic dim " << i;
      if (dim.has_dim_param())
        diag << " ('" << dim.dim_param() << "')";
      diag << " of shape " << shapeToString(ranked.getShape())
           << "; pin it with --input-shape " << input.name() << "=...";
      return nullptr;
    }
    argTypes.push_back(*t);
    argNames.push_back(input.name());
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   b.getFunctionType(argTypes, {}));
  func->setAttr(dlc::kGraphNameAttr, b.getStringAttr(graph.name()));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    dlc::setIOName(func, dlc::IOSide::Argument, i, name);
    values[name] = entry->getArgument(i);
  }
  builder.setInsertionPointToStart(entry);
  noneValue =
      dlc::onnx::NoneOp::create(builder, fileLoc, builder.getNoneType());
  // An empty optional input is an Optional node without an input.
  for (const std::string &name : emptyOptionalInputs)
    values[name] =
        dlc::onnx::NodeOp::create(
            builder, NameLoc::get(b.getStringAttr(name), fileLoc),
            TypeRange{builder.getNoneType()}, builder.getStringAttr("Optional"),
            builder.getStringAttr(""), builder.getI64IntegerAttr(15),
            StringAttr(), builder.getDictionaryAttr({}), ArrayAttr(),
            ValueRange(), /*graphsCount=*/0)
            .getResult(0);
  for (auto &[name, range] : sequenceInputs) {
    auto elements = entry->getArguments().slice(range.first, range.second);
    auto construct = dlc::onnx::NodeOp::create(
        builder, NameLoc::get(b.getStringAttr(name), fileLoc),
        TypeRange{builder.getNoneType()},
        builder.getStringAttr("SequenceConstruct"), builder.getStringAttr(""),
        builder.getI64IntegerAttr(11), StringAttr(),
        builder.getDictionaryAttr({}), ArrayAttr(), ValueRange(elements),
        /*graphsCount=*/0);
    values[name] = construct.getResult(0);
  }

  for (::onnx::TensorProto &init : *graph.mutable_initializer()) {
    Location loc = NameLoc::get(b.getStringAttr(init.name()), fileLoc);
    FailureOr<ElementsAttr> value = importTensor(init, loc);
    if (failed(value))
      return nullptr;
    values[init.name()] =
        arith::ConstantOp::create(builder, loc, cast<TypedAttr>(*value));
  }
  for (auto [i, node] : llvm::enumerate(*graph.mutable_node()))
    if (failed(importNode(node, i)))
      return nullptr;

  SmallVector<Value> results;
  for (const ::onnx::ValueInfoProto &output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end())
      return emitError(fileLoc, "graph output '")
                 << output.name() << "' is not produced by any node",
             nullptr;
    results.push_back(it->second);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    dlc::setIOName(func, dlc::IOSide::Result, i, output.name());
  if (noneValue.use_empty())
    noneValue.getDefiningOp()->erase();
  return module;
}

} // namespace

std::string dlc::parseInputShapeSpec(StringRef spec,
                                     ONNXImportOptions &options) {
  SmallVector<StringRef> entries;
  spec.split(entries, ';', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [name, dims] = entry.split('=');
    name = name.trim();
    // NAME=none : the optional input NAME is empty.
    if (dims.trim() == "none") {
      options.emptyOptionals.insert(name);
      continue;
    }
    // NAME[]= : the sequence input NAME is empty.
    if (name.ends_with("[]") && name.size() > 2 && dims.trim().empty()) {
      options.inputShapes[name] = {};
      continue;
    }
    if (name.empty() || !entry.contains('='))
      return ("--input-shape entry '" + entry +
              "' is not of the form name=d0,d1,...")
          .str();
    // NAME= : a scalar (a sequence's element may be one).
    SmallVector<int64_t> shape;
    SmallVector<StringRef> parts;
    if (!dims.trim().empty())
      dims.split(parts, ',');
    for (StringRef part : parts) {
      int64_t d;
      if (part.trim().getAsInteger(10, d) || d < 0)
        return ("--input-shape for '" + name + "': '" + part.trim() +
                "' is not a non-negative integer")
            .str();
      shape.push_back(d);
    }
    options.inputShapes[name] = shape;
  }
  return "";
}

LogicalResult dlc::parseONNXModel(MLIRContext &context, StringRef buffer,
                                  StringRef bufferName, bool isText,
                                  ::onnx::ModelProto &model) {
  Location fileLoc = FileLineColLoc::get(&context, bufferName, 0, 0);
  if (isText) {
    std::string text = buffer.str();
    ::onnx::Status status;
    try {
      status = ::onnx::OnnxParser::Parse(model, text.c_str());
    } catch (const std::exception &e) {
      return emitError(fileLoc, "cannot parse the textual ONNX model: ")
             << e.what();
    }
    if (!status.IsOK())
      return emitError(fileLoc, "cannot parse the textual ONNX model: ")
             << status.ErrorMessage();
    return success();
  }
  if (buffer.size() > static_cast<size_t>(INT_MAX))
    return emitError(fileLoc, "the protobuf file is ")
           << buffer.size()
           << " bytes; protobuf cannot hold more than 2 GB, so models "
              "that large must keep weights in external data files";
  google::protobuf::io::ArrayInputStream stream(
      buffer.data(), static_cast<int>(buffer.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return emitError(fileLoc, "not a valid ONNX model: the protobuf is "
                              "malformed or truncated");
  return success();
}

std::vector<dlc::ONNXGraphNode>
dlc::describeONNXModel(const ::onnx::ModelProto &model) {
  std::vector<ONNXGraphNode> nodes;
  for (const auto &[index, node] : llvm::enumerate(model.graph().node())) {
    ONNXGraphNode n;
    n.name = scopedNodeName(node, index, /*scope=*/"");
    n.opType = node.op_type();
    n.inputs.assign(node.input().begin(), node.input().end());
    n.outputs.assign(node.output().begin(), node.output().end());
    nodes.push_back(std::move(n));
  }
  return nodes;
}

LogicalResult dlc::describeONNXFile(MLIRContext &context, StringRef path,
                                    std::vector<ONNXGraphNode> &nodes) {
  ::onnx::ModelProto model;
  if (failed(readONNXFile(context, path, model)))
    return failure();
  nodes = describeONNXModel(model);
  return success();
}

LogicalResult dlc::describeONNXBuffer(MLIRContext &context, StringRef buffer,
                                      StringRef bufferName, bool isText,
                                      std::vector<ONNXGraphNode> &nodes) {
  ::onnx::ModelProto model;
  if (failed(parseONNXModel(context, buffer, bufferName, isText, model)))
    return failure();
  nodes = describeONNXModel(model);
  return success();
}

LogicalResult dlc::readONNXFile(MLIRContext &context, StringRef path,
                                ::onnx::ModelProto &model) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!file)
    return emitError(FileLineColLoc::get(&context, path, 0, 0), "cannot read '")
           << path << "': " << file.getError().message();
  StringRef buffer = (*file)->getBuffer();
  bool isText = path.ends_with(".onnxtxt") || buffer.ltrim().starts_with("<") ||
                buffer.ltrim().starts_with("#");
  return parseONNXModel(context, buffer, path, isText, model);
}

OwningOpRef<ModuleOp> dlc::importONNXModel(MLIRContext &context,
                                           ::onnx::ModelProto &model,
                                           StringRef modelName,
                                           const ONNXImportOptions &options) {
  context.loadDialect<dlc::onnx::ONNXDialect, arith::ArithDialect,
                      func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&context, modelName, 0, 0);
  std::string baseDir = options.externalDataDirectory;
  if (baseDir.empty()) {
    SmallString<256> dir(modelName);
    llvm::sys::path::remove_filename(dir);
    baseDir = dir.empty() ? "." : std::string(dir);
  }
  ModelImporter importer(context, model, options, fileLoc, baseDir);
  return importer.run();
}

OwningOpRef<ModuleOp> dlc::importONNXBuffer(MLIRContext &context,
                                            StringRef buffer,
                                            StringRef bufferName, bool isText,
                                            const ONNXImportOptions &options) {
  auto model = std::make_unique<::onnx::ModelProto>();
  if (failed(parseONNXModel(context, buffer, bufferName, isText, *model)))
    return nullptr;
  return importONNXModel(context, *model, bufferName, options);
}

OwningOpRef<ModuleOp> dlc::importONNXFile(MLIRContext &context, StringRef path,
                                          const ONNXImportOptions &options) {
  auto model = std::make_unique<::onnx::ModelProto>();
  if (failed(readONNXFile(context, path, *model)))
    return nullptr;
  return importONNXModel(context, *model, path, options);
}
