//===- QDQRewrite.cpp - the QDQ form of a calibrated model ----------------===//
//
// The rewrite works on the ONNX model itself, so that what it writes is
// both what dlc compiles (dlc-fold-qdq turns each quantized layer into
// QLinearConv, QLinearMatMul or QGemm) and a model ONNX Runtime runs
// (dlc-compile --emit=qdq-onnx).
//
// A quantized layer's output keeps its name: the layer now writes
// `<name>_float`, QuantizeLinear and DequantizeLinear follow, and the
// DequantizeLinear writes `<name>`, so every reader (graph outputs and
// subgraphs included) sees the dequantized value and the integer kernel's
// only reader is its QuantizeLinear. An input that no quantized layer
// writes gets its QuantizeLinear/DequantizeLinear pair just before the
// first layer that reads it, and only the quantized layers read the pair's
// output.
//
//===----------------------------------------------------------------------===//

#include "QDQRewrite.h"
#include "ModelGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace dlc;

namespace {

/// A scalar float constant's value, if `name` is one.
std::optional<double>
scalarConstant(const std::map<std::string, const onnx::TensorProto *> &consts,
               const std::string &name) {
  auto it = consts.find(name);
  if (it == consts.end() || elementCount(*it->second) != 1)
    return std::nullopt;
  std::string error;
  std::optional<std::vector<float>> v = readFloats(*it->second, "", error);
  if (!v)
    return std::nullopt;
  return (*v)[0];
}

/// The bounds of a Relu or Clip node, if it is one with constant bounds.
std::optional<std::pair<double, double>>
activationBounds(const onnx::NodeProto &node, int64_t opset,
                 const std::map<std::string, const onnx::TensorProto *> &c) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!isDefaultDomain(node))
    return std::nullopt;
  if (node.op_type() == "Relu")
    return std::make_pair(0.0, inf);
  if (node.op_type() != "Clip")
    return std::nullopt;
  if (opset < 11)
    return std::make_pair(floatAttr(node, "min", -inf),
                          floatAttr(node, "max", inf));
  std::pair<double, double> bounds = {-inf, inf};
  for (int i : {1, 2}) {
    if (node.input_size() <= i || node.input(i).empty())
      continue;
    std::optional<double> v = scalarConstant(c, node.input(i));
    if (!v)
      return std::nullopt;
    (i == 1 ? bounds.first : bounds.second) = *v;
  }
  return bounds;
}

} // namespace

std::vector<QuantizableLayer>
dlc::findQuantizableLayers(const onnx::ModelProto &model,
                           const std::vector<std::string> &keepFloat,
                           std::vector<std::string> &unmatched) {
  const onnx::GraphProto &graph = model.graph();
  int64_t opset = defaultOpset(model);
  auto consts = constantTensors(graph);
  std::map<std::string, int> reads;
  collectReads(graph, reads);
  std::map<std::string, int> readerNode;
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &input : node.input())
      readerNode[input] = static_cast<int>(i);
  unmatched = keepFloat;

  auto isFloatConstant = [&](const std::string &name, int rank) {
    auto it = consts.find(name);
    return it != consts.end() &&
           it->second->data_type() == onnx::TensorProto::FLOAT &&
           (rank < 0 || it->second->dims_size() == rank);
  };
  std::vector<QuantizableLayer> layers;
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    if (!isDefaultDomain(node) || node.output_size() < 1 ||
        node.input_size() < 2 || node.input(0).empty() ||
        consts.count(node.input(0)))
      continue;
    QuantizableLayer layer;
    layer.node = static_cast<int>(i);
    layer.name = node.name().empty() ? node.output(0) : node.name();
    layer.opType = node.op_type();
    layer.input = node.input(0);
    layer.weight = node.input(1);
    layer.output = node.output(0);
    if (node.op_type() == "Conv") {
      // 2-D convolutions; the bias a constant vector.
      if (!isFloatConstant(layer.weight, 4))
        continue;
      if (node.input_size() > 2 && !node.input(2).empty()) {
        if (!isFloatConstant(node.input(2), 1))
          continue;
        layer.bias = node.input(2);
      }
      layer.weightAxis = 0;
    } else if (node.op_type() == "MatMul") {
      if (!isFloatConstant(layer.weight, 2))
        continue;
      layer.weightAxis = 1;
    } else if (node.op_type() == "Gemm") {
      if (!isFloatConstant(layer.weight, 2) || intAttr(node, "transA", 0) ||
          floatAttr(node, "beta", 1.0) != 1.0)
        continue;
      int64_t transB = intAttr(node, "transB", 0);
      layer.weightAxis = transB ? 0 : 1;
      if (node.input_size() > 2 && !node.input(2).empty()) {
        const onnx::TensorProto *w = consts[layer.weight];
        if (!isFloatConstant(node.input(2), 1) ||
            elementCount(*consts[node.input(2)]) != w->dims(layer.weightAxis))
          continue;
        layer.bias = node.input(2);
      }
    } else {
      continue;
    }
    // Opset 13 added per-axis DequantizeLinear, which per-channel weights
    // need.
    if (opset < 13)
      continue;
    auto kept = llvm::find(keepFloat, layer.name);
    if (kept != keepFloat.end()) {
      llvm::erase(unmatched, layer.name);
      continue;
    }
    auto reader = readerNode.find(layer.output);
    if (reads[layer.output] == 1 && reader != readerNode.end()) {
      const onnx::NodeProto &act = graph.node(reader->second);
      if (auto bounds = activationBounds(act, opset, consts);
          bounds && act.output_size() == 1 && act.input(0) == layer.output) {
        layer.activation = reader->second;
        layer.activationOutput = act.output(0);
        std::tie(layer.clipLo, layer.clipHi) = *bounds;
      }
    }
    layers.push_back(std::move(layer));
  }
  // A keep-float name that is a node but not a quantizable one is matched
  // too: it stays float either way.
  for (const onnx::NodeProto &node : graph.node()) {
    std::string name = node.name().empty() && node.output_size()
                           ? node.output(0)
                           : node.name();
    llvm::erase(unmatched, name);
  }
  return layers;
}

Encoding dlc::uint8Encoding(double lo, double hi) {
  Encoding e;
  e.scale = (hi - lo) / 255.0;
  if (!(e.scale > 0) || !std::isfinite(e.scale))
    e.scale = 1.0;
  e.zeroPoint =
      static_cast<int>(std::clamp(std::nearbyint(-lo / e.scale), 0.0, 255.0));
  return e;
}

Encoding dlc::uint8ChannelEncoding(const std::vector<double> &lo,
                                   const std::vector<double> &hi) {
  size_t n = lo.size();
  bool negative = false, positive = false;
  for (size_t c = 0; c < n; ++c) {
    negative |= lo[c] < 0;
    positive |= hi[c] > 0;
  }
  // Each channel's step with zero point z: the smallest that keeps both
  // ends of its range representable.
  auto step = [&](size_t c, int z) {
    double s = 0;
    if (hi[c] > 0)
      s = hi[c] / (255 - z);
    if (lo[c] < 0)
      s = std::max(s, -lo[c] / z);
    return s;
  };
  int best = negative ? (positive ? 128 : 255) : 0;
  double bestCost = std::numeric_limits<double>::infinity();
  for (int z = negative ? 1 : 0; z <= (positive ? 254 : 255); ++z) {
    double cost = 0;
    for (size_t c = 0; c < n; ++c)
      if (double s = step(c, z); s > 0)
        cost += std::log(s);
    if (cost < bestCost) {
      bestCost = cost;
      best = z;
    }
  }
  Encoding e;
  e.zeroPoint = best;
  e.channelScales.resize(n);
  std::vector<double> live;
  for (size_t c = 0; c < n; ++c) {
    e.channelScales[c] = step(c, best);
    if (e.channelScales[c] > 0 && std::isfinite(e.channelScales[c]))
      live.push_back(e.channelScales[c]);
  }
  // A channel that was always 0 takes the median step: its scale goes into
  // the reading convolution's weights, where an outlier would cost the
  // other channels precision.
  double fill = 1.0;
  if (!live.empty()) {
    std::nth_element(live.begin(), live.begin() + live.size() / 2, live.end());
    fill = live[live.size() / 2];
  }
  e.scale = 0;
  for (double &s : e.channelScales) {
    if (!(s > 0) || !std::isfinite(s))
      s = fill;
    e.scale = std::max(e.scale, s);
  }
  return e;
}

std::vector<std::string>
dlc::perChannelCandidates(const std::vector<QuantizableLayer> &layers) {
  std::set<std::string> refused;
  std::vector<std::string> candidates;
  for (const QuantizableLayer &layer : layers) {
    if (layer.opType != "Conv") {
      refused.insert(layer.input);
      refused.insert(layer.output);
      refused.insert(layer.activationOutput);
    }
  }
  std::set<std::string> seen;
  for (const QuantizableLayer &layer : layers) {
    if (layer.opType != "Conv")
      continue;
    for (const std::string &name :
         {layer.input, layer.output, layer.activationOutput})
      if (!name.empty() && !refused.count(name) && seen.insert(name).second)
        candidates.push_back(name);
  }
  return candidates;
}

namespace {

/// Builds the new node list and initializers of the rewrite.
class Rewriter {
public:
  Rewriter(onnx::ModelProto &model) : graph(*model.mutable_graph()) {
    for (const onnx::ValueInfoProto &v : graph.value_info())
      declared.insert(v.name());
    auto note = [&](const std::string &n) { names.insert(n); };
    for (const onnx::TensorProto &t : graph.initializer())
      note(t.name());
    for (const onnx::ValueInfoProto &v : graph.input())
      note(v.name());
    for (const onnx::ValueInfoProto &v : graph.output())
      note(v.name());
    for (const onnx::NodeProto &node : graph.node()) {
      note(node.name());
      for (const std::string &o : node.output())
        note(o);
    }
  }

  /// Declares `name` in the graph's value_info as a tensor of `dtype` and
  /// `dims` (nothing when the dims are unknown or it is declared).
  void declare(const std::string &name, int32_t dtype,
               const std::vector<int64_t> *dims) {
    if (!dims || dims->empty() || !declared.insert(name).second)
      return;
    onnx::ValueInfoProto *v = graph.add_value_info();
    v->set_name(name);
    onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(dtype);
    for (int64_t d : *dims)
      t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  /// `base` + `suffix`, made unique in the graph.
  std::string fresh(const std::string &base, llvm::StringRef suffix) {
    std::string name = base + suffix.str();
    for (int i = 1; names.count(name); ++i)
      name = base + suffix.str() + "_" + std::to_string(i);
    names.insert(name);
    return name;
  }

  template <typename T>
  std::string constant(const std::string &base, llvm::StringRef suffix,
                       int32_t dtype, const std::vector<int64_t> &dims,
                       const std::vector<T> &values) {
    onnx::TensorProto *t = graph.add_initializer();
    t->set_name(fresh(base, suffix));
    t->set_data_type(dtype);
    for (int64_t d : dims)
      t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()),
                                values.size() * sizeof(T)));
    return t->name();
  }

  onnx::NodeProto &node(llvm::StringRef opType, const std::string &name) {
    nodes.emplace_back();
    nodes.back().set_op_type(opType.str());
    nodes.back().set_name(fresh(name, ""));
    return nodes.back();
  }

  /// QuantizeLinear then DequantizeLinear of `x` with `e`; `out` is the
  /// dequantized value. With a per-channel `e`, both have scale 1 and the
  /// encoding's zero point, and the channels' scales are a Mul on each side
  /// (by 1 / scale before the QuantizeLinear, unless `xInSteps`: x is
  /// already in steps, a Conv whose weights took the scales; by the scale
  /// after the DequantizeLinear). Returns the name of the DequantizeLinear's
  /// output, the steps `q - zeroPoint` Conv layers read; "" per tensor.
  ///
  /// Not per-axis QuantizeLinear/DequantizeLinear: ONNX Runtime fuses
  /// DequantizeLinear -> Add -> QuantizeLinear (and other operators) into
  /// QLinear kernels that take scalar scales only, and then fails to load
  /// the model.
  std::string quantizeDequantize(const std::string &x, const std::string &out,
                                 const Encoding &e,
                                 const std::vector<int64_t> *dims,
                                 bool xInSteps = false) {
    std::string base = out;
    constexpr int32_t f32 = onnx::TensorProto::FLOAT;
    constexpr int32_t u8 = onnx::TensorProto::UINT8;
    declare(out, f32, dims);
    if (!e.perChannel()) {
      std::string scale = constant<float>(base, "_scale", f32, {},
                                          {static_cast<float>(e.scale)});
      std::string zero = constant<uint8_t>(base, "_zero_point", u8, {},
                                           {static_cast<uint8_t>(e.zeroPoint)});
      std::string q = fresh(base, "_quantized");
      declare(q, u8, dims);
      binary("QuantizeLinear", base + "_quantize", x, scale, q).add_input(zero);
      binary("DequantizeLinear", base + "_dequantize", q, scale, out)
          .add_input(zero);
      return "";
    }
    int64_t n = static_cast<int64_t>(e.channelScales.size());
    std::vector<float> scales(n), inverses(n);
    for (int64_t c = 0; c < n; ++c) {
      scales[c] = static_cast<float>(e.channelScales[c]);
      inverses[c] = static_cast<float>(1.0 / e.channelScales[c]);
    }
    std::string one = constant<float>(base, "_unit_scale", f32, {}, {1.0f});
    std::string zero = constant<uint8_t>(base, "_zero_point", u8, {},
                                         {static_cast<uint8_t>(e.zeroPoint)});
    std::string inSteps = x;
    if (!xInSteps) {
      std::string inverse =
          constant<float>(base, "_inverse_scale", f32, {1, n, 1, 1}, inverses);
      inSteps = fresh(base, "_in_steps");
      declare(inSteps, f32, dims);
      binary("Mul", base + "_to_steps", x, inverse, inSteps);
    }
    std::string q = fresh(base, "_quantized");
    declare(q, u8, dims);
    binary("QuantizeLinear", base + "_quantize", inSteps, one, q)
        .add_input(zero);
    std::string steps = fresh(base, "_steps");
    declare(steps, f32, dims);
    binary("DequantizeLinear", base + "_dequantize_steps", q, one, steps)
        .add_input(zero);
    std::string scale =
        constant<float>(base, "_scale", f32, {1, n, 1, 1}, scales);
    binary("Mul", base + "_dequantize", steps, scale, out);
    return steps;
  }

  /// A node of `opType` reading `a` and `b` and writing `y`.
  onnx::NodeProto &binary(llvm::StringRef opType, const std::string &name,
                          const std::string &a, const std::string &b,
                          const std::string &y) {
    onnx::NodeProto &n = node(opType, name);
    n.add_input(a);
    n.add_input(b);
    n.add_output(y);
    return n;
  }

  onnx::GraphProto &graph;
  std::set<std::string> declared; ///< names with a value_info
  /// A deque: nodes handed out by node() stay where they are.
  std::deque<onnx::NodeProto> nodes;
  std::set<std::string> names;
};

} // namespace

LogicalResult
dlc::rewriteToQDQ(MLIRContext &context, onnx::ModelProto &model,
                  llvm::StringRef modelName, llvm::StringRef baseDir,
                  const std::vector<QuantizableLayer> &layers,
                  const llvm::StringMap<Encoding> &encodings,
                  const llvm::StringMap<std::vector<int64_t>> &shapes,
                  std::vector<RewrittenLayer> &rewritten) {
  Location loc = FileLineColLoc::get(&context, modelName, 0, 0);
  onnx::GraphProto &graph = *model.mutable_graph();
  auto consts = constantTensors(graph);
  Rewriter rw(model);
  auto shapeOf =
      [&](const std::string &tensor) -> const std::vector<int64_t> * {
    auto it = shapes.find(tensor);
    return it == shapes.end() ? nullptr : &it->second;
  };
  auto encodingOf = [&](const std::string &tensor) -> const Encoding * {
    auto it = encodings.find(tensor);
    return it == encodings.end() ? nullptr : &it->second;
  };

  // Decide first which activations disappear and what each layer's output
  // tensor is: a later layer's input may be one of them.
  std::map<int, const QuantizableLayer *> byNode;
  std::set<int> foldedActivations;
  std::map<std::string, RewrittenLayer> quantizedOutputs;
  rewritten.clear();
  for (const QuantizableLayer &layer : layers) {
    RewrittenLayer r;
    r.layer = &layer;
    r.output = layer.output;
    if (layer.activation >= 0) {
      const Encoding *e = encodingOf(layer.activationOutput);
      // The encoding clips at least as much as the activation does.
      if (e && e->lo() >= layer.clipLo - 1e-6 * std::fabs(layer.clipLo) &&
          e->hi() <= layer.clipHi + 1e-6 * std::fabs(layer.clipHi)) {
        r.activationFolded = true;
        r.output = layer.activationOutput;
        foldedActivations.insert(layer.activation);
      }
    }
    const Encoding *in = encodingOf(layer.input);
    const Encoding *out = encodingOf(r.output);
    if (!in || !out)
      return emitError(loc, "quantization: no range was calibrated for '")
             << (in ? r.output : layer.input) << "' (layer '" << layer.name
             << "')";
    r.inputEncoding = *in;
    r.outputEncoding = *out;
    byNode[layer.node] = &layer;
    quantizedOutputs[r.output] = r;
    rewritten.push_back(r);
  }

  std::map<std::string, int> readBefore;
  collectReads(graph, readBefore);
  std::map<std::string, std::string> dequantizedInputs, dequantizedWeights,
      dequantizedBiases;
  // For the tensors with per-channel encodings, by the name of their
  // dequantized value: the steps Conv layers read.
  std::map<std::string, std::string> stepsOf;
  for (auto [i, original] : llvm::enumerate(graph.node())) {
    int index = static_cast<int>(i);
    if (foldedActivations.count(index))
      continue;
    auto it = byNode.find(index);
    if (it == byNode.end()) {
      rw.nodes.push_back(original);
      continue;
    }
    const QuantizableLayer &layer = *it->second;
    RewrittenLayer &r = *llvm::find_if(
        rewritten, [&](const RewrittenLayer &x) { return x.layer == &layer; });
    // The input: dequantized already when a quantized layer wrote it.
    if (quantizedOutputs.count(layer.input)) {
      r.quantizedInput = layer.input;
    } else {
      auto [entry, inserted] = dequantizedInputs.try_emplace(layer.input);
      if (inserted) {
        entry->second = rw.fresh(layer.input, "_dequantized");
        stepsOf[entry->second] = rw.quantizeDequantize(
            layer.input, entry->second, r.inputEncoding, shapeOf(layer.input));
      }
      r.quantizedInput = entry->second;
    }
    // A per-channel input: the Conv reads its steps, and each input
    // channel's scale goes into the weights.
    const std::vector<double> &inScales = r.inputEncoding.channelScales;
    std::string convInput = r.quantizedInput;
    if (r.inputEncoding.perChannel()) {
      auto steps = stepsOf.find(r.quantizedInput);
      if (layer.opType != "Conv" || steps == stepsOf.end() ||
          steps->second.empty())
        return emitError(loc, "quantization: '")
               << layer.input << "' has per-channel scales but layer '"
               << layer.name << "' cannot take them";
      convInput = steps->second;
    }
    // The weight, per output channel, symmetric int8 in [-127, 127].
    const onnx::TensorProto &w = *consts.at(layer.weight);
    std::string error;
    std::optional<std::vector<float>> wv = readFloats(w, baseDir, error);
    if (!wv)
      return emitError(loc, "quantization: the weight '")
             << layer.weight << "' of '" << layer.name << "' " << error;
    std::vector<int64_t> dims(w.dims().begin(), w.dims().end());
    if (!inScales.empty()) {
      // W[m, c, ...] * scale[g * C/G + c] for output channel m in group g.
      int64_t m = dims[0], perGroup = dims[1], taps = 1;
      for (size_t d = 2; d < dims.size(); ++d)
        taps *= dims[d];
      int64_t groups = intAttr(original, "group", 1);
      if (groups < 1 || m % groups != 0 ||
          static_cast<int64_t>(inScales.size()) != groups * perGroup)
        return emitError(loc, "quantization: the input of '")
               << layer.name << "' has " << inScales.size()
               << " channels, its weight " << perGroup << " per group of "
               << groups;
      for (int64_t k = 0; k < static_cast<int64_t>(wv->size()); ++k) {
        int64_t out = k / (perGroup * taps), in = (k / taps) % perGroup;
        (*wv)[k] = static_cast<float>(
            (*wv)[k] * inScales[out / (m / groups) * perGroup + in]);
      }
    }
    // A per-channel output: the Conv computes it in steps of each output
    // channel's scale, so that a QuantizeLinear of scale 1 requantizes it
    // (the integer kernel's per-tensor requantization does it all; the
    // int8 weights are the same, only their scales change).
    const std::vector<double> &outScales = r.outputEncoding.channelScales;
    if (!outScales.empty()) {
      int64_t m = dims[0], perOutput = static_cast<int64_t>(wv->size()) / m;
      if (static_cast<int64_t>(outScales.size()) != m)
        return emitError(loc, "quantization: the output of '")
               << layer.name << "' has " << outScales.size()
               << " channels, its weight " << m;
      for (int64_t k = 0; k < static_cast<int64_t>(wv->size()); ++k)
        (*wv)[k] = static_cast<float>((*wv)[k] / outScales[k / perOutput]);
    }
    int64_t channels = dims[layer.weightAxis];
    int64_t inner = 1;
    for (size_t d = layer.weightAxis + 1; d < dims.size(); ++d)
      inner *= dims[d];
    std::vector<float> scales(channels, 0.0f);
    for (int64_t k = 0; k < static_cast<int64_t>(wv->size()); ++k) {
      int64_t c = (k / inner) % channels;
      scales[c] = std::max(scales[c], std::fabs((*wv)[k]));
    }
    for (float &s : scales)
      s = s > 0 ? s / 127.0f : 1.0f;
    auto [wEntry, wNew] = dequantizedWeights.try_emplace(
        inScales.empty() && outScales.empty()
            ? layer.weight
            : layer.weight + "\n" + convInput + "\n" + r.output);
    if (wNew) {
      std::vector<int8_t> q(wv->size());
      for (size_t k = 0; k < q.size(); ++k) {
        float s = scales[(k / inner) % channels];
        q[k] = static_cast<int8_t>(
            std::clamp(std::nearbyint((*wv)[k] / s), -127.0f, 127.0f));
      }
      std::string qw = rw.constant<int8_t>(layer.weight, "_quantized",
                                           onnx::TensorProto::INT8, dims, q);
      std::string sw = rw.constant<float>(
          layer.weight, "_scale", onnx::TensorProto::FLOAT, {channels}, scales);
      std::string zw = rw.constant<int8_t>(layer.weight, "_zero_point",
                                           onnx::TensorProto::INT8, {channels},
                                           std::vector<int8_t>(channels, 0));
      wEntry->second = rw.fresh(layer.weight, "_dequantized");
      rw.declare(wEntry->second, onnx::TensorProto::FLOAT, &dims);
      onnx::NodeProto &dq =
          rw.node("DequantizeLinear", layer.weight + "_dequantize");
      dq.add_input(qw);
      dq.add_input(sw);
      dq.add_input(zw);
      dq.add_output(wEntry->second);
      onnx::AttributeProto *axis = dq.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(layer.weightAxis);
    }
    // The bias in int32 at scale (input scale) * (weight scale).
    std::string dequantizedBias;
    if (!layer.bias.empty()) {
      std::optional<std::vector<float>> bv =
          readFloats(*consts.at(layer.bias), baseDir, error);
      if (!bv || static_cast<int64_t>(bv->size()) != channels)
        return emitError(loc, "quantization: the bias '")
               << layer.bias << "' of '" << layer.name << "' "
               << (bv ? "does not have one value per output channel" : error);
      std::vector<float> biasScales(channels);
      std::vector<int32_t> q(channels);
      for (int64_t c = 0; c < channels; ++c) {
        biasScales[c] =
            static_cast<float>(inScales.empty() ? r.inputEncoding.scale : 1.0) *
            scales[c];
        double b = (*bv)[c] / (outScales.empty() ? 1.0 : outScales[c]);
        double v = std::nearbyint(b / biasScales[c]);
        q[c] = static_cast<int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
      }
      std::string qb = rw.constant<int32_t>(
          layer.bias, "_quantized", onnx::TensorProto::INT32, {channels}, q);
      std::string sb =
          rw.constant<float>(layer.bias, "_scale", onnx::TensorProto::FLOAT,
                             {channels}, biasScales);
      dequantizedBias = rw.fresh(layer.bias, "_dequantized");
      std::vector<int64_t> biasDims = {channels};
      rw.declare(dequantizedBias, onnx::TensorProto::FLOAT, &biasDims);
      onnx::NodeProto &dq =
          rw.node("DequantizeLinear", layer.bias + "_dequantize");
      dq.add_input(qb);
      dq.add_input(sb);
      dq.add_output(dequantizedBias);
      onnx::AttributeProto *axis = dq.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(0);
    }
    // The layer itself, writing `<output>_float`.
    onnx::NodeProto copy = original;
    copy.set_input(0, convInput);
    copy.set_input(1, wEntry->second);
    if (!dequantizedBias.empty())
      copy.set_input(2, dequantizedBias);
    std::string floatOutput = rw.fresh(r.output, "_float");
    rw.declare(floatOutput, onnx::TensorProto::FLOAT, shapeOf(r.output));
    copy.set_output(0, floatOutput);
    rw.nodes.push_back(copy);
    stepsOf[r.output] =
        rw.quantizeDequantize(floatOutput, r.output, r.outputEncoding,
                              shapeOf(r.output), /*xInSteps=*/true);
  }
  graph.clear_node();
  for (onnx::NodeProto &node : rw.nodes)
    *graph.add_node() = std::move(node);

  // The constants nothing reads any more (float weights and biases, the
  // bounds of folded Clips) leave the model.
  dropUnreadConstants(graph, readBefore);
  return success();
}

int dlc::foldBatchNormalization(onnx::ModelProto &model,
                                llvm::StringRef baseDir) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto consts = constantTensors(graph);
  std::map<std::string, int> readBefore;
  collectReads(graph, readBefore);
  std::map<std::string, int> producer;
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &o : node.output())
      producer[o] = static_cast<int>(i);
  Rewriter rw(model);
  auto floats = [&](const std::string &name,
                    int64_t count) -> std::optional<std::vector<float>> {
    auto it = consts.find(name);
    if (it == consts.end())
      return std::nullopt;
    std::string error;
    std::optional<std::vector<float>> v =
        readFloats(*it->second, baseDir, error);
    if (!v || (count >= 0 && static_cast<int64_t>(v->size()) != count))
      return std::nullopt;
    return v;
  };
  std::set<int> removed;
  int folded = 0;
  for (auto [i, bn] : llvm::enumerate(*graph.mutable_node())) {
    if (bn.op_type() != "BatchNormalization" || !isDefaultDomain(bn) ||
        bn.input_size() != 5 || bn.output_size() != 1 ||
        intAttr(bn, "training_mode", 0) != 0)
      continue;
    auto p = producer.find(bn.input(0));
    if (p == producer.end() || readBefore[bn.input(0)] != 1)
      continue;
    onnx::NodeProto &conv = *graph.mutable_node(p->second);
    if (conv.op_type() != "Conv" || !isDefaultDomain(conv) ||
        conv.output_size() != 1 || conv.input_size() < 2)
      continue;
    auto w = consts.find(conv.input(1));
    if (w == consts.end() || w->second->dims_size() < 3)
      continue;
    int64_t m = w->second->dims(0);
    std::optional<std::vector<float>> weight = floats(conv.input(1), -1);
    std::optional<std::vector<float>> gamma = floats(bn.input(1), m),
                                      beta = floats(bn.input(2), m),
                                      mean = floats(bn.input(3), m),
                                      var = floats(bn.input(4), m);
    std::optional<std::vector<float>> bias =
        conv.input_size() > 2 && !conv.input(2).empty()
            ? floats(conv.input(2), m)
            : std::vector<float>(m, 0.0f);
    if (!weight || !gamma || !beta || !mean || !var || !bias)
      continue;
    double epsilon = floatAttr(bn, "epsilon", 1e-5);
    int64_t perChannel = static_cast<int64_t>(weight->size()) / m;
    std::vector<float> newBias(m);
    for (int64_t c = 0; c < m; ++c) {
      double k =
          (*gamma)[c] / std::sqrt(static_cast<double>((*var)[c]) + epsilon);
      for (int64_t j = 0; j < perChannel; ++j)
        (*weight)[c * perChannel + j] =
            static_cast<float>((*weight)[c * perChannel + j] * k);
      newBias[c] =
          static_cast<float>(((*bias)[c] - (*mean)[c]) * k + (*beta)[c]);
    }
    std::vector<int64_t> dims(w->second->dims().begin(),
                              w->second->dims().end());
    std::string wName = rw.constant<float>(
        conv.input(1), "_bn_folded", onnx::TensorProto::FLOAT, dims, *weight);
    std::string bName = rw.constant<float>(
        conv.input_size() > 2 && !conv.input(2).empty() ? conv.input(2)
                                                        : conv.output(0),
        "_bn_folded_bias", onnx::TensorProto::FLOAT, {m}, newBias);
    conv.set_input(1, wName);
    if (conv.input_size() > 2)
      conv.set_input(2, bName);
    else
      conv.add_input(bName);
    conv.set_output(0, bn.output(0));
    removed.insert(static_cast<int>(i));
    ++folded;
  }
  if (!folded)
    return 0;
  auto *nodes = graph.mutable_node();
  int index = 0;
  nodes->erase(std::remove_if(nodes->begin(), nodes->end(),
                              [&](const onnx::NodeProto &) {
                                return removed.count(index++) != 0;
                              }),
               nodes->end());
  dropUnreadConstants(graph, readBefore);
  return folded;
}
