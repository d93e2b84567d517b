#!/usr/bin/env bash
# The regression check experiment with the current binary.
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
exec >"$R/regression_check.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
$B experiment experiments/regression_check.toml --out gpu-run/results/regression_check --quiet
$B report gpu-run/results/regression_check
tar czf "$R/regression_check.tar.gz" -C gpu-run/results regression_check
