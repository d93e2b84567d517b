#!/usr/bin/env python3
"""The share of a render taken by sampling, from experiments/sampling_cost.toml
run by the base binary and by its two probes (results/speed/run.sh sampling):
for each configuration, the median wall time of each binary in each pass,
and each probe's extra time over the base of the same pass, as a share of
the base. Checks that every binary rendered the same image (film_hash).

    python3 results/speed/sampling_cost/share.py results/speed/sampling_cost

The folder holds <binary>_<pass>/runs.csv, <binary> base or one of PROBES;
each probe is compared with the base of its own pass. Prints a Markdown
table: one row per configuration and probe, with the medians of every
pass that ran it.
"""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PROBES = ["hash-twice", "trig-twice", "sqrt-twice", "math-twice"]


def main(root: Path) -> int:
    # (config, binary, pass) -> wall times; config -> film hashes; registers.
    walls = defaultdict(list)
    films = defaultdict(set)
    registers = {}
    local = {}
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
                local[config, binary] = row["local_bytes"] or "-"
                commits[folder.name] = row["commit"][:7] + (" (dirty)" if row["dirty"] == "true" else "")
    configs = list(dict.fromkeys(c for c, _, _ in walls))
    if not configs:
        print(f"share.py: no <binary>_<pass>/runs.csv under {root}", file=sys.stderr)
        return 1
    print("builds: " + ", ".join(f"{folder} `{c}`" for folder, c in commits.items()))
    print()
    print("| configuration | probe | base ms | probe ms | extra time | passes | registers (base/probe) | local bytes (base/probe) | same image |")
    print("|---|---|---|---|---|---|---|---|---|")
    differing = 0
    for config in configs:
        same = len(films[config]) == 1
        differing += not same
        for probe in PROBES:
            pairs = [
                (statistics.median(walls[config, "base", p]), statistics.median(walls[config, probe, p]), p)
                for p in sorted(passes)
                if walls.get((config, "base", p)) and walls.get((config, probe, p))
            ]
            if not pairs:
                continue
            base = " / ".join(f"{b:.2f}" for b, _, _ in pairs)
            probed = " / ".join(f"{t:.2f}" for _, t, _ in pairs)
            extra = " / ".join(f"{(t - b) / b * 100:+.1f} %" for b, t, _ in pairs)
            cells = [
                config,
                probe,
                base,
                probed,
                extra,
                ", ".join(p for _, _, p in pairs),
                f"{registers.get((config, 'base'), '-')}/{registers.get((config, probe), '-')}",
                f"{local.get((config, 'base'), '-')}/{local.get((config, probe), '-')}",
                "yes" if same else "**no**",
            ]
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
