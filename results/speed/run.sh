#!/usr/bin/env bash
# The GPU session of issue 22 (speed to the hardware), in calls of the
# device tool, each under its 600-s limit:
#   bash results/speed/run.sh regression   # checks, then regression_check with every binary
#   bash results/speed/run.sh final1       # the final binary: regression_check, experiments/speed.toml
#   bash results/speed/run.sh final2       # speed.toml resumed, kernel_builds.toml, raycast, GPU tests
#   bash results/speed/run.sh raycast      # raycast rates, this commit against 165192d
#   bash results/speed/run.sh cpu          # one CPU core, every binary, twice in turn
# and of its second session (the megakernel's warps reconverged at each
# sample, each kernel JIT-compiled alone):
#   bash results/speed/run.sh check        # checks, regression_check (+ c01361f), regression_check_nee (+ 5beb205)
#                                          # (each only when its reference binary is carried; VERIFY=0 skips the checks)
#   bash results/speed/run.sh lanes        # Nsight Compute: lanes per instruction, RTIOW and CS500 with NEE, every binary
# and of its third session (the lanes rejoin after every bounce too; the
# wavefront's shading kernels built plain):
#   bash results/speed/run.sh extras       # the GPU tests, then raycast on the seeds and the dragon
# and of its fourth session (lever 4, the share of sampling):
#   bash results/speed/run.sh sampling TAG # sampling_cost.toml: this commit's binary and the probe(s) carried, twice in turn
# In the first session the driver compiled (JIT) the whole 13 MB PTX module
# once per register cap, about 90 s each on an H100, and a fresh machine paid
# it again, hence the split; binaries from da040e1 on compile each kernel
# alone on first use.
# Binaries travel xz-packed (scripts/gpu-pack for this commit's,
# gpu-run/wavepath.xz; the earlier commits' as gpu-run/old/wavepath-<commit>.xz,
# built the same way from clean checkouts), the GPU test binary as
# gpu-run/gpu-tests.xz. Everything lands under $OUT: logs and one
# speed.tar.gz of the folders under gpu-run/results.
set -uo pipefail
R=${OUT:-/tmp/out}
mkdir -p "$R" gpu-run/results
unpack() { # file.xz -> file (xz, else Python's lzma)
  [[ -x ${1%.xz} ]] && return
  xz -dkf "$1" 2>/dev/null || python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$1"
  chmod +x "${1%.xz}"
}
for f in gpu-run/wavepath.xz gpu-run/old/*.xz gpu-run/probe/*.xz gpu-run/gpu-tests.xz; do [[ -f $f ]] && unpack "$f"; done
B=gpu-run/wavepath
# Keep every module the driver compiles cached for the session.
export CUDA_CACHE_MAXSIZE=4294967296
# Its own archive's name: results/experiments.sh, run in the same call,
# writes results.tar.gz of its folders only (the third session lost the
# seeds' raycast CSVs to that).
pack() { tar czf "$R/speed.tar.gz.part" -C gpu-run/results . && mv "$R/speed.tar.gz.part" "$R/speed.tar.gz"; }
# `verify` of both GPU back ends against the CPU: every seed scene in each
# kernel build named, next-event estimation with Sobol samples, the
# textured scene.
verify_all() {
  for b in gpu-mega gpu-wave; do
    for s in cornell_smallpt cornell_diffuse rtiow_final cs500; do
      for k in "$@"; do
        echo "verify $s $b kernels=$k: $($B verify scenes/$s.toml --backend $b --spp 2 --size 160x120 --kernels $k 2>&1 | tail -1)"
      done
    done
    for s in cornell_smallpt cs500; do
      echo "verify $s $b nee sobol: $($B verify scenes/$s.toml --backend $b --spp 2 --size 160x120 --nee on --sampler sobol 2>&1 | tail -1)"
    done
    echo "verify textured $b: $($B verify scenes/textured.toml --backend $b --spp 4 2>&1 | tail -1)"
  done
}
# The abbreviated commit of binary $1.
commit_of() { $1 --version | grep -o 'commit [0-9a-f]*' | cut -c8-14; }
case ${1:-} in
  regression)
    log=$R/regression.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)"
      $B --version
      # Correct first: every build the seeds and the lights need, both GPU back ends.
      verify_all auto full
      # The same work on each commit's binary, one after another on this GPU.
      for bin in $B gpu-run/old/wavepath-*; do
        [[ $bin == *.xz ]] && continue
        name=$(commit_of $bin)
        echo "== regression_check with $bin ($name) $(date -u +%FT%TZ)"
        timeout 175 $bin experiment experiments/regression_check.toml --out "gpu-run/results/regression_$name" --quiet 2>&1 | tail -3
        echo "exit ${PIPESTATUS[0]}"
        $bin report "gpu-run/results/regression_$name" 2>&1 | tail -1
        pack
      done
    } >"$log" 2>&1
    ;;
  final1)
    # The final binary: regression_check (register caps none and 80), then
    # the goals (caps none, 64 and 80).
    log=$R/final1.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)"
      $B --version
      name=$(commit_of $B)
      echo "== regression_check ($name) $(date -u +%FT%TZ)"
      $B experiment experiments/regression_check.toml --out "gpu-run/results/regression_$name" --quiet 2>&1 | tail -3
      $B report "gpu-run/results/regression_$name" 2>&1 | tail -1
      pack
      echo "== speed $(date -u +%FT%TZ)"
      scripts/within $((530 - SECONDS)) $B experiment experiments/speed.toml --out gpu-run/results/goals --quiet 2>&1 | tail -3
      echo "exit ${PIPESTATUS[0]} $(date -u +%FT%TZ)"
      $B report gpu-run/results/goals 2>&1 | tail -1
      pack
    } >"$log" 2>&1
    ;;
  final2)
    # The rest: the goals if cut short (carried back and resumed), the
    # kernel builds, raycast rates, and the GPU tests.
    log=$R/final2.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      $B --version
      for e in speed:goals kernel_builds:kernel_builds; do
        cfg=${e%%:*} dir=gpu-run/results/${e#*:}
        resume=; [[ -s $dir/runs.csv ]] && resume=--resume
        echo "== $cfg $resume $(date -u +%FT%TZ)"
        scripts/within $((300 - SECONDS)) $B experiment experiments/$cfg.toml --out $dir $resume --quiet 2>&1 | tail -3
        echo "exit ${PIPESTATUS[0]}"
        $B report $dir 2>&1 | tail -1
        pack
      done
      # Traversal alone: 4 M bounce rays per scene and structure.
      mkdir -p gpu-run/results/raycast
      name=$(commit_of $B)
      for s in rtiow_final cs500 cs500_heavy displaced_sphere; do
        for a in bvh bvh8; do
          (( SECONDS < 420 )) || break 2
          echo "raycast $s $a: $(timeout 60 $B raycast scenes/$s.toml --accel $a --rays bounce --csv "gpu-run/results/raycast/${name}_${s}_${a}_bounce.csv" 2>&1 | tail -1)"
        done
      done
      pack
      echo "== GPU tests $(date -u +%FT%TZ)"
      [[ -x gpu-run/gpu-tests ]] && timeout $((585 - SECONDS)) gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result|SKIPPED"
    } >"$log" 2>&1
    ;;
  extras)
    # The GPU tests, then the bounce rays' traversal rates of this commit's
    # binary on the seeds and on the dragon (its OBJ carried as
    # gpu-run/dragon.obj.xz, unpacked where experiments/scenes/dragon.toml
    # reads it).
    log=$R/extras.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      $B --version
      echo "== GPU tests $(date -u +%FT%TZ)"
      [[ -x gpu-run/gpu-tests ]] && timeout 300 gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result|SKIPPED"
      mkdir -p gpu-run/results/raycast scenes/meshes/generated
      [[ -f gpu-run/dragon.obj.xz ]] && python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
        gpu-run/dragon.obj.xz scenes/meshes/generated/dragon.obj
      name=$(commit_of $B)
      for s in scenes/rtiow_final scenes/cs500 scenes/cs500_heavy scenes/displaced_sphere experiments/scenes/dragon; do
        for a in bvh bvh8; do
          (( SECONDS < 560 )) || break 2
          echo "raycast ${s##*/} $a: $(timeout 90 $B raycast $s.toml --accel $a --rays bounce --csv "gpu-run/results/raycast/${name}_${s##*/}_${a}_bounce.csv" 2>&1 | tail -1)"
        done
      done
      # RTIOW's BVH with other leaf sizes (the builder's default is 4).
      for n in 1 2 8; do
        (( SECONDS < 570 )) || break
        { cat scenes/rtiow_final.toml; printf '\n[accel]\nbvh_max_leaf = %d\n' $n; } >scenes/rtiow_final_leaf$n.toml
        echo "raycast rtiow_final bvh_max_leaf=$n: $(timeout 60 $B raycast scenes/rtiow_final_leaf$n.toml --accel bvh --rays bounce --csv "gpu-run/results/raycast/${name}_rtiow_final_leaf${n}_bvh_bounce.csv" 2>&1 | tail -1)"
      done
      pack
    } >"$log" 2>&1
    ;;
  raycast)
    # Traversal alone on this commit's binary and the one before exact
    # fused multiply-adds (165192d), one after the other on this GPU.
    log=$R/raycast.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      mkdir -p gpu-run/results/raycast_ab
      for bin in $B gpu-run/old/wavepath-*; do
        [[ $bin == *.xz ]] && continue
        name=$(commit_of $bin)
        for s in rtiow_final cs500 cs500_heavy displaced_sphere; do
          for a in bvh bvh8; do
            echo "raycast $name $s $a: $(timeout 120 $bin raycast scenes/$s.toml --accel $a --rays bounce --csv "gpu-run/results/raycast_ab/${name}_${s}_${a}_bounce.csv" 2>&1 | tail -1)"
          done
        done
        pack
      done
    } >"$log" 2>&1
    ;;
  cpu)
    # One CPU core (study cpu_core of regression_check) on every binary,
    # twice in turn, on this machine's CPU.
    log=$R/cpu.log
    {
      lscpu | grep -E "Model name|^CPU\(s\)"
      for pass in 1 2; do
        for bin in $B gpu-run/old/wavepath-*; do
          [[ $bin == *.xz ]] && continue
          name=$(commit_of $bin)
          echo "== pass $pass $name $(date -u +%FT%TZ)"
          $bin experiment experiments/regression_check.toml --only cpu_core --out "gpu-run/results/cpu${pass}_$name" --quiet 2>&1 | tail -1
        done
        pack
      done
    } >"$log" 2>&1
    ;;
  check)
    # Correct first (every build, both GPU back ends), then both regression
    # checks on this commit's binary and on the reference binary of each:
    # c01361f (the issue's) for the seeds, 5beb205 (= 43fee73, before the
    # lean/full megakernel regression) for next-event estimation.
    log=$R/check.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)"
      $B --version
      [[ ${VERIFY:-1} == 1 ]] && verify_all auto lean full
      for e in regression_check:wavepath-c01361f regression_check_nee:wavepath-5beb205; do
        cfg=${e%%:*}
        # Only the checks whose reference binary was carried (the carry
        # limit may leave room for one reference per call).
        [[ -x gpu-run/old/${e#*:} ]] || { echo "== $cfg skipped: gpu-run/old/${e#*:} not carried"; continue; }
        for bin in $B gpu-run/old/${e#*:}; do
          name=$(commit_of $bin)
          echo "== $cfg with $name $(date -u +%FT%TZ)"
          scripts/within $((550 - SECONDS)) $bin experiment experiments/$cfg.toml --out "gpu-run/results/${cfg}_$name" --quiet 2>&1 | tail -3
          echo "exit ${PIPESTATUS[0]} $(date -u +%FT%TZ)"
          $bin report "gpu-run/results/${cfg}_$name" 2>&1 | tail -1
          pack
        done
      done
    } >"$log" 2>&1
    ;;
  lanes)
    # Lanes per warp instruction (thread over warp instructions executed)
    # of the megakernel at the default cap of 80: RTIOW in each build, and
    # CS500 with next-event estimation; this commit's binary, then each of
    # gpu-run/old/.
    log=$R/lanes.log
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    {
      nvidia-smi --query-gpu=name,driver_version --format=csv
      for bin in $B gpu-run/old/wavepath-*; do
        [[ $bin == *.xz ]] && continue
        $bin --version
        for w in "rtiow_final --kernels plain" "rtiow_final --kernels lean" "rtiow_final --kernels full" \
                 "cs500 --nee on --spp 16 --size 512x512"; do
          set -- $w
          scene=$1; shift
          echo "== $scene $*"
          $bin render scenes/$scene.toml --backend gpu-mega "$@" --out /tmp/lanes.png 2>&1 | tail -2
          timeout 120 "$ncu" -k regex:megakernel -c 1 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum \
            $bin render scenes/$scene.toml --backend gpu-mega "$@" --out /tmp/lanes.png 2>&1 | grep -E "megakernel|duration|inst_executed|local_op"
        done
      done
    } >"$log" 2>&1
    ;;
  sampling)
    # The share of sampling by work inflation (experiments/sampling_cost.toml):
    # this commit's binary and the probes scripts/sampling-probe built from
    # it (gpu-run/probe/; the carry limit takes one probe per call), each
    # checked against the CPU first, then the same config on each, in turn,
    # twice (so that a drift of the GPU's clock shows as a difference
    # between the passes). The folders are <binary>_<TAG><pass>, so that
    # calls with different tags merge (share.py compares within a pass).
    tag=${2:?sampling needs a tag naming the call}
    log=$R/sampling_$tag.log
    {
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)"
      for bin in $B gpu-run/probe/wavepath-*; do
        [[ $bin == *.xz ]] && continue
        $bin --version
        for b in gpu-mega gpu-wave; do
          echo "verify cs500 $b nee sobol: $($bin verify scenes/cs500.toml --backend $b --spp 2 --size 160x120 --nee on --sampler sobol 2>&1 | tail -1)"
          echo "verify rtiow_final $b: $($bin verify scenes/rtiow_final.toml --backend $b --spp 2 --size 160x120 2>&1 | tail -1)"
        done
      done
      for pass in 1 2; do
        for bin in $B gpu-run/probe/wavepath-*; do
          [[ $bin == *.xz ]] && continue
          name=${bin##*/wavepath-}; [[ $bin == "$B" ]] && name=base
          dir=gpu-run/results/sampling_cost/${name}_$tag$pass
          echo "== sampling_cost pass $pass, $name ($(commit_of $bin)) $(date -u +%FT%TZ)"
          scripts/within $((550 - SECONDS)) $bin experiment experiments/sampling_cost.toml --out $dir --quiet 2>&1 | tail -3
          echo "exit ${PIPESTATUS[0]}"
          $bin report $dir 2>&1 | tail -1
          pack
        done
      done
    } >"$log" 2>&1
    ;;
  *) echo "usage: $0 regression|final1|final2|raycast|cpu|check|lanes|extras|sampling" >&2; exit 2 ;;
esac
