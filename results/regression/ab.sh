#!/usr/bin/env bash
# A/B of the megakernel before (a80c9ca) and after (cb98119) the fix, on the
# two regression-check workloads, alternating binaries three times.
set -uo pipefail
R=${OUT:-/tmp/out}
exec >"$R/ab.log" 2>&1
gunzip -c gpu-run/wavepath-a80c9ca.gz >/tmp/wavepath-a80c9ca && chmod +x /tmp/wavepath-a80c9ca
for round in 1 2 3; do
  for b in /tmp/wavepath-a80c9ca gpu-run/wavepath; do
    echo "== $b round $round"
    $b bench scenes/rtiow_final.toml --size 1200x800 --spp 10 --depth 50 --accel bvh --blocks 8x8 --samples-per-launch 10,16 --repeat 5 2>/dev/null | grep -E "^gpu-mega"
    $b bench scenes/cornell_diffuse.toml --size 512x384 --spp 1024 --depth 4 --accel none --blocks 8x8 --samples-per-launch 16 --repeat 5 2>/dev/null | grep -E "^gpu-mega"
  done
done
