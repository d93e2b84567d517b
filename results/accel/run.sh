#!/usr/bin/env bash
# The GPU session that produced results/accel/: run on the device machine
# from the repository root, with gpu-run/ holding the release binary, the GPU
# test binary and dragon.obj.gz (from scenes/meshes/fetch_scan.sh).
set -uo pipefail
B=gpu-run/wavepath
R=${OUT:-/tmp/out}/accel
mkdir -p "$R" scenes/meshes/generated
exec > >(tee "$R/session.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
nproc
$B gpu-info
gunzip -c gpu-run/dragon.obj.gz > scenes/meshes/generated/dragon.obj
$B gen-mesh --subdivisions 8 --out scenes/meshes/generated/displaced_sphere_8.obj

echo "== GPU parity tests (none, bvh, kdtree on every seed scene; raycast hits)"
gpu-run/gpu-tests --test-threads 1

echo "== verify: gpu-mega against the CPU reference, bit for bit"
for a in bvh kdtree; do
  $B verify scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --accel $a
  $B verify scenes/cs500.toml --spp 16 --accel $a
  $B verify scenes/cornell_smallpt.toml --spp 64 --accel $a
  $B verify scenes/displaced_sphere.toml --spp 8 --accel $a
  $B verify experiments/scenes/dragon.toml --spp 4 --accel $a
done

echo "== benchmark: RTIOW final scene, 1200x800, 10 spp, depth 50"
for a in bvh kdtree; do
  $B bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --accel $a \
    --blocks 8x4,8x8,16x8,16x16,32x2,32x4,64x1,128x1 --samples-per-launch 1,10 --repeat 5 --warmup 1 \
    --csv "$R/bench_rtiow_1200x800_$a.csv"
done

echo "== traversal alone: raycast kernel, 4M rays"
for a in bvh kdtree none; do
  for k in bounce camera; do
    $B raycast scenes/rtiow_final.toml --size 1200x800 --accel $a --rays $k --count 4000000 \
      --blocks 64,128,256 --repeat 5 --csv "$R/raycast_rtiow_${a}_$k.csv"
  done
done
for s in scenes/cs500.toml scenes/displaced_sphere.toml experiments/scenes/dragon.toml; do
  n=$(basename $s .toml)
  for a in bvh kdtree; do
    $B raycast $s --accel $a --rays bounce --count 4000000 --blocks 64,128 --repeat 5 --csv "$R/raycast_${n}_$a.csv"
  done
done

echo "== full renders with the BVH"
$B render scenes/cs500.toml --backend gpu-mega --quiet --out "$R/cs500.png"
$B render scenes/displaced_sphere.toml --backend gpu-mega --quiet --out "$R/displaced_sphere.png"
$B render experiments/scenes/dragon.toml --backend gpu-mega --quiet --out "$R/dragon.png"
$B render experiments/scenes/displaced_sphere_obj.toml --backend gpu-mega --quiet --spp 16 --out "$R/displaced_sphere_obj.png"
$B render experiments/scenes/dragon.toml --backend gpu-mega --quiet --accel kdtree --spp 16 --out "$R/dragon_kdtree.png"
