#!/usr/bin/env bash
# The nomem warp intrinsics: every GPU test and verify first, then three
# alternating A/B rounds against 7c99f5c (device code as a80c9ca).
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec >"$R/nomem_check.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B gpu-info | grep -E "GPU|64 threads" | grep -E "GPU|mega|shade_diffuse|extend_bvh"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"
for s in cornell_diffuse rtiow_final cs500 cornell_smallpt; do
  for b in gpu-mega gpu-wave; do $B verify scenes/$s.toml --backend $b --spp 4 | tail -1; done
done
for round in 1 2 3; do
  for b in gpu-run/wavepath-7c99f5c $B; do
    echo "== $b round $round"
    $b bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --accel bvh --backends gpu-mega,gpu-wave --blocks 8x8 --samples-per-launch 10 --repeat 5 2>/dev/null | grep -E "^gpu-"
    $b bench scenes/cornell_diffuse.toml --size 512x384 --spp 1024 --depth 4 --accel none --backends gpu-mega,gpu-wave --blocks 8x8 --samples-per-launch 16 --repeat 5 2>/dev/null | grep -E "^gpu-"
  done
done
