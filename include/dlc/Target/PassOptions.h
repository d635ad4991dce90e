//===- PassOptions.h - command-line pass manager options --------*- C++ -*-===//
//
// The compiler's pipelines honour MLIR's pass manager options (IR printing,
// timing, crash reproducers) when the program registered them, as dlc-opt
// and dlc-compile do. A program that embeds the compiler as a library need
// not register them; MLIR's applyPassManagerCLOptions then fails without a
// diagnostic, which would make every compilation fail silently.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TARGET_PASSOPTIONS_H
#define DLC_TARGET_PASSOPTIONS_H

#include "mlir/Pass/PassManager.h"

namespace dlc {

/// Applies the command-line pass manager options to `pm` if they are
/// registered. Fails (with a diagnostic from MLIR) only if they are
/// registered and cannot be applied.
mlir::LogicalResult applyCommandLinePassOptions(mlir::PassManager &pm);

} // namespace dlc

#endif // DLC_TARGET_PASSOPTIONS_H
