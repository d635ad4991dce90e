//===- RegisterTilePlan.h - how dlc-cpu-register-tile tiles a contraction -===//
//
// The decisions of dlc-cpu-register-tile, apart from the IR it writes: the
// roles of a contraction's loops and operands (what the matchers find) and
// the register tile for them on a target (what the emitter builds). The
// plan is a pure function of loop extents, indexing maps and the target's
// vector registers, so that unit tests can check it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_REGISTERTILEPLAN_H
#define DLC_CODEGEN_REGISTERTILEPLAN_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace dlc::codegen {

/// The roles of a contraction's loops and operands.
struct Contraction {
  unsigned a = 0, b = 0;                  ///< input operand numbers
  std::optional<unsigned> f;              ///< row loop (absent: one row)
  bool rowsInA = false;                   ///< f indexes a, not b
  unsigned p = 0;                         ///< column (vector) loop
  llvm::SmallVector<unsigned> reductions; ///< reduction loops, outermost first
  llvm::SmallVector<unsigned> outer;      ///< other parallel loops
  int64_t stride = 1; ///< of p in `a` (1, or 2: strided conv)
  /// How a step folds into the accumulators: out + a * b, or (pooling,
  /// `b` only the window's shape) max(out, a) or out + a.
  enum class Combine { MultiplyAdd, Max, Add } combine = Combine::MultiplyAdd;
  /// Integer dot products: the reduction loop of 4 steps that one
  /// instruction takes whole (the innermost index of `a` and `b`), and
  /// whether `a` is the unsigned operand.
  std::optional<unsigned> dot;
  bool aUnsigned = false;
  /// Integer multiply-adds: i32 += ext(a(i8)) * ext(b(i8)), each input
  /// zero- or sign-extended as `unsignedInput` says.
  bool integer = false;
  bool unsignedInput[2] = {false, false};
  /// f32 += extf(a) * extf(b): 16-bit float inputs (f16, bf16; either or
  /// both) loaded in their own type and extended after the load.
  bool narrowFloat = false;
  /// A weight dequantized in the body (MatMulNBits): the vector operand is
  /// an elementwise expression of `aInputs` (each read along p at unit
  /// stride: packed bytes, scales, zero points), of reduction loop indices
  /// and of constants, vectorized as it stands; `a` is the first of them.
  bool dequant = false;
  llvm::SmallVector<unsigned, 4> aInputs;
  /// A dequantized weight whose scale and zero point stay the same
  /// through the innermost `blockInner` reduction loops (MatMulNBits'
  /// blocks of k): a block's products are summed apart and scaled once,
  /// the zero point taken off through the sum of `b` over the block.
  unsigned blockInner = 0;
  /// Dot products over a filter window (`dot` is then the window's loop,
  /// at most 4 taps, in a's innermost index as `stride * p + tap`): each
  /// lane's 4 bytes are its own taps, picked from one load by a byte
  /// shuffle; b's taps are zero-padded to 4.
  bool window = false;
};

/// What the plan asks of the target.
struct RegisterTileTarget {
  int64_t vectorBits = 256;    ///< f32 lanes = vectorBits / 32, at least 4
  int64_t vectorRegisters = 0; ///< 0: 32 at 512 bits, else 16
  int64_t chunkBytes = 65536;  ///< a block's operands per reduction chunk
  /// One instruction takes the even lanes of two vectors
  /// (TargetDescription::hasTwoVectorPermute).
  bool twoVectorPermute = true;
};

/// One register tile: blocks of `rows` x `vectors` SIMD vectors of `lanes`
/// lanes, full blocks over [0, fullRows) x [0, fullCols) and one narrower
/// block per remainder; the outermost reduction loop in chunks of `chunk`
/// steps (all of them: one chunk); column blocks as the outer loop or the
/// inner one; a stride-2 `a` split into its even and odd columns once.
struct RegisterTilePlan {
  int64_t lanes = 4;
  int64_t vectors = 2;
  int64_t rows = 1;
  int64_t block = 8; ///< columns per block: lanes * vectors
  int64_t fullCols = 0;
  int64_t fullRows = 1;
  int64_t chunk = 1;
  bool columnsOuter = false;
  bool splitPhases = false;
};

/// The tile for contraction `k` with loop extents `trips` and indexing maps
/// `maps` (inputs, then the output); `aStatic` says whether `a` has a
/// static shape of rank at least 1 (a stride-2 split needs one), and
/// `aPadded` whether `a` is a padded tile that the kernel would copy its
/// input into (a split then replaces the copy). Nothing for a loop of no
/// trips.
std::optional<RegisterTilePlan>
planRegisterTile(const Contraction &k, llvm::ArrayRef<int64_t> trips,
                 llvm::ArrayRef<mlir::AffineMap> maps,
                 const RegisterTileTarget &target, bool aStatic,
                 bool aPadded = false);

} // namespace dlc::codegen

#endif // DLC_CODEGEN_REGISTERTILEPLAN_H
