#!/usr/bin/env bash
# Sets up, builds and runs every dlc test: lit (compiler passes, frontend,
# diagnostics), C++ unit tests, the runtime's C tests (plain, under
# ASan/UBSan and valgrind, the concurrent sessions under ThreadSanitizer),
# the ONNX backend node tests against their
# expectations, end-to-end model checks against ONNX Runtime, and the
# formatting check. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
start=$(date +%s)

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

# The runtime once more on its own, with only a C compiler and under
# AddressSanitizer + UndefinedBehaviorSanitizer (its fuzz target included).
asan="$build/runtime-asan"
if [ ! -f "$asan/build.ninja" ]; then
  CC=clang-22 cmake -G Ninja -S "$root/runtime" -B "$asan" \
    -DCMAKE_BUILD_TYPE=Debug -DDLC_RUNTIME_ENABLE_SANITIZERS=ON \
    -DDLC_RUNTIME_WERROR=ON >/dev/null
fi
ninja -C "$asan" -j"${DLC_JOBS:-$(nproc)}"
ctest --test-dir "$asan" --output-on-failure -j"${DLC_JOBS:-$(nproc)}"

# The CPU driver's thread pools under ThreadSanitizer: the runtime test,
# whose sessions of one model run concurrently on pools of 1 to 3 threads.
tsan="$build/runtime-tsan"
if [ ! -f "$tsan/build.ninja" ]; then
  CC=clang-22 cmake -G Ninja -S "$root/runtime" -B "$tsan" \
    -DCMAKE_BUILD_TYPE=Debug -DDLC_RUNTIME_ENABLE_TSAN=ON \
    -DDLC_RUNTIME_BUILD_FUZZER=OFF -DDLC_RUNTIME_WERROR=ON >/dev/null
fi
ninja -C "$tsan" -j"${DLC_JOBS:-$(nproc)}"
ctest --test-dir "$tsan" --output-on-failure -R 'dlc_runtime\.runtime$'

ctest --test-dir "$build" --output-on-failure -j"${DLC_JOBS:-$(nproc)}"
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
