//===- KernelChecksTest.cpp - the GPU kernel checks -----------------------===//
//
// rejectGridSharedStackCopies on hand-written kernels: a stack buffer that
// the threads of a grid would all update is refused; a thread's own is
// not. (No model reaches the check since scatters read their data input
// instead of updating a copy of it.)
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/KernelBinary.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// A kernel whose loop over `mapping` stores into a stack buffer made
/// `where` ("outside" the loop or "inside" it).
std::string kernel(bool inside, const char *mapping) {
  std::string alloca = "%a = memref.alloca() : memref<4xf32>\n";
  return std::string("func.func @k(%out: memref<4xf32>) {\n") +
         (inside ? "" : alloca) + "  scf.forall (%i) in (4) {\n" +
         (inside ? alloca : "") +
         "    %c = arith.constant 1.0 : f32\n"
         "    memref.store %c, %a[%i] : memref<4xf32>\n"
         "  } {mapping = [" +
         mapping + "]}\n  return\n}\n";
}

/// The check's verdict on `source`; its message in `error`.
bool passes(const std::string &source, std::string &error) {
  MLIRContext context;
  context.loadDialect<arith::ArithDialect, func::FuncDialect, gpu::GPUDialect,
                      memref::MemRefDialect, scf::SCFDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  EXPECT_TRUE(module) << source;
  if (!module)
    return false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    error = d.str();
    return success();
  });
  return succeeded(dlc::rejectGridSharedStackCopies(*module));
}

TEST(KernelChecks, StackBufferSharedByTheGridIsRefused) {
  std::string error;
  EXPECT_FALSE(passes(kernel(false, "#gpu.block<x>"), error));
  EXPECT_NE(error.find("kernel 'k' updates one stack buffer from all its "
                       "threads"),
            std::string::npos)
      << error;
}

TEST(KernelChecks, AThreadsOwnStackBufferIsFine) {
  std::string error;
  EXPECT_TRUE(passes(kernel(true, "#gpu.block<x>"), error)) << error;
  // Outside a loop over threads: each thread's own, too.
  EXPECT_TRUE(passes("func.func @k(%out: memref<4xf32>) {\n"
                     "  scf.forall (%t) in (32) {\n"
                     "    %a = memref.alloca() : memref<4xf32>\n"
                     "    scf.forall (%i) in (4) {\n"
                     "      %c = arith.constant 1.0 : f32\n"
                     "      memref.store %c, %a[%i] : memref<4xf32>\n"
                     "    }\n"
                     "  } {mapping = [#gpu.thread<x>]}\n"
                     "  return\n}\n",
                     error))
      << error;
}

} // namespace
