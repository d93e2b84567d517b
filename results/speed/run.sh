#!/usr/bin/env bash
# The GPU session of issue 22 (speed to the hardware), in two calls of the
# device tool, each under its 600-s limit:
#   bash results/speed/run.sh regression   # checks, then regression_check with every binary
#   bash results/speed/run.sh speed        # experiments/speed.toml, raycast rates, the GPU tests
# Binaries travel xz-packed (scripts/gpu-pack for this commit's,
# gpu-run/wavepath.xz; the earlier commits' as gpu-run/old/wavepath-<commit>.xz,
# built the same way from clean checkouts), the GPU test binary as
# gpu-run/gpu-tests.xz. Everything lands under $OUT: logs and one
# results.tar.gz of the experiment folders.
set -uo pipefail
R=${OUT:-/tmp/out}
mkdir -p "$R" gpu-run/results
unpack() { # file.xz -> file (xz, else Python's lzma)
  [[ -x ${1%.xz} ]] && return
  xz -dkf "$1" 2>/dev/null || python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1"
  chmod +x "${1%.xz}"
}
for f in gpu-run/wavepath.xz gpu-run/old/*.xz gpu-run/gpu-tests.xz; do [[ -f $f ]] && unpack "$f"; done
B=gpu-run/wavepath
# The driver compiles each PTX module (per register cap) once, about a
# minute for 13 MB; keep every one cached for the session.
export CUDA_CACHE_MAXSIZE=4294967296
pack() { tar czf "$R/results.tar.gz.part" -C gpu-run/results . && mv "$R/results.tar.gz.part" "$R/results.tar.gz"; }
case ${1:-} in
  regression)
    log=$R/regression.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)"
      $B --version
      # Correct first: every build the seeds and the lights need, both GPU back ends.
      for b in gpu-mega gpu-wave; do
        for s in cornell_smallpt cornell_diffuse rtiow_final cs500; do
          for k in auto full; do
            echo "verify $s $b kernels=$k: $($B verify scenes/$s.toml --backend $b --spp 2 --size 160x120 --kernels $k 2>&1 | tail -1)"
          done
        done
        for s in cornell_smallpt cs500; do
          echo "verify $s $b nee sobol: $($B verify scenes/$s.toml --backend $b --spp 2 --size 160x120 --nee on --sampler sobol 2>&1 | tail -1)"
        done
        echo "verify textured $b: $($B verify scenes/textured.toml --backend $b --spp 4 2>&1 | tail -1)"
      done
      # The same work on each commit's binary, one after another on this GPU.
      for bin in $B gpu-run/old/wavepath-*; do
        [[ $bin == *.xz ]] && continue
        name=$($bin --version | grep -o 'commit [0-9a-f]*' | cut -c8-14)
        echo "== regression_check with $bin ($name) $(date -u +%FT%TZ)"
        timeout 175 $bin experiment experiments/regression_check.toml --out "gpu-run/results/regression_$name" --quiet 2>&1 | tail -3
        echo "exit ${PIPESTATUS[0]}"
        $bin report "gpu-run/results/regression_$name" 2>&1 | tail -1
        pack
      done
    } >"$log" 2>&1
    ;;
  speed)
    log=$R/speed.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      $B --version
      echo "== speed $(date -u +%FT%TZ)"
      timeout 400 $B experiment experiments/speed.toml --out gpu-run/results/speed --quiet 2>&1 | tail -3
      echo "exit ${PIPESTATUS[0]}"
      $B report gpu-run/results/speed 2>&1 | tail -1
      pack
      # Traversal alone, 4 M bounce rays, this commit against the one before it.
      mkdir -p gpu-run/results/raycast
      for bin in gpu-run/old/wavepath-* $B; do
        [[ $bin == *.xz ]] && continue
        name=$($bin --version | grep -o 'commit [0-9a-f]*' | cut -c8-14)
        for s in rtiow_final cs500 cs500_heavy displaced_sphere; do
          for a in bvh bvh8; do
            $bin raycast scenes/$s.toml --accel $a --rays bounce --csv "gpu-run/results/raycast/${name}_${s}_${a}_bounce.csv" 2>&1 | tail -2
          done
        done
      done
      pack
      echo "== GPU tests $(date -u +%FT%TZ)"
      [[ -x gpu-run/gpu-tests ]] && timeout 170 gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result"
    } >"$log" 2>&1
    ;;
  *) echo "usage: $0 regression|speed" >&2; exit 2 ;;
esac
