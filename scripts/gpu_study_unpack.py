#!/usr/bin/env python3
"""Installs the studies of a studies.tgz in results/: the checks and the swap
behind `scripts/gpu-study unpack` (its header says when to use it).

    scripts/gpu_study_unpack.py STUDIES.TGZ RESULTS WAVEPATH...

WAVEPATH... is the command that runs this checkout's binary (for example
`cargo run --quiet --`). Nothing is written to RESULTS until every check has
passed, in this order:

1. Every member of the tarball is read first (STUDIES.TGZ must be a
   regular file, gzip-compressed as study.sh packs it). Only folders and
   regular files may come out of it, each inside a study folder, each one
   of the files a study writes (runs.csv, kernels.csv, manifest.toml,
   report.md, figures/ with files in it, and partial/ with the CPU renders
   a stop cut short), none twice, at most MAX_MEMBERS of them holding at
   most MAX_BYTES in all (as their headers declare them); anything else (a
   symbolic or hard link, a FIFO, a device, an absolute path or one that
   climbs out with `..`, a member past either bound) refuses the tarball,
   naming the member, before a byte is extracted. What is decompressed is
   bounded too (READ_LIMIT: the files and their headers), so no header
   makes the check itself read without end.
2. The members are extracted into a staging folder beside RESULTS, read
   again as they were checked.
3. Each study folder is checked whole: its name is a study's (a plain NAME
   with experiments/NAME.toml, NAME_COMMIT for a run of a --reference
   binary, whose manifest names that commit, or NAME_gpusN and
   NAME_ranksN for its run spread over N GPUs or MPI ranks, whose manifest
   records N GPUs, or rows of ranks below N; never `figures`), its
   manifest.toml is TOML that records a run of experiments/NAME.toml, and
   every study in it has a status. A study whose status is not `complete`
   (or `complete, with skipped runs`), or whose folder has no manifest, was
   cut short: it is left out, and the rest installed. Then WAVEPATH report
   reads the staged copy's CSVs as `wavepath report` does and writes its
   report.md and figures afresh from them (any the tarball held are dropped
   first), so a report never describes rows other than the ones beside it.
   A complete study's partial/ (kept renders of runs its config no longer
   plans) is dropped with a note.
4. What else results/NAME holds besides the study's own files (a reference
   image the study reads, renders) is linked into the staged folder, and
   each staged folder then replaces results/NAME by a rename.

Any refusal exits 1 with results/ as it was; a cut-short study is noted and
left out. Needs Python 3.11 or later (tomllib).
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib

from input_file import BadInput, open_regular

try:
    import tomllib
except ImportError:
    sys.exit("gpu-study: unpack needs Python 3.11 or later (tomllib)")

# A study's name: experiments/NAME.toml.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
# A run of a --reference binary: NAME_COMMIT (study.sh names it so).
REFERENCE_RUN = re.compile(r"(.+)_([0-9a-f]{7,40})")
# A run spread over N GPUs (--spread) or N MPI ranks (--ranks): NAME_gpusN,
# NAME_ranksN, N from 2 (report/src/scale_out.rs reads the
# same names).
SPREAD_RUN = re.compile(r"(.+)_(gpus|ranks)([2-9]|[1-9][0-9]+)")
# The files a study writes; what else its folder holds stays.
OWN_FILES = ("runs.csv", "kernels.csv", "manifest.toml", "report.md")
FIGURES = "figures"
# CPU renders a stop cut short, kept for `--resume` (experiment/partial.rs).
PARTIAL = "partial"
# Not a study: results/figures holds the summary's figures.
RESERVED = {FIGURES}
# The most members (folders and files) a study tarball holds, and the most
# bytes of files in all: a study's folder holds tens of files and a few MB,
# and a CPU render a stop cut short, kept in partial/, 88 MiB at the
# largest size a study renders on the CPU (2560x1440).
MAX_MEMBERS = 10_000
MAX_BYTES = 512 << 20
# The most bytes read of the decompressed tarball: the files, and for each
# member a header with room for a long name (and the blocks' padding).
READ_LIMIT = MAX_BYTES + MAX_MEMBERS * (16 << 10)
# What reading a damaged tarball raises (gzip.BadGzipFile is an OSError).
READ_ERRORS = (OSError, EOFError, zlib.error, tarfile.TarError)
KINDS = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.FIFOTYPE: "a FIFO",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.CONTTYPE: "a contiguous file",
}


class Refused(Exception):
    """The tarball cannot be installed; the message says why."""


def member_parts(member):
    """The member's path as a list of names, refusing one that is not a
    folder or a regular file or that leaves the tarball's folder."""
    name = member.name
    if not (member.isdir() or member.type in (tarfile.REGTYPE, tarfile.AREGTYPE)):
        kind = KINDS.get(member.type, f"an entry of type {member.type!r}")
        target = f" to {member.linkname}" if member.issym() or member.islnk() else ""
        raise Refused(f"{name}: {kind}{target}; only folders and regular files may come out of a study tarball")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts:
        raise Refused(f"{name}: a path outside the tarball's folder")
    return parts


def check_member(member, parts):
    """Refuses a member that is not one of a study's files."""
    if not parts:
        return
    study = parts[0]
    if not NAME.fullmatch(study) or study in RESERVED:
        raise Refused(
            f"{member.name}: `{study}` is not a study's folder (a study is named for experiments/NAME.toml, "
            "NAME of letters, digits, `_` and `-`, and not `figures`)"
        )
    inside = parts[1:]
    if member.isdir():
        ok = len(inside) == 0 or inside in ([FIGURES], [PARTIAL])
    else:
        ok = (len(inside) == 1 and inside[0] in OWN_FILES) or (len(inside) == 2 and inside[0] in (FIGURES, PARTIAL))
    if not ok:
        raise Refused(
            f"{member.name}: not a file a study writes (STUDY/ with {', '.join(OWN_FILES)}, {FIGURES}/ and "
            f"{PARTIAL}/ of files)"
        )


class Bounded:
    """The decompressed tarball `archive` from `f`, refused once more than
    READ_LIMIT bytes are read."""

    def __init__(self, f, archive):
        self.f, self.archive, self.left = f, archive, READ_LIMIT

    def read(self, size=-1):
        data = self.f.read(self.left + 1 if size < 0 else min(size, self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise Refused(
                f"{self.archive}: more than {READ_LIMIT >> 20} MiB once decompressed; a study tarball holds at most "
                f"{MAX_BYTES >> 20} MiB of files in {MAX_MEMBERS} members"
            )
        return data


def reading(archive, read, *args, **kwargs):
    """`read(*args, **kwargs)`, a read of the tarball `archive`, whose
    failure refuses it as damaged."""
    try:
        return read(*args, **kwargs)
    except READ_ERRORS as e:
        raise Refused(f"{archive}: not a readable tarball: {e}") from None


def members(archive, visit):
    """Calls `visit(tar, member)` on each member of the tarball `archive`
    in order, read as a stream (a member's data only while it is visited)."""
    try:
        raw = open_regular(archive, "a studies.tgz that study.sh packed")
    except BadInput as e:
        raise Refused(str(e)) from None
    with raw, gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
        tar = reading(archive, tarfile.open, fileobj=Bounded(unzipped, archive), mode="r|")
        with tar:
            while (member := reading(archive, tar.next)) is not None:
                visit(tar, member)


def bound(member, count, total):
    """Refuses `member`, the `count`-th, once the members up to it declare
    `total` bytes, past MAX_MEMBERS or MAX_BYTES."""
    if count > MAX_MEMBERS:
        raise Refused(f"{member.name}: member {count}; a study tarball holds at most {MAX_MEMBERS} (folders and files)")
    if total > MAX_BYTES:
        raise Refused(
            f"{member.name}: {member.size} bytes, {total} with the members before it; a study tarball holds at most "
            f"{MAX_BYTES >> 20} MiB of files"
        )


def read_members(archive):
    """Every member's path as a list of names, checked, before anything is
    written."""
    checked, seen, total = [], set(), 0

    def check(_, member):
        nonlocal total
        parts = member_parts(member)
        check_member(member, parts)
        total += member.size
        bound(member, len(checked) + 1, total)
        key = "/".join(parts)
        if key in seen:
            raise Refused(f"{member.name}: in the tarball twice")
        seen.add(key)
        checked.append((member.name, member.size, parts))

    members(archive, check)
    return checked


def extract(archive, checked, stage):
    """Writes the `checked` members of `archive` under `stage`, a new,
    empty folder, refusing a member that is not the one checked."""
    left = iter(checked)

    def write(tar, member):
        name, size, parts = next(left, (None, None, None))
        if (member.name, member.size) != (name, size):
            raise Refused(f"{member.name}: not the member checked ({name}); the tarball changed while it was read")
        path = os.path.join(stage, *parts)
        if member.isdir():
            os.makedirs(path, exist_ok=True)
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        src = reading(archive, tar.extractfile, member)
        with src, open(path, "xb") as dst:
            while chunk := reading(archive, src.read, 1 << 20):
                dst.write(chunk)

    members(archive, write)


class Run:
    """What a study folder's name says of its run: the config it ran
    (experiments/BASE.toml), the commit of the --reference binary that ran
    it (None for this checkout's own), and the spread over GPUs or ranks
    (`gpus` or `ranks`, and how many; None for one GPU)."""

    def __init__(self, base, commit=None, spread=None):
        self.base, self.commit, self.spread = base, commit, spread


def config_of(name):
    """The run a study folder's name stands for."""
    if os.path.isfile(f"experiments/{name}.toml"):
        return Run(name)
    run = REFERENCE_RUN.fullmatch(name)
    if run and os.path.isfile(f"experiments/{run[1]}.toml"):
        return Run(run[1], commit=run[2])
    run = SPREAD_RUN.fullmatch(name)
    if run and os.path.isfile(f"experiments/{run[1]}.toml"):
        return Run(run[1], spread=(run[2], int(run[3])))
    raise Refused(
        f"{name}: no experiments/{name}.toml (a study folder is named NAME for experiments/NAME.toml, "
        "NAME_COMMIT for its run with a --reference binary, or NAME_gpusN and NAME_ranksN for its run "
        "spread over N GPUs or MPI ranks)"
    )


def check_spread(name, manifest, spread):
    """Refuses a manifest whose run was not spread as the folder's name
    says: over N GPUs, N `[[devices]]`; over N ranks, rows from two ranks
    or more (`[[rank]]`), each below N."""
    kind, n = spread
    if kind == "gpus":
        devices = manifest.get("devices")
        opened = len(devices) if isinstance(devices, list) else 1
        if opened != n:
            raise Refused(f"{name}/manifest.toml: the run opened {opened} GPU(s) ([[devices]]), not {n} as the folder's name says")
        return
    ranks = manifest.get("rank")
    numbers = [r.get("rank") for r in ranks if isinstance(r, dict)] if isinstance(ranks, list) else []
    if len(numbers) < 2 or not all(isinstance(k, int) and 0 <= k < n for k in numbers):
        raise Refused(
            f"{name}/manifest.toml: [[rank]] lists ranks {numbers}, not the rows of 2 to {n} MPI ranks "
            f"numbered below {n} as the folder's name says"
        )


def cut_short(name, folder, run):
    """Why the staged study `folder` was cut short (None if it finished);
    refuses a manifest that is not one of `run`."""
    base, commit = run.base, run.commit
    path = os.path.join(folder, "manifest.toml")
    if not os.path.exists(path):
        return "it has no manifest.toml (the run did not start)"
    try:
        with open(path, "rb") as f:
            manifest = tomllib.load(f)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise Refused(f"{name}/manifest.toml: not a manifest: {e}")
    experiment = manifest.get("experiment")
    config = experiment.get("config") if isinstance(experiment, dict) else None
    if not isinstance(config, str) or os.path.basename(config) != f"{base}.toml":
        raise Refused(f"{name}/manifest.toml: [experiment] config is {config!r}, not a run of experiments/{base}.toml")
    if commit is not None:
        build = manifest.get("build")
        ran = build.get("commit") if isinstance(build, dict) else None
        if not isinstance(ran, str) or not ran.startswith(commit):
            raise Refused(f"{name}/manifest.toml: [build] commit is {ran!r}, not {commit} as the folder's name says")
    studies = manifest.get("study")
    if not isinstance(studies, list) or not studies:
        raise Refused(f"{name}/manifest.toml: no [[study]]")
    for study in studies:
        status = study.get("status") if isinstance(study, dict) else None
        label = study.get("name") if isinstance(study, dict) else None
        if not isinstance(status, str):
            raise Refused(f"{name}/manifest.toml: study `{label}` has no status")
        if status != "complete" and not status.startswith("complete, "):
            return f"study `{label}` is {status!r}"
    if run.spread is not None:
        check_spread(name, manifest, run.spread)
    return None


def regenerate_report(name, folder, wavepath):
    """Reads the staged CSVs as `wavepath report` does, writing report.md
    and figures/ afresh from them; refuses what report refuses."""
    for old in ("report.md", FIGURES):
        path = os.path.join(folder, old)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    done = subprocess.run([*wavepath, "report", folder], capture_output=True, text=True)
    if done.returncode != 0:
        raise Refused(f"{name}: `wavepath report` refuses it:\n{done.stderr.strip()}")
    figures = os.path.join(folder, FIGURES)
    if os.path.isdir(figures) and not os.listdir(figures):
        os.rmdir(figures)


def keep_the_rest(name, folder, results):
    """Links what else results/NAME holds (not the study's own files) into
    the staged folder, so the swap keeps it."""
    installed = os.path.join(results, name)
    if not os.path.lexists(installed):
        return
    if os.path.islink(installed) or not os.path.isdir(installed):
        raise Refused(f"{installed}: not a folder; move it away first")
    for entry in sorted(os.listdir(installed)):
        if entry in OWN_FILES or entry == FIGURES:
            continue
        src, dst = os.path.join(installed, entry), os.path.join(folder, entry)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True, copy_function=os.link)
        elif os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            os.link(src, dst)


def install(accepted, results, stage):
    """Swaps each staged folder into results/, by renames; the replaced
    folders go to `stage`, which the caller removes."""
    os.makedirs(results, exist_ok=True)
    for name, folder in accepted:
        installed = os.path.join(results, name)
        replaced = os.path.join(stage, f"replaced-{name}")
        had = os.path.lexists(installed)
        if had:
            os.rename(installed, replaced)
        try:
            os.rename(folder, installed)
        except OSError:
            if had:
                os.rename(replaced, installed)
            raise
        print(installed)


def unpack(archive, results, wavepath):
    """Checks, stages and installs; returns the number of studies installed."""
    checked = read_members(archive)
    parent = os.path.dirname(os.path.abspath(results))
    stage = tempfile.mkdtemp(prefix=".gpu-study-unpack.", dir=parent)
    try:
        new = os.path.join(stage, "new")
        extract(archive, checked, new)
        names = sorted(os.listdir(new)) if os.path.isdir(new) else []
        accepted = []
        for name in names:
            folder = os.path.join(new, name)
            why = cut_short(name, folder, config_of(name))
            if why:
                print(f"gpu-study: {name} was cut short ({why}); left out (run it again with a larger --budget)", file=sys.stderr)
                continue
            partial = os.path.join(folder, PARTIAL)
            if os.path.isdir(partial):
                print(f"gpu-study: {name}/{PARTIAL} dropped: the study is complete, so no run needs its kept renders", file=sys.stderr)
                shutil.rmtree(partial)
            regenerate_report(name, folder, wavepath)
            keep_the_rest(name, folder, results)
            accepted.append((name, folder))
        install(accepted, results, stage)
        return len(accepted)
    finally:
        shutil.rmtree(stage)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: gpu_study_unpack.py STUDIES.TGZ RESULTS WAVEPATH...")
    archive, results, wavepath = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        count = unpack(archive, results, wavepath)
    except Refused as e:
        sys.exit(f"gpu-study: unpack: {e}\ngpu-study: nothing installed; {results}/ is as it was")
    except OSError as e:
        sys.exit(f"gpu-study: unpack: {e}")
    if count == 0:
        print(f"gpu-study: no complete study in {archive}; nothing installed", file=sys.stderr)


if __name__ == "__main__":
    main()
