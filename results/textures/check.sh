#!/usr/bin/env bash
# A short GPU check (the session had about 1.5 minutes of device time left):
# both GPU back ends against the CPU, bit for bit, on the textured scene and
# with next-event estimation and Sobol samples on two seed scenes, after
# textures and the typed work queues. Each line goes to $OUT as it finishes.
#   bash results/textures/check.sh
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
mkdir -p "$R"
log="$R/check.log"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  $B --version
} >>"$log" 2>&1
for b in gpu-wave gpu-mega; do
  timeout 20 $B verify scenes/textured.toml --backend $b --spp 2 --size 160x100 >>"$log" 2>&1
  echo "exit $?" >>"$log"
done
for s in cs500 cornell_smallpt; do
  for b in gpu-wave gpu-mega; do
    timeout 20 $B verify scenes/$s.toml --backend $b --spp 2 --size 128x96 --nee on --sampler sobol >>"$log" 2>&1
    echo "exit $?" >>"$log"
  done
done
