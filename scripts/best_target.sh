#!/usr/bin/env bash
# Prints the best dlc target this machine can run: cuda:sm_XX when an NVIDIA
# GPU and its driver are present, vulkan when a Vulkan GPU (not a CPU
# implementation such as lavapipe) is present, else cpu.
set -uo pipefail

if command -v nvidia-smi >/dev/null 2>&1; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
  case "$cap" in
    75|80|86|87|89|90) echo "cuda:sm_$cap"; exit 0 ;;
    1[0-9][0-9]) echo "cuda:sm_90"; exit 0 ;;   # newer GPUs JIT sm_90 PTX
  esac
fi
if command -v vulkaninfo >/dev/null 2>&1 &&
   vulkaninfo --summary 2>/dev/null | grep -E 'deviceType' |
     grep -qE 'DISCRETE_GPU|INTEGRATED_GPU|VIRTUAL_GPU'; then
  echo vulkan
  exit 0
fi
echo cpu
