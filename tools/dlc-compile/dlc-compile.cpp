//===- dlc-compile.cpp - compile an ONNX model to a dlc artifact ----------===//
//
// The command-line tool; the driver itself is dlc::runCompileCommand
// (lib/Driver/CompileCommand.cpp), which the Python package calls too.
//
//===----------------------------------------------------------------------===//

#include "dlc/Driver/CompileCommand.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  return dlc::runCompileCommand(llvm::ArrayRef<const char *>(argv, argc),
                                llvm::errs());
}
