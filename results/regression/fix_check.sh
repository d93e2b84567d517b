#!/usr/bin/env bash
# After the megakernel fix: every GPU test, verify on both back ends, the
# divergence-counting megakernel, and the regression check experiment.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec >"$R/fix_check.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B gpu-info | grep -E "GPU|megakernel.*64 threads"
gpu-run/gpu-tests --test-threads 1 2>&1 | grep -vE "IDENTICAL"
for s in cornell_diffuse rtiow_final cs500 cornell_smallpt; do
  $B verify scenes/$s.toml --backend gpu-mega --spp 4 | tail -1
done
$B render scenes/rtiow_final.toml --backend gpu-mega --count-divergence --quiet --out "$R/rtiow_counted.png" | grep -iE "lanes|rtiow"
$B experiment experiments/regression_check.toml --out gpu-run/results/regression_check --quiet
$B report gpu-run/results/regression_check
tar czf "$R/regression_check.tar.gz" -C gpu-run/results regression_check
