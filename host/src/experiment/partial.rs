//! CPU renders a stop request cut short, kept so that `--resume` finishes
//! them instead of starting again.
//!
//! A CPU back end renders in passes over the image and stops at a whole
//! sample, so its film then holds exactly the samples `0..n` of every
//! pixel. The runner keeps such a film in the output folder's `partial/`
//! (`<study>-run<index>-rep<repetition>.film`, its fixed-point sums as
//! little-endian words, and a `.toml` beside it with what it holds and how
//! long it took). A resumed experiment renders the samples `n..spp` of that
//! run alone and adds the films, which equals one render of `0..spp` bit for
//! bit (each sample is keyed by its pixel and index); the row's times are
//! the parts' sums and its `parts` column counts them. A one-thread
//! baseline of many minutes can so be measured in full across sessions.
//!
//! A kept render is refused, naming the file and field, when it is not the
//! run it is resumed as: another configuration, size, spp or measured
//! source, or a film whose length or hash does not match its description.

use crate::backend::RenderOutput;
use crate::io::atomic_file;
use crate::render::compare::film_hash;
use anyhow::{Context, bail};
use device::film::FixedRgb;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The folder in an output folder that holds the kept renders.
pub const FOLDER: &str = "partial";

/// Bytes of one pixel in a kept film: three little-endian `u64` sums.
const PIXEL_BYTES: usize = 24;

/// Which repetition of which configuration a kept render belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartKey {
    /// The study.
    pub study: String,
    /// The configuration's index within the study.
    pub run: u32,
    /// The configuration's label.
    pub config: String,
    /// The repetition, from 0.
    pub repetition: u32,
}

/// What a kept render must match to be finished: its run, the render's
/// size and spp, and the measured source of the binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartOf {
    /// The run.
    #[serde(flatten)]
    pub key: PartKey,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel the run renders.
    pub spp: u32,
    /// The measured source of the binary that renders it.
    pub source: String,
}

/// What a kept render holds: whose render it is, its samples and what they
/// cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartInfo {
    /// The render it is part of.
    #[serde(flatten)]
    pub of: PartOf,
    /// Samples per pixel in the film (`0..samples`).
    pub samples: u32,
    /// Processes whose renders the film sums.
    pub parts: u32,
    /// Render time of those renders, ms.
    pub elapsed_ms: f64,
    /// Their whole render calls, ms.
    pub total_ms: f64,
    /// Ray segments they traced.
    pub rays: u64,
    /// NaN or infinite samples they dropped.
    pub invalid_samples: u64,
    /// FNV-1a of the film.
    pub film_hash: String,
}

/// A kept render: its description and its film.
#[derive(Debug)]
pub struct Part {
    /// What it holds.
    pub info: PartInfo,
    /// Fixed-point sums of its samples, row-major.
    pub film: Vec<FixedRgb>,
}

impl Part {
    /// The whole render of `info.key`: this part's film and counts added to
    /// `rest`'s (the samples after it), its times to `rest_total_ms`.
    pub fn complete(self, mut rest: RenderOutput, rest_total_ms: f64) -> (RenderOutput, f64) {
        for (sum, p) in rest.film.iter_mut().zip(&self.film) {
            sum.add(*p);
        }
        rest.spp += self.info.samples;
        rest.rays += self.info.rays;
        rest.invalid_samples += self.info.invalid_samples;
        rest.elapsed += Duration::from_secs_f64(self.info.elapsed_ms / 1e3);
        (rest, rest_total_ms + self.info.total_ms)
    }
}

/// The kept renders of one output folder.
pub struct KeptRenders {
    dir: PathBuf,
}

impl KeptRenders {
    /// The kept renders in the output folder `out`.
    pub fn in_folder(out: &Path) -> Self {
        KeptRenders { dir: out.join(FOLDER) }
    }

    /// The two files of `key`'s kept render.
    fn files(&self, key: &PartKey) -> (PathBuf, PathBuf) {
        let stem = format!("{}-run{}-rep{}", key.study, key.run, key.repetition);
        (
            self.dir.join(format!("{stem}.toml")),
            self.dir.join(format!("{stem}.film")),
        )
    }

    /// Keeps `part`, replacing what was kept of its run: the film first,
    /// then its description, so a description always names a whole film.
    pub fn keep(&self, part: &Part) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("{}: cannot create the folder", self.dir.display()))?;
        let (info, film) = self.files(&part.info.of.key);
        let bytes: Vec<u8> = part
            .film
            .iter()
            .flat_map(|p| [p.r, p.g, p.b])
            .flat_map(u64::to_le_bytes)
            .collect();
        atomic_file::write(&film, &bytes)?;
        let text = toml::to_string(&part.info).context("internal: a kept render's description")?;
        atomic_file::write(&info, text.as_bytes())?;
        Ok(info)
    }

    /// The kept render of `want`'s run, if there is one, after checking
    /// that it is part of `want`: same configuration, size, spp and
    /// measured source, and a film of that size with the hash it was kept
    /// with.
    pub fn take(&self, want: &PartOf) -> anyhow::Result<Option<Part>> {
        let (info_path, film_path) = self.files(&want.key);
        let text = match std::fs::read_to_string(&info_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("{}: cannot read", info_path.display())),
        };
        let refuse = |what: String| -> anyhow::Error {
            anyhow::anyhow!(
                "{}: {what}; delete it and its .film to render the run afresh",
                info_path.display()
            )
        };
        let info: PartInfo = toml::from_str(&text).map_err(|e| refuse(format!("not a kept render: {e}")))?;
        let kept = &info.of;
        let texts = [
            ("config", &kept.key.config, &want.key.config),
            ("study", &kept.key.study, &want.key.study),
            ("source", &kept.source, &want.source),
        ];
        if let Some((field, kept, now)) = texts.iter().find(|t| t.1 != t.2) {
            return Err(refuse(format!(
                "field `{field}` is `{kept}`, but the run resumed is `{now}`"
            )));
        }
        let numbers = [
            ("run", kept.key.run, want.key.run),
            ("repetition", kept.key.repetition, want.key.repetition),
            ("width", kept.width, want.width),
            ("height", kept.height, want.height),
            ("spp", kept.spp, want.spp),
        ];
        if let Some((field, kept, now)) = numbers.iter().find(|n| n.1 != n.2) {
            return Err(refuse(format!(
                "field `{field}` is {kept}, but the run resumed has {now}"
            )));
        }
        if info.samples == 0 || info.samples >= kept.spp || info.parts == 0 {
            return Err(refuse(format!(
                "field `samples` is {} and `parts` {}: expected 1 to {} samples in 1 or more parts",
                info.samples,
                info.parts,
                kept.spp.saturating_sub(1)
            )));
        }
        let bytes = std::fs::read(&film_path).with_context(|| format!("{}: cannot read", film_path.display()))?;
        let pixels = kept.width as usize * kept.height as usize;
        if bytes.len() != pixels * PIXEL_BYTES {
            bail!(
                "{}: {} bytes, expected {} ({}x{} pixels of {PIXEL_BYTES} bytes); delete it and its .toml to render the run afresh",
                film_path.display(),
                bytes.len(),
                pixels * PIXEL_BYTES,
                kept.width,
                kept.height
            );
        }
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8-byte chunks"));
        let film: Vec<FixedRgb> = bytes
            .chunks_exact(PIXEL_BYTES)
            .map(|p| FixedRgb {
                r: word(&p[0..8]),
                g: word(&p[8..16]),
                b: word(&p[16..24]),
            })
            .collect();
        if film_hash(&film) != info.film_hash {
            return Err(refuse(format!(
                "field `film_hash` is {}, but {} hashes to {}",
                info.film_hash,
                film_path.display(),
                film_hash(&film)
            )));
        }
        Ok(Some(Part { info, film }))
    }

    /// Removes `key`'s kept render once its row is written, and the folder
    /// once it is empty.
    pub fn remove(&self, key: &PartKey) -> anyhow::Result<()> {
        let (info, film) = self.files(key);
        for f in [info, film] {
            match std::fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("{}: cannot remove", f.display()));
                }
                _ => {}
            }
        }
        // Left in place when other runs' renders are still kept.
        let _ = std::fs::remove_dir(&self.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(samples: u32) -> PartInfo {
        PartInfo {
            of: PartOf {
                key: PartKey {
                    study: "seed".into(),
                    run: 0,
                    config: "cpu-serial".into(),
                    repetition: 0,
                },
                width: 3,
                height: 2,
                spp: 8,
                source: "abc".into(),
            },
            samples,
            parts: 1,
            elapsed_ms: 1500.0,
            total_ms: 1600.0,
            rays: 40,
            invalid_samples: 1,
            film_hash: String::new(),
        }
    }

    fn film(seed: u64) -> Vec<FixedRgb> {
        (0..6)
            .map(|i| FixedRgb {
                r: seed + i,
                g: 2 * seed + i,
                b: u64::MAX / 4 + i,
            })
            .collect()
    }

    fn kept(dir: &Path) -> (KeptRenders, PartInfo) {
        let parts = KeptRenders::in_folder(dir);
        let mut i = info(3);
        i.film_hash = film_hash(&film(7));
        parts
            .keep(&Part {
                info: i.clone(),
                film: film(7),
            })
            .unwrap();
        (parts, i)
    }

    #[test]
    fn a_kept_render_reads_back_as_written_and_completes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let back = parts.take(&i.of).unwrap().expect("kept");
        assert_eq!(back.info, i);
        assert_eq!(back.film, film(7));
        let rest = RenderOutput {
            film: film(100),
            spp: 5,
            rays: 60,
            invalid_samples: 2,
            elapsed: Duration::from_millis(2500),
            device: "cpu (1 thread)".into(),
            gpu: None,
        };
        let (whole, total_ms) = back.complete(rest, 2600.0);
        assert_eq!(whole.spp, 8);
        assert_eq!((whole.rays, whole.invalid_samples), (100, 3));
        assert_eq!(whole.elapsed, Duration::from_millis(4000));
        assert_eq!(total_ms, 4200.0);
        let mut sums = film(7);
        sums.iter_mut().zip(film(100)).for_each(|(a, b)| a.add(b));
        assert_eq!(whole.film, sums);

        parts.remove(&i.of.key).unwrap();
        assert!(parts.take(&i.of).unwrap().is_none());
        assert!(!dir.path().join(FOLDER).exists(), "the empty folder goes too");
    }

    #[test]
    fn a_kept_render_of_another_run_or_build_is_refused_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let refused = |change: &dyn Fn(&mut PartOf)| {
            let mut want = i.of.clone();
            change(&mut want);
            parts.take(&want).unwrap_err().to_string()
        };
        let e = refused(&|w| w.source = "def".into());
        assert!(
            e.contains("seed-run0-rep0.toml") && e.contains("field `source` is `abc`") && e.contains("`def`"),
            "{e}"
        );
        assert!(refused(&|w| w.key.config = "cpu".into()).contains("field `config`"));
        assert!(refused(&|w| w.spp = 16).contains("field `spp` is 8, but the run resumed has 16"));
        assert!(refused(&|w| w.width = 4).contains("field `width`"));
    }

    #[test]
    fn a_damaged_kept_render_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let film_path = dir.path().join(FOLDER).join("seed-run0-rep0.film");
        let mut bytes = std::fs::read(&film_path).unwrap();
        bytes[5] ^= 1;
        std::fs::write(&film_path, &bytes).unwrap();
        let e = parts.take(&i.of).unwrap_err().to_string();
        assert!(
            e.contains("field `film_hash`") && e.contains("seed-run0-rep0.film"),
            "{e}"
        );

        std::fs::write(&film_path, &bytes[..bytes.len() - 1]).unwrap();
        let e = parts.take(&i.of).unwrap_err().to_string();
        assert!(e.contains("143 bytes, expected 144"), "{e}");

        let info_path = dir.path().join(FOLDER).join("seed-run0-rep0.toml");
        let text = std::fs::read_to_string(&info_path).unwrap();
        std::fs::write(&info_path, text.replace("samples = 3", "samples = 8")).unwrap();
        let e = parts.take(&i.of).unwrap_err().to_string();
        assert!(e.contains("field `samples` is 8"), "{e}");
        std::fs::write(&info_path, "width = \"wide\"").unwrap();
        let e = parts.take(&i.of).unwrap_err().to_string();
        assert!(e.contains("not a kept render"), "{e}");
    }
}
