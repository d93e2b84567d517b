#!/bin/bash
# Diagnostic: node/primitive fetches through the read-only cache, 8587161 against acaa75f.
cd "$(dirname "$0")/.."
export CUDA_CACHE_MAXSIZE=4294967296
un() { python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$1" "$2"; chmod +x "$2"; }
un gpu-run/wavepath.xz /tmp/new; un gpu-run/old/wavepath-acaa75f.xz /tmp/old
{
nvidia-smi --query-gpu=name,driver_version --format=csv
/tmp/new --version; /tmp/old --version
for s in rtiow_final cs500 cornell_smallpt displaced_sphere cs500_heavy; do
  for b in gpu-mega gpu-wave; do
    echo "verify $s $b: $(timeout 100 /tmp/new verify scenes/$s.toml --backend $b --spp 2 --size 160x120 2>&1 | tail -1)"
  done
done
echo "verify cs500 nee: $(timeout 100 /tmp/new verify scenes/cs500.toml --backend gpu-mega --spp 2 --size 160x120 --nee on 2>&1 | tail -1)"
for s in rtiow_final cs500 cs500_heavy displaced_sphere; do
  for bin in /tmp/old /tmp/new /tmp/old /tmp/new; do
    echo "raycast $($bin --version | grep -o 'commit [0-9a-f]*') $s: $(timeout 60 $bin raycast scenes/$s.toml --accel bvh --rays bounce 2>&1 | grep 'block 64')"
  done
done
for bin in /tmp/old /tmp/new /tmp/old /tmp/new; do
  echo "render $($bin --version | grep -o 'commit [0-9a-f]*') rtiow: $($bin render scenes/rtiow_final.toml --backend gpu-mega --block 16x8 --out /tmp/r.png 2>&1 | grep -E 'kernels|s,' | tail -1)"
done
} > $OUT/quick.log 2>&1
