//===- GPUInt8Dot.cpp - the dlc-gpu-int8-dot pass -------------------------===//
//
// int8 matrix products and convolutions on Vulkan devices that have integer
// dot-product instructions (the +dot8 target feature): four byte
// multiply-adds along a reduction loop become one SDot, UDot or SUDot. The
// pass description in Passes.td states the pattern and the expansion of the
// zero points.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace dlc {
#define GEN_PASS_DEF_GPUINT8DOT
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// One side of the product, `ext(arg) - zeroPoint`: `arg` is the generic's
/// i8 block argument of an input, `zeroPoint` an i32 value or null.
struct Factor {
  BlockArgument arg;
  bool isSigned = false;
  Value zeroPoint;
};

/// A generic computing `out + (ext(a) - za) * (ext(b) - zb)`, and the
/// reduction loop to take four at a time.
struct Contraction {
  linalg::GenericOp op;
  Factor a, b;
  unsigned dim = 0;
};

bool isReductionLoop(linalg::GenericOp op, unsigned d) {
  return op.getIteratorTypesArray()[d] == utils::IteratorType::reduction;
}

/// `ext(arg)` from i8 to i32, with `arg` an input's block argument.
std::optional<Factor> matchExt(Value v, linalg::GenericOp op) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<arith::ExtSIOp, arith::ExtUIOp>(def) ||
      !v.getType().isInteger(32))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(def->getOperand(0));
  if (!arg || arg.getOwner() != op.getBody() || !arg.getType().isInteger(8) ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return std::nullopt;
  Factor f;
  f.arg = arg;
  f.isSigned = isa<arith::ExtSIOp>(def);
  return f;
}

/// Whether `v` is the same in every iteration of the reduction loops: a
/// value from outside the body, or constants and extensions of inputs
/// that only the parallel loops index.
bool isReductionInvariant(Value v, linalg::GenericOp op) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != op.getBody())
      return true;
    if (arg.getArgNumber() >= op.getNumDpsInputs())
      return false;
    AffineMap map =
        op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber()));
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      if (isReductionLoop(op, d) && map.isFunctionOfDim(d))
        return false;
    return true;
  }
  Operation *def = v.getDefiningOp();
  if (def->getBlock() != op.getBody())
    return true;
  if (!isa<arith::ExtSIOp, arith::ExtUIOp, arith::ConstantOp>(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isReductionInvariant(operand, op);
  });
}

/// `ext(arg)` or `ext(arg) - zeroPoint`.
std::optional<Factor> matchFactor(Value v, linalg::GenericOp op) {
  if (std::optional<Factor> f = matchExt(v, op))
    return f;
  auto sub = v.getDefiningOp<arith::SubIOp>();
  if (!sub)
    return std::nullopt;
  std::optional<Factor> f = matchExt(sub.getLhs(), op);
  if (!f || !isReductionInvariant(sub.getRhs(), op))
    return std::nullopt;
  f->zeroPoint = sub.getRhs();
  return f;
}

std::optional<Contraction> matchContraction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return std::nullopt;
  auto outType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outType || !outType.getElementType().isInteger(32))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  BlockArgument out = op.getBody()->getArgument(op.getNumDpsInputs());
  Value product;
  if (add.getLhs() == out)
    product = add.getRhs();
  else if (add.getRhs() == out)
    product = add.getLhs();
  auto mul = product ? product.getDefiningOp<arith::MulIOp>() : nullptr;
  if (!mul)
    return std::nullopt;
  std::optional<Factor> a = matchFactor(mul.getLhs(), op);
  std::optional<Factor> b = matchFactor(mul.getRhs(), op);
  if (!a || !b)
    return std::nullopt;
  // The longest reduction loop both factors run along, ties to the inner.
  AffineMap mapA =
      op.getMatchingIndexingMap(op.getDpsInputOperand(a->arg.getArgNumber()));
  AffineMap mapB =
      op.getMatchingIndexingMap(op.getDpsInputOperand(b->arg.getArgNumber()));
  std::optional<unsigned> best;
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (isReductionLoop(op, d) && ranges[d] >= 4 && mapA.isFunctionOfDim(d) &&
        mapB.isFunctionOfDim(d) && (!best || ranges[d] >= ranges[*best]))
      best = d;
  if (!best)
    return std::nullopt;
  return Contraction{op, *a, *b, *best};
}

/// `acc` plus the dot product of two vector<4xi8>, by the signedness of
/// each side: PTX's dp4a (`nvvm`), or SPIR-V's dot product and an add.
Value dotAdd(OpBuilder &b, Location loc, bool nvvm, Value x, bool xSigned,
             Value y, bool ySigned, Value acc) {
  if (nvvm) {
    auto type = [&](bool s) {
      return NVVM::DotAccumulateTypeAttr::get(
          b.getContext(), s ? NVVM::DotAccumulateType::SIGNED
                            : NVVM::DotAccumulateType::UNSIGNED);
    };
    return NVVM::DotAccumulate4WayOp::create(
        b, loc, b.getI32Type(), x, type(xSigned), y, type(ySigned), acc);
  }
  Type i32 = b.getI32Type();
  Value d;
  if (xSigned && ySigned) {
    d = spirv::SDotOp::create(b, loc, i32, x, y,
                              spirv::PackedVectorFormatAttr());
  } else if (!xSigned && !ySigned) {
    d = spirv::UDotOp::create(b, loc, i32, x, y,
                              spirv::PackedVectorFormatAttr());
  } else {
    if (!xSigned)
      std::swap(x, y);
    d = spirv::SUDotOp::create(b, loc, i32, x, y,
                               spirv::PackedVectorFormatAttr());
  }
  return acc ? arith::AddIOp::create(b, loc, acc, d).getResult() : d;
}

class Rewriter {
public:
  Rewriter(const Contraction &c, bool nvvm)
      : c(c), op(c.op), loc(op.getLoc()), ranges(op.getStaticLoopRanges()),
        nvvm(nvvm) {}

  void run() {
    OpBuilder b(op);
    ivs.assign(ranges.size(), arith::ConstantIndexOp::create(b, loc, 0));
    parallelLoops(b, 0);
    op.erase();
  }

private:
  /// The indices of `operand`'s element at the current loop values.
  SmallVector<Value> indices(OpBuilder &b, OpOperand *operand) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> result;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      AffineExpr e = map.getResult(r);
      if (auto d = dyn_cast<AffineDimExpr>(e))
        result.push_back(ivs[d.getPosition()]);
      else
        result.push_back(
            affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), ivs));
    }
    return result;
  }

  Value load(OpBuilder &b, OpOperand *operand) {
    return memref::LoadOp::create(b, loc, operand->get(), indices(b, operand));
  }

  /// A reduction-invariant body value (a zero point) at the current
  /// parallel loop values.
  Value materialize(OpBuilder &b, Value v, IRMapping &map) {
    if (Value known = map.lookupOrNull(v))
      return known;
    Value result;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != op.getBody())
        return v;
      result = load(b, op.getDpsInputOperand(arg.getArgNumber()));
    } else {
      Operation *def = v.getDefiningOp();
      if (def->getBlock() != op.getBody())
        return v;
      for (Value operand : def->getOperands())
        materialize(b, operand, map);
      result = b.clone(*def, map)->getResult(0);
    }
    map.map(v, result);
    return result;
  }

  void parallelLoops(OpBuilder &b, unsigned d) {
    for (; d < ranges.size() && isReductionLoop(op, d); ++d) {
    }
    if (d < ranges.size()) {
      auto loop =
          scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                             arith::ConstantIndexOp::create(b, loc, ranges[d]),
                             arith::ConstantIndexOp::create(b, loc, 1));
      OpBuilder inner = OpBuilder::atBlockTerminator(loop.getBody());
      ivs[d] = loop.getInductionVar();
      parallelLoops(inner, d + 1);
      return;
    }
    // Every parallel loop is open: one output element.
    OpOperand *out = op.getDpsInitOperand(0);
    Value acc = load(b, out);
    IRMapping invariants;
    za = c.a.zeroPoint ? materialize(b, c.a.zeroPoint, invariants) : Value();
    zb = c.b.zeroPoint ? materialize(b, c.b.zeroPoint, invariants) : Value();
    zz4 = Value();
    if (za && zb) {
      Value four = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 4);
      zz4 = arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, za, zb),
                                  four);
    }
    acc = reductionLoops(b, 0, acc);
    memref::StoreOp::create(b, loc, acc, out->get(), indices(b, out));
  }

  /// The reduction loops other than the chunked one, around the chunks.
  Value reductionLoops(OpBuilder &b, unsigned d, Value acc) {
    for (; d < ranges.size() && (!isReductionLoop(op, d) || d == c.dim); ++d) {
    }
    if (d == ranges.size())
      return chunks(b, acc);
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, ranges[d]),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{acc});
    OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
    ivs[d] = loop.getInductionVar();
    Value next = reductionLoops(inner, d + 1, loop.getRegionIterArgs()[0]);
    scf::YieldOp::create(inner, loc, next);
    return loop.getResult(0);
  }

  /// Four elements of the chunked loop per dot product, then the rest one
  /// at a time through the original body.
  Value chunks(OpBuilder &b, Value acc) {
    int64_t extent = ranges[c.dim], whole = extent / 4 * 4;
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, whole),
        arith::ConstantIndexOp::create(b, loc, 4), ValueRange{acc});
    {
      OpBuilder ib = OpBuilder::atBlockBegin(loop.getBody());
      Value k = loop.getInductionVar();
      Value sum = loop.getRegionIterArgs()[0];
      SmallVector<Value> as, bs;
      for (int64_t i = 0; i < 4; ++i) {
        ivs[c.dim] = i == 0 ? k
                            : arith::AddIOp::create(
                                  ib, loc, k,
                                  arith::ConstantIndexOp::create(ib, loc, i));
        as.push_back(load(ib, op.getDpsInputOperand(c.a.arg.getArgNumber())));
        bs.push_back(load(ib, op.getDpsInputOperand(c.b.arg.getArgNumber())));
      }
      auto v4 = VectorType::get({4}, ib.getI8Type());
      Value va = vector::FromElementsOp::create(ib, loc, v4, as);
      Value vb = vector::FromElementsOp::create(ib, loc, v4, bs);
      sum = dotAdd(ib, loc, nvvm, va, c.a.isSigned, vb, c.b.isSigned, sum);
      Value ones;
      if (za || zb)
        ones =
            arith::ConstantOp::create(ib, loc,
                                      cast<TypedAttr>(DenseElementsAttr::get(
                                          v4, ArrayRef<int8_t>({1, 1, 1, 1}))));
      if (zb) { // - zb * sum(a)
        Value sa = dotAdd(ib, loc, nvvm, va, c.a.isSigned, ones, c.a.isSigned,
                          zero(ib));
        sum = arith::SubIOp::create(ib, loc, sum,
                                    arith::MulIOp::create(ib, loc, zb, sa));
      }
      if (za) { // - za * sum(b)
        Value sb = dotAdd(ib, loc, nvvm, ones, c.b.isSigned, vb, c.b.isSigned,
                          zero(ib));
        sum = arith::SubIOp::create(ib, loc, sum,
                                    arith::MulIOp::create(ib, loc, za, sb));
      }
      if (zz4)
        sum = arith::AddIOp::create(ib, loc, sum, zz4);
      scf::YieldOp::create(ib, loc, sum);
    }
    acc = loop.getResult(0);
    if (whole == extent)
      return acc;
    auto tail = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, whole),
        arith::ConstantIndexOp::create(b, loc, extent),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{acc});
    OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
    ivs[c.dim] = tail.getInductionVar();
    IRMapping body;
    Block *block = op.getBody();
    for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
      body.map(block->getArgument(i), load(tb, op.getDpsInputOperand(i)));
    body.map(block->getArgument(op.getNumDpsInputs()),
             tail.getRegionIterArgs()[0]);
    for (Operation &inner : block->without_terminator())
      tb.clone(inner, body);
    scf::YieldOp::create(tb, loc,
                         body.lookup(block->getTerminator()->getOperand(0)));
    return tail.getResult(0);
  }

  /// The accumulator a sum against ones starts from: none for SPIR-V
  /// (the dot product alone), zero for dp4a.
  Value zero(OpBuilder &b) {
    return nvvm ? arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0)
                      .getResult()
                : Value();
  }

  const Contraction &c;
  linalg::GenericOp op;
  Location loc;
  SmallVector<int64_t> ranges;
  bool nvvm;
  SmallVector<Value> ivs;
  Value za, zb, zz4;
};

struct GPUInt8DotPass : public dlc::impl::GPUInt8DotBase<GPUInt8DotPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Contraction> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Contraction> c = matchContraction(op))
        found.push_back(*c);
    });
    for (const Contraction &c : found)
      Rewriter(c, nvvm).run();
  }
};

} // namespace
