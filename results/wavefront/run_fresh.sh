#!/usr/bin/env bash
# Fifth wavefront session: after "fresh" refills (an empty pool takes slots
# 0..n in order), the GPU tests and one run per scene of both back ends.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec > >(tee "$R/session_fresh.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"
$B verify scenes/cornell_smallpt.toml --backend gpu-wave --schedule bounce-sync --capacity 2^22 --spp 64
W="--schedules bounce-sync,regenerate --compactions prefix-sum --wave-blocks 64 --drains 262144 --warmup 1"
$B bench scenes/cornell_smallpt.toml --backends gpu-mega,gpu-wave --blocks 16x8 --samples-per-launch 1024 \
  $W --capacities 2^22,2^26,auto --repeat 3 --csv "$R/bench_fresh_smallpt.csv"
$B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backends gpu-mega,gpu-wave --blocks 8x8 \
  --samples-per-launch 10 $W --capacities 2^22,auto --repeat 5 --csv "$R/bench_fresh_rtiow.csv"
$B bench scenes/cs500.toml --backends gpu-mega,gpu-wave --blocks 16x8 --samples-per-launch 128 \
  $W --capacities 2^24,auto --repeat 3 --csv "$R/bench_fresh_cs500.csv"
$B bench scenes/cornell_diffuse.toml --backends gpu-mega,gpu-wave --blocks 8x8 --samples-per-launch 1024 \
  $W --capacities 2^22,auto --repeat 3 --csv "$R/bench_fresh_cornell.csv"
