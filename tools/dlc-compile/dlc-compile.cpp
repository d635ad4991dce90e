//===- dlc-compile.cpp - compile an ONNX model to a dlc artifact ----------===//
//
// The command-line tool; the driver itself is dlc::runCompileCommand
// (lib/Driver/CompileCommand.cpp), which the Python package calls too.
//
// `dlc-compile --batch` runs many compiles in one process: each line of
// stdin is one compile's arguments as a JSON array of strings, and for each
// it writes one line to stdout, {"exit": N, "errors": "..."}, with what the
// compile would have exited with and printed to stderr (an output to stdout
// is refused: stdout carries the results). A process pays
// the loading of MLIR and LLVM once (about 30 ms of a small model's 90),
// which is what test harnesses and build systems compiling hundreds of
// models save.
//
//===----------------------------------------------------------------------===//

#include "dlc/Driver/CompileCommand.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// Why `args` cannot run in a batch, or "": --help and --version end the
/// process. (An output to stdout, which carries the results, is refused by
/// the compile itself.)
std::string refusedInBatch(const std::vector<std::string> &args) {
  for (llvm::StringRef a : args) {
    llvm::StringRef name = a.ltrim('-').split('=').first;
    if (a.starts_with("-") && (name.starts_with("help") || name == "version"))
      return "--" + name.str() + " is not a compile";
  }
  return "";
}

int runBatch(const char *argv0) {
  // The results get stdout to themselves: anything else written there
  // goes to stderr.
  int results = dup(STDOUT_FILENO);
  if (results < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    llvm::errs() << "dlc-compile: error: --batch: cannot set up stdout\n";
    return 1;
  }
  llvm::raw_fd_ostream out(results, /*shouldClose=*/true);
  std::string line;
  for (unsigned number = 1; std::getline(std::cin, line); ++number) {
    if (llvm::StringRef(line).trim().empty())
      continue;
    int exit = 2;
    std::string errors;
    std::vector<std::string> args;
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
    const llvm::json::Array *array = parsed ? parsed->getAsArray() : nullptr;
    if (!parsed)
      errors = llvm::toString(parsed.takeError());
    else if (!array)
      errors = "not a JSON array";
    for (size_t i = 0; array && i < array->size(); ++i) {
      std::optional<llvm::StringRef> s = (*array)[i].getAsString();
      if (!s) {
        errors = "element " + std::to_string(i) + " is not a string";
        break;
      }
      args.emplace_back(*s);
    }
    if (errors.empty())
      errors = refusedInBatch(args);
    if (!errors.empty()) {
      errors = "dlc-compile: error: --batch: line " + std::to_string(number) +
               ": " + errors + "\n";
    } else {
      std::vector<const char *> argv = {argv0};
      for (const std::string &a : args)
        argv.push_back(a.c_str());
      exit = dlc::runCompileCommand(argv, errors, /*stdoutTaken=*/true);
    }
    out << llvm::json::Value(llvm::json::Object{
               {"exit", exit}, {"errors", llvm::json::fixUTF8(errors)}})
        << "\n";
    out.flush();
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (argc == 2 && llvm::StringRef(argv[1]) == "--batch")
    return runBatch(argv[0]);
  return dlc::runCompileCommand(llvm::ArrayRef<const char *>(argv, argc),
                                llvm::errs());
}
