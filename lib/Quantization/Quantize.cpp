//===- Quantize.cpp - post-training quantization of ONNX models -----------===//
//
// Calibration (run the float model on the calibration set, observe every
// tensor a quantized layer reads or writes), range choice, the QDQ rewrite,
// and the error of the result: per layer and end to end against float on
// the same samples, for --quant-report and --keep-float=auto.
//
//===----------------------------------------------------------------------===//

#include "dlc/Quantization/Quantize.h"

#include "Calibration.h"
#include "QDQRewrite.h"
#include "dlc/Pipelines/CompileModel.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace dlc;

std::string dlc::parseKeepFloat(llvm::StringRef spec,
                                std::vector<std::string> &names,
                                std::optional<double> &autoBudget) {
  if (spec.consume_front("auto:")) {
    double budget;
    if (!llvm::to_float(spec, budget) || !(budget > 0))
      return "--keep-float=auto:" + spec.str() +
             ": the budget must be a positive number (the largest relative "
             "RMS error of an output against float, e.g. auto:0.05)";
    autoBudget = budget;
    return "";
  }
  llvm::SmallVector<llvm::StringRef> listed;
  spec.split(listed, ',', -1, /*KeepEmpty=*/false);
  if (listed.empty())
    return "--keep-float needs node names (name,name,...) or auto:<error>";
  for (llvm::StringRef name : listed)
    names.push_back(name.trim().str());
  return "";
}

namespace {

/// Error of a quantized tensor against its float value, accumulated over
/// samples.
struct Evaluation {
  std::vector<ErrorStats> inputs, outputs; ///< per rewritten layer
  std::vector<std::string> graphOutputs;
  std::vector<ErrorStats> graphOutputErrors;
  double endToEnd = 0; ///< the largest relative RMS error of an output
};

class Quantizer {
public:
  Quantizer(MLIRContext &context, onnx::ModelProto &model,
            llvm::StringRef modelName, const ONNXImportOptions &importOptions,
            const QuantizeOptions &options)
      : context(context), model(model), modelName(modelName),
        importOptions(importOptions), options(options),
        loc(FileLineColLoc::get(&context, modelName, 0, 0)) {
    baseDir = externalDataDir(modelName, importOptions);
  }

  LogicalResult run();

private:
  LogicalResult calibrate(const std::vector<QuantizableLayer> &layers);
  FailureOr<Evaluation> evaluate(const onnx::ModelProto &quantized,
                                 const std::vector<RewrittenLayer> &layers);
  LogicalResult writeReport(const std::vector<RewrittenLayer> &layers,
                            const Evaluation &eval,
                            const std::vector<std::string> &keptFloat);

  MLIRContext &context;
  onnx::ModelProto &model;
  llvm::StringRef modelName;
  const ONNXImportOptions &importOptions;
  const QuantizeOptions &options;
  Location loc;
  std::string baseDir;
  CalibrationSet set;
  std::unique_ptr<HostModel> floatModel;
  llvm::StringMap<TensorStatistics> statistics;
  /// Per channel (axis 1) of the tensors that may have per-channel
  /// encodings: the smallest and largest value seen.
  llvm::StringMap<std::pair<std::vector<double>, std::vector<double>>>
      channelRanges;
  llvm::StringMap<Encoding> encodings;
  /// The dims of every observed tensor.
  llvm::StringMap<std::vector<int64_t>> shapes;
};

LogicalResult
Quantizer::calibrate(const std::vector<QuantizableLayer> &layers) {
  std::vector<std::string> inputs = sampleInputs(model, importOptions);
  FailureOr<CalibrationSet> opened =
      CalibrationSet::open(context, options.calibrationDir, inputs);
  if (failed(opened))
    return failure();
  set = std::move(*opened);

  // Every tensor a quantized layer reads or writes; graph inputs are read
  // from the samples.
  std::vector<std::string> observed;
  llvm::StringSet<> seen;
  for (const QuantizableLayer &layer : layers)
    for (const std::string &name :
         {layer.input, layer.output, layer.activationOutput})
      if (!name.empty() && seen.insert(name).second)
        observed.push_back(name);
  std::vector<std::string> extraOutputs;
  for (const std::string &name : observed)
    if (!llvm::is_contained(inputs, name))
      extraOutputs.push_back(name);
  FailureOr<std::unique_ptr<HostModel>> host = HostModel::compile(
      context, model, modelName, importOptions, extraOutputs);
  if (failed(host))
    return failure();
  floatModel = std::move(*host);
  llvm::StringMap<size_t> outputs = outputIndex(*floatModel);

  // Per-channel ranges for the 4-D tensors only convolutions read.
  llvm::StringSet<> perChannel;
  if (options.perChannelActivations)
    for (const std::string &name : perChannelCandidates(layers))
      perChannel.insert(name);

  bool histograms = options.method.kind != CalibrationMethod::MinMax;
  for (int pass = 0; pass < (histograms ? 2 : 1); ++pass) {
    for (size_t sample = 0; sample < set.samples.size(); ++sample) {
      if (failed(floatModel->run(set, sample)))
        return failure();
      for (const std::string &name : observed) {
        llvm::ArrayRef<float> values = valueOf(*floatModel, outputs, name);
        if (values.empty())
          return emitError(loc, "quantization: '")
                 << name << "' is not a float32 tensor";
        TensorStatistics &s = statistics[name];
        if (pass == 0 && sample == 0) {
          llvm::ArrayRef<int64_t> dims = dimsOf(*floatModel, outputs, name);
          shapes[name].assign(dims.begin(), dims.end());
        }
        if (pass == 0 && perChannel.contains(name)) {
          const std::vector<int64_t> &dims = shapes[name];
          if (dims.size() != 4) {
            perChannel.erase(name);
          } else {
            int64_t channels = dims[1], plane = dims[2] * dims[3];
            auto &[lo, hi] = channelRanges[name];
            if (lo.empty()) {
              lo.assign(channels, std::numeric_limits<double>::infinity());
              hi.assign(channels, -std::numeric_limits<double>::infinity());
            }
            for (size_t k = 0; k < values.size(); ++k) {
              int64_t c = static_cast<int64_t>(k / plane) % channels;
              lo[c] = std::min<double>(lo[c], values[k]);
              hi[c] = std::max<double>(hi[c], values[k]);
            }
          }
        }
        if (pass == 0) {
          auto [lo, hi] = std::minmax_element(values.begin(), values.end());
          if (sample == 0) {
            s.min = *lo;
            s.max = *hi;
          }
          s.min = std::min<double>(s.min, *lo);
          s.max = std::max<double>(s.max, *hi);
          continue;
        }
        if (s.histogram.empty())
          s.histogram.assign(TensorStatistics::kHistogramBins, 0.0);
        double a = s.absMax();
        if (a <= 0)
          continue;
        double perBin = TensorStatistics::kHistogramBins / (2 * a);
        for (float v : values) {
          int bin = static_cast<int>((v + a) * perBin);
          ++s.histogram[std::clamp(bin, 0,
                                   TensorStatistics::kHistogramBins - 1)];
        }
      }
    }
  }
  for (const std::string &name : observed) {
    const TensorStatistics &s = statistics[name];
    if (!std::isfinite(s.min) || !std::isfinite(s.max))
      return emitError(loc, "quantization: '")
             << name << "' held a non-finite value on the calibration set";
    auto [lo, hi] = chooseRange(s, options.method);
    if (!perChannel.contains(name)) {
      encodings[name] = uint8Encoding(lo, hi);
      continue;
    }
    // Each channel's range is what it held, inside the range the method
    // chose for the tensor (so the method still decides what is clipped).
    auto [channelLo, channelHi] = channelRanges[name];
    for (size_t c = 0; c < channelLo.size(); ++c) {
      channelLo[c] = std::clamp(channelLo[c], lo, 0.0);
      channelHi[c] = std::clamp(channelHi[c], 0.0, hi);
    }
    encodings[name] = uint8ChannelEncoding(channelLo, channelHi);
  }
  return success();
}

FailureOr<Evaluation>
Quantizer::evaluate(const onnx::ModelProto &quantized,
                    const std::vector<RewrittenLayer> &layers) {
  std::vector<std::string> extra;
  for (const RewrittenLayer &r : layers) {
    extra.push_back(r.quantizedInput);
    extra.push_back(r.output);
  }
  FailureOr<std::unique_ptr<HostModel>> host =
      HostModel::compile(context, quantized, modelName, importOptions, extra);
  if (failed(host))
    return failure();
  HostModel &quant = **host;
  llvm::StringMap<size_t> floatOutputs = outputIndex(*floatModel);
  llvm::StringMap<size_t> quantOutputs = outputIndex(quant);
  Evaluation eval;
  eval.inputs.resize(layers.size());
  eval.outputs.resize(layers.size());
  for (const onnx::ValueInfoProto &output : model.graph().output())
    eval.graphOutputs.push_back(output.name());
  eval.graphOutputErrors.resize(eval.graphOutputs.size());
  for (size_t sample = 0; sample < set.samples.size(); ++sample) {
    if (failed(floatModel->run(set, sample)) || failed(quant.run(set, sample)))
      return failure();
    for (auto [i, r] : llvm::enumerate(layers)) {
      eval.inputs[i].add(valueOf(*floatModel, floatOutputs, r.layer->input),
                         valueOf(quant, quantOutputs, r.quantizedInput));
      eval.outputs[i].add(valueOf(*floatModel, floatOutputs, r.output),
                          valueOf(quant, quantOutputs, r.output));
    }
    for (auto [i, name] : llvm::enumerate(eval.graphOutputs))
      eval.graphOutputErrors[i].add(valueOf(*floatModel, floatOutputs, name),
                                    valueOf(quant, quantOutputs, name));
  }
  for (const ErrorStats &e : eval.graphOutputErrors)
    eval.endToEnd = std::max(eval.endToEnd, e.relativeRMS());
  return eval;
}

LogicalResult
Quantizer::writeReport(const std::vector<RewrittenLayer> &layers,
                       const Evaluation &eval,
                       const std::vector<std::string> &keptFloat) {
  llvm::json::Array layerArray;
  for (auto [i, r] : llvm::enumerate(layers)) {
    const TensorStatistics &s = statistics[r.output];
    layerArray.push_back(llvm::json::Object{
        {"name", r.layer->name},
        {"op", r.layer->opType},
        {"input", r.layer->input},
        {"output", r.output},
        {"activation_folded", r.activationFolded},
        {"observed_range", llvm::json::Array{s.min, s.max}},
        {"output_scale", r.outputEncoding.scale},
        {"output_per_channel", r.outputEncoding.perChannel()},
        {"output_zero_point", r.outputEncoding.zeroPoint},
        {"input_sqnr_db", jsonNumber(eval.inputs[i].sqnr())},
        {"sqnr_db", jsonNumber(eval.outputs[i].sqnr())},
        {"cosine", jsonNumber(eval.outputs[i].cosine())},
    });
  }
  llvm::json::Array outputArray;
  for (auto [i, name] : llvm::enumerate(eval.graphOutputs)) {
    const ErrorStats &e = eval.graphOutputErrors[i];
    outputArray.push_back(outputErrorJSON(name, e));
  }
  llvm::json::Array kept;
  for (const std::string &name : keptFloat)
    kept.push_back(name);
  llvm::json::Object report{
      {"model", modelName.str()},
      {"calibration_method", options.method.spelling},
      {"calibration_samples", static_cast<int64_t>(set.samples.size())},
      {"quantized_layers", static_cast<int64_t>(layers.size())},
      {"kept_float", std::move(kept)},
      {"end_to_end_error", jsonNumber(eval.endToEnd)},
      {"layers", std::move(layerArray)},
      {"outputs", std::move(outputArray)},
  };
  return dlc::writeReport(loc, options.reportPath, std::move(report));
}

LogicalResult Quantizer::run() {
  foldBatchNormalization(model, baseDir);
  std::vector<std::string> unmatched;
  std::vector<std::string> keep = options.keepFloat;
  std::vector<QuantizableLayer> layers =
      findQuantizableLayers(model, keep, unmatched);
  if (!unmatched.empty())
    return emitError(loc, "--keep-float: the model has no node named '")
           << unmatched.front() << "'";
  if (layers.empty()) {
    int64_t opset = 0;
    for (const onnx::OperatorSetIdProto &id : model.opset_import())
      if (id.domain().empty() || id.domain() == "ai.onnx")
        opset = id.version();
    InFlightDiagnostic diag =
        emitError(loc, "--quantize=int8: nothing to quantize: no 2-D Conv, "
                       "MatMul or Gemm with constant float32 weights");
    if (opset < 13)
      diag << " in a model of opset 13 or newer (this one is opset " << opset
           << "; per-channel weights need opset 13's DequantizeLinear: "
              "convert it with onnx.version_converter)";
    return diag;
  }
  if (failed(calibrate(layers)))
    return failure();

  const onnx::ModelProto original = model;
  std::vector<RewrittenLayer> rewritten;
  if (failed(rewriteToQDQ(context, model, modelName, baseDir, layers, encodings,
                          shapes, rewritten)))
    return failure();
  if (options.reportPath.empty() && !options.autoKeepFloatBudget)
    return success();

  FailureOr<Evaluation> eval = evaluate(model, rewritten);
  if (failed(eval))
    return failure();
  if (options.autoKeepFloatBudget &&
      eval->endToEnd > *options.autoKeepFloatBudget) {
    double budget = *options.autoKeepFloatBudget;
    // Layers ranked by how much error each adds to what it reads (the SQNR
    // of its output below that of its input): the first k of them stay in
    // float, with k the smallest that brings every output within the
    // budget, found by doubling, then bisecting.
    std::vector<size_t> order(rewritten.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto added = [&](size_t i) {
      return eval->inputs[i].sqnr() - eval->outputs[i].sqnr();
    };
    llvm::sort(order, [&](size_t a, size_t b) {
      return added(a) != added(b) ? added(a) > added(b) : a < b;
    });
    std::vector<std::string> ranked;
    for (size_t i : order)
      ranked.push_back(rewritten[i].layer->name);
    auto probe = [&](size_t k) -> FailureOr<std::pair<bool, double>> {
      keep = options.keepFloat;
      keep.insert(keep.end(), ranked.begin(), ranked.begin() + k);
      model = original;
      layers = findQuantizableLayers(model, keep, unmatched);
      if (failed(rewriteToQDQ(context, model, modelName, baseDir, layers,
                              encodings, shapes, rewritten)))
        return failure();
      eval = evaluate(model, rewritten);
      if (failed(eval))
        return failure();
      return std::pair(eval->endToEnd <= budget, eval->endToEnd);
    };
    size_t n = ranked.size();
    FailureOr<KeepFloatSearch> search =
        searchKeepFloat(n, eval->endToEnd, probe);
    if (failed(search))
      return failure();
    size_t holds = search->kept;
    if (!holds) {
      model = original;
      return emitError(loc, "--keep-float=auto:")
             << formatNumber(budget, "%g") << ": even with only "
             << n - search->failed << " of " << n
             << " layers quantized the largest relative RMS error of an "
                "output is "
             << formatNumber(search->fewestError, "%.4g")
             << "; raise the budget or do not quantize";
    }
    llvm::errs() << "dlc-compile: note: --keep-float=auto kept " << holds
                 << " of " << n << " layers in float; largest relative RMS "
                 << "error of an output "
                 << llvm::format("%.4g", eval->endToEnd) << " on "
                 << set.samples.size() << " calibration samples\n";
  }
  if (!options.reportPath.empty())
    return writeReport(rewritten, *eval, keep);
  return success();
}

} // namespace

LogicalResult dlc::quantizeModel(MLIRContext &context, onnx::ModelProto &model,
                                 llvm::StringRef modelName,
                                 const ONNXImportOptions &importOptions,
                                 const QuantizeOptions &options) {
  return Quantizer(context, model, modelName, importOptions, options).run();
}

LogicalResult dlc::quantizeONNXFile(MLIRContext &context, llvm::StringRef path,
                                    const CompileOptions &compileOptions,
                                    const QuantizeOptions &options,
                                    llvm::raw_ostream &output) {
  return quantizeAndEmit(
      context, path, compileOptions, output, [&](onnx::ModelProto &model) {
        return quantizeModel(context, model, path, compileOptions.importOptions,
                             options);
      });
}
