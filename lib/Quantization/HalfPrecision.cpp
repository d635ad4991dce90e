//===- HalfPrecision.cpp - dlc-compile --precision=fp16|bf16
//----------------===//
//
// Mixed precision at compile time: the model's float32 operators are
// rewritten to compute on 16-bit tensors (IEEE half or bfloat16), so that
// every weight and every activation between kernels is stored in 16 bits.
// What stays float32:
//   - the graph's inputs and outputs (a Cast at the first and last 16-bit
//     operator; the caller's tensors keep their types);
//   - operators whose numbers do not survive 16 bits or whose types are
//     not their data's (below: kKeptOps), control flow (its subgraphs are
//     left alone, and so are the outer values they capture), operators of
//     other domains, and the nodes named by --keep-float;
//   - every operand whose type the operator's schema fixes (Resize's
//     scales, LayerNormalization's statistics: a type parameter that no
//     float32 input binds stays as it is).
// A kept operator reading a 16-bit value reads it through a Cast back to
// float32; a 16-bit operator reading a float32 constant reads a converted
// copy (rounded to nearest, ties to even), so the model's weights shrink
// by half. Inside the kernels, convolutions, matrix products, reductions
// and normalizations accumulate in float32 whatever their operands' type
// (lib/Conversion/ONNXToLinalg), so "16 bits" is a storage format with
// float32 sums, as docs/quantization.md describes.
//
// The rewritten model is plain ONNX that ONNX Runtime runs (--emit=onnx):
// the oracle for dlc's 16-bit kernels.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "ModelGraph.h"

#include "dlc/Pipelines/CompileModel.h"
#include "dlc/Quantization/Quantize.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace dlc;

std::optional<PrecisionOptions> dlc::parsePrecisionSpec(llvm::StringRef spec,
                                                        std::string &error) {
  PrecisionOptions options;
  if (spec == "fp16") {
    options.type = PrecisionOptions::F16;
  } else if (spec == "bf16") {
    options.type = PrecisionOptions::BF16;
  } else {
    error = "--precision=" + spec.str() +
            ": unknown precision; expected fp32 (the default), fp16 or bf16";
    return std::nullopt;
  }
  return options;
}

llvm::StringRef PrecisionOptions::spelling() const {
  return type == F16 ? "fp16" : "bf16";
}

namespace {

/// Operators that keep float32 whatever their operands: their values leave
/// 16 bits' range or precision (indices and counts built in float, running
/// sums, box coordinates compared for overlap), their output type is not
/// their input's (Cast, CastLike, the random generators, ConstantOfShape,
/// EyeLike). Quantized models are refused before (kQuantizedOps).
const llvm::StringSet<> kKeptOps = {
    "Cast",
    "CastLike",
    "Range",
    "CumSum",
    "NonMaxSuppression",
    "RoiAlign",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "EyeLike",
    "ConstantOfShape",
};

/// Operators of quantized models (QDQ, QOperator and dynamic formats):
/// their integer kernels read and write float32 around them. (Weight-only
/// ones are not among them: MatMulNBits computes in 16 bits like any
/// product, GatherBlockQuantized stays float32 as an operator of another
/// domain.)
const llvm::StringSet<> kQuantizedOps = {
    "QuantizeLinear",
    "DequantizeLinear",
    "DynamicQuantizeLinear",
    "QLinearConv",
    "QLinearMatMul",
    "ConvInteger",
    "MatMulInteger",
    "QGemm",
    "QLinearAdd",
    "QLinearMul",
    "QLinearConcat",
    "QLinearAveragePool",
    "QLinearGlobalAveragePool",
    "QLinearSigmoid",
    "QLinearLeakyRelu",
    "DynamicQuantizeLSTM",
    "DynamicQuantizeMatMul",
    "MatMulIntegerToFloat",
};

/// com.microsoft.MatMulNBits as far as the rewrite needs it: A, scales,
/// float zero points, bias and Y share T1, which ONNX Runtime's kernels
/// take as float32 or float16 (not bfloat16); the packed weights and
/// g_idx are integers. (ONNX's registry has no contrib schemas.)
const onnx::OpSchema &matMulNBitsSchema() {
  static const onnx::OpSchema schema = [] {
    onnx::OpSchema s("MatMulNBits", __FILE__, __LINE__);
    s.SetDomain("com.microsoft")
        .Input(0, "A", "", "T1")
        .Input(1, "B", "", "T2")
        .Input(2, "scales", "", "T1")
        .Input(3, "zero_points", "", "T3", onnx::OpSchema::Optional)
        .Input(4, "g_idx", "", "T4", onnx::OpSchema::Optional)
        .Input(5, "bias", "", "T1", onnx::OpSchema::Optional)
        .Output(0, "Y", "", "T1")
        .TypeConstraint("T1", {"tensor(float)", "tensor(float16)"}, "")
        .TypeConstraint("T2", {"tensor(uint8)"}, "")
        .TypeConstraint(
            "T3", {"tensor(uint8)", "tensor(float)", "tensor(float16)"}, "")
        .TypeConstraint("T4", {"tensor(int32)"}, "");
    return s;
  }();
  return schema;
}

/// The schema the rewrite reads `node` by: ONNX's at the model's opset
/// for the default domain, the one above for MatMulNBits, else none (the
/// operator stays float32).
const onnx::OpSchema *schemaOf(const onnx::NodeProto &node,
                               const onnx::ModelProto &model) {
  if (isDefaultDomain(node))
    return onnx::OpSchemaRegistry::Schema(node.op_type(), defaultOpset(model),
                                          "");
  if (node.domain() == "com.microsoft" && node.op_type() == "MatMulNBits")
    return &matMulNBitsSchema();
  return nullptr;
}

bool hasSubgraph(const onnx::NodeProto &node) {
  return llvm::any_of(node.attribute(), [](const onnx::AttributeProto &a) {
    return a.type() == onnx::AttributeProto::GRAPH ||
           a.type() == onnx::AttributeProto::GRAPHS;
  });
}

/// The names a node's subgraphs read (their own values included; only
/// the outer ones matter to the caller).
void collectSubgraphReads(const onnx::GraphProto &graph,
                          std::map<std::string, int> &reads) {
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH)
        collectReads(a.g(), reads);
      for (const onnx::GraphProto &g : a.graphs())
        collectReads(g, reads);
    }
}

/// The formal parameter that actual operand `index` binds to.
const onnx::OpSchema::FormalParameter *
formal(const std::vector<onnx::OpSchema::FormalParameter> &params, int index) {
  if (params.empty())
    return nullptr;
  if (index < static_cast<int>(params.size()))
    return &params[index];
  if (params.back().GetOption() == onnx::OpSchema::Variadic)
    return &params.back();
  return nullptr;
}

/// The allowed types of type parameter `name` of `schema`, or null when
/// `name` is a fixed type ("tensor(float)").
const std::vector<std::string> *allowedTypes(const onnx::OpSchema &schema,
                                             const std::string &name) {
  for (const auto &param : schema.typeConstraintParams())
    if (param.type_param_str == name)
      return &param.allowed_type_strs;
  return nullptr;
}

/// Rounds float32 values to `half` (IEEE half or bfloat16), to nearest with
/// ties to even, as little-endian 16-bit words. Finite values beyond the
/// 16-bit range become its largest finite value, not infinity: models
/// write "minus infinity" as float32's lowest value (an attention mask's
/// (1 - mask) * -3.4e38), and 0 times an infinity would be NaN. `clamped`
/// counts them.
std::vector<uint16_t> roundTo16(llvm::ArrayRef<float> values,
                                const llvm::fltSemantics &half,
                                int64_t &clamped) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    llvm::APFloat v(values[i]);
    bool lost = false;
    v.convert(half, llvm::APFloat::rmNearestTiesToEven, &lost);
    if (v.isInfinity() && std::isfinite(values[i])) {
      v = llvm::APFloat::getLargest(half, /*Negative=*/values[i] < 0);
      ++clamped;
    }
    out[i] = static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
  }
  return out;
}

/// The rewrite of one graph.
class Rewriter {
public:
  Rewriter(onnx::ModelProto &model, const PrecisionOptions &options,
           std::string baseDir)
      : model(model), graph(*model.mutable_graph()), options(options),
        baseDir(std::move(baseDir)),
        halfType(options.type == PrecisionOptions::F16
                     ? onnx::TensorProto::FLOAT16
                     : onnx::TensorProto::BFLOAT16),
        halfSemantics(options.type == PrecisionOptions::F16
                          ? llvm::APFloat::IEEEhalf()
                          : llvm::APFloat::BFloat()) {}

  /// Rewrites the graph; `error` says why when it fails.
  bool run(std::string &error);

  std::vector<std::string> converted, kept;
  int64_t floatConstantBytes = 0, halfConstantBytes = 0;
  /// Finite constant values beyond the 16-bit range, clamped to it.
  int64_t clampedValues = 0;

private:
  void recordTypes();
  /// Whether `node` computes in 16 bits, and the type parameters that its
  /// float32 inputs bind (those become 16-bit).
  std::set<std::string> halfParams(const onnx::NodeProto &node,
                                   const onnx::OpSchema *schema) const;
  /// Records the element types of `node`'s results in the model as it
  /// was: what its schema fixes or binds to an input's type.
  void recordOutputTypes(const onnx::NodeProto &node,
                         const onnx::OpSchema *schema);
  /// The 16-bit version of float32 value `name`, made before `out`'s next
  /// node when it does not exist yet.
  std::string halfOf(const std::string &name, std::vector<onnx::NodeProto> &out,
                     std::string &error);
  /// The float32 version of 16-bit value `name`.
  std::string floatOf(const std::string &name,
                      std::vector<onnx::NodeProto> &out);
  onnx::NodeProto cast(const std::string &from, const std::string &to,
                       int type);

  onnx::ModelProto &model;
  onnx::GraphProto &graph;
  const PrecisionOptions &options;
  std::string baseDir;
  int halfType;
  const llvm::fltSemantics &halfSemantics;

  std::set<std::string> used;
  /// Element types known for values: graph inputs, constants, value_info,
  /// and what the nodes before produce.
  std::map<std::string, int> types;
  std::map<std::string, const onnx::TensorProto *> constants;
  /// Values that must be float32 under their own name: graph outputs and
  /// outer values that subgraphs capture.
  std::set<std::string> floatNames;
  /// float32 value -> its 16-bit version, and 16-bit value -> its float32
  /// version (Casts and converted constants made so far).
  std::map<std::string, std::string> halfVersion, floatVersion;
  /// Values whose own name now holds 16 bits.
  std::set<std::string> retyped;
  std::vector<onnx::TensorProto> newConstants;
};

void Rewriter::recordTypes() {
  auto note = [&](const onnx::ValueInfoProto &v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type())
      types[v.name()] = v.type().tensor_type().elem_type();
  };
  for (const onnx::ValueInfoProto &v : graph.input())
    note(v);
  for (const onnx::ValueInfoProto &v : graph.value_info())
    note(v);
  for (const onnx::ValueInfoProto &v : graph.output())
    note(v);
  for (const auto &[name, tensor] : constants)
    types[name] = tensor->data_type();
}

void Rewriter::recordOutputTypes(const onnx::NodeProto &node,
                                 const onnx::OpSchema *schema) {
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &name = node.output(i);
    if (name.empty() || types.count(name))
      continue; // value_info or a constant said it
    if (node.op_type() == "Cast" && isDefaultDomain(node)) {
      types[name] = intAttr(node, "to", 0);
      continue;
    }
    if (node.op_type() == "ConstantOfShape" && isDefaultDomain(node)) {
      const onnx::AttributeProto *value = findAttr(node, "value");
      types[name] = value ? value->t().data_type() : onnx::TensorProto::FLOAT;
      continue;
    }
    const onnx::OpSchema::FormalParameter *p =
        schema ? formal(schema->outputs(), i) : nullptr;
    if (!p)
      continue;
    if (p->GetTypeStr() == "tensor(float)") {
      types[name] = onnx::TensorProto::FLOAT;
      continue;
    }
    for (int j = 0; j < node.input_size(); ++j) {
      const onnx::OpSchema::FormalParameter *q = formal(schema->inputs(), j);
      auto t = types.find(node.input(j));
      if (q && q->GetTypeStr() == p->GetTypeStr() && t != types.end()) {
        types[name] = t->second;
        break;
      }
    }
  }
}

std::set<std::string> Rewriter::halfParams(const onnx::NodeProto &node,
                                           const onnx::OpSchema *schema) const {
  if (!schema || kKeptOps.contains(node.op_type()) || hasSubgraph(node) ||
      llvm::is_contained(options.keepFloat, nodeName(node)))
    return {};
  const char *half = halfType == onnx::TensorProto::FLOAT16
                         ? "tensor(float16)"
                         : "tensor(bfloat16)";
  std::set<std::string> params;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      continue;
    auto type = types.find(node.input(i));
    if (type == types.end() || type->second != onnx::TensorProto::FLOAT)
      continue;
    const onnx::OpSchema::FormalParameter *p = formal(schema->inputs(), i);
    if (!p)
      continue;
    const std::vector<std::string> *allowed =
        allowedTypes(*schema, p->GetTypeStr());
    if (allowed && llvm::is_contained(*allowed, half))
      params.insert(p->GetTypeStr());
  }
  return params;
}

onnx::NodeProto Rewriter::cast(const std::string &from, const std::string &to,
                               int type) {
  onnx::NodeProto node;
  node.set_op_type("Cast");
  node.set_name(freshName(to + "_cast", used));
  node.add_input(from);
  node.add_output(to);
  addIntAttr(node, "to", type);
  return node;
}

std::string Rewriter::halfOf(const std::string &name,
                             std::vector<onnx::NodeProto> &out,
                             std::string &error) {
  if (retyped.count(name))
    return name;
  auto known = halfVersion.find(name);
  if (known != halfVersion.end())
    return known->second;
  std::string half = freshName(name + "_" + options.spelling().str(), used);
  auto constant = constants.find(name);
  if (constant != constants.end()) {
    std::optional<std::vector<float>> values =
        readFloats(*constant->second, baseDir, error);
    if (!values) {
      error = "the constant '" + name + "' " + error;
      return "";
    }
    std::vector<uint16_t> words =
        roundTo16(*values, halfSemantics, clampedValues);
    llvm::SmallVector<int64_t> dims(constant->second->dims().begin(),
                                    constant->second->dims().end());
    newConstants.push_back(rawTensor(half, halfType, dims, words.data(),
                                     words.size() * sizeof(uint16_t)));
    floatConstantBytes += values->size() * sizeof(float);
    halfConstantBytes += words.size() * sizeof(uint16_t);
  } else {
    out.push_back(cast(name, half, halfType));
  }
  halfVersion[name] = half;
  return half;
}

std::string Rewriter::floatOf(const std::string &name,
                              std::vector<onnx::NodeProto> &out) {
  auto known = floatVersion.find(name);
  if (known != floatVersion.end())
    return known->second;
  std::string single = freshName(name + "_fp32", used);
  out.push_back(cast(name, single, onnx::TensorProto::FLOAT));
  floatVersion[name] = single;
  return single;
}

bool Rewriter::run(std::string &error) {
  used = usedNames(graph);
  constants = constantTensors(graph);
  recordTypes();
  for (const onnx::ValueInfoProto &v : graph.output())
    floatNames.insert(v.name());
  std::map<std::string, int> captured;
  collectSubgraphReads(graph, captured);
  for (const auto &[name, count] : captured)
    floatNames.insert(name);

  std::vector<onnx::NodeProto> nodes;
  for (const onnx::NodeProto &original : graph.node()) {
    onnx::NodeProto node = original;
    const onnx::OpSchema *schema = schemaOf(node, model);
    std::set<std::string> params = halfParams(node, schema);
    recordOutputTypes(node, schema);
    if (params.empty()) {
      // A float32 operator: 16-bit values reach it through a Cast.
      bool readsFloat = false;
      for (std::string &input : *node.mutable_input()) {
        auto t = types.find(input);
        readsFloat |= t != types.end() && t->second == onnx::TensorProto::FLOAT;
        if (retyped.count(input))
          input = floatOf(input, nodes);
      }
      if (readsFloat && node.op_type() != "Constant")
        kept.push_back(nodeName(node));
      nodes.push_back(std::move(node));
      continue;
    }

    // A 16-bit operator: every operand of a converted type parameter is
    // read in 16 bits, and every result of one is written in 16 bits.
    for (int i = 0; i < node.input_size(); ++i) {
      const onnx::OpSchema::FormalParameter *p = formal(schema->inputs(), i);
      if (node.input(i).empty() || !p || !params.count(p->GetTypeStr()))
        continue;
      std::string half = halfOf(node.input(i), nodes, error);
      if (half.empty())
        return false;
      node.set_input(i, half);
    }
    std::vector<onnx::NodeProto> after;
    for (int i = 0; i < node.output_size(); ++i) {
      const onnx::OpSchema::FormalParameter *p = formal(schema->outputs(), i);
      const std::string name = node.output(i);
      if (name.empty())
        continue;
      if (!p || !params.count(p->GetTypeStr()))
        continue;
      if (floatNames.count(name)) {
        // Stays float32 under its name; the 16-bit value gets a new one.
        std::string half =
            freshName(name + "_" + options.spelling().str(), used);
        node.set_output(i, half);
        halfVersion[name] = half;
        floatVersion[half] = name;
        after.push_back(cast(half, name, onnx::TensorProto::FLOAT));
      } else {
        retyped.insert(name);
      }
    }
    converted.push_back(nodeName(original));
    nodes.push_back(std::move(node));
    llvm::append_range(nodes, after);
  }
  if (converted.empty()) {
    error = "nothing to convert: no operator of the model computes on float32 "
            "tensors that " +
            options.spelling().str() + " can hold";
    return false;
  }

  std::map<std::string, int> readBefore;
  collectReads(graph, readBefore);
  graph.clear_node();
  for (onnx::NodeProto &node : nodes)
    *graph.add_node() = std::move(node);
  for (onnx::TensorProto &t : newConstants) {
    // Before IR 4, every initializer is also a graph input.
    if (model.ir_version() < 4) {
      onnx::ValueInfoProto *input = graph.add_input();
      input->set_name(t.name());
      onnx::TypeProto_Tensor *tensor =
          input->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(halfType);
      for (int64_t d : t.dims())
        tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    *graph.add_initializer() = std::move(t);
  }
  for (onnx::ValueInfoProto &v : *graph.mutable_value_info())
    if (retyped.count(v.name()) && v.type().has_tensor_type())
      v.mutable_type()->mutable_tensor_type()->set_elem_type(halfType);
  dropUnreadConstants(graph, readBefore);
  return true;
}

} // namespace

namespace {

/// The float32 model's graph outputs on every calibration sample, kept to
/// measure rewrites of it against.
class OutputReference {
public:
  static FailureOr<OutputReference> make(MLIRContext &context,
                                         const onnx::ModelProto &original,
                                         llvm::StringRef modelName,
                                         const ONNXImportOptions &importOptions,
                                         llvm::StringRef dir) {
    OutputReference ref;
    FailureOr<CalibrationSet> set = CalibrationSet::open(
        context, dir, sampleInputs(original, importOptions));
    if (failed(set))
      return failure();
    ref.set = std::move(*set);
    FailureOr<std::unique_ptr<HostModel>> host =
        HostModel::compile(context, original, modelName, importOptions, {});
    if (failed(host))
      return failure();
    for (size_t i = 0; i < (*host)->outputCount(); ++i)
      ref.names.push_back((*host)->outputName(i));
    for (size_t s = 0; s < ref.set.samples.size(); ++s) {
      if (failed((*host)->run(ref.set, s)))
        return failure();
      for (size_t i = 0; i < ref.names.size(); ++i) {
        llvm::ArrayRef<float> v = (*host)->output(i);
        ref.values.emplace_back(v.begin(), v.end());
      }
    }
    return ref;
  }

  /// The graph outputs' errors in `rewritten` against float32 (as
  /// measureRewrite gives them, without compiling the float model again).
  FailureOr<RewriteErrors>
  errors(MLIRContext &context, const onnx::ModelProto &rewritten,
         llvm::StringRef modelName,
         const ONNXImportOptions &importOptions) const {
    FailureOr<std::unique_ptr<HostModel>> host =
        HostModel::compile(context, rewritten, modelName, importOptions, {});
    if (failed(host))
      return failure();
    RewriteErrors errors;
    errors.graphOutputs = names;
    errors.graphErrors.resize(names.size());
    errors.samples = static_cast<int64_t>(set.samples.size());
    for (size_t s = 0; s < set.samples.size(); ++s) {
      if (failed((*host)->run(set, s)))
        return failure();
      for (size_t i = 0; i < names.size(); ++i)
        errors.graphErrors[i].add(values[s * names.size() + i],
                                  (*host)->output(i));
    }
    return errors;
  }

  CalibrationSet set;
  std::vector<std::string> names;         ///< graph outputs, in order
  std::vector<std::vector<float>> values; ///< sample-major
};

/// --keep-float=auto for --precision: ranks the converted operators by the
/// error each adds (the SQNR of its 16-bit output below that of its
/// operands, measured against float32 on the samples), and keeps the
/// fewest of the first in float32 that bring every output's relative RMS
/// error within the budget. `model` is rewritten with them kept, and
/// `final` holds its outputs' errors (for the report).
LogicalResult keepSensitiveInFloat(
    MLIRContext &context, Location loc, onnx::ModelProto &model,
    const onnx::ModelProto &original, llvm::StringRef modelName,
    const ONNXImportOptions &importOptions, const PrecisionOptions &options,
    const std::string &baseDir, std::unique_ptr<Rewriter> &rewriter,
    std::optional<RewriteErrors> &final) {
  double budget = *options.autoKeepFloatBudget;
  size_t n = rewriter->converted.size();
  // Every value a converted operator reads or writes (constants aside:
  // their rounding is the operator's own error), measured once, with the
  // outputs' error of the model all in 16 bits.
  std::map<std::string, const onnx::NodeProto *> byName;
  for (const onnx::NodeProto &node : original.graph().node())
    byName[nodeName(node)] = &node;
  std::set<std::string> constants;
  for (const onnx::TensorProto &t : original.graph().initializer())
    constants.insert(t.name());
  for (const onnx::NodeProto &node : original.graph().node())
    if (node.op_type() == "Constant")
      for (const std::string &out : node.output())
        constants.insert(out);
  std::vector<std::string> tensors;
  std::map<std::string, size_t> tensorIndex;
  auto observe = [&](const std::string &name) {
    if (!name.empty() && !constants.count(name) &&
        tensorIndex.emplace(name, tensors.size()).second)
      tensors.push_back(name);
  };
  for (const std::string &name : rewriter->converted) {
    const onnx::NodeProto *node = byName[name];
    for (const std::string &in : node->input())
      observe(in);
    for (const std::string &out : node->output())
      observe(out);
  }
  FailureOr<RewriteErrors> measured =
      measureRewrite(context, original, model, modelName, importOptions,
                     options.calibrationDir, tensors);
  if (failed(measured))
    return failure();
  double error = measured->endToEnd();
  auto note = [&](size_t kept) {
    llvm::errs() << "dlc-compile: note: --keep-float=auto kept " << kept
                 << " of " << n
                 << " operators in float32; largest relative RMS error of an "
                    "output "
                 << llvm::format("%.4g", error) << " on " << final->samples
                 << " calibration samples\n";
  };
  final = std::move(*measured);
  if (error <= budget) {
    note(0);
    return success();
  }
  auto sqnrOf = [&](const google::protobuf::RepeatedPtrField<std::string> &vs) {
    double worst = 200;
    for (const std::string &v : vs) {
      auto it = tensorIndex.find(v);
      if (it != tensorIndex.end())
        worst = std::min(worst, final->tensors[it->second].sqnr());
    }
    return worst;
  };
  std::vector<double> added;
  for (const std::string &name : rewriter->converted) {
    const onnx::NodeProto *node = byName[name];
    added.push_back(sqnrOf(node->input()) - sqnrOf(node->output()));
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) {
    return added[a] != added[b] ? added[a] > added[b] : a < b;
  });
  std::vector<std::string> ranked;
  for (size_t i : order)
    ranked.push_back(rewriter->converted[i]);

  // The float model's outputs, computed once for all probes.
  FailureOr<OutputReference> reference = OutputReference::make(
      context, original, modelName, importOptions, options.calibrationDir);
  if (failed(reference))
    return failure();
  PrecisionOptions probeOptions = options;
  auto probe = [&](size_t k) -> FailureOr<std::pair<bool, double>> {
    probeOptions.keepFloat = options.keepFloat;
    probeOptions.keepFloat.insert(probeOptions.keepFloat.end(), ranked.begin(),
                                  ranked.begin() + k);
    model = original;
    rewriter = std::make_unique<Rewriter>(model, probeOptions, baseDir);
    std::string message;
    if (!rewriter->run(message))
      return emitError(loc, "--keep-float=auto: ") << message;
    FailureOr<RewriteErrors> e =
        reference->errors(context, model, modelName, importOptions);
    if (failed(e))
      return failure();
    error = e->endToEnd();
    final = std::move(*e);
    return std::pair(error <= budget, error);
  };
  FailureOr<KeepFloatSearch> search = searchKeepFloat(n, error, probe);
  if (failed(search))
    return failure();
  if (!search->kept)
    return emitError(loc, "--keep-float=auto:")
           << formatNumber(budget, "%g") << ": even with only "
           << n - search->failed << " of " << n
           << " operators in 16 bits the largest relative RMS error of an "
              "output is "
           << formatNumber(search->fewestError, "%.4g")
           << "; raise the budget or keep float32";
  note(search->kept);
  return success();
}

} // namespace

LogicalResult dlc::lowerPrecision(MLIRContext &context, onnx::ModelProto &model,
                                  llvm::StringRef modelName,
                                  const ONNXImportOptions &importOptions,
                                  const PrecisionOptions &options) {
  Location loc = FileLineColLoc::get(&context, modelName, 0, 0);
  std::string flag = "--precision=" + options.spelling().str();
  for (const onnx::NodeProto &node : model.graph().node())
    if (kQuantizedOps.contains(node.op_type()))
      return emitError(loc, flag + ": the model is quantized (node '")
             << nodeName(node) << "' is a " << node.op_type()
             << "); 16-bit activations around its integer kernels are not "
                "supported yet";
  std::set<std::string> names;
  for (const onnx::NodeProto &node : model.graph().node())
    names.insert(nodeName(node));
  for (const std::string &name : options.keepFloat)
    if (!names.count(name))
      return emitError(loc, "--keep-float: the model has no node named '")
             << name << "'";

  std::string baseDir = externalDataDir(modelName, importOptions);
  const onnx::ModelProto original = model;
  auto rewriter = std::make_unique<Rewriter>(model, options, baseDir);
  std::string error;
  if (!rewriter->run(error))
    return emitError(loc, flag + ": ") << error;
  // With --keep-float=auto, the errors of the model it settles on.
  std::optional<RewriteErrors> measured;
  if (options.autoKeepFloatBudget &&
      failed(keepSensitiveInFloat(context, loc, model, original, modelName,
                                  importOptions, options, baseDir, rewriter,
                                  measured)))
    return failure();

  llvm::errs() << "dlc-compile: note: " << flag << ": "
               << rewriter->converted.size() << " operators in 16 bits, "
               << rewriter->kept.size() << " in float32; "
               << llvm::format("%.1f", rewriter->floatConstantBytes / 1048576.0)
               << " -> "
               << llvm::format("%.1f", rewriter->halfConstantBytes / 1048576.0)
               << " MiB of constants";
  if (rewriter->clampedValues)
    llvm::errs() << "; " << rewriter->clampedValues
                 << " constant values beyond its range clamped to it";
  llvm::errs() << "\n";
  if (options.reportPath.empty())
    return success();
  llvm::json::Object report{
      {"precision", options.spelling()},
      {"converted_nodes", static_cast<int64_t>(rewriter->converted.size())},
      {"float_nodes", llvm::json::Array(rewriter->kept)},
      {"constant_bytes_float32", rewriter->floatConstantBytes},
      {"constant_bytes_16bit", rewriter->halfConstantBytes},
      {"constants_clamped_to_range", rewriter->clampedValues},
  };
  if (options.autoKeepFloatBudget)
    report["keep_float_auto_budget"] = *options.autoKeepFloatBudget;
  if (!options.calibrationDir.empty()) {
    if (!measured) {
      FailureOr<RewriteErrors> errors =
          measureRewrite(context, original, model, modelName, importOptions,
                         options.calibrationDir, {});
      if (failed(errors))
        return failure();
      measured = std::move(*errors);
    }
    report["samples"] = measured->samples;
    report["outputs"] = measured->outputsJSON();
    report["end_to_end_error"] = jsonNumber(measured->endToEnd());
  }
  return writeReport(loc, options.reportPath, std::move(report));
}

LogicalResult dlc::lowerPrecisionONNXFile(
    MLIRContext &context, llvm::StringRef path,
    const CompileOptions &compileOptions, const PrecisionOptions &options,
    llvm::raw_ostream &output, const WeightOnlyOptions *weightsFirst) {
  return quantizeAndEmit(
      context, path, compileOptions, output, [&](onnx::ModelProto &model) {
        if (weightsFirst && failed(quantizeWeights(context, model, path,
                                                   compileOptions.importOptions,
                                                   *weightsFirst)))
          return failure();
        return lowerPrecision(context, model, path,
                              compileOptions.importOptions, options);
      });
}
