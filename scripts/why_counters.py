"""Sums the Nsight Compute rows `scripts/why-counters run` wrote, per back
end and per kernel, beside the runner's counters of each study's fastest
configuration (runs.csv), into results/<experiment>/counters/ (why.csv,
why_kernels.csv and the raw rows, compressed), and prints the table that
docs/results.md holds ("Why, counted").

Usage: python3 scripts/why_counters.py OUTDIR PROFILES (scripts/why-counters
summarize OUTDIR passes the profiles it declares), or
python3 scripts/why_counters.py --restudy PROFILES (scripts/why-counters
restudy): after a study is re-run, sets the study_* columns of each
committed why.csv beside its counters afresh from the study's runs.csv, with
no GPU, and prints the table again."""

import csv
import lzma
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

BACKENDS = ("gpu-mega", "gpu-wave")
# Metrics summed over launches; the occupancies are averaged by kernel time.
SUMMED = {
    "smsp__inst_executed.sum": "warp_inst",
    "smsp__thread_inst_executed.sum": "thread_inst",
    "dram__bytes.sum": "dram_bytes",
    "lts__t_bytes.sum": "l2_bytes",
    "smsp__inst_executed_op_local_ld.sum": "local_loads",
    "smsp__inst_executed_op_local_st.sum": "local_stores",
    "gpu__time_duration.sum": "kernel_ns",
}
AVERAGED = {
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy",
}
REGISTERS = "launch__registers_per_thread"
SUMMARY = re.compile(r"(\d+)x(\d+), (\d+) spp.*: [\d.]+ s, ([\d.]+) M samples/s, ([\d.]+) M rays/s")


def fail(message):
    sys.exit(f"why_counters: {message}")


def number(text):
    return float(text.replace(",", ""))


def read_ncu(path):
    """Launch id -> (kernel name, {metric: value}) from ncu's CSV log."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        fail(f"{path}: no ncu CSV header (the profile failed: see {path.with_suffix('.txt')})")
    launches = {}
    for row in csv.DictReader(lines[start:]):
        kernel, metrics = launches.setdefault(row["ID"], (row["Kernel Name"], {}))
        metrics[row["Metric Name"]] = number(row["Metric Value"])
    if not launches:
        fail(f"{path}: no kernel launch was profiled")
    return launches


def rays(path):
    """The render's rays: its samples (width x height x spp) times its rays
    per sample, from the summary line's two rates."""
    match = SUMMARY.search(path.read_text())
    if not match:
        fail(f"{path}: no render summary line")
    width, height, spp, samples_rate, rays_rate = match.groups()
    return int(width) * int(height) * int(spp) * float(rays_rate) / float(samples_rate), int(spp)


def totals(launches, path):
    """Every summed and averaged metric over `launches` (ncu's rows of the
    file `path`), with the launches counted and the registers listed."""
    out = defaultdict(float)
    time = 0.0
    registers = set()
    for _, metrics in launches:
        missing = [m for m in (*SUMMED, *AVERAGED, REGISTERS) if m not in metrics]
        if missing:
            fail(f"{path}: no {', '.join(missing)} (run by an older scripts/why-counters?)")
        ns = metrics["gpu__time_duration.sum"]
        time += ns
        for metric, name in SUMMED.items():
            out[name] += metrics[metric]
        for metric, name in AVERAGED.items():
            out[name] += metrics[metric] * ns
        registers.add(int(metrics[REGISTERS]))
    for name in AVERAGED.values():
        out[name] /= time
    out["launches"] = len(launches)
    out["lanes"] = out["thread_inst"] / out["warp_inst"]
    out["registers"] = "/".join(str(r) for r in sorted(registers))
    return out


def fastest_config(runs, study, scene, backend, overrides):
    """The study's fastest configuration of `backend` on `scene` (with the
    profile's generator fields), as the summary takes each back end: the
    least median of `scaled_wall_ms` over a configuration's repetitions.
    Returns its first row and that median, or None."""
    by_run = defaultdict(list)
    for r in runs:
        if (
            r["study"] == study
            and r["scene_name"] == scene
            and r["backend"] == backend
            and r["scaled_wall_ms"]
            and all(f"generators[0].{o}" in r["scene_overrides"].split(";") for o in overrides)
        ):
            by_run[r["run"]].append(r)
    if not by_run:
        return None
    medians = {run: statistics.median(float(r["scaled_wall_ms"]) for r in rows) for run, rows in by_run.items()}
    run = min(medians, key=medians.get)
    return by_run[run][0], medians[run]


# why.csv's columns: the counters, then the study's fastest row beside them.
FIELDS = [
    "study", "scene", "overrides", "backend", "size", "spp", "rays", "launches",
    "launches_per_sample", "warp_inst", "lanes", "warp_inst_per_ray", "registers",
    "achieved_occupancy", "theoretical_occupancy", "dram_bytes_per_ray", "l2_bytes_per_ray",
    "local_accesses_per_ray", "kernel_ms", "study_run", "study_wall_ms",
    "study_launches_per_sample", "study_registers", "study_occupancy", "study_state_bytes",
]


def study_runs(experiment):
    """The rows of results/<experiment>/runs.csv, or none."""
    path = Path("results") / experiment / "runs.csv"
    return list(csv.DictReader(path.open())) if path.exists() else []


def study_columns(runs, study, scene, backend, overrides):
    """why.csv's study_* columns: the study's fastest configuration of
    `backend` on `scene`, or empty where the study has none."""
    fastest = fastest_config(runs, study, scene, backend, overrides)
    row, median_ms = fastest if fastest else (None, None)
    return {
        "study_run": row["run"] if row else "",
        "study_wall_ms": median_ms if row else "",
        "study_launches_per_sample": int(row["launches"]) / int(row["spp"]) if row else float("nan"),
        "study_registers": row["registers"] if row else "",
        "study_occupancy": row["occupancy"] if row else "",
        "study_state_bytes": row["state_bytes"] if row else "",
    }


def restudy(profiles):
    """Sets the study_* columns of every profiled experiment's committed
    why.csv afresh from its runs.csv, and prints the table."""
    experiments = dict.fromkeys(line.split()[0] for line in profiles.read_text().splitlines())
    for experiment in experiments:
        path = Path("results") / experiment / "counters" / "why.csv"
        if not path.exists():
            fail(f"{path}: no counters to set beside the study (run `scripts/why-counters run` first)")
        rows = list(csv.DictReader(path.open()))
        missing = [f for f in FIELDS if rows and f not in rows[0]]
        if missing:
            fail(f"{path}: no column {', '.join(missing)} (written by an older scripts/why-counters?)")
        runs = study_runs(experiment)
        for r in rows:
            overrides = [o for o in r["overrides"].split(";") if o]
            r.update(study_columns(runs, r["study"], r["scene"], r["backend"], overrides))
        write(path, FIELDS, rows)
        print_table(experiment, rows)


def print_table(experiment, rows):
    """The rows of docs/results.md's "Why, counted" table for `experiment`
    (its figures as numbers, or as why.csv's text read back)."""
    for r in rows:
        label = f"{r['scene']} ({r['overrides'].replace(';', ', ')})" if r["overrides"] else r["scene"]
        wall = f"{float(r['study_wall_ms']):.2f}" if r["study_wall_ms"] else "not run"
        print(
            f"| `{experiment}` / `{r['study']}`: {label} | {r['backend']} | {wall} "
            f"| {float(r['lanes']):.1f} | {float(r['warp_inst_per_ray']):.0f} "
            f"| {float(r['l2_bytes_per_ray']):.0f} | {float(r['local_accesses_per_ray']):.1f} "
            f"| {max(int(x) for x in r['registers'].split('/'))} "
            f"| {100 * float(r['achieved_occupancy']):.0f} % | {float(r['study_launches_per_sample']):.3g} |"
        )


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--restudy":
        return restudy(Path(sys.argv[2]))
    if len(sys.argv) != 3:
        fail("usage: why_counters.py OUTDIR PROFILES, or why_counters.py --restudy PROFILES")
    outdir = Path(sys.argv[1])
    tables = defaultdict(list)
    kernel_tables = defaultdict(list)
    raw_rows = []
    for line in Path(sys.argv[2]).read_text().splitlines():
        experiment, study, scene_path, size, spp, *rest = line.split()
        overrides = [w for w in rest if "=" in w]
        scene = Path(scene_path).stem
        runs = study_runs(experiment)
        # The profile's files, as `scripts/why-counters run` names them.
        label = f"{study}_{scene}" + "".join("_" + o.replace("=", "") for o in overrides)
        for backend in BACKENDS:
            stem = outdir / experiment / f"{label}_{backend}"
            launches = read_ncu(stem.with_suffix(".csv"))
            ray_count, spp_run = rays(stem.with_suffix(".txt"))
            t = totals(launches.values(), stem.with_suffix(".csv"))
            tables[experiment].append({
                "study": study, "scene": scene, "overrides": ";".join(overrides),
                "backend": backend, "size": size, "spp": spp_run, "rays": round(ray_count),
                "launches": t["launches"], "launches_per_sample": t["launches"] / spp_run,
                "warp_inst": round(t["warp_inst"]), "lanes": t["lanes"],
                "warp_inst_per_ray": t["warp_inst"] / ray_count, "registers": t["registers"],
                "achieved_occupancy": t["achieved_occupancy"] / 100,
                "theoretical_occupancy": t["theoretical_occupancy"] / 100,
                "dram_bytes_per_ray": t["dram_bytes"] / ray_count,
                "l2_bytes_per_ray": t["l2_bytes"] / ray_count,
                "local_accesses_per_ray": (t["local_loads"] + t["local_stores"]) / ray_count,
                "kernel_ms": t["kernel_ns"] / 1e6,
                **study_columns(runs, study, scene, backend, overrides),
            })
            per_kernel = defaultdict(list)
            for kernel, metrics in launches.values():
                per_kernel[kernel].append((kernel, metrics))
            for kernel, group in sorted(per_kernel.items()):
                k = totals(group, stem.with_suffix(".csv"))
                kernel_tables[experiment].append({
                    "study": study, "scene": scene, "overrides": ";".join(overrides),
                    "backend": backend, "kernel": kernel, "launches": k["launches"],
                    "warp_inst": round(k["warp_inst"]), "lanes": k["lanes"],
                    "warp_inst_per_ray": k["warp_inst"] / ray_count, "registers": k["registers"],
                    "achieved_occupancy": k["achieved_occupancy"] / 100,
                    "dram_bytes_per_ray": k["dram_bytes"] / ray_count,
                    "kernel_ms": k["kernel_ns"] / 1e6,
                })
            raw_rows.append((experiment, f"ncu_{label}_{backend}.csv.xz", stem.with_suffix(".csv")))
    # Every profile is read and summed before anything is written.
    for experiment, name, source in raw_rows:
        dest = Path("results") / experiment / "counters"
        dest.mkdir(parents=True, exist_ok=True)
        with lzma.open(dest / name, "wt") as raw:
            raw.write(source.read_text())
    for experiment, rows in tables.items():
        dest = Path("results") / experiment / "counters"
        write(dest / "why.csv", FIELDS, rows)
        write(dest / "why_kernels.csv", list(kernel_tables[experiment][0]), kernel_tables[experiment])
        print_table(experiment, rows)

def write(path, fields, rows):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


main()
