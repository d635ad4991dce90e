//===- ControlFlow.cpp - If, Loop and Scan --------------------------------===//
//
// Control flow is resolved in the ONNX graph itself: each
// handler places ONNX nodes after its node (a subgraph's nodes, moved or
// cloned) and forwards the node's results to values among them. The driver
// converts those nodes next, so a condition or trip count that a later
// iteration computes is folded by the time the next step is decided.
// - If: a condition that folds to a constant (directly, through a shape
//   subgraph, or from an input bound with --bind-input) picks the branch
//   that replaces the node. On a condition known only at run time both
//   branches are compiled, Where selects each output, and each branch's
//   kernels run only when the condition picks the branch (convertRuntimeIf,
//   dlc-predicate-dispatches).
// - Loop: unrolled one iteration at a time. Each iteration is a clone of the
//   body followed by a copy of the Loop node that carries the iteration
//   number, the body's condition and loop-carried values, and the scan
//   outputs produced so far; the copy decides, once its inputs are
//   converted, whether another iteration runs. A condition computed at
//   run time unrolls to the trip count; each iteration's kernels run only
//   while the condition holds.
// - Scan: the sequence length is static, so every step is cloned at once:
//   Gather picks each step's slice of the scan inputs, Unsqueeze and
//   Concat stack the steps' scan outputs. Scan 8's batch axis is one such
//   scan per batch entry, stacked.
// Subgraphs read values of enclosing graphs directly; cloning maps the
// body's own arguments, including their uses in nested subgraphs.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;

namespace {

/// Unrolling beyond this many iterations (or steps) is refused: the graph
/// would grow by a copy of the body for each.
constexpr int64_t kMaxUnrolledIterations = 4096;

/// Marks `op` as part of arm `arm` of the branch `id` (kBranchAttr).
void markBranch(Operation *op, int64_t id, int64_t arm) {
  if (!isa<arith::ConstantOp, onnx::NoneOp>(op))
    op->setAttr(kBranchAttr,
                DenseI64ArrayAttr::get(op->getContext(), {id, arm}));
}

/// cloneSubgraph, with the clones marked as that branch's when there is a
/// `branch` (id, arm).
SmallVector<Value>
cloneBody(OpBuilder &b, Block &body, ValueRange args,
          std::optional<std::pair<int64_t, int64_t>> branch = std::nullopt) {
  return cloneSubgraph(b, body, args, [&](Operation *clone) {
    if (branch)
      markBranch(clone, branch->first, branch->second);
  });
}

/// Stacks `pieces` along a new `axis` (ONNX's Unsqueeze + Concat).
Value stack(OnnxEmitter &e, ArrayRef<Value> pieces, int64_t axis) {
  SmallVector<Value> expanded;
  Value axes = e.ints({axis});
  for (Value piece : pieces)
    expanded.push_back(e.node("Unsqueeze", 13, {piece, axes}));
  if (expanded.size() == 1)
    return expanded.front();
  return e.node("Concat", 13, expanded, {e.attr("axis", axis)});
}

/// The single boolean a constant holds.
FailureOr<bool> constantBool(NodeRewriter &rw, unsigned i, StringRef what) {
  ElementsAttr attr = rw.constantInput(i);
  if (!attr)
    return rw.unsupported(Twine(what) +
                          " is computed at run time; dlc resolves control "
                          "flow at compile time (bind the inputs it depends "
                          "on with --bind-input)");
  DenseElementsAttr dense = getDenseConstant(rw.input(i));
  if (!dense || dense.getNumElements() != 1 ||
      !isa<IntegerType>(dense.getElementType()))
    return rw.fail(Twine(what) + " must hold one boolean, but is " +
                   llvm::formatv("{0}", attr.getType()).str());
  return !(*dense.getValues<APInt>().begin()).isZero();
}

Block *graphBody(NodeRewriter &rw, StringRef attrName) {
  Region *region = rw.getOp().getGraph(attrName);
  if (!region || region->empty())
    return (void)rw.fail("missing subgraph attribute '" + attrName + "'"),
           nullptr;
  return &region->front();
}

/// An If branch checked for what both ways of converting If need: it
/// exists, takes no inputs, and yields one value per result of the node.
/// Returns its body (whose terminator yields the outputs), or null after a
/// diagnostic.
Block *ifBranch(NodeRewriter &rw, StringRef name) {
  onnx::NodeOp op = rw.getOp();
  Block *body = graphBody(rw, name);
  if (!body)
    return nullptr;
  auto yield = cast<onnx::YieldOp>(body->getTerminator());
  if (yield.getValues().size() != op.getNumResults())
    return (void)rw.fail(
               "the " + name + " has " + Twine(yield.getValues().size()) +
               " outputs but the node has " + Twine(op.getNumResults())),
           nullptr;
  if (body->getNumArguments() != 0)
    return (void)rw.fail("the " + name +
                         " declares inputs; If branches take none"),
           nullptr;
  return body;
}

/// Moves `body`'s ops (all but its terminator, which is erased) in right
/// after `anchor`.
void spliceAfter(Operation *anchor, Block *body) {
  body->getTerminator()->erase();
  anchor->getBlock()->getOperations().splice(std::next(anchor->getIterator()),
                                             body->getOperations());
}

/// An If whose condition is only known at run time: both branches move in
/// after the node and each output selects between them (Where on the
/// condition). The branches' ops are marked as the arms of a new branch id
/// (kBranchAttr) and the Wheres as its selection (kSelectsAttr), so that
/// dlc-predicate-dispatches makes each kernel of a branch run only when the
/// condition picks it. A kernel it cannot predicate still runs; that is
/// safe because no op faults on values the other branch would have been
/// given (gathers clamp indices, scatters drop those outside, integer
/// division is total), and a result comes only from the branch the
/// condition picks. A compiled graph has one type per value, so each output
/// must have the same static type in both branches.
LogicalResult convertRuntimeIf(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  Value cond = rw.input(0);
  auto condType = dyn_cast<RankedTensorType>(cond.getType());
  if (!condType || !condType.hasStaticShape() ||
      condType.getNumElements() != 1 || !condType.getElementType().isInteger(1))
    return rw.fail("the condition must hold one boolean, but is " +
                   llvm::formatv("{0}", cond.getType()).str());
  constexpr StringLiteral names[2] = {"then_branch", "else_branch"};
  Block *bodies[2];
  SmallVector<Value> outputs[2];
  for (int k = 0; k < 2; ++k) {
    bodies[k] = ifBranch(rw, names[k]);
    if (!bodies[k])
      return failure();
    outputs[k].assign(bodies[k]->getTerminator()->operand_begin(),
                      bodies[k]->getTerminator()->operand_end());
  }
  // What each output selects between: the two branches' tensors, or for a
  // sequence that each branch makes with a SequenceConstruct of as many
  // elements, the elements pairwise.
  auto sequenceElements = [](Value v) -> std::optional<ValueRange> {
    if (onnx::NodeOp construct = sequenceConstructOf(v))
      return construct.getInputs();
    return std::nullopt;
  };
  auto sameStaticType = [](Value a, Value b) {
    auto ranked = dyn_cast<RankedTensorType>(a.getType());
    return ranked && ranked.hasStaticShape() && a.getType() == b.getType();
  };
  SmallVector<SmallVector<std::pair<Value, Value>>> pairs(op.getNumResults());
  SmallVector<bool> isSequence(op.getNumResults(), false);
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    Value thenValue = outputs[0][i], elseValue = outputs[1][i];
    std::optional<ValueRange> thenSeq = sequenceElements(thenValue),
                              elseSeq = sequenceElements(elseValue);
    if (thenSeq && elseSeq && thenSeq->size() == elseSeq->size() &&
        llvm::all_of(llvm::zip(*thenSeq, *elseSeq), [&](auto p) {
          return sameStaticType(std::get<0>(p), std::get<1>(p));
        })) {
      isSequence[i] = true;
      for (auto [t, f] : llvm::zip(*thenSeq, *elseSeq))
        pairs[i].push_back({t, f});
      continue;
    }
    if (!thenSeq && !elseSeq && sameStaticType(thenValue, elseValue)) {
      pairs[i].push_back({thenValue, elseValue});
      continue;
    }
    if (thenSeq || elseSeq)
      return rw.unsupported(llvm::formatv(
          "output {0} of an If on a run-time condition is a sequence; both "
          "branches must make it with a SequenceConstruct of as many "
          "elements, pairwise of the same static type (or bind the inputs "
          "the condition depends on with --bind-input to take one branch at "
          "compile time)",
          i));
    return rw.unsupported(llvm::formatv(
        "output {0} of an If on a run-time condition is {1} in the "
        "then_branch and {2} in the else_branch; both branches must give "
        "the same static tensor type (or bind the inputs the condition "
        "depends on with --bind-input to take one branch at compile time)",
        i, thenValue.getType(), elseValue.getType()));
  }
  // The condition and the selections first (the emitter inserts right
  // after the node), then the branches between the condition and the
  // selections: the condition is computed before any kernel it predicates.
  OnnxEmitter e(rw);
  Operation *anchor = op;
  Value scalarCond = cond;
  if (condType.getRank() != 0) {
    scalarCond = e.node("Reshape", 14, {cond, e.ints({})});
    anchor = scalarCond.getDefiningOp();
  }
  int64_t id = rw.newBranchId();
  SmallVector<Value> results;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    SmallVector<Value> selected;
    for (auto [thenValue, elseValue] : pairs[i]) {
      onnx::NodeOp select =
          e.nodeOp("Where", 16, {scalarCond, thenValue, elseValue}, {}, 1);
      select->setAttr(kSelectsAttr, e.b().getI64IntegerAttr(id));
      selected.push_back(select.getResult(0));
    }
    results.push_back(isSequence[i] ? e.node("SequenceConstruct", 11, selected)
                                    : selected.front());
  }
  for (int k = 1; k >= 0; --k) {
    for (Operation &branchOp : bodies[k]->without_terminator())
      markBranch(&branchOp, id, k == 0 ? 1 : 0);
    spliceAfter(anchor, bodies[k]);
  }
  rw.forward(results);
  return success();
}

LogicalResult convertIf(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "cond")))
    return failure();
  if (!rw.constantInput(0))
    return convertRuntimeIf(rw);
  FailureOr<bool> cond = constantBool(rw, 0, "the condition");
  if (failed(cond))
    return failure();
  Block *body = ifBranch(rw, *cond ? "then_branch" : "else_branch");
  if (!body)
    return failure();
  SmallVector<Value> results(body->getTerminator()->getOperands());
  spliceAfter(rw.getOp(), body);
  rw.forward(results);
  return success();
}

// Where a Loop node is in its unrolling: copies of the node carry the
// number of iterations run so far (kLoopIterationAttr); after the node's
// own inputs (trip count, condition, loop-carried values) come the scan
// outputs of each iteration run so far.

LogicalResult convertLoop(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  Block *body = graphBody(rw, "body");
  if (!body)
    return failure();
  int64_t iteration = 0;
  if (auto attr = op->getAttrOfType<IntegerAttr>(kLoopIterationAttr))
    iteration = attr.getInt();
  // body(iteration, condition, carried...) -> (condition, carried..., scan...)
  int64_t numCarried = static_cast<int64_t>(body->getNumArguments()) - 2;
  int64_t numYielded = body->getTerminator()->getNumOperands();
  int64_t numScan = numYielded - 1 - numCarried;
  if (numCarried < 0 || numScan < 0)
    return rw.fail("the body takes " + Twine(body->getNumArguments()) +
                   " inputs and returns " + Twine(numYielded) +
                   " outputs; a Loop body takes the iteration number, the "
                   "condition and the loop-carried values, and returns the "
                   "condition, the loop-carried values and scan outputs");
  int64_t numOwnInputs = 2 + numCarried;
  if (static_cast<int64_t>(rw.numInputs()) !=
          numOwnInputs + iteration * numScan ||
      static_cast<int64_t>(op.getNumResults()) != numCarried + numScan)
    return rw.fail("the node has " + Twine(op.getNumResults()) +
                   " outputs and " + Twine(rw.numInputs()) +
                   " inputs, but its body carries " + Twine(numCarried) +
                   " values and returns " + Twine(numScan) + " scan outputs");

  bool run = true;
  if (rw.hasInput(0)) {
    FailureOr<SmallVector<int64_t>> tripCount =
        rw.constantInts(0, "trip count");
    if (failed(tripCount))
      return failure();
    if (tripCount->size() != 1)
      return rw.fail("the trip count must hold one integer");
    run = iteration < tripCount->front();
  }
  // A condition known only at run time: every iteration up to the trip
  // count is unrolled, and one whose condition is false keeps the carried
  // values (Where) and the condition false (And), as a runtime If does.
  bool runtimeCondition = run && rw.hasInput(1) && !rw.constantInput(1);
  if (run && rw.hasInput(1) && !runtimeCondition) {
    FailureOr<bool> cond = constantBool(rw, 1, "the loop condition");
    if (failed(cond))
      return failure();
    run = *cond;
  }
  if (runtimeCondition) {
    if (!rw.hasInput(0))
      return rw.unsupported(
          "a Loop whose condition is known only at run time and that has "
          "no trip count (its number of iterations has no bound to unroll "
          "to)");
    if (numScan > 0)
      return rw.unsupported(
          "scan outputs of a Loop whose condition is known only at run "
          "time (their length is the number of iterations run)");
    auto condType = dyn_cast<RankedTensorType>(rw.input(1).getType());
    if (!condType || condType.getNumElements() != 1 ||
        !condType.getElementType().isInteger(1))
      return rw.fail("the loop condition must hold one boolean");
  }
  OnnxEmitter e(rw);
  OpBuilder &b = e.b();
  ValueRange ownInputs = op.getInputs().take_front(numOwnInputs);
  ValueRange scanPieces = op.getInputs().drop_front(numOwnInputs);

  if (!run) {
    SmallVector<Value> results(ownInputs.drop_front(2));
    for (int64_t j = 0; j < numScan; ++j) {
      if (iteration == 0)
        return rw.unsupported("the loop runs no iteration, so scan output " +
                              Twine(j) + " has no known shape");
      SmallVector<Value> pieces;
      for (int64_t i = 0; i < iteration; ++i)
        pieces.push_back(scanPieces[i * numScan + j]);
      results.push_back(stack(e, pieces, 0));
    }
    rw.forward(results);
    return success();
  }
  if (iteration >= kMaxUnrolledIterations)
    return rw.unsupported("the loop runs more than " +
                          Twine(kMaxUnrolledIterations) +
                          " iterations; dlc unrolls loops at compile time");

  // One iteration, then a copy of the node that decides about the next.
  Value cond = ownInputs[1];
  if (!rw.hasInput(1))
    cond = e.scalar(b.getI1Type(), 1);
  SmallVector<Value> args = {e.scalarInt(iteration), cond};
  llvm::append_range(args, ownInputs.drop_front(2));
  // On a run-time condition the iteration is a branch that runs while the
  // condition holds (kBranchAttr, arm 1): its kernels are skipped once it
  // is false (dlc-predicate-dispatches); the Wheres keep the carried values
  // and the And keeps the condition false. The flag comes first, so that it
  // is computed before the kernels it predicates.
  Value flag;
  std::optional<std::pair<int64_t, int64_t>> branch;
  if (runtimeCondition) {
    flag = e.node("Reshape", 14, {cond, e.ints({})});
    branch = std::make_pair(rw.newBranchId(), int64_t(1));
  }
  SmallVector<Value> yielded = cloneBody(b, *body, args, branch);
  if (runtimeCondition) {
    Attribute selects = b.getI64IntegerAttr(branch->first);
    for (int64_t j = 0; j < numCarried; ++j) {
      onnx::NodeOp select = e.nodeOp(
          "Where", 16, {flag, yielded[1 + j], ownInputs[2 + j]}, {}, 1);
      select->setAttr(kLoopCarriedSelectAttr, b.getUnitAttr());
      select->setAttr(kSelectsAttr, selects);
      yielded[1 + j] = select.getResult(0);
    }
    onnx::NodeOp conjunction = e.nodeOp("And", 7, {flag, yielded[0]}, {}, 1);
    conjunction->setAttr(kSelectsAttr, selects);
    yielded[0] = conjunction.getResult(0);
  }

  SmallVector<Value> nextInputs = {ownInputs[0], yielded[0]};
  llvm::append_range(nextInputs, ArrayRef(yielded).slice(1, numCarried));
  llvm::append_range(nextInputs, scanPieces);
  llvm::append_range(nextInputs, ArrayRef(yielded).drop_front(1 + numCarried));
  auto next = cast<onnx::NodeOp>(b.clone(*op));
  next->setOperands(nextInputs);
  next->setAttr(kLoopIterationAttr, b.getI64IntegerAttr(iteration + 1));
  rw.forward(next.getOutputs());
  return success();
}

/// The steps of a scan: `steps` clones of `body`, step t reading slice t
/// (or steps-1-t, for a reverse direction) of each scan input along its
/// axis. Returns the final state and, per scan output, each step's piece.
std::pair<SmallVector<Value>, SmallVector<SmallVector<Value>>>
unrollScan(OnnxEmitter &e, Block &body, ValueRange initialState,
           ValueRange scanInputs, ArrayRef<int64_t> axes,
           ArrayRef<int64_t> directions, int64_t steps) {
  SmallVector<Value> state(initialState);
  int64_t numScanOutputs =
      body.getTerminator()->getNumOperands() - state.size();
  SmallVector<SmallVector<Value>> pieces(numScanOutputs);
  for (int64_t t = 0; t < steps; ++t) {
    SmallVector<Value> args = state;
    for (auto [j, input] : llvm::enumerate(scanInputs)) {
      int64_t index = directions[j] ? steps - 1 - t : t;
      args.push_back(e.node("Gather", 13, {input, e.scalarInt(index)},
                            {e.attr("axis", axes[j])}));
    }
    SmallVector<Value> yielded = cloneBody(e.b(), body, args);
    state.assign(yielded.begin(), yielded.begin() + state.size());
    for (int64_t j = 0; j < numScanOutputs; ++j)
      pieces[j].push_back(yielded[state.size() + j]);
  }
  return {state, pieces};
}

/// Scan 9 and later: scan inputs run along their own axes; scan outputs
/// stack along theirs.
LogicalResult convertScan(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  Block *body = graphBody(rw, "body");
  if (!body)
    return failure();
  bool batched = rw.version() < 9;
  // Scan 8 puts an optional sequence_lens first and a batch axis in front
  // of every input and output; each batch entry scans along axis 1.
  unsigned first = batched ? 1 : 0;
  int64_t numScanInputs = rw.getInt("num_scan_inputs", 0);
  int64_t numInputs = static_cast<int64_t>(rw.numInputs()) - first;
  int64_t numState = numInputs - numScanInputs;
  int64_t numScanOutputs = static_cast<int64_t>(op.getNumResults()) - numState;
  if (numScanInputs < 1 || numState < 0 || numScanOutputs < 0)
    return rw.fail("num_scan_inputs is " + Twine(numScanInputs) +
                   " for a node with " + Twine(numInputs) + " inputs");
  if (static_cast<int64_t>(body->getNumArguments()) != numInputs ||
      static_cast<int64_t>(body->getTerminator()->getNumOperands()) !=
          static_cast<int64_t>(op.getNumResults()))
    return rw.fail("the body takes " + Twine(body->getNumArguments()) +
                   " inputs and returns " +
                   Twine(body->getTerminator()->getNumOperands()) +
                   " outputs; the node has " + Twine(numInputs) +
                   " inputs and " + Twine(op.getNumResults()) + " outputs");
  auto listAttr = [&](StringRef name,
                      int64_t size) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> v = rw.getInts(name);
    if (v.empty())
      v.assign(size, 0);
    if (static_cast<int64_t>(v.size()) != size)
      return rw.fail("attribute '" + name + "' has " + Twine(v.size()) +
                     " entries; the node has " + Twine(size));
    return v;
  };
  FailureOr<SmallVector<int64_t>> inAxes =
      batched ? SmallVector<int64_t>(numScanInputs, 1)
              : listAttr("scan_input_axes", numScanInputs);
  FailureOr<SmallVector<int64_t>> inDirs =
      listAttr(batched ? "directions" : "scan_input_directions", numScanInputs);
  FailureOr<SmallVector<int64_t>> outAxes =
      batched ? SmallVector<int64_t>(numScanOutputs, 0)
              : listAttr("scan_output_axes", numScanOutputs);
  FailureOr<SmallVector<int64_t>> outDirs =
      batched ? SmallVector<int64_t>(numScanOutputs, 0)
              : listAttr("scan_output_directions", numScanOutputs);
  if (failed(inAxes) || failed(inDirs) || failed(outAxes) || failed(outDirs))
    return failure();

  // Every scan input runs over the same number of steps (and, in Scan 8,
  // the same batch).
  int64_t steps = -1, batch = -1;
  for (int64_t j = 0; j < numScanInputs; ++j) {
    RankedTensorType type = rw.inputType(first + numState + j);
    if (batched && type.getRank() < 2)
      return rw.fail("scan input " + Twine(j) +
                     " must have a batch and a sequence axis");
    if (type.getRank() < 1)
      return rw.fail("scan input " + Twine(j) +
                     " is a scalar; it must have an axis to scan along");
    FailureOr<int64_t> axis =
        rw.normalizeAxis((*inAxes)[j], type.getRank(), "scan_input_axes");
    if (failed(axis))
      return failure();
    (*inAxes)[j] = *axis;
    int64_t length = type.getDimSize(*axis);
    if (steps >= 0 && length != steps)
      return rw.fail("scan input " + Twine(j) + " has " + Twine(length) +
                     " steps along axis " + Twine(*axis) +
                     " but scan input 0 has " + Twine(steps));
    steps = length;
    if (batched && batch >= 0 && type.getDimSize(0) != batch)
      return rw.fail("scan input " + Twine(j) + " has batch " +
                     Twine(type.getDimSize(0)) + " but scan input 0 has " +
                     Twine(batch));
    if (batched)
      batch = type.getDimSize(0);
  }
  if (batched && rw.hasInput(0)) {
    FailureOr<SmallVector<int64_t>> lens = rw.constantInts(0, "sequence_lens");
    if (failed(lens))
      return failure();
    for (int64_t len : *lens)
      if (len != steps)
        return rw.unsupported("sequence_lens holds " + Twine(len) +
                              ", shorter than the " + Twine(steps) +
                              " steps of the scan inputs");
  }
  if (steps == 0)
    return rw.unsupported("the scan inputs have no step, so the scan "
                          "outputs have no known shape");
  if (steps * (batched ? batch : 1) > kMaxUnrolledIterations)
    return rw.unsupported(
        "the scan runs " + Twine(steps * (batched ? batch : 1)) +
        " steps, more than the " + Twine(kMaxUnrolledIterations) +
        " dlc unrolls at compile time");

  OnnxEmitter e(rw);
  ValueRange state = op.getInputs().slice(first, numState);
  ValueRange scanInputs = op.getInputs().drop_front(first + numState);
  auto finish = [&](SmallVector<Value> finalState,
                    SmallVector<SmallVector<Value>> pieces) {
    SmallVector<Value> results = std::move(finalState);
    for (int64_t j = 0; j < numScanOutputs; ++j) {
      if ((*outDirs)[j])
        std::reverse(pieces[j].begin(), pieces[j].end());
      results.push_back(stack(e, pieces[j], (*outAxes)[j]));
    }
    return results;
  };
  if (!batched) {
    auto [finalState, pieces] =
        unrollScan(e, *body, state, scanInputs, *inAxes, *inDirs, steps);
    rw.forward(finish(finalState, pieces));
    return success();
  }
  // Scan 8: one scan per batch entry, on its slices; results stack along
  // the batch axis.
  auto slice = [&](Value v, int64_t index) {
    return e.node("Gather", 13, {v, e.scalarInt(index)}, {e.attr("axis", 0)});
  };
  SmallVector<int64_t> entryAxes(numScanInputs, 0);
  SmallVector<SmallVector<Value>> perEntry(op.getNumResults());
  for (int64_t entry = 0; entry < batch; ++entry) {
    SmallVector<Value> entryState, entryInputs;
    for (Value v : state)
      entryState.push_back(slice(v, entry));
    for (Value v : scanInputs)
      entryInputs.push_back(slice(v, entry));
    auto [finalState, pieces] = unrollScan(e, *body, entryState, entryInputs,
                                           entryAxes, *inDirs, steps);
    for (auto [i, v] : llvm::enumerate(finish(finalState, pieces)))
      perEntry[i].push_back(v);
  }
  SmallVector<Value> results;
  for (ArrayRef<Value> entries : perEntry)
    results.push_back(stack(e, entries, 0));
  rw.forward(results);
  return success();
}

/// Optional values: an optional that holds a tensor is that tensor; an
/// empty one exists only as the Optional node without an input (or an
/// omitted input), which OptionalHasElement and OptionalGetElement look at
/// in the ONNX graph. Whether an optional holds a value is known when
/// compiling; graph inputs and outputs of optional type are refused by the
/// importer.
enum class OptionalState { Empty, Holds };

/// What input `i` of `rw`'s node is, as an optional.
OptionalState optionalState(NodeRewriter &rw, unsigned i) {
  if (!rw.hasInput(i))
    return OptionalState::Empty;
  Value v = rw.getOp().getInputs()[i];
  auto producer = v.getDefiningOp<onnx::NodeOp>();
  if (producer && producer.getDomain().empty() &&
      producer.getOpType() == "Optional" &&
      (producer.getInputs().empty() || !producer.getInputs()[0] ||
       isa<NoneType>(producer.getInputs()[0].getType())))
    return OptionalState::Empty;
  return OptionalState::Holds;
}

/// Optional with an input holds it; an empty one (a `type` attribute, no
/// input) has no value, and a placeholder of no elements stands for it.
LogicalResult convertOptional(NodeRewriter &rw) {
  if (rw.hasInput(0))
    return rw.replace(rw.input(0), rw.onnxElementType(0));
  Type t = rw.declaredResultElementType(0);
  if (!t)
    t = Float32Type::get(rw.ctx());
  return rw.replace(createEmpty(rw.b(), rw.loc(), {0}, signlessType(t)), t);
}

LogicalResult convertOptionalHasElement(NodeRewriter &rw) {
  bool holds = optionalState(rw, 0) == OptionalState::Holds;
  auto type = RankedTensorType::get({}, rw.b().getI1Type());
  return rw.replace(
      createConstant(rw.b(), rw.loc(), DenseElementsAttr::get(type, holds)));
}

LogicalResult convertOptionalGetElement(NodeRewriter &rw) {
  if (optionalState(rw, 0) == OptionalState::Empty)
    return rw.fail("the optional input is empty; it has no element to get");
  return rw.replace(rw.input(0), rw.onnxElementType(0));
}

} // namespace

void dlc::populateControlFlowHandlers(HandlerRegistry &r) {
  r.add("If", {1, 11, 13, 16, 19, 21, 23, 24}, convertIf);
  r.add("Loop", {1, 11, 13, 16, 19, 21, 23, 24}, convertLoop);
  r.add("Scan", {8, 9, 11, 16, 19, 21, 23, 24}, convertScan);
  r.add("Optional", {15}, convertOptional);
  r.add("OptionalHasElement", {15, 18}, convertOptionalHasElement);
  r.add("OptionalGetElement", {15, 18}, convertOptionalGetElement);
}
