#!/usr/bin/env bash
# The GPU session that produced results/material_cost (and re-ran
# results/nee at the same commit): a GPU-against-CPU check of the
# material-cost scene with sixteen programs on both back ends, then the
# experiments (through results/experiments.sh).
#   bash results/material_cost/run.sh
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
mkdir -p "$R"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv
  $B --version
  for b in gpu-mega gpu-wave; do
    $B verify experiments/scenes/material_cost.toml --backend $b --spp 2 2>&1 | tail -1
  done
} > "$R/material_cost_checks.log" 2>&1
BUDGET=${BUDGET:-540} bash results/experiments.sh material_cost nee
