//===- BufferizeKernels.cpp - the dlc-bufferize-kernels pass --------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include <limits>

namespace dlc {
#define GEN_PASS_DEF_BUFFERIZEKERNELS
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Temporaries up to this size live on the stack of the worker thread.

MemRefType toMemRef(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// Tensor signature -> buffer signature with results as trailing outputs.
LogicalResult rewriteSignature(func::FuncOp kernel) {
  FunctionType type = kernel.getFunctionType();
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults()))
    if (!isa<RankedTensorType>(t) ||
        !cast<RankedTensorType>(t).hasStaticShape())
      return kernel.emitError("kernel operands and results must be "
                              "statically shaped tensors");
  Block &entry = kernel.getBody().front();
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    Type tensorType = arg.getType();
    arg.setType(toMemRef(tensorType));
    auto toTensor = bufferization::ToTensorOp::create(
        b, arg.getLoc(), tensorType, arg, /*restrict=*/true,
        /*writable=*/false);
    arg.replaceAllUsesExcept(toTensor.getResult(), toTensor);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  for (Value result : ret.getOperands()) {
    BlockArgument out =
        entry.addArgument(toMemRef(result.getType()), result.getLoc());
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        b, ret.getLoc(), result, out);
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  ret->setOperands({});
  kernel.setType(b.getFunctionType(entry.getArgumentTypes(), {}));
  return success();
}

/// memref.copy lowers to a call into MLIR's runner library when its operands
/// are strided views; kernels must be self-contained, so copies become
/// linalg.copy, which lowers to loops.
struct CopyToLinalg : public OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct BufferizeKernelsPass
    : public dlc::impl::BufferizeKernelsBase<BufferizeKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto kernel : module.getOps<func::FuncOp>())
      if (kernel->hasAttr(dlc::kKernelAttr) && !kernel.isExternal() &&
          failed(rewriteSignature(kernel)))
        return signalPassFailure();

    Attribute space;
    if (!privateMemorySpace.empty()) {
      space = parseAttribute(privateMemorySpace, &getContext());
      if (!space) {
        module.emitError("invalid private-memory-space '")
            << privateMemorySpace << "'";
        return signalPassFailure();
      }
    }
    // tensor.concat does not bufferize into non-default memory spaces;
    // as insert_slices it does, everywhere.
    {
      RewritePatternSet patterns(&getContext());
      tensor::populateDecomposeTensorConcatPatterns(patterns);
      if (failed(applyPatternsGreedily(module, std::move(patterns))))
        return signalPassFailure();
    }
    // Nor do tensor.generate and tensor.pad (which bufferizes through a
    // generate); as linalg ops writing into tensor.empty they do.
    if (space) {
      SmallVector<Operation *> ops;
      module.walk([&](Operation *op) {
        if (isa<tensor::GenerateOp, tensor::PadOp>(op))
          ops.push_back(op);
      });
      IRRewriter rewriter(&getContext());
      for (Operation *op : ops) {
        rewriter.setInsertionPoint(op);
        FailureOr<Operation *> rewritten =
            isa<tensor::PadOp>(op)
                ? linalg::rewriteInDestinationPassingStyle(
                      rewriter, cast<tensor::PadOp>(op))
                : linalg::rewriteInDestinationPassingStyle(
                      rewriter, cast<tensor::GenerateOp>(op));
        if (failed(rewritten)) {
          op->emitError("cannot write this op into a buffer of memory space ")
              << space;
          return signalPassFailure();
        }
      }
    }
    OpPassManager eliminate(ModuleOp::getOperationName());
    eliminate.addPass(bufferization::createEmptyTensorEliminationPass());
    if (failed(runPipeline(eliminate, module)))
      return signalPassFailure();
    bufferization::OneShotBufferizationOptions options;
    options.defaultMemorySpaceFn =
        [space](TensorType) -> std::optional<Attribute> { return space; };
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotBufferize(module, options, state)))
      return signalPassFailure();

    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createCanonicalizerPass());
    bufferization::PromoteBuffersToStackPassOptions stack;
    stack.maxAllocSizeInBytes =
        stackOnly ? std::numeric_limits<unsigned>::max()
                  : static_cast<unsigned>(std::clamp<int64_t>(
                        stackLimit, 0, std::numeric_limits<unsigned>::max()));
    stack.maxRankOfAllocatedMemRef = 8;
    pm.nest<func::FuncOp>().addPass(
        bufferization::createPromoteBuffersToStackPass(stack));
    bufferization::buildBufferDeallocationPipeline(pm);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<CopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
