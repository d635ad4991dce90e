//===- TileEpilogue.h - what surrounds a register-tiled contraction -------===//
//
// A contraction a CPU kernel computes into a temporary of its own is
// usually filled with a constant first and mapped elementwise into the
// kernel's output after (bias, activation, residual). The register tilers
// (dlc-cpu-register-tile, dlc-cpu-sparse-tile) take both over: the fill's
// constant starts the accumulators, and the elementwise op is applied to
// them in registers as they are stored. Internal to lib/Codegen.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CODEGEN_TILEEPILOGUE_H
#define DLC_LIB_CODEGEN_TILEEPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace dlc::codegen {

/// What a contraction's temporary output is for, when the kernel computes
/// into a buffer of its own (a tile on the stack) and then maps it
/// elementwise into the kernel's output: the op that fills the temporary
/// with a constant first (the accumulators start from that constant in
/// registers instead of a load), and the elementwise op that reads it
/// (bias, batch norm, activation, residual add: applied to the
/// accumulators in registers, stored straight into its output). Either may
/// be absent; the temporary goes when both are found.
struct Surroundings {
  mlir::Operation *fill = nullptr;
  mlir::Value fillValue; ///< the scalar the fill writes
  mlir::linalg::GenericOp epilogue;
  unsigned epilogueInput = 0; ///< which input of the epilogue is the temporary
  unsigned epilogueLast = 0;  ///< its loop along the vectors
  mlir::Operation *alloc = nullptr; ///< memref.alloc or memref.alloca
  /// The epilogue reads the temporary through another reshape than the
  /// contraction writes it: indices go through the linear offset.
  bool reshaped = false;
  llvm::SmallVector<mlir::Operation *> views; ///< reshapes of the alloc
};

/// The fill and epilogue of contraction `op` whose output is a temporary,
/// when nothing else touches the temporary.
Surroundings surroundingsOf(mlir::linalg::GenericOp op);

/// Whether `around`'s epilogue reads the temporary `out` through a view
/// whose last dim joins `out`'s dims from `dim` on: a vector may then run
/// across the rows of those dims (flat pixel runs of dlc-cpu-register-tile).
bool epilogueJoinsDims(const Surroundings &around, mlir::Value out,
                       unsigned dim);
/// The indices an operand's `map` gives at loop values `ivs` (dims as they
/// are, constants and other expressions through affine.apply).
llvm::SmallVector<mlir::Value> indicesAt(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::AffineMap map,
                                         llvm::ArrayRef<mlir::Value> ivs);

/// Applies `around`'s epilogue to the accumulator `acc` (vectors of
/// `lanes`) of the outputs at `idx` of the temporary `out`, and stores the
/// result into the epilogue's output; `mask` (or null) says which lanes
/// are valid.
void storeThroughEpilogue(mlir::OpBuilder &b, mlir::Location loc,
                          const Surroundings &around, mlir::Value out,
                          int64_t lanes, mlir::Value acc,
                          llvm::ArrayRef<mlir::Value> idx, mlir::Value mask);

/// Erases what a register tile took over: the epilogue, the fill, and
/// (when both went and `keepTemporary` is false) the temporary with its
/// views and deallocation.
void eraseSurroundings(mlir::RewriterBase &rewriter, const Surroundings &around,
                       bool keepTemporary);

} // namespace dlc::codegen

#endif // DLC_LIB_CODEGEN_TILEEPILOGUE_H
