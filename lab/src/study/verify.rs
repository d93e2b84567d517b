//! The checks before a study run times anything: every scene on both GPU
//! back ends against the CPU's image (`wavepath verify`), split over all
//! the host's GPUs too where a slot has several, and with MPI ranks, the
//! image of the most ranks against one process's. One line per check in
//! `verify.txt`.

use super::child;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The GPU back ends verified.
const GPU_BACKENDS: [&str; 2] = ["gpu-mega", "gpu-wave"];

/// What each check renders: a small image, quick on any GPU.
const VERIFY_ARGS: [&str; 4] = ["--spp", "8", "--size", "160x120"];

/// A check split over all the host's GPUs, each rendering a share.
const SPLIT_ALL: [&str; 3] = ["--devices", "all", "--split-all"];

/// The ranks' check's image: at a size every rank has samples of.
const RANKS_ARGS: [&str; 4] = ["--spp", "16", "--size", "160x120"];

/// The MPI check: the launcher, the MPI build, and the most ranks.
pub struct OverRanks<'a> {
    /// `LAUNCHER -n N BINARY ...`.
    pub launcher: &'a Path,
    /// The binary built with MPI.
    pub binary: &'a Path,
    /// How many ranks render the image.
    pub ranks: u32,
}

/// The checks of one slot.
pub struct Checks<'a> {
    /// The binary verified.
    pub binary: &'a Path,
    /// The folder of the scenes (every `*.toml` in it).
    pub scenes: &'a Path,
    /// Each scene split over all the host's GPUs as well.
    pub split_over_all: bool,
    /// The MPI check, with `--ranks`.
    pub ranks: Option<OverRanks<'a>>,
}

impl Checks<'_> {
    /// Runs every check, a line each in `verify_txt`, with `work` for the
    /// commands' output and images and `place` putting each command on the
    /// slot's GPU and CPUs; whether every image was identical.
    pub fn run(&self, verify_txt: &Path, work: &Path, place: &dyn Fn(&mut Command)) -> anyhow::Result<bool> {
        let scenes = scene_files(self.scenes)?;
        let mut lines = Vec::new();
        let output = work.join("check-output.txt");
        let mut identical = true;
        let mut splits: Vec<&[&str]> = vec![&[]];
        if self.split_over_all {
            splits.push(&SPLIT_ALL);
        }
        for backend in GPU_BACKENDS {
            for scene in &scenes {
                for split in &splits {
                    let mut cmd = Command::new(self.binary);
                    place(&mut cmd);
                    cmd.arg("verify")
                        .arg(scene)
                        .args(["--backend", backend])
                        .args(VERIFY_ARGS)
                        .args(*split);
                    std::fs::write(&output, "")?;
                    child::run_logged(&mut cmd, &output, None)?;
                    let last = last_line(&output);
                    identical &= last.contains("IDENTICAL");
                    let shown: String = split.iter().map(|a| format!(" {a}")).collect();
                    lines.push(format!("{} {backend}{shown}: {last}", scene.display()));
                }
            }
        }
        if let Some(over) = &self.ranks {
            for backend in GPU_BACKENDS {
                for scene in &scenes {
                    let line = self.ranks_check(over, scene, backend, work, &output, place)?;
                    identical &= line == "IDENTICAL";
                    lines.push(format!(
                        "{} {backend} over {} MPI ranks: {line}",
                        scene.display(),
                        over.ranks
                    ));
                }
            }
        }
        let _ = std::fs::remove_file(&output);
        let mut file = std::fs::File::options().create(true).append(true).open(verify_txt)?;
        for line in lines {
            writeln!(file, "{line}")?;
        }
        Ok(identical)
    }

    /// The image of `scene` on `backend` over the ranks against one
    /// process's: `IDENTICAL`, or what differs or failed.
    fn ranks_check(
        &self,
        over: &OverRanks<'_>,
        scene: &Path,
        backend: &str,
        work: &Path,
        output: &Path,
        place: &dyn Fn(&mut Command),
    ) -> anyhow::Result<String> {
        let (one, ranks) = (work.join("one.pfm"), work.join("ranks.pfm"));
        let render = |cmd: &mut Command, image: &Path| {
            place(cmd);
            cmd.arg("render")
                .arg(scene)
                .args(["--backend", backend])
                .args(RANKS_ARGS)
                .arg("--out")
                .arg(image);
            child::run_logged(cmd, output, None)
        };
        std::fs::write(output, "")?;
        let by_one = render(&mut Command::new(self.binary), &one)?;
        let mut launch = Command::new(over.launcher);
        launch.arg("-n").arg(over.ranks.to_string()).arg(over.binary);
        let by_ranks = match by_one {
            Some(status) if status.success() => render(&mut launch, &ranks)?,
            _ => by_one,
        };
        let line = if by_ranks.is_some_and(|s| s.success()) {
            match (std::fs::read(&one), std::fs::read(&ranks)) {
                (Ok(a), Ok(b)) if a == b => "IDENTICAL".to_string(),
                _ => "DIFFERS from one process's image".to_string(),
            }
        } else {
            format!("FAILED: {}", last_line(output))
        };
        let _ = std::fs::remove_file(&one);
        let _ = std::fs::remove_file(&ranks);
        Ok(line)
    }
}

/// Every scene file (`*.toml`) in `dir`, sorted.
fn scene_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let listing =
        std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("{}: cannot list the scenes: {e}", dir.display()))?;
    let mut scenes = Vec::new();
    for entry in listing {
        let path = entry?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            scenes.push(path);
        }
    }
    scenes.sort();
    Ok(scenes)
}

/// The last line a command wrote into `output`.
fn last_line(output: &Path) -> String {
    std::fs::read_to_string(output)
        .unwrap_or_default()
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}
