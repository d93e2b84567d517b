#!/usr/bin/env bash
# One-GPU smoke test of issue 23's paths (not a measurement): the GPU tests
# (gpu-run/gpu-tests.xz, if carried), the split paths on one GPU, and MPI
# render and experiment with two ranks sharing GPU 0, each image and row
# compared with one process's. Carries gpu-run/wavepath-mpi.xz and
# gpu-run/mpi.tar.xz from `scripts/gpu-pack --mpi`.
set -uo pipefail
R=${OUT:-/tmp/out}; mkdir -p "$R"
exec >"$R/smoke.log" 2>&1
cd "$(dirname "$0")/../.."
for f in gpu-run/wavepath-mpi.xz gpu-run/gpu-tests.xz; do [[ -f $f ]] && xz -dkf "$f" && chmod +x "${f%.xz}"; done
tar xJf gpu-run/mpi.tar.xz
export LD_LIBRARY_PATH=$PWD/mpi/lib CUDA_CACHE_MAXSIZE=4294967296
B=gpu-run/wavepath-mpi
nvidia-smi --query-gpu=index,name,driver_version --format=csv
$B --version
echo "== GPU tests"
[[ -x gpu-run/gpu-tests ]] && WAVEPATH_BIN=$PWD/$B timeout 240 gpu-run/gpu-tests --test-threads 1 2>&1 | grep -E "^test |test result|SKIPPED|panicked" | head -40
for b in gpu-mega gpu-wave; do
  echo "verify cs500 $b --devices all: $($B verify scenes/cs500.toml --backend $b --devices all --spp 4 --size 160x120 2>&1 | tail -1)"
  $B render scenes/cs500.toml --backend $b --spp 64 --size 256x256 --out /tmp/one_$b.pfm --quiet 2>&1 | tail -1
  $B render scenes/cs500.toml --backend $b --spp 64 --size 256x256 --devices 0 --out /tmp/dev_$b.pfm --quiet 2>&1 | tail -1
  timeout 120 mpi/run -n 2 $B render scenes/cs500.toml --backend $b --spp 64 --size 256x256 --out /tmp/mpi_$b.pfm 2>&1 | tail -4
  cmp /tmp/one_$b.pfm /tmp/dev_$b.pfm && echo "$b --devices 0: identical"
  cmp /tmp/one_$b.pfm /tmp/mpi_$b.pfm && echo "$b two MPI ranks on GPU 0: identical"
done
echo "== experiment over two ranks (small_scenes)"
timeout 200 mpi/run -n 2 $B experiment experiments/small_scenes.toml --out /tmp/mpix --quiet --allow-dirty 2>&1 | tail -5
timeout 200 $B experiment experiments/small_scenes.toml --out /tmp/onex --quiet --allow-dirty 2>&1 | tail -2
python3 - <<'PY'
import csv
key=lambda r:(r['study'],r['run'],r['repetition'],r['config'],r['film_hash'])
a=[key(r) for r in csv.DictReader(open('/tmp/mpix/runs.csv'))]
b=[key(r) for r in csv.DictReader(open('/tmp/onex/runs.csv'))]
print("rows", len(a), len(b), "same keys and films, same order:", a==b)
PY
grep -h "rank" /tmp/mpix/manifest.toml | head -5
echo "== gpus = [1, 2] refused on one GPU"
$B experiment experiments/scale_out.toml --only strong --dry-run 2>&1 | tail -2
$B experiment experiments/scale_out.toml --only strong --out /tmp/strong --allow-dirty 2>&1 | tail -2
