#!/usr/bin/env bash
# The GPU session to run after textures (issue 21) and typed work queues
# landed (not yet run: the session that built them had no device time
# left): the GPU against the CPU on the textured scene and on the seed scenes with
# next-event estimation and Sobol samples (both GPU back ends, bit for bit),
# then every study whose code changed, in five or six calls of the device tool
# (each under its 600-s limit):
#   bash results/textures/run.sh checks      # checks + the short studies
#   bash results/textures/run.sh mega        # mega_vs_wave
#   bash results/textures/run.sh cs500       # cs500_speedup (its serial run: ~6 min)
#   bash results/textures/run.sh rtiow       # rtiow_parallel (twice, resumed)
#   bash results/textures/run.sh older       # register_cap, small_scenes, traversal, regression_check
# Each writes its log and the experiments' folders (one results.tar.gz) under $OUT.
# The binary travels as gpu-run/wavepath.gz (WAVEPATH_CUDA_ARCHS=sm_90,
# stripped: 26 MB, 6.8 MB gzipped), unpacked here. rtiow_parallel (about
# 11 minutes) needs two calls: the second carries the first's folder back
# as gpu-run/results/rtiow_parallel, which results/experiments.sh resumes.
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
mkdir -p "$R"
[[ -x $B ]] || { gunzip -kf "$B.gz" && chmod +x "$B"; }
case ${1:-} in
  checks)
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      $B --version
      for b in gpu-mega gpu-wave; do
        $B verify scenes/textured.toml --backend $b --spp 4 2>&1 | tail -1
        for s in cornell_smallpt cornell_diffuse cs500; do
          $B verify scenes/$s.toml --backend $b --spp 2 --size 160x120 --nee on --sampler sobol 2>&1 | tail -1
        done
      done
      $B render scenes/textured.toml --backend gpu-wave --out "$R/textured.png" 2>&1 | tail -2
    } > "$R/checks.log" 2>&1
    BUDGET=${BUDGET:-480} bash results/experiments.sh nee material_cost smallptcuda launch_timing wavefront_tuning smallpt_spp
    ;;
  rtiow) BUDGET=${BUDGET:-585} bash results/experiments.sh rtiow_parallel ;;
  older) BUDGET=${BUDGET:-585} bash results/experiments.sh register_cap small_scenes traversal regression_check ;;
  mega) BUDGET=${BUDGET:-585} bash results/experiments.sh mega_vs_wave ;;
  cs500) BUDGET=${BUDGET:-590} bash results/experiments.sh cs500_speedup ;;
  *) echo "usage: $0 checks|mega|cs500|rtiow|older" >&2; exit 2 ;;
esac
