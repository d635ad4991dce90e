//===- WidenNarrowInt.cpp - the dlc-widen-narrow-int pass -----------------===//
//
// Without the Int8/Int16 capabilities, SPIR-V keeps 8- and 16-bit integers
// in 32-bit registers; upstream's conversion handles signed arithmetic on
// them but refuses unsigned ops. Extending every narrow operand explicitly
// (zero or sign extension by the op's semantics), computing in i32 and
// truncating the result makes all of them work, and only loads, stores and
// the extensions themselves remain narrow.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <type_traits>

namespace dlc {
#define GEN_PASS_DEF_WIDENNARROWINT
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// A pattern of this pass: it knows which integer types are narrow, those
/// of 2 to 31 bits but 8 where 8-bit integers are native.
template <typename OpTy> struct NarrowPattern : public OpRewritePattern<OpTy> {
  NarrowPattern(MLIRContext *ctx, bool nativeInt8)
      : OpRewritePattern<OpTy>(ctx), nativeInt8(nativeInt8) {}
  bool isNarrow(Type t) const {
    auto i = dyn_cast<IntegerType>(t);
    return i && i.getWidth() > 1 && i.getWidth() < 32 &&
           !(nativeInt8 && i.getWidth() == 8);
  }
  bool nativeInt8;
};

Value extend(PatternRewriter &rewriter, Location loc, Value v, bool zero) {
  Type i32 = rewriter.getI32Type();
  if (zero)
    return arith::ExtUIOp::create(rewriter, loc, i32, v);
  return arith::ExtSIOp::create(rewriter, loc, i32, v);
}

/// Binary arithmetic: ext, compute in i32, trunc.
template <typename OpTy, bool ZeroExtend>
struct WidenBinary : public NarrowPattern<OpTy> {
  using NarrowPattern<OpTy>::NarrowPattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type t = op.getType();
    if (!this->isNarrow(t))
      return failure();
    Location loc = op.getLoc();
    Value a = extend(rewriter, loc, op.getLhs(), ZeroExtend);
    Value b = extend(rewriter, loc, op.getRhs(), ZeroExtend);
    Value r = OpTy::create(rewriter, loc, a, b);
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, t, r);
    return success();
  }
};

struct WidenCmpI : public NarrowPattern<arith::CmpIOp> {
  using NarrowPattern::NarrowPattern;
  LogicalResult matchAndRewrite(arith::CmpIOp op,
                                PatternRewriter &rewriter) const override {
    if (!this->isNarrow(op.getLhs().getType()))
      return failure();
    using P = arith::CmpIPredicate;
    P p = op.getPredicate();
    bool zero = p == P::ult || p == P::ule || p == P::ugt || p == P::uge ||
                p == P::eq || p == P::ne;
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(
        op, p, extend(rewriter, loc, op.getLhs(), zero),
        extend(rewriter, loc, op.getRhs(), zero));
    return success();
  }
};

/// Integer-to-float and integer-to-index conversions read a narrow operand
/// (an unsigned index cast of an 8-bit value must see 0..255, not the
/// sign-extended register).
template <typename OpTy, bool ZeroExtend>
struct WidenToFloat : public NarrowPattern<OpTy> {
  using NarrowPattern<OpTy>::NarrowPattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!this->isNarrow(op.getIn().getType()))
      return failure();
    Value v = extend(rewriter, op.getLoc(), op.getIn(), ZeroExtend);
    rewriter.replaceOpWithNewOp<OpTy>(op, op.getType(), v);
    return success();
  }
};

/// Float-to-integer conversions produce a narrow result.
template <typename OpTy> struct WidenFromFloat : public NarrowPattern<OpTy> {
  using NarrowPattern<OpTy>::NarrowPattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!this->isNarrow(op.getType()))
      return failure();
    Value v =
        OpTy::create(rewriter, op.getLoc(), rewriter.getI32Type(), op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, op.getType(), v);
    return success();
  }
};

/// A zero extension between two narrow types (i8 -> i16), or of a narrow
/// value to i64, goes through i32 so that only narrow <-> i32 remains.
template <typename OpTy, bool ZeroExtend>
struct WidenExtension : public NarrowPattern<OpTy> {
  using NarrowPattern<OpTy>::NarrowPattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto to = dyn_cast<IntegerType>(op.getType());
    if (!this->isNarrow(op.getIn().getType()) || !to || to.getWidth() == 32)
      return failure();
    Value v = extend(rewriter, op.getLoc(), op.getIn(), ZeroExtend);
    if (to.getWidth() < 32)
      rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, to, v);
    else
      rewriter.replaceOpWithNewOp<OpTy>(op, to, v);
    return success();
  }
};

/// max/min of booleans (ReduceMax over bool): SPIR-V's UMax/UMin take no
/// i1, and they are or/and (signed: true is -1, so the other way round).
template <typename OpTy, typename ToOp>
struct BooleanMinMax : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isInteger(1))
      return failure();
    rewriter.replaceOpWithNewOp<ToOp>(op, op.getLhs(), op.getRhs());
    return success();
  }
};

/// A buffer of narrow integers in a thread's private memory (a transposed
/// int8 weight row a kernel stages) or in workgroup memory (per-row zero
/// points a serial loop passes between threads): SPIR-V has no 8- or
/// 16-bit variables there without Int8/Int16, and upstream emulates narrow
/// types only in storage buffers; emulating them in workgroup memory would
/// also make threads that store neighbouring bytes race on one word. The
/// buffer holds i32 instead; stores zero-extend, loads truncate back, so
/// the stored bits round-trip whatever the sign.
template <typename AllocOpTy>
struct WidenLocalBuffer : public NarrowPattern<AllocOpTy> {
  using NarrowPattern<AllocOpTy>::NarrowPattern;
  LogicalResult matchAndRewrite(AllocOpTy alloc,
                                PatternRewriter &rewriter) const override {
    MemRefType type = alloc.getType();
    if (!this->isNarrow(type.getElementType()))
      return failure();
    if (auto space = type.getMemorySpace()) {
      auto storage = dyn_cast<spirv::StorageClassAttr>(space);
      if (!storage || (storage.getValue() != spirv::StorageClass::Function &&
                       storage.getValue() != spirv::StorageClass::Workgroup))
        return failure();
    } else if (!std::is_same_v<AllocOpTy, memref::AllocaOp>) {
      return failure();
    }
    for (OpOperand &use : alloc->getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp, memref::DeallocOp>(user))
        continue;
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!store || store.getMemRef() != alloc.getResult())
        return rewriter.notifyMatchFailure(
            alloc, "buffer used by more than loads and stores");
    }
    Type i32 = rewriter.getI32Type();
    auto wide = AllocOpTy::create(
        rewriter, alloc.getLoc(),
        MemRefType::get(type.getShape(), i32, type.getLayout(),
                        type.getMemorySpace()),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        alloc.getAlignmentAttr());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
      rewriter.setInsertionPoint(user);
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        Value v = memref::LoadOp::create(rewriter, load.getLoc(), wide,
                                         load.getIndices());
        rewriter.replaceOpWithNewOp<arith::TruncIOp>(load, load.getType(), v);
        continue;
      }
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        rewriter.replaceOpWithNewOp<memref::DeallocOp>(dealloc, wide);
        continue;
      }
      auto store = cast<memref::StoreOp>(user);
      Value v = extend(rewriter, store.getLoc(), store.getValue(), true);
      rewriter.replaceOpWithNewOp<memref::StoreOp>(store, v, wide,
                                                   store.getIndices());
    }
    rewriter.eraseOp(alloc);
    return success();
  }
};

struct WidenNarrowIntPass
    : public dlc::impl::WidenNarrowIntBase<WidenNarrowIntPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<
        WidenBinary<arith::AddIOp, false>, WidenBinary<arith::SubIOp, false>,
        WidenBinary<arith::MulIOp, false>, WidenBinary<arith::DivSIOp, false>,
        WidenBinary<arith::DivUIOp, true>, WidenBinary<arith::RemSIOp, false>,
        WidenBinary<arith::RemUIOp, true>, WidenBinary<arith::MaxSIOp, false>,
        WidenBinary<arith::MaxUIOp, true>, WidenBinary<arith::MinSIOp, false>,
        WidenBinary<arith::MinUIOp, true>, WidenBinary<arith::AndIOp, false>,
        WidenBinary<arith::OrIOp, false>, WidenBinary<arith::XOrIOp, false>,
        WidenBinary<arith::ShLIOp, true>, WidenBinary<arith::ShRSIOp, false>,
        WidenBinary<arith::ShRUIOp, true>, WidenCmpI,
        WidenToFloat<arith::UIToFPOp, true>,
        WidenToFloat<arith::SIToFPOp, false>, WidenFromFloat<arith::FPToUIOp>,
        WidenFromFloat<arith::FPToSIOp>,
        WidenToFloat<arith::IndexCastUIOp, true>,
        WidenToFloat<arith::IndexCastOp, false>,
        WidenExtension<arith::ExtUIOp, true>,
        WidenExtension<arith::ExtSIOp, false>,
        WidenLocalBuffer<memref::AllocaOp>, WidenLocalBuffer<memref::AllocOp>>(
        ctx, nativeInt8);
    patterns.add<BooleanMinMax<arith::MaxUIOp, arith::OrIOp>,
                 BooleanMinMax<arith::MinUIOp, arith::AndIOp>,
                 BooleanMinMax<arith::MaxSIOp, arith::AndIOp>,
                 BooleanMinMax<arith::MinSIOp, arith::OrIOp>>(ctx);
    // No folding: trunci(extui(x)) folds back into the narrow-to-narrow
    // extension this pass splits.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
