#!/usr/bin/env bash
# Installs everything dlc needs on Debian 12 and creates the Python virtual
# environment for the test tools. Idempotent and quick when all is present.
#
#   scripts/setup.sh            # packages + venv
#   DLC_VENV=/path scripts/setup.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}

# Package -> why dlc needs it.
packages=(
  cmake ninja-build                       # build
  clang-22 lld-22 libclang-rt-22-dev      # compiler, linker for CPU kernels, sanitizers/fuzzer
  llvm-22-dev llvm-22-tools               # LLVM 22 (FileCheck, lit, not)
  libmlir-22-dev mlir-22-tools            # MLIR 22 (libMLIR.so, mlir-tblgen)
  clang-format-22                         # the formatting check
  libonnx-dev libprotobuf-dev             # ONNX C++ library (parser, checker, shape inference)
  libvulkan-dev mesa-vulkan-drivers       # Vulkan loader and lavapipe (a CPU Vulkan driver)
  spirv-tools vulkan-tools                # spirv-val, vulkaninfo
  glslang-tools vulkan-validationlayers   # runtime tests: GLSL kernels, the validation layer
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user  # cross builds and their tests
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross  # armv7 (runtime/cmake/toolchains)
  gcc-riscv64-linux-gnu libc6-dev-riscv64-cross  # riscv64
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm  # bare metal: Cortex-M4 firmware under QEMU
  python3-venv valgrind libgtest-dev      # test tools
  python3-dev                             # the Python package's native module (Python.h)
  pkg-config                              # the installed-runtime test (pkg-config build)
  chromium                                # python-tests: the compile report in a headless browser
  fonts-dejavu-core fonts-wqy-microhei    # scripts/quant: text of the synthetic documents
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "setup: error: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || echo "setup: warning: apt-get update failed" >&2
  if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/dlc-setup-apt.log 2>&1; then
    still=()
    for p in "${missing[@]}"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        still+=("$p")
    done
    echo "setup: error: could not install: ${still[*]}" >&2
    echo "setup: (LLVM/MLIR 22 come from Debian 12's bookworm-security suite;" >&2
    echo "setup:  see /tmp/dlc-setup-apt.log for apt's output)" >&2
    exit 1
  fi
fi

# The Python tools, re-installed only when the pinned requirements change.
stamp="$venv/.dlc-requirements"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
  echo "setup: creating the Python environment in $venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$stamp"
fi

if [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null; then
  echo "setup: note: no ptxas (CUDA toolkit); PTX will be generated but not assembled"
fi
echo "setup: ok (venv: $venv)"
