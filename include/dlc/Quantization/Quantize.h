//===- Quantize.h - post-training quantization of ONNX models ---*- C++ -*-===//
//
// dlc-compile --quantize=int8: the float model runs on dlc's own CPU backend
// over a calibration set, every tensor a quantized kernel reads or writes is
// observed, a range is chosen for each, and the model is rewritten into the
// QDQ form (QuantizeLinear/DequantizeLinear around Conv, MatMul and Gemm)
// that the rest of the compiler folds into integer kernels and that ONNX
// Runtime runs as it is. docs/quantization.md describes the choices.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_QUANTIZATION_QUANTIZE_H
#define DLC_QUANTIZATION_QUANTIZE_H

#include "dlc/Frontend/ONNX/ModelProto.h"
#include "dlc/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// How a tensor's clipping range is chosen from what calibration saw.
enum class CalibrationMethod {
  MinMax,     ///< the smallest and largest value seen
  Percentile, ///< the given percentile of the values (both tails)
  Entropy,    ///< the threshold with the least KL divergence (histogram)
  MSE,        ///< the range with the least expected squared error
};

struct CalibrationMethodSpec {
  CalibrationMethod kind = CalibrationMethod::MinMax;
  /// With Percentile: the share of values kept inside the range, in percent.
  double percentile = 99.99;
  /// As the command line spelled it (for reports).
  std::string spelling = "minmax";
};

/// Parses `minmax`, `percentile[:P]`, `entropy` or `mse`.
std::optional<CalibrationMethodSpec>
parseCalibrationMethod(llvm::StringRef spec, std::string &error);

/// What calibration saw of one tensor: its range and a histogram of its
/// values over [-absMax, absMax] (kHistogramBins bins, symmetric so that
/// both signed and one-sided ranges can be read from it).
struct TensorStatistics {
  static constexpr int kHistogramBins = 4096;
  double min = 0, max = 0;
  std::vector<double> histogram;
  double absMax() const { return std::max(-min, max); }
  double binWidth() const { return 2 * absMax() / kHistogramBins; }
};

/// The range [lo, hi] to quantize a tensor to `levels` steps (256 for
/// 8 bits), as `method` chooses it; it always contains 0.
std::pair<double, double> chooseRange(const TensorStatistics &stats,
                                      const CalibrationMethodSpec &method,
                                      int levels = 256);

/// An 8-bit encoding: real = (q - zeroPoint) * scale, or per channel (axis
/// 1 of an NCHW tensor), real = (q - zeroPoint) * channelScales[c] with one
/// zero point for all channels.
struct Encoding {
  double scale = 1; ///< per channel: the largest channel's
  int zeroPoint = 0;
  std::vector<double> channelScales; ///< empty: per tensor
  bool perChannel() const { return !channelScales.empty(); }
  /// The range every channel's encoding stays inside.
  double lo() const { return (0 - zeroPoint) * scale; }
  double hi() const { return (255 - zeroPoint) * scale; }
};

/// The uint8 encoding of the range [lo, hi] (which contains 0).
Encoding uint8Encoding(double lo, double hi);

/// The per-channel uint8 encoding of the ranges [lo[c], hi[c]] (each
/// containing 0) with the zero point shared by all channels that makes the
/// channels' steps smallest (their geometric mean).
Encoding uint8ChannelEncoding(const std::vector<double> &lo,
                              const std::vector<double> &hi);

struct QuantizeOptions {
  /// One folder per sample, with one `<graph input name>.npy` per input.
  std::string calibrationDir;
  CalibrationMethodSpec method;
  /// Where to write the per-layer report (JSON), or "".
  std::string reportPath;
  /// Activations that only convolutions read get one scale per channel
  /// (with one zero point), which the convolutions take into their
  /// weights; false: one scale per tensor everywhere.
  bool perChannelActivations = true;
  /// Nodes (by name, or by their first output's name when unnamed) to keep
  /// in float.
  std::vector<std::string> keepFloat;
  /// Keep the most sensitive layers in float until the end-to-end error
  /// (relative RMS error of the outputs against float on the calibration
  /// set) is at most this.
  std::optional<double> autoKeepFloatBudget;
};

/// Parses --keep-float's value (`auto:<error>` or `name,name,...`) into
/// `names` or `budget`; returns an error message or "".
std::string parseKeepFloat(llvm::StringRef spec,
                           std::vector<std::string> &names,
                           std::optional<double> &budget);

/// Calibrates `model` (read from `modelName`; `importOptions` are the ones
/// the model is compiled with) and rewrites it in place into its QDQ form.
/// Emits diagnostics and fails on malformed calibration data, or when
/// nothing in the model can be quantized.
mlir::LogicalResult quantizeModel(mlir::MLIRContext &context,
                                  ::onnx::ModelProto &model,
                                  llvm::StringRef modelName,
                                  const ONNXImportOptions &importOptions,
                                  const QuantizeOptions &options);

/// dlc-compile --quantize: reads the model at `path`, quantizes it and
/// writes what `compileOptions.emit` asks for (EmitKind::QDQONNX: the
/// quantized model itself).
mlir::LogicalResult quantizeONNXFile(mlir::MLIRContext &context,
                                     llvm::StringRef path,
                                     const CompileOptions &compileOptions,
                                     const QuantizeOptions &options,
                                     llvm::raw_ostream &output);

/// dlc-compile --weights: weight-only quantization of MatMul and Gemm
/// weights (lib/Quantization/WeightOnly.cpp).
struct WeightOnlyOptions {
  int64_t bits = 4;
  /// Block size along K (a power of 2, at least 16); 0: one block per
  /// output column (per channel).
  int64_t group = 32;
  bool symmetric = false;
  /// Nodes (by name, or by their first output's name) left in float.
  std::vector<std::string> skip;
  /// Where to write the per-layer report (JSON), or "".
  std::string reportPath;
  /// With a report: samples to measure the outputs' error against float
  /// on (the --quantize folder layout), or "" for the weights' error only.
  std::string calibrationDir;
};

/// Parses `int4[:group=G][:sym|asym]` or `int8[:per-channel|group=G][:sym
/// |asym]`; on failure returns nothing and sets `error`.
std::optional<WeightOnlyOptions> parseWeightsSpec(llvm::StringRef spec,
                                                  std::string &error);

/// Rewrites every quantizable MatMul and Gemm of `model` into
/// com.microsoft.MatMulNBits with `options.bits`-bit weights, and writes
/// the report if asked. Fails when nothing can be quantized or a skipped
/// node does not exist.
mlir::LogicalResult quantizeWeights(mlir::MLIRContext &context,
                                    ::onnx::ModelProto &model,
                                    llvm::StringRef modelName,
                                    const ONNXImportOptions &importOptions,
                                    const WeightOnlyOptions &options);

/// dlc-compile --weights: reads the model at `path`, quantizes its weights
/// and writes what `compileOptions.emit` asks for (EmitKind::QDQONNX: the
/// quantized model itself, with MatMulNBits nodes).
mlir::LogicalResult
quantizeWeightsONNXFile(mlir::MLIRContext &context, llvm::StringRef path,
                        const CompileOptions &compileOptions,
                        const WeightOnlyOptions &options,
                        llvm::raw_ostream &output);

/// dlc-compile --precision: 16-bit tensors with float32 sums
/// (lib/Quantization/HalfPrecision.cpp).
struct PrecisionOptions {
  enum Type { F16, BF16 } type = F16;
  /// Nodes (by name, or by their first output's name) left in float32.
  std::vector<std::string> keepFloat;
  /// Keep the most sensitive 16-bit operators in float32 until every
  /// output's relative RMS error against float32 on the samples of
  /// `calibrationDir` is at most this.
  std::optional<double> autoKeepFloatBudget;
  /// Where to write the report (JSON), or "".
  std::string reportPath;
  /// With a report: samples to measure the outputs' error against float32
  /// on (the --quantize folder layout), or "".
  std::string calibrationDir;
  /// "fp16" or "bf16", as the command line spells it.
  llvm::StringRef spelling() const;
};

/// Parses `fp16` or `bf16`; on failure returns nothing and sets `error`.
std::optional<PrecisionOptions> parsePrecisionSpec(llvm::StringRef spec,
                                                   std::string &error);

/// Rewrites the float32 operators of `model` to compute on 16-bit tensors
/// (graph inputs and outputs stay float32), and writes the report if
/// asked. Fails when nothing can be converted or a kept node does not
/// exist.
mlir::LogicalResult lowerPrecision(mlir::MLIRContext &context,
                                   ::onnx::ModelProto &model,
                                   llvm::StringRef modelName,
                                   const ONNXImportOptions &importOptions,
                                   const PrecisionOptions &options);

/// dlc-compile --precision: reads the model at `path`, rewrites it and
/// writes what `compileOptions.emit` asks for (EmitKind::QDQONNX: the
/// 16-bit model itself). With `weightsFirst` (--weights given too), the
/// weights are quantized first and the 16-bit rewrite takes MatMulNBits'
/// activations, scales and bias too (fp16).
mlir::LogicalResult lowerPrecisionONNXFile(
    mlir::MLIRContext &context, llvm::StringRef path,
    const CompileOptions &compileOptions, const PrecisionOptions &options,
    llvm::raw_ostream &output, const WeightOnlyOptions *weightsFirst = nullptr);

/// dlc-compile --prune: magnitude pruning of Conv, Gemm and MatMul weights
/// (lib/Quantization/Pruning.cpp).
struct PruneOptions {
  enum Kind { NM, Block, Magnitude } kind = NM;
  /// NM: keep n of every m consecutive reduction elements of an output.
  int64_t n = 2, m = 4;
  /// Block: blocks of `rows` outputs by `cols` reduction elements.
  int64_t rows = 4, cols = 1;
  /// Block and Magnitude: the share of blocks (elements) kept, in (0, 1].
  double density = 0.5;
  /// Nodes (by name, or by their first output's name) left as they are.
  std::vector<std::string> skip;
  /// Where to write the per-layer report (JSON), or "".
  std::string reportPath;
  /// With a report: samples to measure the outputs' error against the
  /// original model on (the --quantize folder layout), or "".
  std::string calibrationDir;
  /// As --prune was given: 2:4, block:4x1:0.2, magnitude:0.5.
  std::string spelling;
};

/// Parses `N:M`, `block:<R>x<C>:<density>` or `magnitude:<density>`; on
/// failure returns nothing and sets `error`.
std::optional<PruneOptions> parsePruneSpec(llvm::StringRef spec,
                                           std::string &error);

/// Zeroes the weights of every Conv, Gemm and MatMul of `model` with a
/// constant float32 weight as `options` says, and writes the report if
/// asked. Fails when nothing can be pruned or a skipped node does not
/// exist.
mlir::LogicalResult pruneWeights(mlir::MLIRContext &context,
                                 ::onnx::ModelProto &model,
                                 llvm::StringRef modelName,
                                 const ONNXImportOptions &importOptions,
                                 const PruneOptions &options);

/// dlc-compile --prune: reads the model at `path`, prunes it and writes
/// what `compileOptions.emit` asks for (EmitKind::QDQONNX: the pruned
/// model itself).
mlir::LogicalResult pruneONNXFile(mlir::MLIRContext &context,
                                  llvm::StringRef path,
                                  const CompileOptions &compileOptions,
                                  const PruneOptions &options,
                                  llvm::raw_ostream &output);

} // namespace dlc

#endif // DLC_QUANTIZATION_QUANTIZE_H
