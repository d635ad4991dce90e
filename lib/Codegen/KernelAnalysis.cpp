//===- KernelAnalysis.cpp - what several kernel passes ask of a kernel ----===//

#include "KernelAnalysis.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace dlc::codegen {

std::optional<int64_t> linearCoefficient(AffineExpr e, unsigned d) {
  if (auto dim = dyn_cast<AffineDimExpr>(e))
    return dim.getPosition() == d ? 1 : 0;
  if (isa<AffineConstantExpr, AffineSymbolExpr>(e))
    return 0;
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = linearCoefficient(bin.getLHS(), d);
  std::optional<int64_t> r = linearCoefficient(bin.getRHS(), d);
  if (!l || !r)
    return std::nullopt;
  if (bin.getKind() == AffineExprKind::Add)
    return *l + *r;
  if (bin.getKind() == AffineExprKind::Mul)
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return *l * c.getValue();
  if (*l == 0 && *r == 0)
    return 0;
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> loopRanges(linalg::LinalgOp op) {
  if (!op.getShapesToLoopsMap())
    return std::nullopt;
  return op.getStaticLoopRanges();
}

std::optional<ChannelLoop> channelsLastLoop(func::FuncOp kernel,
                                            linalg::LinalgOp root) {
  std::optional<ChannelLoop> found;
  kernel.walk([&](linalg::GenericOp conv) {
    if (conv.getNumDpsInputs() != 2 || conv.getNumDpsInits() != 1 ||
        conv.getNumReductionLoops() == 0)
      return;
    AffineMap out = conv.getMatchingIndexingMap(conv.getDpsInitOperand(0));
    AffineMap in = conv.getMatchingIndexingMap(conv.getDpsInputOperand(0));
    AffineMap filter = conv.getMatchingIndexingMap(conv.getDpsInputOperand(1));
    if (out.getNumResults() == 0 || filter.getNumResults() == 0)
      return;
    auto channel = dyn_cast<AffineDimExpr>(out.getResults().back());
    // The filter's innermost dim, or the one before it when the innermost
    // is a reduction that is the input's innermost too (4 input channels
    // adjacent for dot products, dlc-cpu-int8-conv).
    // Such a product of a matrix with a constant one (dlc-cpu-int8-conv's
    // integer matrix products) is split the same way.
    AffineExpr filterChannel = filter.getResults().back();
    bool dotLayout =
        filter.getNumResults() >= 2 && in.getNumResults() >= 1 &&
        filterChannel == in.getResults().back() &&
        isa<AffineDimExpr>(filterChannel) &&
        conv.getIteratorTypesArray()[cast<AffineDimExpr>(filterChannel)
                                         .getPosition()] ==
            utils::IteratorType::reduction;
    if (dotLayout)
      filterChannel = filter.getResult(filter.getNumResults() - 2);
    if (!dotLayout && !linalg::isaConvolutionOpInterface(conv))
      return;
    if (!channel || filterChannel != channel ||
        llvm::any_of(in.getResults(), [&](AffineExpr e) {
          return e.isFunctionOfDim(channel.getPosition());
        }))
      return;
    std::optional<SmallVector<int64_t>> ranges = loopRanges(conv);
    if (!ranges)
      return;
    int64_t block = (*ranges)[channel.getPosition()];
    if (conv.getOperation() == root.getOperation()) {
      found = ChannelLoop{channel.getPosition(), block, Value()};
      return;
    }
    unsigned last = out.getNumResults() - 1;
    for (OpOperand *operand : root.getDpsInputOperands()) {
      if (operand->get() != conv->getResult(0))
        continue;
      AffineExpr e = root.getMatchingIndexingMap(operand).getResult(last);
      if (auto bin = dyn_cast<AffineBinaryOpExpr>(e);
          bin && bin.getKind() == AffineExprKind::Mod)
        e = bin.getLHS();
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        found = ChannelLoop{dim.getPosition(), block, conv->getResult(0)};
    }
  });
  return found;
}

linalg::LinalgOp resultOp(func::FuncOp kernel) {
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  if (ret.getNumOperands() == 0)
    return nullptr;
  return ret.getOperand(0).getDefiningOp<linalg::LinalgOp>();
}

namespace {

/// Whether `op` (all loops parallel) writes every element of its only
/// output: each result of the output's map is a distinct loop, or the
/// constant 0 on a dim of extent 1; and its body does not read it.
bool writesAll(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.payloadUsesValueFromOperand(init))
    return false;
  auto type = dyn_cast<MemRefType>(init->get().getType());
  if (!type)
    return false;
  AffineMap map = op.getMatchingIndexingMap(init);
  llvm::SmallBitVector seen(op.getNumLoops());
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || type.getDimSize(i) != 1)
      return false;
  }
  return true;
}

/// The buffer whose elements all of `view` covers: `view` itself or a
/// reshape of it.
Value wholeBuffer(Value view) {
  Operation *def = view.getDefiningOp();
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def))
    return collapse.getSrc();
  if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
    return expand.getSrc();
  return view;
}

} // namespace

Value fillValue(linalg::LinalgOp op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation()))
    return fill.value();
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !writesAll(op))
    return {};
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 1)
    return {};
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != &body || arg.getArgNumber() >= op.getNumDpsInputs())
      return {};
    Value input = op.getDpsInputs()[arg.getArgNumber()];
    return input.getType().isIntOrIndexOrFloat() ? input : Value();
  }
  return yielded.getParentRegion()->isAncestor(&generic.getRegion()) ? yielded
                                                                     : Value();
}

namespace {

/// The ops that use `alloc`, directly or through one view, with the value
/// each uses, in block order; nothing when its shape is not static or a
/// use is in another block.
std::optional<SmallVector<std::pair<Operation *, Value>>>
usesInOrder(memref::AllocOp alloc) {
  auto type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  SmallVector<std::pair<Operation *, Value>> users;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::SubViewOp>(
            user)) {
      for (OpOperand &viewUse : user->getResult(0).getUses())
        users.push_back({viewUse.getOwner(), user->getResult(0)});
      continue;
    }
    users.push_back({user, alloc.getResult()});
  }
  Block *block = alloc->getBlock();
  for (auto &[user, through] : users)
    if (user->getBlock() != block)
      return std::nullopt;
  llvm::sort(users, [](auto &x, auto &y) {
    return x.first->isBeforeInBlock(y.first);
  });
  return users;
}

/// The value `use` (the first of `alloc`'s) fills all of it with, if it
/// does.
Value fillsWhole(memref::AllocOp alloc, std::pair<Operation *, Value> use) {
  auto fill = dyn_cast<linalg::LinalgOp>(use.first);
  if (!fill || !fill.hasPureBufferSemantics() || fill.getNumDpsInits() != 1 ||
      fill.getDpsInitOperand(0)->get() != use.second ||
      wholeBuffer(use.second) != alloc.getResult())
    return {};
  return fillValue(fill);
}

} // namespace

Value filledThenYielded(memref::AllocOp alloc) {
  std::optional<SmallVector<std::pair<Operation *, Value>>> users =
      usesInOrder(alloc);
  if (!users || users->size() != 2 ||
      (*users)[1].first != alloc->getBlock()->getTerminator())
    return {};
  return fillsWhole(alloc, (*users)[0]);
}

std::optional<FilledCopy> filledCopy(memref::AllocOp alloc) {
  std::optional<SmallVector<std::pair<Operation *, Value>>> users =
      usesInOrder(alloc);
  if (!users || users->size() < 2)
    return std::nullopt;
  FilledCopy h;
  // First the fill, of the whole buffer.
  h.fill = dyn_cast<linalg::LinalgOp>((*users)[0].first);
  h.value = fillsWhole(alloc, (*users)[0]);
  if (!h.value)
    return std::nullopt;
  // Then an op that writes one subview whole and reads nothing of the
  // buffer.
  auto copy = dyn_cast<linalg::LinalgOp>((*users)[1].first);
  auto middle = (*users)[1].second.getDefiningOp<memref::SubViewOp>();
  if (!copy || !middle || !copy.hasPureBufferSemantics() || !writesAll(copy) ||
      copy.getDpsInitOperand(0)->get() != middle.getResult() ||
      middle.getSourceType().getRank() != middle.getType().getRank() ||
      !llvm::all_of(middle.getMixedStrides(),
                    [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
    return std::nullopt;
  for (auto &[user, through] : llvm::drop_begin(*users, 2)) {
    if (user == copy)
      return std::nullopt; // it reads the buffer too
    h.readers.push_back(user);
  }
  h.middle = middle;
  h.copy = copy;
  return h;
}

} // namespace dlc::codegen
