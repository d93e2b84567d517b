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
//! A kept render is read as any input is (a regular file within its
//! limit), and refused, naming the file and field, when it is not the run
//! it is resumed as (another configuration, size, spp or measured source),
//! when a count or time it records is one that no render of its size can
//! have, or when its film's length or hash does not match its description.
//! A refused render is discarded with a warning saying why, and the run
//! renders afresh.

use anyhow::Context;
use device::film::FixedRgb;
use renderer::backend::RenderOutput;
use renderer::io::atomic_file;
use renderer::io::input_file::{MAX_TEXT_FILE_BYTES, open_sized, read_text};
use renderer::render::compare::film_hash;
use renderer::settings::size::MAX_DEPTH;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The folder in an output folder that holds the kept renders.
pub const FOLDER: &str = "partial";

/// Bytes of one pixel in a kept film: three little-endian `u64` sums.
const PIXEL_BYTES: usize = 24;

/// The longest time a kept render may record, ms (a year): longer than any
/// render is given, and a [`Duration`] holds it.
const MAX_KEPT_MS: f64 = 365.0 * 24.0 * 3600.0 * 1e3;

/// The most rays one path segment traces: its own and the shadow ray of
/// its next-event estimate (`device::integrator::segment`).
const RAYS_PER_SEGMENT: u128 = 2;

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

    /// The kept render of `want`'s run, if there is one that finishes it
    /// (`KeptRenders::read`). One that cannot (unreadable, damaged, or of
    /// another run or build) is discarded: `warn` is told why, naming its
    /// file and field, and the run renders afresh. An error only where the
    /// discarded render cannot be removed.
    pub fn take(&self, want: &PartOf, warn: impl FnOnce(String)) -> anyhow::Result<Option<Part>> {
        match self.read(want) {
            Ok(part) => Ok(part),
            Err(refusal) => {
                self.remove(&want.key)?;
                warn(format!("{refusal}; discarded, and the run is rendered afresh"));
                Ok(None)
            }
        }
    }

    /// The kept render of `want`'s run, if there is one, read as any input
    /// is (a regular file within its limit) and checked: part of `want`
    /// (same configuration, size, spp and measured source), counts that
    /// such a render can have ([`check_counts`]), and a film of that size
    /// with the hash it was kept with. The refusal names the file and what
    /// was expected.
    fn read(&self, want: &PartOf) -> Result<Option<Part>, String> {
        let (info_path, film_path) = self.files(&want.key);
        if matches!(info_path.try_exists(), Ok(false)) {
            return Ok(None);
        }
        let in_info = |problem: String| format!("{}: {problem}", info_path.display());
        let text = read_text(&info_path, MAX_TEXT_FILE_BYTES).map_err(in_info)?;
        let info: PartInfo = toml::from_str(&text).map_err(|e| in_info(format!("not a kept render: {e}")))?;
        check_part_of(&info.of, want)
            .and_then(|()| check_counts(&info))
            .map_err(in_info)?;
        let film = read_film(&film_path, &info.of).map_err(|problem| format!("{}: {problem}", film_path.display()))?;
        let hash = film_hash(&film);
        if hash != info.film_hash {
            return Err(in_info(format!(
                "field `film_hash` is {}, but {} hashes to {hash}",
                info.film_hash,
                film_path.display()
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

/// Checks that a kept render described as `kept` is part of `want`: the
/// first field that differs, with both values.
fn check_part_of(kept: &PartOf, want: &PartOf) -> Result<(), String> {
    let texts = [
        ("config", &kept.key.config, &want.key.config),
        ("study", &kept.key.study, &want.key.study),
        ("source", &kept.source, &want.source),
    ];
    if let Some((field, kept, now)) = texts.iter().find(|t| t.1 != t.2) {
        return Err(format!("field `{field}` is `{kept}`, but the run resumed is `{now}`"));
    }
    let numbers = [
        ("run", kept.key.run, want.key.run),
        ("repetition", kept.key.repetition, want.key.repetition),
        ("width", kept.width, want.width),
        ("height", kept.height, want.height),
        ("spp", kept.spp, want.spp),
    ];
    if let Some((field, kept, now)) = numbers.iter().find(|n| n.1 != n.2) {
        return Err(format!("field `{field}` is {kept}, but the run resumed has {now}"));
    }
    Ok(())
}

/// Checks the counts of a kept render against what a render of its size
/// can have: 1 to spp − 1 samples made in 1 to `samples` renders, times
/// from 0 to [`MAX_KEPT_MS`], from one ray per sample to
/// [`RAYS_PER_SEGMENT`] × [`MAX_DEPTH`] of them, and no more invalid
/// samples than rays. The first field out of range, with what was
/// expected.
fn check_counts(info: &PartInfo) -> Result<(), String> {
    let out_of_range =
        |field: &str, value: String, expected: String| Err(format!("field `{field}` is {value}: expected {expected}"));
    let spp = info.of.spp;
    if !(1..spp).contains(&info.samples) {
        let expected = format!("1 to {} samples (fewer than the run's {spp})", spp.saturating_sub(1));
        return out_of_range("samples", info.samples.to_string(), expected);
    }
    if !(1..=info.samples).contains(&info.parts) {
        let expected = format!("1 to {} renders (each renders a sample or more)", info.samples);
        return out_of_range("parts", info.parts.to_string(), expected);
    }
    for (field, ms) in [("elapsed_ms", info.elapsed_ms), ("total_ms", info.total_ms)] {
        if !(0.0..=MAX_KEPT_MS).contains(&ms) {
            return out_of_range(field, format!("{ms:?}"), format!("a time from 0 to {MAX_KEPT_MS} ms"));
        }
    }
    let paths = u128::from(info.of.width) * u128::from(info.of.height) * u128::from(info.samples);
    let most = paths * u128::from(MAX_DEPTH) * RAYS_PER_SEGMENT;
    if !(paths..=most).contains(&u128::from(info.rays)) {
        let expected = format!(
            "{paths} to {most} ray segments (1 to {} per sample of each pixel)",
            u128::from(MAX_DEPTH) * RAYS_PER_SEGMENT
        );
        return out_of_range("rays", info.rays.to_string(), expected);
    }
    if info.invalid_samples > info.rays {
        let expected = format!(
            "at most its {} rays (each dropped sample is the contribution of a ray)",
            info.rays
        );
        return out_of_range("invalid_samples", info.invalid_samples.to_string(), expected);
    }
    Ok(())
}

/// The film of a kept render of `of`: the regular file at `path`, of
/// exactly its pixels' bytes.
fn read_film(path: &Path, of: &PartOf) -> Result<Vec<FixedRgb>, String> {
    use std::io::Read;
    let pixels = of.width as usize * of.height as usize;
    let expected = pixels * PIXEL_BYTES;
    let (mut file, len) = open_sized(path)?;
    if len != expected as u64 {
        return Err(format!(
            "{len} bytes, expected {expected} ({}x{} pixels of {PIXEL_BYTES} bytes)",
            of.width, of.height
        ));
    }
    let mut bytes = vec![0; expected];
    file.read_exact(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8-byte chunks"));
    Ok(bytes
        .chunks_exact(PIXEL_BYTES)
        .map(|p| FixedRgb {
            r: word(&p[0..8]),
            g: word(&p[8..16]),
            b: word(&p[16..24]),
        })
        .collect())
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

    /// What the warning of a discarded render says, and that it is gone.
    fn discarded(parts: &KeptRenders, want: &PartOf) -> String {
        let warning = std::cell::RefCell::new(None);
        let taken = parts.take(want, |w| *warning.borrow_mut() = Some(w)).unwrap();
        assert!(taken.is_none(), "a refused render was taken");
        let (info, film) = parts.files(&want.key);
        assert!(!info.exists() && !film.exists(), "a refused render is removed");
        warning.into_inner().expect("a warning")
    }

    #[test]
    fn a_kept_render_reads_back_as_written_and_completes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let back = parts.take(&i.of, |w| panic!("{w}")).unwrap().expect("kept");
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
        assert!(parts.take(&i.of, |w| panic!("{w}")).unwrap().is_none());
        assert!(!dir.path().join(FOLDER).exists(), "the empty folder goes too");
    }

    #[test]
    fn a_kept_render_of_another_run_or_build_is_refused_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let refused = |change: &dyn Fn(&mut PartOf)| {
            let mut want = i.of.clone();
            change(&mut want);
            parts.read(&want).unwrap_err()
        };
        let e = refused(&|w| w.source = "def".into());
        assert!(
            e.contains("seed-run0-rep0.toml") && e.contains("field `source` is `abc`") && e.contains("`def`"),
            "{e}"
        );
        assert!(refused(&|w| w.key.config = "cpu".into()).contains("field `config`"));
        assert!(refused(&|w| w.spp = 16).contains("field `spp` is 8, but the run resumed has 16"));
        assert!(refused(&|w| w.width = 4).contains("field `width`"));
        let mut other = i.of.clone();
        other.source = "def".into();
        let warning = discarded(&parts, &other);
        assert!(
            warning.contains("field `source`") && warning.ends_with("discarded, and the run is rendered afresh"),
            "{warning}"
        );
    }

    #[test]
    fn a_damaged_kept_render_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let (parts, i) = kept(dir.path());
        let film_path = dir.path().join(FOLDER).join("seed-run0-rep0.film");
        let mut bytes = std::fs::read(&film_path).unwrap();
        bytes[5] ^= 1;
        std::fs::write(&film_path, &bytes).unwrap();
        let e = parts.read(&i.of).unwrap_err();
        assert!(
            e.contains("field `film_hash`") && e.contains("seed-run0-rep0.film"),
            "{e}"
        );

        std::fs::write(&film_path, &bytes[..bytes.len() - 1]).unwrap();
        let e = parts.read(&i.of).unwrap_err();
        assert!(e.contains("143 bytes, expected 144"), "{e}");

        let info_path = dir.path().join(FOLDER).join("seed-run0-rep0.toml");
        let text = std::fs::read_to_string(&info_path).unwrap();
        std::fs::write(&info_path, text.replace("samples = 3", "samples = 8")).unwrap();
        let e = parts.read(&i.of).unwrap_err();
        assert!(e.contains("field `samples` is 8"), "{e}");
        std::fs::write(&info_path, "width = \"wide\"").unwrap();
        let e = parts.read(&i.of).unwrap_err();
        assert!(e.contains("not a kept render"), "{e}");
    }

    #[test]
    fn counts_and_times_no_render_can_have_are_refused_by_field() {
        // 3x2 pixels, 3 of 8 samples in 1 part, 40 rays, 1500 and 1600 ms.
        for (written, now, expected) in [
            (
                "elapsed_ms = 1500.0",
                "elapsed_ms = nan",
                "field `elapsed_ms` is NaN: expected a time from 0",
            ),
            ("elapsed_ms = 1500.0", "elapsed_ms = -1.0", "field `elapsed_ms` is -1"),
            ("elapsed_ms = 1500.0", "elapsed_ms = inf", "field `elapsed_ms` is inf"),
            (
                "elapsed_ms = 1500.0",
                "elapsed_ms = 1e300",
                "field `elapsed_ms` is 1e300",
            ),
            ("total_ms = 1600.0", "total_ms = -1600.0", "field `total_ms` is -1600"),
            ("parts = 1", "parts = 0", "field `parts` is 0: expected 1 to 3 renders"),
            ("parts = 1", "parts = 4294967295", "field `parts` is 4294967295"),
            (
                "rays = 40",
                "rays = 18446744073709551615",
                "field `rays` is 18446744073709551615: expected 18 to",
            ),
            ("rays = 40", "rays = 17", "field `rays` is 17"),
            (
                "invalid_samples = 1",
                "invalid_samples = 41",
                "field `invalid_samples` is 41: expected at most its 40 rays",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (parts, i) = kept(dir.path());
            let (info_path, _) = parts.files(&i.of.key);
            let text = std::fs::read_to_string(&info_path).unwrap();
            assert!(text.contains(written), "{text}");
            std::fs::write(&info_path, text.replace(written, now)).unwrap();
            let warning = discarded(&parts, &i.of);
            assert!(
                warning.starts_with(&info_path.display().to_string()) && warning.contains(expected),
                "{now}: {warning}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn kept_files_that_are_not_regular_or_too_large_are_refused_unread() {
        for (which, make, expected) in [
            ("film", "fifo", "is a FIFO, not a regular file"),
            ("film", "zero", "is a device, not a regular file"),
            ("film", "huge", "3221225472 bytes, expected 144"),
            ("toml", "fifo", "is a FIFO, not a regular file"),
            ("toml", "huge", "the limit is"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (parts, i) = kept(dir.path());
            let (info_path, film_path) = parts.files(&i.of.key);
            let path = if which == "film" { film_path } else { info_path };
            std::fs::remove_file(&path).unwrap();
            match make {
                "fifo" => {
                    let made = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
                    assert!(made.success());
                }
                "zero" => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
                _ => std::fs::File::create(&path).unwrap().set_len(3 << 30).unwrap(),
            }
            let warning = discarded(&parts, &i.of);
            assert!(
                warning.starts_with(&path.display().to_string()) && warning.contains(expected),
                "{which} as {make}: {warning}"
            );
        }
    }
}
