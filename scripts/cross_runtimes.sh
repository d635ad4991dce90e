#!/usr/bin/env bash
# Cross-builds dlc-run for CPU triples other than this machine's, with the
# runtime's toolchain files (runtime/cmake/toolchains/<triple>.cmake), into
# BUILD_DIR/runtime-<triple>: what runs an artifact of that triple under
# QEMU's user mode (scripts/cpu_feature_tests.sh, and scripts/zoo/check.py
# --qemu).
#
#   scripts/cross_runtimes.sh BUILD_DIR [TRIPLE...]
#
# Default triples: aarch64-linux-gnu armv7a-linux-gnueabihf
# riscv64-linux-gnu. Needs their cross compilers (scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: cross_runtimes.sh BUILD_DIR [TRIPLE...]}" && pwd)
shift
triples=("$@")
if [ ${#triples[@]} -eq 0 ]; then
  triples=(aarch64-linux-gnu armv7a-linux-gnueabihf riscv64-linux-gnu)
fi
for triple in "${triples[@]}"; do
  dir=$build/runtime-$triple
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -G Ninja -S "$root/runtime" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$root/runtime/cmake/toolchains/$triple.cmake" \
      -DDLC_RUNTIME_BUILD_TESTS=OFF -DDLC_RUNTIME_BUILD_FUZZER=OFF \
      -DDLC_RUNTIME_ENABLE_VULKAN=OFF -DDLC_RUNTIME_ENABLE_CUDA=OFF \
      -DDLC_RUNTIME_WERROR=ON >/dev/null
  fi
  ninja -C "$dir" dlc-run >/dev/null
done
