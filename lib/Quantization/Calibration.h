//===- Calibration.h - calibration data and host runs of a model -*- C++ -*-=//
//
// Private to the quantizer: the calibration folder, and a model compiled
// for this machine's CPU and run through dlc's own runtime.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_QUANTIZATION_CALIBRATION_H
#define DLC_LIB_QUANTIZATION_CALIBRATION_H

#include "dlc/Frontend/ONNX/ModelProto.h"
#include "dlc/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

#include <memory>
#include <string>
#include <vector>

struct dlc_context_t;
struct dlc_model_t;
struct dlc_session_t;

namespace dlc {

/// The calibration folder: one sub-folder per sample (in name order), each
/// with `<input>.npy` for every graph input and nothing else that looks
/// like an input.
struct CalibrationSet {
  std::string dir;
  std::vector<std::string> inputNames;
  std::vector<std::string> samples; ///< the sample folders

  /// Lists `dir` and checks its layout against `inputNames`; the
  /// contents of the files are checked when a run reads them.
  static mlir::FailureOr<CalibrationSet>
  open(mlir::MLIRContext &context, llvm::StringRef dir,
       llvm::ArrayRef<std::string> inputNames);
  std::string file(size_t sample, size_t input) const;
};

/// The error of a quantized tensor against its float value, accumulated
/// over samples.
struct ErrorStats {
  double floatSquares = 0, errorSquares = 0, dot = 0, quantSquares = 0;
  double maxAbs = 0;

  void add(llvm::ArrayRef<float> f, llvm::ArrayRef<float> q) {
    size_t n = std::min(f.size(), q.size());
    for (size_t i = 0; i < n; ++i) {
      double a = f[i], b = q[i], e = a - b;
      floatSquares += a * a;
      quantSquares += b * b;
      errorSquares += e * e;
      dot += a * b;
      maxAbs = std::max(maxAbs, std::fabs(e));
    }
  }
  /// Signal to quantization noise, in dB (capped at 200 for exact ones).
  double sqnr() const {
    if (errorSquares <= 0)
      return 200;
    if (floatSquares <= 0)
      return -200;
    return std::min(200.0, 10 * std::log10(floatSquares / errorSquares));
  }
  double cosine() const {
    if (floatSquares <= 0 || quantSquares <= 0)
      return floatSquares == quantSquares ? 1.0 : 0.0;
    return dot / std::sqrt(floatSquares * quantSquares);
  }
  double relativeRMS() const {
    if (floatSquares <= 0)
      return errorSquares > 0 ? INFINITY : 0.0;
    return std::sqrt(errorSquares / floatSquares);
  }
};

/// A float model compiled for this machine's CPU, loaded with dlc's runtime
/// and ready to run calibration samples.
class HostModel {
public:
  ~HostModel();

  /// Compiles `model` (a copy is imported) with `extraOutputs` added to
  /// its graph outputs.
  static mlir::FailureOr<std::unique_ptr<HostModel>>
  compile(mlir::MLIRContext &context, const ::onnx::ModelProto &model,
          llvm::StringRef modelName, const ONNXImportOptions &importOptions,
          llvm::ArrayRef<std::string> extraOutputs);

  /// Runs `sample` of `set`; the outputs stay readable until the next run.
  mlir::LogicalResult run(const CalibrationSet &set, size_t sample);

  size_t outputCount() const { return outputs.size(); }
  const std::string &outputName(size_t i) const { return outputs[i].name; }
  /// Null when output `i` is not a float (16-bit floats come widened).
  llvm::ArrayRef<float> output(size_t i) const { return outputs[i].data; }
  llvm::ArrayRef<int64_t> outputDims(size_t i) const { return outputs[i].dims; }
  /// The last run's value of graph input `i` (float32 inputs only).
  size_t inputCount() const { return inputs.size(); }
  const std::string &inputName(size_t i) const { return inputs[i].name; }
  llvm::ArrayRef<float> input(size_t i) const { return inputs[i].data; }
  llvm::ArrayRef<int64_t> inputDims(size_t i) const { return inputs[i].dims; }

private:
  HostModel() = default;
  struct Tensor {
    std::string name;
    uint32_t dtype = 0;
    std::vector<int64_t> dims;
    size_t bytes = 0;
    std::vector<float> data;
    std::vector<uint8_t> raw; ///< non-float inputs and outputs
  };
  mlir::MLIRContext *context = nullptr;
  std::unique_ptr<uint8_t[]> storage; ///< the artifact, aligned inside
  dlc_context_t *runtime = nullptr;
  dlc_model_t *loaded = nullptr;
  dlc_session_t *session = nullptr;
  std::vector<Tensor> inputs, outputs;
};

/// What --keep-float=auto's search found.
struct KeepFloatSearch {
  size_t kept = 0;        ///< layers kept in float; 0: no count below all held
  size_t failed = 0;      ///< the most kept in a probe that did not hold
  double fewestError = 0; ///< that probe's error (the first's when none)
};

/// --keep-float=auto's search over `n` layers ranked most sensitive first,
/// the model's error with none kept being `error`: the fewest k of them
/// kept in float for which `probe(k)` (which rewrites the model keeping
/// those and measures it: within the budget, and the error) holds, by
/// doubling k from 1 up to n - 1, then bisecting. The model is left as
/// the probe of the answer rewrote it.
mlir::FailureOr<KeepFloatSearch> searchKeepFloat(
    size_t n, double error,
    llvm::function_ref<mlir::FailureOr<std::pair<bool, double>>(size_t)> probe);

/// `v` as `style` (printf's) writes it, for a diagnostic.
inline std::string formatNumber(double v, const char *style) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format(style, v);
  return text;
}

/// A report's number: JSON has no infinities, they are written as null.
inline llvm::json::Value jsonNumber(double v) {
  if (!std::isfinite(v))
    return nullptr;
  return v;
}

/// The graph inputs a calibration sample holds: those that are neither
/// initializers nor bound to a constant on the command line.
std::vector<std::string> sampleInputs(const ::onnx::ModelProto &model,
                                      const ONNXImportOptions &importOptions);

/// Writes `report` as indented JSON to `path`, or fails naming
/// --quant-report.
mlir::LogicalResult writeReport(mlir::Location loc, llvm::StringRef path,
                                llvm::json::Object report);

/// A quantizer's dlc-compile run: reads the model at `path`, rewrites it
/// with `quantize`, and writes it compiled as `compileOptions` ask, or with
/// EmitKind::QDQONNX the model itself, to `output`.
mlir::LogicalResult quantizeAndEmit(
    mlir::MLIRContext &context, llvm::StringRef path,
    const CompileOptions &compileOptions, llvm::raw_ostream &output,
    llvm::function_ref<mlir::LogicalResult(::onnx::ModelProto &)> quantize);

/// A report's entry for graph output `name`: its error against float.
inline llvm::json::Object outputErrorJSON(llvm::StringRef name,
                                          const ErrorStats &e) {
  return llvm::json::Object{
      {"name", name.str()},
      {"sqnr_db", jsonNumber(e.sqnr())},
      {"cosine", jsonNumber(e.cosine())},
      {"relative_rms_error", jsonNumber(e.relativeRMS())},
      {"max_abs_error", jsonNumber(e.maxAbs)},
  };
}

/// Where a model's external data files are: --external-data-dir, else the
/// model file's folder ("." for a model without one).
std::string externalDataDir(llvm::StringRef modelName,
                            const ONNXImportOptions &importOptions);

/// What a rewrite (--weights, --prune) did to a model's numbers on a
/// calibration set: the error of each named tensor of the rewritten model
/// against the original's, and of every graph output.
struct RewriteErrors {
  std::vector<ErrorStats> tensors;
  std::vector<std::string> graphOutputs;
  std::vector<ErrorStats> graphErrors;
  int64_t samples = 0;
  /// The report's `outputs` entries, and the largest relative RMS error of
  /// a graph output (its `end_to_end_error`).
  llvm::json::Array outputsJSON() const;
  double endToEnd() const;
};

/// Compiles `original` and `rewritten` for this machine, runs both on
/// every sample of `calibrationDir` and compares `tensors` (names both
/// models compute) and the graph outputs; no samples without a folder.
mlir::FailureOr<RewriteErrors>
measureRewrite(mlir::MLIRContext &context, const ::onnx::ModelProto &original,
               const ::onnx::ModelProto &rewritten, llvm::StringRef modelName,
               const ONNXImportOptions &importOptions,
               llvm::StringRef calibrationDir,
               llvm::ArrayRef<std::string> tensors);

/// Index of every output of `host` by name.
llvm::StringMap<size_t> outputIndex(const HostModel &host);

/// The float value of `name` in `host`'s last run: an output, or a graph
/// input.
llvm::ArrayRef<float> valueOf(const HostModel &host,
                              const llvm::StringMap<size_t> &outputs,
                              llvm::StringRef name);

/// The dims of `name` in `host`: an output, or a graph input.
llvm::ArrayRef<int64_t> dimsOf(const HostModel &host,
                               const llvm::StringMap<size_t> &outputs,
                               llvm::StringRef name);

} // namespace dlc

#endif // DLC_LIB_QUANTIZATION_CALIBRATION_H
