#!/usr/bin/env bash
# The parallel-RTIOW report's Table 1 (seed 004): the function profile of the
# serial renderer, on its settings (RTIOW's final scene, 1200x675, 10 spp,
# depth 50, brute force as the book's renderer has no BVH). From the
# repository root, with a release binary built with debug information (the
# default profile here):
#   bash results/rtiow_profile/run.sh target/release/wavepath
set -euo pipefail
bin=${1:-target/release/wavepath}
dir=results/rtiow_profile
{
  "$bin" --version
  grep -m1 "model name" /proc/cpuinfo
  "$bin" render scenes/rtiow_final.toml --backend cpu-serial --accel none --size 1200x675 --spp 10 \
    --depth 50 --quiet --out /tmp/rtiow_profile.png --profile "$dir/flamegraph.svg"
} > "$dir/profile.txt" 2>&1
cat "$dir/profile.txt"
