#!/usr/bin/env bash
# The runtime as an installed package, used the way an application outside
# this repository would: runtime/ configured on its own and installed into a
# temporary prefix, then examples/run_model built against it twice, with
# CMake's find_package(dlc_runtime) and with pkg-config and a plain C
# compiler, and each build runs a CPU artifact that dlc-compile writes.
#
#   scripts/runtime_package_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: runtime_package_test.sh BUILD_DIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-clang-22}

cmake -G Ninja -S "$root/runtime" -B "$work/runtime" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$work/prefix" -DDLC_RUNTIME_BUILD_TESTS=OFF \
  -DDLC_RUNTIME_BUILD_FUZZER=OFF >/dev/null
cmake --build "$work/runtime" >/dev/null
cmake --install "$work/runtime" >/dev/null
for f in include/dlc/runtime.h include/dlc/artifact_format.h \
  lib/libdlc_runtime.a lib/cmake/dlc_runtime/dlc_runtimeConfig.cmake \
  lib/pkgconfig/dlc_runtime.pc bin/dlc-run; do
  [ -e "$work/prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done

"$build/bin/dlc-compile" "$root/test/tools/Inputs/relu.onnxtxt" \
  -o "$work/relu.dlcx"

# CMake, out of tree, from the installed package only.
cmake -G Ninja -S "$root/examples" -B "$work/examples" \
  -DCMAKE_C_COMPILER="$cc" -DDLC_EXAMPLES_INSTALLED_RUNTIME=ON \
  -DCMAKE_PREFIX_PATH="$work/prefix" | grep "dlc_runtime"
cmake --build "$work/examples" >/dev/null
"$work/examples/run_model" "$work/relu.dlcx" | tee "$work/cmake.txt"

# pkg-config and a compiler, nothing else.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
echo "pkg-config: $(pkg-config --cflags --libs dlc_runtime)" \
  "(drivers: $(pkg-config --variable=drivers dlc_runtime))"
# shellcheck disable=SC2046
"$cc" -std=c99 -O2 "$root/examples/run_model/main.c" -o "$work/run_model_pc" \
  $(pkg-config --cflags --libs dlc_runtime)
"$work/run_model_pc" "$work/relu.dlcx" > "$work/pc.txt"
cmp "$work/cmake.txt" "$work/pc.txt"
echo "runtime_package_test: both builds ran the artifact alike"

# Kernels linked into the program (the CPU driver's static mode): the object
# and the kernel table (.kernels.c) that dlc-compile --emit=obj writes, with
# run_model built -DDLC_STATIC_KERNELS, must print what the artifact's own
# code prints; and another model's artifact must be refused by the object's
# fingerprint (relu's one kernel is called main_k0_generic, as two-kernels'
# first is: by name alone the wrong function would run).
model="$root/test/tools/Inputs/two-kernels.onnxtxt"
"$build/bin/dlc-compile" "$model" -o "$work/two.dlcx"
"$build/bin/dlc-compile" "$model" --emit=obj -o "$work/two.o"
[ -f "$work/two.kernels.c" ] || { echo "no two.kernels.c" >&2; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=c99 -O2 -Wall -Wextra -Werror -DDLC_STATIC_KERNELS \
  "$root/examples/run_model/main.c" "$work/two.kernels.c" "$work/two.o" \
  -o "$work/run_model_static" $(pkg-config --cflags --libs dlc_runtime)
"$work/run_model_pc" "$work/two.dlcx" > "$work/loaded.txt"
"$work/run_model_static" "$work/two.dlcx" > "$work/linked.txt"
cmp "$work/loaded.txt" "$work/linked.txt"
if "$work/run_model_static" "$work/relu.dlcx" 2> "$work/missing.txt"; then
  echo "run_model_static ran relu.dlcx without its kernels" >&2
  exit 1
fi
grep -q "are not this artifact's" "$work/missing.txt" ||
  { cat "$work/missing.txt" >&2; exit 1; }
echo "runtime_package_test: linked kernels ran the artifact alike" \
  "($(grep -c '^void ' "$work/two.kernels.c") kernels)"

# Two models' kernels in one program: each compiled with its own
# --symbol-prefix (without one their kernel symbols collide at link time),
# run_model given both tables in order, each model in its own context; the
# same outputs as the loaded code, and the models in the wrong order
# refused.
inputs="$root/test/tools/Inputs"
for m in relu:first_ two-kernels:second_; do
  name=${m%%:*} prefix=${m#*:}
  "$build/bin/dlc-compile" "$inputs/$name.onnxtxt" --symbol-prefix="$prefix" \
    -o "$work/$prefix.dlcx"
  "$build/bin/dlc-compile" "$inputs/$name.onnxtxt" --symbol-prefix="$prefix" \
    --emit=obj -o "$work/$prefix.o"
done
# shellcheck disable=SC2046
"$cc" -std=c99 -O2 -Wall -Wextra -Werror -DDLC_STATIC_KERNELS \
  '-DDLC_LINKED(X)=X(first_) X(second_)' "$root/examples/run_model/main.c" \
  "$work/first_.kernels.c" "$work/second_.kernels.c" "$work/first_.o" \
  "$work/second_.o" -o "$work/run_two" $(pkg-config --cflags --libs dlc_runtime)
"$work/run_model_pc" "$work/first_.dlcx" "$work/second_.dlcx" > "$work/two-loaded.txt"
"$work/run_two" "$work/first_.dlcx" "$work/second_.dlcx" > "$work/two-linked.txt"
cmp "$work/two-loaded.txt" "$work/two-linked.txt"
[ "$(grep -c '^model: ' "$work/two-linked.txt")" = 2 ] ||
  { cat "$work/two-linked.txt" >&2; exit 1; }
if "$work/run_two" "$work/second_.dlcx" "$work/first_.dlcx" 2> "$work/swapped.txt"; then
  echo "run_two ran the models with each other's kernels" >&2
  exit 1
fi
grep -q "are not this artifact's" "$work/swapped.txt" ||
  { cat "$work/swapped.txt" >&2; exit 1; }
echo "runtime_package_test: two models' linked kernels in one program ran" \
  "alike"
