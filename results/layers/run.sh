#!/usr/bin/env bash
# Issue 18's GPU check: the host's redesign changed no behaviour.
#  1. `verify` IDENTICAL on every scene for both GPU back ends, and the GPU
#     tests (tests/gpu.rs, built here as gpu-run/gpu-tests);
#  2. experiments/regression_check.toml with the base commit's binary
#     (c01361f, gpu-run/wavepath-base) and this commit's (gpu-run/wavepath),
#     alternated twice on the same GPU, so that drift shows.
# Binaries: built on the development machine (this commit's with
# WAVEPATH_CUDA_ARCHS=sm_90; the GPU loads the sm_90 PTX from both), stripped.
# Usage: run.sh check | regression (two device calls, each under ten minutes).
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
BASE=gpu-run/wavepath-base
exec > >(tee "$R/$1.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B --version
$BASE --version
if [[ $1 == check ]]; then
echo "== GPU tests"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result"
echo "== verify"
for s in rtiow_final cornell_diffuse cornell_smallpt cs500 cs500_heavy; do
  for b in gpu-mega gpu-wave; do
    printf '%s %s: ' "$s" "$b"
    $B verify scenes/$s.toml --backend $b --spp 4 | head -1
  done
done
fi
if [[ $1 == regression ]]; then
echo "== regression_check"
for round in 1 2; do
  $BASE experiment experiments/regression_check.toml --quiet --out "$R/base_$round" | grep -E "^study"
  $B experiment experiments/regression_check.toml --quiet --out "$R/new_$round" | grep -E "^study"
done
fi
