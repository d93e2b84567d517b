#!/usr/bin/env bash
# The GPU session that produced results/wavefront/: run on the device
# machine from the repository root with gpu-run/ holding the release binary
# and the GPU test binary.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}/wavefront
mkdir -p "$R"
exec > >(tee "$R/session.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
$B gpu-info | grep -E "GPU|wf_|mega.*_bvh" | sort -u

echo "== GPU parity tests"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"

echo "== verify gpu-wave against the CPU, bit for bit, at the benchmark settings"
$B verify scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backend gpu-wave
$B verify scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backend gpu-wave --schedule bounce-sync --compaction prefix-sum
$B verify scenes/cs500.toml --spp 16 --backend gpu-wave
$B verify scenes/cs500.toml --spp 16 --backend gpu-wave --schedule bounce-sync --compaction prefix-sum
$B verify scenes/cornell_diffuse.toml --spp 256 --backend gpu-wave
$B verify scenes/cornell_smallpt.toml --spp 64 --backend gpu-wave --compaction prefix-sum

echo "== divergence: active lanes per warp at the material branch"
for s in rtiow_final cs500 cornell_diffuse; do
  for b in gpu-mega gpu-wave; do
    $B render scenes/$s.toml --backend $b --spp 8 --count-divergence --quiet --out /tmp/div.png | grep -E "lanes|^scenes"
  done
done

echo "== benchmark: RTIOW final scene, 1200x800, 10 spp, depth 50, BVH"
$B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backends gpu-mega,gpu-wave \
  --blocks 8x4,8x8,16x8,32x4 --samples-per-launch 10 \
  --schedules regenerate,bounce-sync --compactions atomic-append,prefix-sum \
  --capacities 2^20,2^21,2^22,2^23,auto --wave-blocks 64,128 --repeat 5 --warmup 1 \
  --csv "$R/bench_rtiow_1200x800.csv" --launch-log "$R/launches_rtiow_1200x800.csv"

echo "== benchmark: CS500, 1024x1024, 128 spp, 10 bounces, BVH"
$B bench scenes/cs500.toml --backends gpu-mega,gpu-wave \
  --blocks 8x4,8x8,16x8,32x4 --samples-per-launch 128 \
  --schedules regenerate,bounce-sync --compactions atomic-append,prefix-sum \
  --capacities 2^21,2^22,auto --wave-blocks 128 --repeat 3 --warmup 1 \
  --csv "$R/bench_cs500.csv" --launch-log "$R/launches_cs500.csv"

echo "== benchmark: diffuse Cornell box, 512x384, 1024 spp, 4 bounces, BVH"
$B bench scenes/cornell_diffuse.toml --backends gpu-mega,gpu-wave \
  --blocks 8x4,8x8,16x8,32x4 --samples-per-launch 1024 \
  --schedules regenerate,bounce-sync --compactions atomic-append,prefix-sum \
  --capacities 2^21,2^22,auto --wave-blocks 128 --repeat 3 --warmup 1 \
  --csv "$R/bench_cornell_diffuse.csv" --launch-log "$R/launches_cornell_diffuse.csv"
