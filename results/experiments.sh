#!/usr/bin/env bash
# The GPU session script for the seed studies: runs the named experiment
# configs through `wavepath experiment`, writes each report, and packs the
# output folders into one results.tar.gz for the trip back. A folder
# already holding runs.csv (a run cut short earlier, carried back in) is
# resumed, not restarted.
#   bash results/experiments.sh smallptcuda mega_vs_wave
# Each experiment is asked to stop (keeping its finished rows) once BUDGET
# seconds (default 520) have passed since the script began, and is stopped
# at once 30 s later if a row in flight is still running (scripts/within),
# so the packing still runs inside a call of 600 s: keep BUDGET at least
# 60 s below the call's limit.
set -uo pipefail
start=$SECONDS
budget=${BUDGET:-520}
B=gpu-run/wavepath
R=${OUT:-/tmp/out}
mkdir -p "$R"
# the binary travels packed (scripts/gpu-pack: xz; gzip from older packs); unpack it once
if [[ ! -x $B ]]; then
  if [[ -f $B.xz ]]; then xz -dkf "$B.xz"; else gunzip -kf "$B.gz"; fi && chmod +x "$B" || exit 1
fi
log="$R/session_$(date +%H%M%S).log"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)"
  $B --version
} >>"$log" 2>&1
done=()
for name in "$@"; do
  dir=gpu-run/results/$name
  mkdir -p "$dir"
  resume=
  [[ -s $dir/runs.csv ]] && resume=--resume
  echo "== $name $resume ($(date -u +%FT%TZ))" >>"$log"
  left=$((budget - (SECONDS - start)))
  ((left > 5)) || { echo "no time left for $name" >>"$log"; break; }
  scripts/within "$left" $B experiment "experiments/$name.toml" --out "$dir" $resume --quiet >>"$log" 2>&1
  echo "exit $? ($(date -u +%FT%TZ))" >>"$log"
  $B report "$dir" >>"$log" 2>&1
  # One archive of every folder so far, rewritten after each experiment:
  # the device tool returns only a few files per call, and a call cut
  # short still leaves the finished folders.
  tar czf "$R/results.tar.gz.part" -C gpu-run/results "${done[@]}" "$name" && mv "$R/results.tar.gz.part" "$R/results.tar.gz"
  done+=("$name")
done
