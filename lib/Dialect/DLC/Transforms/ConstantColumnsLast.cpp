//===- ConstantColumnsLast.cpp - the dlc-constant-columns-last pass -------===//
//
// CPU kernels vectorize a contraction along the output's innermost dim (its
// columns), loading vectors of the operand that dim indexes. A weight that
// keeps the reduction innermost instead - a Gemm with transB, an LSTM's or
// GRU's input and recurrence weights [gates][input] - has no unit-stride
// column, and its contraction falls back to a dot product per output. The
// weight is known at compile time: this pass transposes it once so that the
// columns are its innermost dim, and the contraction reads it through the
// permuted map. Nothing else changes: the same values meet in the same
// order. A Gemm with transB arrives as a named linalg.matmul with an (n, k)
// map for B, which is generalized first.
//
//===----------------------------------------------------------------------===//

#include "ConstantWeights.h"
#include "NamedProducts.h"

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace dlc {
#define GEN_PASS_DEF_CONSTANTCOLUMNSLAST
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

struct ConstantColumnsLastPass
    : public dlc::impl::ConstantColumnsLastBase<ConstantColumnsLastPass> {
  using Base::Base;

  /// The input of `op` to lay out anew and the position, among its dims,
  /// of the output's columns; nothing when no input qualifies.
  std::optional<std::pair<unsigned, unsigned>>
  candidate(linalg::LinalgOp op) const {
    if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() == 0 || !op.hasPureTensorSemantics())
      return std::nullopt;
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (out.getNumResults() == 0)
      return std::nullopt;
    auto column = dyn_cast<AffineDimExpr>(out.getResults().back());
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (!column || ShapedType::isDynamic(ranges[column.getPosition()]) ||
        ranges[column.getPosition()] < lanes)
      return std::nullopt;
    // A matrix-vector product (one output row) reads each weight element
    // once. From memory, rows of the reduction read whole are the faster
    // stream: a batch-1 classifier's [1000 x 512] and [1000 x 1280]
    // weights ran 1.14x and 1.37x slower columns-last (one Zen 4 core).
    // From cache the columns-last product wins (an LSTM's recurrence,
    // 0.10 -> 0.08 ms): only weights beyond kStreamedBytes stay.
    constexpr int64_t kStreamedBytes = 512 * 1024;
    int64_t rows = 1;
    for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
      if (it == utils::IteratorType::parallel && d != column.getPosition())
        rows *= ShapedType::isDynamic(ranges[d]) ? 2 : ranges[d];
    for (unsigned i = 0; i < 2; ++i) {
      AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
      AffineMap other = op.getMatchingIndexingMap(op.getDpsInputOperand(1 - i));
      auto type = dyn_cast<ShapedType>(op.getDpsInputs()[i].getType());
      if (rows == 1 && type && type.hasStaticShape() &&
          type.getNumElements() * 4 > kStreamedBytes)
        continue;
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
          map.getNumResults() < 2 ||
          other.isFunctionOfDim(column.getPosition()))
        continue;
      // The columns index this input, but not as its innermost dim, which
      // is a reduction.
      std::optional<unsigned> at = map.getResultPosition(column);
      auto last = cast<AffineDimExpr>(map.getResults().back());
      if (!at || *at == map.getNumResults() - 1 ||
          op.getIteratorTypesArray()[last.getPosition()] !=
              utils::IteratorType::reduction)
        continue;
      return std::make_pair(i, *at);
    }
    return std::nullopt;
  }

  /// Reads `op`'s input `input` through a copy of `values` (its constant
  /// elements, `key` their resource's name) with `column` moved last.
  void rewrite(linalg::GenericOp op, unsigned input, unsigned column,
               const std::vector<float> &values, const std::string &key) {
    Value w = op.getDpsInputs()[input];
    auto type = cast<RankedTensorType>(w.getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size();
    // The new order of dims: all but the columns, then the columns.
    SmallVector<int64_t> order;
    for (int64_t d = 0; d < rank; ++d)
      if (d != column)
        order.push_back(d);
    order.push_back(column);
    SmallVector<int64_t> newShape;
    for (int64_t d : order)
      newShape.push_back(shape[d]);
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    std::vector<float> moved;
    moved.reserve(values.size());
    SmallVector<int64_t> at(rank, 0); // in the new order
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t linear = 0;
      for (int64_t d = 0; d < rank; ++d)
        linear += at[d] * strides[order[d]];
      moved.push_back(values[linear]);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++at[d] < newShape[d])
          break;
        at[d] = 0;
      }
    }

    // With the graph's other constants, at the function's start (not in
    // the loop of a recurrence): a weight, not a value of one kernel.
    auto func = op->getParentOfType<FunctionOpInterface>();
    OpBuilder b = OpBuilder::atBlockBegin(&func.getFunctionBody().front());
    auto movedType = RankedTensorType::get(newShape, type.getElementType());
    Value cst = dlc::createF32Constant(b, op.getLoc(), movedType, moved, key,
                                       ".columns_last");
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
    SmallVector<AffineExpr> results;
    for (int64_t d : order)
      results.push_back(map.getResult(d));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[input] = AffineMap::get(map.getNumDims(), 0, results, b.getContext());
    op.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
    op->setOperand(input, cst);
    ++numRewritten;
  }

  void runOnOperation() override {
    SmallVector<std::tuple<linalg::LinalgOp, unsigned, unsigned>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Generic ops, and the named products ONNX's Gemm and MatMul lower
      // to (a Gemm with transB is a linalg.matmul whose B map is (n, k)).
      if (!dlc::isGenericOrNamedProduct(op))
        return;
      if (auto c = candidate(op))
        work.emplace_back(op, c->first, c->second);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, input, column] : work) {
      std::string key;
      std::optional<std::vector<float>> values =
          dlc::f32ConstantValues(op.getDpsInputs()[input], &key);
      if (!values)
        continue;
      FailureOr<linalg::GenericOp> general = dlc::asGeneric(rewriter, op);
      if (failed(general))
        continue;
      linalg::GenericOp generic = *general;
      rewrite(generic, input, column, *values, key);
    }
  }
};

} // namespace
