//! The profiled renders: one representative scene of every study that
//! sets the megakernel against the wavefront, each rendered on both GPU
//! back ends under Nsight Compute (`wavepath counters plan` lists the
//! renders, `scripts/why-counters` runs them), and the files each leaves.
//!
//! A profile is one line: `EXPERIMENT STUDY SCENE WxH SPP [FLAGS...]`,
//! where a flag `FIELD=VALUE` sets a generator field of the scene (as the
//! study sweeps it) and any other is passed to `wavepath render`. The spp
//! is lower than the study's, so that the wavefront's launches replay in
//! seconds; every figure is per ray, per launch or per sample, so it does
//! not depend on the spp.

use super::cells::{read_text, whole};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// The profiles of docs/results.md "Why, counted".
pub const PROFILES: &str = "\
mega_vs_wave default scenes/cornell_diffuse.toml 512x384 64
mega_vs_wave default scenes/cs500.toml 1024x1024 4
mega_vs_wave nee scenes/cs500.toml 1024x1024 4 --nee on
mega_vs_wave textures scenes/textured.toml 1280x800 8
material_cost crossover experiments/scenes/material_cost.toml 640x360 16 materials=16 octaves=16
material_cost crossover experiments/scenes/material_cost.toml 640x360 16 materials=1 octaves=1
cs500_speedup gpu scenes/cs500_heavy.toml 1024x1024 4
";

/// The two back ends each profile is rendered on.
pub const BACKENDS: [&str; 2] = ["gpu-mega", "gpu-wave"];

/// The metrics Nsight Compute collects of every launch: summed over
/// launches, or averaged by kernel time (the occupancies), and the
/// registers.
pub const METRICS: &str = "smsp__inst_executed.sum,smsp__thread_inst_executed.sum,launch__registers_per_thread,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,dram__bytes.sum,\
lts__t_bytes.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum,gpu__time_duration.sum";

/// A profile line's form, for messages.
const PROFILE_FORM: &str = "EXPERIMENT STUDY SCENE WxH SPP [FLAGS...]";

/// One profile: the render profiled on each back end.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The experiment folder under `results/`.
    pub experiment: String,
    /// The study whose fastest configuration is set beside the counters.
    pub study: String,
    /// The scene file.
    pub scene_file: PathBuf,
    /// The scene's name (its file stem), as the study's rows name it.
    pub scene: String,
    /// WIDTHxHEIGHT.
    pub size: String,
    /// Samples per pixel.
    pub spp: u64,
    /// The generator fields set, `FIELD=VALUE` each.
    pub fields: Vec<String>,
    /// The other flags of the render.
    pub flags: Vec<String>,
}

impl Profile {
    /// The profile of the words of one line, at `at` (`file:line`).
    fn parse(at: &str, words: &[&str]) -> anyhow::Result<Profile> {
        let [experiment, study, scene, size, spp, rest @ ..] = words else {
            bail!("{at}: `{}` is not a profile; expected {PROFILE_FORM}", words.join(" "));
        };
        for (what, value) in [("experiment", experiment), ("study", study)] {
            let named = value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !named || value.starts_with('-') {
                bail!("{at}: {what} `{value}` is not a name; expected letters, digits, `_` and `-`");
            }
        }
        let sized = size.split_once('x').is_some_and(|(w, h)| {
            [w, h]
                .iter()
                .all(|n| !n.starts_with('0') && whole(n, at, "size", 1).is_ok())
        });
        if !sized {
            bail!("{at}: size `{size}` is not WIDTHxHEIGHT; expected e.g. 512x384");
        }
        let scene_file = PathBuf::from(scene);
        let Some(stem) = scene_file.file_stem().and_then(|s| s.to_str()) else {
            bail!("{at}: scene `{scene}` names no file; expected a scene file such as scenes/cs500.toml");
        };
        let (fields, flags): (Vec<&str>, Vec<&str>) = rest.iter().copied().partition(|w| w.contains('='));
        Ok(Profile {
            experiment: experiment.to_string(),
            study: study.to_string(),
            scene: stem.to_string(),
            scene_file,
            size: size.to_string(),
            spp: whole(spp, at, "spp", 1)?,
            fields: fields.into_iter().map(str::to_string).collect(),
            flags: flags.into_iter().map(str::to_string).collect(),
        })
    }

    /// The profile's files' name: study, scene and the fields it sets
    /// (`materials=1` adds `_materials1`).
    pub fn label(&self) -> String {
        let mut label = format!("{}_{}", self.study, self.scene);
        for field in &self.fields {
            label.push('_');
            label.push_str(&field.replace('=', ""));
        }
        label
    }

    /// The fields it sets, joined as why.csv's `overrides` column holds
    /// them.
    pub fn overrides(&self) -> String {
        self.fields.join(";")
    }

    /// Where the render on `backend` leaves its files under `outdir`
    /// (`.csv`: Nsight Compute's rows; `.json`: the summary record; `.txt`:
    /// what the render printed), without the extension.
    pub fn stem(&self, outdir: &Path, backend: &str) -> PathBuf {
        outdir
            .join(&self.experiment)
            .join(format!("{}_{backend}", self.label()))
    }
}

/// The profiles of `text` (read from `source`), one a line, blank lines
/// skipped; at least one.
pub fn parse_profiles(source: &str, text: &str) -> anyhow::Result<Vec<Profile>> {
    let mut profiles = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if !words.is_empty() {
            profiles.push(Profile::parse(&format!("{source}:{}", n + 1), &words)?);
        }
    }
    if profiles.is_empty() {
        bail!("{source}: no profile; expected one a line: {PROFILE_FORM}");
    }
    Ok(profiles)
}

/// The profiles in the file `path`, or [`PROFILES`] without one.
pub fn read_profiles(path: Option<&Path>) -> anyhow::Result<Vec<Profile>> {
    match path {
        Some(path) => {
            let expected = format!("the profiles, one a line: {PROFILE_FORM}");
            parse_profiles(&path.display().to_string(), &read_text(path, &expected)?)
        }
        None => parse_profiles("the built-in profiles", PROFILES),
    }
}

/// One render of the plan: Nsight Compute's log file and the `wavepath`
/// arguments of the render it counts.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRender {
    /// Where Nsight Compute writes its rows (`--log-file`).
    pub log: PathBuf,
    /// The arguments after `wavepath`.
    pub args: Vec<String>,
}

impl PlannedRender {
    /// The render as one line: the log file, then the arguments, each
    /// free of white space (the plan refuses paths with any).
    pub fn line(&self) -> String {
        let mut line = self.log.display().to_string();
        for arg in &self.args {
            line.push(' ');
            line.push_str(arg);
        }
        line
    }
}

/// The renders that count `profiles` into `outdir`: each profile on each
/// back end at its size and spp, writing its summary record beside
/// Nsight Compute's rows. A profile that sets generator fields renders a
/// copy of its scene with them written in, which this writes into
/// `outdir/scenes/` (the folders of every experiment are made too).
pub fn plan(profiles: &[Profile], outdir: &Path) -> anyhow::Result<Vec<PlannedRender>> {
    let shown = outdir.display().to_string();
    if shown.chars().any(char::is_whitespace) {
        bail!("{shown}: the plan's lines are split at white space; name a folder without any");
    }
    let mut renders = Vec::new();
    for profile in profiles {
        let scene = scene_file(profile, outdir)?;
        let folder = outdir.join(&profile.experiment);
        std::fs::create_dir_all(&folder).with_context(|| format!("{}: cannot create the folder", folder.display()))?;
        for backend in BACKENDS {
            let stem = profile.stem(outdir, backend);
            let mut args = vec![
                "render".to_string(),
                scene.display().to_string(),
                "--backend".into(),
                backend.into(),
                "--size".into(),
                profile.size.clone(),
                "--spp".into(),
                profile.spp.to_string(),
            ];
            args.extend(profile.flags.iter().cloned());
            if backend == "gpu-wave" {
                // Each launch replayed for its counters: never timed.
                args.push("--untimed-launches".into());
            }
            args.extend([
                "--quiet".into(),
                "--summary-json".into(),
                stem.with_extension("json").display().to_string(),
            ]);
            args.extend(["--out".into(), outdir.join("image.png").display().to_string()]);
            renders.push(PlannedRender {
                log: stem.with_extension("csv"),
                args,
            });
        }
    }
    Ok(renders)
}

/// The scene file `profile` renders: its own, or a copy under
/// `outdir/scenes/` with its generator fields written in.
fn scene_file(profile: &Profile, outdir: &Path) -> anyhow::Result<PathBuf> {
    if profile.fields.is_empty() {
        return Ok(profile.scene_file.clone());
    }
    let fields = profile
        .fields
        .iter()
        .map(|f| {
            let (name, value) = f.split_once('=').expect("a field holds `=`");
            let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.to_string()));
            (format!("generators[0].{name}"), value)
        })
        .collect::<Vec<_>>();
    let expected = "a scene file (TOML)";
    let text = read_text(&profile.scene_file, expected)?;
    let edited = lab::scenes::with_fields(&text, &fields)
        .with_context(|| format!("{}: writing the profile's fields", profile.scene_file.display()))?;
    let folder = outdir.join("scenes");
    std::fs::create_dir_all(&folder).with_context(|| format!("{}: cannot create the folder", folder.display()))?;
    let path = folder.join(format!("{}.toml", profile.label()));
    renderer::io::atomic_file::write(&path, edited.as_bytes())?;
    Ok(path)
}

/// The profiled renders under `outdir` that left no rows to sum: no
/// summary record (the render failed), or no Nsight Compute header in its
/// log (Nsight Compute could not count it), each as
/// `EXPERIMENT/LABEL_BACKEND`; the second figure is the number of renders.
pub fn failed_renders(profiles: &[Profile], outdir: &Path) -> (Vec<String>, usize) {
    let mut failed = Vec::new();
    let mut renders = 0;
    for profile in profiles {
        for backend in BACKENDS {
            renders += 1;
            let stem = profile.stem(outdir, backend);
            let counted = read_text(&stem.with_extension("csv"), "Nsight Compute's rows")
                .is_ok_and(|log| log.lines().any(|l| l.starts_with("\"ID\"")));
            if !counted || !stem.with_extension("json").is_file() {
                failed.push(format!("{}/{}_{backend}", profile.experiment, profile.label()));
            }
        }
    }
    (failed, renders)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_profiles_read_and_name_their_files() {
        let profiles = read_profiles(None).unwrap();
        assert_eq!(profiles.len(), 7);
        let crossover = &profiles[4];
        assert_eq!(crossover.label(), "crossover_material_cost_materials16_octaves16");
        assert_eq!(crossover.overrides(), "materials=16;octaves=16");
        assert_eq!(profiles[2].flags, ["--nee", "on"]);
    }

    #[test]
    fn a_bad_profile_is_refused_naming_its_line() {
        for (text, says) in [
            ("", "p: no profile"),
            (
                "e s scenes/box.toml 10x10\n",
                "p:1: `e s scenes/box.toml 10x10` is not a profile",
            ),
            (
                "\ne s scenes/box.toml 10x10 0\n",
                "p:2: spp is `0`; expected a whole number, 1 or more",
            ),
            (
                "e s scenes/box.toml 10x010 4\n",
                "p:1: size `10x010` is not WIDTHxHEIGHT",
            ),
            ("e/x s scenes/box.toml 10x10 4\n", "p:1: experiment `e/x` is not a name"),
        ] {
            let e = parse_profiles("p", text).unwrap_err().to_string();
            assert!(e.starts_with(says), "{e}");
        }
    }
}
