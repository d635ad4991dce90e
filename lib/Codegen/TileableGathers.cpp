//===- TileableGathers.cpp - the dlc-tileable-gathers pass ----------------===//
//
// Tiling slices an op's operands by the indexing maps of the tile's first
// index. Some ops of a kernel cannot be sliced that way: inputs read
// through divisions or negative strides (nearest upsampling, reversed
// slices), and on GPUs pads, concats and the slices a kernel returns. This
// pass rewrites them as gathers, elementwise generics that read with
// tensor.extract at absolute indices, which tile and fuse like any
// elementwise op. dlc-tile-and-distribute runs after it.
//
//===----------------------------------------------------------------------===//

#include "KernelAnalysis.h"

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dlc {
#define GEN_PASS_DEF_TILEABLEGATHERS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Whether tiling computes `map`'s operand slices wrongly: tiling offsets
/// an operand by the map of the tile's first index and keeps the map for
/// the tile, which is only right when map(a + b) = map(a) + map(b) -
/// map(0). Divisions (nearest upsampling) and negative strides (reversed
/// slices) break that.
bool tilesWrongly(AffineMap map) {
  bool wrong = false;
  for (AffineExpr e : map.getResults())
    e.walk([&](AffineExpr sub) {
      switch (sub.getKind()) {
      case AffineExprKind::FloorDiv:
      case AffineExprKind::CeilDiv:
      case AffineExprKind::Mod:
        wrong = true;
        break;
      case AffineExprKind::Mul:
        if (auto c = dyn_cast<AffineConstantExpr>(
                cast<AffineBinaryOpExpr>(sub).getRHS()))
          wrong |= c.getValue() < 0;
        break;
      default:
        break;
      }
    });
  return wrong;
}

/// Turns the inputs of `op` that tilesWrongly into gathers: the body reads
/// them with tensor.extract at the map applied to the loop indices, which
/// tiling keeps absolute. `keep` is not gathered: a channels-last
/// convolution's result, read as (c floordiv B, c mod B), tiles right in
/// tiles of whole blocks, which the CPU plan keeps to.
void inputsToGathers(IRRewriter &rewriter, linalg::GenericOp op, Value keep) {
  SmallVector<unsigned> gathered;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<RankedTensorType>(input->get().getType()) &&
        (!keep || input->get() != keep) &&
        tilesWrongly(op.getMatchingIndexingMap(input)))
      gathered.push_back(input->getOperandNumber());
  if (gathered.empty())
    return;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!llvm::is_contained(gathered, input->getOperandNumber())) {
      inputs.push_back(input->get());
      maps.push_back(op.getMatchingIndexingMap(input));
    }
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto generic = linalg::GenericOp::create(rewriter, loc, op->getResultTypes(),
                                           inputs, op.getDpsInits(), maps,
                                           op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                              generic.getRegion().end());
  Block &body = generic.getRegion().front();
  rewriter.setInsertionPointToStart(&body);
  unsigned numLoops = op.getNumLoops();
  SmallVector<Value> indices;
  for (unsigned d = 0; d < numLoops; ++d)
    indices.push_back(linalg::IndexOp::create(rewriter, loc, d));
  for (unsigned n : llvm::reverse(gathered)) {
    OpOperand &operand = op->getOpOperand(n);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> at;
    for (AffineExpr e : map.getResults())
      at.push_back(affine::AffineApplyOp::create(
          rewriter, loc, AffineMap::get(numLoops, 0, e), indices));
    Value v = tensor::ExtractOp::create(rewriter, loc, operand.get(), at);
    body.getArgument(n).replaceAllUsesWith(v);
    body.eraseArgument(n);
  }
  rewriter.replaceOp(op, generic->getResults());
}

/// An elementwise linalg.generic over `type`'s shape, reading `inputs`
/// (identity maps) and whatever `body` extracts at linalg.index: the form
/// every gather below takes.
Value createGather(
    IRRewriter &rewriter, Location loc, RankedTensorType type,
    ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              rewriter.getMultiDimIdentityMap(rank));
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, inputs, ValueRange{empty}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, args));
      });
  return generic.getResult(0);
}

/// Rewrites a tensor.pad as an elementwise gather: each output element
/// reads the source at its index minus the low padding when that is in
/// bounds and takes the padding value otherwise. Tiling a tensor.pad
/// produces an scf.if that yields buffers, which GPU code cannot express;
/// the gather tiles and fuses like any elementwise op.
LogicalResult padToGather(IRRewriter &rewriter, tensor::PadOp pad) {
  auto type = dyn_cast<RankedTensorType>(pad.getResultType());
  auto srcType = dyn_cast<RankedTensorType>(pad.getSourceType());
  if (!type || !srcType || !type.hasStaticShape() || !srcType.hasStaticShape())
    return failure();
  // The padding value may be computed in the pad's body (an element of an
  // input), but not from the index.
  Block &body = pad.getRegion().front();
  if (llvm::any_of(body.getArguments(),
                   [](BlockArgument a) { return !a.use_empty(); }))
    return failure();
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(pad);
  IRMapping cloned;
  for (Operation &op : body.without_terminator())
    rewriter.clone(op, cloned);
  Value padValue = cloned.lookupOrDefault(
      cast<tensor::YieldOp>(body.getTerminator()).getValue());
  SmallVector<OpFoldResult> low = pad.getMixedLowPad();
  int64_t rank = type.getRank();
  Value source = pad.getSource();
  Value gather = createGather(
      rewriter, loc, type, {}, [&](OpBuilder &b, Location l, ValueRange) {
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value inBounds = arith::ConstantIntOp::create(b, l, 1, 1);
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          Value lo = getValueOrCreateConstantIndexOp(b, l, low[d]);
          Value at = arith::SubIOp::create(b, l, i, lo);
          Value size =
              arith::ConstantIndexOp::create(b, l, srcType.getDimSize(d));
          Value ge =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, at, zero);
          Value lt =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, at, size);
          inBounds = arith::AndIOp::create(b, l, inBounds,
                                           arith::AndIOp::create(b, l, ge, lt));
          indices.push_back(at);
        }
        for (Value &i : indices)
          i = arith::SelectOp::create(b, l, inBounds, i, zero);
        Value v = tensor::ExtractOp::create(b, l, source, indices);
        return arith::SelectOp::create(b, l, inBounds, v, padValue).getResult();
      });
  rewriter.replaceOp(pad, gather);
  return success();
}

/// Rewrites a tensor.concat as an elementwise gather: each output element
/// reads every input at its index clamped into that input and keeps the one
/// whose range along the concatenated dim holds it. A concat is not
/// tileable; as a gather it spreads over threads like any elementwise op
/// (one GPU thread copying a whole tensor is slow, and lavapipe stops long
/// single invocations).
LogicalResult concatToGather(IRRewriter &rewriter, tensor::ConcatOp concat) {
  auto type = dyn_cast<RankedTensorType>(concat.getResultType());
  if (!type || !type.hasStaticShape())
    return failure();
  SmallVector<int64_t> begins;
  int64_t dim = concat.getDim(), at = 0;
  for (Value input : concat.getInputs()) {
    auto t = dyn_cast<RankedTensorType>(input.getType());
    if (!t || !t.hasStaticShape())
      return failure();
    begins.push_back(at);
    at += t.getDimSize(dim);
  }
  Location loc = concat.getLoc();
  rewriter.setInsertionPoint(concat);
  int64_t rank = type.getRank();
  Value gather = createGather(
      rewriter, loc, type, {}, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(b, l, d));
        Value i = indices[dim];
        Value result;
        for (auto [k, input] : llvm::enumerate(concat.getInputs())) {
          auto t = cast<RankedTensorType>(input.getType());
          if (t.getDimSize(dim) == 0)
            continue;
          // Index into this input, clamped into [0, size).
          Value begin = arith::ConstantIndexOp::create(b, l, begins[k]);
          Value last =
              arith::ConstantIndexOp::create(b, l, t.getDimSize(dim) - 1);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value local = arith::SubIOp::create(b, l, i, begin);
          local = arith::MaxSIOp::create(b, l, local, zero);
          local = arith::MinSIOp::create(b, l, local, last);
          SmallVector<Value> at = indices;
          at[dim] = local;
          Value v = tensor::ExtractOp::create(b, l, input, at);
          if (!result) {
            result = v;
            continue;
          }
          Value inside =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, begin);
          result = arith::SelectOp::create(b, l, inside, v, result);
        }
        return result;
      });
  rewriter.replaceOp(concat, gather);
  return success();
}

/// Rewrites a kernel-result tensor.extract_slice as a gather over its
/// result (slices are not tileable: one GPU thread would copy them whole).
LogicalResult extractSliceToGather(IRRewriter &rewriter,
                                   tensor::ExtractSliceOp slice) {
  RankedTensorType type = slice.getResultType();
  if (!type.hasStaticShape())
    return failure();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  Location loc = slice.getLoc();
  rewriter.setInsertionPoint(slice);
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> strides = slice.getMixedStrides();
  Value gather = createGather(
      rewriter, loc, type, {}, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> at;
        int64_t r = 0;
        for (unsigned d = 0; d < offsets.size(); ++d) {
          Value offset = getValueOrCreateConstantIndexOp(b, l, offsets[d]);
          if (dropped.test(d)) {
            at.push_back(offset);
            continue;
          }
          Value i = linalg::IndexOp::create(b, l, r++);
          Value stride = getValueOrCreateConstantIndexOp(b, l, strides[d]);
          at.push_back(arith::AddIOp::create(
              b, l, offset, arith::MulIOp::create(b, l, i, stride)));
        }
        return tensor::ExtractOp::create(b, l, slice.getSource(), at)
            .getResult();
      });
  rewriter.replaceOp(slice, gather);
  return success();
}

/// Rewrites a kernel-result tensor.insert_slice as a gather over the
/// destination: elements in the slice's window read the source, the others
/// the destination (which stays a tiled operand).
LogicalResult insertSliceToGather(IRRewriter &rewriter,
                                  tensor::InsertSliceOp slice) {
  RankedTensorType type = slice.getDestType();
  RankedTensorType sourceType = slice.getSourceType();
  if (!type.hasStaticShape() || !sourceType.hasStaticShape())
    return failure();
  std::optional<llvm::SmallDenseSet<unsigned>> dropped =
      computeRankReductionMask(slice.getStaticSizes(), sourceType.getShape());
  if (!dropped)
    return failure();
  Location loc = slice.getLoc();
  rewriter.setInsertionPoint(slice);
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> strides = slice.getMixedStrides();
  SmallVector<int64_t> sizes(slice.getStaticSizes());
  int64_t rank = type.getRank();
  Value gather = createGather(
      rewriter, loc, type, {slice.getDest()},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          Value offset = getValueOrCreateConstantIndexOp(b, l, offsets[d]);
          Value stride = getValueOrCreateConstantIndexOp(b, l, strides[d]);
          Value rel = arith::SubIOp::create(b, l, i, offset);
          Value q = arith::DivSIOp::create(b, l, rel, stride);
          Value ok = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, rel, zero),
              arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::slt, q,
                  arith::ConstantIndexOp::create(b, l, sizes[d])));
          ok = arith::AndIOp::create(
              b, l, ok,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                    arith::RemSIOp::create(b, l, rel, stride),
                                    zero));
          inside = arith::AndIOp::create(b, l, inside, ok);
          if (!dropped->contains(d))
            at.push_back(q);
        }
        for (Value &v : at)
          v = arith::SelectOp::create(b, l, inside, v, zero);
        Value v = tensor::ExtractOp::create(b, l, slice.getSource(), at);
        return arith::SelectOp::create(b, l, inside, v, args[0]).getResult();
      });
  rewriter.replaceOp(slice, gather);
  return success();
}

/// A padding value computed in a pad's body from outside it (a zero point
/// read from a rank-0 input) moves before the pad: upstream tiling and
/// vectorization take a pad whose value is defined above it, like a
/// constant one.
void hoistPadValue(tensor::PadOp pad) {
  Block &body = pad.getRegion().front();
  if (llvm::any_of(body.getArguments(),
                   [](BlockArgument a) { return !a.use_empty(); }) ||
      !llvm::all_of(body.without_terminator(),
                    [](Operation &op) { return isPure(&op); }))
    return;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    op.moveBefore(pad);
}

struct TileableGathersPass
    : public dlc::impl::TileableGathersBase<TileableGathersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(dlc::kKernelAttr) || kernel.isExternal())
      return;
    IRRewriter rewriter(kernel.getContext());
    // A channels-last convolution's result stays a tiled operand.
    Value keep;
    if (linalg::LinalgOp root = dlc::codegen::resultOp(kernel))
      if (auto channels = dlc::codegen::channelsLastLoop(kernel, root))
        keep = channels->result;
    SmallVector<linalg::GenericOp> generics;
    kernel.walk([&](linalg::GenericOp g) { generics.push_back(g); });
    for (linalg::GenericOp g : generics)
      inputsToGathers(rewriter, g, keep);
    kernel.walk(hoistPadValue);
    if (!copies)
      return;
    SmallVector<tensor::PadOp> pads;
    kernel.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      (void)padToGather(rewriter, pad);
    SmallVector<tensor::ConcatOp> concats;
    kernel.walk([&](tensor::ConcatOp c) { concats.push_back(c); });
    for (tensor::ConcatOp c : concats)
      (void)concatToGather(rewriter, c);
    // Slices that are the kernel's result.
    auto result =
        cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
    for (Value v : result.getOperands()) {
      if (auto e = v.getDefiningOp<tensor::ExtractSliceOp>())
        (void)extractSliceToGather(rewriter, e);
      else if (auto i = v.getDefiningOp<tensor::InsertSliceOp>())
        (void)insertSliceToGather(rewriter, i);
    }
  }
};

} // namespace
