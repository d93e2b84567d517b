#!/usr/bin/env bash
# Fourth wavefront session: smallpt's Cornell box (glass and mirror, Russian
# roulette from bounce 5, up to 64 bounces) at its own 1024x768, 1024 spp,
# which the final check found slow on gpu-wave.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec > >(tee "$R/session_smallpt.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B bench scenes/cornell_smallpt.toml --backends gpu-mega,gpu-wave --blocks 8x8,16x8 --samples-per-launch 1024 \
  --schedules regenerate,bounce-sync --compactions prefix-sum --capacities 2^22,2^24,2^26,auto --wave-blocks 64 \
  --drains 0,262144 --repeat 3 --warmup 1 --csv "$R/bench_smallpt.csv" --launch-log "$R/launches_smallpt.csv"
