#!/usr/bin/env bash
# The GPU session that produced results/megakernel/: run on the device
# machine from the repository root, with the release binary and the GPU test
# binary (built on a CPU machine, `cargo build --release` and
# `cargo test --release --no-run --test gpu`) in gpu-run/.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}/megakernel
mkdir -p "$R"
exec > >(tee "$R/session.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
$B gpu-info

echo "== GPU parity tests"
gpu-run/gpu-tests --nocapture --test-threads 1

echo "== verify: gpu-mega against the CPU reference, bit for bit"
$B verify scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50
$B verify scenes/rtiow_final.toml
$B verify scenes/cornell_diffuse.toml --spp 64
$B verify scenes/cornell_smallpt.toml --spp 32
$B verify scenes/cs500.toml --size 256x256 --spp 4

echo "== benchmark: RTIOW final scene, 1200x800, 10 spp, depth 50 (brute force)"
$B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 \
  --blocks 8x4,8x8,16x8,16x16,32x2,32x4,32x8,64x1,64x2,128x1,256x1 \
  --samples-per-launch 1,10 --repeat 5 --warmup 1 --csv "$R/bench_rtiow_1200x800.csv"
$B bench scenes/cornell_diffuse.toml --blocks 8x8,16x16,32x4,128x1 --samples-per-launch 16,1024 \
  --repeat 3 --warmup 1 --csv "$R/bench_cornell_diffuse.csv"

echo "== full renders of every seed scene at its own settings"
for s in rtiow_final cornell_diffuse cornell_smallpt; do
  $B render scenes/$s.toml --backend gpu-mega --quiet --samples-per-launch 16 --out "$R/$s.png" \
    --launch-log "$R/launches_$s.csv"
done
$B render scenes/cs500.toml --backend gpu-mega --quiet --tile 512x512 --samples-per-launch 16 \
  --out "$R/cs500.png" --launch-log "$R/launches_cs500.csv"
