#!/usr/bin/env bash
# Sets up, builds and runs every dlc test: lit (compiler passes, frontend,
# diagnostics), C++ unit tests, the runtime's C tests (plain, under
# ASan/UBSan and valgrind), the ONNX backend node tests against their
# expectations, end-to-end model checks against ONNX Runtime, and the
# formatting check. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
start=$(date +%s)

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j"${DLC_JOBS:-$(nproc)}"
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
