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
no GPU, and prints the table again.

Every input is read and checked before anything is written: a bad one (a
missing or empty file, a FIFO or a device, a row without a field, a figure
that is not a number, a total of zero that a figure is divided by) exits 1
with one line naming the file, the line or field, and what was expected.
Each output is written to a temporary file beside it and renamed into
place."""

import csv
import lzma
import math
import os
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from input_file import BadInput, read_text

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
# The columns of ncu's CSV rows that are read.
NCU_COLUMNS = ("ID", "Kernel Name", "Metric Name", "Metric Value")
# The render's summary line: size, spp, then its samples and rays per second.
SUMMARY = re.compile(r"(\d+)x(\d+), (\d+) spp.*: [\d.]+ s, (\d+(?:\.\d+)?) M samples/s, (\d+(?:\.\d+)?) M rays/s")
# A profile: EXPERIMENT STUDY SCENE WxH SPP [FLAGS...]; the experiment and
# study are folder and study names.
PROFILE = "EXPERIMENT STUDY SCENE WxH SPP [FLAGS...]"
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
SIZE = re.compile(r"[1-9][0-9]*x[1-9][0-9]*")
# The columns of runs.csv that are read.
RUNS_COLUMNS = (
    "study", "run", "scene_name", "scene_overrides", "backend", "scaled_wall_ms",
    "launches", "spp", "registers", "occupancy", "state_bytes",
)


def number(text, where, what):
    """`text` as a finite number not below 0 (ncu writes thousands with
    commas); `where` and `what` name it in the refusal."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise BadInput(f"{where}: {what} is `{text}`; expected a finite number, 0 or more")
    return value


def whole(text, where, what, least=0):
    """`text` as a whole number of at least `least`."""
    if not text.isdigit() or int(text) < least:
        raise BadInput(f"{where}: {what} is `{text}`; expected a whole number, {least} or more")
    return int(text)


def csv_rows(path, text, start, columns, expected):
    """The rows of the CSV `text` from its line `start` (0-based; the
    header), each as (`path:line`, {column: value}), refusing a header
    without one of `columns` or a row whose fields do not match the
    header's; `expected` says what the file should be."""
    lines = text.splitlines()[start:]
    reader = csv.DictReader(lines)
    header = reader.fieldnames or []
    missing = [c for c in columns if c not in header]
    if missing:
        raise BadInput(f"{path}:{start + 1}: no column {', '.join(missing)}; expected {expected}")
    rows = []
    for row in reader:
        where = f"{path}:{start + reader.line_num}"
        if None in row or None in row.values():
            raise BadInput(f"{where}: not {len(header)} fields as the header has; expected {expected}")
        rows.append((where, row))
    return rows


class Profile:
    """One line of the profiles: the render profiled on each back end."""

    def __init__(self, where, words):
        if len(words) < 5:
            raise BadInput(f"{where}: `{' '.join(words)}` is not a profile; expected {PROFILE}")
        self.experiment, self.study, scene, self.size, spp, *rest = words
        for field, value in (("experiment", self.experiment), ("study", self.study)):
            if not NAME.fullmatch(value):
                raise BadInput(f"{where}: {field} `{value}` is not a name; expected letters, digits, `_` and `-`")
        if not SIZE.fullmatch(self.size):
            raise BadInput(f"{where}: size `{self.size}` is not WIDTHxHEIGHT; expected e.g. 512x384")
        whole(spp, where, "spp", least=1)
        self.scene = Path(scene).stem
        self.overrides = [w for w in rest if "=" in w]
        # The profile's files, as `scripts/why-counters run` names them.
        self.label = f"{self.study}_{self.scene}" + "".join("_" + o.replace("=", "") for o in self.overrides)


def read_profiles(path):
    """The profiles listed in `path`, one a line (blank lines skipped)."""
    text = read_text(path, f"the profiles, one a line: {PROFILE}")
    profiles = [
        Profile(f"{path}:{n}", line.split()) for n, line in enumerate(text.splitlines(), 1) if line.strip()
    ]
    if not profiles:
        raise BadInput(f"{path}: no profile; expected one a line: {PROFILE}")
    return profiles


def read_ncu(path):
    """ncu's CSV log `path` as its text and {launch id: (kernel name,
    {metric: value})}."""
    expected = "Nsight Compute's rows (ncu --csv)"
    text = read_text(path, expected)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise BadInput(f"{path}: no ncu CSV header (the profile failed: see {path.with_suffix('.txt')})")
    launches = {}
    for where, row in csv_rows(path, text, start, NCU_COLUMNS, expected):
        kernel, metrics = launches.setdefault(row["ID"], (row["Kernel Name"], {}))
        name = row["Metric Name"]
        metrics[name] = number(row["Metric Value"], where, name)
    if not launches:
        raise BadInput(f"{path}: no kernel launch was profiled")
    return text, launches


def rays(path):
    """The render's rays: its samples (width x height x spp) times its rays
    per sample, from the summary line's two rates; and its spp."""
    match = SUMMARY.search(read_text(path, "the render's summary line"))
    if not match:
        raise BadInput(f"{path}: no render summary line (`WxH, N spp ...: T s, R M samples/s, R M rays/s`)")
    width, height, spp, samples_rate, rays_rate = match.groups()
    for what, value in (("width", width), ("height", height), ("spp", spp), ("samples/s", samples_rate), ("rays/s", rays_rate)):
        if float(value) == 0:
            raise BadInput(f"{path}: the summary line's {what} is 0; expected a render that traced rays")
    return int(width) * int(height) * int(spp) * float(rays_rate) / float(samples_rate), int(spp)


def totals(launches, path):
    """Every summed and averaged metric over `launches` (ncu's rows of the
    file `path`), with the launches counted and the registers listed."""
    out = defaultdict(float)
    registers = set()
    for kernel, metrics in launches:
        missing = [m for m in (*SUMMED, *AVERAGED, REGISTERS) if m not in metrics]
        if missing:
            raise BadInput(f"{path}: kernel {kernel}: no {', '.join(missing)} (run by an older scripts/why-counters?)")
        ns = metrics["gpu__time_duration.sum"]
        for metric, name in SUMMED.items():
            out[name] += metrics[metric]
        for metric, name in AVERAGED.items():
            out[name] += metrics[metric] * ns
        registers.add(int(metrics[REGISTERS]))
    kernels = ", ".join(sorted({kernel for kernel, _ in launches}))
    for metric, name in (("gpu__time_duration.sum", "kernel_ns"), ("smsp__inst_executed.sum", "warp_inst")):
        if out[name] == 0:
            raise BadInput(f"{path}: {metric} of {kernels} adds up to 0; expected kernels that ran")
    for name in AVERAGED.values():
        out[name] /= out["kernel_ns"]
    out["launches"] = len(launches)
    out["lanes"] = out["thread_inst"] / out["warp_inst"]
    out["registers"] = "/".join(str(r) for r in sorted(registers))
    return out


def fastest_config(runs, study, scene, backend, overrides):
    """The study's fastest configuration of `backend` on `scene` (with the
    profile's generator fields), as the summary takes each back end: the
    least median of `scaled_wall_ms` over a configuration's repetitions.
    Returns its first row (with where it is) and that median, or None."""
    by_run = defaultdict(list)
    for where, r in runs:
        if (
            r["study"] == study
            and r["scene_name"] == scene
            and r["backend"] == backend
            and r["scaled_wall_ms"]
            and all(f"generators[0].{o}" in r["scene_overrides"].split(";") for o in overrides)
        ):
            by_run[r["run"]].append((where, r))
    if not by_run:
        return None
    medians = {
        run: statistics.median(number(r["scaled_wall_ms"], where, "scaled_wall_ms") for where, r in rows)
        for run, rows in by_run.items()
    }
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
# The figures of why.csv the table prints, read back as numbers.
TABLE_FIGURES = ("lanes", "warp_inst_per_ray", "l2_bytes_per_ray", "local_accesses_per_ray", "achieved_occupancy")


def study_runs(experiment):
    """The rows of results/<experiment>/runs.csv (with where each is), or
    none where the study has not run."""
    path = Path("results") / experiment / "runs.csv"
    if not os.path.lexists(path):
        return []
    expected = "runs.csv as `wavepath experiment` writes it"
    return csv_rows(path, read_text(path, expected), 0, RUNS_COLUMNS, expected)


def study_columns(runs, study, scene, backend, overrides):
    """why.csv's study_* columns: the study's fastest configuration of
    `backend` on `scene`, or empty where the study has none."""
    fastest = fastest_config(runs, study, scene, backend, overrides)
    if not fastest:
        return {
            "study_run": "",
            "study_wall_ms": "",
            "study_launches_per_sample": float("nan"),
            "study_registers": "",
            "study_occupancy": "",
            "study_state_bytes": "",
        }
    (where, row), median_ms = fastest
    launches = whole(row["launches"], where, "launches")
    spp = whole(row["spp"], where, "spp", least=1)
    return {
        "study_run": row["run"],
        "study_wall_ms": median_ms,
        "study_launches_per_sample": launches / spp,
        "study_registers": row["registers"],
        "study_occupancy": row["occupancy"],
        "study_state_bytes": row["state_bytes"],
    }


def read_why(path):
    """The rows of a committed why.csv, each figure the table prints
    checked."""
    expected = "why.csv as `scripts/why-counters summarize` writes it"
    if not os.path.lexists(path):
        raise BadInput(f"{path}: no counters to set beside the study (run `scripts/why-counters run` first)")
    rows = csv_rows(path, read_text(path, expected), 0, FIELDS, expected)
    if not rows:
        raise BadInput(f"{path}: no rows; expected {expected}")
    for where, r in rows:
        for field in TABLE_FIGURES:
            number(r[field], where, field)
        for registers in r["registers"].split("/"):
            whole(registers, where, "registers", least=1)
    return [r for _, r in rows]


def restudy(profiles):
    """Sets the study_* columns of every profiled experiment's committed
    why.csv afresh from its runs.csv, and prints the table."""
    experiments = dict.fromkeys(p.experiment for p in read_profiles(profiles))
    done = []
    for experiment in experiments:
        path = Path("results") / experiment / "counters" / "why.csv"
        rows = read_why(path)
        runs = study_runs(experiment)
        for r in rows:
            overrides = [o for o in r["overrides"].split(";") if o]
            r.update(study_columns(runs, r["study"], r["scene"], r["backend"], overrides))
        done.append((experiment, path, rows))
    for experiment, path, rows in done:
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
            f"| {max(int(x) for x in str(r['registers']).split('/'))} "
            f"| {100 * float(r['achieved_occupancy']):.0f} % | {float(r['study_launches_per_sample']):.3g} |"
        )


def profile_rows(profile, backend, stem, runs):
    """why.csv's row and why_kernels.csv's rows of one profile on one back
    end, from ncu's rows `stem`.csv and the summary line `stem`.txt."""
    csv_path = stem.with_suffix(".csv")
    text, launches = read_ncu(csv_path)
    ray_count, spp_run = rays(stem.with_suffix(".txt"))
    t = totals(launches.values(), csv_path)
    common = {"study": profile.study, "scene": profile.scene, "overrides": ";".join(profile.overrides), "backend": backend}
    row = {
        **common, "size": profile.size, "spp": spp_run, "rays": round(ray_count),
        "launches": t["launches"], "launches_per_sample": t["launches"] / spp_run,
        "warp_inst": round(t["warp_inst"]), "lanes": t["lanes"],
        "warp_inst_per_ray": t["warp_inst"] / ray_count, "registers": t["registers"],
        "achieved_occupancy": t["achieved_occupancy"] / 100,
        "theoretical_occupancy": t["theoretical_occupancy"] / 100,
        "dram_bytes_per_ray": t["dram_bytes"] / ray_count,
        "l2_bytes_per_ray": t["l2_bytes"] / ray_count,
        "local_accesses_per_ray": (t["local_loads"] + t["local_stores"]) / ray_count,
        "kernel_ms": t["kernel_ns"] / 1e6,
        **study_columns(runs, profile.study, profile.scene, backend, profile.overrides),
    }
    per_kernel = defaultdict(list)
    for kernel, metrics in launches.values():
        per_kernel[kernel].append((kernel, metrics))
    kernel_rows = []
    for kernel, group in sorted(per_kernel.items()):
        k = totals(group, csv_path)
        kernel_rows.append({
            **common, "kernel": kernel, "launches": k["launches"],
            "warp_inst": round(k["warp_inst"]), "lanes": k["lanes"],
            "warp_inst_per_ray": k["warp_inst"] / ray_count, "registers": k["registers"],
            "achieved_occupancy": k["achieved_occupancy"] / 100,
            "dram_bytes_per_ray": k["dram_bytes"] / ray_count,
            "kernel_ms": k["kernel_ns"] / 1e6,
        })
    return row, kernel_rows, text


def summarize(outdir, profiles):
    """Sums every profile's rows from `outdir`, then writes each
    experiment's counters/ and prints the table."""
    tables = defaultdict(list)
    kernel_tables = defaultdict(list)
    raw_rows = []
    runs_of = {}
    for profile in read_profiles(profiles):
        if profile.experiment not in runs_of:
            runs_of[profile.experiment] = study_runs(profile.experiment)
        for backend in BACKENDS:
            stem = outdir / profile.experiment / f"{profile.label}_{backend}"
            row, kernel_rows, text = profile_rows(profile, backend, stem, runs_of[profile.experiment])
            tables[profile.experiment].append(row)
            kernel_tables[profile.experiment].extend(kernel_rows)
            raw_rows.append((profile.experiment, f"ncu_{profile.label}_{backend}.csv.xz", text))
    # Every profile is read and summed before anything is written.
    for experiment, name, text in raw_rows:
        dest = Path("results") / experiment / "counters"
        dest.mkdir(parents=True, exist_ok=True)
        write_xz(dest / name, text)
    for experiment, rows in tables.items():
        dest = Path("results") / experiment / "counters"
        write(dest / "why.csv", FIELDS, rows)
        write(dest / "why_kernels.csv", list(kernel_tables[experiment][0]), kernel_tables[experiment])
        print_table(experiment, rows)


def replace(path, fill):
    """Writes `path` whole or not at all: `fill` writes the new temporary
    file it is given (opened with mode "x"), beside `path`, which is then
    renamed into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        fill(temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def write_xz(path, text):
    """`text` xz-compressed as the file `path`."""

    def fill(temporary):
        with lzma.open(temporary, "xt") as f:
            f.write(text)

    replace(path, fill)


def write(path, fields, rows):
    """`rows` as the CSV `path`, floats to six significant digits."""

    def fill(temporary):
        with open(temporary, "x", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})

    replace(path, fill)


def main(args):
    if len(args) == 2 and args[0] == "--restudy":
        return restudy(args[1])
    if len(args) != 2 or args[0].startswith("-"):
        raise BadInput("usage: why_counters.py OUTDIR PROFILES, or why_counters.py --restudy PROFILES")
    return summarize(Path(args[0]), args[1])


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BadInput as e:
        sys.exit(f"why_counters: {e}")
    except OSError as e:
        sys.exit(f"why_counters: {e.filename or ''}: {e.strerror}")
