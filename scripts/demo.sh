#!/usr/bin/env bash
# The main job, from a fresh machine: set up, build, generate MobileNetV2
# (random weights, exporter-style graph), compile it for the best target
# present, run it, check its outputs against ONNX Runtime, and time it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
venv=${DLC_VENV:-$HOME/.cache/dlc/venv}
models=${DLC_MODELS:-$HOME/.cache/dlc/models}
model=${1:-mobilenetv2}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

target=$("$root/scripts/best_target.sh")
echo "demo: best target present: $target"
PYTHONPATH="$root" "$venv/bin/python" -m scripts.zoo.models --out "$models" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin=$("$venv/bin/python" - "$models" "$model" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))["models"][sys.argv[2]]
print(" ".join("--input-shape=" + p for p in m.get("input_shape_pins", [])))
PY
)
echo "demo: dlc-compile $model.onnx --target=$target $pin"
"$build/bin/dlc-compile" "$models/$model.onnx" --target="$target" $pin \
  -o "$work/$model.dlcx" --stats
echo "demo: dlc-run $model.dlcx --bench 20"
"$build/bin/dlc-run" "$work/$model.dlcx" --bench 20
echo "demo: comparing with ONNX Runtime"
PYTHONPATH="$root" "$venv/bin/python" -m scripts.zoo.check --build "$build" \
  --targets "$target" --models "$model"
