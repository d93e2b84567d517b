#!/usr/bin/env bash
# An experiment stopped part-way by Ctrl-C (INT), SIGTERM and SIGKILL, each
# followed by --resume, against the same experiment run whole: the rows'
# (study, run, repetition, film hash) must be the same set, with no
# duplicate and every record whole.
set -uo pipefail
R=${OUT:-/tmp/out}/interrupts
B=${WAVEPATH:-gpu-run/wavepath}
C=${CONFIG:-results/experiment_interrupts/config.toml}
mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
keys() {
  python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in sorted(rows, key=lambda r: (r["study"], int(r["run"]), int(r["repetition"]))):
    print(r["study"], r["run"], r["repetition"], r["film_hash"])
PY
}
$B --version
$B experiment $C --quiet --out "$R/whole" | grep -E "^study"
keys "$R/whole/runs.csv" >"$R/whole.keys"
echo "whole: $(wc -l <"$R/whole.keys") rows"
for sig in INT TERM KILL; do
  $B experiment $C --quiet --out "$R/$sig" >/dev/null 2>"$R/$sig.stderr" &
  pid=$!
  sleep ${SLEEP:-3}
  kill -$sig $pid
  wait $pid
  status=$?
  before=$(($(wc -l <"$R/$sig/runs.csv") - 1))
  $B experiment $C --quiet --out "$R/$sig" --resume 2>&1 | grep -E "^study|dropped|error"
  keys "$R/$sig/runs.csv" >"$R/$sig.keys"
  dups=$(cut -d' ' -f1-3 "$R/$sig.keys" | uniq -d | wc -l)
  if cmp -s "$R/whole.keys" "$R/$sig.keys"; then
    echo "$sig: exit $status with $before rows; after --resume the rows of the whole run, $dups duplicates"
  else
    echo "$sig: exit $status with $before rows; after --resume DIFFERENT rows:"
    diff "$R/whole.keys" "$R/$sig.keys"
  fi
done
