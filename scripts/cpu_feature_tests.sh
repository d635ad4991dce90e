#!/usr/bin/env bash
# CPU artifacts on CPUs other than this one, with QEMU's CPU models as the
# devices: code compiled for instruction-set extensions a CPU lacks is
# refused at load with the extensions named (not run into an illegal
# instruction), code for what the CPU has runs, and aarch64, armv7 and
# riscv64 code (built here, run under qemu-user with a dlc-run cross-built
# with runtime/cmake/toolchains/) computes what the x86 host computes, on a
# convolution and on zoo models.
#
#   scripts/cpu_feature_tests.sh BUILD_DIR
#
# Needs the cross compilers and qemu-user (scripts/setup.sh installs them);
# the cross dlc-run builds go to BUILD_DIR/runtime-<arch>.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: cpu_feature_tests.sh BUILD_DIR}" && pwd)
compile=$build/bin/dlc-compile
run=$build/bin/dlc-run
inputs=$root/test/tools/Inputs
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}
zoo=$HOME/.cache/dlc/models  # scripts/zoo/models.py's default
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

for tool in aarch64-linux-gnu-gcc arm-linux-gnueabihf-gcc \
  riscv64-linux-gnu-gcc qemu-aarch64 qemu-arm qemu-riscv64 qemu-x86_64; do
  command -v "$tool" >/dev/null ||
    { echo "cpu_feature_tests: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
# dlc-run for each triple in $build/runtime-<triple>.
"$root/scripts/cross_runtimes.sh" "$build" aarch64-linux-gnu \
  armv7a-linux-gnueabihf riscv64-linux-gnu
cross=$build/runtime-aarch64-linux-gnu
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

# aarch64, armv7 and riscv64: the convolution and zoo models on the cross-built
# dlc-run under qemu-user, against the host's outputs. On armv7, kernels
# must not call compiler helper functions (nothing provides them to the
# loaded kernels): index divisions compute in i32 there
# (dlc-narrow-index-division) and int64 -> float in integer operations.
PYTHONPATH="$root" "$venv/bin/python" -m scripts.zoo.models --out "$zoo" \
  --models squeezenet1_1,qoperator_cnn,bert_tiny,nbits_decoder_lm,qdynamic_crnn \
  >/dev/null
bert_pins=(--input-shape input_ids=1,128 --input-shape attention_mask=1,128
  --input-shape token_type_ids=1,128)
# reference NAME MODEL ARGS...: the host's outputs for seed 5 in $work/ref-NAME.
reference() {
  local name=$1 model=$2; shift 2
  "$compile" "$model" "$@" --target=cpu -o "$work/$name.host.dlcx"
  mkdir -p "$work/ref-$name"
  "$run" "$work/$name.host.dlcx" --seed 5 --output-dir "$work/ref-$name" >/dev/null
}
# cross_run TRIPLE QEMU SYSROOT NAME MODEL ARGS...: compile for TRIPLE, run
# there, compare every output with the host's.
cross_run() {
  local triple=$1 qemu=$2 sysroot=$3 name=$4 model=$5; shift 5
  local expects=() f
  "$compile" "$model" "$@" --target="cpu:$triple" -o "$work/$name.$triple.dlcx"
  for f in "$work/ref-$name"/*.npy; do
    expects+=(--expect "$(basename "$f" .npy)=$f")
  done
  "$qemu" -L "$sysroot" "$build/runtime-$triple/dlc-run" \
    "$work/$name.$triple.dlcx" --seed 5 --rtol 1e-3 --atol 1e-4 "${expects[@]}"
}
# cross_run_with FEATURES TRIPLE QEMU SYSROOT NAME MODEL ARGS...: the same
# with target features (+dotprod) on QEMU's most capable CPU.
cross_run_with() {
  local features=$1 triple=$2 qemu=$3 sysroot=$4 name=$5 model=$6; shift 6
  local expects=() f
  "$compile" "$model" "$@" --target="cpu:$triple:$features" \
    -o "$work/$name.$triple.f.dlcx"
  for f in "$work/ref-$name"/*.npy; do
    expects+=(--expect "$(basename "$f" .npy)=$f")
  done
  "$qemu" -cpu max -L "$sysroot" "$build/runtime-$triple/dlc-run" \
    "$work/$name.$triple.f.dlcx" --seed 5 --rtol 1e-3 --atol 1e-4 \
    "${expects[@]}"
}
reference conv3x3 "$inputs/conv3x3.onnxtxt"
reference squeezenet "$zoo/squeezenet1_1.onnx"
reference qcnn "$zoo/qoperator_cnn.onnx"
reference bert "$zoo/bert_tiny.onnx" "${bert_pins[@]}"
reference nbits "$zoo/nbits_decoder_lm.onnx"
reference qcrnn "$zoo/qdynamic_crnn.onnx"
a64=(aarch64-linux-gnu qemu-aarch64 /usr/aarch64-linux-gnu)
arm=(armv7a-linux-gnueabihf qemu-arm /usr/arm-linux-gnueabihf)
rv=(riscv64-linux-gnu qemu-riscv64 /usr/riscv64-linux-gnu)
expect_run "aarch64 squeezenet1_1 matches x86" cross_run "${a64[@]}" squeezenet "$zoo/squeezenet1_1.onnx"
expect_run "aarch64 qoperator_cnn matches x86" cross_run "${a64[@]}" qcnn "$zoo/qoperator_cnn.onnx"
expect_run "aarch64 bert_tiny matches x86" cross_run "${a64[@]}" bert "$zoo/bert_tiny.onnx" "${bert_pins[@]}"
expect_run "aarch64 nbits_decoder_lm (4-bit weights) matches x86" cross_run "${a64[@]}" nbits "$zoo/nbits_decoder_lm.onnx"
# 8-bit dot products: sdot (+dotprod; activations repacked as signed bytes)
# and usdot (+i8mm), on the QOperator CNN and the quantize_dynamic CRNN
# (run-time zero points, uint8 weights centred per channel).
expect_run "aarch64 +dotprod (sdot) qoperator_cnn matches x86" cross_run_with +dotprod "${a64[@]}" qcnn "$zoo/qoperator_cnn.onnx"
expect_run "aarch64 +dotprod (sdot) qdynamic_crnn matches x86" cross_run_with +dotprod "${a64[@]}" qcrnn "$zoo/qdynamic_crnn.onnx"
expect_run "aarch64 +i8mm (usdot) qoperator_cnn matches x86" cross_run_with +dotprod,+i8mm "${a64[@]}" qcnn "$zoo/qoperator_cnn.onnx"
expect_run "aarch64 +i8mm (usdot) qdynamic_crnn matches x86" cross_run_with +dotprod,+i8mm "${a64[@]}" qcrnn "$zoo/qdynamic_crnn.onnx"
expect_run "armv7 conv3x3 matches x86" cross_run "${arm[@]}" conv3x3 "$inputs/conv3x3.onnxtxt"
expect_run "armv7 qoperator_cnn matches x86" cross_run "${arm[@]}" qcnn "$zoo/qoperator_cnn.onnx"
expect_run "armv7 squeezenet1_1 matches x86" cross_run "${arm[@]}" squeezenet "$zoo/squeezenet1_1.onnx"
expect_run "armv7 bert_tiny matches x86" cross_run "${arm[@]}" bert "$zoo/bert_tiny.onnx" "${bert_pins[@]}"
# int64 -> float in integer operations (dlc-legalize-math's
# expand-i64-to-f32 on 32-bit targets): bit for bit against NumPy on
# random bits, values around 2^24..2^63 with ties, and the extremes.
"$venv/bin/python" - "$work" <<'PY'
import sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(7)
n = 65536
x = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
m = n // 4
x[:m] = rng.integers(-2 ** 26, 2 ** 26, m)
scale = np.left_shift(np.int64(1), rng.integers(24, 62, m))
x[m:2 * m] = scale + rng.integers(-3, 4, m) * (scale >> 24) // 2
edges = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 24 + 1, 2 ** 24 + 3,
         -(2 ** 24 + 1), 2 ** 53 + 1, 2 ** 40 + 2 ** 15, 2 ** 40 + 2 ** 16 + 2 ** 15]
x[2 * m:2 * m + len(edges)] = edges
u = x.view(np.uint64)
np.save(work + "/cast-x.npy", x)
np.save(work + "/cast-u.npy", u)
np.save(work + "/cast-y.npy", x.astype(np.float32))
np.save(work + "/cast-v.npy", u.astype(np.float32))
PY
"$compile" "$inputs/cast-int64-float.onnxtxt" --target=cpu:armv7a-linux-gnueabihf \
  -o "$work/cast.armv7.dlcx"
expect_run "armv7 int64 -> float exact" qemu-arm -L /usr/arm-linux-gnueabihf \
  "$build/runtime-armv7a-linux-gnueabihf/dlc-run" "$work/cast.armv7.dlcx" \
  --input "X=$work/cast-x.npy" --input "U=$work/cast-u.npy" \
  --expect "Y=$work/cast-y.npy" --expect "V=$work/cast-v.npy" --rtol 0 --atol 0
expect_run "riscv64 conv3x3 matches x86" cross_run "${rv[@]}" conv3x3 "$inputs/conv3x3.onnxtxt"
expect_run "riscv64 squeezenet1_1 matches x86" cross_run "${rv[@]}" squeezenet "$zoo/squeezenet1_1.onnx"
expect_run "riscv64 qoperator_cnn matches x86" cross_run "${rv[@]}" qcnn "$zoo/qoperator_cnn.onnx"
expect_run "riscv64 bert_tiny matches x86" cross_run "${rv[@]}" bert "$zoo/bert_tiny.onnx" "${bert_pins[@]}"
expect_run "riscv64 nbits_decoder_lm (4-bit weights) matches x86" cross_run "${rv[@]}" nbits "$zoo/nbits_decoder_lm.onnx"

if [ "$failures" -ne 0 ]; then
  echo "cpu_feature_tests: $failures failed"
  exit 1
fi
echo "cpu_feature_tests: all passed"
