#!/usr/bin/env bash
# Configures and builds dlc (compiler, runtime, tests) in $DLC_BUILD_DIR
# (default: build/). Run scripts/setup.sh first.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}
jobs=${DLC_JOBS:-$(nproc)}

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DDLC_WERROR=ON \
    -DDLC_TEST_PYTHON="$venv/bin/python" >/dev/null
fi
ninja -C "$build" -j"$jobs"
