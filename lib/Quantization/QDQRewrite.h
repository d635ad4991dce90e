//===- QDQRewrite.h - the QDQ form of a calibrated model --------*- C++ -*-===//
//
// Private to the quantizer: which nodes of a float model can become integer
// kernels, and the rewrite that puts QuantizeLinear/DequantizeLinear around
// them once calibration has chosen every range.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_QUANTIZATION_QDQREWRITE_H
#define DLC_LIB_QUANTIZATION_QDQREWRITE_H

#include "dlc/Quantization/Quantize.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <limits>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace dlc {

/// A Conv, MatMul or Gemm with constant float weights that can become an
/// integer kernel.
struct QuantizableLayer {
  int node = -1;      ///< index in the graph's node list
  std::string name;   ///< the node's name, or its first output's
  std::string opType; ///< Conv, MatMul or Gemm
  std::string input;  ///< the activation it reads
  std::string weight; ///< initializer
  std::string bias;   ///< initializer, or ""
  int weightAxis = 0; ///< the weight's output-channel axis
  std::string output; ///< what the node writes
  /// A Relu or Clip that is the only reader of `output`: its output is
  /// observed too, and the activation disappears into the 8-bit encoding
  /// when that encoding cannot hold anything the activation would clip.
  int activation = -1;
  std::string activationOutput;
  double clipLo = -std::numeric_limits<double>::infinity();
  double clipHi = std::numeric_limits<double>::infinity();
};

/// The quantizable layers of `model`'s main graph in node order, leaving
/// out the nodes named in `keepFloat` (names found are removed from
/// `unmatched`, which starts as a copy of keepFloat).
std::vector<QuantizableLayer>
findQuantizableLayers(const onnx::ModelProto &model,
                      const std::vector<std::string> &keepFloat,
                      std::vector<std::string> &unmatched);

/// The tensors of `layers` whose encoding may be per channel: 4-D
/// activations that Conv layers alone read among the layers and that no
/// other kind of layer writes. A Conv then reads `(q - zeroPoint)` and
/// takes each input channel's scale into its weights, and writes its output
/// in steps of each output channel's scale (the weights and bias divided by
/// them), so that its integer kernel sees one scale and zero point per
/// tensor, as QLinearConv has them.
std::vector<std::string>
perChannelCandidates(const std::vector<QuantizableLayer> &layers);

/// What the rewrite did to one layer, for the report.
struct RewrittenLayer {
  const QuantizableLayer *layer = nullptr;
  /// The quantized model's name for the dequantized input (the input
  /// itself when another layer quantized it); a per-channel input's integer
  /// kernel reads its steps instead.
  std::string quantizedInput;
  /// The layer's output tensor: the activation's output when the
  /// activation was folded, else the node's output.
  std::string output;
  bool activationFolded = false;
  Encoding inputEncoding, outputEncoding;
};

/// Rewrites `model` into the QDQ form: every layer's weight per output
/// channel in symmetric int8, its bias in int32 at the scale of input times
/// weight, its input and output in uint8 with the encodings of
/// `encodings` (by tensor name: every layer's input, output and activation
/// output must have one). A tensor with a per-channel encoding is
/// quantized and dequantized with scale 1 (the steps `q - zp`, which Conv
/// layers read) and Muls by the channels' scales around that; a Conv layer's
/// weight is multiplied by its input channels' scales and divided by its
/// output channels' before it is quantized, and its QuantizeLinear has
/// scale 1. `baseDir` is where external weight data lives.
/// `shapes` holds the dims of the layers' inputs and outputs (what
/// calibration saw): every tensor the rewrite adds is declared in the
/// graph's value_info with them, so that the model is typed where ONNX
/// shape inference does not run (dlc's importer skips it above the ONNX
/// library's IR version), and dlc-fold-qdq can match its QDQ patterns.
mlir::LogicalResult
rewriteToQDQ(mlir::MLIRContext &context, onnx::ModelProto &model,
             llvm::StringRef modelName, llvm::StringRef baseDir,
             const std::vector<QuantizableLayer> &layers,
             const llvm::StringMap<Encoding> &encodings,
             const llvm::StringMap<std::vector<int64_t>> &shapes,
             std::vector<RewrittenLayer> &rewritten);

/// Folds every BatchNormalization that is the only reader of a Conv with
/// constant weights into that Conv (new weights and bias), in place, so
/// that what gets quantized is the activation the network computes with,
/// not a tensor whose channels BatchNormalization would rescale (its
/// channels' ranges differ by orders of magnitude before it, and one
/// per-tensor encoding cannot serve them all). Returns how many it folded.
int foldBatchNormalization(onnx::ModelProto &model, llvm::StringRef baseDir);

} // namespace dlc

#endif // DLC_LIB_QUANTIZATION_QDQREWRITE_H
