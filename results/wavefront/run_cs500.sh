#!/usr/bin/env bash
# Second wavefront session: CS500 at its own 128 spp with the pool allowed to
# hold every path (capacity limit raised from 2^26 to 2^28), plus the three
# benchmark scenes with the new defaults, all back ends in one run.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}/wavefront2
mkdir -p "$R"
exec > >(tee "$R/session.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B verify scenes/cs500.toml --backend gpu-wave
$B bench scenes/cs500.toml --backends gpu-mega,gpu-wave --blocks 8x8,16x8,32x4 --samples-per-launch 128 \
  --schedules regenerate,bounce-sync --compactions prefix-sum,atomic-append --capacities auto --repeat 3 --warmup 1 \
  --csv "$R/bench_cs500_128spp.csv" --launch-log "$R/launches_cs500_128spp.csv"
