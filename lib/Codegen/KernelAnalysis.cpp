//===- KernelAnalysis.cpp - what several kernel passes ask of a kernel ----===//

#include "KernelAnalysis.h"

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

} // namespace dlc::codegen
