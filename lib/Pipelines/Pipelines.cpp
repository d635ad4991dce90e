//===- Pipelines.cpp - dlc's compilation pipelines ------------------------===//

#include "dlc/Pipelines/Pipelines.h"

#include "dlc/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dlc::buildLegalizePipeline(OpPassManager &pm) {
  pm.addPass(createConvertONNXToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void dlc::registerPipelines() {
  PassPipelineRegistration<>(
      "dlc-legalize",
      "ONNX nodes to linalg/tensor/arith/math, folded and cleaned up",
      [](OpPassManager &pm) { buildLegalizePipeline(pm); });
}

namespace {
/// Runs a pipeline built by `build` on `module` with the command-line pass
/// manager options (IR printing, timing, crash reproducers) applied.
LogicalResult runPipeline(ModuleOp module,
                          llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  build(pm);
  return pm.run(module);
}
} // namespace

/// Runs the stages after import on `module` and writes the output.
static LogicalResult compileModule(OwningOpRef<ModuleOp> module,
                                   const dlc::CompileOptions &options,
                                   llvm::raw_ostream &output) {
  using namespace dlc;
  if (!module)
    return failure();
  auto emitMLIR = [&]() {
    module->print(output);
    output << "\n";
    return success();
  };
  if (options.emit == EmitKind::MLIR && options.stopAfter == Stage::Import)
    return emitMLIR();
  if (failed(runPipeline(*module, buildLegalizePipeline)))
    return failure();
  if (options.emit == EmitKind::MLIR && options.stopAfter == Stage::Legalize)
    return emitMLIR();
  return emitError(module->getLoc(),
                   "code generation is not available in this build yet");
}

LogicalResult dlc::compileONNXFile(MLIRContext &context, StringRef inputPath,
                                   const CompileOptions &options,
                                   llvm::raw_ostream &output) {
  return compileModule(
      importONNXFile(context, inputPath, options.importOptions), options,
      output);
}

LogicalResult dlc::compileONNXBuffer(MLIRContext &context, StringRef buffer,
                                     StringRef bufferName, bool isText,
                                     const CompileOptions &options,
                                     llvm::raw_ostream &output) {
  return compileModule(importONNXBuffer(context, buffer, bufferName, isText,
                                        options.importOptions),
                       options, output);
}
