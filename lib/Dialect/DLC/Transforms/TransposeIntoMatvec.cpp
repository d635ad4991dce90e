//===- TransposeIntoMatvec.cpp - the dlc-transpose-into-matvec pass -------===//
//
// A decoder's attention step multiplies one query row by the transposed
// key cache: scores = q [1 x d] x K^T [d x n], with K stored [n x d]. ONNX
// writes the transpose as its own node, and dlc made it a kernel of its
// own: a pass over the whole cache (4 heads x 128 x 64: 17 us of a decode
// step's ~450, per layer) before the product reads it again. With one
// output row, the product can read K as it is stored instead: each output
// is then a dot product along a contiguous row of K, the stream a
// matrix-vector product wants (dlc-constant-columns-last leaves the same
// form for large weights). This pass drops a transpose that only feeds
// such a product and reads its input through the permuted map. Products
// with several rows keep the transpose: the CPU register tile then
// broadcasts rows against vectors of K^T, which the dot products cannot
// match.
//
//===----------------------------------------------------------------------===//

#include "NamedProducts.h"

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace dlc {
#define GEN_PASS_DEF_TRANSPOSEINTOMATVEC
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

struct TransposeIntoMatvecPass
    : public dlc::impl::TransposeIntoMatvecBase<TransposeIntoMatvecPass> {
  using Base::Base;

  /// How `value` is a transpose read in place: the transpose, and the
  /// groups of the transpose's input dims that a collapse_shape after it
  /// merges (a unit batch dim dropped before a batch_matmul), in the
  /// order of the collapsed dims; each group must be consecutive input
  /// dims, so that the input collapses the same way.
  struct InPlace {
    linalg::TransposeOp transpose;
    tensor::CollapseShapeOp collapse; ///< null: none
    SmallVector<ReassociationIndices> groups;
  };
  static std::optional<InPlace> readsInPlace(Value value) {
    InPlace r;
    r.collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
    if (r.collapse) {
      if (!r.collapse.getSrc().hasOneUse())
        return std::nullopt;
      value = r.collapse.getSrc();
    }
    r.transpose = value.getDefiningOp<linalg::TransposeOp>();
    if (!r.transpose)
      return std::nullopt;
    ArrayRef<int64_t> perm = r.transpose.getPermutation();
    SmallVector<ReassociationIndices> outGroups;
    if (r.collapse)
      outGroups = r.collapse.getReassociationIndices();
    else
      for (int64_t j = 0; j < static_cast<int64_t>(perm.size()); ++j)
        outGroups.push_back({j});
    for (const ReassociationIndices &g : outGroups) {
      ReassociationIndices in;
      for (int64_t j : g) {
        if (!in.empty() && perm[j] != in.back() + 1)
          return std::nullopt;
        in.push_back(perm[j]);
      }
      r.groups.push_back(in);
    }
    return r;
  }

  /// The input of `op` that a transpose with no other use produces, and
  /// how, when `op` is a product with one output row: every parallel loop
  /// that the input does not use (the rows it is multiplied into) has one
  /// iteration.
  std::optional<std::pair<unsigned, InPlace>>
  candidate(linalg::LinalgOp op) const {
    if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() == 0 || !op.hasPureTensorSemantics())
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned i = 0; i < 2; ++i) {
      Value input = op.getDpsInputs()[i];
      std::optional<InPlace> r;
      if (!input.hasOneUse() || !(r = readsInPlace(input)))
        continue;
      AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
        continue;
      bool oneRow = true;
      for (unsigned d = 0; d < ranges.size(); ++d)
        if (iterators[d] == utils::IteratorType::parallel &&
            !map.isFunctionOfDim(d) && ranges[d] != 1)
          oneRow = false;
      if (oneRow)
        return std::make_pair(i, *r);
    }
    return std::nullopt;
  }

  void runOnOperation() override {
    SmallVector<std::tuple<linalg::LinalgOp, unsigned, InPlace>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!dlc::isGenericOrNamedProduct(op))
        return;
      if (auto c = candidate(op))
        work.emplace_back(op, c->first, c->second);
    });
    IRRewriter rewriter(&getContext());
    for (auto &item : work) {
      linalg::LinalgOp op = std::get<0>(item);
      unsigned i = std::get<1>(item);
      InPlace &r = std::get<2>(item);
      FailureOr<linalg::GenericOp> general = dlc::asGeneric(rewriter, op);
      if (failed(general))
        continue;
      linalg::GenericOp generic = *general;
      // Collapsed dim k of the transposed operand is input group
      // r.groups[k]. The input, collapsed by its groups in its own order,
      // is read at the expression of the collapsed dim whose group comes
      // at that place.
      SmallVector<unsigned> order(r.groups.size());
      for (unsigned k = 0; k < order.size(); ++k)
        order[k] = k;
      llvm::sort(order, [&](unsigned a, unsigned b) {
        return r.groups[a].front() < r.groups[b].front();
      });
      Value source = r.transpose.getInput();
      if (r.collapse) {
        SmallVector<ReassociationIndices> inGroups;
        for (unsigned k : order)
          inGroups.push_back(r.groups[k]);
        rewriter.setInsertionPoint(generic);
        source = tensor::CollapseShapeOp::create(rewriter, generic.getLoc(),
                                                 source, inGroups);
      }
      AffineMap map =
          generic.getMatchingIndexingMap(generic.getDpsInputOperand(i));
      SmallVector<AffineExpr> results;
      for (unsigned k : order)
        results.push_back(map.getResult(k));
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      maps[i] = AffineMap::get(map.getNumDims(), 0, results, &getContext());
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      generic->setOperand(i, source);
      if (r.collapse && r.collapse->use_empty())
        rewriter.eraseOp(r.collapse);
      if (r.transpose->use_empty())
        rewriter.eraseOp(r.transpose);
      ++numRewritten;
    }
  }
};

} // namespace
