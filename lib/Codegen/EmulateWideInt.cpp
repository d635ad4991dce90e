//===- EmulateWideInt.cpp - the dlc-emulate-wide-int pass -----------------===//
//
// Upstream offers the arith and memref halves of wide-integer emulation as
// two passes, each of which leaves casts for the other; kernels also need
// gpu.func signatures and structured control flow converted. This pass runs
// all of it as one conversion.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/WideIntEmulationConverter.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dlc {
#define GEN_PASS_DEF_EMULATEWIDEINT
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Upstream converts memref.alloc but not memref.alloca (private arrays of
/// kernels, like TopK's index buffers).
struct EmulateAlloca : public OpConversionPattern<memref::AllocaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::AllocaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<MemRefType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "unsupported memref type");
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(
        op, type, adaptor.getDynamicSizes(), adaptor.getSymbolOperands(),
        op.getAlignmentAttr());
    return success();
  }
};

struct EmulateWideIntPass
    : public dlc::impl::EmulateWideIntBase<EmulateWideIntPass> {
  void runOnOperation() override {
    // Upstream's emulation has no 64-bit division or remainder: such a
    // kernel gets an error naming the feature that runs it natively.
    WalkResult division = getOperation().walk([](Operation *op) {
      if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
               arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(
              op) ||
          !getElementTypeOrSelf(op->getResult(0).getType()).isInteger(64))
        return WalkResult::advance();
      auto fn = op->getParentOfType<FunctionOpInterface>();
      op->emitError("kernel '")
          << (fn ? fn.getName() : StringRef("?")) << "' computes "
          << op->getName()
          << " on 64-bit integers, which their emulation with 32-bit pairs "
             "lacks; it needs the target feature +int64 (64-bit integers in "
             "kernels)";
      return WalkResult::interrupt();
    });
    if (division.wasInterrupted())
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    arith::WideIntEmulationConverter converter(/*widestIntSupported=*/32);
    memref::populateMemRefWideIntEmulationConversions(converter);

    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      if (auto fn = dyn_cast<FunctionOpInterface>(op))
        return converter.isSignatureLegal(
                   cast<FunctionType>(fn.getFunctionType())) &&
               converter.isLegal(&fn.getFunctionBody());
      return converter.isLegal(op);
    });
    target.addLegalOp<ModuleOp, gpu::GPUModuleOp>();

    RewritePatternSet patterns(ctx);
    arith::populateArithWideIntEmulationPatterns(converter, patterns);
    memref::populateMemRefWideIntEmulationPatterns(converter, patterns);
    patterns.add<EmulateAlloca>(converter, ctx);
    populateFunctionOpInterfaceTypeConversionPattern<gpu::GPUFuncOp>(patterns,
                                                                     converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
