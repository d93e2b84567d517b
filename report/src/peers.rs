//! The baseline's own standing: the fastest public hand-written CUDA path
//! tracers' times (`RESULTS/reference/peers/peers.csv`, measured in the
//! GPU call of the study that holds wavepath's like-for-like runs), each
//! set beside the megakernel's fastest configuration of the same workload
//! under the exact arithmetic, for the summary's answer and its figure. A
//! reader of the answer sees there whether the megakernel it is measured
//! against is a fair one.
//!
//! The same workload is the same scene, size and spp, and paths that end
//! alike, as the rows record them: the peer's depth (a peer without a
//! depth limit beside the deepest runs of its workload), and, where a
//! study set the first bounce of Russian roulette, the peer's bounce (a
//! run at its scene's own rule follows the scene that the peer's record
//! names as its workload's). Nothing is read from the checkout: the
//! standing is a function of the results folder alone, as the summary is.

use super::markdown::{code, text};
use super::stats::{ConfigRows, scene_override};
use super::tables::{table_head, table_row};
use super::written;
use anyhow::{Context, bail};
use lab::records::RunRow;
use renderer::backend::BackendKind;
use renderer::settings::arithmetic::Arithmetic;
use serde::Deserialize;
use std::path::Path;

/// The peers' file inside the results folder.
pub const FILE: &str = "reference/peers/peers.csv";

/// One row of [`FILE`]: a peer's median time on one workload.
#[derive(Debug, Clone, Deserialize)]
pub struct Peer {
    /// The program's short name (its repository is in the folder's README).
    pub program: String,
    /// The kind of workload, as the README names it.
    pub workload: String,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Samples per pixel.
    pub spp: u32,
    /// Maximum path depth (0: none; smallpt's paths end by roulette
    /// alone, so the deepest runs of the workload stand beside it).
    pub depth: u32,
    /// The bounce from which the peer plays Russian roulette (0: never).
    pub roulette: u32,
    /// The median render time, milliseconds.
    pub render_ms: f64,
    /// Samples per second at that time.
    pub samples_per_s: f64,
    /// wavepath's scene for the same workload (a scene file's stem): the
    /// megakernel's rows of that scene at the same size, spp, depth and
    /// roulette compare.
    pub scene: String,
}

/// The scene field of the first bounce of Russian roulette, which a study
/// sets with [`lab::params::ROULETTE`] and a row's
/// `scene_overrides` then names.
const ROULETTE_FIELD: &str = "render.roulette_start";

/// Whether `row` plays Russian roulette as `peer` does: from the peer's
/// bounce where its study set the field (which must read as a bounce),
/// and otherwise at its scene's own rule, the rule of the scene the peer's
/// record names.
fn roulette_alike(row: &RunRow, peer: &Peer) -> bool {
    scene_override(&row.scene_overrides, ROULETTE_FIELD).is_none_or(|set| set.parse() == Ok(peer.roulette))
}

/// Reads [`FILE`] under `results`; no file means no peers. Every row must
/// name its fields and give a render's time (`written::time_ms`) and a
/// non-empty scene; errors name the file and the line.
pub fn read(results: &Path) -> anyhow::Result<Vec<Peer>> {
    let path = results.join(FILE);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let text = renderer::io::input_file::read_text(&path, lab::records::MAX_RECORDS_BYTES)
        .map_err(|reason| anyhow::anyhow!("{}: cannot read the peers' figures: {reason}", path.display()))?;
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut peers = Vec::new();
    for (i, row) in reader.deserialize::<Peer>().enumerate() {
        let line = i + 2;
        let peer = row.with_context(|| {
            format!(
                "{}: line {line}: expected program, workload, width, height, spp, depth, roulette, render_ms, \
                 samples_per_s and scene",
                path.display()
            )
        })?;
        if let Err(problem) = written::time_ms(peer.render_ms, true, false) {
            bail!("{}: line {line}, column `render_ms`: {problem}", path.display());
        }
        if peer.scene.trim().is_empty() || peer.width == 0 || peer.height == 0 || peer.spp == 0 {
            bail!(
                "{}: line {line}: a peer needs a scene and a size and spp above 0",
                path.display()
            );
        }
        peers.push(peer);
    }
    Ok(peers)
}

/// A configuration a peer may stand beside, with how the summary cites it.
pub struct Candidate<'c> {
    /// The configuration (its median time and its first row's settings).
    pub config: &'c ConfigRows,
    /// The study, as the summary cites it.
    pub study: String,
    /// The folder's commit cell.
    pub commit: String,
    /// The measured-source cell of its folder.
    pub measured: String,
}

/// A peer beside the megakernel's fastest exact configuration of its
/// workload.
pub struct Standing {
    /// The peer.
    pub peer: Peer,
    /// The megakernel's median time, milliseconds.
    pub mega_ms: f64,
    /// The megakernel's configuration, as its report names it.
    pub mega_run: String,
    /// The study that measured it, cited.
    pub study: String,
    /// Its commit cell.
    pub commit: String,
    /// The measured-source cell of its folder.
    pub measured: String,
}

impl Standing {
    /// The peer's time over the megakernel's: above 1, the megakernel is
    /// faster.
    pub fn ratio(&self) -> f64 {
        self.peer.render_ms / self.mega_ms
    }

    /// The workload as the figure and the table label it.
    pub fn label(&self) -> String {
        format!(
            "{}: {} {}x{} {} spp",
            self.peer.program, self.peer.workload, self.peer.width, self.peer.height, self.peer.spp
        )
    }
}

/// Each peer beside the fastest of `candidates` that renders its workload
/// on the megakernel under the exact arithmetic (same scene, size and
/// spp, and paths that end alike: the peer's depth, or the deepest of the
/// workload's runs for a peer without a limit, and `roulette_alike`); a
/// peer with none is left out.
pub fn standings(peers: &[Peer], candidates: &[Candidate]) -> Vec<Standing> {
    let mega = BackendKind::GpuMega.label();
    let exact = Arithmetic::Exact.name();
    peers
        .iter()
        .filter_map(|peer| {
            let workload: Vec<&Candidate> = candidates
                .iter()
                .filter(|c| {
                    let r = &c.config.row;
                    r.backend == mega
                        && r.scene_name == peer.scene
                        && (r.width, r.height, r.spp) == (peer.width, peer.height, peer.spp)
                        && roulette_alike(r, peer)
                        && r.arithmetic.as_deref().is_none_or(|a| a == exact)
                        && c.config.is_measured()
                })
                .collect();
            let depth = match peer.depth {
                0 => workload.iter().map(|c| c.config.row.max_depth).max()?,
                limit => limit,
            };
            let best = workload
                .into_iter()
                .filter(|c| c.config.row.max_depth == depth)
                .min_by(|a, b| a.config.median_ms.total_cmp(&b.config.median_ms))?;
            Some(Standing {
                peer: peer.clone(),
                mega_ms: best.config.median_ms,
                mega_run: best.config.row.config.clone(),
                study: best.study.clone(),
                commit: best.commit.clone(),
                measured: best.measured.clone(),
            })
        })
        .collect()
}

/// The answer's paragraph and table of `standings` (empty where none).
pub fn section(standings: &[Standing]) -> String {
    if standings.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nThe baseline, beside the fastest public hand-written CUDA path tracers on the same kind \
         of workload ([the peers](reference/peers/README.md), measured in the same GPU call as the \
         study): the peer's time over the megakernel's fastest configuration under the exact \
         arithmetic, whose image is the CPU's bit for bit (above 1: the megakernel is faster).\n\n",
    );
    out += &table_head(&[
        "peer and workload",
        "peer ms",
        "megakernel ms",
        "its run",
        "peer ÷ megakernel",
        "study",
        "commit",
        "measured source",
    ]);
    for s in standings {
        out += &table_row(&[
            text(&s.label()),
            format!("{:.2}", s.peer.render_ms),
            format!("{:.2}", s.mega_ms),
            code(&s.mega_run),
            format!("{:.2}x", s.ratio()),
            s.study.clone(),
            s.commit.clone(),
            s.measured.clone(),
        ]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::group_configs;

    const HEADER: &str = "program,workload,width,height,spp,depth,roulette,render_ms,samples_per_s,scene\n";

    /// A results folder holding `csv` as the peers' file.
    fn results_with(csv: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, csv).unwrap();
        dir
    }

    /// A megakernel or wavefront row of `scene` at 64x64, `spp` and depth 8.
    fn row(run: u32, backend: &str, scene: &str, spp: u32, arithmetic: Option<&str>, ms: f64) -> RunRow {
        RunRow {
            study: "s".into(),
            run,
            config: format!("{backend}, run {run}"),
            scene: format!("scenes/{scene}.toml"),
            scene_name: scene.into(),
            max_depth: 8,
            backend: backend.into(),
            width: 64,
            height: 64,
            spp,
            report_spp: spp,
            arithmetic: arithmetic.map(str::to_string),
            scaled_wall_ms: ms,
            rays: 1000,
            ..RunRow::default()
        }
    }

    #[test]
    fn no_file_means_no_peers_and_a_bad_row_is_named_by_its_line() {
        let empty = tempfile::tempdir().unwrap();
        assert!(read(empty.path()).unwrap().is_empty());
        let good = results_with(&format!("{HEADER}p,w,64,64,4,8,0,2.5,6.5e6,box\n"));
        let peers = read(good.path()).unwrap();
        assert_eq!(
            (peers.len(), peers[0].render_ms, peers[0].scene.as_str()),
            (1, 2.5, "box")
        );
        for (bad, says) in [
            ("p,w,64,64,4,8,0,fast,6.5e6,box\n", "line 3: expected program"),
            (
                "p,w,64,64,4,8,0,0,6.5e6,box\n",
                "line 3, column `render_ms`: 0 is out of range (expected a time from 1e-6 to 1e9 ms)",
            ),
            ("p,w,64,64,4,8,0,-1,6.5e6,box\n", "line 3, column `render_ms`"),
            (
                "p,w,64,64,4,8,0,5e-324,6.5e6,box\n",
                "line 3, column `render_ms`: 5e-324 is out of range",
            ),
            (
                "p,w,64,64,4,8,0,2e9,6.5e6,box\n",
                "line 3, column `render_ms`: 2000000000 is out of range",
            ),
            ("p,w,64,64,4,8,0,2,6.5e6,\n", "line 3: a peer needs a scene"),
            (
                "p,w,0,64,4,8,0,2,6.5e6,box\n",
                "line 3: a peer needs a scene and a size",
            ),
        ] {
            let dir = results_with(&format!("{HEADER}p,w,64,64,4,8,0,2.5,6.5e6,box\n{bad}"));
            let err = format!("{:#}", read(dir.path()).unwrap_err());
            assert!(err.contains(FILE) && err.contains(says), "{bad}: {err}");
        }
    }

    /// Every configuration of `configs` as a candidate.
    fn candidates(configs: &[ConfigRows]) -> Vec<Candidate<'_>> {
        configs
            .iter()
            .map(|config| Candidate {
                config,
                study: "the study".into(),
                commit: "`abc`".into(),
                measured: "`0123456789abcdef`".into(),
            })
            .collect()
    }

    /// A peer of `scene` at 64x64, `spp`, `depth` and `roulette`, 6 ms.
    fn peer(scene: &str, spp: u32, depth: u32, roulette: u32) -> Peer {
        Peer {
            program: "p".into(),
            workload: "w".into(),
            width: 64,
            height: 64,
            spp,
            depth,
            roulette,
            render_ms: 6.0,
            samples_per_s: 1.0,
            scene: scene.into(),
        }
    }

    #[test]
    fn a_peer_stands_beside_the_fastest_exact_megakernel_of_its_workload() {
        let rows = [
            row(1, "gpu-mega", "box", 4, None, 4.0),
            row(2, "gpu-mega", "box", 4, Some("exact"), 3.0),
            // Faster, but not the peer's workload or not exact: left out.
            row(3, "gpu-mega", "box", 4, Some("fast"), 1.0),
            row(4, "gpu-wave", "box", 4, None, 1.0),
            row(5, "gpu-mega", "box", 8, None, 1.0),
            row(6, "gpu-mega", "other", 4, None, 1.0),
            RunRow {
                max_depth: 1,
                ..row(7, "gpu-mega", "box", 4, None, 1.0)
            },
            RunRow {
                scene_overrides: "accel.bvh_max_leaf=1;render.roulette_start=5".into(),
                ..row(8, "gpu-mega", "box", 4, None, 1.5)
            },
        ];
        let configs = group_configs(&rows);
        let candidates = candidates(&configs);
        let standings = standings(&[peer("box", 4, 8, 0), peer("nowhere", 4, 8, 0)], &candidates);
        assert_eq!(standings.len(), 1, "a peer with no megakernel run is left out");
        let s = &standings[0];
        assert_eq!(
            (s.mega_ms, s.mega_run.as_str(), s.ratio()),
            (3.0, "gpu-mega, run 2", 2.0)
        );
        let table = section(&standings);
        assert!(
            table.contains("| p: w 64x64 4 spp | 6.00 | 3.00 | `gpu-mega, run 2` | 2.00x | the study | `abc` | `0123456789abcdef` |"),
            "{table}"
        );
        assert!(section(&[]).is_empty());
        // A peer of depth 50 stands beside no run of depth 8 or 1.
        assert!(standings_of(&[peer("box", 4, 50, 0)], &candidates).is_empty());
        // No depth limit (0): the deepest runs of the workload, at 8.
        assert_eq!(standings_of(&[peer("box", 4, 0, 0)], &candidates), ["gpu-mega, run 2"]);
        // A peer of depth 1 beside the run at depth 1.
        assert_eq!(standings_of(&[peer("box", 4, 1, 0)], &candidates), ["gpu-mega, run 7"]);
        // Roulette from bounce 5: the run whose study set it.
        assert_eq!(standings_of(&[peer("box", 4, 8, 5)], &candidates), ["gpu-mega, run 8"]);
    }

    /// The runs `peers` stand beside among `candidates`.
    fn standings_of(peers: &[Peer], candidates: &[Candidate]) -> Vec<String> {
        standings(peers, candidates).into_iter().map(|s| s.mega_run).collect()
    }
}
