#!/usr/bin/env bash
# Issue 20's device changes on the GPU (the camera's near distance, the
# dielectric tint, smallpt's front wall) and the runner's parity step:
#  1. the GPU tests (tests/gpu.rs, as gpu-run/gpu-tests);
#  2. `verify` on every scene for both GPU back ends (cornell_smallpt now
#     with its front wall, glass tint and camera start);
#  3. experiments/regression_check.toml with this commit's binary, whose
#     parity step checks every GPU configuration against the CPU, alternated
#     with the binary of 3f2b348 (gpu-run/wavepath-prev) to see what the
#     camera and tint cost.
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
PREV=gpu-run/wavepath-prev
exec > >(tee "$R/check.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B --version
$PREV --version
echo "== GPU tests"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result"
echo "== verify"
for s in rtiow_final cornell_diffuse cornell_smallpt cs500 cs500_heavy; do
  for b in gpu-mega gpu-wave; do
    printf '%s %s: ' "$s" "$b"
    $B verify scenes/$s.toml --backend $b --spp 4 | head -1
  done
done
echo "== regression_check"
for round in 1 2; do
  $PREV experiment experiments/regression_check.toml --quiet --out "$R/prev_$round" | grep -E "^study"
  $B experiment experiments/regression_check.toml --quiet --out "$R/new_$round" | grep -E "^study"
done
grep -h "parity" "$R"/new_1/manifest.toml
