//! `wavepath report --summary RESULTS`: one page of headline figures from
//! every committed experiment folder under `RESULTS`, written to
//! `RESULTS/SUMMARY.md`.
//!
//! It opens with the answer (`report::answer`): per study that sets the
//! megakernel against the wavefront, the range and best case of the
//! wavefront's speedup, and their figure, `RESULTS/figures/answer.svg`.
//! Then three tables, each figure with its folder, study and commit, and a
//! fourth naming each folder's config, device, host CPU, command and
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
//! Where an experiment also ran spread over several GPUs or MPI ranks
//! (folders `NAME_gpusN`, `NAME_ranksN`), a section sets each spread's
//! wall time against the one-GPU run's (`report::scale_out`); those
//! folders stand in no other table.
//!
//! Each figure names the build it was measured with: the commit and the
//! fingerprint of the measured source (`system::fingerprint`) recorded in
//! its folder's manifest. The page and its figure are functions of the
//! results folder alone (no dates, nothing read from the checkout around
//! it), so a test can regenerate them and fail when they differ from the
//! committed files, and an edit of the renderer changes neither. Whether a
//! figure is still current for a checkout is asked on demand, by
//! `wavepath report --currency RESULTS` (`report::currency`). Every
//! folder's files are read as its report reads them (`report::input`).

use super::answer::{self, SceneSpeedup};
use super::builds::{self, RowBuild};
use super::input;
use super::markdown::{code, folder_link, report_link, text};
use super::peers::{self, Candidate, Peer, Standing};
use super::scale_out::{self, Entry, SpreadFolder};
use super::stats::{self, ConfigRows, StudyData};
use super::tables::{fmt_speedup, fmt_value, host_cpu, our_hardware, published_value, table_head, table_row};
use anyhow::Context;
use lab::config::SeedTime;
use lab::records::Manifest;
use renderer::backend::BackendKind;
use renderer::io::atomic_file::{self, Output};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The summary's file name inside the results folder.
pub const SUMMARY_FILE: &str = "SUMMARY.md";

/// One experiment folder, read.
struct Folder {
    /// Its name under the results folder.
    name: String,
    manifest: Manifest,
    configs: Vec<ConfigRows>,
    /// The builds its rows came from.
    builds: Vec<RowBuild>,
    /// For a folder named for a spread over GPUs or ranks, that spread
    /// (such a folder stands in the section "Over several GPUs" alone).
    spread: Option<SpreadFolder>,
    /// Its manifest's file.
    manifest_path: PathBuf,
}

/// The summary of a results folder: its Markdown and the answer's figure.
pub struct Summary {
    /// `SUMMARY.md`.
    pub markdown: String,
    /// The SVG of [`answer::FIGURE`], where some study compares the
    /// megakernel with the wavefront.
    pub figure: Option<String>,
}

/// Writes `results/SUMMARY.md` from every folder of `results` that holds a
/// `manifest.toml` and a `runs.csv`, and the answer's figure
/// (`results/figures/answer.svg`) where there is one; returns the
/// summary's path. Both are drawn, and checked against every file read,
/// before either is written.
pub fn write_summary(results: &Path) -> anyhow::Result<PathBuf> {
    let (folders, peers, inputs) = read_results(results)?;
    let summary = of_folders(&folders, &peers)?;
    let path = results.join(SUMMARY_FILE);
    let figure = results.join(answer::FIGURE);
    let mut outputs = vec![Output::new(&path, "the summary")];
    if summary.figure.is_some() {
        let dir = figure.parent().unwrap_or(results);
        std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the figure folder", dir.display()))?;
        outputs.push(Output::new(&figure, "the summary's figure"));
    }
    atomic_file::check_outputs(&outputs, &inputs)?;
    if let Some(svg) = &summary.figure {
        atomic_file::write(&figure, svg.as_bytes())?;
    }
    atomic_file::write(&path, summary.markdown.as_bytes())?;
    Ok(path)
}

/// The summary of `results`, as [`write_summary`] would write it.
pub fn summary(results: &Path) -> anyhow::Result<Summary> {
    let (folders, peers, _) = read_results(results)?;
    of_folders(&folders, &peers)
}

/// Every experiment folder of `results` ([`read_folders`]) and the outside
/// peers' figures ([`peers::read`]), with every file read.
fn read_results(results: &Path) -> anyhow::Result<(Vec<Folder>, Vec<Peer>, Vec<PathBuf>)> {
    let (folders, mut inputs) = read_folders(results)?;
    let peers = peers::read(results)?;
    inputs.push(results.join(peers::FILE));
    Ok((folders, peers, inputs))
}

/// The summary of the experiment folders read, with the outside peers.
fn of_folders(folders: &[Folder], peers: &[Peer]) -> anyhow::Result<Summary> {
    let one_gpu: Vec<&Folder> = folders.iter().filter(|f| f.spread.is_none()).collect();
    let pairs = mega_wave_pairs(&one_gpu);
    let comparisons: Vec<SceneSpeedup> = pairs.iter().map(Pair::comparison).collect();
    let standings = peers::standings(peers, &candidates(&one_gpu));
    let footer = "results/SUMMARY.md, \"The answer\" · wavepath report --summary results";
    Ok(Summary {
        markdown: markdown(folders, &one_gpu, &pairs, &comparisons, &standings)?,
        figure: answer::figure(&comparisons, &standings, footer)?,
    })
}

/// Every configuration of every folder, as a peer may stand beside it.
fn candidates<'f>(folders: &[&'f Folder]) -> Vec<Candidate<'f>> {
    folders
        .iter()
        .flat_map(|&f| {
            f.configs.iter().map(move |config| Candidate {
                config,
                study: f.source(&config.row.study),
                commit: f.commit(),
                measured: f.measured(),
            })
        })
        .collect()
}

/// The summary's Markdown of the experiment folders read, of which
/// `one_gpu` are those not spread over several GPUs or ranks.
fn markdown(
    folders: &[Folder],
    one_gpu: &[&Folder],
    pairs: &[Pair],
    comparisons: &[SceneSpeedup],
    standings: &[Standing],
) -> anyhow::Result<String> {
    let mut out = String::from(
        "# Results summary\n\n\
         Generated by `wavepath report --summary results` from the experiment folders below; \
         CI regenerates it and fails if it differs. Each folder's `report.md` has every \
         configuration, and its `manifest.toml` the config as run. Each figure names the build \
         it was measured with: its commit (a figure from rows of several builds, or of a dirty \
         build, says so) and the fingerprint of the renderer's measured source. Whether a figure \
         is still current for a checkout (its config, inputs and measured source as they were \
         when it ran) is what `wavepath report --currency results` tells.\n",
    );
    out += &answer::section(comparisons, standings);
    out += &seed_table(one_gpu);
    out += &mega_wave_table(pairs);
    out += &nee_table(one_gpu);
    out += &scale_out::section(&folders.iter().map(Folder::entry).collect::<Vec<_>>())?;
    out += &sources_table(folders);
    Ok(out)
}

/// The experiment folders of `results`: each folder holding a
/// `manifest.toml` and a `runs.csv` (whatever stands there), with its
/// name, sorted by name.
pub(super) fn experiment_folders(results: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let entries =
        std::fs::read_dir(results).with_context(|| format!("{}: cannot list the results folder", results.display()))?;
    let holds = |dir: &Path, name: &str| std::fs::symlink_metadata(dir.join(name)).is_ok();
    let mut dirs: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| (e.file_name().to_string_lossy().into_owned(), e.path())))
        .filter(|(_, p)| p.is_dir() && holds(p, "manifest.toml") && holds(p, "runs.csv"))
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Reads every experiment folder of `results` ([`experiment_folders`]);
/// returns them with every file read: their manifests and runs.
fn read_folders(results: &Path) -> anyhow::Result<(Vec<Folder>, Vec<PathBuf>)> {
    let mut inputs = Vec::new();
    let folders = experiment_folders(results)?
        .into_iter()
        .map(|(name, dir)| {
            let manifest_path = dir.join("manifest.toml");
            let (manifest, runs) = input::read_experiment(&manifest_path, &dir.join("runs.csv"))?;
            inputs.extend([dir.join("manifest.toml"), dir.join("runs.csv")]);
            Ok(Folder {
                spread: SpreadFolder::of_folder(&name, &runs),
                name,
                manifest_path,
                configs: stats::group_configs(&runs),
                builds: builds::of_rows(&runs),
                manifest,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((folders, inputs))
}

impl Folder {
    /// `folder/study`, linked to the folder's report.
    fn source(&self, study: &str) -> String {
        format!("[{} / {}]({})", code(&self.name), code(study), report_link(&self.name))
    }

    /// The commit cell.
    fn commit(&self) -> String {
        builds::list(&self.builds)
    }

    /// The measured-source cell: the fingerprint of the source its binary
    /// was built from, as its manifest records it.
    fn measured(&self) -> String {
        self.manifest
            .build
            .source
            .as_deref()
            .map_or_else(|| "not recorded".into(), code)
    }

    /// The device cell: the GPU and driver, or the CPU without one.
    fn device(&self) -> String {
        match &self.manifest.device {
            Some(d) => format!("{}, driver {}", text(&d.name), text(&d.driver)),
            None => text(&self.manifest.host.cpu),
        }
    }

    /// The command cell.
    fn command(&self) -> String {
        code(&self.manifest.experiment.command)
    }

    /// Whether a table above cites it: it has a published figure or a
    /// study against the megakernel, or it is a spread over GPUs or ranks.
    fn is_cited(&self) -> bool {
        self.spread.is_some()
            || self
                .manifest
                .study
                .iter()
                .any(|s| !s.published.is_empty() || s.baseline.as_deref() == Some(BackendKind::GpuMega.label()))
    }

    /// As the section "Over several GPUs" reads it.
    fn entry(&self) -> Entry<'_> {
        Entry {
            name: &self.name,
            manifest: &self.manifest,
            path: &self.manifest_path,
            spread: self.spread.as_ref(),
            measured: self.measured(),
            commit: self.commit(),
        }
    }
}

/// Where the figures above come from: per folder, its config, the build
/// (commit and measured source), device, host CPU, command and dates.
fn sources_table(folders: &[Folder]) -> String {
    let mut out = String::from(
        "
## Where each figure comes from

",
    );
    out += &table_head(&[
        "folder",
        "config",
        "commit",
        "measured source",
        "device",
        "host CPU",
        "command",
        "ran",
    ]);
    for f in folders.iter().filter(|f| f.is_cited()) {
        let e = &f.manifest.experiment;
        out += &table_row(&[
            folder_link(&f.name),
            code(&e.config),
            f.commit(),
            f.measured(),
            f.device(),
            host_cpu(&f.manifest),
            f.command(),
            text(&format!("{} to {}", e.started, e.finished)),
        ]);
    }
    out
}

/// Every published figure beside ours.
fn seed_table(folders: &[&Folder]) -> String {
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
        "commit",
        "measured source",
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
                    text(&p.source),
                    fmt_value(p.value, &p.unit),
                    text(&p.hardware),
                    p.time_label().to_string(),
                    ours.map_or("– (not matched to the seed's settings)".into(), |v| {
                        format!("{} ({})", fmt_value(v, &p.unit), text(&backend))
                    }),
                    ours_other.map_or("–".into(), |v| fmt_value(v, &p.unit)),
                    ours.map_or("–".into(), |v| format!("{:.2}", v / p.value)),
                    our_hardware(p.backend, &f.manifest),
                    f.source(&info.name),
                    f.commit(),
                    f.measured(),
                ]);
            }
        }
    }
    out
}

/// One scene of a study whose baseline is the megakernel: the fastest
/// measured configuration of each GPU back end.
struct Pair<'f> {
    folder: &'f Folder,
    study: &'f str,
    /// The scene's name.
    scene: String,
    /// The scene fields the study set for it (empty where none).
    overrides: String,
    mega: ConfigRows,
    wave: ConfigRows,
}

impl Pair<'_> {
    /// The scene, with the fields the study set.
    fn scene_cell(&self) -> String {
        match self.overrides.as_str() {
            "" => text(&self.scene),
            o => text(&format!("{} ({o})", self.scene)),
        }
    }

    /// The megakernel's time over the wavefront's.
    fn speedup(&self) -> f64 {
        self.mega.median_ms / self.wave.median_ms
    }

    /// As the answer takes it.
    fn comparison(&self) -> SceneSpeedup {
        SceneSpeedup {
            study: self.folder.source(self.study),
            label: format!("{} / {}", self.folder.name, self.study),
            scene: self.scene.clone(),
            overrides: self.overrides.clone(),
            speedup: self.speedup(),
            device: self.folder.device(),
            commit: self.folder.commit(),
            measured: self.folder.measured(),
        }
    }
}

/// Per study comparing the two GPU back ends and scene (as the study
/// varied its fields: only renders of the same scene compare), the fastest
/// measured megakernel and the fastest measured wavefront.
fn mega_wave_pairs<'f>(folders: &[&'f Folder]) -> Vec<Pair<'f>> {
    let mega = BackendKind::GpuMega.label();
    let wave = BackendKind::GpuWave.label();
    let mut pairs = Vec::new();
    for &f in folders {
        for info in &f.manifest.study {
            if info.baseline.as_deref() != Some(mega) {
                continue;
            }
            let study = StudyData::new(info, &f.configs, &[]);
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
                pairs.push(Pair {
                    folder: f,
                    study: &info.name,
                    scene: scene.to_string(),
                    overrides: overrides.to_string(),
                    mega: m.clone(),
                    wave: w.clone(),
                });
            }
        }
    }
    pairs
}

/// The table of every [`Pair`].
fn mega_wave_table(pairs: &[Pair]) -> String {
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
        "commit",
        "measured source",
    ]);
    for p in pairs {
        out += &table_row(&[
            p.scene_cell(),
            format!("{:.2}", p.mega.median_ms),
            code(&p.mega.row.config),
            format!("{:.2}", p.wave.median_ms),
            code(&p.wave.row.config),
            fmt_speedup(p.speedup()),
            p.folder.source(p.study),
            p.folder.commit(),
            p.folder.measured(),
        ]);
    }
    out
}

/// Per study with a reference image that runs next-event estimation off
/// and on: for each scene, back end and sampler, the relative MSE and time
/// of both at the largest spp they share, and NEE's gain at equal spp (the
/// ratio of the errors) and at equal time (the ratio of error times time,
/// as Monte Carlo error falls as one over the time spent).
fn nee_table(folders: &[&Folder]) -> String {
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
        "commit",
        "measured source",
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
                let runs = |nee: &str| -> Vec<&ConfigRows> {
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
                let at = |runs: &[&ConfigRows]| -> Option<(f64, f64)> {
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
                        text(scene),
                        text(backend),
                        text(sampler),
                        spp.to_string(),
                        format!("{e_off:.4e}"),
                        format!("{t_off:.2}"),
                        format!("{e_on:.4e}"),
                        format!("{t_on:.2}"),
                        fmt_speedup(e_off / e_on),
                        fmt_speedup(e_off * t_off / (e_on * t_on)),
                        f.source(&info.name),
                        f.commit(),
                        f.measured(),
                    ])
                );
            }
        }
    }
    out
}
