//! `wavepath report --summary RESULTS`: one page of headline figures from
//! every committed experiment folder under `RESULTS`, written to
//! `RESULTS/SUMMARY.md`.
//!
//! It holds three tables, each figure with its folder, study and commit,
//! and a fourth naming each folder's config, device, host CPU, command and
//! dates:
//! - every published figure beside ours at the seed's settings, in the
//!   seed's notion of time, with the other time beside it;
//! - per scene, the fastest measured megakernel against the fastest
//!   measured wavefront of every study that compares them (baseline
//!   `gpu-mega`);
//! - per study measured against a reference image with next-event
//!   estimation off and on, the error each reaches and what NEE gains at
//!   equal spp and at equal time.
//!
//! Each figure also says whether the config that produced it, every
//! scene, mesh and reference image its runs read, and the renderer's
//! measured source still read as they were run (their fingerprints in the
//! manifest against the files in the repository, `RESULTS/..`; for runs
//! from before manifests recorded the source, the fingerprint of their
//! commit's source in [`SOURCE_TABLE`]). The page is a function of
//! committed files alone (no dates), so a test can regenerate it and fail
//! when it differs from the committed file: a figure cannot outlive the
//! run or the code behind it unnoticed.

use super::input;
use super::stats::{self, Config, StudyData};
use super::tables::{fmt_speedup, fmt_value, our_hardware, published_value, table_head, table_row};
use crate::backend::BackendKind;
use crate::experiment::config::SeedTime;
use crate::experiment::records::{Manifest, RunRow};
use crate::io::atomic_file::{self, Output};
use crate::system::fingerprint::{fingerprint_bytes, source_fingerprint};
use anyhow::Context;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The summary's file name inside the results folder.
pub const SUMMARY_FILE: &str = "SUMMARY.md";

/// A table in the results folder, `"commit" = "fingerprint"`: the measured
/// source of each commit that ran a committed folder before manifests
/// recorded it (written by `scripts/source-fingerprints` from the
/// repository's history).
pub const SOURCE_TABLE: &str = "source_fingerprints.toml";

/// One experiment folder, read.
struct Folder {
    /// Its name under the results folder.
    name: String,
    manifest: Manifest,
    configs: Vec<Config>,
    /// The builds its rows came from, `commit` or `commit (dirty)`.
    builds: Vec<String>,
    /// Whether the config file it names still reads as it was run.
    current: Current,
}

/// Whether an experiment folder's inputs are still the ones that ran.
enum Current {
    /// The config file's text, and every input the manifest fingerprints,
    /// read as they did.
    Yes,
    /// The config was edited since the run.
    Edited,
    /// The config is not in the repository any more.
    Missing,
    /// An input (a scene, a mesh, a reference image) changed or went away.
    Input(String),
    /// The renderer's measured source changed since the run.
    Source,
    /// Config and inputs as run, but which source ran is not known.
    SourceUnknown,
}

/// What the summary knows of the measured source: the checkout's own
/// (`None` outside a checkout, where it cannot tell) and the table of
/// earlier commits' ([`SOURCE_TABLE`]).
struct Sources {
    now: Option<String>,
    by_commit: std::collections::BTreeMap<String, String>,
}

impl Sources {
    /// Reads them for results folder `results` in the checkout `root`.
    fn read(results: &Path, root: &Path) -> anyhow::Result<Self> {
        let table = results.join(SOURCE_TABLE);
        let by_commit = match std::fs::read_to_string(&table) {
            Ok(text) => {
                toml::from_str(&text).with_context(|| format!("{}: not a table of commits", table.display()))?
            }
            Err(_) => Default::default(),
        };
        Ok(Sources {
            now: source_fingerprint(root),
            by_commit,
        })
    }

    /// Whether the source that built `manifest`'s binary is the checkout's.
    fn compare(&self, manifest: &Manifest) -> Current {
        let Some(now) = &self.now else { return Current::Yes };
        let then = manifest
            .build
            .source
            .as_ref()
            .or_else(|| self.by_commit.get(&manifest.build.commit));
        match then {
            None => Current::SourceUnknown,
            Some(then) if then != now => Current::Source,
            Some(_) => Current::Yes,
        }
    }
}

impl Current {
    /// Compares the config the manifest names (relative to the repository
    /// root, the results folder's parent) with its fingerprint as run, then
    /// each input the manifest lists (manifests from before inputs were
    /// listed have none), then the measured source.
    fn of(manifest: &Manifest, root: &Path, sources: &Sources) -> Current {
        let read = |path: &str| std::fs::read(root.join(path)).ok();
        match read(&manifest.experiment.config) {
            None => return Current::Missing,
            Some(text) if fingerprint_bytes(&text) != manifest.experiment.config_hash => return Current::Edited,
            Some(_) => {}
        }
        for input in &manifest.input {
            match read(&input.path) {
                None => return Current::Input(format!("`{}` is gone", input.path)),
                Some(bytes) if fingerprint_bytes(&bytes) != input.fingerprint => {
                    return Current::Input(format!("`{}` has changed since", input.path));
                }
                Some(_) => {}
            }
        }
        sources.compare(manifest)
    }

    /// The table cell.
    fn cell(&self) -> String {
        match self {
            Current::Yes => "yes".into(),
            Current::Edited => "**no**: its config has changed since; re-run it".into(),
            Current::Missing => "**no**: its config is gone".into(),
            Current::Input(what) => format!("**no**: its input {what}; re-run it"),
            Current::Source => "**no**: the renderer's source has changed since; re-run it".into(),
            Current::SourceUnknown => "config and inputs yes; the source it ran is not recorded".into(),
        }
    }
}

/// Writes `results/SUMMARY.md` from every folder of `results` that holds a
/// `manifest.toml` and a `runs.csv`, and returns its path.
/// It must not be one of the files the summary reads.
pub fn write_summary(results: &Path) -> anyhow::Result<PathBuf> {
    let (folders, inputs) = read_folders(results)?;
    let path = results.join(SUMMARY_FILE);
    atomic_file::check_outputs(&[Output::new(&path, "the summary")], &inputs)?;
    atomic_file::write(&path, markdown(&folders).as_bytes())?;
    Ok(path)
}

/// The summary's Markdown.
pub fn summary(results: &Path) -> anyhow::Result<String> {
    Ok(markdown(&read_folders(results)?.0))
}

/// The summary's Markdown of the experiment folders read.
fn markdown(folders: &[Folder]) -> String {
    let mut out = String::from(
        "# Results summary\n\n\
         Generated by `wavepath report --summary results` from the experiment folders below; \
         CI regenerates it and fails if it differs. Each folder's `report.md` has every \
         configuration, and its `manifest.toml` the config as run. A figure from rows of \
         several builds, or of a dirty build, says so in its commit column; its \
         \"as run?\" column, whether its config, its inputs and the renderer's measured source \
         still read as they did when it ran.\n",
    );
    out += &seed_table(folders);
    out += &mega_wave_table(folders);
    out += &nee_table(folders);
    out += &sources_table(folders);
    out
}

/// Reads every experiment folder of `results`, sorted by name; returns
/// them with every file read: their manifests and runs, the files the
/// manifests name, and the table of earlier commits' sources.
fn read_folders(results: &Path) -> anyhow::Result<(Vec<Folder>, Vec<PathBuf>)> {
    let entries =
        std::fs::read_dir(results).with_context(|| format!("{}: cannot list the results folder", results.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("manifest.toml").is_file() && p.join("runs.csv").is_file())
        .collect();
    dirs.sort();
    let root = results.parent().unwrap_or(Path::new("."));
    let sources = Sources::read(results, root)?;
    let mut inputs = vec![results.join(SOURCE_TABLE)];
    let folders = dirs
        .iter()
        .map(|dir| {
            let manifest = input::read_manifest(&dir.join("manifest.toml"))?;
            let runs = input::read_runs(&dir.join("runs.csv"), &manifest)?;
            inputs.extend([dir.join("manifest.toml"), dir.join("runs.csv")]);
            inputs.extend(named_files(&manifest).map(|f| root.join(f)));
            Ok(Folder {
                name: dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                configs: stats::group_configs(&runs),
                builds: builds(&runs),
                current: Current::of(&manifest, root, &sources),
                manifest,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((folders, inputs))
}

/// The files `manifest` names, relative to the repository root: its config
/// and every input it fingerprints.
fn named_files(manifest: &Manifest) -> impl Iterator<Item = &str> {
    std::iter::once(manifest.experiment.config.as_str()).chain(manifest.input.iter().map(|i| i.path.as_str()))
}

/// The distinct builds of `runs`, in order.
fn builds(runs: &[RunRow]) -> Vec<String> {
    let mut builds: Vec<String> = Vec::new();
    for r in runs {
        let b = format!("`{}`{}", r.commit, if r.dirty { " (dirty)" } else { "" });
        if !builds.contains(&b) {
            builds.push(b);
        }
    }
    builds
}

impl Folder {
    /// `folder/study`, linked to the folder's report.
    fn source(&self, study: &str) -> String {
        format!("[`{}` / `{study}`]({}/report.md)", self.name, self.name)
    }

    /// The commit cell.
    fn commit(&self) -> String {
        self.builds.join(", ")
    }

    /// The device cell: the GPU and driver, or the CPU without one.
    fn device(&self) -> String {
        match &self.manifest.device {
            Some(d) => format!("{}, driver {}", d.name, d.driver),
            None => self.manifest.host.cpu.clone(),
        }
    }

    /// The command cell.
    fn command(&self) -> String {
        format!("`{}`", self.manifest.experiment.command)
    }

    /// Whether a table above cites it: it has a published figure or a
    /// study against the megakernel.
    fn is_cited(&self) -> bool {
        self.manifest
            .study
            .iter()
            .any(|s| !s.published.is_empty() || s.baseline.as_deref() == Some(BackendKind::GpuMega.label()))
    }
}

/// Where the figures above come from: per folder, its config and whether
/// it still reads as run, the build, device, host CPU, command and dates.
fn sources_table(folders: &[Folder]) -> String {
    let mut out = String::from(
        "
## Where each figure comes from

",
    );
    out += &table_head(&[
        "folder", "config", "as run?", "commit", "device", "host CPU", "command", "ran",
    ]);
    for f in folders.iter().filter(|f| f.is_cited()) {
        let e = &f.manifest.experiment;
        let cpu = match f.manifest.host.cpu_threads {
            0 => f.manifest.host.cpu.clone(),
            t => format!("{} ({t} threads)", f.manifest.host.cpu),
        };
        out += &table_row(&[
            format!("[`{}`]({}/report.md)", f.name, f.name),
            format!("`{}`", e.config),
            f.current.cell(),
            f.commit(),
            f.device(),
            cpu,
            f.command(),
            format!("{} to {}", e.started, e.finished),
        ]);
    }
    out
}

/// Every published figure beside ours.
fn seed_table(folders: &[Folder]) -> String {
    let mut out = String::from(
        "\n## The seeds against wavepath\n\n\
         Ours is the run the entry names: the seed's settings, measured (never scaled from \
         fewer spp), over a measured baseline, in the seed's notion of time (`wall`: the \
         render loop; `total`: the whole render call, with allocation, upload and readback). \
         An entry from before runs were matched to the seed's settings has no value here.\n\n",
    );
    out += &table_head(&[
        "seed",
        "their figure",
        "their hardware",
        "their time",
        "ours",
        "ours, other time",
        "ours ÷ theirs",
        "our hardware",
        "study",
        "as run?",
        "commit",
    ]);
    for f in folders {
        for info in &f.manifest.study {
            let study = StudyData::new(info, &f.configs, &[]);
            for p in &info.published {
                let time = p.time.unwrap_or(SeedTime::Wall);
                let other = time.other();
                let ours = published_value(&study, p, time);
                let ours_other = published_value(&study, p, other);
                let backend = p.backend_label();
                out += &table_row(&[
                    p.source.clone(),
                    fmt_value(p.value, &p.unit),
                    p.hardware.clone(),
                    p.time_label().to_string(),
                    ours.map_or("– (not matched to the seed's settings)".into(), |v| {
                        format!("{} ({backend})", fmt_value(v, &p.unit))
                    }),
                    ours_other.map_or("–".into(), |v| fmt_value(v, &p.unit)),
                    ours.map_or("–".into(), |v| format!("{:.2}", v / p.value)),
                    our_hardware(p.backend, &f.manifest),
                    f.source(&info.name),
                    f.current.cell(),
                    f.commit(),
                ]);
            }
        }
    }
    out
}

/// Per study comparing the two GPU back ends and scene: the fastest
/// measured megakernel against the fastest measured wavefront.
fn mega_wave_table(folders: &[Folder]) -> String {
    let mut out = String::from(
        "\n## Megakernel against wavefront\n\n\
         Per study whose baseline is the megakernel: for each scene (as the study varied its \
         fields), the fastest measured \
         configuration of each back end over the study's sweep (render-loop time), and the \
         wavefront's speedup over the megakernel (above 1: the wavefront wins).\n\n",
    );
    out += &table_head(&[
        "scene",
        "megakernel ms",
        "its run",
        "wavefront ms",
        "its run",
        "wavefront ÷ megakernel",
        "study",
        "as run?",
        "commit",
    ]);
    let mega = BackendKind::GpuMega.label();
    let wave = BackendKind::GpuWave.label();
    for f in folders {
        for info in &f.manifest.study {
            if info.baseline.as_deref() != Some(mega) {
                continue;
            }
            let study = StudyData::new(info, &f.configs, &[]);
            // Each scene as the study varied it (its scene fields swept):
            // only renders of the same scene compare.
            let mut scenes: Vec<(&str, &str)> = Vec::new();
            for c in &study.configs {
                let scene = (c.row.scene_name.as_str(), c.row.scene_overrides.as_str());
                if !scenes.contains(&scene) {
                    scenes.push(scene);
                }
            }
            for (scene, overrides) in scenes {
                let fastest = |backend: &str| {
                    study
                        .configs
                        .iter()
                        .filter(|c| {
                            c.row.backend == backend
                                && c.row.scene_name == scene
                                && c.row.scene_overrides == overrides
                                && c.is_measured()
                        })
                        .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
                };
                let (Some(m), Some(w)) = (fastest(mega), fastest(wave)) else {
                    continue;
                };
                let scene = match overrides {
                    "" => scene.to_string(),
                    o => format!("{scene} ({o})"),
                };
                let _ = write!(
                    out,
                    "{}",
                    table_row(&[
                        scene,
                        format!("{:.2}", m.median_ms),
                        format!("`{}`", m.row.config),
                        format!("{:.2}", w.median_ms),
                        format!("`{}`", w.row.config),
                        fmt_speedup(m.median_ms / w.median_ms),
                        f.source(&info.name),
                        f.current.cell(),
                        f.commit(),
                    ])
                );
            }
        }
    }
    out
}

/// Per study with a reference image that runs next-event estimation off
/// and on: for each scene, back end and sampler, the relative MSE and time
/// of both at the largest spp they share, and NEE's gain at equal spp (the
/// ratio of the errors) and at equal time (the ratio of error times time,
/// as Monte Carlo error falls as one over the time spent).
fn nee_table(folders: &[Folder]) -> String {
    let mut out = String::from(
        "\n## Next-event estimation against scattering alone\n\n\
         Per study measured against a reference image: for each scene, back end and sampler, \
         the relative MSE and the render-loop time with next-event estimation off and on at \
         the largest spp both ran, and what it gains (above 1: NEE wins) at equal spp \
         (error off ÷ error on) and at equal time (error × time off ÷ error × time on, as \
         Monte Carlo error falls as one over the time spent).\n\n",
    );
    out += &table_head(&[
        "scene",
        "back end",
        "sampler",
        "spp",
        "relMSE off",
        "ms off",
        "relMSE on",
        "ms on",
        "gain, equal spp",
        "gain, equal time",
        "study",
        "as run?",
        "commit",
    ]);
    for f in folders {
        for info in &f.manifest.study {
            if info.reference.is_none() {
                continue;
            }
            let study = StudyData::new(info, &f.configs, &[]);
            let mut keys: Vec<(&str, &str, &str)> = study
                .configs
                .iter()
                .map(|c| {
                    (
                        c.row.scene_name.as_str(),
                        c.row.backend.as_str(),
                        c.row.sampler.as_str(),
                    )
                })
                .collect();
            keys.sort();
            keys.dedup();
            for (scene, backend, sampler) in keys {
                let runs = |nee: &str| -> Vec<&Config> {
                    study
                        .configs
                        .iter()
                        .filter(|c| {
                            let r = &c.row;
                            r.scene_name == scene
                                && r.backend == backend
                                && r.sampler == sampler
                                && r.nee == nee
                                && r.rel_mse.is_some()
                                && c.is_measured()
                        })
                        .collect()
                };
                let (off, on) = (runs("off"), runs("on"));
                let Some(spp) = off
                    .iter()
                    .map(|c| c.row.spp)
                    .filter(|s| on.iter().any(|c| c.row.spp == *s))
                    .max()
                else {
                    continue;
                };
                let at = |runs: &[&Config]| -> Option<(f64, f64)> {
                    let c = runs.iter().find(|c| c.row.spp == spp)?;
                    Some((c.row.rel_mse?, c.median_ms))
                };
                let (Some((e_off, t_off)), Some((e_on, t_on))) = (at(&off), at(&on)) else {
                    continue;
                };
                let _ = write!(
                    out,
                    "{}",
                    table_row(&[
                        scene.to_string(),
                        backend.to_string(),
                        sampler.to_string(),
                        spp.to_string(),
                        format!("{e_off:.4e}"),
                        format!("{t_off:.2}"),
                        format!("{e_on:.4e}"),
                        format!("{t_on:.2}"),
                        fmt_speedup(e_off / e_on),
                        fmt_speedup(e_off * t_off / (e_on * t_on)),
                        f.source(&info.name),
                        f.current.cell(),
                        f.commit(),
                    ])
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::records::ManifestBuild;

    fn manifest(commit: &str, source: Option<&str>) -> Manifest {
        Manifest {
            build: ManifestBuild {
                commit: commit.into(),
                source: source.map(String::from),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_run_is_current_only_while_the_checkout_holds_the_source_it_ran() {
        let sources = Sources {
            now: Some("aaaa".into()),
            by_commit: [
                ("old".to_string(), "bbbb".to_string()),
                ("same".to_string(), "aaaa".to_string()),
            ]
            .into(),
        };
        let cell = |m: &Manifest| sources.compare(m).cell();
        // Recorded in the manifest.
        assert_eq!(cell(&manifest("x", Some("aaaa"))), "yes");
        assert!(cell(&manifest("x", Some("cccc"))).contains("source has changed since"));
        // From the table, for manifests that do not record it.
        assert_eq!(cell(&manifest("same", None)), "yes");
        assert!(cell(&manifest("old", None)).contains("source has changed since"));
        assert!(cell(&manifest("unlisted", None)).contains("not recorded"));
        // Outside a checkout nothing can be told.
        let outside = Sources {
            now: None,
            by_commit: Default::default(),
        };
        assert_eq!(outside.compare(&manifest("x", Some("cccc"))).cell(), "yes");
    }
}
