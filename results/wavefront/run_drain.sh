#!/usr/bin/env bash
# Third wavefront session: the tail drain (--drain-below), swept on the three
# benchmark scenes against the megakernel's best shapes, in one run each.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}/wavefront3
mkdir -p "$R"
exec > >(tee "$R/session.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"
$B verify scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backend gpu-wave --drain-below 262144
$B verify scenes/cs500.toml --spp 32 --backend gpu-wave --drain-below 262144
$B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backends gpu-mega,gpu-wave \
  --blocks 8x4,8x8,16x8 --samples-per-launch 10 --schedules regenerate,bounce-sync --compactions prefix-sum \
  --capacities auto --wave-blocks 64,128 --drains 0,16384,65536,262144,1048576 --repeat 5 --warmup 1 \
  --csv "$R/bench_rtiow_drain.csv" --launch-log "$R/launches_rtiow_drain.csv"
$B bench scenes/cs500.toml --backends gpu-mega,gpu-wave --blocks 16x8,32x4 --samples-per-launch 128 \
  --schedules bounce-sync,regenerate --compactions prefix-sum --capacities auto --wave-blocks 128 \
  --drains 0,65536,262144,1048576 --repeat 3 --warmup 1 --csv "$R/bench_cs500_drain.csv" --launch-log "$R/launches_cs500_drain.csv"
$B bench scenes/cornell_diffuse.toml --backends gpu-mega,gpu-wave --blocks 8x8,16x8 --samples-per-launch 1024 \
  --schedules bounce-sync,regenerate --compactions prefix-sum --capacities auto --wave-blocks 64,128 \
  --drains 0,262144,1048576 --repeat 3 --warmup 1 --csv "$R/bench_cornell_drain.csv" --launch-log "$R/launches_cornell_drain.csv"
