//===- KernelAnalysis.h - what several kernel passes ask of a kernel ------===//
//
// Queries over one kernel function that more than one codegen pass makes:
// its loop extents, the channel loop of a channels-last convolution, and
// the padded tiles its bufferized form fills and copies.
// Internal to lib/Codegen.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CODEGEN_KERNELANALYSIS_H
#define DLC_LIB_CODEGEN_KERNELANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace dlc::codegen {

/// The coefficient of dim `d` in `e`, when `e` is linear in it (a function
/// of other dims only counts 0).
std::optional<int64_t> linearCoefficient(mlir::AffineExpr e, unsigned d);

/// The op's loop extents from its operands' shapes, or nothing when they
/// do not determine them (no operand indexes some loop with a plain dim:
/// a generic that gathers through tensor.extract), where
/// getStaticLoopRanges would dereference a null map.
std::optional<llvm::SmallVector<int64_t>> loopRanges(mlir::linalg::LinalgOp op);

/// The root loop that walks the output channels of a channels-last
/// convolution in the kernel (dlc-conv-channels-last), and the size of its
/// channel blocks: the convolution's innermost output dim indexes its
/// filter, not its input, and the root reads that dim of the convolution's
/// result as `channel` or `channel mod block`.
struct ChannelLoop {
  unsigned loop;
  int64_t block;
  mlir::Value result; ///< the convolution's, which the root reads
};

/// The channel loop of `kernel` whose result op is `root`, if it has one.
std::optional<ChannelLoop> channelsLastLoop(mlir::func::FuncOp kernel,
                                            mlir::linalg::LinalgOp root);

/// The linalg op that computes `kernel`'s first result, or null.
mlir::linalg::LinalgOp resultOp(mlir::func::FuncOp kernel);

/// A buffer filled whole with one value and then one subview of it
/// overwritten whole (a padded tile, bufferized): `fill` writes `value`
/// to all of it, `copy` (all loops parallel, the next op touching the
/// buffer, reading none of it) writes all of `middle`.
struct FilledCopy {
  mlir::linalg::LinalgOp fill;
  mlir::Value value;
  mlir::memref::SubViewOp middle;
  mlir::linalg::LinalgOp copy;
  /// The ops after `copy` that use the buffer (directly or through a
  /// view), in block order.
  llvm::SmallVector<mlir::Operation *> readers;
};

/// `alloc`'s fill and copy, when its uses are that and (after the copy)
/// others in the same block; its shape is static.
std::optional<FilledCopy> filledCopy(mlir::memref::AllocOp alloc);

/// The value `alloc` is filled with whole, when that fill and the
/// terminator of its block are its only uses (a padded tile's branch for
/// an empty region); null otherwise.
mlir::Value filledThenYielded(mlir::memref::AllocOp alloc);

/// The value `op` writes to every element of its only output, when it is
/// one value: a linalg.fill's, or a generic's that yields a value from
/// outside its body or its scalar input.
mlir::Value fillValue(mlir::linalg::LinalgOp op);

} // namespace dlc::codegen

#endif // DLC_LIB_CODEGEN_KERNELANALYSIS_H
