//===- dlc-opt.cpp - run dlc and upstream passes on MLIR files ------------===//
//
// The compiler engineer's entry point: every dlc pass and pipeline, one at a
// time, on textual or bytecode MLIR.
//
//===----------------------------------------------------------------------===//

#include "dlc/Tools/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  dlc::registerAllPasses();
  mlir::DialectRegistry registry;
  dlc::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dlc optimizer driver\n", registry));
}
