//===- GPUPromoteShared.cpp - the dlc-gpu-promote-shared pass -------------===//
//
// After tiling and bufferization a GPU kernel is a workgroup loop around a
// thread loop, and each thread runs its own copy of the contraction
// (matmul, convolution) on its window of the inputs: neighbouring threads
// read the same input elements again from global memory, and a padded
// convolution first gathers its whole window into private memory. This
// pass stages those windows through workgroup (shared) memory: the threads
// of a workgroup load the union of their windows together, one element
// each in turn, wait at a barrier, then compute from shared memory. Large
// reductions are split into steps (a K loop) so that the staged tiles fit
// the shared-memory budget.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace dlc {
#define GEN_PASS_DEF_GPUPROMOTESHARED
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Coefficients of each thread loop variable in an index value.
using Coeffs = SmallVector<int64_t>;

bool isZero(ArrayRef<int64_t> c) {
  return llvm::all_of(c, [](int64_t x) { return x == 0; });
}

/// The op that defines `v` or whose region has it as an argument.
Operation *ownerOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner()->getParentOp();
  return v.getDefiningOp();
}

/// Whether `v` is defined outside `threads` (the same for every thread).
bool isOutside(Value v, scf::ForallOp threads) {
  return !threads->isAncestor(ownerOf(v));
}

/// The coefficient of each dim and symbol of a linear affine expression,
/// or nothing when `e` is not linear (divisions, products of variables).
std::optional<SmallVector<int64_t>> linearCoeffs(AffineExpr e, unsigned dims,
                                                 unsigned symbols) {
  SmallVector<int64_t> c(dims + symbols, 0);
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    c[d.getPosition()] = 1;
    return c;
  }
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    c[dims + s.getPosition()] = 1;
    return c;
  }
  if (isa<AffineConstantExpr>(e))
    return c;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    auto l = linearCoeffs(bin.getLHS(), dims, symbols);
    auto r = linearCoeffs(bin.getRHS(), dims, symbols);
    if (!l || !r)
      return std::nullopt;
    for (unsigned i = 0; i < c.size(); ++i)
      c[i] = (*l)[i] + (*r)[i];
    return c;
  }
  if (e.getKind() == AffineExprKind::Mul) {
    AffineExpr var = bin.getLHS(), k = bin.getRHS();
    if (isa<AffineConstantExpr>(var))
      std::swap(var, k);
    auto constant = dyn_cast<AffineConstantExpr>(k);
    auto l = linearCoeffs(var, dims, symbols);
    if (!constant || !l)
      return std::nullopt;
    for (auto [x, y] : llvm::zip(c, *l))
      x = y * constant.getValue();
    return c;
  }
  return std::nullopt;
}

/// The thread loop variables' coefficients in `v`, when `v` is a
/// thread-invariant value plus a linear combination of them.
std::optional<Coeffs> threadCoeffs(Value v, scf::ForallOp threads) {
  unsigned n = threads.getRank();
  Coeffs zero(n, 0);
  if (isOutside(v, threads))
    return zero;
  for (auto [k, iv] : llvm::enumerate(threads.getInductionVars()))
    if (v == iv) {
      zero[k] = 1;
      return zero;
    }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return zero;
  auto apply = dyn_cast<affine::AffineApplyOp>(def);
  if (!apply)
    return std::nullopt;
  SmallVector<Coeffs> operands;
  for (Value o : apply.getMapOperands()) {
    std::optional<Coeffs> c = threadCoeffs(o, threads);
    if (!c)
      return std::nullopt;
    operands.push_back(*c);
  }
  if (llvm::all_of(operands, [](const Coeffs &c) { return isZero(c); }))
    return zero;
  AffineMap map = apply.getAffineMap();
  auto lin =
      linearCoeffs(map.getResult(0), map.getNumDims(), map.getNumSymbols());
  if (!lin)
    return std::nullopt;
  for (auto [p, c] : llvm::enumerate(operands))
    for (unsigned k = 0; k < n; ++k)
      zero[k] += (*lin)[p] * c[k];
  return zero;
}

/// Rebuilds `v` as it is for thread 0 (every thread loop variable zero);
/// values outside the thread loop are used as they are.
Value atThreadZero(OpBuilder &b, Value v, scf::ForallOp threads,
                   IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  if (isOutside(v, threads))
    return v;
  Operation *def = v.getDefiningOp();
  assert(def && "thread loop variables are mapped up front");
  for (Value o : def->getOperands())
    (void)atThreadZero(b, o, threads, map);
  Operation *clone = b.clone(*def, map);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

/// One input of a contraction that the workgroup stages in shared memory.
/// Thread t reads `window` elements at `base + sum_k coeffs[d][k] * t_k`
/// along each dim d; `footprint` is the union over the workgroup's
/// threads.
struct Staged {
  unsigned operand;               ///< operand number in the contraction
  SmallVector<int64_t> window;    ///< one thread's shape
  SmallVector<Coeffs> coeffs;     ///< per dim, per thread loop
  SmallVector<int64_t> footprint; ///< the workgroup's shape
  int64_t reducedDim = -1;        ///< dim the K loop steps along
  // Where the elements come from: a buffer outside the thread loop read at
  // `offsets` (thread 0's), or the elementwise producer that fills a
  // private window.
  Value source;
  SmallVector<OpFoldResult> offsets;
  linalg::GenericOp producer;
};

int64_t product(ArrayRef<int64_t> shape) {
  int64_t p = 1;
  for (int64_t s : shape)
    p *= s;
  return p;
}

/// An input read through a subview of a buffer defined outside the thread
/// loop, at offsets linear in the thread loop variables.
std::optional<Staged> stagedSubview(Value input, scf::ForallOp threads) {
  unsigned n = threads.getRank();
  auto type = dyn_cast<MemRefType>(input.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Staged s;
  s.window.assign(type.getShape().begin(), type.getShape().end());
  if (isOutside(input, threads)) {
    // Every thread reads the same buffer (a filter sliced per workgroup).
    s.source = input;
    s.coeffs.assign(type.getRank(), Coeffs(n, 0));
    s.offsets.assign(type.getRank(), OpFoldResult());
    return s;
  }
  auto subview = input.getDefiningOp<memref::SubViewOp>();
  if (!subview || !isOutside(subview.getSource(), threads) ||
      subview.getSourceType().getRank() != type.getRank() ||
      !llvm::all_of(subview.getStaticStrides(),
                    [](int64_t x) { return x == 1; }))
    return std::nullopt;
  s.source = subview.getSource();
  for (OpFoldResult o : subview.getMixedOffsets()) {
    Coeffs c(n, 0);
    if (auto v = dyn_cast<Value>(o)) {
      std::optional<Coeffs> tc = threadCoeffs(v, threads);
      if (!tc)
        return std::nullopt;
      c = *tc;
    }
    s.coeffs.push_back(c);
    s.offsets.push_back(o);
  }
  return s;
}

/// An input that an elementwise producer without inputs (the gather a
/// padded convolution reads) writes into a private buffer, where the
/// producer sees thread t's window at `linalg.index d + sum_k c[d][k] * t_k`
/// and nothing else of the thread: its value at footprint index j is its
/// body with the thread variables zero and `linalg.index d` = j_d.
std::optional<Staged> stagedProducer(Value input, Operation *consumer,
                                     scf::ForallOp threads) {
  unsigned n = threads.getRank();
  auto alloca = input.getDefiningOp<memref::AllocaOp>();
  if (!alloca || !alloca.getType().hasStaticShape())
    return std::nullopt;
  linalg::GenericOp producer;
  for (Operation *user : alloca->getUsers()) {
    if (user == consumer)
      continue;
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (producer || !g || g.getNumDpsInputs() != 0 || g.getNumDpsInits() != 1 ||
        g.getDpsInits()[0] != input || g->getBlock() != consumer->getBlock() ||
        !g->isBeforeInBlock(consumer) ||
        g.getNumParallelLoops() != g.getNumLoops() ||
        !g.getIndexingMapsArray()[0].isIdentity())
      return std::nullopt;
    producer = g;
  }
  if (!producer)
    return std::nullopt;
  Block &body = producer.getRegion().front();
  if (!body.getArgument(0).use_empty())
    return std::nullopt;
  unsigned rank = alloca.getType().getRank();
  SmallVector<std::optional<Coeffs>> coeffs(rank);
  DenseSet<Value> threadIndices; // linalg.index values offset by threads
  bool ok = true;
  producer.walk([&](Operation *op) {
    if (op == producer.getOperation())
      return;
    for (Value v : op->getOperands()) {
      if (isOutside(v, threads) || producer->isAncestor(ownerOf(v)))
        continue;
      // A value of the thread loop's body: only zero-coefficient values and
      // the loop variables (handled below) may be used.
      if (llvm::is_contained(threads.getInductionVars(), v))
        continue;
      std::optional<Coeffs> c = threadCoeffs(v, threads);
      if (!c || !isZero(*c))
        ok = false;
    }
    bool usesThread = llvm::any_of(op->getOperands(), [&](Value v) {
      return llvm::is_contained(threads.getInductionVars(), v);
    });
    if (!usesThread)
      return;
    // thread offset + linalg.index d: record the offset's coefficients.
    auto apply = dyn_cast<affine::AffineApplyOp>(op);
    if (!apply) {
      ok = false;
      return;
    }
    AffineMap map = apply.getAffineMap();
    auto lin =
        linearCoeffs(map.getResult(0), map.getNumDims(), map.getNumSymbols());
    if (!lin) {
      ok = false;
      return;
    }
    Coeffs c(n, 0);
    std::optional<int64_t> dim;
    for (auto [p, o] : llvm::enumerate(apply.getMapOperands())) {
      if (auto index = o.getDefiningOp<linalg::IndexOp>()) {
        if (dim || (*lin)[p] != 1) {
          ok = false;
          return;
        }
        dim = index.getDim();
        threadIndices.insert(o);
        continue;
      }
      for (auto [k, iv] : llvm::enumerate(threads.getInductionVars()))
        if (o == iv)
          c[k] += (*lin)[p];
    }
    if (!dim || (coeffs[*dim] && *coeffs[*dim] != c)) {
      ok = false;
      return;
    }
    coeffs[*dim] = c;
  });
  // An index the thread offsets must be used with its offset everywhere.
  for (Value index : threadIndices)
    for (Operation *user : index.getUsers())
      if (!isa<affine::AffineApplyOp>(user) ||
          !llvm::any_of(user->getOperands(), [&](Value v) {
            return llvm::is_contained(threads.getInductionVars(), v);
          }))
        ok = false;
  if (!ok)
    return std::nullopt;
  Staged s;
  s.producer = producer;
  s.window.assign(alloca.getType().getShape().begin(),
                  alloca.getType().getShape().end());
  for (unsigned d = 0; d < rank; ++d)
    s.coeffs.push_back(coeffs[d].value_or(Coeffs(n, 0)));
  return s;
}

/// Tiles `kernel`'s thread loop contractions through shared memory.
class Promoter {
public:
  Promoter(scf::ForallOp threads, Attribute space, int64_t budget)
      : threads(threads), space(space), budget(budget) {
    for (OpFoldResult ub : threads.getMixedUpperBound())
      tripCounts.push_back(getConstantIntValue(ub).value_or(0));
  }

  void run() {
    if (!threads.isNormalized() || llvm::is_contained(tripCounts, 0))
      return;
    SmallVector<linalg::LinalgOp> contractions;
    for (Operation &op : threads.getBody()->without_terminator())
      if (auto l = dyn_cast<linalg::LinalgOp>(op))
        if (l.hasPureBufferSemantics() && l.getNumReductionLoops() > 0 &&
            !l.hasIndexSemantics() &&
            !ShapedType::isDynamicShape(l.getStaticLoopRanges()))
          contractions.push_back(l);
    for (linalg::LinalgOp l : contractions)
      promote(l);
  }

private:
  scf::ForallOp threads;
  Attribute space;
  int64_t budget;
  SmallVector<int64_t> tripCounts;

  int64_t numThreads() const { return product(tripCounts); }

  /// Elements all threads read together over what the footprint holds.
  double reuse(const Staged &s) const {
    return static_cast<double>(numThreads() * product(s.window)) /
           static_cast<double>(product(s.footprint));
  }

  /// Stages the inputs of contraction `op` that threads reuse in workgroup
  /// memory, stepping through a reduction loop within the budget.
  void promote(linalg::LinalgOp op);
  /// The inputs of `op` worth staging, with footprints over the whole
  /// reduction.
  SmallVector<Staged, 2> candidates(linalg::LinalgOp op);
  /// The reduction loop to step through (-1: none): one that every operand
  /// indexes as a plain dim (or not at all) and no staged operand's threads
  /// move along; the longest such.
  int64_t steppedLoop(linalg::LinalgOp op, ArrayRef<Staged> staged);
  /// The longest step of loop `reduced` (of `total` trips) whose staged
  /// tiles fit the budget, dropping the operands that gain the least until
  /// one does (`staged` may end empty).
  int64_t fitStep(linalg::LinalgOp op, SmallVectorImpl<Staged> &staged,
                  int64_t reduced, int64_t total);
  /// Rewrites `op` to read `staged` from workgroup buffers, filled by all
  /// threads at each step of loop `reduced`.
  void stage(linalg::LinalgOp op, ArrayRef<Staged> staged, int64_t reduced,
             int64_t step, int64_t total);
  Value threadLinearId(OpBuilder &b, Location loc);
  SmallVector<Value> sourceOffsets(OpBuilder &b, Location loc, const Staged &s);
  void fill(OpBuilder &b, Location loc, const Staged &s, Value buffer,
            ArrayRef<Value> bases, Value threadId, Value k0);
};

Value Promoter::threadLinearId(OpBuilder &b, Location loc) {
  Value id = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [iv, n] : llvm::zip(threads.getInductionVars(), tripCounts)) {
    id = arith::MulIOp::create(b, loc, id,
                               arith::ConstantIndexOp::create(b, loc, n));
    id = arith::AddIOp::create(b, loc, id, iv);
  }
  return id;
}

/// Thread 0's offsets into the source of `s` (the footprint's start);
/// none for a staged producer.
SmallVector<Value> Promoter::sourceOffsets(OpBuilder &b, Location loc,
                                           const Staged &s) {
  SmallVector<Value> bases;
  if (s.producer)
    return bases;
  IRMapping map;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (Value iv : threads.getInductionVars())
    map.map(iv, zero);
  for (OpFoldResult o : s.offsets) {
    if (!o)
      bases.push_back(zero);
    else if (auto v = dyn_cast<Value>(o))
      bases.push_back(atThreadZero(b, v, threads, map));
    else
      bases.push_back(getValueOrCreateConstantIndexOp(b, loc, o));
  }
  return bases;
}

/// All threads together fill `buffer` (the footprint of `s`, at reduction
/// step `k0`): thread i (`threadId`) takes elements i, i + threads, ...
void Promoter::fill(OpBuilder &b, Location loc, const Staged &s, Value buffer,
                    ArrayRef<Value> bases, Value threadId, Value k0) {
  Value total = arith::ConstantIndexOp::create(b, loc, product(s.footprint));
  Value step = arith::ConstantIndexOp::create(b, loc, numThreads());
  auto loop = scf::ForOp::create(b, loc, threadId, total, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  // Footprint index of the element (row-major).
  SmallVector<Value> at(s.footprint.size());
  Value rest = loop.getInductionVar();
  for (int64_t d = s.footprint.size() - 1; d >= 0; --d) {
    Value size = arith::ConstantIndexOp::create(b, loc, s.footprint[d]);
    at[d] = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size);
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  // Where it is in the operand's coordinates: plus the reduction step.
  SmallVector<Value> pos(at);
  if (s.reducedDim >= 0)
    pos[s.reducedDim] =
        arith::AddIOp::create(b, loc, pos[s.reducedDim], k0).getResult();
  Value value;
  if (linalg::GenericOp producer = s.producer) {
    IRMapping map;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (Value iv : threads.getInductionVars())
      map.map(iv, zero);
    Block &body = producer.getRegion().front();
    for (Operation &op : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        map.map(index.getResult(), pos[index.getDim()]);
        continue;
      }
      b.clone(op, map);
    }
    value = map.lookupOrDefault(
        cast<linalg::YieldOp>(body.getTerminator()).getOperand(0));
  } else {
    SmallVector<Value> indices;
    for (auto [base, p] : llvm::zip(bases, pos))
      indices.push_back(arith::AddIOp::create(b, loc, base, p));
    value = memref::LoadOp::create(b, loc, s.source, indices);
  }
  memref::StoreOp::create(b, loc, value, buffer, at);
}

SmallVector<Staged, 2> Promoter::candidates(linalg::LinalgOp op) {
  SmallVector<Staged, 2> staged;
  for (OpOperand *input : op.getDpsInputOperands()) {
    // Shape-only operands (a pooling window) are never read.
    if (!op.payloadUsesValueFromOperand(input))
      continue;
    std::optional<Staged> s = stagedSubview(input->get(), threads);
    if (!s)
      s = stagedProducer(input->get(), op, threads);
    if (!s)
      continue;
    Type element = cast<MemRefType>(input->get().getType()).getElementType();
    if (!element.isF32() && !element.isF16() && !element.isInteger(32))
      continue;
    s->operand = input->getOperandNumber();
    // Threads walking backwards (negative coefficients) are not staged.
    bool forward = true;
    for (auto [d, w] : llvm::enumerate(s->window)) {
      int64_t extent = w;
      for (auto [c, n] : llvm::zip(s->coeffs[d], tripCounts)) {
        forward &= c >= 0;
        extent += c * (n - 1);
      }
      s->footprint.push_back(extent);
    }
    if (!forward)
      continue;
    if (reuse(*s) < 2.0)
      continue;
    staged.push_back(std::move(*s));
  }
  return staged;
}

int64_t Promoter::steppedLoop(linalg::LinalgOp op, ArrayRef<Staged> staged) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t reduced = -1;
  for (unsigned r = 0; r < iterators.size(); ++r) {
    if (iterators[r] != utils::IteratorType::reduction || ranges[r] <= 1)
      continue;
    bool plain = true;
    for (AffineMap m : maps)
      for (AffineExpr e : m.getResults())
        if (e.isFunctionOfDim(r) && !isa<AffineDimExpr>(e))
          plain = false;
    for (const Staged &s : staged)
      for (auto [d, e] : llvm::enumerate(maps[s.operand].getResults()))
        if (e.isFunctionOfDim(r) && !isZero(s.coeffs[d]))
          plain = false;
    if (plain && (reduced < 0 || ranges[r] > ranges[reduced]))
      reduced = r;
  }
  return reduced;
}

int64_t Promoter::fitStep(linalg::LinalgOp op, SmallVectorImpl<Staged> &staged,
                          int64_t reduced, int64_t total) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto elementBytes = [&](const Staged &s) {
    return static_cast<int64_t>(
        cast<MemRefType>(op->getOperand(s.operand).getType())
            .getElementTypeBitWidth() /
        8);
  };
  // Bytes of one reduction step of `s` per iteration of the reduced loop
  // (all of it when the loop does not index `s`).
  auto bytesFor = [&](const Staged &s, int64_t step) {
    int64_t elements = product(s.footprint);
    if (reduced >= 0)
      for (auto [d, e] : llvm::enumerate(maps[s.operand].getResults()))
        if (e.isFunctionOfDim(reduced))
          elements = elements / s.footprint[d] * step;
    return elements * elementBytes(s);
  };
  // The longest step that fits the budget; drop the operands that gain the
  // least until one does.
  int64_t step = 0;
  while (!staged.empty()) {
    for (int64_t t = total; t >= 1; --t) {
      if (total % t)
        continue;
      int64_t bytes = 0;
      for (const Staged &s : staged)
        bytes += bytesFor(s, t);
      if (bytes <= budget) {
        step = t;
        break;
      }
    }
    if (step)
      break;
    auto worst =
        llvm::min_element(staged, [&](const Staged &a, const Staged &b) {
          return reuse(a) < reuse(b);
        });
    staged.erase(worst);
  }
  return step;
}

void Promoter::promote(linalg::LinalgOp op) {
  SmallVector<Staged, 2> staged = candidates(op);
  if (staged.empty())
    return;
  // The reduction loop to step through, and the longest step that fits.
  int64_t reduced = steppedLoop(op, staged);
  int64_t total = reduced >= 0 ? op.getStaticLoopRanges()[reduced] : int64_t(1);
  int64_t step = fitStep(op, staged, reduced, total);
  if (staged.empty())
    return;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (Staged &s : staged)
    if (reduced >= 0)
      for (auto [d, e] : llvm::enumerate(maps[s.operand].getResults()))
        if (e.isFunctionOfDim(reduced)) {
          s.reducedDim = d;
          s.footprint[d] = step;
          s.window[d] = step;
        }
  stage(op, staged, reduced, step, total);
}

void Promoter::stage(linalg::LinalgOp op, ArrayRef<Staged> staged,
                     int64_t reduced, int64_t step, int64_t total) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Location loc = op.getLoc();
  OpBuilder b(op);
  MLIRContext *ctx = op.getContext();
  SmallVector<Value> buffers;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(threads.getBody());
    for (const Staged &s : staged) {
      auto type = cast<MemRefType>(op->getOperand(s.operand).getType());
      buffers.push_back(memref::AllocOp::create(
          b, loc,
          MemRefType::get(s.footprint, type.getElementType(),
                          MemRefLayoutAttrInterface(), space)));
    }
  }
  // What every step shares: the thread's linear id, the sources' offsets.
  Value threadId = threadLinearId(b, loc);
  SmallVector<SmallVector<Value>> bases;
  for (const Staged &s : staged)
    bases.push_back(sourceOffsets(b, loc, s));
  // One reduction step: fill, wait, compute on the staged tiles (and the
  // step's slice of the other inputs), wait before the next fill.
  bool looped = step < total;
  auto body = [&](OpBuilder &b, Value k0) {
    for (auto [s, buffer, base] : llvm::zip(staged, buffers, bases))
      fill(b, loc, s, buffer, base, threadId, k0);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> operands(op->getOperands());
    for (OpOperand *input : op.getDpsInputOperands()) {
      unsigned n = input->getOperandNumber();
      const Staged *s = llvm::find_if(
          staged, [&](const Staged &x) { return x.operand == n; });
      if (s != staged.end()) {
        Value buffer = buffers[s - staged.begin()];
        SmallVector<OpFoldResult> offsets;
        for (const Coeffs &c : s->coeffs) {
          AffineExpr e = getAffineConstantExpr(0, ctx);
          for (unsigned k = 0; k < c.size(); ++k)
            e = e + getAffineDimExpr(k, ctx) * c[k];
          offsets.push_back(affine::makeComposedFoldedAffineApply(
              b, loc, AffineMap::get(c.size(), 0, e),
              getAsOpFoldResult(ValueRange(threads.getInductionVars()))));
        }
        SmallVector<OpFoldResult> sizes =
            getAsIndexOpFoldResult(ctx, s->window);
        SmallVector<OpFoldResult> strides(s->window.size(), b.getIndexAttr(1));
        operands[n] =
            memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
        continue;
      }
      if (!looped)
        continue;
      // An input not staged: its slice for this step.
      auto type = cast<MemRefType>(input->get().getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(ctx, type.getShape());
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      for (auto [d, e] : llvm::enumerate(maps[n].getResults()))
        if (e.isFunctionOfDim(reduced)) {
          offsets[d] = k0;
          sizes[d] = b.getIndexAttr(step);
        }
      operands[n] = memref::SubViewOp::create(b, loc, input->get(), offsets,
                                              sizes, strides);
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    if (looped)
      gpu::BarrierOp::create(b, loc);
  };
  if (looped) {
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, total);
    Value st = arith::ConstantIndexOp::create(b, loc, step);
    auto loop = scf::ForOp::create(b, loc, lb, ub, st);
    OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
    body(inner, loop.getInductionVar());
  } else {
    body(b, arith::ConstantIndexOp::create(b, loc, 0));
  }
  SmallVector<Operation *> dead;
  for (const Staged &s : staged)
    if (s.producer)
      dead.push_back(s.producer);
  op->erase();
  for (Operation *p : dead) {
    Value window = cast<linalg::GenericOp>(p).getDpsInits()[0];
    p->erase();
    if (window.use_empty())
      window.getDefiningOp()->erase();
  }
}

struct GPUPromoteSharedPass
    : public dlc::impl::GPUPromoteSharedBase<GPUPromoteSharedPass> {
  using Base::Base;
  void runOnOperation() override {
    Attribute space = parseAttribute(memorySpace, &getContext());
    if (!space) {
      getOperation().emitError("invalid memory space '") << memorySpace << "'";
      return signalPassFailure();
    }
    if (!getOperation()->hasAttr(dlc::kKernelAttr))
      return;
    SmallVector<scf::ForallOp> loops;
    getOperation().walk([&](scf::ForallOp f) {
      std::optional<ArrayAttr> mapping = f.getMapping();
      if (mapping && !mapping->empty() &&
          isa<gpu::GPUThreadMappingAttr>((*mapping)[0]))
        loops.push_back(f);
    });
    for (scf::ForallOp f : loops)
      Promoter(f, space, budget).run();
  }
};

} // namespace
