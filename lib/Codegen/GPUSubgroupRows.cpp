//===- GPUSubgroupRows.cpp - the dlc-gpu-subgroup-rows pass ---------------===//
//
// Softmax, layer norm and other row reductions on GPUs: one thread per row
// reduces the whole row alone. In kernels tiled with subgroup lanes
// (dlc-tile-and-distribute's `subgroup-lanes`, the `dlc.subgroup_lanes`
// attribute) each of S lanes owns a contiguous part of the row and
// computes its part of the kernel's result, but every row reduction fused
// into the thread loop still reduces the whole row, in every lane, with
// the elementwise producer of its input. This pass makes those reductions
// cooperative: each lane reduces its own part of the row (and its
// producer computes only that part), then S-lane butterflies of subgroup
// shuffles (xor) combine the partial results, so every lane ends with the
// row's. Reductions whose output does not start as the combiner's identity
// are left whole.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace dlc {
#define GEN_PASS_DEF_GPUSUBGROUPROWS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The op that combines two partial results of `op`'s body: the body
/// yields `combine(out, x)` (or `combine(x, out)`) with `x` computed from
/// the inputs alone and `out` used nowhere else, and `combine` is one the
/// shuffles can finish.
Operation *combiner(linalg::GenericOp op) {
  Block *body = op.getBody();
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Value out = body->getArgument(op.getNumDpsInputs());
  Operation *combine = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp>(combine) ||
      !out.hasOneUse() || *out.getUsers().begin() != combine)
    return nullptr;
  return combine;
}

bool isIdentity(Operation *combine, Value init) {
  llvm::APFloat value(0.0);
  if (!matchPattern(init, m_ConstantFloat(&value)))
    return false;
  if (isa<arith::AddFOp>(combine))
    return value.isZero();
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return value.isInfinity() && value.isNegative();
  return value.isInfinity() && !value.isNegative();
}

/// `v`'s part for lane `lane`: along its last dim, `chunk` elements from
/// lane * chunk.
Value lanePart(OpBuilder &b, Location loc, Value v, Value start,
               int64_t chunk) {
  auto type = cast<MemRefType>(v.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  offsets.back() = start;
  sizes.back() = b.getIndexAttr(chunk);
  return memref::SubViewOp::create(b, loc, v, offsets, sizes, strides);
}

class Rewriter {
public:
  Rewriter(scf::ForallOp threads, Value lane, int64_t lanes, int64_t width)
      : threads(threads), lane(lane), lanes(lanes), width(width) {}

  void run() {
    SmallVector<linalg::GenericOp> reductions;
    for (Operation &op : threads.getBody()->without_terminator())
      if (auto g = dyn_cast<linalg::GenericOp>(op))
        if (g.getNumReductionLoops() == 1 && g.hasPureBufferSemantics())
          reductions.push_back(g);
    for (linalg::GenericOp r : reductions)
      (void)rewrite(r);
  }

private:
  /// The row length a reduction reduces: its last loop, which must be the
  /// reduction; the row must split into `lanes` parts.
  std::optional<int64_t> rowLength(linalg::GenericOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned last = ranges.size() - 1;
    if (op.getIteratorTypesArray()[last] != utils::IteratorType::reduction ||
        ShapedType::isDynamic(ranges[last]) || ranges[last] % lanes != 0)
      return std::nullopt;
    return ranges[last];
  }

  /// Whether `v` is `buffer` or a view of it.
  static bool isViewOf(Value v, Value buffer) {
    while (v != buffer) {
      auto view = v.getDefiningOp<ViewLikeOpInterface>();
      if (!view)
        return false;
      v = view.getViewSource();
    }
    return true;
  }

  /// The fill that gives `op`'s output (a private buffer) its value
  /// before `op`.
  linalg::FillOp initOf(linalg::GenericOp op) {
    return fillBefore(op.getDpsInits()[0], op);
  }

  /// The fill whose value the private buffer `buffer` holds right before
  /// `at` (in the same block): the last op before `at` that writes it is
  /// that fill, or a copy of another such buffer.
  static linalg::FillOp fillBefore(Value buffer, Operation *at) {
    if (!buffer.getDefiningOp<memref::AllocaOp>())
      return nullptr;
    for (Operation *prev = at->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (auto fill = dyn_cast<linalg::FillOp>(prev))
        if (fill.getDpsInits()[0] == buffer)
          return fill;
      if (auto copy = dyn_cast<linalg::CopyOp>(prev))
        if (copy.getDpsInits()[0] == buffer)
          return fillBefore(copy.getInputs()[0], copy);
      // A private buffer is reached through its uses only; a linalg op
      // that only reads it (none of its outputs is the buffer or a view of
      // it) leaves it as it is.
      if (auto l = dyn_cast<linalg::LinalgOp>(prev)) {
        if (llvm::any_of(l.getDpsInits(),
                         [&](Value v) { return isViewOf(v, buffer); }))
          return nullptr;
        continue;
      }
      bool uses = prev->walk([&](Operation *inner) {
                        return llvm::is_contained(inner->getOperands(), buffer)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
      if (uses)
        return nullptr;
    }
    return nullptr;
  }

  /// Whether `operand`'s last result is exactly `op`'s last loop over a
  /// memref whose last dim has `length` elements (a row read whole).
  static bool readsRow(linalg::GenericOp op, OpOperand *operand,
                       int64_t length) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!type || !type.hasStaticShape() || map.getNumResults() == 0 ||
        type.getShape().back() != length)
      return false;
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!dim || dim.getPosition() != op.getNumLoops() - 1)
      return false;
    return llvm::none_of(map.getResults().drop_back(), [&](AffineExpr e) {
      return e.isFunctionOfDim(op.getNumLoops() - 1);
    });
  }

  /// The elementwise op that writes the private row `row` (its only
  /// writer) when every other user is `reader`; it may then compute the
  /// lane's part only.
  linalg::GenericOp rowProducer(Value row, linalg::GenericOp reader,
                                int64_t length) {
    if (!row.getDefiningOp<memref::AllocaOp>())
      return nullptr;
    linalg::GenericOp producer;
    for (Operation *user : row.getUsers()) {
      if (user == reader.getOperation())
        continue;
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (producer || !g || g.getNumDpsInits() != 1 ||
          g.getDpsInits()[0] != row || g.getNumReductionLoops() != 0 ||
          g->getBlock() != reader->getBlock() || !g->isBeforeInBlock(reader))
        return nullptr;
      producer = g;
    }
    if (!producer)
      return nullptr;
    // Every operand it reads along the row reads it whole, and the row is
    // its last loop.
    for (OpOperand &operand : producer->getOpOperands()) {
      AffineMap map = producer.getMatchingIndexingMap(&operand);
      if (map.isFunctionOfDim(producer.getNumLoops() - 1) &&
          !readsRow(producer, &operand, length))
        return nullptr;
    }
    return producer;
  }

  /// Whether the inputs `op` reads along its last loop all read the row
  /// whole, and there is at least one.
  static bool readsRowsOnly(linalg::GenericOp op, int64_t length) {
    unsigned last = op.getNumLoops() - 1;
    bool any = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      if (!op.getMatchingIndexingMap(operand).isFunctionOfDim(last))
        continue;
      if (!readsRow(op, operand, length))
        return false;
      any = true;
    }
    return any;
  }

  /// Whether `v` is computed from the lane id (a view of another lane's
  /// rows: those lanes do not share `v`'s row).
  bool dependsOnLane(Value v) {
    if (v == lane)
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || !threads->isAncestor(def))
      return false;
    return llvm::any_of(def->getOperands(),
                        [&](Value o) { return dependsOnLane(o); });
  }

  /// Whether every row `op` reads whole is the same for all lanes.
  bool sharedRows(linalg::GenericOp op, int64_t length) {
    return llvm::none_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
      return readsRow(op, operand, length) && dependsOnLane(operand->get());
    });
  }

  /// Rewrites `op`'s operands that read the row whole to the lane's part.
  void restrict(linalg::GenericOp op, int64_t length, int64_t chunk) {
    OpBuilder b(op);
    Value start = affine::AffineApplyOp::create(
        b, op.getLoc(), AffineMap::get(1, 0, b.getAffineDimExpr(0) * chunk),
        lane);
    for (OpOperand &operand : op->getOpOperands())
      if (readsRow(op, &operand, length))
        operand.set(lanePart(b, op.getLoc(), operand.get(), start, chunk));
  }

  LogicalResult rewrite(linalg::GenericOp op) {
    Operation *combine = combiner(op);
    std::optional<int64_t> length = rowLength(op);
    linalg::FillOp init = initOf(op);
    auto outType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
    if (!combine || !length || !init || !outType || !outType.hasStaticShape() ||
        outType.getNumElements() > 16 ||
        !isIdentity(combine, init.getInputs()[0]) ||
        !readsRowsOnly(op, *length) || !sharedRows(op, *length))
      return failure();
    linalg::GenericOp producer;
    for (OpOperand *operand : op.getDpsInputOperands())
      if (readsRow(op, operand, *length))
        producer = rowProducer(operand->get(), op, *length);
    if (producer && !sharedRows(producer, *length))
      return failure();
    int64_t chunk = *length / lanes;
    Location loc = op.getLoc();
    if (producer)
      restrict(producer, *length, chunk);
    restrict(op, *length, chunk);
    OpBuilder b(op);
    // The butterfly: after log2(lanes) exchanges every lane holds the
    // combination of all lanes' parts.
    b.setInsertionPointAfter(op);
    Value out = op.getDpsInits()[0];
    SmallVector<SmallVector<Value>> indices(1);
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      SmallVector<SmallVector<Value>> next;
      for (const auto &i : indices)
        for (int64_t k = 0; k < outType.getDimSize(d); ++k) {
          next.push_back(i);
          next.back().push_back(arith::ConstantIndexOp::create(b, loc, k));
        }
      indices = std::move(next);
    }
    Value widthValue = arith::ConstantIntOp::create(b, loc, width, 32);
    for (const auto &at : indices) {
      Value v = memref::LoadOp::create(b, loc, out, at);
      for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
        Value mask = arith::ConstantIntOp::create(b, loc, offset, 32);
        Value other = gpu::ShuffleOp::create(b, loc, v, mask, widthValue,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        Operation *c = b.cloneWithoutRegions(*combine);
        c->setOperands({v, other});
        v = c->getResult(0);
      }
      memref::StoreOp::create(b, loc, v, out, at);
    }
    return success();
  }

  scf::ForallOp threads;
  Value lane;
  int64_t lanes, width;
};

struct GPUSubgroupRowsPass
    : public dlc::impl::GPUSubgroupRowsBase<GPUSubgroupRowsPass> {
  using Base::Base;
  void runOnOperation() override {
    {
      func::FuncOp kernel = getOperation();
      auto lanes = kernel->getAttrOfType<IntegerAttr>(dlc::kSubgroupLanesAttr);
      if (!lanes)
        return;
      int64_t n = lanes.getInt();
      if (n < 2 || (n & (n - 1)) != 0 || n > subgroupSize) {
        kernel.emitError("subgroup lanes must be a power of two of at most "
                         "the subgroup size ")
            << static_cast<int64_t>(subgroupSize) << ", not " << n;
        return signalPassFailure();
      }
      kernel.walk([&](scf::ForallOp threads) {
        std::optional<ArrayAttr> mapping = threads.getMapping();
        if (!mapping)
          return;
        // The lanes are the thread loop mapped to x, with `n` iterations.
        for (auto [iv, m, ub] : llvm::zip(threads.getInductionVars(), *mapping,
                                          threads.getMixedUpperBound())) {
          auto t = dyn_cast<gpu::GPUThreadMappingAttr>(m);
          if (t && t.getThread() == gpu::MappingId::DimX &&
              getConstantIntValue(ub) == n && threads.isNormalized())
            Rewriter(threads, iv, n, subgroupSize).run();
        }
      });
    }
  }
};

} // namespace
