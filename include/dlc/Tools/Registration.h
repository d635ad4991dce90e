//===- Registration.h - register everything dlc tools need ------*- C++ -*-===//

#ifndef DLC_TOOLS_REGISTRATION_H
#define DLC_TOOLS_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dlc {

/// Adds dlc's own dialects (onnx, dlc) to `registry`.
void registerDlcDialects(mlir::DialectRegistry &registry);

/// Adds every upstream dialect, dialect extension and LLVM IR translation
/// interface the dlc pipelines can produce, plus dlc's own dialects.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers dlc's passes and pipelines with the global pass registry (so
/// that textual pipelines and `dlc-opt` flags can name them).
void registerDlcPasses();

/// Registers upstream passes and dlc's passes.
void registerAllPasses();

/// The dlc version string, "MAJOR.MINOR.PATCH".
const char *getVersionString();

} // namespace dlc

#endif // DLC_TOOLS_REGISTRATION_H
