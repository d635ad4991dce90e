//===- CPURegisterTile.cpp - the dlc-cpu-register-tile pass ---------------===//
//
// LLVM's loop vectorizer turns the innermost loop of a contraction into SIMD
// code but keeps the output in memory: every multiply-add loads and stores
// it. This pass writes the register-tiled loop nest itself for f32
// contractions out[.., f, .., p] += a[.., p + .., ..] * b[.., f, ..]
// (matmul, stride-1/2 convolutions including depthwise ones, 1x1 convolutions
// after dlc-cpu-loop-order merged their rows and columns): a block of
// `rows` x `vectors` SIMD accumulators stays in registers through all
// reduction loops, each step loading `vectors` vectors of `a`, broadcasting
// `rows` scalars of `b` and issuing rows x vectors fused
// multiply-adds. Where no loop of `b` is a row (depthwise convolutions and
// pooling windows: every operand uses the channel), the rows are a loop of
// `a` instead, the output's rows: each step then loads rows x vectors
// vectors of `a` and broadcasts one scalar of `b`, so that a block still
// has rows x vectors independent accumulators. Columns past the last full
// block get one narrower block whose last vector is masked; rows past the
// last full block and ops the pattern does not fit keep the scalar loops
// (which LLVM vectorizes).
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"
#include "dlc/Codegen/RegisterTilePlan.h"

#include "KernelAnalysis.h"
#include "TileEpilogue.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/Debug.h"

namespace dlc {
#define GEN_PASS_DEF_CPUREGISTERTILE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

#define DEBUG_TYPE "dlc-cpu-register-tile"

using namespace mlir;
using dlc::codegen::Contraction;
using dlc::codegen::RegisterTilePlan;
using dlc::codegen::Surroundings;
using dlc::codegen::surroundingsOf;

namespace {

/// The ops of `body` that compute `root` from block arguments, loop indices
/// (and affine functions of them) and constants, in body order; empty when
/// another kind of op is among them.
SmallVector<Operation *> expressionOf(Block &body, Value root) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> work = {root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body || ops.contains(def))
      continue;
    if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
        !(isa<linalg::IndexOp, affine::AffineApplyOp>(def) ||
          def->getDialect()->getNamespace() == "arith"))
      return {};
    ops.insert(def);
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return ordered;
}

/// Whether `e` uses loop `d`.
bool uses(AffineMap map, unsigned d) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(d); });
}

/// Whether loop `d` is one of `map`'s results as a plain dim.
bool isPlainDim(AffineMap map, unsigned d) {
  return llvm::any_of(map.getResults(), [&](AffineExpr e) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return dim && dim.getPosition() == d;
  });
}

/// Whether every result of every map is linear in loop `d`.
bool isLinearIn(ArrayRef<AffineMap> maps, unsigned d) {
  return llvm::all_of(maps, [&](AffineMap m) {
    return llvm::all_of(m.getResults(), [&](AffineExpr e) {
      return dlc::codegen::linearCoefficient(e, d).has_value();
    });
  });
}

/// Whether loop `d` walks `operand` with a small stride: it appears only in
/// the last result, with coefficient 1 (alone for the output, `ow + kw` for
/// a convolution's input; 2 too unless `exact`: a stride-2 convolution),
/// over a memref whose innermost stride is 1 (what vector.load needs).
bool unitStride(AffineMap map, Value operand, unsigned d, bool exact) {
  auto type = dyn_cast<MemRefType>(operand.getType());
  if (!type || map.getNumResults() == 0)
    return false;
  AffineExpr last = map.getResults().back();
  if (exact) {
    auto dim = dyn_cast<AffineDimExpr>(last);
    if (!dim || dim.getPosition() != d)
      return false;
  } else if (std::optional<int64_t> c =
                 dlc::codegen::linearCoefficient(last, d);
             !c || (*c != 1 && *c != 2)) {
    return false;
  }
  for (AffineExpr e : map.getResults().drop_back())
    if (e.isFunctionOfDim(d))
      return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// What `a` holds when it is a workgroup's padded tile (a bufferized
/// tensor.pad): the region of `base` at `offsets` of `sizes` placed at
/// `at`, and `value` everywhere else. `root` makes it: an alloc that is
/// filled and copied into, or an scf.if choosing between such an alloc
/// and one only filled (when the region is empty).
struct PaddedTile {
  Value base;
  SmallVector<OpFoldResult> offsets, sizes, at;
  Value value;
  Operation *root;
  /// What uses `root`'s result besides the contraction: deallocations,
  /// and the fill and copy of the alloc form (directly or through views).
  SmallVector<Operation *> uses;
};

/// Whether `user` of a buffer only releases it: a deallocation, or the
/// base pointer taken for deallocations.
bool releases(Operation *user) {
  if (isa<memref::DeallocOp>(user))
    return true;
  auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user);
  return meta && llvm::all_of(meta->getUsers(), [](Operation *u) {
           return isa<memref::DeallocOp>(u);
         });
}

/// The padded tile `a` of `op` is, if it is one that only `op` reads (and
/// deallocations release).
std::optional<PaddedTile> paddedTile(Value a, linalg::GenericOp op) {
  PaddedTile tile;
  std::optional<dlc::codegen::FilledCopy> filled;
  if (auto ifOp = a.getDefiningOp<scf::IfOp>()) {
    if (ifOp.getNumResults() != 1 || !ifOp.elseBlock())
      return std::nullopt;
    Operation *thenYield = ifOp.thenBlock()->getTerminator();
    Operation *elseYield = ifOp.elseBlock()->getTerminator();
    auto elseAlloc = elseYield->getOperand(0).getDefiningOp<memref::AllocOp>();
    if (!elseAlloc || elseAlloc->getBlock() != ifOp.elseBlock())
      return std::nullopt;
    filled = dlc::codegen::filledCopy(elseAlloc);
    if (!filled || filled->readers.size() != 1 ||
        filled->readers.front() != elseYield)
      return std::nullopt;
    auto thenAlloc = thenYield->getOperand(0).getDefiningOp<memref::AllocOp>();
    if (!thenAlloc || thenAlloc->getBlock() != ifOp.thenBlock() ||
        dlc::codegen::filledThenYielded(thenAlloc) != filled->value)
      return std::nullopt;
    tile.root = ifOp;
  } else if (auto alloc = a.getDefiningOp<memref::AllocOp>()) {
    // After the copy, `op` reads it and deallocations release it.
    filled = dlc::codegen::filledCopy(alloc);
    if (!filled || !llvm::is_contained(filled->readers, op.getOperation()) ||
        !llvm::all_of(filled->readers,
                      [&](Operation *r) { return r == op || releases(r); }))
      return std::nullopt;
    tile.root = alloc;
  } else {
    return std::nullopt;
  }
  // A copy of a unit-stride view of another buffer, element for element.
  auto copy = dyn_cast<linalg::GenericOp>(filled->copy.getOperation());
  if (!copy || copy.getNumDpsInputs() != 1)
    return std::nullopt;
  Block &body = copy.getRegion().front();
  SmallVector<AffineMap> copyMaps = copy.getIndexingMapsArray();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0) ||
      copyMaps[0] != copyMaps[1])
    return std::nullopt;
  Value input = copy.getDpsInputs()[0];
  if (auto view = input.getDefiningOp<memref::SubViewOp>()) {
    if (view.getSourceType().getRank() != view.getType().getRank() ||
        !llvm::all_of(view.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return std::nullopt;
    tile.base = view.getSource();
    tile.offsets = view.getMixedOffsets();
    tile.sizes = view.getMixedSizes();
  } else {
    // All of a buffer (a tile of the whole image).
    auto type = dyn_cast<MemRefType>(input.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    Builder b(input.getContext());
    tile.base = input;
    tile.offsets.assign(type.getRank(), b.getIndexAttr(0));
    for (int64_t e : type.getShape())
      tile.sizes.push_back(b.getIndexAttr(e));
  }
  tile.at = filled->middle.getMixedOffsets();
  tile.value = filled->value;
  SmallVector<OpFoldResult> middleSizes = filled->middle.getMixedSizes();
  for (auto [x, y] : llvm::zip_equal(tile.sizes, middleSizes))
    if (!isEqualConstantIntOrValue(x, y))
      return std::nullopt;
  // The columns' placement is static; the rest may vary by workgroup.
  if (!getConstantIntValue(tile.at.back()) ||
      !getConstantIntValue(tile.sizes.back()))
    return std::nullopt;
  // Everything that places the region is known before `root`.
  auto before = [&](Value v) {
    return !tile.root->isAncestor(v.getParentRegion()->getParentOp());
  };
  for (ArrayRef<OpFoldResult> list :
       {ArrayRef<OpFoldResult>(tile.offsets),
        ArrayRef<OpFoldResult>(tile.sizes), ArrayRef<OpFoldResult>(tile.at)})
    for (OpFoldResult f : list)
      if (auto v = dyn_cast<Value>(f); v && !before(v))
        return std::nullopt;
  if (!before(tile.base) || !before(tile.value))
    return std::nullopt;
  // With an scf.if, the empty region is the filled branch: the condition
  // says a size of the region is 0.
  if (auto ifOp = dyn_cast<scf::IfOp>(tile.root)) {
    auto cmp = ifOp.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
      return std::nullopt;
    Value x = cmp.getLhs(), y = cmp.getRhs();
    if (isConstantIntValue(x, 0))
      std::swap(x, y);
    if (!isConstantIntValue(y, 0) ||
        llvm::none_of(tile.sizes,
                      [&](OpFoldResult s) { return dyn_cast<Value>(s) == x; }))
      return std::nullopt;
  }
  // Only `op` reads the tile (the alloc form's other uses are its fill,
  // copy and readers, checked above); deallocations release it.
  for (Operation *user : tile.root->getResult(0).getUsers()) {
    if (user == op)
      continue;
    if (isa<scf::IfOp>(tile.root) && !releases(user))
      return std::nullopt;
    tile.uses.push_back(user);
  }
  return tile;
}

/// Erases the ops that made `tile` (and its deallocation), when nothing
/// else came to use it.
void eraseTile(RewriterBase &rewriter, const PaddedTile &tile) {
  Operation *root = tile.root;
  for (Operation *user : root->getUsers())
    if (!llvm::is_contained(tile.uses, user))
      return;
  llvm::SetVector<Operation *> order;
  std::function<void(Operation *)> visit = [&](Operation *o) {
    if (order.contains(o))
      return;
    for (Operation *user : o->getUsers())
      visit(user);
    order.insert(o);
  };
  visit(root);
  for (Operation *o : order)
    rewriter.eraseOp(o);
}

/// The last of `loops` that `e` adds with coefficient 1 (linearly).
std::optional<unsigned> unitLoop(AffineExpr e, ArrayRef<unsigned> loops) {
  std::optional<unsigned> found;
  for (unsigned d : loops)
    if (dlc::codegen::linearCoefficient(e, d) == std::optional<int64_t>(1))
      found = d;
  return found;
}

/// A stride-1 convolution whose workgroup tile holds whole rows of its
/// input (a padded tile of full-width source rows) vectorized along the
/// output's rows and columns as one flat run of pixels: vectors then
/// cross from one row into the next, so that two rows of 56 columns take
/// 7 vectors of 16 lanes instead of 8. The tile's rows are laid out
/// without the padding columns between them, one after another, so that
/// tap (kh, kw) of output pixel q = oh * W + ow reads element
/// q + kh * W + kw; a lane whose tap falls in the padding (ow + kw left
/// of the row or past its end) is masked, a mask per vector and column
/// tap computed once per block.
struct FlatRows {
  unsigned row = 0;      ///< the output rows' loop (one of k.outer)
  unsigned tap = 0;      ///< the column taps' loop (k's innermost reduction)
  int64_t width = 0;     ///< W: the output's and the source's columns
  int64_t padLeft = 0;   ///< the tile's columns left of the source's
  int64_t tileRows = 0;  ///< rows of the padded tile
  int64_t tileWidth = 0; ///< columns of the padded tile
};

/// Whether contraction `k` of `op`, reading the padded tile `tile`, runs
/// as flat pixel runs (FlatRows), and fills fewer vectors of `lanes` that
/// way.
std::optional<FlatRows> flatRows(linalg::GenericOp op, const Contraction &k,
                                 const PaddedTile &tile, int64_t lanes) {
  if (k.stride != 1 || k.rowsInA || !k.f ||
      k.combine != Contraction::Combine::MultiplyAdd || k.integer || k.dot ||
      k.dequant || k.window || k.narrowFloat || k.blockInner ||
      k.reductions.empty())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  AffineMap aMap = maps[k.a], outMap = maps.back();
  auto aType = dyn_cast<MemRefType>(op.getDpsInputs()[k.a].getType());
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = dyn_cast<MemRefType>(out.getType());
  auto baseType = dyn_cast<MemRefType>(tile.base.getType());
  int64_t rank = aMap.getNumResults();
  if (!aType || !outType || !baseType || !aType.hasStaticShape() ||
      !outType.hasStaticShape() || rank < 3 || aType.getRank() != rank ||
      baseType.getRank() != rank || outMap.getNumResults() < 2)
    return std::nullopt;
  FlatRows flat;
  flat.tap = k.reductions.back();
  // Columns: p + kw alone.
  AffineExpr col = aMap.getResult(rank - 1), rowExpr = aMap.getResult(rank - 2);
  if (dlc::codegen::linearCoefficient(col, flat.tap) !=
      std::optional<int64_t>(1))
    return std::nullopt;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != k.p && d != flat.tap && col.isFunctionOfDim(d))
      return std::nullopt;
  // Rows: oh + (other reduction loops), oh an outer loop that nothing
  // else of a or b reads, the output's rows right before its columns.
  std::optional<unsigned> row = unitLoop(rowExpr, k.outer);
  if (!row)
    return std::nullopt;
  flat.row = *row;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != flat.row && rowExpr.isFunctionOfDim(d) &&
        (!llvm::is_contained(k.reductions, d) || d == flat.tap))
      return std::nullopt;
  for (int64_t r = 0; r + 2 < rank; ++r)
    if (aMap.getResult(r).isFunctionOfDim(flat.row) ||
        aMap.getResult(r).isFunctionOfDim(flat.tap))
      return std::nullopt;
  if (uses(maps[k.b], flat.row) ||
      outMap.getResult(outMap.getNumResults() - 1) !=
          getAffineDimExpr(k.p, op.getContext()) ||
      outMap.getResult(outMap.getNumResults() - 2) !=
          getAffineDimExpr(flat.row, op.getContext()))
    return std::nullopt;
  flat.width = trips[k.p];
  int64_t pixels = trips[flat.row] * flat.width;
  // Only where the flat run fills fewer vectors.
  if ((pixels + lanes - 1) / lanes >=
      trips[flat.row] * ((flat.width + lanes - 1) / lanes))
    return std::nullopt;
  // The tile: every row of the source's full width; the dims before the
  // rows copied whole.
  ArrayRef<int64_t> shape = aType.getShape();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (!isConstantIntValue(tile.at[d], 0) ||
        !isConstantIntValue(tile.sizes[d], shape[d]))
      return std::nullopt;
  std::optional<int64_t> padLeft = getConstantIntValue(tile.at.back());
  if (!isConstantIntValue(tile.offsets.back(), 0) ||
      !isConstantIntValue(tile.sizes.back(), flat.width) || !padLeft ||
      baseType.getShape().back() != flat.width)
    return std::nullopt;
  flat.padLeft = *padLeft;
  flat.tileRows = shape[rank - 2];
  flat.tileWidth = shape[rank - 1];
  // Padding no wider than a row (a view of the source then reads within
  // the rows above and below).
  if (flat.padLeft + flat.width > flat.tileWidth || flat.padLeft > flat.width ||
      flat.tileWidth - flat.width - flat.padLeft > flat.width)
    return std::nullopt;
  // The source's and the output's rows are contiguous (their last two
  // dims collapse into one).
  auto rowsContiguous = [](MemRefType t, int64_t width) {
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(t.getStridesAndOffset(strides, offset)) &&
           strides.size() >= 2 && strides.back() == 1 &&
           strides[strides.size() - 2] == width;
  };
  if (!rowsContiguous(baseType, flat.width) ||
      !rowsContiguous(outType, flat.width))
    return std::nullopt;
  // The epilogue, if any, reads the rows and columns as one dim.
  dlc::codegen::Surroundings around = dlc::codegen::surroundingsOf(op);
  if (around.epilogue &&
      !dlc::codegen::epilogueJoinsDims(around, out, outMap.getNumResults() - 2))
    return std::nullopt;
  return flat;
}

/// `op`'s loop extents as the register tile walks them: with flat pixel
/// runs, the column loop over all rows' pixels and the row loop once.
SmallVector<int64_t> flatTrips(linalg::GenericOp op, const Contraction &k,
                               const std::optional<FlatRows> &flat) {
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (flat) {
    trips[k.p] *= trips[flat->row];
    trips[flat->row] = 1;
  }
  return trips;
}

/// The rows of a padded tile `a` that hold source rows, [at, at + size),
/// for a multiply-add over a tile padded with zeros whose row index is
/// g + kh, g the same for a whole block (a function of outer loops only)
/// and kh reduction loop `tap`: a block skips the taps that fall on
/// padding rows (their products are zeros). With few rows most taps can
/// be padding: CRNN's 3x3 convolutions over 2 and 4 rows waste a third
/// and a sixth of their multiply-adds on them.
struct RowWindow {
  unsigned operand = 0; ///< the input that is the tile: a, or b (an image
                        ///< broadcast to channel vectors: channels-last)
  unsigned tap = 0;
  OpFoldResult at, size;
};

std::optional<RowWindow> rowWindow(linalg::GenericOp op, const Contraction &k,
                                   const PaddedTile &tile, unsigned operand) {
  if (k.combine != Contraction::Combine::MultiplyAdd || k.integer || k.dot ||
      k.dequant || k.window)
    return std::nullopt;
  if (!matchPattern(tile.value, m_AnyZeroFloat()))
    return std::nullopt;
  AffineMap map = op.getIndexingMapsArray()[operand];
  unsigned rank = map.getNumResults();
  if (rank < 2 || tile.at.size() != rank)
    return std::nullopt;
  AffineExpr rowExpr = map.getResult(rank - 2);
  std::optional<unsigned> tap = unitLoop(rowExpr, k.reductions);
  if (!tap)
    return std::nullopt;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != *tap && rowExpr.isFunctionOfDim(d) &&
        !llvm::is_contained(k.outer, d))
      return std::nullopt;
  RowWindow window;
  window.operand = operand;
  window.tap = *tap;
  window.at = tile.at[rank - 2];
  window.size = tile.sizes[rank - 2];
  return window;
}

std::optional<std::pair<unsigned, bool>> extendedArgument(Value v);

/// No contraction, saying why with `-debug-only=dlc-cpu-register-tile`.
std::nullopt_t declined(linalg::GenericOp op, StringRef why) {
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op.getLoc()
                          << ": left to LLVM's vectorizer: " << why << "\n");
  (void)op;
  (void)why;
  return std::nullopt;
}

/// Matches out += a * b in f32 (matmul, 1x1 and depthwise convolutions,
/// after dlc-cpu-loop-order), or in i32 from bytes, and assigns the loops
/// their roles.
std::optional<Contraction> match(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return declined(op, "not two inputs and one output on buffers");
  if (!isa<MemRefType>(op.getDpsInitOperand(0)->get().getType()))
    return declined(op, "output is not a buffer");
  auto outType = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  bool integer = outType.getElementType().isInteger(32);
  if (!outType.getElementType().isF32() && !integer)
    return declined(op, "output is neither f32 nor i32");
  // Body: yield(addf(out, mulf(in0, in1))), in any operand order; or a
  // pooling window's yield(maximumf(out, in0)) / yield(addf(out, in0)),
  // in1 being the window's shape only; or in i32,
  // yield(addi(out, muli(ext(in0), ext(in1)))) from bytes.
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::AddIOp>(combiner))
    return declined(
        op, "body does not end in addf, maximumf or addi of two values");
  Value acc = body.getArgument(2);
  Value lhs = combiner->getOperand(0), rhs = combiner->getOperand(1);
  if ((lhs == acc) == (rhs == acc))
    return declined(op, "body does not combine with the output exactly once");
  Value step = lhs == acc ? rhs : lhs;
  Contraction::Combine combine = Contraction::Combine::MultiplyAdd;
  bool unsignedInput[2] = {false, false};
  bool narrowFloat = false;
  if (integer) {
    auto mul = step.getDefiningOp<arith::MulIOp>();
    if (!isa<arith::AddIOp>(combiner) || !mul ||
        body.getOperations().size() != 5)
      return declined(op, "i32 body is not addi(out, muli(ext, ext))");
    auto l = extendedArgument(mul.getLhs()), r = extendedArgument(mul.getRhs());
    if (!l || !r || l->first == r->first)
      return declined(op, "i32 product is not of two extended inputs");
    unsignedInput[l->first] = l->second;
    unsignedInput[r->first] = r->second;
  } else if (isa<arith::AddIOp>(combiner)) {
    return declined(op, "addi body on a float output");
  } else if (body.getOperations().size() == 2 && step == body.getArgument(0) &&
             body.getArgument(1).use_empty()) {
    combine = isa<arith::MaximumFOp>(combiner) ? Contraction::Combine::Max
                                               : Contraction::Combine::Add;
  } else {
    auto mul = step.getDefiningOp<arith::MulFOp>();
    // An operand, or its extension from a 16-bit float.
    unsigned extensions = 0;
    auto input = [&](Value v) -> Value {
      auto ext = v.getDefiningOp<arith::ExtFOp>();
      if (!ext || ext->getBlock() != &body ||
          getElementTypeOrSelf(ext.getIn().getType()).getIntOrFloatBitWidth() !=
              16)
        return v;
      ++extensions;
      return ext.getIn();
    };
    Value l = mul ? input(mul.getLhs()) : Value();
    Value r = mul ? input(mul.getRhs()) : Value();
    if (!isa<arith::AddFOp>(combiner) || !mul ||
        body.getOperations().size() != 3 + extensions ||
        !((l == body.getArgument(0) && r == body.getArgument(1)) ||
          (l == body.getArgument(1) && r == body.getArgument(0))))
      return declined(op, "f32 body is not addf(out, mulf(in0, in1)), the "
                          "inputs f32 or extended from 16 bits");
    narrowFloat = extensions > 0;
  }

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (llvm::any_of(trips, ShapedType::isDynamic))
    return declined(op, "dynamic loop extents");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value out = op.getDpsInitOperand(0)->get();
  Contraction k;
  k.combine = combine;
  k.integer = integer;
  k.unsignedInput[0] = unsignedInput[0];
  k.unsignedInput[1] = unsignedInput[1];
  k.narrowFloat = narrowFloat;
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction) {
      if (uses(maps[2], d))
        return declined(op, "a reduction loop indexes the output");
      k.reductions.push_back(d);
    }
  if (k.reductions.empty())
    return declined(op, "no reduction loop");
  // p: stride 1 in the output and in one input (a), absent from the other
  // (b); f: in the output (as a plain dim) and b only, preferably b's
  // innermost dim, so that a block's broadcasts read neighbours.
  bool pooling = combine != Contraction::Combine::MultiplyAdd;
  for (unsigned ai = 0; ai < (pooling ? 1u : 2u); ++ai) {
    unsigned bi = 1 - ai;
    Value aValue = op.getDpsInputs()[ai];
    std::optional<unsigned> p, f;
    bool fInnermost = false; // f walks b's innermost dim
    for (unsigned d = 0; d < iterators.size(); ++d) {
      if (iterators[d] != utils::IteratorType::parallel)
        continue;
      if (unitStride(maps[2], out, d, /*exact=*/true) &&
          unitStride(maps[ai], aValue, d, /*exact=*/false) &&
          !uses(maps[bi], d)) {
        p = d;
        continue;
      }
      // A row: in the output as a plain dim, in b linearly (a window
      // `ow * s + kw` of a channels-last convolution's input included).
      bool plainInOut = isPlainDim(maps[2], d);
      bool linear = isLinearIn(maps, d);
      if (!plainInOut || !linear || !uses(maps[bi], d) || uses(maps[ai], d))
        continue;
      bool innermost = maps[bi].getNumResults() > 0 &&
                       maps[bi].getResults().back().isFunctionOfDim(d);
      if (!f || innermost || !fInnermost) {
        f = d;
        fInnermost = innermost;
      }
    }
    if (!p)
      continue;
    // No row of b: a row of a, in the output as a plain dim, linear, off
    // a's innermost (vector) index, and unused by b.
    bool rowsInA = false;
    if (!f) {
      for (unsigned d = 0; d < iterators.size() && !f; ++d) {
        if (iterators[d] != utils::IteratorType::parallel || d == *p)
          continue;
        bool plainInOut = isPlainDim(maps[2], d);
        bool linear = isLinearIn(maps, d);
        if (plainInOut && linear && uses(maps[ai], d) &&
            !maps[ai].getResults().back().isFunctionOfDim(d) &&
            !uses(maps[bi], d)) {
          f = d;
          rowsInA = true;
        }
      }
    }
    k.a = ai;
    k.b = bi;
    k.p = *p;
    k.stride =
        *dlc::codegen::linearCoefficient(maps[ai].getResults().back(), *p);
    k.f = f;
    k.rowsInA = rowsInA;
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] == utils::IteratorType::parallel && d != k.p &&
          (!f || d != *f))
        k.outer.push_back(d);
    return k;
  }
  return declined(op, "no input is read along a unit-stride column loop");
}

/// The block argument `v` is, directly or extended from a 16-bit float.
BlockArgument floatArgument(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  return dyn_cast<BlockArgument>(v);
}

/// The dequantized weight E of a contraction out += b * E (input `b` the
/// activation, maybe extended): the multiply's operand that is not b.
Value dequantRoot(linalg::GenericOp op, unsigned b) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *add = yield.getOperand(0).getDefiningOp();
  Value acc = body.getArgument(op.getNumDpsInputs());
  Operation *mul =
      (add->getOperand(0) == acc ? add->getOperand(1) : add->getOperand(0))
          .getDefiningOp();
  return floatArgument(mul->getOperand(0)) == body.getArgument(b)
             ? mul->getOperand(1)
             : mul->getOperand(0);
}

/// Whether body value `v` of `op` is the same through all steps of
/// `loops`: it reads no input that they index (nor `b`, nor the
/// accumulator) and no index of theirs.
bool invariantIn(linalg::GenericOp op, Value v, ArrayRef<unsigned> loops,
                 unsigned b) {
  Block &body = op.getRegion().front();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto argInvariant = [&](BlockArgument arg) {
    unsigned i = arg.getArgNumber();
    return i < op.getNumDpsInputs() && i != b &&
           llvm::none_of(loops, [&](unsigned d) { return uses(maps[i], d); });
  };
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != &body || argInvariant(arg);
  if (v.getDefiningOp()->getBlock() != &body)
    return true;
  SmallVector<Operation *> ops = expressionOf(body, v);
  if (ops.empty())
    return false;
  for (Operation *o : ops) {
    if (auto index = dyn_cast<linalg::IndexOp>(o))
      if (llvm::is_contained(loops, index.getDim()))
        return false;
    for (Value operand : o->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (arg.getOwner() == &body && !argInvariant(arg))
          return false;
  }
  return true;
}

/// A dequantized weight E = (Q - Z) * S (either factor may be absent)
/// whose scale S and zero point Z stay the same through the innermost
/// reduction loops (a block of k): its sum over a block is then
/// S * (sum(b * Q) - Z * sum(b)), so that a step computes b * Q alone.
struct BlockFactors {
  Value q, scale, zero;
};

/// E's block factors for contraction `k` (its reductions past the first
/// as the block), if it has any.
std::optional<BlockFactors> blockFactors(linalg::GenericOp op,
                                         const Contraction &k) {
  if (k.reductions.size() < 2)
    return std::nullopt;
  ArrayRef<unsigned> inner = ArrayRef<unsigned>(k.reductions).drop_front();
  auto invariant = [&](Value v) { return invariantIn(op, v, inner, k.b); };
  BlockFactors f;
  f.q = dequantRoot(op, k.b);
  if (auto mul = f.q.getDefiningOp<arith::MulFOp>())
    for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (invariant(y) && !invariant(x)) {
        f.scale = y;
        f.q = x;
        break;
      }
  if (auto sub = f.q.getDefiningOp<arith::SubFOp>())
    if (invariant(sub.getRhs()) && !invariant(sub.getLhs())) {
      f.zero = sub.getRhs();
      f.q = sub.getLhs();
    }
  if (!f.scale && !f.zero)
    return std::nullopt;
  return f;
}

/// Matches out(f32) += b * E (matchDequant's E: Contraction::dequant), b
/// an input that the column loop does not index (the activation).
std::optional<Contraction> matchDequant(linalg::GenericOp op) {
  unsigned numInputs = op.getNumDpsInputs();
  if (numInputs < 2 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return std::nullopt;
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || !outType.getElementType().isF32())
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body.getArgument(numInputs);
  if (!add || (add.getLhs() == acc) == (add.getRhs() == acc))
    return std::nullopt;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  // b: a block argument, or one extended from a 16-bit float (loaded in
  // its type, extended after the load).
  std::optional<unsigned> bi;
  Value expr;
  bool extended = false;
  for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    BlockArgument arg = floatArgument(x);
    if (arg && arg.getOwner() == &body && arg.getArgNumber() < numInputs &&
        !isa<BlockArgument>(y) && (x == arg || x.hasOneUse())) {
      bi = arg.getArgNumber();
      expr = y;
      extended = x != arg;
      break;
    }
  }
  if (!bi)
    return std::nullopt;
  SmallVector<Operation *> ops = expressionOf(body, expr);
  // Nothing in the body but the expression, b's extension, the multiply,
  // the add and the yield; the expression reads neither b nor the
  // accumulator.
  if (ops.empty() ||
      ops.size() + 3 + (extended ? 1 : 0) != body.getOperations().size())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> aInputs;
  for (Operation *o : ops) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      // Loop indices the same for all lanes and rows of a step: reduction
      // loops', or others' that only affine functions ignoring them take.
      if (iterators[index.getDim()] == utils::IteratorType::reduction)
        continue;
      for (OpOperand &use : index->getUses()) {
        auto apply = dyn_cast<affine::AffineApplyOp>(use.getOwner());
        if (!apply ||
            apply.getAffineMap().isFunctionOfDim(use.getOperandNumber()))
          return std::nullopt;
      }
      continue;
    }
    for (Value operand : o->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &body)
        continue;
      if (arg.getArgNumber() >= numInputs || arg.getArgNumber() == *bi)
        return std::nullopt;
      if (!llvm::is_contained(aInputs, arg.getArgNumber()))
        aInputs.push_back(arg.getArgNumber());
    }
  }
  if (aInputs.empty())
    return std::nullopt;
  llvm::sort(aInputs);
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (llvm::any_of(trips, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  Contraction k;
  k.dequant = true;
  k.aInputs.assign(aInputs.begin(), aInputs.end());
  k.a = aInputs.front();
  k.b = *bi;
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction) {
      if (uses(outMap, d))
        return std::nullopt;
      k.reductions.push_back(d);
    }
  if (k.reductions.empty())
    return std::nullopt;
  std::optional<unsigned> p, f;
  for (unsigned d = 0; d < iterators.size(); ++d) {
    if (iterators[d] != utils::IteratorType::parallel)
      continue;
    bool inA =
        llvm::any_of(aInputs, [&](unsigned i) { return uses(maps[i], d); });
    if (unitStride(outMap, out, d, /*exact=*/true) &&
        llvm::all_of(aInputs,
                     [&](unsigned i) {
                       return unitStride(maps[i], op.getDpsInputs()[i], d,
                                         /*exact=*/true);
                     }) &&
        !uses(maps[k.b], d)) {
      p = d;
      continue;
    }
    if (!f && isPlainDim(outMap, d) && isLinearIn(maps, d) &&
        uses(maps[k.b], d) && !inA)
      f = d;
  }
  if (!p)
    return std::nullopt;
  k.p = *p;
  k.f = f;
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::parallel && d != k.p &&
        (!f || d != *f)) {
      // Other parallel loops must not index the expression's inputs: one
      // set of vectors serves the whole block.
      if (llvm::any_of(aInputs, [&](unsigned i) { return uses(maps[i], d); }))
        return std::nullopt;
      k.outer.push_back(d);
    }
  if (blockFactors(op, k))
    k.blockInner = k.reductions.size() - 1;
  return k;
}

/// The block argument an i8 -> i32 extension in a contraction's body
/// widens, and whether it zero-extends.
std::optional<std::pair<unsigned, bool>> extendedArgument(Value v) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<arith::ExtUIOp, arith::ExtSIOp>(op) ||
      !op->getResult(0).getType().isInteger(32))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(op->getOperand(0));
  if (!arg || !arg.getType().isInteger(8))
    return std::nullopt;
  return std::make_pair(arg.getArgNumber(), isa<arith::ExtUIOp>(op));
}

/// Matches out(i32) += ext(a(i8)) * ext(b(i8)), one input zero- and the
/// other sign-extended, whose innermost reduction loop of 4 steps is the
/// innermost index of both inputs, contiguous (dlc-cpu-int8-conv's layout):
/// `a`'s vector loop p right outside it, `b` broadcast.
std::optional<Contraction> matchDot(linalg::GenericOp op, bool signedDot) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || !outType.getElementType().isInteger(32))
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add || body.getOperations().size() != 5)
    return std::nullopt;
  Value acc = body.getArgument(2);
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return std::nullopt;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  auto l = extendedArgument(mul.getLhs()), r = extendedArgument(mul.getRhs());
  // Unsigned x signed bytes (VNNI, usdot), or signed x signed (sdot).
  if (!l || !r || l->first == r->first ||
      (signedDot ? (l->second || r->second) : l->second == r->second))
    return std::nullopt;
  bool unsignedInput[2];
  unsignedInput[l->first] = l->second;
  unsignedInput[r->first] = r->second;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  if (llvm::any_of(trips, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto lastDim = [](AffineMap m, unsigned fromEnd) -> std::optional<unsigned> {
    if (m.getNumResults() <= fromEnd)
      return std::nullopt;
    auto dim =
        dyn_cast<AffineDimExpr>(m.getResult(m.getNumResults() - 1 - fromEnd));
    if (!dim)
      return std::nullopt;
    return dim.getPosition();
  };
  std::optional<unsigned> kd = lastDim(maps[0], 0);
  if (!kd || lastDim(maps[1], 0) != kd || trips[*kd] != 4 ||
      iterators[*kd] != utils::IteratorType::reduction || uses(maps[2], *kd))
    return std::nullopt;
  auto strides = [](Value v) -> SmallVector<int64_t> {
    SmallVector<int64_t> s;
    int64_t offset;
    if (failed(cast<MemRefType>(v.getType()).getStridesAndOffset(s, offset)))
      s.clear();
    return s;
  };
  for (unsigned ai = 0; ai < 2; ++ai) {
    unsigned bi = 1 - ai;
    Value aValue = op.getDpsInputs()[ai], bValue = op.getDpsInputs()[bi];
    // p: the output's last index; in a, with coefficient 1 in the index
    // before k (plain, or a window `ow + kw`), so that a vector's lanes
    // are neighbouring groups of 4 bytes.
    std::optional<unsigned> p = lastDim(maps[2], 0);
    if (!p || iterators[*p] != utils::IteratorType::parallel ||
        uses(maps[bi], *p) || maps[ai].getNumResults() < 2)
      continue;
    std::optional<int64_t> pStride = dlc::codegen::linearCoefficient(
        maps[ai].getResult(maps[ai].getNumResults() - 2), *p);
    if (pStride != std::optional<int64_t>(1) &&
        pStride != std::optional<int64_t>(2))
      continue;
    // p and k only there in a; a's last two dims contiguous, b's last.
    bool alone =
        llvm::all_of(maps[ai].getResults().drop_back(2), [&](AffineExpr e) {
          return !e.isFunctionOfDim(*p) && !e.isFunctionOfDim(*kd);
        });
    SmallVector<int64_t> as = strides(aValue), bs = strides(bValue);
    if (!alone || as.size() < 2 || as.back() != 1 || as[as.size() - 2] != 4 ||
        bs.empty() || bs.back() != 1 ||
        llvm::any_of(maps[bi].getResults().drop_back(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(*kd); }))
      continue;
    Contraction k;
    k.a = ai;
    k.b = bi;
    k.p = *p;
    k.dot = *kd;
    k.stride = *pStride;
    k.aUnsigned = unsignedInput[ai];
    // Rows: a plain dim of the output that b reads linearly and a does
    // not read; of several (a channels-last convolution's output rows and
    // columns), the longest, since it bounds the rows of a block: a
    // workgroup of 2 output rows by 14 columns (ResNet-18's 3x3
    // convolutions at 28x28) made blocks of 2 x 2 accumulators along the
    // rows, each multiply-add waiting on the one before.
    for (unsigned d = 0; d < iterators.size(); ++d) {
      if (iterators[d] == utils::IteratorType::reduction) {
        if (d != *kd) {
          if (uses(maps[2], d))
            return std::nullopt;
          k.reductions.push_back(d);
        }
        continue;
      }
      if (d == *p)
        continue;
      bool plainInOut = isPlainDim(maps[2], d);
      bool linear = isLinearIn(maps, d);
      if (plainInOut && linear && uses(maps[bi], d) && !uses(maps[ai], d) &&
          (!k.f || trips[d] > trips[*k.f])) {
        if (k.f)
          k.outer.push_back(*k.f);
        k.f = d;
      } else {
        k.outer.push_back(d);
      }
    }
    llvm::sort(k.outer);
    if (k.reductions.empty())
      return std::nullopt;
    return k;
  }
  return std::nullopt;
}

/// Turns integer contraction `k` (rows of a, i.e. a depthwise convolution)
/// into dot products over its innermost filter window when a reads that
/// window at its innermost index as `stride * p + tap` and b as its own
/// innermost index, with at most 4 taps, a's bytes unsigned and b's signed.
bool asWindowDot(linalg::GenericOp op, Contraction &k, int64_t lanes,
                 bool signedDot) {
  if (!k.integer || !k.rowsInA || k.unsignedInput[k.a] == signedDot ||
      k.unsignedInput[k.b] || (k.stride != 1 && k.stride != 2))
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  AffineExpr aLast = maps[k.a].getResults().back();
  auto bLast = dyn_cast<AffineDimExpr>(maps[k.b].getResults().back());
  if (!bLast)
    return false;
  unsigned r = bLast.getPosition();
  if (!llvm::is_contained(k.reductions, r) || trips[r] > 4 ||
      dlc::codegen::linearCoefficient(aLast, r) != std::optional<int64_t>(1) ||
      k.stride * (lanes - 1) + 4 > 4 * lanes)
    return false;
  // a's last index is stride * p + r alone; r nowhere else.
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != k.p && d != r && aLast.isFunctionOfDim(d))
      return false;
  for (AffineExpr e : maps[k.a].getResults().drop_back())
    if (e.isFunctionOfDim(r))
      return false;
  for (AffineExpr e : maps[k.b].getResults().drop_back())
    if (e.isFunctionOfDim(r))
      return false;
  llvm::erase(k.reductions, r);
  if (k.reductions.empty())
    return false;
  k.dot = r;
  k.window = true;
  k.aUnsigned = !signedDot;
  return true;
}

/// Rows per block: all of them when few, else the largest count in
/// (max/2, max] that divides them (no remainder block), else `max`.
int64_t rowsPerBlock(int64_t trips, int64_t max) {
  if (trips <= max)
    return trips;
  for (int64_t r = max; r > max / 2; --r)
    if (trips % r == 0)
      return r;
  return max;
}

/// Writes the register tile of one contraction as its plan says: the loop
/// nest over blocks, each block's accumulators carried through the
/// reduction loops, the loads and broadcasts of a step, and the stores
/// (through the epilogue it takes over).
class RegisterTileEmitter {
public:
  RegisterTileEmitter(linalg::GenericOp op, const Contraction &k,
                      const RegisterTilePlan &plan, StringRef int8Dot,
                      bool int8DotPairs, std::optional<PaddedTile> tile,
                      std::optional<FlatRows> flat,
                      std::optional<RowWindow> padRows)
      : op(op), k(k), plan(plan), int8Dot(int8Dot), int8DotPairs(int8DotPairs),
        tile(std::move(tile)), flat(flat), padRows(padRows),
        rewriter(op.getContext()), loc(op.getLoc()),
        trips(flatTrips(op, k, flat)), maps(op.getIndexingMapsArray()),
        a(op.getDpsInputs()[k.a]), b(op.getDpsInputs()[k.b]),
        out(op.getDpsInitOperand(0)->get()), lanes(plan.lanes),
        pooling(k.combine != Contraction::Combine::MultiplyAdd),
        accType(cast<MemRefType>(out.getType()).getElementType()),
        vecType(VectorType::get({lanes}, accType)),
        byteVecType(VectorType::get({lanes * 4}, rewriter.getI8Type())),
        ivs(trips.size()) {}

  /// Replaces the contraction (and the fill and epilogue it takes over).
  void run();

private:
  Value cst(OpBuilder &bld, int64_t v) const {
    return arith::ConstantIndexOp::create(bld, loc, v);
  }

  /// A loop [lb, ub) by `step`; `at` moves into its body.
  Value loop(OpBuilder &at, int64_t lb, int64_t ub, int64_t step) const {
    auto f =
        scf::ForOp::create(at, loc, cst(at, lb), cst(at, ub), cst(at, step));
    at.setInsertionPoint(f.getBody()->getTerminator());
    return f.getInductionVar();
  }

  /// The indices of `operand` at loop values `ivs`.
  SmallVector<Value> indices(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> ivs) const {
    return dlc::codegen::indicesAt(b, loc, map, ivs);
  }

  /// Row `i` of the block from row `f0` (when there is a row loop).
  void setRow(OpBuilder &bb, Value f0, int64_t i) {
    if (k.f)
      ivs[*k.f] = arith::AddIOp::create(bb, loc, f0, cst(bb, i));
  }

  /// A vector of `memref` at `idx`, masked when `mask` is set, extended
  /// to the accumulators' f32 when its elements are 16-bit floats.
  Value loadVector(OpBuilder &bb, Value memref, ValueRange idx, Value mask,
                   Value zero) const {
    VectorType t = VectorType::get(
        {lanes}, cast<MemRefType>(memref.getType()).getElementType());
    if (t == vecType) {
      if (mask)
        return vector::MaskedLoadOp::create(bb, loc, vecType, memref, idx, mask,
                                            zero);
      return vector::LoadOp::create(bb, loc, vecType, memref, idx);
    }
    Value v = mask ? Value(vector::MaskedLoadOp::create(
                         bb, loc, t, memref, idx, mask,
                         arith::ConstantOp::create(
                             bb, loc, cast<TypedAttr>(bb.getZeroAttr(t)))))
                   : Value(vector::LoadOp::create(bb, loc, t, memref, idx));
    return arith::ExtFOp::create(bb, loc, vecType, v);
  }

  /// Lays the padded tile's rows out one after another (`flatA`, for
  /// flat pixel runs), from the tile's source: the padding columns
  /// between rows are left out, padding rows and the ends filled with the
  /// tile's value.
  void flattenTile();

  /// Splits a stride-2 `a` into its even and odd columns, once, into
  /// [..., 2, ceil(W / 2)] (`phases`); from the source of `a` when `a` is
  /// a padded tile (`tile`).
  void splitPhases();

  /// Applies the epilogue to the accumulator `acc` of the outputs at
  /// `idx` (of the temporary) and stores the result into the epilogue's
  /// output; `mask` (or null) says which lanes are valid.
  void storeEpilogue(OpBuilder &bb, Value acc, ArrayRef<Value> idx,
                     Value mask) {
    dlc::codegen::storeThroughEpilogue(bb, loc, around, out, lanes, acc, idx,
                                       mask);
  }

  /// The vector of body value `root` of a dequantized operand
  /// (Contraction::dequant: the operand itself, or one of its block
  /// factors) at the current indices: the inputs it reads loaded along the
  /// columns (masked past the last valid lane), loop indices and constants kept
  /// scalar, every op on a vector computed on vectors (scalar operands
  /// broadcast).
  Value dequantVector(OpBuilder &bb, Value laneMask, Value root);

  /// The vector of `a` at `idx` (a's indices at the current loop values);
  /// `last` for the block's last vector, of `lastLanes` valid lanes
  /// (`mask`, null when all are).
  Value aVector(OpBuilder &in, SmallVector<Value> idx, bool last,
                int64_t lastLanes, Value mask, Value zero);

  /// With flat pixel runs, the vector of `a` from pixel `q` at column tap
  /// `t` (the current value of the other reduction loops), the lanes
  /// `edge` leaves out (if set) the tile's value.
  Value flatVector(OpBuilder &in, Value q, int64_t t, Value edge);

  /// b's value for row `i` of the block from `f0`, in every lane.
  Value bVector(OpBuilder &in, Value f0, int64_t i);

  /// One block of `nRows` rows from f0 x n vectors from column p0; the
  /// last vector covers only `lastLanes` columns (masked loads and
  /// stores) when below `lanes`.
  void emitBlock(OpBuilder &at, Value f0, int64_t nRows, Value p0, int64_t n,
                 int64_t lastLanes);

  using RowBody = llvm::function_ref<void(OpBuilder &, Value, int64_t)>;
  using ColBody =
      llvm::function_ref<void(OpBuilder &, Value, int64_t, int64_t)>;
  /// The outer dims, then full blocks of rows, then one block of the rows
  /// left over.
  void forEachRowBlock(OpBuilder at, RowBody body);
  /// Full column blocks, then one narrower block for the rest.
  void forEachColBlock(OpBuilder at, ColBody body);

  /// acc + the 4-byte dot products of unsigned `u` and signed `v` (vectors
  /// of lanes x 4 bytes) from 16-bit pair products, exactly: each operand
  /// splits into its even and its odd bytes as 16-bit lanes (zero- or
  /// sign-extended), and int8Dot (pmaddwd: two 16 x 16-bit products
  /// summed into a 32-bit lane) on the even halves plus on the odd halves
  /// gives each lane's four products. Unlike pmaddubsw, nothing saturates.
  Value dotFromPairs(OpBuilder &bb, Value acc, Value u, Value v,
                     llvm::DenseMap<Value, std::pair<Value, Value>> &halves);

  linalg::GenericOp op;
  const Contraction &k;
  const RegisterTilePlan &plan;
  StringRef int8Dot;
  /// int8Dot multiplies 16-bit pairs (x86 pmaddwd); the 4-byte dot product
  /// is built from two of them (dotFromPairs).
  bool int8DotPairs;
  /// `a` as a padded tile that only this contraction reads (paddedTile).
  std::optional<PaddedTile> tile;
  /// Flat pixel runs (FlatRows): `flatA` holds the tile's rows one after
  /// another; `flatOut` is the output with its rows and columns as one dim.
  std::optional<FlatRows> flat;
  Value flatA, flatView, flatOut;
  /// The source rows of a zero-padded tile `a` (RowWindow): the taps on
  /// its padding rows are skipped.
  std::optional<RowWindow> padRows;
  IRRewriter rewriter;
  Location loc;
  SmallVector<int64_t> trips;
  SmallVector<AffineMap> maps;
  Value a, b, out;
  int64_t lanes;
  bool pooling;
  Type accType;
  VectorType vecType;
  /// Integer dot products: each accumulator lane takes 4 bytes of a.
  VectorType byteVecType;
  /// The loop values at the point being emitted, by loop.
  SmallVector<Value> ivs;
  /// The fill and epilogue taken over (none when the reduction is chunked).
  Surroundings around;
  /// The even and odd columns of a stride-2 `a`, when split.
  Value phases;
  /// The first step of the current chunk of the outermost reduction loop
  /// (null: one chunk).
  Value chunk0;
  /// A dequantized operand's block factors (Contraction::blockInner).
  std::optional<BlockFactors> factors;
};

void RegisterTileEmitter::splitPhases() {
  auto aType = cast<MemRefType>(a.getType());
  ArrayRef<int64_t> shape = aType.getShape();
  int64_t w = shape.back();
  SmallVector<int64_t> split(shape.drop_back());
  split.append({2, (w + 1) / 2});
  OpBuilder copy = rewriter;
  Type element = aType.getElementType();
  VectorType own = VectorType::get({lanes}, element);
  phases = memref::AllocOp::create(copy, loc, MemRefType::get(split, element),
                                   copy.getI64IntegerAttr(64));
  // A padded tile's source, viewed before the loops over its rows.
  Value source;
  if (tile) {
    SmallVector<OpFoldResult> ones(aType.getRank(), copy.getIndexAttr(1));
    source = memref::SubViewOp::create(copy, loc, tile->base, tile->offsets,
                                       tile->sizes, ones);
  }
  SmallVector<Value> lead;
  for (int64_t e : shape.drop_back())
    lead.push_back(loop(copy, 0, e, 1));
  auto maskOf = [&](OpBuilder &bb, int64_t count) -> Value {
    return vector::CreateMaskOp::create(
        bb, loc, VectorType::get({lanes}, bb.getI1Type()),
        ValueRange{cst(bb, count)});
  };
  // Splits the row `row` of `from` (`width` columns) into its even and
  // odd columns: its phase p goes to phase dst[p] of this row of
  // `phases`, from column shift[p] on. Two vectors of the row in, their
  // even and their odd elements out; whole steps while both vectors lie
  // inside the row (`tail` unset), the last step, from column pair `tail`
  // on, masked to the row's end.
  auto splitRow = [&](OpBuilder &at, Value from, ArrayRef<Value> row,
                      int64_t width, const int64_t dst[2],
                      const int64_t shift[2]) {
    int64_t counts[2] = {(width + 1) / 2, width / 2};
    auto step = [&](OpBuilder &bb, Value q0, std::optional<int64_t> tail) {
      Value pad = arith::ConstantOp::create(
          bb, loc, cast<TypedAttr>(bb.getZeroAttr(own)));
      Value c0 = arith::MulIOp::create(bb, loc, q0, cst(bb, 2));
      SmallVector<Value> halves;
      for (int64_t h = 0; h < 2; ++h) {
        int64_t left = tail ? width - 2 * *tail - h * lanes : lanes;
        if (left <= 0) {
          halves.push_back(pad); // past the row's end
          continue;
        }
        SmallVector<Value> idx(row);
        idx.push_back(arith::AddIOp::create(bb, loc, c0, cst(bb, h * lanes)));
        halves.push_back(
            left < lanes
                ? Value(vector::MaskedLoadOp::create(bb, loc, own, from, idx,
                                                     maskOf(bb, left), pad))
                : Value(vector::LoadOp::create(bb, loc, own, from, idx)));
      }
      for (int64_t phase = 0; phase < 2; ++phase) {
        int64_t left = tail ? counts[phase] - *tail : lanes;
        if (left <= 0)
          continue; // this phase has no columns left
        SmallVector<int64_t> pick;
        for (int64_t t = 0; t < lanes; ++t)
          pick.push_back(2 * t + phase);
        Value v =
            vector::ShuffleOp::create(bb, loc, halves[0], halves[1], pick);
        SmallVector<Value> to(lead);
        to.append({cst(bb, dst[phase]),
                   shift[phase] ? Value(arith::AddIOp::create(
                                      bb, loc, q0, cst(bb, shift[phase])))
                                : q0});
        if (left < lanes)
          vector::MaskedStoreOp::create(bb, loc, phases, to, maskOf(bb, left),
                                        v);
        else
          vector::StoreOp::create(bb, loc, v, phases, to);
      }
    };
    int64_t whole = counts[1] / lanes * lanes;
    if (whole > 0) {
      OpBuilder in = at;
      step(in, loop(in, 0, whole, lanes), std::nullopt);
    }
    if (whole < counts[0])
      step(at, cst(at, whole), whole);
  };
  int64_t same[2] = {0, 1}, none[2] = {0, 0};
  if (!tile) {
    splitRow(copy, a, lead, w, same, none);
    return;
  }
  // `a` is a padded tile: its rows and columns from the copied region of
  // the tile's source, `value` elsewhere. Split the source's rows
  // straight into the phases (the tile itself is never made) and write
  // `value` around them.
  int64_t rank = aType.getRank();
  Value valid =
      arith::ConstantOp::create(copy, loc, copy.getBoolAttr(true)).getResult();
  SmallVector<Value> row;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    Value r = arith::SubIOp::create(
        copy, loc, lead[d],
        getValueOrCreateConstantIndexOp(copy, loc, tile->at[d]));
    row.push_back(r);
    if (isConstantIntValue(tile->at[d], 0) &&
        isConstantIntValue(tile->sizes[d], shape[d]))
      continue; // every row of this dim is copied
    // Below the region r wraps around to a large unsigned value.
    Value inside = arith::CmpIOp::create(
        copy, loc, arith::CmpIPredicate::ult, r,
        getValueOrCreateConstantIndexOp(copy, loc, tile->sizes[d]));
    valid = arith::AndIOp::create(copy, loc, valid, inside);
  }
  int64_t offset = *getConstantIntValue(tile->at.back());
  int64_t width = *getConstantIntValue(tile->sizes.back());
  Value fill = vector::BroadcastOp::create(copy, loc, own, tile->value);
  auto ifOp = scf::IfOp::create(copy, loc, valid, /*withElseRegion=*/true);
  // Phase p of a source row is phase (p + offset) % 2 of the tile's, from
  // column (p + offset) / 2 on.
  int64_t dst[2], shift[2];
  for (int64_t p = 0; p < 2; ++p) {
    dst[p] = (p + offset) % 2;
    shift[p] = (p + offset) / 2;
  }
  int64_t lengths[2] = {(w + 1) / 2, w / 2};
  OpBuilder in = OpBuilder::atBlockTerminator(ifOp.thenBlock());
  splitRow(in, source, row, width, dst, shift);
  // The tile's columns left and right of the source's.
  for (int64_t p = 0; p < 2; ++p) {
    int64_t count = (width + 1 - p) / 2;
    for (int64_t q = 0; q < lengths[dst[p]]; ++q) {
      if (q >= shift[p] && q < shift[p] + count)
        continue;
      SmallVector<Value> to(lead);
      to.append({cst(in, dst[p]), cst(in, q)});
      memref::StoreOp::create(in, loc, tile->value, phases, to);
    }
  }
  // A row outside the source's: `value` throughout.
  OpBuilder out = OpBuilder::atBlockTerminator(ifOp.elseBlock());
  for (int64_t phase = 0; phase < 2; ++phase) {
    for (int64_t q = 0; q < lengths[phase]; q += lanes) {
      SmallVector<Value> to(lead);
      to.append({cst(out, phase), cst(out, q)});
      int64_t left = lengths[phase] - q;
      if (left < lanes)
        vector::MaskedStoreOp::create(out, loc, phases, to, maskOf(out, left),
                                      fill);
      else
        vector::StoreOp::create(out, loc, fill, phases, to);
    }
  }
}

void RegisterTileEmitter::flattenTile() {
  auto aType = cast<MemRefType>(a.getType());
  ArrayRef<int64_t> shape = aType.getShape();
  int64_t rank = aType.getRank();
  int64_t w = flat->width;
  // Tile element (t, x) goes to t * W + x: the columns past a row's W
  // source columns (its right padding) land on the next row's left
  // padding and first columns, which masks keep from being read as such.
  int64_t length = flat->tileRows * w + (flat->tileWidth - w);
  SmallVector<int64_t> flatShape(shape.drop_back(2));
  flatShape.push_back(length);
  OpBuilder b = rewriter;
  Type element = aType.getElementType();
  VectorType own = VectorType::get({lanes}, element);
  flatA = memref::AllocOp::create(b, loc, MemRefType::get(flatShape, element),
                                  b.getI64IntegerAttr(64));
  // The copied region of the source, its rows and columns as one dim.
  SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
  Value region = memref::SubViewOp::create(b, loc, tile->base, tile->offsets,
                                           tile->sizes, ones);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 2 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 2, rank - 1});
  Value source = memref::CollapseShapeOp::create(b, loc, region, groups);
  auto value = [&](OpFoldResult f) {
    return getValueOrCreateConstantIndexOp(b, loc, f);
  };
  Value rowAt = value(tile->at[rank - 2]);
  Value rows = value(tile->sizes[rank - 2]);
  Value rowOffset = value(tile->offsets[rank - 2]);
  // A tile of source rows only, with a source row above and below it, is
  // the source's memory laid out that way already (NCHW rows are
  // contiguous): read it there, from its first row's start less the left
  // padding; the masked lanes (padding columns) read the neighbouring
  // rows' ends and are not used. Other tiles are copied into `flatA`.
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> dynamicStrides(rank - 1, ShapedType::kDynamic);
  dynamicStrides.back() = 1;
  auto viewType = MemRefType::get(
      flatShape, element,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dynamicStrides));
  auto baseType = cast<MemRefType>(tile->base.getType());
  int64_t sourceRows = baseType.getShape()[rank - 2];
  Value interior =
      arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult();
  if (!ShapedType::isDynamic(sourceRows)) {
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
      return arith::CmpIOp::create(b, loc, p, x, y);
    };
    Value end =
        arith::AddIOp::create(b, loc, rowOffset, cst(b, flat->tileRows));
    interior = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::eq, rowAt, cst(b, 0)),
            cmp(arith::CmpIPredicate::eq, rows, cst(b, flat->tileRows))),
        arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::sge, rowOffset, cst(b, 1)),
            cmp(arith::CmpIPredicate::sle, end, cst(b, sourceRows - 1))));
  }
  auto choice = scf::IfOp::create(b, loc, TypeRange{viewType}, interior,
                                  /*withElseRegion=*/true);
  {
    OpBuilder tb = OpBuilder::atBlockEnd(choice.thenBlock());
    auto meta = memref::ExtractStridedMetadataOp::create(tb, loc, tile->base);
    SmallVector<Value> strides(meta.getStrides().begin(),
                               meta.getStrides().end());
    Value offset = meta.getOffset();
    auto addTimes = [&](Value acc, Value x, Value y) -> Value {
      return arith::AddIOp::create(tb, loc, acc,
                                   arith::MulIOp::create(tb, loc, x, y));
    };
    for (int64_t d = 0; d + 2 < rank; ++d)
      offset = addTimes(
          offset, getValueOrCreateConstantIndexOp(tb, loc, tile->offsets[d]),
          strides[d]);
    offset = addTimes(offset, rowOffset, cst(tb, w));
    offset = arith::SubIOp::create(tb, loc, offset, cst(tb, flat->padLeft));
    SmallVector<OpFoldResult> sizes, viewStrides;
    for (int64_t d = 0; d + 2 < rank; ++d) {
      sizes.push_back(tb.getIndexAttr(shape[d]));
      viewStrides.push_back(strides[d]);
    }
    sizes.push_back(tb.getIndexAttr(length));
    viewStrides.push_back(tb.getIndexAttr(1));
    Value view = memref::ReinterpretCastOp::create(
        tb, loc, viewType, meta.getBaseBuffer(), offset, sizes, viewStrides);
    scf::YieldOp::create(tb, loc, view);
  }
  OpBuilder eb = OpBuilder::atBlockEnd(choice.elseBlock());
  scf::YieldOp::create(
      eb, loc, memref::CastOp::create(eb, loc, viewType, flatA).getResult());
  flatView = choice.getResult(0);
  b.setInsertionPoint(choice.elseBlock()->getTerminator());
  SmallVector<Value> lead;
  for (int64_t e : shape.drop_back(2))
    lead.push_back(loop(b, 0, e, 1));
  Value fill = vector::BroadcastOp::create(b, loc, own, tile->value);
  // `count` elements to `flatA` from `to` on: from `source` from `from`
  // on, or (no `from`) the tile's value; vectors, the last one masked.
  auto run = [&](Value from, Value to, Value count) {
    OpBuilder in = b;
    auto f = scf::ForOp::create(in, loc, cst(in, 0), count, cst(in, lanes));
    in.setInsertionPoint(f.getBody()->getTerminator());
    Value i = f.getInductionVar();
    Value left = arith::SubIOp::create(in, loc, count, i);
    Value mask = vector::CreateMaskOp::create(
        in, loc, VectorType::get({lanes}, in.getI1Type()), ValueRange{left});
    Value v = fill;
    if (from) {
      SmallVector<Value> at(lead);
      at.push_back(arith::AddIOp::create(in, loc, from, i));
      v = vector::MaskedLoadOp::create(in, loc, own, source, at, mask, fill);
    }
    SmallVector<Value> at(lead);
    at.push_back(arith::AddIOp::create(in, loc, to, i));
    vector::MaskedStoreOp::create(in, loc, flatA, at, mask, v);
  };
  // Padding rows above the source's (and the first row's left padding),
  // the source's rows, then padding to the end.
  Value width = cst(b, w);
  Value begin =
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, rowAt, width),
                            cst(b, flat->padLeft));
  Value copied = arith::MulIOp::create(b, loc, rows, width);
  Value end = arith::AddIOp::create(b, loc, begin, copied);
  run(Value(), cst(b, 0), begin);
  run(cst(b, 0), begin, copied);
  run(Value(), end, arith::SubIOp::create(b, loc, cst(b, length), end));
}

Value RegisterTileEmitter::dequantVector(OpBuilder &bb, Value laneMask,
                                         Value root) {
  Block &body = op.getRegion().front();
  IRMapping map;
  auto vectorOf = [&](Type t) { return VectorType::get({lanes}, t); };
  SmallVector<Operation *> ops;
  if (!isa<BlockArgument>(root) && root.getDefiningOp()->getBlock() == &body)
    ops = expressionOf(body, root);
  // The inputs the expression reads, loaded along the columns.
  SetVector<unsigned> read;
  if (auto arg = dyn_cast<BlockArgument>(root); arg && arg.getOwner() == &body)
    read.insert(arg.getArgNumber());
  for (Operation *o : ops)
    for (Value operand : o->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &body)
        read.insert(arg.getArgNumber());
  for (unsigned i : k.aInputs) {
    if (!read.contains(i))
      continue;
    Value in = op.getDpsInputs()[i];
    SmallVector<Value> at = indices(bb, loc, maps[i], ivs);
    VectorType t = vectorOf(body.getArgument(i).getType());
    Value v = laneMask ? Value(vector::MaskedLoadOp::create(
                             bb, loc, t, in, at, laneMask,
                             arith::ConstantOp::create(
                                 bb, loc, cast<TypedAttr>(bb.getZeroAttr(t)))))
                       : Value(vector::LoadOp::create(bb, loc, t, in, at));
    map.map(body.getArgument(i), v);
  }
  auto isVector = [](Value v) { return isa<VectorType>(v.getType()); };
  auto asVector = [&](Value v) -> Value {
    if (isVector(v))
      return v;
    return vector::BroadcastOp::create(bb, loc, vectorOf(v.getType()), v);
  };
  for (Operation *o : ops) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      map.map(o->getResult(0), ivs[index.getDim()]);
      continue;
    }
    bool vectorOp = llvm::any_of(o->getOperands(), [&](Value v) {
      return isVector(map.lookupOrDefault(v));
    });
    IRMapping operands;
    for (Value v : o->getOperands()) {
      Value m = map.lookupOrDefault(v);
      operands.map(v, vectorOp ? asVector(m) : m);
    }
    Operation *c = bb.clone(*o, operands);
    if (vectorOp)
      c->getResult(0).setType(vectorOf(c->getResult(0).getType()));
    map.map(o->getResult(0), c->getResult(0));
  }
  return asVector(map.lookupOrDefault(root));
}

Value RegisterTileEmitter::aVector(OpBuilder &in, SmallVector<Value> idx,
                                   bool last, int64_t lastLanes, Value mask,
                                   Value zero) {
  if (k.dequant)
    return dequantVector(in, last ? mask : Value(),
                         factors ? factors->q : dequantRoot(op, k.b));
  if (k.window) {
    // One load from the lane's first tap on, as far as the row
    // goes; lane l's bytes are taps stride * l + 0..3 (a tap past
    // the window meets a zero weight).
    auto aType = cast<MemRefType>(a.getType());
    Value col = idx.back();
    Value left =
        arith::SubIOp::create(in, loc, cst(in, aType.getShape().back()), col);
    Value count = arith::MinSIOp::create(in, loc, left, cst(in, lanes * 4));
    Value m = vector::CreateMaskOp::create(
        in, loc, VectorType::get({lanes * 4}, in.getI1Type()),
        ValueRange{count});
    Value bytes = vector::MaskedLoadOp::create(
        in, loc, byteVecType, a, idx, m,
        arith::ConstantOp::create(
            in, loc, cast<TypedAttr>(in.getZeroAttr(byteVecType))));
    SmallVector<int64_t> pick;
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t q = 0; q < 4; ++q)
        pick.push_back(k.stride * l + q);
    return vector::ShuffleOp::create(in, loc, bytes, bytes, pick);
  }
  if (k.dot && k.stride == 2) {
    // The even groups of 4 bytes of 2 * lanes contiguous ones: two
    // loads (masked to the 2 * valid - 1 groups needed), shuffled as
    // i32 lanes.
    int64_t valid = last ? lastLanes : lanes;
    int64_t needed = 2 * valid - 1;
    VectorType words = VectorType::get({lanes}, in.getI32Type());
    auto groups = [&](Value base, int64_t count) -> Value {
      SmallVector<Value> at(idx);
      at[at.size() - 2] = base;
      Value bytes;
      if (count >= lanes) {
        bytes = vector::LoadOp::create(in, loc, byteVecType, a, at);
      } else {
        Value m = vector::CreateMaskOp::create(
            in, loc, VectorType::get({lanes * 4}, in.getI1Type()),
            ValueRange{cst(in, std::max<int64_t>(count, 0) * 4)});
        bytes = vector::MaskedLoadOp::create(
            in, loc, byteVecType, a, at, m,
            arith::ConstantOp::create(
                in, loc, cast<TypedAttr>(in.getZeroAttr(byteVecType))));
      }
      return vector::BitCastOp::create(in, loc, words, bytes);
    };
    Value col = idx[idx.size() - 2];
    Value lo = groups(col, needed);
    Value hi = groups(arith::AddIOp::create(in, loc, col, cst(in, lanes)),
                      needed - lanes);
    SmallVector<int64_t> even;
    for (int64_t t = 0; t < lanes; ++t)
      even.push_back(2 * t);
    return vector::BitCastOp::create(
        in, loc, byteVecType, vector::ShuffleOp::create(in, loc, lo, hi, even));
  }
  if (k.dot) {
    // lanes groups of 4 bytes; in a partial block, only the valid
    // groups' bytes.
    if (last && mask) {
      Value bytes = vector::CreateMaskOp::create(
          in, loc, VectorType::get({lanes * 4}, in.getI1Type()),
          ValueRange{cst(in, lastLanes * 4)});
      Value pad = arith::ConstantOp::create(
          in, loc, cast<TypedAttr>(in.getZeroAttr(byteVecType)));
      return vector::MaskedLoadOp::create(in, loc, byteVecType, a, idx, bytes,
                                          pad);
    }
    return vector::LoadOp::create(in, loc, byteVecType, a, idx);
  }
  // Integer inputs: bytes, widened to the accumulators' i32.
  VectorType narrow =
      VectorType::get({lanes}, cast<MemRefType>(a.getType()).getElementType());
  auto widen = [&](Value v) -> Value {
    if (!k.integer)
      return narrow == vecType
                 ? v
                 : Value(arith::ExtFOp::create(in, loc, vecType, v));
    if (k.unsignedInput[k.a])
      return arith::ExtUIOp::create(in, loc, vecType, v);
    return arith::ExtSIOp::create(in, loc, vecType, v);
  };
  if (k.integer && k.stride == 1) {
    Value v;
    if (last && mask)
      v = vector::MaskedLoadOp::create(
          in, loc, narrow, a, idx, mask,
          arith::ConstantOp::create(in, loc,
                                    cast<TypedAttr>(in.getZeroAttr(narrow))));
    else
      v = vector::LoadOp::create(in, loc, narrow, a, idx);
    return widen(v);
  }
  if (phases) {
    // Column c of `a` is column c / 2 of phase c % 2.
    Value c = idx.back();
    idx.back() = arith::RemUIOp::create(in, loc, c, cst(in, 2));
    idx.push_back(arith::DivUIOp::create(in, loc, c, cst(in, 2)));
    return loadVector(in, phases, idx, last ? mask : Value(), zero);
  }
  if (k.stride == 1)
    return loadVector(in, a, idx, last ? mask : Value(), zero);
  // Stride 2: the even elements of 2 * lanes contiguous ones. Only
  // offsets up to 2 * (valid lanes - 1) are needed; masks keep the
  // loads inside them.
  int64_t valid = last ? lastLanes : lanes;
  int64_t needed = 2 * valid - 1;
  VectorType loadType = narrow;
  auto half = [&](Value base, int64_t count) -> Value {
    SmallVector<Value> at(idx);
    at.back() = base;
    if (count >= lanes)
      return vector::LoadOp::create(in, loc, loadType, a, at);
    Value m = vector::CreateMaskOp::create(
        in, loc, VectorType::get({lanes}, in.getI1Type()),
        ValueRange{cst(in, std::max<int64_t>(count, 0))});
    return vector::MaskedLoadOp::create(
        in, loc, loadType, a, at, m,
        arith::ConstantOp::create(in, loc,
                                  cast<TypedAttr>(in.getZeroAttr(loadType))));
  };
  Value lo = half(idx.back(), needed);
  Value hi = half(arith::AddIOp::create(in, loc, idx.back(), cst(in, lanes)),
                  needed - lanes);
  SmallVector<int64_t> even;
  for (int64_t t = 0; t < lanes; ++t)
    even.push_back(2 * t);
  return widen(vector::ShuffleOp::create(in, loc, lo, hi, even));
}

Value RegisterTileEmitter::flatVector(OpBuilder &in, Value q, int64_t t,
                                      Value edge) {
  // a's row and column indices at the first output pixel are the taps
  // (kh, kw): pixel q reads element q + kh * W + kw of its rows laid flat.
  ivs[flat->row] = cst(in, 0);
  ivs[k.p] = cst(in, 0);
  ivs[flat->tap] = cst(in, t);
  SmallVector<Value> idx = indices(in, loc, maps[k.a], ivs);
  Value column = idx.pop_back_val();
  Value rowTap = idx.pop_back_val();
  idx.push_back(arith::AddIOp::create(
      in, loc, q,
      arith::AddIOp::create(
          in, loc, arith::MulIOp::create(in, loc, rowTap, cst(in, flat->width)),
          column)));
  if (!edge)
    return vector::LoadOp::create(in, loc, vecType, flatView, idx);
  Value pad = vector::BroadcastOp::create(in, loc, vecType, tile->value);
  return vector::MaskedLoadOp::create(in, loc, vecType, flatView, idx, edge,
                                      pad);
}

Value RegisterTileEmitter::bVector(OpBuilder &in, Value f0, int64_t i) {
  setRow(in, f0, i);
  ivs[k.p] = cst(in, 0);
  SmallVector<Value> idx = indices(in, loc, maps[k.b], ivs);
  if (k.dot) {
    // b's 4 bytes as one i32, in every lane; a window's taps
    // padded with zeros to 4.
    Value four;
    if (k.window) {
      int64_t taps = trips[*k.dot];
      Value some = vector::LoadOp::create(
          in, loc, VectorType::get({taps}, in.getI8Type()), b, idx);
      Value zeros = arith::ConstantOp::create(
          in, loc,
          cast<TypedAttr>(
              in.getZeroAttr(VectorType::get({taps}, in.getI8Type()))));
      SmallVector<int64_t> pad;
      for (int64_t q = 0; q < 4; ++q)
        pad.push_back(q < taps ? q : taps);
      four = vector::ShuffleOp::create(in, loc, some, zeros, pad);
    } else {
      four = vector::LoadOp::create(
          in, loc, VectorType::get({4}, in.getI8Type()), b, idx);
    }
    Value word = vector::ExtractOp::create(
        in, loc,
        vector::BitCastOp::create(in, loc,
                                  VectorType::get({1}, in.getI32Type()), four),
        ArrayRef<int64_t>{0});
    return vector::BitCastOp::create(
        in, loc, byteVecType,
        vector::BroadcastOp::create(in, loc, vecType, word));
  } else {
    Value s = memref::LoadOp::create(in, loc, b, idx);
    if (k.integer)
      s = k.unsignedInput[k.b]
              ? Value(arith::ExtUIOp::create(in, loc, accType, s))
              : Value(arith::ExtSIOp::create(in, loc, accType, s));
    else if (s.getType() != accType)
      s = arith::ExtFOp::create(in, loc, accType, s);
    return vector::BroadcastOp::create(in, loc, vecType, s);
  }
}

void RegisterTileEmitter::emitBlock(OpBuilder &at, Value f0, int64_t nRows,
                                    Value p0, int64_t n, int64_t lastLanes) {
  Value mask;
  if (lastLanes < lanes)
    mask = vector::CreateMaskOp::create(
        at, loc, VectorType::get({lanes}, at.getI1Type()),
        ValueRange{cst(at, lastLanes)});
  Value zero = arith::ConstantOp::create(
      at, loc, cast<TypedAttr>(at.getZeroAttr(vecType)));
  SmallVector<Value> accs;
  // Each accumulator's outputs: their indices in the temporary (through
  // the epilogue), and where partial sums go (the temporary, with flat
  // pixel runs through its view of rows and columns as one dim).
  SmallVector<SmallVector<Value>> outIdx, partialIdx;
  Value partialOut = flat ? flatOut : out;
  for (int64_t i = 0; i < nRows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      setRow(at, f0, i);
      Value q = arith::AddIOp::create(at, loc, p0, cst(at, j * lanes));
      ivs[k.p] = q;
      if (flat) {
        ivs[flat->row] =
            arith::DivUIOp::create(at, loc, q, cst(at, flat->width));
        ivs[k.p] = arith::RemUIOp::create(at, loc, q, cst(at, flat->width));
      }
      for (unsigned r : k.reductions)
        ivs[r] = cst(at, 0);
      outIdx.push_back(indices(at, loc, maps.back(), ivs));
      partialIdx.push_back(outIdx.back());
      if (flat) {
        partialIdx.back().pop_back();
        partialIdx.back().back() = q;
      }
    }
  // With flat pixel runs, which lanes of vector j read inside the source's
  // row at column tap t (null: all of them): the lanes whose column
  // ow = q mod W plus t, less the left padding, lies in [0, W); and in the
  // last vector of a partial block, only its valid lanes.
  SmallVector<SmallVector<Value>> edges;
  if (flat) {
    VectorType words = VectorType::get({lanes}, at.getI32Type());
    SmallVector<int32_t> laneIds;
    for (int64_t l = 0; l < lanes; ++l)
      laneIds.push_back(static_cast<int32_t>(l));
    Value iota = arith::ConstantOp::create(
        at, loc, DenseElementsAttr::get(words, ArrayRef<int32_t>(laneIds)));
    auto splat = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          at, loc,
          DenseElementsAttr::get(
              words, at.getI32IntegerAttr(static_cast<int32_t>(v))));
    };
    for (int64_t j = 0; j < n; ++j) {
      Value q = arith::IndexCastOp::create(
          at, loc, at.getI32Type(),
          arith::AddIOp::create(at, loc, p0, cst(at, j * lanes)));
      Value column = arith::RemUIOp::create(
          at, loc,
          arith::AddIOp::create(
              at, loc, vector::BroadcastOp::create(at, loc, words, q), iota),
          splat(flat->width));
      Value valid = j == n - 1 ? mask : Value();
      edges.emplace_back();
      for (int64_t t = 0; t < trips[flat->tap]; ++t) {
        int64_t shift = t - flat->padLeft;
        Value inside = valid;
        if (shift != 0) {
          // Left of the row, the sum wraps around to a large unsigned
          // value.
          Value sum = arith::AddIOp::create(at, loc, column, splat(shift));
          inside = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult,
                                         sum, splat(flat->width));
          if (valid)
            inside = arith::AndIOp::create(at, loc, inside, valid);
        }
        edges.back().push_back(inside);
      }
    }
  }
  // With a zero-padded tile, the row taps of the block's rows that fall on
  // source rows: tile row g + kh is one for kh in [at - g, at + size - g).
  Value tapLo, tapHi;
  if (padRows && !flat) {
    ivs[padRows->tap] = cst(at, 0);
    SmallVector<Value> tileIdx = indices(at, loc, maps[padRows->operand], ivs);
    Value g = tileIdx[tileIdx.size() - 2];
    Value first = getValueOrCreateConstantIndexOp(at, loc, padRows->at);
    Value last = arith::AddIOp::create(
        at, loc, first,
        getValueOrCreateConstantIndexOp(at, loc, padRows->size));
    tapLo = arith::MaxSIOp::create(at, loc, cst(at, 0),
                                   arith::SubIOp::create(at, loc, first, g));
    tapHi = arith::MinSIOp::create(at, loc, cst(at, trips[padRows->tap]),
                                   arith::SubIOp::create(at, loc, last, g));
  }
  // The accumulators start as the fill's value, or as the partial sums of
  // the chunks before (in the temporary); in chunks, from the fill in the
  // first one only.
  auto loadPartial = [&](OpBuilder &bb) {
    SmallVector<Value> loaded;
    for (auto [j, idx] : llvm::enumerate(partialIdx))
      loaded.push_back(loadVector(
          bb, partialOut, idx,
          static_cast<int64_t>(j % n) == n - 1 ? mask : Value(), zero));
    return loaded;
  };
  auto broadcastFill = [&](OpBuilder &bb) {
    return SmallVector<Value>(
        outIdx.size(),
        vector::BroadcastOp::create(bb, loc, vecType, around.fillValue));
  };
  if (!around.fill) {
    accs = loadPartial(at);
  } else if (!chunk0) {
    accs = broadcastFill(at);
  } else {
    Value first = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::eq,
                                        chunk0, cst(at, 0));
    auto start = scf::IfOp::create(
        at, loc, SmallVector<Type>(outIdx.size(), vecType), first,
        /*withElseRegion=*/true);
    OpBuilder thenB = start.getThenBodyBuilder();
    scf::YieldOp::create(thenB, loc, broadcastFill(thenB));
    OpBuilder elseB = start.getElseBodyBuilder();
    scf::YieldOp::create(elseB, loc, loadPartial(elseB));
    accs.assign(start.getResults().begin(), start.getResults().end());
  }
  SmallVector<scf::ForOp> nest;
  OpBuilder in = at;
  ValueRange carried = accs;
  // Block factors: the loops of a block carry the block's own sums, from
  // zero (and, with a zero point, each row's sum of b after them); the
  // loops outside, the accumulators.
  size_t numOuter = k.reductions.size() - (factors ? k.blockInner : 0);
  ValueRange outerCarried;
  SmallVector<Value> blockStart;
  for (auto [l, r] : llvm::enumerate(k.reductions)) {
    // Flat pixel runs take the column taps unrolled, each with its masks.
    if (flat && r == flat->tap)
      break;
    if (factors && l == numOuter) {
      outerCarried = carried;
      blockStart.assign(nRows * n + (factors->zero ? nRows : 0), zero);
      carried = blockStart;
    }
    Value lb = cst(in, 0), ub = cst(in, trips[r]);
    if (r == k.reductions.front() && chunk0) {
      lb = chunk0;
      ub = arith::AddIOp::create(in, loc, chunk0, cst(in, plan.chunk));
    } else if (tapLo && r == padRows->tap) {
      lb = tapLo;
      ub = tapHi;
    }
    auto loop = scf::ForOp::create(in, loc, lb, ub, cst(in, 1), carried);
    ivs[r] = loop.getInductionVar();
    carried = loop.getRegionIterArgs();
    nest.push_back(loop);
    in = OpBuilder::atBlockBegin(loop.getBody());
  }
  if (k.dot)
    ivs[*k.dot] = cst(in, 0);
  // One step of the reduction from the sums `carried` (at column tap `t`
  // with flat pixel runs).
  auto step = [&](ValueRange carried, int64_t t) {
    if (flat)
      ivs[flat->tap] = cst(in, t);
    // The vectors of a: one set, or one per row when the rows are a's.
    SmallVector<Value> avec;
    for (int64_t j = 0; j < (k.rowsInA ? nRows : 1) * n; ++j) {
      if (k.rowsInA)
        setRow(in, f0, j / n);
      else if (k.f)
        ivs[*k.f] = cst(in, 0);
      Value q = arith::AddIOp::create(in, loc, p0, cst(in, (j % n) * lanes));
      if (flat) {
        avec.push_back(flatVector(in, q, t, edges[j % n][t]));
        continue;
      }
      ivs[k.p] = q;
      avec.push_back(aVector(in, indices(in, loc, maps[k.a], ivs),
                             j % n == n - 1, lastLanes, mask, zero));
    }
    SmallVector<Value> next, rowB;
    Value bv;
    // The 16-bit halves of each byte vector a step splits (dotFromPairs),
    // split once however many products read it.
    llvm::DenseMap<Value, std::pair<Value, Value>> halves;
    for (int64_t i = 0; i < nRows; ++i) {
      auto aOf = [&](int64_t j) { return avec[k.rowsInA ? i * n + j : j]; };
      if (pooling) {
        for (int64_t j = 0; j < n; ++j)
          // A window's maximum does not tell -0 from +0 (either is
          // the value); without that, x86 needs half the instructions.
          next.push_back(k.combine == Contraction::Combine::Max
                             ? Value(arith::MaximumFOp::create(
                                   in, loc, carried[i * n + j], aOf(j),
                                   arith::FastMathFlags::nsz))
                             : Value(arith::AddFOp::create(
                                   in, loc, carried[i * n + j], aOf(j))));
        continue;
      }
      // b's scalar: one per row, or one for all when the rows are a's.
      if (!bv || !k.rowsInA)
        bv = bVector(in, f0, i);
      rowB.push_back(bv);
      if (k.dot) {
        StringAttr name = in.getStringAttr(int8Dot);
        for (int64_t j = 0; j < n; ++j) {
          Value u = k.aUnsigned ? aOf(j) : bv, v = k.aUnsigned ? bv : aOf(j);
          next.push_back(
              int8DotPairs ? dotFromPairs(in, carried[i * n + j], u, v, halves)
                           : LLVM::CallIntrinsicOp::create(
                                 in, loc, vecType, name,
                                 ValueRange{carried[i * n + j], u, v})
                                 .getResult(0));
        }
        continue;
      }
      for (int64_t j = 0; j < n; ++j)
        next.push_back(k.integer
                           ? Value(arith::AddIOp::create(
                                 in, loc, carried[i * n + j],
                                 arith::MulIOp::create(in, loc, aOf(j), bv)))
                           : Value(vector::FMAOp::create(in, loc, aOf(j), bv,
                                                         carried[i * n + j])));
    }
    if (factors && factors->zero)
      for (int64_t i = 0; i < nRows; ++i)
        next.push_back(
            arith::AddFOp::create(in, loc, carried[nRows * n + i], rowB[i]));
    return next;
  };
  SmallVector<Value> next;
  if (flat) {
    next.assign(carried.begin(), carried.end());
    for (int64_t t = 0; t < trips[flat->tap]; ++t)
      next = step(next, t);
  } else {
    next = step(carried, 0);
  }
  scf::YieldOp::create(in, loc, next);
  auto chain = [&](size_t from, size_t to) {
    for (size_t l = from; l > to; --l) {
      OpBuilder y = OpBuilder::atBlockEnd(nest[l - 1].getBody());
      scf::YieldOp::create(y, loc, nest[l].getResults());
    }
  };
  if (factors) {
    chain(nest.size() - 1, numOuter);
    // After a block: acc + S * (sum(b * Q) - Z * sum(b)), S and Z
    // loaded once per block and vector.
    OpBuilder fb = OpBuilder::atBlockEnd(nest[numOuter - 1].getBody());
    ValueRange sums = nest[numOuter].getResults();
    SmallVector<Value> negSumB;
    if (factors->zero)
      for (int64_t i = 0; i < nRows; ++i)
        negSumB.push_back(arith::NegFOp::create(fb, loc, sums[nRows * n + i]));
    SmallVector<Value> updated(nRows * n);
    for (int64_t j = 0; j < n; ++j) {
      ivs[k.p] = arith::AddIOp::create(fb, loc, p0, cst(fb, j * lanes));
      Value m = j == n - 1 ? mask : Value();
      Value s = factors->scale ? dequantVector(fb, m, factors->scale) : Value();
      Value z = factors->zero ? dequantVector(fb, m, factors->zero) : Value();
      for (int64_t i = 0; i < nRows; ++i) {
        Value d = sums[i * n + j];
        if (z)
          d = vector::FMAOp::create(fb, loc, negSumB[i], z, d);
        Value acc = outerCarried[i * n + j];
        updated[i * n + j] =
            s ? Value(vector::FMAOp::create(fb, loc, d, s, acc))
              : Value(arith::AddFOp::create(fb, loc, acc, d));
      }
    }
    scf::YieldOp::create(fb, loc, updated);
    chain(numOuter - 1, 0);
  } else {
    chain(nest.size() - 1, 0);
  }
  at.setInsertionPointAfter(nest.front());
  // The sums go through the epilogue into its output, or (between chunks)
  // into the temporary; in chunks, through the epilogue after the last.
  ValueRange sums = nest.front().getResults();
  auto storePartial = [&](OpBuilder &bb) {
    for (auto [j, r] : llvm::enumerate(sums)) {
      bool last = static_cast<int64_t>(j % n) == n - 1;
      if (last && mask)
        vector::MaskedStoreOp::create(bb, loc, partialOut, partialIdx[j], mask,
                                      r);
      else
        vector::StoreOp::create(bb, loc, r, partialOut, partialIdx[j]);
    }
  };
  auto storeFinal = [&](OpBuilder &bb) {
    for (auto [j, r] : llvm::enumerate(sums)) {
      bool last = static_cast<int64_t>(j % n) == n - 1;
      storeEpilogue(bb, r, outIdx[j], last ? mask : Value());
    }
  };
  if (!around.epilogue) {
    storePartial(at);
  } else if (!chunk0) {
    storeFinal(at);
  } else {
    Value last = arith::CmpIOp::create(
        at, loc, arith::CmpIPredicate::eq, chunk0,
        cst(at, trips[k.reductions.front()] - plan.chunk));
    auto finish = scf::IfOp::create(at, loc, TypeRange(), last,
                                    /*withElseRegion=*/true);
    OpBuilder thenB = finish.getThenBodyBuilder();
    storeFinal(thenB);
    OpBuilder elseB = finish.getElseBodyBuilder();
    storePartial(elseB);
  }
}

void RegisterTileEmitter::forEachRowBlock(OpBuilder at, RowBody body) {
  for (unsigned d : k.outer)
    ivs[d] = loop(at, 0, trips[d], 1);
  if (!k.f) {
    body(at, Value(), 1);
    return;
  }
  if (plan.fullRows > 0) {
    OpBuilder inRows = at;
    body(inRows, loop(inRows, 0, plan.fullRows, plan.rows), plan.rows);
  }
  if (int64_t rest = trips[*k.f] - plan.fullRows)
    body(at, cst(at, plan.fullRows), rest);
}

void RegisterTileEmitter::forEachColBlock(OpBuilder at, ColBody body) {
  if (plan.fullCols > 0) {
    OpBuilder inCols = at;
    body(inCols, loop(inCols, 0, plan.fullCols, plan.block), plan.vectors,
         lanes);
  }
  if (int64_t rest = trips[k.p] - plan.fullCols) {
    int64_t n = (rest + lanes - 1) / lanes;
    body(at, cst(at, plan.fullCols), n, rest - (n - 1) * lanes);
  }
}

void RegisterTileEmitter::run() {
  rewriter.setInsertionPoint(op);
  // A reduction in chunks keeps its partial sums in the temporary between
  // chunks: the fill's value starts the first chunk, the epilogue ends the
  // last.
  unsigned r0 = k.reductions.front();
  bool chunked = plan.chunk < trips[r0];
  around = surroundingsOf(op);
  if (k.blockInner)
    factors = blockFactors(op, k);
  if (around.fill && around.fillValue.getType() != accType)
    around.fill = nullptr;
  // With the epilogue, the nest goes where the epilogue was: what it
  // reads (bias, residual) may be views made after the contraction.
  if (around.epilogue)
    rewriter.setInsertionPoint(around.epilogue);
  // A padded tile that only the contraction reads is split into phases
  // straight from its source, and never made.
  if (plan.splitPhases) {
    splitPhases();
  } else if (flat) {
    flattenTile();
  } else {
    tile.reset();
  }
  // With flat pixel runs, partial sums (between chunks, or without a fill
  // or an epilogue) go to the temporary's rows and columns as one dim.
  if (flat && (chunked || !around.fill || !around.epilogue)) {
    auto outType = cast<MemRefType>(out.getType());
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 2 < outType.getRank(); ++d)
      groups.push_back({d});
    groups.push_back({outType.getRank() - 2, outType.getRank() - 1});
    flatOut = memref::CollapseShapeOp::create(rewriter, loc, out, groups);
  }
  OpBuilder start = rewriter;
  if (chunked)
    chunk0 = loop(start, 0, trips[r0], plan.chunk);
  if (plan.columnsOuter) {
    forEachColBlock(
        start, [&](OpBuilder &at, Value p0, int64_t n, int64_t lastLanes) {
          forEachRowBlock(at, [&](OpBuilder &in, Value f0, int64_t nRows) {
            emitBlock(in, f0, nRows, p0, n, lastLanes);
          });
        });
  } else {
    forEachRowBlock(start, [&](OpBuilder &at, Value f0, int64_t nRows) {
      forEachColBlock(
          at, [&](OpBuilder &in, Value p0, int64_t n, int64_t lastLanes) {
            emitBlock(in, f0, nRows, p0, n, lastLanes);
          });
    });
  }
  if (phases)
    memref::DeallocOp::create(rewriter, loc, phases);
  if (flatA)
    memref::DeallocOp::create(rewriter, loc, flatA);
  rewriter.eraseOp(op);
  if (tile)
    eraseTile(rewriter, *tile);
  // What the register tile took over: the epilogue, the fill, and then
  // the temporary itself.
  // The temporary, unless chunks keep their partial sums there.
  dlc::codegen::eraseSurroundings(rewriter, around, /*keepTemporary=*/chunked);
}

Value RegisterTileEmitter::dotFromPairs(
    OpBuilder &bb, Value acc, Value u, Value v,
    llvm::DenseMap<Value, std::pair<Value, Value>> &halves) {
  auto shortsType = VectorType::get({lanes * 2}, bb.getI16Type());
  auto split = [&](Value bytes, bool isUnsigned) {
    auto [it, inserted] = halves.try_emplace(bytes);
    if (!inserted)
      return it->second;
    Value shorts = vector::BitCastOp::create(bb, loc, shortsType, bytes);
    auto eight = arith::ConstantOp::create(
        bb, loc, DenseElementsAttr::get(shortsType, bb.getI16IntegerAttr(8)));
    Value even, odd;
    if (isUnsigned) {
      auto low = arith::ConstantOp::create(
          bb, loc,
          DenseElementsAttr::get(shortsType, bb.getI16IntegerAttr(0xff)));
      even = arith::AndIOp::create(bb, loc, shorts, low);
      odd = arith::ShRUIOp::create(bb, loc, shorts, eight);
    } else {
      even = arith::ShRSIOp::create(
          bb, loc, arith::ShLIOp::create(bb, loc, shorts, eight), eight);
      odd = arith::ShRSIOp::create(bb, loc, shorts, eight);
    }
    it->second = {even, odd};
    return it->second;
  };
  auto [ue, uo] = split(u, /*isUnsigned=*/true);
  auto [ve, vo] = split(v, /*isUnsigned=*/false);
  StringAttr name = bb.getStringAttr(int8Dot);
  Value evenSums =
      LLVM::CallIntrinsicOp::create(bb, loc, vecType, name, ValueRange{ue, ve})
          .getResult(0);
  Value oddSums =
      LLVM::CallIntrinsicOp::create(bb, loc, vecType, name, ValueRange{uo, vo})
          .getResult(0);
  return arith::AddIOp::create(
      bb, loc, acc, arith::AddIOp::create(bb, loc, evenSums, oddSums));
}

struct CPURegisterTilePass
    : public dlc::impl::CPURegisterTileBase<CPURegisterTilePass> {
  using Base::Base;

  void runOnOperation() override {
    if (int8DotPairs && int8DotSigned) {
      getOperation().emitError("dlc-cpu-register-tile: int8-dot-pairs "
                               "builds unsigned x signed dot products; "
                               "int8-dot-signed cannot go with it");
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, Contraction>, 4> work;
    getOperation().walk([&](linalg::GenericOp op) {
      // Dot products first: their contractions are integer multiply-adds
      // too.
      std::optional<Contraction> k;
      if (!int8Dot.empty())
        k = matchDot(op, int8DotSigned);
      if (!k)
        k = matchDequant(op);
      if (!k) {
        k = match(op);
        // A depthwise convolution's window as dot products.
        if (k && !int8Dot.empty() && windowDot) {
          Contraction window = *k;
          if (asWindowDot(op, window, std::max<int64_t>(vectorBits / 32, 4),
                          int8DotSigned))
            k = window;
        }
      }
      if (k)
        work.push_back({op, *k});
    });
    dlc::codegen::RegisterTileTarget target;
    target.vectorBits = vectorBits;
    target.vectorRegisters = vectorRegisters;
    target.chunkBytes = chunkBytes;
    target.twoVectorPermute = twoVectorPermute;
    for (auto &[op, k] : work) {
      auto aType = dyn_cast<MemRefType>(op.getDpsInputs()[k.a].getType());
      bool aStatic = aType && aType.hasStaticShape() && aType.getRank() >= 1;
      std::optional<PaddedTile> tile;
      if (aStatic && (k.stride == 2 || k.stride == 1))
        tile = paddedTile(op.getDpsInputs()[k.a], op);
      std::optional<FlatRows> flat;
      std::optional<RowWindow> padRows;
      if (tile) {
        padRows = rowWindow(op, k, *tile, k.a);
      } else if (auto image = paddedTile(op.getDpsInputs()[k.b], op)) {
        // A channels-last convolution's image, broadcast from `b`.
        padRows = rowWindow(op, k, *image, k.b);
      }
      if (tile && k.stride == 1) {
        flat = flatRows(op, k, *tile, std::max<int64_t>(vectorBits / 32, 4));
        if (!flat)
          tile.reset();
      }
      std::optional<RegisterTilePlan> plan = dlc::codegen::planRegisterTile(
          k, flatTrips(op, k, flat), op.getIndexingMapsArray(), target, aStatic,
          tile.has_value());
      if (plan)
        RegisterTileEmitter(op, k, *plan, int8Dot, int8DotPairs, tile, flat,
                            padRows)
            .run();
    }
  }
};

} // namespace

std::optional<RegisterTilePlan> dlc::codegen::planRegisterTile(
    const Contraction &k, ArrayRef<int64_t> trips, ArrayRef<AffineMap> maps,
    const RegisterTileTarget &target, bool aStatic, bool aPadded) {
  if (llvm::any_of(trips, [](int64_t t) { return t == 0; }))
    return std::nullopt;
  RegisterTilePlan plan;
  bool pooling = k.combine != Contraction::Combine::MultiplyAdd;
  plan.lanes = std::max<int64_t>(target.vectorBits / 32, 4);
  // A stride-2 `a` costs two loads and a shuffle per vector and filter
  // tap, and the shuffles compete with the multiply-adds for a port. When
  // the filter is several taps wide and the rows are b's (a convolution
  // with many output channels: each vector of `a` feeds a whole block of
  // rows), its even and odd columns are split once per workgroup instead:
  // every vector is then one load. Depthwise convolutions and pooling
  // windows read each vector of `a` for one row only; for them the split
  // costs more than it saves where one instruction takes the even lanes
  // (AVX-512: MobileNetV2's 3x3 stride-2 depthwise convolution on 112x112
  // 0.53 -> 0.72 ms), and saves more than it costs where that takes two
  // plus a masked load (AVX2 on Zen 1: the same layer 2.02 -> 0.80 ms,
  // ResNet-18's 3x3 stride-2 max pool 1.26 -> 0.62 ms).
  AffineExpr aLast = maps[k.a].getResults().back();
  bool taps = llvm::any_of(
      k.reductions, [&](unsigned r) { return aLast.isFunctionOfDim(r); });
  // When `a` is a padded tile, the split reads the tile's source instead
  // of the kernel copying it into the tile first, and costs no more than
  // that copy did (MobileNetV2's 3x3 stride-2 depthwise convolution at
  // 112x112: see docs/benchmarks.md).
  plan.splitPhases = k.stride == 2 &&
                     (!k.rowsInA || !target.twoVectorPermute || aPadded) &&
                     !k.integer && taps && aStatic;
  plan.vectors = 2;
  // Two vectors per row and the row's broadcast value: 8 rows take 24 of
  // 32 registers (AVX-512, AArch64's NEON), 4 rows 12 of 16.
  int64_t registers = target.vectorRegisters > 0
                          ? target.vectorRegisters
                          : (target.vectorBits >= 512 ? 32 : 16);
  // Block factors (Contraction::blockInner) carry a block's sums beside
  // the accumulators: half the rows.
  int64_t sets = k.blockInner ? 2 : 1;
  plan.rows =
      k.f ? rowsPerBlock(trips[*k.f], (registers >= 32 ? 8 : 4) / sets) : 1;
  // Rows of `a` (depthwise convolutions, pooling windows) load a vector
  // for every accumulator and step, and those loads need registers too:
  // a quarter of the register file in accumulators, half that where a
  // stride-2 vector is two loads and a permute. Measured on Zen 4 (a model
  // of MobileNetV2's two 3x3 depthwise convolutions at 112x112, 96
  // channels: stride 1 from 8 x 2 to 4 x 2 accumulators 0.80 -> 0.69 ms,
  // stride 2 from 8 x 2 to 4 x 1 0.91 -> 0.81 ms) and with the AVX2 target
  // there (4 x 2 -> 4 x 1: 4% faster); the spills of 16 accumulators
  // were the difference.
  if (k.rowsInA && k.f && !k.integer && !k.dot && !k.dequant && !k.window) {
    int64_t budget = registers / 4;
    if (k.stride == 2 && !plan.splitPhases)
      budget /= 2;
    plan.vectors = budget >= 8 ? 2 : 1;
    plan.rows =
        rowsPerBlock(trips[*k.f], std::max<int64_t>(budget / plan.vectors, 1));
  }
  plan.block = plan.lanes * plan.vectors;
  plan.fullCols = trips[k.p] / plan.block * plan.block;
  plan.fullRows = k.f ? trips[*k.f] / plan.rows * plan.rows : 1;
  // A row of a few vectors that blocks of two would end in a block of
  // one (80 columns: 2 + 2 + 1 vectors of 16) is one block of all of them
  // with fewer rows instead (5 x 4 accumulators): the narrow block's
  // multiply-adds wait on each other and need a broadcast each.
  int64_t rowVectors = (trips[k.p] + plan.lanes - 1) / plan.lanes;
  int64_t restVectors =
      (trips[k.p] - plan.fullCols + plan.lanes - 1) / plan.lanes;
  // Measured on AVX-512 (Zen 5: CRNN's 80-column convolutions 0.89 ->
  // 0.85 ms, YOLOv8n 11.9 -> 11.4 ms); narrower vectors and smaller
  // register files keep blocks of two until measured.
  int64_t accumulators = 24;
  bool plainFloat = !pooling && !k.integer && !k.dot && !k.dequant &&
                    !k.window && !k.rowsInA && k.f;
  if (plainFloat && registers >= 32 && plan.lanes >= 16 && restVectors > 0 &&
      restVectors < plan.vectors && rowVectors > plan.vectors &&
      rowVectors <= 5 && trips[*k.f] >= accumulators / rowVectors) {
    plan.vectors = rowVectors;
    plan.rows = rowsPerBlock(trips[*k.f], accumulators / rowVectors);
    plan.block = plan.lanes * plan.vectors;
    plan.fullCols = trips[k.p] / plan.block * plan.block;
    plan.fullRows = trips[*k.f] / plan.rows * plan.rows;
  }
  // One row (a matrix-vector product: batch-1 dense layers, a decoder's
  // projections) has nothing to broadcast into several rows: two vectors
  // would be two accumulators, each multiply-add waiting on the last, and
  // a row read in 128-byte pieces. Up to 8 vectors instead (half the
  // register file where that is less: a Cortex-M FPU's 8), as evenly as
  // the row divides (x86 takes the loaded operand of a multiply-add from
  // memory, so 16 registers hold 8 accumulators too): a [256 x 1024]
  // weight at batch 1, 40 -> 20 us on one Zen 4 core.
  int64_t mostVectors = std::min<int64_t>(8, registers / 2 / sets);
  if (plan.rows == 1 && !pooling && !k.rowsInA && !k.integer && !k.dot &&
      !k.window && rowVectors > plan.vectors && mostVectors > plan.vectors) {
    int64_t blocks = (rowVectors + mostVectors - 1) / mostVectors;
    plan.vectors = (rowVectors + blocks - 1) / blocks;
    plan.block = plan.lanes * plan.vectors;
    plan.fullCols = trips[k.p] / plan.block * plan.block;
  }

  // The outermost reduction loop runs in chunks when a block's operands
  // over all reduction steps would not stay in cache: every block then
  // reuses a chunk's operands from cache (a filter's slice, read again
  // by each block of pixels, would otherwise come from memory each
  // time), at the price of loading and storing its accumulators once per
  // chunk.
  unsigned r0 = k.reductions.front();
  int64_t stepBytes =
      (k.rowsInA ? plan.rows * plan.block + 1 : plan.block + plan.rows) * 4;
  for (unsigned r : k.reductions)
    if (r != r0)
      stepBytes *= trips[r];
  plan.chunk = trips[r0];
  if (trips[r0] * stepBytes > target.chunkBytes) {
    int64_t fit = std::max<int64_t>(target.chunkBytes / stepBytes, 1);
    while (trips[r0] % fit != 0)
      --fit;
    plan.chunk = fit;
  }

  // Column blocks innermost keep a block of b's rows in cache while the
  // columns stream past; outermost keep a column slice of `a` (a
  // filter's, when it uses neither outer nor row loops) in cache while
  // all rows stream past. Whichever reads fewer bytes in all.
  unsigned numLoops = trips.size();
  auto volume = [&](AffineMap map) {
    int64_t v = 1;
    for (unsigned d = 0; d < numLoops; ++d)
      if (uses(map, d))
        v *= trips[d];
    return v;
  };
  bool aIndependent = !pooling && llvm::none_of(k.outer, [&](unsigned d) {
    return uses(maps[k.a], d);
  });
  int64_t rowBlocks = 1;
  for (unsigned d : k.outer)
    rowBlocks *= trips[d];
  if (k.f)
    rowBlocks *= (trips[*k.f] + plan.rows - 1) / plan.rows;
  int64_t colBlocks = (trips[k.p] + plan.block - 1) / plan.block;
  plan.columnsOuter =
      aIndependent && volume(maps[k.a]) + volume(maps[k.b]) * colBlocks <
                          volume(maps[k.b]) + volume(maps[k.a]) * rowBlocks;

  return plan;
}
