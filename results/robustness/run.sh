#!/usr/bin/env bash
# Issue 11 GPU run: the GPU tests (out of memory, a kernel fault in a child
# process, a stop request on both back ends, parity), Ctrl-C on real
# renders of both GPU back ends (image compared with a CPU render of the
# samples kept), a missing device, and the regression check interrupted by
# Ctrl-C and resumed.
set -uo pipefail
R=${OUT:-/tmp/out}
B=gpu-run/wavepath
mkdir -p "$R" gpu-run/results
log="$R/run11.log"
say() { echo "== $* ($(date -u +%T))" >>"$log"; }
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; lscpu | grep -E "Model name|^CPU\(s\)"; $B --version; } >>"$log" 2>&1
say "gpu tests (--nocapture: the provoked errors are printed)"
timeout 240 gpu-run/gpu-tests --test-threads 1 --nocapture >>"$log" 2>&1; say "gpu tests exit $?"
for backend in gpu-mega gpu-wave; do
  say "Ctrl-C during a $backend render"
  $B render scenes/cornell_diffuse.toml --backend $backend --size 256x192 --spp 10000000 --out "gpu-run/results/cut_$backend.png" --quiet >>"$log" 2>"gpu-run/results/cut_$backend.err" &
  pid=$!
  sleep 4
  kill -INT $pid
  wait $pid; echo "exit $?" >>"$log"
  cat "gpu-run/results/cut_$backend.err" >>"$log"
  spp=$(grep -o 'after [0-9]* of' "gpu-run/results/cut_$backend.err" | grep -o '[0-9]*' | head -1)
  $B render scenes/cornell_diffuse.toml --backend gpu-mega --size 256x192 --spp "$spp" --out "gpu-run/results/whole_$backend.png" --quiet >>"$log" 2>&1
  if cmp -s "gpu-run/results/cut_$backend.png" "gpu-run/results/whole_$backend.png"; then
    echo "IDENTICAL: the interrupted $backend image equals a $spp-spp render" >>"$log"
  else
    echo "DIFFERENT: the interrupted $backend image and a $spp-spp render" >>"$log"
  fi
  ls -a gpu-run/results | grep -c '^\.wavepath-' | sed 's/^/temporary files left: /' >>"$log"
done
say "no device visible"
CUDA_VISIBLE_DEVICES= $B render scenes/cornell_diffuse.toml --backend gpu-mega --quiet >>"$log" 2>&1; echo "exit $?" >>"$log"
CUDA_VISIBLE_DEVICES= $B bench scenes/cornell_diffuse.toml --backends cpu,gpu-wave --csv gpu-run/results/none.csv >>"$log" 2>&1; echo "exit $?" >>"$log"
say "regression check, interrupted after 25 s"
dir=gpu-run/results/regression_check
$B experiment experiments/regression_check.toml --out $dir --quiet >>"$log" 2>&1 &
pid=$!
sleep 25
kill -INT $pid
wait $pid; echo "exit $?" >>"$log"
say "regression check, resumed"
timeout 200 $B experiment experiments/regression_check.toml --out $dir --resume --quiet >>"$log" 2>&1; echo "exit $?" >>"$log"
timeout 60 $B report $dir >>"$log" 2>&1
tar czf "$R/regression_check.tar.gz" -C gpu-run/results regression_check
say end
