#!/usr/bin/env bash
# Last check of the final commit on the GPU: every GPU test, the kernel
# listing, and the default wavefront and megakernel renders of each seed scene.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec > >(tee "$R/final_check.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B --version
$B gpu-info | grep -E "PTX|GPU|128 threads"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"
for s in rtiow_final cornell_diffuse cornell_smallpt cs500; do
  $B verify scenes/$s.toml --backend gpu-wave --spp 4
  $B render scenes/$s.toml --backend gpu-wave --quiet --out "$R/$s.png" | head -1
done
$B verify scenes/cs500.toml --backend gpu-mega --spp 4
$B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --backends gpu-mega,gpu-wave \
  --samples-per-launch 10 --repeat 5 | grep -E "best|speedup"
$B raycast scenes/rtiow_final.toml --size 1200x800 --count 1000000 --blocks 64 --repeat 2 | tail -1
