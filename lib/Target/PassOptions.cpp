//===- PassOptions.cpp - command-line pass manager options ----------------===//

#include "dlc/Target/PassOptions.h"

#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"

mlir::LogicalResult dlc::applyCommandLinePassOptions(mlir::PassManager &pm) {
  // One of the options mlir::registerPassManagerCLOptions registers.
  if (!llvm::cl::getRegisteredOptions().count(
          "mlir-pass-pipeline-crash-reproducer"))
    return mlir::success();
  // --mlir-timing: each pass manager reports its passes' times when it is
  // destroyed (dlc-compile runs several: the front half, then per target).
  if (llvm::cl::getRegisteredOptions().count("mlir-timing"))
    mlir::applyDefaultTimingPassManagerCLOptions(pm);
  return mlir::applyPassManagerCLOptions(pm);
}
