//===- PassOptions.cpp - command-line pass manager options ----------------===//

#include "dlc/Target/PassOptions.h"

#include "llvm/Support/CommandLine.h"

mlir::LogicalResult dlc::applyCommandLinePassOptions(mlir::PassManager &pm) {
  // One of the options mlir::registerPassManagerCLOptions registers.
  if (!llvm::cl::getRegisteredOptions().count(
          "mlir-pass-pipeline-crash-reproducer"))
    return mlir::success();
  return mlir::applyPassManagerCLOptions(pm);
}
