//===- CompileCommand.h - dlc-compile's command line ------------*- C++ -*-===//
//
// dlc-compile as a function, so that the Python package compiles exactly
// as the command-line tool does: the same options, checks and messages.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DRIVER_COMPILECOMMAND_H
#define DLC_DRIVER_COMPILECOMMAND_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace dlc {

/// Runs dlc-compile with `args` (args[0] is the program name, as in argv)
/// and returns its exit status. Errors and diagnostics go to `errs`
/// (notes the quantizers print still go to stderr). May be called again in
/// the same process: every call parses its options from their defaults.
/// Not reentrant: LLVM's command-line options are process-wide, so callers
/// on several threads must serialize their calls. `--help` and `--version`
/// print and exit the process, as they do in the tool.
/// `stdoutTaken`: the caller uses stdout for something else (dlc-compile
/// --batch's results), so an output that would go there (`-o -`, or the
/// default of --emit=mlir, dispatches and ptx) is refused.
int runCompileCommand(llvm::ArrayRef<const char *> args,
                      llvm::raw_ostream &errs, bool stdoutTaken = false);

/// The same, with what it writes to `errs` appended to `errors`.
int runCompileCommand(llvm::ArrayRef<const char *> args, std::string &errors,
                      bool stdoutTaken = false);

} // namespace dlc

#endif // DLC_DRIVER_COMPILECOMMAND_H
