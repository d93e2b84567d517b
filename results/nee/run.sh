#!/usr/bin/env bash
# The GPU session that produced results/nee: the GPU tests, a GPU-against-CPU
# check with next-event estimation on, the converged references, then the
# experiment (through results/experiments.sh).
#   bash results/nee/run.sh
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
mkdir -p "$R"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv
  $B --version
  gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result"
  for s in cornell_smallpt cornell_diffuse cs500; do
    for b in gpu-mega gpu-wave; do
      $B verify scenes/$s.toml --backend $b --nee on --sampler sobol --spp 4 --size 256x256 2>&1 | tail -1
    done
  done
  D=results/nee/references
  mkdir -p $D
  $B render scenes/cornell_diffuse.toml --backend gpu-mega --nee on --sampler sobol --seed 99 --spp 16384 --out $D/cornell_diffuse.exr --quiet
  $B render scenes/cornell_smallpt.toml --backend gpu-mega --nee on --sampler sobol --seed 99 --size 512x384 --spp 16384 --out $D/cornell_smallpt.exr --quiet
  $B render scenes/cs500.toml --backend gpu-mega --nee on --sampler sobol --seed 99 --size 512x512 --spp 8192 --out $D/cs500.exr --quiet
  tar czf "$R/references.tar.gz" $D
} > "$R/nee_checks.log" 2>&1
BUDGET=${BUDGET:-420} bash results/experiments.sh nee
