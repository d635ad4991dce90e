//===- Sequence.cpp - sequences of tensors --------------------------------===//
//
// A sequence is known element by element when compiling: it is the result
// of a SequenceConstruct node whose inputs are its elements (ONNX values).
// Each node that makes a sequence (SequenceEmpty, SequenceInsert,
// SequenceErase, SplitToSequence, SequenceMap) places such a node after
// itself, which takes over its uses; nodes that read one (SequenceAt,
// SequenceLength, ConcatFromSequence) forward what they pick to the nodes
// the driver converts next. Positions must be constants. A sequence graph
// input arrives as a SequenceConstruct of one input per element (the
// importer), a sequence graph output leaves as one output per element (the
// driver). Sequences that only control flow would make (If branches or Loop
// iterations of different lengths) are refused by name.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;

namespace {

/// The elements of sequence input `i` (as the driver maps it: control flow
/// forwards values), or failure after a diagnostic.
FailureOr<SmallVector<Value>> elementsOf(NodeRewriter &rw, unsigned i) {
  onnx::NodeOp construct =
      rw.hasInput(i) ? sequenceConstructOf(rw.input(i)) : onnx::NodeOp();
  if (!construct)
    return rw.unsupported(
        "input " + Twine(i) +
        " is a sequence whose elements are not known when compiling (one "
        "that comes out of If, Loop or Scan, or no sequence at all)");
  return SmallVector<Value>(construct.getInputs().begin(),
                            construct.getInputs().end());
}

/// Makes output `j` of the node the sequence of `elements`: a
/// SequenceConstruct node placed after the node takes over its uses.
void replaceBySequence(NodeRewriter &rw, OnnxEmitter &e, unsigned j,
                       ArrayRef<Value> elements) {
  onnx::NodeOp construct =
      e.nodeOp("SequenceConstruct", 11, elements, {}, /*numResults=*/1);
  rw.getOp()->getResult(j).replaceAllUsesWith(construct.getResult(0));
  rw.keepSequences();
}

/// The position that input `i` gives in a sequence of `n` elements,
/// normalized: one integer constant in [-n, n - 1], or [-n, n] for an
/// insertion (`end`); `fallback` when the input is left out.
FailureOr<int64_t> positionOf(NodeRewriter &rw, unsigned i, int64_t n, bool end,
                              int64_t fallback) {
  if (!rw.hasInput(i))
    return fallback;
  FailureOr<SmallVector<int64_t>> p = rw.constantInts(i, "the position");
  if (failed(p))
    return failure();
  if (p->size() != 1)
    return rw.fail("the position must hold one integer");
  int64_t high = end ? n : n - 1;
  int64_t pos = p->front();
  if (pos < -n || pos > high)
    return rw.fail(llvm::formatv("position {0} is outside [{1}, {2}] for a "
                                 "sequence of {3} elements",
                                 pos, -n, high, n)
                       .str());
  return pos < 0 ? pos + n : pos;
}

LogicalResult convertSequenceConstruct(NodeRewriter &rw) {
  rw.keepSequences();
  return success();
}

LogicalResult convertSequenceEmpty(NodeRewriter &rw) {
  OnnxEmitter e(rw);
  replaceBySequence(rw, e, 0, {});
  return success();
}

LogicalResult convertSequenceInsert(NodeRewriter &rw) {
  FailureOr<SmallVector<Value>> elements = elementsOf(rw, 0);
  if (failed(elements) || failed(rw.requireInput(1, "tensor")))
    return failure();
  int64_t n = elements->size();
  FailureOr<int64_t> pos = positionOf(rw, 2, n, /*end=*/true, n);
  if (failed(pos))
    return failure();
  elements->insert(elements->begin() + *pos, rw.getOp().getInputs()[1]);
  OnnxEmitter e(rw);
  replaceBySequence(rw, e, 0, *elements);
  return success();
}

LogicalResult convertSequenceErase(NodeRewriter &rw) {
  FailureOr<SmallVector<Value>> elements = elementsOf(rw, 0);
  if (failed(elements))
    return failure();
  int64_t n = elements->size();
  if (n == 0)
    return rw.fail("the sequence is empty; there is no element to erase");
  FailureOr<int64_t> pos = positionOf(rw, 1, n, /*end=*/false, n - 1);
  if (failed(pos))
    return failure();
  elements->erase(elements->begin() + *pos);
  OnnxEmitter e(rw);
  replaceBySequence(rw, e, 0, *elements);
  return success();
}

LogicalResult convertSequenceAt(NodeRewriter &rw) {
  FailureOr<SmallVector<Value>> elements = elementsOf(rw, 0);
  if (failed(elements) || failed(rw.requireInput(1, "position")))
    return failure();
  int64_t n = elements->size();
  if (n == 0)
    return rw.fail("the sequence is empty; there is no element to take");
  FailureOr<int64_t> pos = positionOf(rw, 1, n, /*end=*/false, 0);
  if (failed(pos))
    return failure();
  rw.forward((*elements)[*pos]);
  return success();
}

LogicalResult convertSequenceLength(NodeRewriter &rw) {
  FailureOr<SmallVector<Value>> elements = elementsOf(rw, 0);
  if (failed(elements))
    return failure();
  OnnxEmitter e(rw);
  rw.forward(e.scalarInt(elements->size()));
  return success();
}

LogicalResult convertConcatFromSequence(NodeRewriter &rw) {
  FailureOr<SmallVector<Value>> elements = elementsOf(rw, 0);
  if (failed(elements))
    return failure();
  if (elements->empty())
    return rw.fail("the sequence is empty; there is nothing to concatenate");
  if (!rw.hasAttr("axis"))
    return rw.fail("missing required attribute 'axis'");
  int64_t axis = rw.getInt("axis", 0);
  OnnxEmitter e(rw);
  SmallVector<Value> pieces(*elements);
  if (rw.getInt("new_axis", 0) != 0)
    for (Value &piece : pieces)
      piece = e.node("Unsqueeze", 13, {piece, e.ints({axis})});
  rw.forward(e.node("Concat", 13, pieces, {e.attr("axis", axis)}));
  return success();
}

LogicalResult convertSplitToSequence(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "input")))
    return failure();
  RankedTensorType type = rw.inputType(0);
  // (normalizeAxis takes axis 0 of a scalar, as other operators allow; a
  // scalar has no axis to split.)
  if (type.getRank() == 0)
    return rw.fail("input must have rank >= 1, not a scalar");
  FailureOr<int64_t> axis =
      rw.normalizeAxis(rw.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (!rw.hasInput(1)) {
    // Pieces of one, without the axis unless keepdims.
    sizes.assign(dim, 1);
    squeeze = rw.getInt("keepdims", 1) == 0;
  } else {
    FailureOr<SmallVector<int64_t>> split = rw.constantInts(1, "split");
    if (failed(split))
      return failure();
    if (rw.inputType(1).getRank() == 0) {
      int64_t chunk = split->front();
      if (chunk <= 0)
        return rw.fail("split " + Twine(chunk) + " is not positive");
      for (int64_t at = 0; at < dim; at += chunk)
        sizes.push_back(std::min(chunk, dim - at));
    } else {
      int64_t sum = 0;
      for (int64_t s : *split) {
        if (s < 0)
          return rw.fail("split " + Twine(s) + " is negative");
        sum += s;
      }
      if (sum != dim)
        return rw.fail(llvm::formatv("the split sizes add up to {0}, but "
                                     "axis {1} has {2} elements",
                                     sum, *axis, dim)
                           .str());
      sizes = *split;
    }
  }
  OnnxEmitter e(rw);
  SmallVector<Value> pieces;
  if (!sizes.empty()) {
    onnx::NodeOp split =
        e.nodeOp("Split", 13, {rw.getOp().getInputs()[0], e.ints(sizes)},
                 {e.attr("axis", *axis)}, sizes.size());
    for (Value piece : split.getResults())
      pieces.push_back(squeeze ? e.node("Squeeze", 13, {piece, e.ints({*axis})})
                               : piece);
  }
  replaceBySequence(rw, e, 0, pieces);
  return success();
}

/// SequenceMap: the body once per position of the sequences it reads, each
/// output the sequence of what the runs give.
LogicalResult convertSequenceMap(NodeRewriter &rw) {
  onnx::NodeOp op = rw.getOp();
  Region *region = op.getGraph("body");
  if (!region || region->empty())
    return rw.fail("missing subgraph attribute 'body'");
  Block &body = region->front();
  if (body.getNumArguments() != rw.numInputs() ||
      body.getTerminator()->getNumOperands() != op.getNumResults())
    return rw.fail("the body takes " + Twine(body.getNumArguments()) +
                   " inputs and returns " +
                   Twine(body.getTerminator()->getNumOperands()) +
                   " outputs; it must take one per input of the node and "
                   "return one per output");
  FailureOr<SmallVector<Value>> first = elementsOf(rw, 0);
  if (failed(first))
    return failure();
  int64_t n = first->size();
  // Each input: a sequence of n elements, or a tensor every run reads.
  SmallVector<SmallVector<Value>> perInput;
  for (unsigned i = 0; i < rw.numInputs(); ++i) {
    Value in = op.getInputs()[i];
    if (!sequenceConstructOf(rw.input(i))) {
      perInput.push_back(SmallVector<Value>(n, in));
      continue;
    }
    FailureOr<SmallVector<Value>> elements = elementsOf(rw, i);
    if (failed(elements))
      return failure();
    if (static_cast<int64_t>(elements->size()) != n)
      return rw.fail(llvm::formatv("input {0} is a sequence of {1} elements "
                                   "and input 0 one of {2}",
                                   i, elements->size(), n)
                         .str());
    perInput.push_back(*elements);
  }
  OnnxEmitter e(rw);
  SmallVector<SmallVector<Value>> perOutput(op.getNumResults());
  for (int64_t k = 0; k < n; ++k) {
    SmallVector<Value> args;
    for (ArrayRef<Value> in : perInput)
      args.push_back(in[k]);
    SmallVector<Value> yielded = cloneSubgraph(e.b(), body, args);
    for (auto [j, v] : llvm::enumerate(yielded))
      perOutput[j].push_back(v);
  }
  for (auto [j, elements] : llvm::enumerate(perOutput))
    replaceBySequence(rw, e, j, elements);
  return success();
}

} // namespace

onnx::NodeOp dlc::sequenceConstructOf(Value v) {
  auto producer = v ? v.getDefiningOp<onnx::NodeOp>() : onnx::NodeOp();
  if (producer && producer.getDomain().empty() &&
      producer.getOpType() == "SequenceConstruct")
    return producer;
  return {};
}

bool dlc::takesSequences(onnx::NodeOp node) {
  // A Loop clones its body with the values it carries, which may be
  // sequences; OptionalHasElement only looks at what made its input. (An If
  // reads only its condition; Scan's inputs are tensors.)
  return node.getDomain().empty() &&
         llvm::is_contained({"SequenceConstruct", "SequenceEmpty",
                             "SequenceInsert", "SequenceErase", "SequenceAt",
                             "SequenceLength", "ConcatFromSequence",
                             "SplitToSequence", "SequenceMap", "Loop",
                             "OptionalHasElement"},
                            node.getOpType());
}

void dlc::populateSequenceHandlers(HandlerRegistry &r) {
  r.add("SequenceConstruct", {11}, convertSequenceConstruct);
  r.add("SequenceEmpty", {11}, convertSequenceEmpty);
  r.add("SequenceInsert", {11}, convertSequenceInsert);
  r.add("SequenceErase", {11}, convertSequenceErase);
  r.add("SequenceAt", {11}, convertSequenceAt);
  r.add("SequenceLength", {11}, convertSequenceLength);
  r.add("ConcatFromSequence", {11}, convertConcatFromSequence);
  r.add("SplitToSequence", {11, 24}, convertSplitToSequence);
  r.add("SequenceMap", {17}, convertSequenceMap);
}
