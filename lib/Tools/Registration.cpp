//===- Registration.cpp - register everything dlc tools need --------------===//

#include "dlc/Tools/Registration.h"

#include "dlc/Codegen/Passes.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/DLC/Transforms/Passes.h"
#include "dlc/Dialect/ONNX/IR/ONNX.h"
#include "dlc/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void dlc::registerDlcDialects(mlir::DialectRegistry &registry) {
  registry.insert<dlc::DLCDialect, dlc::onnx::ONNXDialect>();
}

void dlc::registerAllDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registerDlcDialects(registry);
}

void dlc::registerDlcPasses() {
  registerDLCConversionPasses();
  registerDLCTransformsPasses();
  registerDLCCodegenPasses();
  registerPipelines();
}

void dlc::registerAllPasses() {
  mlir::registerAllPasses();
  registerDlcPasses();
}

const char *dlc::getVersionString() { return DLC_VERSION_STRING; }
