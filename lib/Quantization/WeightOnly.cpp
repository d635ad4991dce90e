//===- WeightOnly.cpp - dlc-compile --weights=int4|int8 -------------------===//
//
// Weight-only quantization at compile time: every MatMul with a constant
// 2-D float32 right operand, and every Gemm with a constant weight (transA
// 0, alpha and beta 1, a bias of one value per output or none), becomes a
// com.microsoft.MatMulNBits node, the operator ONNX Runtime's 4-bit
// quantizer writes. So the compiler has one path for these weights, the
// one models quantized by other tools take (lib/Conversion/ONNXToLinalg/
// WeightOnly.cpp: the kernel reads the packed bytes and dequantizes next
// to the multiply), and the rewritten model is one ONNX Runtime runs
// (--emit=qdq-onnx).
//
// Per output column, the K weights are cut into blocks of `group` along K
// (int8 per channel: one block of K, rounded up to a power of two, up to
// 256; blocks of 256 beyond) and rounded to nearest (ties to even):
//   asymmetric: range [min(0, lo), max(0, hi)] in 2^bits - 1 steps, a zero
//               point per block;
//   symmetric:  scale max|w| / (2^(bits-1) - 1), the zero point 2^(bits-1)
//               that MatMulNBits assumes when none is given.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "ModelGraph.h"

#include "dlc/Pipelines/CompileModel.h"
#include "dlc/Quantization/Quantize.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace dlc;

/// The largest block: ONNX Runtime's MatMulNBits computes wrong results
/// with larger ones (measured with 1.23: NaN with blocks of 512 over K =
/// 256, all zeros with one block of 1024), and the models dlc writes must
/// be ones it runs.
constexpr int64_t kMaxGroup = 256;

std::optional<WeightOnlyOptions> dlc::parseWeightsSpec(llvm::StringRef spec,
                                                       std::string &error) {
  SmallVector<StringRef> parts;
  spec.split(parts, ':');
  WeightOnlyOptions options;
  if (parts[0] == "int4") {
    options.bits = 4;
    options.group = 32;
  } else if (parts[0] == "int8") {
    options.bits = 8;
    options.group = 0; // per channel
  } else {
    error = "--weights=" + spec.str() + ": unknown precision; int4 or int8";
    return std::nullopt;
  }
  for (StringRef part : ArrayRef<StringRef>(parts).drop_front()) {
    int64_t group = 0;
    StringRef value = part;
    if (part == "sym") {
      options.symmetric = true;
    } else if (part == "asym") {
      options.symmetric = false;
    } else if (part == "per-channel") {
      options.group = 0;
    } else if (value.consume_front("group=") &&
               !value.getAsInteger(10, group) && group >= 16 &&
               group <= kMaxGroup && (group & (group - 1)) == 0) {
      options.group = group;
    } else {
      error = "--weights=" + spec.str() + ": '" + part.str() +
              "' is none of group=<16, 32, 64, 128 or 256>, per-channel, "
              "sym, asym";
      return std::nullopt;
    }
  }
  return options;
}

namespace {

/// A MatMul or Gemm whose weight becomes 4- or 8-bit.
struct WeightLayer {
  int node = -1;
  /// For Gather, `weight` is the table and `input` the indices.
  std::string name, opType, weight, input, bias, output;
  bool transposed = false; ///< the weight is [N, K] (Gemm transB)
  int64_t k = 0, n = 0;
};

std::vector<WeightLayer> findWeightLayers(const onnx::ModelProto &model,
                                          const std::vector<std::string> &skip,
                                          std::vector<std::string> &unmatched) {
  const onnx::GraphProto &graph = model.graph();
  std::map<std::string, const onnx::TensorProto *> constants =
      constantTensors(graph);
  auto floatMatrix = [&](const std::string &name) -> const onnx::TensorProto * {
    auto it = constants.find(name);
    if (it == constants.end() ||
        it->second->data_type() != onnx::TensorProto::FLOAT ||
        it->second->dims_size() != 2)
      return nullptr;
    return it->second;
  };
  std::vector<WeightLayer> layers;
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    std::string name = nodeName(node);
    if (llvm::is_contained(skip, name)) {
      llvm::erase(unmatched, name);
      continue;
    }
    if (!isDefaultDomain(node) || node.output_size() != 1 ||
        node.input_size() < 2)
      continue;
    WeightLayer layer;
    layer.node = static_cast<int>(i);
    layer.name = name;
    layer.opType = node.op_type();
    bool gather = node.op_type() == "Gather";
    layer.weight = node.input(gather ? 0 : 1);
    layer.output = node.output(0);
    const onnx::TensorProto *w = floatMatrix(layer.weight);
    if (!w)
      continue;
    if (node.op_type() == "MatMul") {
      layer.k = w->dims(0);
      layer.n = w->dims(1);
    } else if (node.op_type() == "Gather") {
      // An embedding table [R, H], rows gathered (axis 0): blocks along
      // each row, as GatherBlockQuantized takes them.
      if (intAttr(node, "axis", 0) != 0)
        continue;
      layer.input = node.input(1);
      layer.transposed = true;
      layer.k = w->dims(1);
      layer.n = w->dims(0);
    } else if (node.op_type() == "Gemm") {
      if (intAttr(node, "transA", 0) != 0 ||
          floatAttr(node, "alpha", 1.0) != 1.0 ||
          floatAttr(node, "beta", 1.0) != 1.0)
        continue;
      layer.transposed = intAttr(node, "transB", 0) != 0;
      layer.k = w->dims(layer.transposed ? 1 : 0);
      layer.n = w->dims(layer.transposed ? 0 : 1);
      if (node.input_size() > 2 && !node.input(2).empty()) {
        auto bias = constants.find(node.input(2));
        if (bias == constants.end() ||
            bias->second->data_type() != onnx::TensorProto::FLOAT ||
            elementCount(*bias->second) != layer.n ||
            bias->second->dims_size() != 1)
          continue;
        layer.bias = node.input(2);
      }
    } else {
      continue;
    }
    if (layer.k < 1 || layer.n < 1)
      continue;
    layers.push_back(std::move(layer));
  }
  return layers;
}

/// One quantized weight: what MatMulNBits takes, and its error.
struct PackedWeight {
  int64_t blockSize = 0, blocks = 0;
  std::vector<uint8_t> data;       ///< [N, blocks, blockSize * bits / 8]
  std::vector<float> scales;       ///< [N * blocks]
  std::vector<uint8_t> zeroPoints; ///< packed like data along the blocks
  ErrorStats error;                ///< the dequantized weights against float
};

PackedWeight quantizeWeight(const std::vector<float> &w, const WeightLayer &l,
                            const WeightOnlyOptions &options) {
  PackedWeight p;
  int64_t bits = options.bits, k = l.k, n = l.n;
  p.blockSize = options.group;
  if (p.blockSize == 0) {
    // Per channel: one block of K rounded up to a power of two, or blocks
    // of kMaxGroup beyond that.
    p.blockSize = 16;
    while (p.blockSize < k && p.blockSize < kMaxGroup)
      p.blockSize *= 2;
  }
  p.blocks = (k + p.blockSize - 1) / p.blockSize;
  int64_t levels = (int64_t(1) << bits) - 1, perByte = 8 / bits;
  int64_t blob = p.blockSize / perByte;
  p.data.assign(n * p.blocks * blob, 0);
  p.scales.assign(n * p.blocks, 0);
  int64_t zpCols = (p.blocks + perByte - 1) / perByte;
  if (!options.symmetric)
    p.zeroPoints.assign(n * zpCols, 0);
  auto at = [&](int64_t row, int64_t col) {
    return l.transposed ? w[col * k + row] : w[row * n + col];
  };
  std::vector<float> original, dequantized;
  for (int64_t c = 0; c < n; ++c)
    for (int64_t b = 0; b < p.blocks; ++b) {
      int64_t begin = b * p.blockSize, end = std::min(k, begin + p.blockSize);
      double lo = 0, hi = 0;
      for (int64_t r = begin; r < end; ++r) {
        lo = std::min<double>(lo, at(r, c));
        hi = std::max<double>(hi, at(r, c));
      }
      double scale;
      int64_t zp;
      if (options.symmetric) {
        zp = int64_t(1) << (bits - 1);
        scale = std::max(-lo, hi) / static_cast<double>(zp - 1);
      } else {
        scale = (hi - lo) / static_cast<double>(levels);
        zp = scale > 0 ? std::clamp<int64_t>(
                             static_cast<int64_t>(std::nearbyint(-lo / scale)),
                             0, levels)
                       : 0;
      }
      auto scale32 = static_cast<float>(scale > 0 ? scale : 1.0);
      p.scales[c * p.blocks + b] = scale32;
      if (!options.symmetric)
        p.zeroPoints[c * zpCols + b / perByte] |=
            static_cast<uint8_t>(zp << ((b % perByte) * bits));
      for (int64_t i = 0; i < p.blockSize; ++i) {
        int64_t r = begin + i, q = zp;
        if (r < end) {
          q = std::clamp<int64_t>(
              static_cast<int64_t>(std::nearbyint(at(r, c) / scale32)) + zp, 0,
              levels);
          original.push_back(at(r, c));
          dequantized.push_back(static_cast<float>(q - zp) * scale32);
        }
        p.data[(c * p.blocks + b) * blob + i / perByte] |=
            static_cast<uint8_t>(q << ((i % perByte) * bits));
      }
    }
  p.error.add(original, dequantized);
  return p;
}

struct RewrittenWeight {
  const WeightLayer *layer;
  PackedWeight packed;
  int64_t floatBytes = 0, packedBytes = 0;
};

} // namespace

LogicalResult dlc::quantizeWeights(MLIRContext &context,
                                   onnx::ModelProto &model,
                                   llvm::StringRef modelName,
                                   const ONNXImportOptions &importOptions,
                                   const WeightOnlyOptions &options) {
  Location loc = FileLineColLoc::get(&context, modelName, 0, 0);
  std::string baseDir = externalDataDir(modelName, importOptions);
  std::vector<std::string> unmatched = options.skip;
  std::vector<WeightLayer> layers =
      findWeightLayers(model, options.skip, unmatched);
  if (!unmatched.empty())
    return emitError(loc, "--weights-skip: the model has no node named '")
           << unmatched.front() << "'";
  if (layers.empty())
    return emitError(loc, "--weights: nothing to quantize: no MatMul with a "
                          "constant 2-D float32 right operand, nor Gemm with "
                          "a constant weight, transA 0, alpha and beta 1 and "
                          "a bias of one value per output");

  const onnx::ModelProto original = model;
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int> readBefore;
  collectReads(graph, readBefore);
  std::set<std::string> used = usedNames(graph);
  std::map<std::string, const onnx::TensorProto *> constants =
      constantTensors(original.graph());
  std::vector<RewrittenWeight> rewritten;
  for (const WeightLayer &l : layers) {
    std::string error;
    std::optional<std::vector<float>> w =
        readFloats(*constants.at(l.weight), baseDir, error);
    if (!w)
      return emitError(loc, "--weights: the weight '")
             << l.weight << "' of node '" << l.name << "' " << error;
    PackedWeight packed = quantizeWeight(*w, l, options);
    int64_t blob = packed.blockSize * options.bits / 8;
    bool gather = l.opType == "Gather";
    // GatherBlockQuantized's rows are whole blocks (its data holds H
    // values a row): a table whose rows end in a partial block stays float.
    if (gather && l.k % packed.blockSize != 0)
      continue;
    std::string prefix = l.weight + "_Q" + std::to_string(options.bits);
    std::string dataName = freshName(prefix, used);
    std::string scaleName = freshName(l.weight + "_scales", used);
    SmallVector<int64_t> dataDims = {l.n, packed.blocks, blob},
                         scaleDims = {l.n * packed.blocks};
    if (gather) {
      dataDims = {l.n, packed.blocks * blob};
      scaleDims = {l.n, packed.blocks};
    }
    *graph.add_initializer() =
        rawTensor(dataName, onnx::TensorProto::UINT8, dataDims,
                  packed.data.data(), packed.data.size());
    *graph.add_initializer() =
        rawTensor(scaleName, onnx::TensorProto::FLOAT, scaleDims,
                  packed.scales.data(), packed.scales.size() * sizeof(float));
    std::string zpName;
    if (!packed.zeroPoints.empty()) {
      zpName = freshName(l.weight + "_zero_points", used);
      SmallVector<int64_t> zpDims = {
          static_cast<int64_t>(packed.zeroPoints.size())};
      if (gather)
        zpDims = {l.n, static_cast<int64_t>(packed.zeroPoints.size()) / l.n};
      *graph.add_initializer() =
          rawTensor(zpName, onnx::TensorProto::UINT8, zpDims,
                    packed.zeroPoints.data(), packed.zeroPoints.size());
    }
    onnx::NodeProto &node = *graph.mutable_node(l.node);
    std::string a = node.input(0);
    onnx::NodeProto replacement;
    replacement.set_name(node.name().empty() ? l.name + "_Q" : node.name());
    replacement.set_domain("com.microsoft");
    if (gather) {
      replacement.set_op_type("GatherBlockQuantized");
      for (const std::string &in : {dataName, l.input, scaleName, zpName})
        replacement.add_input(in);
    } else {
      replacement.set_op_type("MatMulNBits");
      for (const std::string &in :
           {a, dataName, scaleName, zpName, std::string(), l.bias})
        replacement.add_input(in);
    }
    while (replacement.input_size() &&
           replacement.input(replacement.input_size() - 1).empty())
      replacement.mutable_input()->RemoveLast();
    replacement.add_output(l.output);
    if (gather) {
      addIntAttr(replacement, "gather_axis", 0);
      addIntAttr(replacement, "quantize_axis", 1);
    } else {
      addIntAttr(replacement, "K", l.k);
      addIntAttr(replacement, "N", l.n);
    }
    addIntAttr(replacement, "bits", options.bits);
    addIntAttr(replacement, "block_size", packed.blockSize);
    node = std::move(replacement);
    RewrittenWeight r{&l, std::move(packed), l.k * l.n * 4, 0};
    r.packedBytes =
        static_cast<int64_t>(r.packed.data.size() + r.packed.scales.size() * 4 +
                             r.packed.zeroPoints.size());
    rewritten.push_back(std::move(r));
  }
  dropUnreadConstants(graph, readBefore);
  bool hasMicrosoft = llvm::any_of(model.opset_import(),
                                   [](const onnx::OperatorSetIdProto &id) {
                                     return id.domain() == "com.microsoft";
                                   });
  if (!hasMicrosoft) {
    onnx::OperatorSetIdProto *id = model.add_opset_import();
    id->set_domain("com.microsoft");
    id->set_version(1);
  }

  int64_t floatBytes = 0, packedBytes = 0;
  for (const RewrittenWeight &r : rewritten) {
    floatBytes += r.floatBytes;
    packedBytes += r.packedBytes;
  }
  llvm::errs() << "dlc-compile: note: --weights quantized " << rewritten.size()
               << " layers to " << options.bits
               << " bits: " << llvm::format("%.1f", floatBytes / 1048576.0)
               << " -> " << llvm::format("%.1f", packedBytes / 1048576.0)
               << " MiB of weights\n";
  if (options.reportPath.empty())
    return success();

  // The report: every layer's weight error; with calibration data also
  // its output's and every graph output's error against float.
  std::vector<std::string> outputs;
  for (const RewrittenWeight &r : rewritten)
    outputs.push_back(r.layer->output);
  FailureOr<RewriteErrors> measured =
      measureRewrite(context, original, model, modelName, importOptions,
                     options.calibrationDir, outputs);
  if (failed(measured))
    return failure();
  const RewriteErrors &errors = *measured;
  int64_t samples = errors.samples;
  llvm::json::Array layerArray;
  for (auto [i, r] : llvm::enumerate(rewritten)) {
    llvm::json::Object o{
        {"name", r.layer->name},
        {"op", r.layer->opType},
        {"weight", r.layer->weight},
        {"output", r.layer->output},
        {"k", r.layer->k},
        {"n", r.layer->n},
        {"block_size", r.packed.blockSize},
        {"weight_sqnr_db", jsonNumber(r.packed.error.sqnr())},
        {"weight_max_abs_error", jsonNumber(r.packed.error.maxAbs)},
        {"float_bytes", r.floatBytes},
        {"packed_bytes", r.packedBytes},
    };
    if (samples) {
      o["sqnr_db"] = jsonNumber(errors.tensors[i].sqnr());
      o["cosine"] = jsonNumber(errors.tensors[i].cosine());
    }
    layerArray.push_back(std::move(o));
  }
  llvm::json::Object report{
      {"model", modelName.str()},
      {"weights", llvm::formatv("int{0}", options.bits).str()},
      {"symmetric", options.symmetric},
      {"quantized_layers", static_cast<int64_t>(rewritten.size())},
      {"float_weight_bytes", floatBytes},
      {"packed_weight_bytes", packedBytes},
      {"calibration_samples", samples},
      {"layers", std::move(layerArray)},
  };
  if (samples) {
    report["end_to_end_error"] = jsonNumber(errors.endToEnd());
    report["outputs"] = errors.outputsJSON();
  }
  return writeReport(loc, options.reportPath, std::move(report));
}

LogicalResult dlc::quantizeWeightsONNXFile(MLIRContext &context,
                                           llvm::StringRef path,
                                           const CompileOptions &compileOptions,
                                           const WeightOnlyOptions &options,
                                           llvm::raw_ostream &output) {
  return quantizeAndEmit(
      context, path, compileOptions, output, [&](onnx::ModelProto &model) {
        return quantizeWeights(context, model, path,
                               compileOptions.importOptions, options);
      });
}
