//===- dlc-fuzz-compile.cpp - libFuzzer target for the compiler front
//--------===//
//
// Feeds arbitrary bytes to the compiler as a binary ONNX model and runs the
// front half of dlc-compile on it: parse, validate, import (with ONNX shape
// inference), legalize, optimize and form dispatches for the host CPU, with
// no code generation. The property checked, beyond "no crash, no sanitizer
// report, no assert": every model the compiler refuses gets at least one
// error diagnostic, so a user always learns why.
//
// Built twice from this file:
//  - dlc-fuzz-compile: libFuzzer's own byte-level mutations;
//  - dlc-fuzz-compile-structured (DLC_FUZZ_STRUCTURED): a custom mutator
//    that parses the input as a ModelProto and changes it at the protobuf
//    level (dims, element types, attributes, node inputs and outputs, op
//    types, node order, initializers, opsets), so that most mutants are
//    well-formed protobufs that reach the validation and the passes behind
//    it; inputs that do not parse get byte-level mutations.
//
// External data never resolves: the model's directory is an empty one.
// DLC_FUZZ_VERBOSE=1 in the environment prints every diagnostic.
//
//===----------------------------------------------------------------------===//

#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/TargetDescription.h"
#include "dlc/Tools/Registration.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#ifdef DLC_FUZZ_STRUCTURED
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed);
#endif

namespace {

/// One context for the whole run: creating one and loading its dialects per
/// input would cost more than most inputs.
struct FuzzState {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  dlc::CompileOptions options;
  std::string emptyDirectory;
  /// DLC_FUZZ_VERBOSE=1 prints the diagnostics (to see why an input fails).
  bool verbose = std::getenv("DLC_FUZZ_VERBOSE") != nullptr;

  FuzzState() {
    dlc::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    llvm::Expected<dlc::TargetDescription> target =
        dlc::TargetDescription::parse("cpu");
    if (!target) {
      std::fprintf(stderr, "dlc-fuzz-compile: %s\n",
                   llvm::toString(target.takeError()).c_str());
      std::abort();
    }
    options.target = *target;
    options.emit = dlc::EmitKind::MLIR;
    options.stopAfter = dlc::Stage::Dispatch;
    char pattern[] = "/tmp/dlc-fuzz-XXXXXX";
    if (!mkdtemp(pattern))
      std::abort();
    emptyDirectory = pattern;
    options.importOptions.externalDataDirectory = emptyDirectory;
  }
};

FuzzState &state() {
  static FuzzState fuzzState;
  return fuzzState;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzState &fuzz = state();
  bool sawError = false;
  ScopedDiagnosticHandler handler(fuzz.context.get(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      sawError = true;
    if (fuzz.verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  llvm::StringRef buffer(reinterpret_cast<const char *>(data), size);
  if (failed(dlc::compileONNXBuffer(*fuzz.context, buffer, "fuzz.onnx",
                                    /*isText=*/false, fuzz.options,
                                    llvm::nulls())) &&
      !sawError) {
    std::fprintf(stderr, "dlc-fuzz-compile: the compiler failed without an "
                         "error diagnostic\n");
    std::abort();
  }
  return 0;
}

#ifdef DLC_FUZZ_STRUCTURED

namespace {

using Rng = std::minstd_rand;

size_t pick(Rng &rng, size_t count) {
  return std::uniform_int_distribution<size_t>(0, count - 1)(rng);
}

/// Values that break assumptions about sizes, counts and axes.
int64_t interestingInt(Rng &rng) {
  static const int64_t values[] = {0,
                                   1,
                                   2,
                                   3,
                                   4,
                                   7,
                                   -1,
                                   -2,
                                   -3,
                                   64,
                                   255,
                                   256,
                                   65536,
                                   int64_t(1) << 31,
                                   (int64_t(1) << 32) + 1,
                                   std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::min()};
  return values[pick(rng, std::size(values))];
}

float interestingFloat(Rng &rng) {
  static const float values[] = {0.0f,
                                 -0.0f,
                                 1.0f,
                                 -1.0f,
                                 0.5f,
                                 1e-30f,
                                 1e30f,
                                 std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 std::numeric_limits<float>::denorm_min()};
  return values[pick(rng, std::size(values))];
}

/// Every graph in the model: the main graph and the bodies of If, Loop and
/// Scan nodes, at any depth.
void collectGraphs(onnx::GraphProto *graph,
                   std::vector<onnx::GraphProto *> &graphs) {
  graphs.push_back(graph);
  for (onnx::NodeProto &node : *graph->mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        collectGraphs(attr.mutable_g(), graphs);
      for (onnx::GraphProto &body : *attr.mutable_graphs())
        collectGraphs(&body, graphs);
    }
}

/// The names a node input could refer to in `graph`.
std::vector<std::string> valueNames(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &input : graph.input())
    names.push_back(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    names.push_back(init.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      names.push_back(output);
  return names;
}

bool mutateShape(Rng &rng, onnx::GraphProto &graph) {
  std::vector<onnx::ValueInfoProto *> infos;
  for (auto *list : {graph.mutable_input(), graph.mutable_output(),
                     graph.mutable_value_info()})
    for (onnx::ValueInfoProto &info : *list)
      infos.push_back(&info);
  if (infos.empty())
    return false;
  onnx::TypeProto *type = infos[pick(rng, infos.size())]->mutable_type();
  if (!type->has_tensor_type())
    return false;
  onnx::TypeProto_Tensor *tensor = type->mutable_tensor_type();
  switch (pick(rng, 5)) {
  case 0: // the element type
    tensor->set_elem_type(static_cast<int32_t>(pick(rng, 24)));
    return true;
  case 1: // one more dim
    tensor->mutable_shape()->add_dim()->set_dim_value(interestingInt(rng));
    return true;
  case 2: // one dim less, or no shape at all
    if (tensor->shape().dim_size() == 0) {
      tensor->clear_shape();
      return true;
    }
    tensor->mutable_shape()->mutable_dim()->RemoveLast();
    return true;
  default: { // one dim's value, or a symbol in its place
    if (tensor->shape().dim_size() == 0)
      return false;
    onnx::TensorShapeProto_Dimension *dim =
        tensor->mutable_shape()->mutable_dim(
            static_cast<int>(pick(rng, tensor->shape().dim_size())));
    if (pick(rng, 4) == 0)
      dim->set_dim_param(pick(rng, 2) ? "N" : "");
    else
      dim->set_dim_value(interestingInt(rng));
    return true;
  }
  }
}

bool mutateAttribute(Rng &rng, onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  onnx::NodeProto *node =
      graph.mutable_node(static_cast<int>(pick(rng, graph.node_size())));
  if (node->attribute_size() == 0 || pick(rng, 8) == 0) {
    // An attribute the node may or may not take.
    static const char *names[] = {
        "axis", "axes",     "perm",         "strides", "pads",      "group",
        "to",   "keepdims", "kernel_shape", "epsilon", "dilations", "mode"};
    onnx::AttributeProto *attr = node->add_attribute();
    attr->set_name(names[pick(rng, std::size(names))]);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(interestingInt(rng));
    return true;
  }
  int attrIndex = static_cast<int>(pick(rng, node->attribute_size()));
  onnx::AttributeProto *attr = node->mutable_attribute(attrIndex);
  switch (pick(rng, 6)) {
  case 0: // a wrong type tag for the value it holds
    attr->set_type(
        static_cast<onnx::AttributeProto_AttributeType>(pick(rng, 15)));
    return true;
  case 1:
    if (attr->ints_size() == 0)
      attr->add_ints(interestingInt(rng));
    else if (pick(rng, 2))
      attr->mutable_ints()->RemoveLast();
    else
      attr->set_ints(static_cast<int>(pick(rng, attr->ints_size())),
                     interestingInt(rng));
    return true;
  case 2:
    attr->set_i(interestingInt(rng));
    return true;
  case 3:
    attr->set_f(interestingFloat(rng));
    if (attr->floats_size() > 0)
      attr->set_floats(static_cast<int>(pick(rng, attr->floats_size())),
                       interestingFloat(rng));
    return true;
  case 4:
    attr->set_s(pick(rng, 2) ? "" : "constant");
    return true;
  default: // gone
    node->mutable_attribute()->DeleteSubrange(attrIndex, 1);
    return true;
  }
}

bool mutateNode(Rng &rng, onnx::GraphProto &graph) {
  if (graph.node_size() == 0)
    return false;
  int index = static_cast<int>(pick(rng, graph.node_size()));
  onnx::NodeProto *node = graph.mutable_node(index);
  std::vector<std::string> names = valueNames(graph);
  switch (pick(rng, 8)) {
  case 0: // an input from elsewhere in the graph, possibly a later node
    if (node->input_size() == 0 || names.empty())
      return false;
    node->set_input(static_cast<int>(pick(rng, node->input_size())),
                    names[pick(rng, names.size())]);
    return true;
  case 1: // an input more or less, or an omitted optional one
    if (pick(rng, 3) == 0 && node->input_size() > 0)
      node->mutable_input()->RemoveLast();
    else
      node->add_input(names.empty() || pick(rng, 3) == 0
                          ? std::string()
                          : names[pick(rng, names.size())]);
    return true;
  case 2: // an output renamed onto an existing value, or one more output
    if (node->output_size() > 0 && !names.empty() && pick(rng, 2))
      node->set_output(static_cast<int>(pick(rng, node->output_size())),
                       names[pick(rng, names.size())]);
    else
      node->add_output("fuzz_extra");
    return true;
  case 3: { // another operator with the same operands
    static const char *ops[] = {"Add",
                                "Relu",
                                "Conv",
                                "MatMul",
                                "Gemm",
                                "Reshape",
                                "Transpose",
                                "Concat",
                                "Slice",
                                "Gather",
                                "Softmax",
                                "ReduceSum",
                                "MaxPool",
                                "Resize",
                                "Cast",
                                "Expand",
                                "Where",
                                "Split",
                                "Squeeze",
                                "Unsqueeze",
                                "Pad",
                                "TopK",
                                "Einsum",
                                "LayerNormalization",
                                "QuantizeLinear",
                                "DequantizeLinear",
                                "If",
                                "Loop",
                                "Constant"};
    node->set_op_type(ops[pick(rng, std::size(ops))]);
    return true;
  }
  case 4: // gone
    graph.mutable_node()->DeleteSubrange(index, 1);
    return true;
  case 5: { // twice
    onnx::NodeProto copy = *node;
    *graph.add_node() = copy;
    return true;
  }
  case 6: // out of order
    if (graph.node_size() < 2)
      return false;
    graph.mutable_node()->SwapElements(
        index, static_cast<int>(pick(rng, graph.node_size())));
    return true;
  default: // a domain
    node->set_domain(pick(rng, 2) ? "com.microsoft" : "ai.onnx.ml");
    return true;
  }
}

bool mutateInitializer(Rng &rng, onnx::GraphProto &graph) {
  if (graph.initializer_size() == 0)
    return false;
  onnx::TensorProto *init = graph.mutable_initializer(
      static_cast<int>(pick(rng, graph.initializer_size())));
  switch (pick(rng, 5)) {
  case 0:
    init->set_data_type(static_cast<int32_t>(pick(rng, 24)));
    return true;
  case 1:
    if (init->dims_size() == 0 || pick(rng, 3) == 0)
      init->add_dims(interestingInt(rng));
    else
      init->set_dims(static_cast<int>(pick(rng, init->dims_size())),
                     interestingInt(rng));
    return true;
  case 2: // fewer bytes than the dims say
    if (init->raw_data().empty())
      init->set_raw_data(std::string(pick(rng, 9), '\x7f'));
    else
      init->mutable_raw_data()->resize(pick(rng, init->raw_data().size()));
    return true;
  case 3: // the value in a typed field instead, or both
    init->add_float_data(interestingFloat(rng));
    init->add_int64_data(interestingInt(rng));
    return true;
  default: // stored elsewhere (never found: an empty directory)
    init->set_data_location(onnx::TensorProto::EXTERNAL);
    {
      onnx::StringStringEntryProto *entry = init->add_external_data();
      entry->set_key("location");
      entry->set_value(pick(rng, 2) ? "../weights.bin" : "w.bin");
    }
    return true;
  }
}

bool mutateModel(Rng &rng, onnx::ModelProto &model) {
  switch (pick(rng, 10)) {
  case 0:
    if (model.opset_import_size() == 0)
      return false;
    model.mutable_opset_import(0)->set_version(
        static_cast<int64_t>(pick(rng, 26)));
    return true;
  case 1:
    model.set_ir_version(static_cast<int64_t>(pick(rng, 14)));
    return true;
  default:
    break;
  }
  std::vector<onnx::GraphProto *> graphs;
  collectGraphs(model.mutable_graph(), graphs);
  onnx::GraphProto &graph = *graphs[pick(rng, graphs.size())];
  switch (pick(rng, 4)) {
  case 0:
    return mutateShape(rng, graph);
  case 1:
    return mutateAttribute(rng, graph);
  case 2:
    return mutateNode(rng, graph);
  default:
    return mutateInitializer(rng, graph);
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (pick(rng, 8) == 0 ||
      !model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph())
    return LLVMFuzzerMutate(data, size, maxSize);
  // A few changes at once now and then: single ones rarely get past
  // validation that checks several things against each other.
  size_t changes = 1 + (pick(rng, 4) == 0 ? pick(rng, 3) : 0);
  bool changed = false;
  for (size_t i = 0; i < changes; ++i)
    changed |= mutateModel(rng, model);
  std::string bytes;
  if (!changed || !model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::copy(bytes.begin(), bytes.end(), data);
  return bytes.size();
}

#endif // DLC_FUZZ_STRUCTURED
