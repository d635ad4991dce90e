#!/usr/bin/env bash
# CPU artifacts on CPUs other than this one, with QEMU's CPU models as the
# devices: code compiled for instruction-set extensions a CPU lacks is
# refused at load with the extensions named (not run into an illegal
# instruction), code for what the CPU has runs, and aarch64 code (built
# here, run under qemu-aarch64 with a cross-built dlc-run) computes what
# the x86 host computes.
#
#   scripts/cpu_feature_tests.sh BUILD_DIR
#
# Needs aarch64-linux-gnu-gcc and qemu-user (scripts/setup.sh installs
# both); the aarch64 dlc-run is built in BUILD_DIR/runtime-aarch64.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: cpu_feature_tests.sh BUILD_DIR}" && pwd)
compile=$build/bin/dlc-compile
run=$build/bin/dlc-run
inputs=$root/test/tools/Inputs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

for tool in aarch64-linux-gnu-gcc qemu-aarch64 qemu-x86_64; do
  command -v "$tool" >/dev/null ||
    { echo "cpu_feature_tests: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
cross=$build/runtime-aarch64
if [ ! -f "$cross/build.ninja" ]; then
  cmake -G Ninja -S "$root/runtime" -B "$cross" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
    -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DDLC_RUNTIME_BUILD_TESTS=OFF \
    -DDLC_RUNTIME_BUILD_FUZZER=OFF -DDLC_RUNTIME_ENABLE_VULKAN=OFF \
    -DDLC_RUNTIME_ENABLE_CUDA=OFF -DDLC_RUNTIME_WERROR=ON >/dev/null
fi
ninja -C "$cross" dlc-run >/dev/null
arm_run() { # CPU_MODEL ARGS...
  local cpu=$1; shift
  qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$cpu" "$cross/dlc-run" "$@"
}
x86_run() { # CPU_MODEL ARGS...
  local cpu=$1; shift
  # TCG lists the host features it does not emulate on stderr; drop them.
  qemu-x86_64 -cpu "$cpu" "$run" "$@" 2> >(grep -v "TCG doesn't support" >&2)
}

# expect_refusal NAME MESSAGE COMMAND...: the command fails saying MESSAGE.
expect_refusal() {
  local name=$1 message=$2; shift 2
  local out
  if out=$("$@" 2>&1); then
    echo "FAIL $name: ran, expected a refusal"; failures=$((failures + 1)); return
  fi
  if [[ "$out" != *"$message"* ]]; then
    echo "FAIL $name: expected '$message', got: $out"; failures=$((failures + 1)); return
  fi
  echo "ok   $name"
}
expect_run() { # NAME COMMAND...
  local name=$1; shift
  local out
  if ! out=$("$@" 2>&1); then
    echo "FAIL $name: $out"; failures=$((failures + 1)); return
  fi
  echo "ok   $name"
}

# aarch64: dot products and i8mm asked for; Cortex-A53 has neither,
# Cortex-A76 dot products only, QEMU's "max" both.
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu:aarch64-linux-gnu:+dotprod,+i8mm -o "$work/a64-dot.dlcx"
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu:aarch64-linux-gnu -o "$work/a64.dlcx"
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu:aarch64-linux-gnu --cpu=cortex-a76 -o "$work/a64-a76.dlcx"
expect_refusal "aarch64 +dotprod,+i8mm on cortex-a53" \
  "the artifact's code uses dotprod, i8mm, which this CPU does not have" \
  arm_run cortex-a53 "$work/a64-dot.dlcx"
expect_refusal "aarch64 +dotprod,+i8mm on cortex-a76" \
  "the artifact's code uses i8mm, which this CPU does not have" \
  arm_run cortex-a76 "$work/a64-dot.dlcx"
expect_refusal "aarch64 --cpu=cortex-a76 on cortex-a53" \
  "the artifact's code uses dotprod, fullfp16, which this CPU does not have" \
  arm_run cortex-a53 "$work/a64-a76.dlcx"
expect_run "aarch64 +dotprod,+i8mm on max" arm_run max "$work/a64-dot.dlcx"
expect_run "aarch64 --cpu=cortex-a76 on cortex-a76" arm_run cortex-a76 "$work/a64-a76.dlcx"

# The same inputs on the host and on an emulated Cortex-A53: the same
# outputs (the x86 run is the reference; float rounding may differ a
# little between the two instruction sets).
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu -o "$work/host.dlcx"
mkdir -p "$work/ref"
"$run" "$work/host.dlcx" --seed 3 --output-dir "$work/ref" >/dev/null
expect_run "aarch64 generic on cortex-a53 matches x86" \
  arm_run cortex-a53 "$work/a64.dlcx" --seed 3 --expect "Y=$work/ref/Y.npy"

# x86-64: code for this machine (AVX-512 here, if it has it) on an
# emulated Haswell, which has AVX2 and FMA and no AVX-512; code for AVX2
# and FMA runs there.
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu:x86_64-linux-gnu:+avx512f,+avx512bw,+avx512vnni -o "$work/x86-512.dlcx"
"$compile" "$inputs/conv3x3.onnxtxt" --target=cpu:x86_64-linux-gnu:+avx2,+fma -o "$work/x86-avx2.dlcx"
expect_refusal "x86 +avx512 on Haswell" \
  "the artifact's code uses avx512f, avx512bw, avx512vnni, which this CPU does not have" \
  x86_run Haswell "$work/x86-512.dlcx"
expect_run "x86 +avx2,+fma on Haswell matches the host" \
  x86_run Haswell "$work/x86-avx2.dlcx" --seed 3 --expect "Y=$work/ref/Y.npy"

if [ "$failures" -ne 0 ]; then
  echo "cpu_feature_tests: $failures failed"
  exit 1
fi
echo "cpu_feature_tests: all passed"
