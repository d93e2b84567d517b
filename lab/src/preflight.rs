//! What every planned run needs, checked before the first sample, so that a
//! problem in a late study is found before the early ones spend their time:
//! every distinct scene (file and replaced fields) loads, every render's
//! film fits in the host memory available, and every study's reference
//! image reads and has the size of its runs' images. It also lists every
//! file the runs read, for the manifest to fingerprint.

use super::config::{PlannedRun, Study};
use super::scenes::load_with_fields;
use anyhow::{Context, bail};
use device::scene::RenderView;
use renderer::io::image::{self as image_io, FloatImage};
use renderer::render::{check_memory, params_for};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Each study's reference image, by study name.
pub type References = HashMap<String, Arc<FloatImage>>;

/// What the checks found: the reference images, and every file the runs
/// read, sorted (the manifest fingerprints them).
pub struct Checked {
    /// Each study's reference image.
    pub references: References,
    /// Scene files, their meshes and the reference images.
    pub inputs: Vec<PathBuf>,
}

/// Loads each distinct scene of `plan` once (and drops it), checks each
/// run's film size, and reads each study's reference image; the error
/// names the study and run at fault.
pub fn check(plan: &[(&Study, Vec<PlannedRun>)]) -> anyhow::Result<Checked> {
    let mut references = References::new();
    let mut inputs = BTreeSet::new();
    for (study, _) in plan {
        if let Some(path) = &study.reference {
            let image = image_io::read(path).with_context(|| format!("study `{}`: its reference", study.name))?;
            if !image.linear {
                bail!(
                    "study `{}`: its reference {} is not linear radiance",
                    study.name,
                    path.display()
                );
            }
            references.insert(study.name.clone(), Arc::new(image));
            inputs.insert(path.clone());
        }
    }
    let mut by_scene: HashMap<String, Vec<(&Study, &PlannedRun)>> = HashMap::new();
    for (study, runs) in plan {
        for run in runs {
            let key = format!("{:?}{:?}", run.spec.scene, run.spec.scene_fields);
            by_scene.entry(key).or_default().push((study, run));
        }
    }
    // In plan order, so that of several faults the first one is reported.
    let mut groups: Vec<_> = by_scene.into_values().collect();
    groups.sort_by_key(|g| g.first().map(|(s, r)| (study_index(plan, s), r.index)));
    for group in groups {
        let (study, first) = group[0];
        let scene = load_with_fields(&first.spec.scene, &first.spec.scene_fields).with_context(|| {
            format!(
                "study `{}`, run {} ({}): checked before the first run",
                study.name, first.index, first.label
            )
        })?;
        inputs.extend(scene.files.iter().cloned());
        for (study, run) in group {
            let (params, _) = params_for(&scene, &run.spec.overrides, RenderView::Radiance);
            let what = || format!("study `{}`, run {} ({})", study.name, run.index, run.label);
            check_memory(&params, 1).with_context(what)?;
            if let (Some(r), Some(path)) = (references.get(&study.name), &study.reference)
                && (r.width, r.height) != (params.width, params.height)
            {
                bail!(
                    "{}: renders {}x{} but the study's reference {} is {}x{}: render the reference at the runs' size",
                    what(),
                    params.width,
                    params.height,
                    path.display(),
                    r.width,
                    r.height
                );
            }
        }
    }
    Ok(Checked {
        references,
        inputs: inputs.into_iter().collect(),
    })
}

/// The position of `study` in `plan`.
fn study_index(plan: &[(&Study, Vec<PlannedRun>)], study: &Study) -> usize {
    plan.iter()
        .position(|(s, _)| std::ptr::eq(*s, study))
        .unwrap_or(usize::MAX)
}
