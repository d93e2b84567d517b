//! What `wavepath experiment` writes, and nothing else: a report refuses a
//! value no run could have made (`gpus` 0, a NaN busy time, a row of
//! another experiment, an unknown status) rather than table it, naming the
//! file, the line and the column or field.
//!
//! - [`WrittenRow`]: a row of `runs.csv` or `kernels.csv` belongs to the
//!   manifest's experiment, one of its studies and one of that study's back
//!   ends; its times are ones a render takes ([`time_ms`]); its settings
//!   are values the config's own parsers take
//!   ([`lab::params::SETTINGS`]) on a back end they concern,
//!   and those its configuration label names (`gpus` and `split_all`
//!   among them) are the label's; a split over GPUs has one share per
//!   GPU, and a row on several GPUs a split; a kernel's registers and
//!   occupancy are ones a GPU has, and only GPU rows have them.
//! - [`film_checks`]: rows that render the same image have the same film
//!   where the manifest's film check says they did.
//! - [`check_manifest`]: the manifest's studies (back ends, baseline,
//!   sweeps, status, published figures) and the figures the report prints
//!   (device memory, the runner's overhead, ranks) are in range, each GPU
//!   is listed once, and its times, the experiment's and each session's,
//!   are ones the runner writes, none ending before it starts.
//! - [`check_manifest_rows`]: the manifest's count of each study's rows,
//!   and its MPI ranks, are those of `runs.csv`.

use clap::ValueEnum;
use lab::config::PUBLISHED_UNITS;
use lab::films::{IDENTICAL, film_group};
use lab::manifest::INTERRUPTED;
use lab::params::{self, Param, SettingDecl, Value, describe};
use lab::records::{KernelRow, Manifest, ManifestStudy, RunRow};
use lab::scaling::Scaling;
use lab::spread::loads;
use renderer::backend::BackendKind;
use renderer::io::document_path::{PathStep, key};
use renderer::settings::backend::{BackendArg, BackendChoice};
use renderer::settings::echo::shorten_for_error;
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;
use toml::de::{DeTable, DeValue};

/// A value out of range: its column and what is wrong.
pub type Refusal = (&'static str, String);

/// A row of `runs.csv` or `kernels.csv`, as the runner writes it.
pub trait WrittenRow {
    /// The first value the runner could not have written: its column and
    /// what is wrong. `manifest` is the experiment's; `settings`, the
    /// row's cells that hold settings.
    fn check(&self, manifest: &Manifest, settings: &SettingCells) -> Result<(), Refusal>;
}

/// A column that holds a setting's value as a config gives it.
pub struct SettingColumn {
    /// Its index in the file's header.
    at: usize,
    /// Its name.
    name: &'static str,
    /// The setting whose parser takes its values.
    setting: &'static SettingDecl,
}

/// The setting columns among `headers` (a file's header line): the columns
/// each setting of [`params::SETTINGS`] declares ([`SettingDecl::columns`]).
pub fn setting_columns(headers: &csv::StringRecord) -> Vec<SettingColumn> {
    params::SETTINGS
        .iter()
        .flat_map(|&setting| setting.columns.iter().map(move |&name| (name, setting)))
        .filter_map(|(name, setting)| {
            let at = headers.iter().position(|h| h == name)?;
            Some(SettingColumn { at, name, setting })
        })
        .collect()
}

/// A row's cells that hold settings.
pub struct SettingCells<'r> {
    /// The file's setting columns.
    pub columns: &'r [SettingColumn],
    /// The row.
    pub record: &'r csv::StringRecord,
}

impl SettingCells<'_> {
    /// Checks each non-empty cell with its setting's parser, and that the
    /// setting concerns `backend` (the runner leaves the others empty).
    fn check(&self, backend: BackendKind) -> Result<(), Refusal> {
        for c in self.columns {
            let Some(cell) = self.record.get(c.at).filter(|cell| !cell.is_empty()) else {
                continue;
            };
            (c.setting.parse)(&toml_value(cell)).map_err(|problem| (c.name, problem))?;
            if !c.setting.scope.contains(backend) {
                return Err((
                    c.name,
                    format!(
                        "`{cell}` is out of range (back end `{}` has no `{}`: the runner leaves it empty)",
                        backend.label(),
                        c.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A CSV cell as the TOML value a config would give: a whole number, a
/// flag, a number or a string.
fn toml_value(cell: &str) -> toml::Value {
    if let Ok(n) = cell.parse() {
        toml::Value::Integer(n)
    } else if let Ok(b) = cell.parse() {
        toml::Value::Boolean(b)
    } else if let Ok(x) = cell.parse() {
        toml::Value::Float(x)
    } else {
        toml::Value::String(cell.into())
    }
}

/// `value` as a measure: finite and at least 0 (above 0 when `positive`),
/// or NaN where `unmeasured` allows it; what is wrong otherwise.
fn measure(value: f64, positive: bool, unmeasured: bool) -> Result<(), String> {
    let ok = if value.is_nan() {
        unmeasured
    } else {
        value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 }
    };
    let expected = match (positive, unmeasured) {
        (true, _) => "a finite value above 0",
        (false, true) => "a finite value of at least 0, or NaN (not measured)",
        (false, false) => "a finite value of at least 0",
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{value} is out of range (expected {expected})"))
    }
}

/// `value` of `column` as a measure that is not a time ([`measure`], at
/// least 0).
fn measured(column: &'static str, value: f64, unmeasured: bool) -> Result<(), Refusal> {
    measure(value, false, unmeasured).map_err(|problem| (column, problem))
}

/// The shortest render time a report takes, in milliseconds: a
/// nanosecond, below what any timer the runner reads resolves. Render
/// times divide one another in speedups and set the figures' axes, so a
/// time closer to 0 would make a ratio of no meaning, or an infinite one.
pub(super) const MIN_TIME_MS: f64 = 1e-6;

/// The longest time a report takes, in milliseconds: 10⁹ ms, eleven and a
/// half days, far beyond any render a study times or scales to; with
/// [`MIN_TIME_MS`] it keeps every ratio of two times finite and above 0.
pub(super) const MAX_TIME_MS: f64 = 1e9;

/// `value` as a time in milliseconds: from [`MIN_TIME_MS`] to
/// [`MAX_TIME_MS`] when `positive` (a render's time, which divides
/// others), else from 0 to [`MAX_TIME_MS`]; NaN where `unmeasured` allows
/// it. What is wrong otherwise.
pub(super) fn time_ms(value: f64, positive: bool, unmeasured: bool) -> Result<(), String> {
    let least = if positive { MIN_TIME_MS } else { 0.0 };
    let ok = if value.is_nan() {
        unmeasured
    } else {
        (least..=MAX_TIME_MS).contains(&value)
    };
    if ok {
        return Ok(());
    }
    let least = if positive {
        format!("{MIN_TIME_MS:e}")
    } else {
        "0".into()
    };
    let nan = if unmeasured { ", or NaN (not measured)" } else { "" };
    Err(format!(
        "{} is out of range (expected a time from {least} to {MAX_TIME_MS:e} ms{nan})",
        number(value)
    ))
}

/// `value` as a message shows it: plainly, or with an exponent where
/// plainly it would take more than a few digits (`1e-310`, not 310 zeros).
pub(super) fn number(value: f64) -> String {
    if value == 0.0 || !value.is_finite() || (1e-4..1e15).contains(&value.abs()) {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

/// `value` of `column` as a time in milliseconds ([`time_ms`]).
fn time(column: &'static str, value: f64, positive: bool, unmeasured: bool) -> Result<(), Refusal> {
    time_ms(value, positive, unmeasured).map_err(|problem| (column, problem))
}

/// The back end labelled `label`.
fn backend(label: &str) -> Result<BackendKind, String> {
    let kinds = BackendArg::value_variants()
        .iter()
        .filter_map(|arg| match arg.choice() {
            BackendChoice::Exactly(kind) => Some(kind),
            BackendChoice::Auto => None,
        });
    kinds.clone().find(|k| k.label() == label).ok_or_else(|| {
        let labels: Vec<&str> = kinds.map(BackendKind::label).collect();
        format!("`{label}` is not a back end (expected one of {})", labels.join(", "))
    })
}

/// The study of a row of `experiment` and `study`: the manifest's
/// experiment, one of its studies.
fn study_of<'m>(experiment: &str, study: &str, m: &'m Manifest) -> Result<&'m ManifestStudy, Refusal> {
    if experiment != m.experiment.name {
        return Err((
            "experiment",
            format!(
                "`{experiment}` is not the manifest's experiment `{}`",
                m.experiment.name
            ),
        ));
    }
    m.study.iter().find(|s| s.name == study).ok_or_else(|| {
        let names: Vec<&str> = m.study.iter().map(|s| s.name.as_str()).collect();
        (
            "study",
            format!("`{study}` is not one of the manifest's studies ({})", names.join(", ")),
        )
    })
}

/// The back end of a row of `study`: one of the study's.
fn backend_of(label: &str, study: &ManifestStudy) -> Result<BackendKind, Refusal> {
    let kind = backend(label).map_err(|problem| ("backend", problem))?;
    if !study.backends.iter().any(|b| b == label) {
        return Err((
            "backend",
            format!(
                "`{label}` is not one of study `{}`'s back ends ({})",
                study.name,
                study.backends.join(", ")
            ),
        ));
    }
    Ok(kind)
}

/// A render is one part, or several on a CPU back end whose render a stop
/// cut short and `--resume` finished; a GPU render always finishes.
fn parts(parts: u32, backend: BackendKind) -> Result<(), Refusal> {
    let kept_part_way = matches!(backend, BackendKind::Cpu | BackendKind::CpuSerial);
    match parts {
        0 => Err(("parts", "0 is out of range (expected 1 or more renders)".into())),
        1 => Ok(()),
        _ if kept_part_way => Ok(()),
        n => Err((
            "parts",
            format!(
                "{n} on a `{}` row: only a CPU back end's render is kept part-way and finished by `--resume`",
                backend.label()
            ),
        )),
    }
}

/// The threads a row of `backend` ran on: 1 for `cpu-serial`, 1 or more
/// for `cpu`, none recorded for the others.
fn threads(threads: Option<usize>, backend: BackendKind) -> Result<(), Refusal> {
    let expected = match backend {
        BackendKind::CpuSerial if threads == Some(1) => return Ok(()),
        BackendKind::CpuSerial => "`cpu-serial` runs on 1 thread".to_string(),
        BackendKind::Cpu if threads.is_some_and(|t| t >= 1) => return Ok(()),
        BackendKind::Cpu => "expected 1 or more threads".into(),
        _ if threads.is_none() => return Ok(()),
        b => format!("back end `{}` has no `threads`: the runner leaves it empty", b.label()),
    };
    let shown = threads.map_or("empty".into(), |t| t.to_string());
    Err(("threads", format!("{shown} is out of range ({expected})")))
}

/// The split of a render over GPUs: either none of `split_spp`,
/// `split_busy_ms` and `split_imbalance`, or all three in a row on 2 or
/// more GPUs, with one share per GPU and the shares' samples adding up to
/// the spp rendered.
fn split(r: &RunRow) -> Result<(), Refusal> {
    let set = [
        ("split_spp", !r.split_spp.is_empty()),
        ("split_busy_ms", !r.split_busy_ms.is_empty()),
        ("split_imbalance", r.split_imbalance.is_some()),
        ("split_setup_ms", !r.split_setup_ms.is_empty()),
        ("split_merge_ms", r.split_merge_ms.is_some()),
        ("split_all", r.split_all.is_some()),
    ];
    let Some(&(column, _)) = set.iter().find(|(_, set)| *set) else {
        return match r.gpus {
            Some(n) if n >= 2 => Err((
                "gpus",
                format!(
                    "{n} with no split (the runner records each GPU's share of a render over 2 or more \
                     in `split_spp`, `split_busy_ms` and `split_imbalance`)"
                ),
            )),
            _ => Ok(()),
        };
    };
    let gpus = match r.gpus {
        Some(n) if n >= 2 => n as usize,
        n => {
            let on = n.map_or("no `gpus`".into(), |n| format!("`gpus` {n}"));
            return Err((
                column,
                format!("a split over GPUs in a row of one GPU ({on}; the runner splits renders over 2 or more)"),
            ));
        }
    };
    let shares: Option<Vec<u64>> = r.split_spp.split_whitespace().map(|s| s.parse().ok()).collect();
    match shares {
        Some(s) if s.len() == gpus => {
            let all: u64 = s.iter().sum();
            if all != u64::from(r.spp) {
                return Err((
                    "split_spp",
                    format!(
                        "`{}` is {all} samples in all, not the {} spp rendered",
                        r.split_spp, r.spp
                    ),
                ));
            }
        }
        _ => {
            return Err((
                "split_spp",
                format!(
                    "`{}` is not a split over {gpus} GPUs (expected one whole number of samples per GPU)",
                    r.split_spp
                ),
            ));
        }
    }
    per_gpu_times("split_busy_ms", &r.split_busy_ms, gpus)?;
    // Where each GPU's time went: all or none (rows from before them).
    let parts = [
        ("split_setup_ms", &r.split_setup_ms),
        ("split_first_ms", &r.split_first_ms),
        ("split_readback_ms", &r.split_readback_ms),
        ("split_idle_ms", &r.split_idle_ms),
    ];
    if parts.iter().any(|(_, v)| !v.is_empty()) || r.split_merge_ms.is_some() {
        for (column, text) in parts {
            per_gpu_times(column, text, gpus)?;
        }
        match r.split_merge_ms {
            Some(v) => time("split_merge_ms", v, false, false)?,
            None => {
                return Err((
                    "split_merge_ms",
                    "empty beside the GPUs' setup and idle times (expected the merge's time, at least 0)".into(),
                ));
            }
        }
    }
    match r.split_imbalance {
        Some(v) => measured("split_imbalance", v, false),
        None => Err((
            "split_imbalance",
            format!("empty in a row split over {gpus} GPUs (expected the split's imbalance, at least 0)"),
        )),
    }
}

/// Checks `text`, the `column` of a row split over `gpus` GPUs: one time
/// of 0 to [`MAX_TIME_MS`] per GPU, space-separated.
fn per_gpu_times(column: &'static str, text: &str, gpus: usize) -> Result<(), Refusal> {
    let times: Option<Vec<f64>> = text
        .split_whitespace()
        .map(|s| s.parse().ok().filter(|t: &f64| time_ms(*t, false, false).is_ok()))
        .collect();
    if times.is_none_or(|t| t.len() != gpus) {
        return Err((
            column,
            format!(
                "`{}` is not a split over {gpus} GPUs (expected a time from 0 to {MAX_TIME_MS:e} ms per GPU)",
                shorten_for_error(text)
            ),
        ));
    }
    Ok(())
}

/// Registers per thread a GPU kernel can use: ptxas gives every kernel
/// at least one, and no GPU more than 255.
const REGISTERS: std::ops::RangeInclusive<u32> = 1..=255;

/// A kernel's profile figures, where present: its registers per thread
/// ([`REGISTERS`]) and its theoretical occupancy, above 0 (a kernel that
/// launched has at least one block resident) and at most 1.
fn kernel_figures(registers: Option<u32>, occupancy: Option<f64>) -> Result<(), Refusal> {
    if let Some(n) = registers
        && !REGISTERS.contains(&n)
    {
        return Err((
            "registers",
            format!(
                "{n} is out of range (expected {} to {} registers per thread)",
                REGISTERS.start(),
                REGISTERS.end()
            ),
        ));
    }
    match occupancy {
        Some(v) if !(v > 0.0 && v <= 1.0) => Err((
            "occupancy",
            format!("{v} is out of range (expected a fraction above 0 and at most 1)"),
        )),
        _ => Ok(()),
    }
}

/// The GPU profile of a row of `backend`: its tracing kernel's figures
/// ([`kernel_figures`]) and the wavefront's state, each empty on a back
/// end that has no GPU profile.
fn profile(r: &RunRow, backend: BackendKind) -> Result<(), Refusal> {
    if !backend.is_gpu() {
        let set = [
            ("registers", r.registers.is_some()),
            ("local_bytes", r.local_bytes.is_some()),
            ("occupancy", r.occupancy.is_some()),
            ("state_bytes", r.state_bytes.is_some()),
            ("pool_capacity", r.pool_capacity.is_some()),
            ("gpu_ordinal", r.gpu_ordinal.is_some()),
        ];
        if let Some(&(column, _)) = set.iter().find(|(_, set)| *set) {
            return Err((
                column,
                format!(
                    "set in a row of back end `{}` (only GPU runs have a GPU and a kernel profile: the runner leaves \
                     it empty)",
                    backend.label()
                ),
            ));
        }
    }
    kernel_figures(r.registers, r.occupancy)?;
    if let (Some(n), Some(cap)) = (r.registers, r.max_registers)
        && n > cap
    {
        return Err((
            "registers",
            format!("{n} is above the row's cap of {cap} registers (`max_registers`), which the kernel keeps to"),
        ));
    }
    Ok(())
}

/// A row's film hash and commit as the runner writes them: a hash of 16
/// hex digits (8 in rows of older runners) or none, and a commit's hash
/// (`-dirty` after it for a build with uncommitted changes) or `unknown`.
/// Rows of several commits are the summary's to refuse or name.
fn provenance(r: &RunRow) -> Result<(), Refusal> {
    let hex = |s: &str| matches!(s.len(), 8 | 16) && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !r.film_hash.is_empty() && !hex(&r.film_hash) {
        return Err((
            "film_hash",
            format!(
                "`{}` is not a film hash (expected 16 hex digits, or 8 from older runners)",
                shorten_for_error(&r.film_hash)
            ),
        ));
    }
    let commit = r.commit.strip_suffix("-dirty").unwrap_or(&r.commit);
    let looks_like_one = (7..=40).contains(&commit.len()) && commit.bytes().all(|b| b.is_ascii_hexdigit());
    if !(looks_like_one || r.commit == "unknown") {
        return Err((
            "commit",
            format!(
                "`{}` is not a commit (expected 7 to 40 hex digits, `-dirty` after them for a build with \
                 uncommitted changes, or `unknown`)",
                shorten_for_error(&r.commit)
            ),
        ));
    }
    Ok(())
}

/// The settings a row's configuration label (`config`, e.g. `gpu-mega
/// kernels=exact max_registers=80 gpus=2`) names, against the row's own
/// cells of them: the runner writes the value the configuration set (but
/// `split_all`, which a row of one GPU leaves empty whatever its label).
fn as_configured(r: &RunRow) -> Result<(), Refusal> {
    let named = |name: &str| {
        let prefix = format!("{name}=");
        r.config
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&prefix).map(str::to_owned))
    };
    let shown = |cell: Option<String>| cell.unwrap_or_default();
    let split = r.gpus.is_some_and(|n| n > 1);
    let cells = [
        ("kernels", Some(shown(r.kernels.clone()))),
        ("arithmetic", Some(shown(r.arithmetic.clone()))),
        (
            "max_registers",
            Some(
                r.max_registers
                    .map_or_else(|| describe(&Value::RegisterCap(None)), |n| n.to_string()),
            ),
        ),
        ("gpus", Some(shown(r.gpus.map(|n| n.to_string())))),
        ("split_all", split.then(|| shown(r.split_all.map(|f| f.to_string())))),
    ];
    for (column, cell) in cells {
        if let (Some(set), Some(cell)) = (named(column), cell)
            && set != cell
        {
            let shown = if cell.is_empty() {
                "empty".to_string()
            } else {
                format!("`{cell}`")
            };
            return Err((
                column,
                format!(
                    "{shown} contradicts the row's configuration `{}`, which sets `{column}={set}`",
                    r.config
                ),
            ));
        }
    }
    Ok(())
}

impl WrittenRow for RunRow {
    fn check(&self, manifest: &Manifest, settings: &SettingCells) -> Result<(), Refusal> {
        let study = study_of(&self.experiment, &self.study, manifest)?;
        let backend = backend_of(&self.backend, study)?;
        settings.check(backend)?;
        threads(self.threads, backend)?;
        if self.report_spp < self.spp {
            return Err((
                "report_spp",
                format!(
                    "{} is below the {} spp rendered (the runner renders at most the spp it reports)",
                    self.report_spp, self.spp
                ),
            ));
        }
        for (column, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 {
                return Err((
                    column,
                    "0 is out of range (expected a whole number of at least 1)".into(),
                ));
            }
        }
        parts(self.parts.0, backend)?;
        profile(self, backend)?;
        provenance(self)?;
        as_configured(self)?;
        split(self)?;
        time("wall_ms", self.wall_ms, true, false)?;
        time("scaled_wall_ms", self.scaled_wall_ms, true, false)?;
        time("total_ms", self.total_ms, true, false)?;
        time("kernel_ms", self.kernel_ms, false, true)?;
        time("overhead_ms", self.overhead_ms, false, true)?;
        time("accel_build_ms", self.accel_build_ms, false, false)?;
        time("upload_ms", self.upload_ms, false, false)?;
        time("readback_ms", self.readback_ms, false, false)?;
        time("runner_ms", self.runner_ms, false, false)?;
        measured("rays_per_s", self.rays_per_s, false)?;
        measured("samples_per_s", self.samples_per_s, false)?;
        for (name, error) in [
            ("rmse", self.rmse),
            ("rel_mse", self.rel_mse),
            ("mae", self.mae),
            ("flip", self.flip),
        ] {
            if let Some(e) = error {
                measured(name, e, false)?;
            }
        }
        Ok(())
    }
}

/// Lanes in a warp of the GPUs whose kernels are profiled.
const WARP_LANES: f64 = 32.0;

impl WrittenRow for KernelRow {
    fn check(&self, manifest: &Manifest, _: &SettingCells) -> Result<(), Refusal> {
        let study = study_of(&self.experiment, &self.study, manifest)?;
        if self.launches == 0 {
            return Err(("launches", "0 is out of range (expected 1 or more launches)".into()));
        }
        let backend = backend_of(&self.backend, study)?;
        if !backend.is_gpu() {
            return Err((
                "backend",
                format!(
                    "`{}` has no kernel profiles (only the GPU back ends' runs are profiled)",
                    self.backend
                ),
            ));
        }
        kernel_figures(self.registers, self.occupancy)?;
        if self.kernel.trim().is_empty() {
            return Err(("kernel", "empty (expected the kernel's entry-point name)".into()));
        }
        if self.min_ms > self.max_ms {
            return Err((
                "min_ms",
                format!(
                    "{} is above `max_ms`, {} (the fastest launch cannot be slower than the slowest)",
                    self.min_ms, self.max_ms
                ),
            ));
        }
        if let Some(lanes) = self.active_lanes
            && !(0.0..=WARP_LANES).contains(&lanes)
        {
            return Err((
                "active_lanes",
                format!("{lanes} is out of range (expected a mean from 0 to {WARP_LANES} lanes)"),
            ));
        }
        time("total_ms", self.total_ms, false, true)?;
        time("mean_ms", self.mean_ms, false, true)?;
        time("min_ms", self.min_ms, false, true)?;
        time("max_ms", self.max_ms, false, true)?;
        measured("items_per_s", self.items_per_s, true)
    }
}

/// Checks `rows` (each with its line) against the film check of their
/// study in `manifest`: where it says the films were identical, every
/// two rows that render the same image ([`film_group`]) have the same
/// film hash. The first row that differs: its line and what is wrong.
pub fn film_checks(rows: &[(u64, RunRow)], manifest: &Manifest) -> Result<(), (u64, String)> {
    let mut first: HashMap<String, (u64, &RunRow)> = HashMap::new();
    for (line, row) in rows {
        let Some(study) = manifest.study.iter().find(|s| s.name == row.study) else {
            continue;
        };
        let (first_line, earlier) = *first.entry(film_group(row)).or_insert((*line, row));
        if study.film_check.starts_with(IDENTICAL) && earlier.film_hash != row.film_hash {
            return Err((
                *line,
                format!(
                    "`{}` differs from `{}` on line {first_line}, a run that renders the same image, \
                     but the manifest's film check of study `{}` says `{}`",
                    row.film_hash, earlier.film_hash, study.name, study.film_check
                ),
            ));
        }
    }
    Ok(())
}

/// A time as the runner writes one: UTC, RFC 3339, to the second.
const TIMESTAMP_EXAMPLE: &str = "2026-11-29T02:22:06Z";

/// `stamp` read as a time the runner writes ([`TIMESTAMP_EXAMPLE`]: of its
/// length, and as it would write the time it reads as); what is wrong
/// otherwise. A manifest's times are to the second.
pub(super) fn timestamp(stamp: &str) -> Result<SystemTime, String> {
    let time = (stamp.len() == TIMESTAMP_EXAMPLE.len())
        .then(|| humantime::parse_rfc3339(stamp).ok())
        .flatten()
        .filter(|t| humantime::format_rfc3339_seconds(*t).to_string() == stamp);
    time.ok_or_else(|| {
        format!(
            "`{}` is not a time as the runner writes one (UTC to the second, e.g. `{TIMESTAMP_EXAMPLE}`)",
            shorten_for_error(stamp)
        )
    })
}

/// A span of the manifest, `started` to `finished`: both times the runner
/// writes ([`timestamp`]), `finished` empty while running (or where the
/// run was killed), and not before `started`. The first key at fault and
/// what is wrong.
fn span(started: &str, finished: &str) -> Result<(), (&'static str, String)> {
    let from = timestamp(started).map_err(|problem| ("started", problem))?;
    if finished.is_empty() {
        return Ok(());
    }
    let to = timestamp(finished).map_err(|problem| ("finished", problem))?;
    if to < from {
        return Err(("finished", format!("`{finished}` is before the start, `{started}`")));
    }
    Ok(())
}

/// The statuses the runner gives a study, whole ([`STATUSES`]) or
/// followed by the reason ([`STATUS_PREFIXES`]).
const STATUSES: [&str; 3] = [RUNNING, "complete", "complete, with skipped runs"];

/// The status of a study in the manifest written before the first sample
/// (which a killed run leaves): its rows are not counted yet.
const RUNNING: &str = "running";

/// The beginnings of the statuses the runner gives a study that did not
/// complete; the reason follows.
const STATUS_PREFIXES: [&str; 4] = ["failed: ", "not finished: ", "skipped: ", INTERRUPTED];

/// A manifest field out of range.
struct Misfit {
    /// Its path in the manifest.
    path: Vec<PathStep>,
    /// Its name in messages.
    field: String,
    /// What is wrong.
    problem: String,
}

/// Checks the fields of `manifest` (read from `text`, the file at `path`)
/// that a report prints or relies on against what the runner writes; the
/// error names the file, the line and the field.
pub fn check_manifest(path: &Path, text: &str, manifest: &Manifest) -> anyhow::Result<()> {
    manifest_fields(manifest).map_err(|m| refusal(path, text, m))
}

/// Checks what `manifest` (read from `text`, the file at `path`) says of
/// `rows`, the rows of the runs file at `runs`: each study's count of
/// rows, and the MPI ranks that made them ([`ranks`]). The error names
/// the file, the line and the field.
pub fn check_manifest_rows(
    path: &Path,
    text: &str,
    manifest: &Manifest,
    runs: &Path,
    rows: &[RunRow],
) -> anyhow::Result<()> {
    let runs = runs
        .file_name()
        .map_or(runs.display().to_string(), |n| n.to_string_lossy().into_owned());
    study_rows(manifest, rows, &runs)
        .and_then(|()| ranks(manifest, rows, &runs))
        .map_err(|m| refusal(path, text, m))
}

/// The error for `m`, a field of the manifest `text` at `path`.
fn refusal(path: &Path, text: &str, m: Misfit) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: line {}, {}: {}; this is not a manifest `wavepath experiment` wrote",
        path.display(),
        line_of(text, &m.path),
        m.field,
        m.problem
    )
}

/// Each study's `rows`: the study's rows in `rows` (of the file `runs`),
/// or 0 while its status is `running` (the manifest written before the
/// first sample, which a killed run leaves).
fn study_rows(m: &Manifest, rows: &[RunRow], runs: &str) -> Result<(), Misfit> {
    for (i, s) in m.study.iter().enumerate() {
        let held = rows.iter().filter(|r| r.study == s.name).count();
        let running = s.status == RUNNING;
        if s.rows != if running { 0 } else { held } {
            let why = if running {
                format!("a study still `{RUNNING}` has counted none yet")
            } else {
                format!("{runs} holds {held} rows of the study")
            };
            return Err(Misfit {
                path: vec![key("study"), PathStep::Index(i), key("rows")],
                field: format!("study `{}`, field `rows`", s.name),
                problem: format!("{}, but {why}", s.rows),
            });
        }
    }
    Ok(())
}

/// The `[[rank]]` entries: one per MPI rank that made rows of `rows` (of
/// the file `runs`), each once, with its host and its count of rows,
/// where two or more ranks made them; none otherwise.
fn ranks(m: &Manifest, rows: &[RunRow], runs: &str) -> Result<(), Misfit> {
    use PathStep::Index;
    let made = loads(rows, |r| r.rank.map(|k| (k, r.host.as_str())));
    let at = |path: Vec<PathStep>, field: String, problem: String| Err(Misfit { path, field, problem });
    if made.len() < 2 {
        if m.rank.is_empty() {
            return Ok(());
        }
        let problem = format!(
            "lists {} ranks, but {} made the rows of {runs} (the runner lists the ranks only where two or more did)",
            m.rank.len(),
            match made.as_slice() {
                [one] => format!("rank {} alone", one.number),
                _ => "no MPI rank".into(),
            }
        );
        return at(vec![key("rank")], "field `rank`".into(), problem);
    }
    for (i, r) in m.rank.iter().enumerate() {
        let field = |name: &'static str| {
            (
                vec![key("rank"), Index(i), key(name)],
                format!("field `rank[{i}].{name}`"),
            )
        };
        if let Some(j) = m.rank[..i].iter().position(|e| e.rank == r.rank) {
            let (path, name) = field("rank");
            return at(
                path,
                name,
                format!("rank {} is listed twice (also as rank[{j}])", r.rank),
            );
        }
        let Some(load) = made.iter().find(|l| l.number == r.rank) else {
            let (path, name) = field("rank");
            return at(path, name, format!("rank {} made no row of {runs}", r.rank));
        };
        if r.rows != load.rows {
            let (path, name) = field("rows");
            let problem = format!("{}, but rank {} made {} rows of {runs}", r.rows, r.rank, load.rows);
            return at(path, name, problem);
        }
        if r.host != load.name {
            let (path, name) = field("host");
            let problem = format!(
                "`{}`, but the rows of rank {} in {runs} ran on `{}`",
                shorten_for_error(&r.host),
                r.rank,
                shorten_for_error(&load.name)
            );
            return at(path, name, problem);
        }
    }
    match made.iter().find(|l| !m.rank.iter().any(|r| r.rank == l.number)) {
        Some(l) => at(
            vec![key("rank")],
            "field `rank`".into(),
            format!("lists no rank {}, which made {} rows of {runs}", l.number, l.rows),
        ),
        None => Ok(()),
    }
}

/// The first field of `m` out of range.
fn manifest_fields(m: &Manifest) -> Result<(), Misfit> {
    use PathStep::Index;
    let field = |path: Vec<PathStep>, name: String| {
        move |problem: String| Misfit {
            path,
            field: format!("field `{name}`"),
            problem,
        }
    };
    if let Some(d) = &m.device {
        measure(d.memory_gib, false, false).map_err(field(
            vec![key("device"), key("memory_gib")],
            "device.memory_gib".into(),
        ))?;
    }
    for (i, d) in m.devices.iter().enumerate() {
        measure(d.memory_gib, false, false).map_err(field(
            vec![key("devices"), Index(i), key("memory_gib")],
            format!("devices[{i}].memory_gib"),
        ))?;
        if let Some(j) = m.devices[..i].iter().position(|e| e.ordinal == d.ordinal) {
            return Err(field(
                vec![key("devices"), Index(i), key("ordinal")],
                format!("devices[{i}].ordinal"),
            )(format!(
                "{} is also the ordinal of devices[{j}] (the runner lists each GPU once)",
                d.ordinal
            )));
        }
    }
    if let Some(o) = &m.overhead {
        for (name, value) in [("median_fraction", o.median_fraction), ("max_fraction", o.max_fraction)] {
            measure(value, false, false)
                .map_err(field(vec![key("overhead"), key(name)], format!("overhead.{name}")))?;
        }
    }
    if let Some(v) = m.rank_imbalance {
        measure(v, false, false).map_err(field(vec![key("rank_imbalance")], "rank_imbalance".into()))?;
    }
    for (i, r) in m.rank.iter().enumerate() {
        measure(r.render_s, false, false).map_err(field(
            vec![key("rank"), Index(i), key("render_s")],
            format!("rank[{i}].render_s"),
        ))?;
    }
    for (i, s) in m.study.iter().enumerate() {
        study_fields(s, &m.study[..i]).map_err(|(mut path, name, problem)| {
            path.splice(0..0, [key("study"), Index(i)]);
            Misfit {
                path,
                field: format!("study `{}`, field `{name}`", s.name),
                problem,
            }
        })?;
    }
    times(m)?;
    for (i, k) in m.skipped.iter().enumerate() {
        if !m.study.iter().any(|s| s.name == k.study) {
            return Err(field(
                vec![key("skipped"), Index(i), key("study")],
                format!("skipped[{i}].study"),
            )(format!(
                "`{}` is not one of the manifest's studies",
                k.study
            )));
        }
    }
    Ok(())
}

/// The first of the experiment's times and each session's that is not a
/// [`span`] the runner writes.
fn times(m: &Manifest) -> Result<(), Misfit> {
    use PathStep::Index;
    let e = &m.experiment;
    let experiment = (
        vec![key("experiment")],
        "experiment".to_string(),
        &e.started,
        &e.finished,
    );
    let sessions = m.session.iter().enumerate().map(|(i, s)| {
        let path = vec![key("session"), Index(i)];
        (path, format!("session[{i}]"), &s.started, &s.finished)
    });
    for (path, name, started, finished) in std::iter::once(experiment).chain(sessions) {
        span(started, finished).map_err(|(field, problem)| Misfit {
            path: [path, vec![key(field)]].concat(),
            field: format!("field `{name}.{field}`"),
            problem,
        })?;
    }
    Ok(())
}

/// The first field of study `s` out of range (`earlier` are the studies
/// before it): its path within the study, its name and what is wrong.
fn study_fields(s: &ManifestStudy, earlier: &[ManifestStudy]) -> Result<(), (Vec<PathStep>, String, String)> {
    use PathStep::Index;
    let at = |path: Vec<PathStep>, name: String, problem: String| Err((path, name, problem));
    if earlier.iter().any(|e| e.name == s.name) {
        return at(
            vec![key("name")],
            "name".into(),
            "an earlier study has this name".into(),
        );
    }
    if s.backends.is_empty() {
        return at(
            vec![key("backends")],
            "backends".into(),
            "empty (expected the study's back ends)".into(),
        );
    }
    for (j, b) in s.backends.iter().enumerate() {
        if let Err(problem) = backend(b) {
            return at(vec![key("backends"), Index(j)], "backends".into(), problem);
        }
    }
    if let Some(b) = &s.baseline
        && !s.backends.contains(b)
    {
        let problem = format!("`{b}` is not one of the study's back ends ({})", s.backends.join(", "));
        return at(vec![key("baseline")], "baseline".into(), problem);
    }
    for (j, name) in s.swept.iter().enumerate() {
        if Param::named(name).is_none() {
            let problem = format!("`{name}` is not a setting a study can sweep");
            return at(vec![key("swept"), Index(j)], "swept".into(), problem);
        }
    }
    let status = s.status.as_str();
    if !STATUSES.contains(&status) && !STATUS_PREFIXES.iter().any(|p| status.starts_with(p)) {
        let problem = format!(
            "`{status}` is not a status `wavepath experiment` writes (expected {}, or one starting {})",
            STATUSES.map(|s| format!("`{s}`")).join(", "),
            STATUS_PREFIXES.map(|s| format!("`{s}`")).join(", ")
        );
        return at(vec![key("status")], "status".into(), problem);
    }
    if let Some(scaling) = &s.scaling
        && scaling != Scaling::Weak.name()
    {
        let problem = format!(
            "`{scaling}` is out of range (expected `{}`, or no field for strong scaling)",
            Scaling::Weak.name()
        );
        return at(vec![key("scaling")], "scaling".into(), problem);
    }
    for (j, p) in s.published.iter().enumerate() {
        let field = |name: &'static str| {
            (
                vec![key("published"), Index(j), key(name)],
                format!("published[{j}].{name}"),
            )
        };
        if let Err(problem) = measure(p.value, true, false) {
            let (path, name) = field("value");
            return at(path, name, problem);
        }
        if !PUBLISHED_UNITS.contains(&p.unit.as_str()) {
            let (path, name) = field("unit");
            let problem = format!(
                "`{}` is not a unit (expected one of {})",
                p.unit,
                PUBLISHED_UNITS.join(", ")
            );
            return at(path, name, problem);
        }
        if !s.backends.iter().any(|b| b == p.backend.label()) {
            let (path, name) = field("backend");
            let problem = format!("`{}` is not one of the study's back ends", p.backend.label());
            return at(path, name, problem);
        }
    }
    Ok(())
}

/// The line in TOML `text` of the field at `path`, or of as much of the
/// path as `text` holds (1 where none of it).
fn line_of(text: &str, path: &[PathStep]) -> usize {
    let mut start = 0;
    if let Ok(root) = DeTable::parse(text) {
        let root = DeValue::Table(root.into_inner());
        let mut at = &root;
        for step in path {
            let next = match step {
                PathStep::Key(name) => at.get(name.as_str()),
                PathStep::Index(i) => at.get(*i),
            };
            let Some(next) = next else { break };
            start = next.span().start;
            at = next.get_ref();
        }
    }
    text[..start].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_found_on_its_line() {
        let text =
            "a = 1\n\n[[study]]\nname = \"x\"\n\n[[study]]\nname = \"y\"\nswept = [\n  \"spp\",\n  \"warp\",\n]\n";
        use PathStep::Index;
        assert_eq!(line_of(text, &[key("a")]), 1);
        assert_eq!(line_of(text, &[key("study"), Index(1), key("name")]), 7);
        assert_eq!(line_of(text, &[key("study"), Index(1), key("swept"), Index(1)]), 10);
        // As much of the path as is there.
        assert_eq!(line_of(text, &[key("study"), Index(1), key("status")]), 6);
        assert_eq!(line_of(text, &[key("none")]), 1);
    }

    #[test]
    fn a_split_as_the_runner_records_it_is_accepted_and_no_other() {
        use renderer::render::split::DeviceShare;
        use renderer::render::split::ShareTimes;
        use std::time::Duration;
        let share = |spp, ms| DeviceShare {
            spp,
            busy: Duration::from_millis(ms),
            times: Some(ShareTimes {
                setup: Duration::from_millis(20),
                idle: Duration::from_millis(300 - ms),
                ..ShareTimes::default()
            }),
            ..DeviceShare::default()
        };
        let mut row = RunRow {
            gpus: Some(2),
            spp: 64,
            ..RunRow::default()
        };
        let shares = [share(48, 300), share(16, 100)];
        lab::team::record_split(&mut row, &shares, Duration::from_millis(3));
        assert!(split(&row).is_ok());
        let mut without_merge = row.clone();
        without_merge.split_merge_ms = None;
        assert_eq!(split(&without_merge).unwrap_err().0, "split_merge_ms");
        let mut short = row.clone();
        short.split_idle_ms = "200.000".into();
        assert_eq!(split(&short).unwrap_err().0, "split_idle_ms");
        let mut older = row.clone();
        for column in [
            &mut older.split_setup_ms,
            &mut older.split_first_ms,
            &mut older.split_readback_ms,
            &mut older.split_idle_ms,
        ] {
            column.clear();
        }
        older.split_merge_ms = None;
        assert!(split(&older).is_ok(), "a row from before the breakdown");
        row.split_spp = "48 15".into();
        assert_eq!(split(&row).unwrap_err().0, "split_spp");
        row.gpus = Some(3);
        assert_eq!(split(&row).unwrap_err().0, "split_spp");
    }

    #[test]
    fn cells_read_as_a_configs_values() {
        assert_eq!(toml_value("64"), toml::Value::Integer(64));
        assert_eq!(toml_value("true"), toml::Value::Boolean(true));
        assert_eq!(toml_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(toml_value("8x8"), toml::Value::String("8x8".into()));
    }
}
