#!/usr/bin/env python3
"""The share of a render taken by sampling, from experiments/sampling_cost.toml
run by the base binary and by its two probes (results/speed/run.sh sampling):
for each configuration, the median wall time of each binary in each pass,
and each probe's extra time over the base of the same pass, as a share of
the base. Checks that every binary rendered the same image (film_hash).

    python3 results/speed/sampling_cost/share.py results/speed/sampling_cost

The folder holds <binary>_<pass>/runs.csv, <binary> one of base, hash-twice,
math-twice. Prints a Markdown table.
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PROBES = ["hash-twice", "math-twice"]


def main(root: Path) -> int:
    # (config, binary, pass) -> wall times; config -> film hashes; registers.
    walls = defaultdict(list)
    films = defaultdict(set)
    registers = {}
    passes = set()
    commits = {}
    for folder in sorted(root.iterdir()):
        runs = folder / "runs.csv"
        if not runs.is_file():
            continue
        binary, _, pass_ = folder.name.rpartition("_")
        passes.add(pass_)
        with runs.open(newline="") as f:
            for row in csv.DictReader(f):
                config = f"{row['study']}: {row['config']}"
                walls[config, binary, pass_].append(float(row["wall_ms"]))
                films[config].add(row["film_hash"])
                registers[config, binary] = row["registers"] or "-"
                commits[binary] = row["commit"][:7] + (" (dirty)" if row["dirty"] == "true" else "")
    configs = list(dict.fromkeys(c for c, _, _ in walls))
    if not configs:
        print(f"share.py: no <binary>_<pass>/runs.csv under {root}", file=sys.stderr)
        return 1
    print("binaries: " + ", ".join(f"{b} {c}" for b, c in commits.items()))
    print()
    print("| configuration | pass | base ms | hash twice ms | hashing share | math twice ms | math share | registers (base/hash/math) | same image |")
    print("|---|---|---|---|---|---|---|---|---|")
    differing = 0
    for config in configs:
        same = len(films[config]) == 1
        differing += not same
        regs = "/".join(registers.get((config, b), "-") for b in ["base", *PROBES])
        for pass_ in sorted(passes):
            base = walls.get((config, "base", pass_))
            if not base:
                continue
            b = statistics.median(base)
            cells = [config, pass_, f"{b:.2f}"]
            for probe in PROBES:
                t = walls.get((config, probe, pass_))
                if t:
                    m = statistics.median(t)
                    cells += [f"{m:.2f}", f"{(m - b) / b * 100:+.1f} %"]
                else:
                    cells += ["-", "-"]
            cells += [regs, "yes" if same else "**no**"]
            print("| " + " | ".join(cells) + " |")
    if differing:
        print(f"\nshare.py: {differing} configurations rendered different images", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
