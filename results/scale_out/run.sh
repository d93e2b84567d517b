#!/usr/bin/env bash
# The GPU session of issue 23 (one image over several GPUs), on a host with
# two GPUs (nvidia-h200-x2), in calls of the device tool, each under its
# 600-s limit:
#   bash results/scale_out/run.sh one       # verify the split, then studies one_image and one_image_smallpt
#   bash results/scale_out/run.sh scaling   # studies strong and weak (their figures have the ideal line)
#   bash results/scale_out/run.sh spread1   # experiments/mega_vs_wave.toml on one GPU (--devices 0), timed
#   bash results/scale_out/run.sh spread2   # the same spread over both GPUs (--devices all), timed
#   bash results/scale_out/run.sh runtime   # unpacks the MPI runtime (gpu-run/mpi.tar.xz carried) into mpi/
#   bash results/scale_out/run.sh mpi       # one_image's renders over MPI: 2 ranks of one GPU each, against one process on both GPUs
#   bash results/scale_out/run.sh spread_mpi   # mega_vs_wave.toml over 2 MPI ranks of one GPU each, timed (against spread2)
#   bash results/scale_out/run.sh tests     # the GPU tests on every GPU (gpu-run/gpu-tests.xz carried)
# A call cut short by its time limit is called again: an experiment folder
# that holds runs.csv is resumed (--resume), not restarted, and each call's
# wall time is logged, so a resumed experiment's time is the sum of its
# calls'.
# The binary travels xz-packed as gpu-run/wavepath.xz (scripts/gpu-pack);
# the steps over MPI ranks (mpi, spread_mpi) run gpu-run/wavepath-mpi.xz
# instead, built with --features mpi by `scripts/gpu-pack --mpi`, which
# also packs the MPICH runtime it loads as gpu-run/mpi.tar.xz. The two
# together may exceed the device tool's carry limit, so `runtime` unpacks
# the runtime in a call of its own into mpi/ (ignored by git, which a warm
# machine keeps for the next call), and mpi and spread_mpi then carry the
# MPI binary alone (or both, where they fit). Both binaries are
# built from the same commit: the same kernels. Everything lands under $OUT:
# one log per step and one scale_out.tar.gz of the folders under
# gpu-run/results, rewritten after each experiment.
set -uo pipefail
R=${OUT:-/tmp/out}
mkdir -p "$R" gpu-run/results
B=gpu-run/wavepath
case ${1:-} in
  runtime)
    tar xJf gpu-run/mpi.tar.xz && ls -l mpi/run mpi/lib/libmpi.so.12
    exit
    ;;
  mpi | spread_mpi)
    B=gpu-run/wavepath-mpi
    [[ -d mpi ]] || tar xJf gpu-run/mpi.tar.xz || {
      echo "no MPI runtime: carry gpu-run/mpi.tar.xz, or run the runtime step first on this machine" >&2
      exit 1
    }
    export LD_LIBRARY_PATH=$PWD/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    ;;
esac
unpack() { # file.xz -> file (xz, else Python's lzma)
  [[ -x ${1%.xz} ]] && return
  xz -dkf "$1" 2>/dev/null || python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1"
  chmod +x "${1%.xz}"
}
unpack $B.xz || exit 1
# Keep every module the driver compiles cached for the session.
export CUDA_CACHE_MAXSIZE=4294967296
pack() { tar czf "$R/scale_out.tar.gz.part" -C gpu-run/results . && mv "$R/scale_out.tar.gz.part" "$R/scale_out.tar.gz"; }
machine() {
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)"
  $B --version
}
# A launcher before the binary in experiment() (spread_mpi sets it).
launch=()
# experiment NAME CONFIG [ARGS...]: runs CONFIG into gpu-run/results/NAME
# (resumed if a call before cut it short) within the call's time left,
# logs its wall time (/usr/bin/time, else bash's), writes its report, packs.
experiment() {
  local name=$1 config=$2 dir=gpu-run/results/$1
  shift 2
  local resume=
  [[ -s $dir/runs.csv ]] && resume=--resume
  local left=$((540 - SECONDS))
  ((left > 10)) || { echo "no time left for $name"; return; }
  echo "== $name: $B experiment $config --out $dir $resume $* ($(date -u +%FT%TZ))"
  local t0=$SECONDS
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f "wall time of $name: %e s" scripts/within "$left" "${launch[@]}" $B experiment "$config" --out "$dir" $resume --quiet "$@" 2>&1 | tail -4
  else
    scripts/within "$left" "${launch[@]}" $B experiment "$config" --out "$dir" $resume --quiet "$@" 2>&1 | tail -3
  fi
  echo "exit ${PIPESTATUS[0]}; $((SECONDS - t0)) s by the script's clock ($(date -u +%FT%TZ))"
  $B report "$dir" 2>&1 | tail -1
  pack
}
case ${1:-} in
  one)
    {
      machine
      # The split against the CPU first, on both GPUs, both back ends.
      for b in gpu-mega gpu-wave; do
        for s in cs500 cornell_smallpt; do
          echo "verify $s $b --devices all: $($B verify scenes/$s.toml --backend $b --devices all --spp 8 --size 256x192 2>&1 | tail -1)"
        done
      done
      experiment one_image experiments/scale_out.toml --only one_image
      experiment one_image_smallpt experiments/scale_out.toml --only one_image_smallpt
    } >"$R/one.log" 2>&1
    ;;
  scaling)
    {
      machine
      experiment strong experiments/scale_out.toml --only strong
      experiment weak experiments/scale_out.toml --only weak
    } >"$R/scaling.log" 2>&1
    ;;
  spread1)
    { machine; experiment mega_vs_wave_1gpu experiments/mega_vs_wave.toml --devices 0; } >>"$R/spread1.log" 2>&1
    ;;
  spread2)
    { machine; experiment mega_vs_wave_2gpu experiments/mega_vs_wave.toml --devices all; } >>"$R/spread2.log" 2>&1
    ;;
  mpi)
    # Two ranks of one GPU each (without --devices a rank renders on the
    # GPU of its rank within the host, so two ranks take GPUs 0 and 1): the
    # renders of one_image's images, against one process on both GPUs
    # (an experiment row's image is never split over ranks: under mpirun a
    # study with gpus > 1 is refused). mpi/run is the packed mpiexec.
    {
      machine
      mkdir -p gpu-run/results/mpi_renders
      for s in "cs500 --size 512x512 --spp 1024" "cornell_smallpt --size 1024x768 --spp 4096"; do
        set -- $s
        scene=$1; shift
        for b in gpu-mega gpu-wave; do
          caps=; [[ $scene == cornell_smallpt && $b == gpu-mega ]] && caps="--max-registers 64"
          for how in "one process, two GPUs:" "two ranks, one GPU each:"; do
            out=gpu-run/results/mpi_renders/${scene}_${b}_${how%%,*}.exr
            out=${out// /_}
            (( SECONDS < 300 )) || break 3
            if [[ $how == one* ]]; then
              cmd=($B render scenes/$scene.toml --backend $b "$@" $caps --devices all --out "$out")
            else
              cmd=(mpi/run -n 2 $B render scenes/$scene.toml --backend $b "$@" $caps --out "$out")
            fi
            echo "== $scene $b $how ${cmd[*]}"
            /usr/bin/time -f "wall time: %e s" timeout 120 "${cmd[@]}" 2>&1 | tail -6
          done
          cmp -s "gpu-run/results/mpi_renders/${scene}_${b}_one_process.exr" "gpu-run/results/mpi_renders/${scene}_${b}_two_ranks.exr" \
            && echo "$scene $b: the images of one process and of two ranks are identical" \
            || echo "$scene $b: the images of one process and of two ranks DIFFER (or one is missing)"
        done
      done
      pack
    } >>"$R/mpi.log" 2>&1
    ;;
  spread_mpi)
    # The runs of mega_vs_wave.toml over two ranks of one GPU each (rank 0
    # also makes the CPU runs), against spread2's one process on both GPUs.
    launch=(mpi/run -n 2)
    { machine; experiment mega_vs_wave_mpi experiments/mega_vs_wave.toml; } >>"$R/spread_mpi.log" 2>&1
    ;;
  tests)
    # The GPU tests (`cargo test --release --no-run --test gpu` of this
    # commit, stripped, as gpu-run/gpu-tests.xz): with two GPUs present,
    # those of --devices all (a render split over every GPU, an experiment
    # spread over them, a run of gpus = 2) run instead of skipping. They
    # run this commit's binary where they start one (WAVEPATH_BIN).
    unpack gpu-run/gpu-tests.xz || exit 1
    {
      machine
      WAVEPATH_BIN=$PWD/$B timeout 500 gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result|SKIPPED|panicked"
    } >>"$R/tests.log" 2>&1
    ;;
  *) echo "usage: $0 one|scaling|spread1|spread2|runtime|mpi|spread_mpi|tests" >&2; exit 2 ;;
esac
