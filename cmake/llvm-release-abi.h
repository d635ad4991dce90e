// Included first in every C++ file of the sanitizer build
// (DLC_ENABLE_SANITIZERS), whose code is compiled without NDEBUG so that
// dlc's asserts run, while the LLVM/MLIR packages it links were built with
// NDEBUG. A few LLVM headers lay out classes by NDEBUG: a statistic is a
// counter with an atomic "initialized" flag without it and an empty object
// with it, so a pass's statistics built by dlc's inline code and by
// libMLIR's would disagree about memory they share. Those headers are read
// here with NDEBUG, as the library saw them; asserts come back after.
#ifndef DLC_CMAKE_LLVM_RELEASE_ABI_H
#define DLC_CMAKE_LLVM_RELEASE_ABI_H

#ifndef NDEBUG
#define NDEBUG
#include "llvm/ADT/Statistic.h"
#undef NDEBUG
#include <cassert>
#endif

#endif // DLC_CMAKE_LLVM_RELEASE_ABI_H
