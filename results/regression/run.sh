#!/usr/bin/env bash
# Issue 10's regression hunt: the same megakernel bench (diffuse Cornell box,
# brute force, 512x384, 1024 spp, 4 bounces, 8x8 blocks, 16 samples per
# launch) with the binary of every commit that changed device/ from 471ea48
# to 4344556, and with the current one, in one session on one GPU.
# Binaries: gpu-bisect/wavepath-<commit>.gz (WAVEPATH_CUDA_ARCHS=sm_90,
# stripped and gzipped to travel), unpacked to /tmp/bisect here.
set -uo pipefail
R=${OUT:-/tmp/out}
mkdir -p "$R/regression"
log="$R/regression.log"
nvidia-smi --query-gpu=name,driver_version --format=csv >"$log" 2>&1
scene=scenes/cornell_diffuse.toml
args=(--size 512x384 --spp 1024 --depth 4 --blocks 8x8 --samples-per-launch 16 --repeat 5 --warmup 1)
mkdir -p /tmp/bisect
for z in gpu-bisect/wavepath-*.gz; do
  b=/tmp/bisect/$(basename "$z" .gz)
  gunzip -c "$z" >"$b" && chmod +x "$b"
  c=${b##*wavepath-}
  echo "== $c" >>"$log"
  # Commits before a55839d had no --accel: brute force was the only kind.
  $b bench $scene "${args[@]}" --accel none --csv "$R/regression/bench_$c.csv" >>"$log" 2>&1 \
    || $b bench $scene "${args[@]}" --csv "$R/regression/bench_$c.csv" >>"$log" 2>&1
  $b gpu-info 2>/dev/null | grep -E "^megakernel[_a-z]*: .* 64 threads" >>"$log"
done
tar czf "$R/regression_csv.tar.gz" -C "$R" regression && rm -rf "$R/regression"
