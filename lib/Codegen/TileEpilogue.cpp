//===- TileEpilogue.cpp - what surrounds a register-tiled contraction -----===//

#include "TileEpilogue.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace dlc::codegen;

namespace {

/// When `to` collapses `from` (each of its dims the product of a run of
/// `from`'s, in order; unit dims of `from` join a neighbouring run), the
/// run of each dim of `to` as [begin, end) in `from`'s dims.
std::optional<SmallVector<std::pair<unsigned, unsigned>>>
collapseGroups(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<std::pair<unsigned, unsigned>> groups;
  unsigned i = 0;
  for (int64_t size : to) {
    unsigned begin = i;
    int64_t product = 1;
    while (i < from.size() && (i == begin || product < size) &&
           product * from[i] <= size) {
      product *= from[i];
      ++i;
    }
    if (product != size || i == begin)
      return std::nullopt;
    groups.push_back({begin, i});
  }
  // Trailing unit dims of `from` join the last run.
  for (; i < from.size(); ++i) {
    if (from[i] != 1 || groups.empty())
      return std::nullopt;
    groups.back().second = i + 1;
  }
  return groups;
}

/// The alloc or alloca behind `v` (directly or through one reshape).
Operation *allocOf(Value v) {
  if (auto collapse = v.getDefiningOp<memref::CollapseShapeOp>())
    v = collapse.getSrc();
  else if (auto expand = v.getDefiningOp<memref::ExpandShapeOp>())
    v = expand.getSrc();
  Operation *def = v.getDefiningOp();
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def) ? def
                                                                 : nullptr;
}

/// Whether a vector along the last dim of whole-buffer view `b` of a
/// contiguous buffer stays within the last dim of view `a` of it: `a`'s
/// last dim is a whole number of `b`'s rows.
bool rowsNest(Value a, Value b) {
  auto x = cast<MemRefType>(a.getType()), y = cast<MemRefType>(b.getType());
  return x.hasStaticShape() && y.hasStaticShape() &&
         x.getLayout().isIdentity() && y.getLayout().isIdentity() &&
         x.getRank() > 0 && y.getRank() > 0 &&
         x.getShape().back() % y.getShape().back() == 0;
}

/// The constant a fill-like op writes into its whole output, if it is one:
/// linalg.fill, or a generic yielding a scalar input or a value from
/// outside.
Value filledValue(Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.value();
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return Value();
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  if (generic.getBody()->getOperations().size() != 1 ||
      yield.getNumOperands() != 1)
    return Value();
  Value y = yield.getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(y)) {
    if (arg.getOwner() != generic.getBody() ||
        arg.getArgNumber() >= generic.getNumDpsInputs())
      return Value();
    Value in = generic.getDpsInputs()[arg.getArgNumber()];
    return isa<ShapedType>(in.getType()) ? Value() : in;
  }
  return generic.getRegion().isAncestor(y.getParentRegion()) ? Value() : y;
}

/// The loop of `epilogue` that walks the innermost dim of its output, when
/// the epilogue can be computed on SIMD vectors along it from the
/// accumulators: it reads the accumulators (its input `input`) with the
/// same map as it writes its output, each loop once as a plain index and
/// any other index a constant 0 (a unit dim); every other operand is a
/// scalar, or a buffer read either without that loop (broadcast) or with
/// it as its unit-stride innermost index (vector load); its body is
/// scalar arith ops and math functions that have vector code.
std::optional<unsigned> vectorizableEpilogue(linalg::GenericOp epilogue,
                                             unsigned input) {
  if (epilogue.getNumDpsInits() != 1 || epilogue.getNumReductionLoops() != 0 ||
      epilogue.getNumLoops() == 0 || !epilogue.hasPureBufferSemantics())
    return std::nullopt;
  OpOperand *init = epilogue.getDpsInitOperand(0);
  AffineMap outMap = epilogue.getMatchingIndexingMap(init);
  if (outMap !=
      epilogue.getMatchingIndexingMap(epilogue.getDpsInputOperand(input)))
    return std::nullopt;
  llvm::SmallBitVector seen(epilogue.getNumLoops());
  for (AffineExpr e : outMap.getResults()) {
    if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || seen.test(dim.getPosition()))
      return std::nullopt;
    seen.set(dim.getPosition());
  }
  auto lastDim = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!seen.all() || !lastDim)
    return std::nullopt;
  unsigned last = lastDim.getPosition();
  auto unitStrideLast = [&](OpOperand *operand) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = epilogue.getMatchingIndexingMap(operand);
    if (!type || !llvm::all_of(map.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return false;
    bool usesLast = llvm::any_of(map.getResults(), [&](AffineExpr e) {
      return e.isFunctionOfDim(last);
    });
    if (!usesLast)
      return true;
    SmallVector<int64_t> strides;
    int64_t offset;
    return map.getResults().back() == lastDim &&
           succeeded(type.getStridesAndOffset(strides, offset)) &&
           strides.back() == 1;
  };
  if (!unitStrideLast(init) ||
      !epilogue.getMatchingBlockArgument(init).use_empty())
    return std::nullopt;
  for (OpOperand *operand : epilogue.getDpsInputOperands())
    if (isa<ShapedType>(operand->get().getType()) && !unitStrideLast(operand))
      return std::nullopt;
  for (Operation &op : epilogue.getBody()->without_terminator()) {
    // Arithmetic, and the math functions that become vector code (instructions,
    // or dlc-legalize-math's polynomials), not calls.
    bool vectorMath =
        isa<math::AbsFOp, math::CeilOp, math::FloorOp, math::SqrtOp,
            math::RsqrtOp, math::ExpOp, math::Exp2Op, math::ExpM1Op,
            math::LogOp, math::Log1pOp, math::Log2Op, math::TanhOp, math::ErfOp,
            math::FmaOp, math::RoundEvenOp>(op);
    if ((op.getDialect()->getNamespace() != "arith" && !vectorMath) ||
        !op.hasTrait<OpTrait::Elementwise>() || op.getNumRegions() != 0 ||
        op.getNumResults() != 1 || !op.getResult(0).getType().isIntOrFloat())
      return std::nullopt;
    for (Value v : op.getOperands())
      if (!v.getType().isIntOrFloat())
        return std::nullopt;
  }
  return last;
}

/// The buffer `v` is a view of (through subviews and reshapes).
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
             memref::CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The fill and epilogue of contraction `op` whose output is a temporary,
/// when nothing else touches the temporary.
} // namespace

Surroundings dlc::codegen::surroundingsOf(linalg::GenericOp op) {
  Surroundings s;
  Value out = op.getDpsInitOperand(0)->get();
  Operation *alloc = allocOf(out);
  if (!alloc || alloc->getBlock() != op->getBlock())
    return s;
  SmallVector<Value> aliases = {alloc->getResult(0)};
  for (Operation *user : alloc->getUsers())
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user)) {
      aliases.push_back(user->getResult(0));
      s.views.push_back(user);
    }
  Operation *fill = nullptr;
  linalg::GenericOp epilogue;
  unsigned epilogueInput = 0;
  for (Value alias : aliases) {
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (user == op.getOperation() ||
          isa<memref::DeallocOp, memref::CollapseShapeOp,
              memref::ExpandShapeOp>(user))
        continue;
      if (user->getBlock() != op->getBlock())
        return s;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp)
        return s;
      if (user->isBeforeInBlock(op)) {
        // The first write, of a constant, into the whole temporary.
        if (fill || !linalgOp.isDpsInit(&use) || !filledValue(user))
          return s;
        fill = user;
        continue;
      }
      // The one read after the contraction.
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (epilogue || !generic || !linalgOp.isDpsInput(&use) ||
          !rowsNest(alias, out))
        return s;
      epilogue = generic;
      epilogueInput = use.getOperandNumber();
      s.reshaped = alias.getType() != out.getType();
    }
  }
  s.alloc = alloc;
  if (fill) {
    s.fill = fill;
    s.fillValue = filledValue(fill);
  }
  ArrayRef<int64_t> outShape =
      epilogue
          ? cast<MemRefType>(epilogue.getDpsInputs()[epilogueInput].getType())
                .getShape()
          : ArrayRef<int64_t>();
  // Folded into the contraction, the epilogue writes its output block by
  // block while the contraction still reads: not when it reads that buffer.
  // And the contraction moves down to the epilogue: only past ops without
  // memory effects (views).
  if (epilogue && llvm::any_of(op.getDpsInputs(), [&](Value in) {
        return rootOf(in) == rootOf(epilogue.getDpsInitOperand(0)->get());
      }))
    epilogue = nullptr;
  for (Operation *o = op->getNextNode(); epilogue && o != epilogue;
       o = o->getNextNode())
    if (!isMemoryEffectFree(o))
      epilogue = nullptr;
  if (!epilogue)
    return s;
  std::optional<unsigned> last = vectorizableEpilogue(epilogue, epilogueInput);
  // The epilogue covers exactly the temporary's elements.
  AffineMap map = epilogue.getMatchingIndexingMap(
      epilogue.getDpsInputOperand(epilogueInput));
  SmallVector<int64_t> ranges = epilogue.getStaticLoopRanges();
  bool covers = map.getNumResults() == outShape.size();
  for (auto [e, size] : llvm::zip(map.getResults(), outShape)) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!covers || (dim ? ranges[dim.getPosition()] != size : size != 1))
      covers = false;
  }
  if (last && covers) {
    s.epilogue = epilogue;
    s.epilogueInput = epilogueInput;
    s.epilogueLast = *last;
  }
  return s;
}

SmallVector<Value> dlc::codegen::indicesAt(OpBuilder &b, Location loc,
                                           AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      result.push_back(ivs[dim.getPosition()]);
      continue;
    }
    if (auto cst = dyn_cast<AffineConstantExpr>(e)) {
      result.push_back(arith::ConstantIndexOp::create(b, loc, cst.getValue()));
      continue;
    }
    AffineMap single = AffineMap::get(map.getNumDims(), 0, e);
    result.push_back(affine::AffineApplyOp::create(b, loc, single, ivs));
  }
  return result;
}

bool dlc::codegen::epilogueJoinsDims(const Surroundings &around, Value out,
                                     unsigned dim) {
  if (!around.epilogue || !around.reshaped)
    return false;
  auto from = cast<MemRefType>(out.getType());
  linalg::GenericOp epilogue = around.epilogue;
  auto to =
      cast<MemRefType>(epilogue.getDpsInputs()[around.epilogueInput].getType());
  std::optional<SmallVector<std::pair<unsigned, unsigned>>> groups =
      collapseGroups(from.getShape(), to.getShape());
  return groups && !groups->empty() && groups->back().first <= dim &&
         groups->back().second == from.getRank();
}

void dlc::codegen::storeThroughEpilogue(OpBuilder &bb, Location loc,
                                        const Surroundings &around, Value out,
                                        int64_t lanes, Value acc,
                                        ArrayRef<Value> idx, Value mask) {
  linalg::GenericOp e = around.epilogue;
  unsigned last = around.epilogueLast;
  // The epilogue's loop indices: where its map puts them in `idx`,
  // or, through another reshape of the temporary, in the indices of
  // the same linear offset.
  AffineMap accMap =
      e.getMatchingIndexingMap(e.getDpsInputOperand(around.epilogueInput));
  SmallVector<Value> viewIdx(idx);
  if (around.reshaped) {
    auto from = cast<MemRefType>(out.getType());
    auto to =
        cast<MemRefType>(e.getDpsInputs()[around.epilogueInput].getType());
    if (std::optional<SmallVector<std::pair<unsigned, unsigned>>> groups =
            collapseGroups(from.getShape(), to.getShape())) {
      // A collapse (loop-order merged the epilogue's rows and columns):
      // each view index is its group's indices linearized, with no
      // division to take a linear offset apart again (on every vector
      // stored, for an index the next one only adds to).
      viewIdx.clear();
      for (auto [begin, end] : *groups) {
        ArrayRef<Value> part = ArrayRef<Value>(idx).slice(begin, end - begin);
        viewIdx.push_back(
            part.size() == 1
                ? part.front()
                : Value(affine::AffineLinearizeIndexOp::create(
                      bb, loc, part, from.getShape().slice(begin, end - begin),
                      /*disjoint=*/true)));
      }
    } else {
      Value linear = affine::AffineLinearizeIndexOp::create(
          bb, loc, idx, from.getShape(), /*disjoint=*/true);
      auto split = affine::AffineDelinearizeIndexOp::create(
          bb, loc, linear, to.getShape(), /*hasOuterBound=*/true);
      viewIdx.assign(split.getResults().begin(), split.getResults().end());
    }
  }
  SmallVector<Value> loopIdx(e.getNumLoops());
  for (auto [r, x] : llvm::enumerate(accMap.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(x))
      loopIdx[dim.getPosition()] = viewIdx[r];
  auto vectorOf = [&](Type t) { return VectorType::get({lanes}, t); };
  IRMapping map;
  auto mapped = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v))
      return m;
    // A scalar from outside the epilogue.
    return vector::BroadcastOp::create(bb, loc, vectorOf(v.getType()), v);
  };
  for (OpOperand *in : e.getDpsInputOperands()) {
    BlockArgument arg = e.getMatchingBlockArgument(in);
    Value v = in->get();
    if (in->getOperandNumber() == around.epilogueInput) {
      map.map(arg, acc);
      continue;
    }
    if (!isa<MemRefType>(v.getType())) {
      map.map(arg, mapped(v));
      continue;
    }
    AffineMap m = e.getMatchingIndexingMap(in);
    SmallVector<Value> at = indicesAt(bb, loc, m, loopIdx);
    Type elem = arg.getType();
    if (!llvm::any_of(m.getResults(),
                      [&](AffineExpr x) { return x.isFunctionOfDim(last); })) {
      Value scalar = memref::LoadOp::create(bb, loc, v, at);
      map.map(arg,
              vector::BroadcastOp::create(bb, loc, vectorOf(elem), scalar));
    } else if (mask) {
      Value pad = arith::ConstantOp::create(
          bb, loc, cast<TypedAttr>(bb.getZeroAttr(vectorOf(elem))));
      map.map(arg, vector::MaskedLoadOp::create(bb, loc, vectorOf(elem), v, at,
                                                mask, pad));
    } else {
      map.map(arg, vector::LoadOp::create(bb, loc, vectorOf(elem), v, at));
    }
  }
  for (Operation &o : e.getBody()->without_terminator()) {
    for (Value operand : o.getOperands())
      map.map(operand, mapped(operand));
    Operation *c = bb.clone(o, map);
    c->getResult(0).setType(vectorOf(c->getResult(0).getType()));
  }
  Value result = mapped(e.getBody()->getTerminator()->getOperand(0));
  Value dest = e.getDpsInitOperand(0)->get();
  SmallVector<Value> at = indicesAt(bb, loc, accMap, loopIdx);
  if (mask)
    vector::MaskedStoreOp::create(bb, loc, dest, at, mask, result);
  else
    vector::StoreOp::create(bb, loc, result, dest, at);
}

void dlc::codegen::eraseSurroundings(RewriterBase &rewriter,
                                     const Surroundings &around,
                                     bool keepTemporary) {
  if (around.epilogue)
    rewriter.eraseOp(around.epilogue);
  if (around.fill)
    rewriter.eraseOp(around.fill);
  if (!around.epilogue || !around.fill || keepTemporary)
    return;
  for (Operation *user : llvm::make_early_inc_range(around.alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      rewriter.eraseOp(user);
  for (Operation *view : around.views)
    if (view->use_empty())
      rewriter.eraseOp(view);
  if (around.alloc->use_empty())
    rewriter.eraseOp(around.alloc);
}
