//===- WeightSparsity.h - zeros in the weights of a model -------*- C++ -*-===//
//
// What `dlc-compile --stats` reports about each convolution, matrix product
// and Gemm whose weight is a constant: how many of its elements are zero,
// and how they fall: in 2:4 groups along the reduction, or in whole blocks
// of output channels by reduction elements. The compiler's sparse kernels
// and the cost model that chooses them (issue 22) start from these numbers.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_WEIGHTSPARSITY_H
#define DLC_PIPELINES_WEIGHTSPARSITY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <string>
#include <vector>

namespace dlc {

/// Block shapes counted, as output channels x reduction elements: along the
/// reduction (1x4), along output channels (4x1, 8x1, 16x1: the vector a
/// channels-last CPU kernel fills), and square (4x4).
inline constexpr std::array<std::array<int64_t, 2>, 5> kSparsityBlocks = {
    {{1, 4}, {4, 1}, {4, 4}, {8, 1}, {16, 1}}};

struct WeightSparsity {
  std::string layer; ///< the ONNX node (location name), or the op
  std::string op;    ///< conv, matmul, ...
  int64_t outputs = 0, reduction = 0; ///< the weight as [outputs, reduction]
  int64_t elements = 0, zeros = 0;
  /// Of the groups of 4 consecutive reduction elements of one output, how
  /// many hold at most 2 nonzeros (all of them: the layer is 2:4 sparse);
  /// a reduction not divisible by 4 has its last group left out.
  int64_t groups24 = 0, sparse24 = 0;
  /// Per kSparsityBlocks entry: whole blocks, and those all zero.
  std::array<int64_t, kSparsityBlocks.size()> blocks = {}, zeroBlocks = {};
};

/// Every linalg contraction or convolution of `module` with a constant
/// integer or float operand that it reduces over (a weight), in program
/// order. Weights are read once each, whatever their storage.
std::vector<WeightSparsity> analyzeWeightSparsity(mlir::ModuleOp module);

/// The table --stats prints: one line per layer, then a summary.
void printWeightSparsity(const std::vector<WeightSparsity> &layers,
                         llvm::raw_ostream &os);

/// A convolution or matrix product that dlc-sparse-contractions made
/// sparse.
struct SparseKernel {
  std::string layer; ///< the ONNX node (location name)
  int64_t rows = 0;  ///< outputs per group (channels, or columns)
  /// (group, input channel or reduction index) pairs kept, of all of them.
  int64_t kept = 0, pairs = 0;
};

/// The sparse convolutions and matrix products of `module` after dispatch
/// formation, in program order.
std::vector<SparseKernel> findSparseKernels(mlir::ModuleOp module);

/// What --stats prints of them: a summary line, then one per layer.
void printSparseKernels(const std::vector<SparseKernel> &kernels,
                        llvm::StringRef mode, llvm::raw_ostream &os);

} // namespace dlc

#endif // DLC_PIPELINES_WEIGHTSPARSITY_H
