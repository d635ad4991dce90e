//===- PredicateDispatches.cpp - the dlc-predicate-dispatches pass --------===//
//
// The kernels of a branch on a run-time condition (an If's branches, a
// Loop's iterations) run only when the branch is taken. Which dispatches
// qualify is decided from the uses of their results, so that a skipped
// kernel can only leave garbage where nothing looks at it (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

namespace dlc {
#define GEN_PASS_DEF_PREDICATEDISPATCHES
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// An op that selects a branch's values by its condition.
struct Selector {
  int64_t id;
  Value condition; ///< in the function's body block
  bool isAnd;      ///< And: only arm 1 reaches it
};

/// `v` as a value of the function's body block `top`: itself, or the
/// operand a dispatch's block argument stands for. Null otherwise.
Value inTopBlock(Value v, Block *top) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == top)
      return v;
    if (auto d = dyn_cast<dlc::DispatchOp>(arg.getOwner()->getParentOp()))
      return d.getInputs()[arg.getArgNumber()];
    return {};
  }
  return v.getDefiningOp()->getBlock() == top ? v : Value();
}

/// `op` as a selecting op, if it is marked as one and has the form the
/// pass relies on: a linalg.generic whose first input is a one-element
/// boolean and whose body yields select(in0, in1, in2) or and(in0, in1).
std::optional<Selector> asSelector(Operation *op, Block *top) {
  auto id = op->getAttrOfType<IntegerAttr>(dlc::kSelectsAttr);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!id || !generic || generic.getNumDpsInits() != 1 ||
      generic.getNumDpsInputs() < 2)
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1)
    return std::nullopt;
  Operation *def = yield.getValues()[0].getDefiningOp();
  auto isArg = [&](Value v, unsigned i) { return v == body.getArgument(i); };
  bool isAnd = false;
  if (auto select = dyn_cast_or_null<arith::SelectOp>(def)) {
    if (generic.getNumDpsInputs() != 3 || !isArg(select.getCondition(), 0) ||
        !isArg(select.getTrueValue(), 1) || !isArg(select.getFalseValue(), 2))
      return std::nullopt;
  } else if (auto conj = dyn_cast_or_null<arith::AndIOp>(def)) {
    if (generic.getNumDpsInputs() != 2 || !isArg(conj.getLhs(), 0) ||
        !isArg(conj.getRhs(), 1))
      return std::nullopt;
    isAnd = true;
  } else {
    return std::nullopt;
  }
  Value condition = generic.getDpsInputs()[0];
  auto type = dyn_cast<RankedTensorType>(condition.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1 ||
      !type.getElementType().isInteger(1))
    return std::nullopt;
  condition = inTopBlock(condition, top);
  if (!condition)
    return std::nullopt;
  return Selector{id.getInt(), condition, isAnd};
}

/// Whether every use of `results`, followed through ops of arm `tag[1]` of
/// branch `tag[0]` (inside dispatches and between them), ends in the input
/// of a selecting op of that branch that carries this arm: the only place
/// where values of a skipped kernel may arrive.
bool onlySelected(ValueRange results, ArrayRef<int64_t> tag,
                  const DenseMap<Operation *, Selector> &selectors,
                  Block *top) {
  SmallVector<Value> work(results.begin(), results.end());
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      // A use inside an op's region (a gather's tensor.extract) is a use by
      // that op.
      Operation *user = use.getOwner();
      while (user->getBlock() != top &&
             !isa<dlc::DispatchOp>(user->getParentOp()))
        user = user->getParentOp();
      if (auto yield = dyn_cast<dlc::YieldOp>(user)) {
        work.push_back(yield->getParentOp()->getResult(use.getOperandNumber()));
        continue;
      }
      if (auto d = dyn_cast<dlc::DispatchOp>(user)) {
        work.push_back(d.getBodyBlock().getArgument(use.getOperandNumber()));
        continue;
      }
      auto selector = selectors.find(user);
      if (selector != selectors.end() && user == use.getOwner() &&
          selector->second.id == tag[0]) {
        unsigned armInput = tag[1] == 1 ? 1 : 2;
        if (use.getOperandNumber() == armInput &&
            !(selector->second.isAnd && tag[1] == 0))
          continue;
        return false;
      }
      // Ops that only place values in memory (reshapes, views, concatenations
      // written in place) pass on what they get, whatever made them.
      bool placesOnly = user->getBlock() == top &&
                        isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                            dlc::ViewOp, dlc::ConcatOp>(user);
      auto branch = user->getAttrOfType<DenseI64ArrayAttr>(dlc::kBranchAttr);
      if (!placesOnly && (!branch || branch.asArrayRef() != tag))
        return false;
      llvm::append_range(work, user->getResults());
    }
  }
  return true;
}

struct PredicateDispatchesPass
    : public dlc::impl::PredicateDispatchesBase<PredicateDispatchesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    Block *top = &func.getBody().front();
    DenseMap<Operation *, Selector> selectors;
    DenseMap<int64_t, SmallVector<Value>> conditions;
    func.walk([&](Operation *op) {
      if (std::optional<Selector> s = asSelector(op, top)) {
        selectors[op] = *s;
        conditions[s->id].push_back(s->condition);
      }
    });
    MLIRContext *ctx = &getContext();
    for (auto d : llvm::make_early_inc_range(top->getOps<dlc::DispatchOp>())) {
      // The branch of the ops that compute the results.
      DenseI64ArrayAttr tag;
      bool marked = d.getNumResults() > 0;
      for (Value y : d.getYield().getValues()) {
        Operation *def = y.getDefiningOp();
        auto t = def ? def->getAttrOfType<DenseI64ArrayAttr>(dlc::kBranchAttr)
                     : DenseI64ArrayAttr();
        marked &= t && (!tag || t == tag);
        tag = t;
      }
      if (!marked)
        continue;
      // A condition of the branch that is known before the kernel runs.
      Value condition;
      for (Value c : conditions.lookup(tag[0]))
        if (isa<BlockArgument>(c) || c.getDefiningOp()->isBeforeInBlock(d)) {
          condition = c;
          break;
        }
      if (!condition ||
          !onlySelected(d.getResults(), tag.asArrayRef(), selectors, top))
        continue;
      auto inputs = d.getInputs();
      auto it = llvm::find(inputs, condition);
      int64_t index = std::distance(inputs.begin(), it);
      if (it == inputs.end()) {
        d.getInputsMutable().append(condition);
        d.getBodyBlock().addArgument(condition.getType(), condition.getLoc());
      }
      d->setAttr(dlc::kRunIfAttr, DenseI64ArrayAttr::get(ctx, {index, tag[1]}));
    }
    // Later stages see no branch marks.
    func.walk([](Operation *op) {
      op->removeAttr(dlc::kBranchAttr);
      op->removeAttr(dlc::kSelectsAttr);
    });
  }
};

} // namespace
