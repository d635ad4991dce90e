//===- FormDispatches.cpp - the dlc-form-dispatches pass ------------------===//
//
// The fusion policy (docs/fusion.md) decides which ops share a kernel. Groups
// are kept in a union-find-like table; each keeps the invariant that only
// the results of its last op (the "output op") are used outside the group,
// so the output op is also the last group op in program order and the
// region can be placed right before it.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace dlc {
#define GEN_PASS_DEF_FORMDISPATCHES
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// How an op takes part in fusion.
enum class OpKind {
  Host,     ///< no kernel: constants, tensor.empty, reshapes
  Heavy,    ///< convolution, contraction, pooling: one per group
  Light,    ///< plain reductions (softmax/norm statistics)
  Cheap,    ///< elementwise, fill, transpose, broadcast, pad
  Isolated, ///< a kernel of its own (concat, slices, scatter, ...)
};

bool isAllParallel(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

OpKind classify(Operation *op) {
  if (isa<arith::ConstantOp, tensor::EmptyOp, tensor::CollapseShapeOp,
          tensor::ExpandShapeOp>(op))
    return OpKind::Host;
  if (isa<tensor::PadOp>(op))
    return OpKind::Cheap;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return OpKind::Isolated;
  if (linalg::isaContractionOpInterface(linalgOp) ||
      linalg::isaConvolutionOpInterface(linalgOp) ||
      isa<linalg::ConvolutionOpInterface, linalg::ContractionOpInterface>(op))
    return OpKind::Heavy;
  if (isAllParallel(linalgOp))
    return OpKind::Cheap;
  // Two inputs that both walk a reduced dim are multiplied together: a
  // contraction that upstream does not recognize as one (an integer matrix
  // product or 1x1 convolution with zero points as a third input).
  unsigned reducing = 0;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(input);
    for (unsigned d = 0; d < linalgOp.getNumLoops(); ++d)
      if (linalgOp.getIteratorTypesArray()[d] ==
              utils::IteratorType::reduction &&
          map.isFunctionOfDim(d)) {
        ++reducing;
        break;
      }
  }
  if (reducing >= 2)
    return OpKind::Heavy;
  // A reduction whose maps are plain projections is a statistics reduction;
  // anything with windows (d0 + d1) is treated like a convolution.
  for (AffineMap map : linalgOp.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return OpKind::Heavy;
  return OpKind::Light;
}

/// A fill of a constant into an empty tensor: free to recompute, so it is
/// cloned into every kernel that uses it instead of being a kernel.
bool isGenerator(Operation *op) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  if (!fill)
    return false;
  Operation *value = fill.getInputs()[0].getDefiningOp();
  Operation *init = fill.getOutputs()[0].getDefiningOp();
  return isa_and_nonnull<arith::ConstantOp>(value) &&
         isa_and_nonnull<tensor::EmptyOp>(init);
}

/// Whether `a` and `b` may share a kernel: both belong to the same branch
/// of a run-time condition (kBranchAttr) or both to none, so that
/// dlc-predicate-dispatches can skip a branch's kernels whole. (The op that
/// selects a branch's values belongs to the enclosing one.)
bool sameBranch(Operation *a, Operation *b) {
  return a->getAttr(dlc::kBranchAttr) == b->getAttr(dlc::kBranchAttr);
}

/// Whether `producer` computes the condition (first operand) of `user`, an
/// op that selects a branch's values (kSelectsAttr): the condition stays a
/// kernel result, where the branch's kernels can read it.
bool computesCondition(Operation *producer, Operation *user) {
  return user->hasAttr(dlc::kSelectsAttr) && user->getNumOperands() > 0 &&
         user->getOperand(0).getDefiningOp() == producer;
}

/// Whether `producer` and `user` may share a kernel as far as branches on
/// run-time conditions go.
bool branchesAllowFusion(Operation *producer, Operation *user) {
  return sameBranch(producer, user) && !computesCondition(producer, user);
}

bool isElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && isAllParallel(linalgOp) && classify(op) == OpKind::Cheap;
}

/// Whether `map` reads operand elements without dividing loop indices (a
/// nearest-neighbour upsample reads each element from several neighbouring
/// points). Fusing a producer through such a map makes neighbouring tiles
/// (GPU threads) recompute, and write, the same producer elements. A
/// broadcast (a reduction's result read along the reduced dims) is fine:
/// tiling keeps reduced dims whole.
bool readsWithoutDivision(AffineMap map, Type operandType) {
  // A dim split into blocks (`d floordiv K` and `d mod K` over a dim of
  // size K, a channels-last convolution's result read back in NCHW)
  // reads each element once: not a division in that sense.
  auto shaped = dyn_cast<ShapedType>(operandType);
  DenseMap<unsigned, int64_t> divisors, moduli;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
    auto k = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (!dim || !k)
      continue;
    if (bin.getKind() == AffineExprKind::FloorDiv)
      divisors[dim.getPosition()] = k.getValue();
    if (bin.getKind() == AffineExprKind::Mod && shaped &&
        shaped.hasStaticShape() && shaped.getDimSize(i) == k.getValue())
      moduli[dim.getPosition()] = k.getValue();
  }
  auto isSplit = [&](AffineExpr e) {
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return false;
    auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
    auto k = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (!dim || !k)
      return false;
    unsigned d = dim.getPosition();
    return divisors.lookup(d) == k.getValue() &&
           moduli.lookup(d) == k.getValue();
  };
  return llvm::none_of(map.getResults(), [&](AffineExpr e) {
    if (isSplit(e))
      return false;
    bool division = false;
    e.walk([&](AffineExpr sub) {
      division |= sub.getKind() == AffineExprKind::FloorDiv ||
                  sub.getKind() == AffineExprKind::CeilDiv ||
                  sub.getKind() == AffineExprKind::Mod;
    });
    return division;
  });
}

struct Group {
  SmallVector<Operation *> ops; ///< kept sorted in program order at the end
  Operation *output = nullptr;
  bool hasHeavy = false;
  bool alive = true;
};

/// Whether an op of `g` reads another op of `g` through a block split
/// (`c floordiv B`, `c mod B`: a channels-last convolution's blocked result
/// read back in NCHW).
bool readsBlockSplit(const Group &g) {
  llvm::SmallPtrSet<Operation *, 8> members(g.ops.begin(), g.ops.end());
  return llvm::any_of(g.ops, [&](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp)
      return false;
    return llvm::any_of(linalgOp->getOpOperands(), [&](OpOperand &use) {
      if (!members.contains(use.get().getDefiningOp()) ||
          !linalgOp.isDpsInput(&use))
        return false;
      bool division = false;
      for (AffineExpr e : linalgOp.getMatchingIndexingMap(&use).getResults())
        e.walk([&](AffineExpr sub) {
          division |= sub.getKind() == AffineExprKind::FloorDiv ||
                      sub.getKind() == AffineExprKind::Mod;
        });
      return division;
    });
  });
}

/// Whether `op` would be computed into the padding `user` (a tensor.pad).
/// A tile of a pad reads a slice of its source whose size depends on where
/// the tile lies (the padding edges): a computed source would need
/// temporaries of dynamic size, in a kernel tiled along the padded tensor
/// and in a convolution's kernel tiled along output rows alike (an input
/// normalization or a 16-bit Cast in front of a padded convolution of a
/// 224x224 image: a dynamic CPU scratch buffer, the whole image in every
/// GPU thread's private memory). Such a source is a kernel of its own; a
/// pad of a pad (or of an argument) reads memory and stays fused.
bool computedIntoPad(Operation *op, Operation *user) {
  return isa<tensor::PadOp>(user) && !isa<tensor::PadOp>(op);
}

/// Gives each NCHW convolution that reads a pad with other readers a copy
/// of the pad of its own, so that every such convolution pads its own tile
/// (prologue fusion joins a pad only to a group holding all its users). A
/// pad that several convolutions share (a detector's feature map read by
/// its box and class heads) would otherwise be a kernel of its own, written
/// to memory whole and read back, and its convolutions would read a
/// pre-padded input, which the CPU register tiler cannot lay out as one
/// flat run of rows (dlc-cpu-register-tile); the copy of a tile costs
/// little next to a 3x3 convolution's multiply-adds. Other readers (a
/// channels-last convolution, whose every workgroup would pad the whole
/// input) keep the shared pad.
void padPerConvolution(func::FuncOp func) {
  SmallVector<tensor::PadOp> pads;
  func.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
  for (tensor::PadOp pad : pads) {
    if (pad->hasOneUse())
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : pad->getUses())
      if (isa<linalg::Conv2DNchwFchwOp>(use.getOwner()))
        uses.push_back(&use);
    if (uses.empty())
      continue;
    // All readers convolutions: the last keeps the original.
    if (uses.size() == llvm::range_size(pad->getUses()))
      uses.pop_back();
    for (OpOperand *use : uses) {
      OpBuilder b(use->getOwner());
      use->set(b.clone(*pad)->getResult(0));
    }
  }
}

class DispatchFormer {
public:
  explicit DispatchFormer(func::FuncOp func) : func(func) {}

  /// Returns the number of dispatches formed.
  FailureOr<unsigned> run(unsigned &fusedOps);

private:
  Group &groupOf(Operation *op) { return groups[groupIndex.lookup(op)]; }
  bool inGroup(Operation *op) { return groupIndex.count(op); }
  /// True when every use of every result of `op` is inside `g`.
  bool usesOnlyIn(Operation *op, unsigned g);
  /// The groups through which every use of `producer`'s result other than
  /// `op`'s own reaches `op`: elementwise groups whose output only `op`
  /// uses (the sigmoid of x * sigmoid(x)). None when a use goes elsewhere.
  std::optional<SmallVector<unsigned>> sideGroups(Operation *producer,
                                                  Operation *op);
  /// Moves all ops of group `from` into group `to`.
  void merge(unsigned from, unsigned to, bool fromIsProducer);
  LogicalResult buildRegion(Group &g);

  func::FuncOp func;
  SmallVector<Group> groups;
  DenseMap<Operation *, unsigned> groupIndex;
  DenseMap<Operation *, unsigned> position;
};

bool DispatchFormer::usesOnlyIn(Operation *op, unsigned g) {
  bool any = false;
  for (Operation *user : op->getUsers()) {
    if (!inGroup(user) || groupIndex.lookup(user) != g)
      return false;
    any = true;
  }
  return any;
}

std::optional<SmallVector<unsigned>>
DispatchFormer::sideGroups(Operation *producer, Operation *op) {
  SmallVector<unsigned> sides;
  unsigned self = groupIndex.lookup(producer);
  for (OpOperand &use : producer->getResult(0).getUses()) {
    Operation *user = use.getOwner();
    if (user == op)
      continue;
    if (!inGroup(user))
      return std::nullopt;
    unsigned g = groupIndex.lookup(user);
    Group &side = groups[g];
    if (g == self || !side.alive || side.hasHeavy ||
        !sameBranch(side.output, producer) ||
        !llvm::all_of(side.ops, [](Operation *o) { return isElementwise(o); }))
      return std::nullopt;
    Operation *out = side.output;
    if (out->getNumResults() != 1 ||
        !llvm::all_of(out->getUsers(), [&](Operation *u) { return u == op; }))
      return std::nullopt;
    if (!readsWithoutDivision(
            cast<linalg::LinalgOp>(user).getMatchingIndexingMap(&use),
            use.get().getType()))
      return std::nullopt;
    if (!llvm::is_contained(sides, g))
      sides.push_back(g);
  }
  return sides;
}

void DispatchFormer::merge(unsigned from, unsigned to, bool fromIsProducer) {
  Group &src = groups[from];
  Group &dst = groups[to];
  for (Operation *op : src.ops) {
    dst.ops.push_back(op);
    groupIndex[op] = to;
  }
  dst.hasHeavy |= src.hasHeavy;
  if (!fromIsProducer)
    dst.output = src.output;
  src.ops.clear();
  src.alive = false;
}

FailureOr<unsigned> DispatchFormer::run(unsigned &fusedOps) {
  SmallVector<Operation *> computeOps;
  unsigned index = 0;
  for (Operation &op : func.getBody().front()) {
    position[&op] = index++;
    if (op.hasTrait<OpTrait::IsTerminator>() || op.getNumResults() == 0)
      continue;
    OpKind kind = classify(&op);
    if (kind == OpKind::Host)
      continue;
    if (isGenerator(&op) && llvm::none_of(op.getUsers(), [](Operation *u) {
          return u->hasTrait<OpTrait::IsTerminator>();
        }))
      continue;
    if (llvm::any_of(op.getResultTypes(),
                     [](Type t) { return !isa<RankedTensorType>(t); }))
      return op.emitError("cannot place an op with non-tensor results in a "
                          "kernel"),
             failure();
    groupIndex[&op] = groups.size();
    Group g;
    g.ops.push_back(&op);
    g.output = &op;
    g.hasHeavy = kind == OpKind::Heavy;
    groups.push_back(std::move(g));
    computeOps.push_back(&op);
  }

  auto fusable = [](Operation *op) {
    OpKind k = classify(op);
    return k == OpKind::Heavy || k == OpKind::Light || k == OpKind::Cheap;
  };

  // 1. Epilogue fusion, in program order so chains grow forward.
  for (Operation *op : computeOps) {
    if (!isElementwise(op))
      continue;
    unsigned self = groupIndex.lookup(op);
    if (groups[self].ops.size() != 1)
      continue;
    // Prefer a heavy producer, then the one defined last: the others are
    // plain inputs or join through the prologue rule.
    // A producer whose result `op` also reads through other elementwise
    // groups (x * sigmoid(x), x * relu6(x + 3) / 6) takes those groups too.
    Operation *best = nullptr;
    SmallVector<unsigned> bestSides;
    for (OpOperand &use : op->getOpOperands()) {
      Operation *producer = use.get().getDefiningOp();
      if (!producer || !inGroup(producer) || !fusable(producer))
        continue;
      if (!readsWithoutDivision(
              cast<linalg::LinalgOp>(op).getMatchingIndexingMap(&use),
              use.get().getType()))
        continue;
      Group &pg = groupOf(producer);
      if (pg.output != producer || producer->getNumResults() != 1 ||
          !branchesAllowFusion(producer, op))
        continue;
      // A repack for dot products (dlc-cpu-int8-conv) after a channels-last
      // convolution would become the kernel's root, and a tile of its
      // channels reaches the convolution's blocks only through the split,
      // which tiling cannot slice: every workgroup would compute the whole
      // convolution. It stays a kernel of its own.
      if (op->hasAttr(dlc::kMaterializeAttr) && readsBlockSplit(pg))
        continue;
      std::optional<SmallVector<unsigned>> sides = sideGroups(producer, op);
      if (!sides)
        continue;
      // A heavy producer (conv, matmul) wins over cheap ones, which then
      // join as prologue (per-channel BatchNorm parameters computed at
      // run time); among equals, the latest.
      auto rank = [&](Operation *o) {
        return std::make_pair(groupOf(o).hasHeavy, position[o]);
      };
      if (!best || rank(producer) > rank(best)) {
        best = producer;
        bestSides = *sides;
      }
    }
    if (best) {
      unsigned target = groupIndex.lookup(best);
      for (unsigned side : bestSides)
        merge(side, target, /*fromIsProducer=*/true);
      merge(self, target, /*fromIsProducer=*/false);
    }
  }

  // 2. Prologue fusion of cheap ops, in reverse so chains grow backward.
  for (Operation *op : llvm::reverse(computeOps)) {
    if (classify(op) != OpKind::Cheap || op->hasAttr(dlc::kMaterializeAttr))
      continue;
    unsigned self = groupIndex.lookup(op);
    Group &g = groups[self];
    if (g.ops.size() != 1)
      continue;
    if (op->use_empty())
      continue;
    Operation *user = *op->getUsers().begin();
    if (!inGroup(user) || !fusable(user) || !branchesAllowFusion(op, user))
      continue;
    unsigned target = groupIndex.lookup(user);
    if (computedIntoPad(op, user))
      continue;
    if (target != self && usesOnlyIn(op, target))
      merge(self, target, /*fromIsProducer=*/true);
  }

  // 3. Groups without heavy ops join the single group using their output.
  for (Operation *op : llvm::reverse(computeOps)) {
    unsigned self = groupIndex.lookup(op);
    Group &g = groups[self];
    if (!g.alive || g.output != op || g.hasHeavy || op->use_empty())
      continue;
    Operation *user = *op->getUsers().begin();
    if (!inGroup(user) || !fusable(user) || !branchesAllowFusion(op, user))
      continue;
    unsigned target = groupIndex.lookup(user);
    // Only the output is used outside a group, so its uses decide.
    if (target == self || groups[target].hasHeavy ||
        computedIntoPad(op, user) ||
        !llvm::all_of(g.ops, [&](Operation *o) { return fusable(o); }))
      continue;
    if (usesOnlyIn(op, target))
      merge(self, target, /*fromIsProducer=*/true);
  }

  unsigned count = 0;
  for (Group &g : groups) {
    if (!g.alive)
      continue;
    llvm::sort(g.ops, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    fusedOps += g.ops.size();
    if (failed(buildRegion(g)))
      return failure();
    ++count;
  }
  return count;
}

/// Whether `v`'s defining op is cloned into every region that uses it.
bool isClonedIntoRegion(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def) || isGenerator(def))
    return true;
  auto cst = dyn_cast<arith::ConstantOp>(def);
  if (!cst)
    return false;
  auto type = dyn_cast<ShapedType>(cst.getType());
  if (!type)
    return true;
  // Splats fold into the ops that use them; any other tensor is a kernel
  // operand (GPU kernels cannot hold constant arrays of their own).
  if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
    return dense.isSplat();
  return false;
}

LogicalResult DispatchFormer::buildRegion(Group &g) {
  llvm::SmallPtrSet<Operation *, 16> members(g.ops.begin(), g.ops.end());
  // Everything the group reads from outside, in first-use order.
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> clones;
  // Empty tensors read from outside carry no data: the kernel makes its own
  // (a buffer of zero bytes is no kernel argument any target can take).
  llvm::SetVector<Value> empties;
  for (Operation *op : g.ops) {
    auto visit = [&](Value v) {
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && t.hasStaticShape() && t.getNumElements() == 0) {
        empties.insert(v);
        return;
      }
      Operation *def = v.getDefiningOp();
      // Values defined by group members (or inside them) stay internal.
      if (def &&
          members.contains(func.getBody().front().findAncestorOpInBlock(*def)))
        return;
      if (isClonedIntoRegion(v)) {
        // A clone's own operands (a fill's value and init) come first.
        for (Value operand : def->getOperands())
          if (isClonedIntoRegion(operand))
            clones.insert(operand.getDefiningOp());
        clones.insert(def);
        return;
      }
      inputs.insert(v);
    };
    for (Value v : op->getOperands())
      visit(v);
    // Values captured by nested regions (e.g. gathers' tensor.extract).
    for (Region &region : op->getRegions()) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(region, captured);
      for (Value v : captured)
        visit(v);
    }
  }

  OpBuilder b(g.output);
  SmallVector<Type> inputTypes;
  for (Value v : inputs)
    inputTypes.push_back(v.getType());
  auto dispatch = dlc::DispatchOp::create(
      b, g.output->getLoc(), g.output->getResultTypes(), inputs.getArrayRef());
  Block *body = new Block();
  dispatch.getBody().push_back(body);
  IRMapping map;
  for (Value v : inputs)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Value v : empties) {
    auto t = cast<RankedTensorType>(v.getType());
    map.map(v, tensor::EmptyOp::create(inner, v.getLoc(), t.getShape(),
                                       t.getElementType()));
  }
  for (Operation *c : clones)
    inner.clone(*c, map);
  for (Operation *op : g.ops)
    inner.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value r : g.output->getResults())
    yielded.push_back(map.lookup(r));
  dlc::YieldOp::create(inner, g.output->getLoc(), yielded);

  g.output->replaceAllUsesWith(dispatch.getResults());
  for (Operation *op : llvm::reverse(g.ops)) {
    if (!op->use_empty())
      return op->emitError("internal error: a fused op is still used outside "
                           "its dispatch region");
    op->erase();
  }
  return success();
}

bool isEmptyTensor(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  return type && type.hasStaticShape() && type.getNumElements() == 0;
}

/// Values with no elements need no kernel: they become tensor.empty, which
/// the host plan gives a buffer of size zero.
void replaceEmptyResults(func::FuncOp func) {
  for (Operation &op : llvm::make_early_inc_range(
           func.getBody().front().without_terminator())) {
    if (isa<tensor::EmptyOp>(op) || op.getNumResults() == 0 ||
        !llvm::all_of(op.getResultTypes(), isEmptyTensor) ||
        !isMemoryEffectFree(&op))
      continue;
    OpBuilder b(&op);
    for (OpResult r : op.getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      r.replaceAllUsesWith(tensor::EmptyOp::create(
          b, op.getLoc(), type.getShape(), type.getElementType()));
    }
    op.erase();
  }
}

/// Every graph output must be written by a kernel into a buffer of its own:
/// outputs that are graph inputs, constants, or repeat another output get a
/// copy kernel.
unsigned materializeOutputs(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::DenseSet<Value> seen;
  unsigned copies = 0;
  for (OpOperand &operand : ret->getOpOperands()) {
    Value root = operand.get();
    while (Operation *def = root.getDefiningOp()) {
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
        break;
      root = def->getOperand(0);
    }
    if (isEmptyTensor(root.getType()))
      continue;
    bool computed = isa_and_nonnull<dlc::DispatchOp>(root.getDefiningOp());
    if (computed && seen.insert(root).second)
      continue;
    Value v = operand.get();
    auto type = cast<RankedTensorType>(v.getType());
    OpBuilder b(ret);
    auto dispatch = dlc::DispatchOp::create(b, ret.getLoc(), TypeRange{type},
                                            ValueRange{v});
    Block *body = new Block();
    dispatch.getBody().push_back(body);
    Value in = body->addArgument(type, v.getLoc());
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    Value init = tensor::EmptyOp::create(inner, ret.getLoc(), type.getShape(),
                                         type.getElementType());
    Value copy =
        linalg::CopyOp::create(inner, ret.getLoc(), in, init).getResult(0);
    dlc::YieldOp::create(inner, ret.getLoc(), copy);
    operand.set(dispatch.getResult(0));
    seen.insert(dispatch.getResult(0));
    ++copies;
  }
  return copies;
}

struct FormDispatchesPass
    : public dlc::impl::FormDispatchesBase<FormDispatchesPass> {
  void runOnOperation() override {
    unsigned fused = 0;
    replaceEmptyResults(getOperation());
    padPerConvolution(getOperation());
    DispatchFormer former(getOperation());
    FailureOr<unsigned> count = former.run(fused);
    if (failed(count))
      return signalPassFailure();
    numDispatches += *count + materializeOutputs(getOperation());
    numFusedOps += fused;
  }
};

} // namespace
