#!/usr/bin/env bash
# Configures and builds dlc (compiler, runtime, tests) in $DLC_BUILD_DIR
# (default: build/). Run scripts/setup.sh first.
#
#   scripts/build.sh             Release build in $DLC_BUILD_DIR
#   scripts/build.sh --sanitize  the checking build in $DLC_BUILD_DIR/sanitize:
#                                the compiler under ASan + UBSan with its
#                                asserts on, and its libFuzzer targets
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}
jobs=${DLC_JOBS:-$(nproc)}

options=(-DCMAKE_BUILD_TYPE=Release)
case "${1:-}" in
  "") options+=(-DDLC_BUILD_PYTHON=ON) ;;
  --sanitize)
    build=$build/sanitize
    options+=(-DDLC_ENABLE_SANITIZERS=ON -DDLC_BUILD_FUZZERS=ON)
    ;;
  *)
    echo "build.sh: unknown option '$1' (the one option is --sanitize)" >&2
    exit 2
    ;;
esac

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" "${options[@]}" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DDLC_WERROR=ON \
    -DDLC_TEST_PYTHON="$venv/bin/python" >/dev/null
fi
ninja -C "$build" -j"$jobs"
