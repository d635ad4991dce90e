#!/usr/bin/env bash
# Fuzzes the compiler's front half (parse, validate, import, legalize,
# optimize, dispatch formation) with the libFuzzer targets of the sanitizer
# build (scripts/build.sh --sanitize). Seeds: the ONNX backend test models
# shipped in the onnx package (node, simple and pytorch-operator tests) and
# the zoo's models with their weights made ConstantOfShape nodes
# (scripts/fuzz_seeds.py; scripts/zoo/models.py generates the zoo).
#
#   scripts/fuzz_compiler.sh [--time SECONDS | --runs N] [--target T] [-- ARGS]
#
# T is compile (libFuzzer's byte-level mutations), compile-structured
# (protobuf-level mutations of the model) or both (the default; --time and
# --runs then apply to each). The seeds run first in either case. Inputs that
# found new coverage go to $DLC_BUILD_DIR/sanitize/fuzz/<target>/, crashes to
# $DLC_BUILD_DIR/sanitize/fuzz/artifacts/. ARGS go to libFuzzer as they are.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}/sanitize
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}

limit=(-max_total_time=60)
targets=(compile compile-structured)
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    --target)
      case "$2" in
        compile|compile-structured) targets=("$2") ;;
        both) targets=(compile compile-structured) ;;
        *) echo "fuzz_compiler.sh: unknown target '$2'" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "fuzz_compiler.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

for t in "${targets[@]}"; do
  if [ ! -x "$build/bin/dlc-fuzz-$t" ]; then
    echo "fuzz_compiler.sh: $build/bin/dlc-fuzz-$t is missing;" \
      "run scripts/build.sh --sanitize first" >&2
    exit 1
  fi
done

seeds=$build/fuzz/seeds
if [ ! -d "$seeds" ]; then
  data=$("$venv/bin/python" -c \
    'import onnx, os; print(os.path.dirname(onnx.__file__))')/backend/test/data
  rm -rf "$seeds.tmp"
  mkdir -p "$seeds.tmp"
  for kind in node simple pytorch-operator; do
    for model in "$data/$kind"/*/model.onnx; do
      cp "$model" "$seeds.tmp/$kind-$(basename "$(dirname "$model")").onnx"
    done
  done
  zoo=$HOME/.cache/dlc/models  # scripts/zoo/models.py's default
  PYTHONPATH="$root" "$venv/bin/python" -m scripts.zoo.models --out "$zoo" >/dev/null
  PYTHONPATH="$root" "$venv/bin/python" -m scripts.fuzz_seeds --models "$zoo" \
    --out "$seeds.tmp" >/dev/null
  mv "$seeds.tmp" "$seeds"
fi

mkdir -p "$build/fuzz/artifacts"
# LeakSanitizer off: the ONNX library's operator schemas and MLIR's uniqued
# storage live until exit by design, and one context serves the whole run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
# The targets run side by side (each fuzzer is one process on one core),
# each into its own log: its last lines when it passes, all of it when it
# fails.
pids=()
for t in "${targets[@]}"; do
  mkdir -p "$build/fuzz/$t"
  echo "fuzz_compiler.sh: dlc-fuzz-$t ${limit[*]}"
  "$build/bin/dlc-fuzz-$t" "${limit[@]}" -max_len=262144 -timeout=60 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/artifacts/$t-" "${extra[@]}" \
    "$build/fuzz/$t" "$seeds" > "$build/fuzz/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    echo "fuzz_compiler.sh: dlc-fuzz-$t passed ($build/fuzz/$t.log):"
    tail -n 8 "$build/fuzz/$t.log"
  else
    status=1
    cat "$build/fuzz/$t.log"
    echo "fuzz_compiler.sh: dlc-fuzz-$t FAILED (log above;" \
      "crashing inputs in $build/fuzz/artifacts)" >&2
  fi
done
exit "$status"
