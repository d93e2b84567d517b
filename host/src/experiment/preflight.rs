//! What every planned run needs, checked before the first sample, so that a
//! problem in a late study is found before the early ones spend their time:
//! every distinct scene (file and replaced fields) loads, and every render's
//! film fits in the host memory available.

use super::config::{PlannedRun, Study};
use super::scenes::load_with_fields;
use crate::render::{check_memory, params_for};
use anyhow::Context;
use device::scene::RenderView;
use std::collections::HashMap;

/// Loads each distinct scene of `plan` once (and drops it) and checks each
/// run's film size; the error names the study and run at fault.
pub fn check(plan: &[(&Study, Vec<PlannedRun>)]) -> anyhow::Result<()> {
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
        for (study, run) in group {
            let (params, _) = params_for(&scene, &run.spec.overrides, RenderView::Radiance);
            check_memory(&params, 1)
                .with_context(|| format!("study `{}`, run {} ({})", study.name, run.index, run.label))?;
        }
    }
    Ok(())
}

/// The position of `study` in `plan`.
fn study_index(plan: &[(&Study, Vec<PlannedRun>)], study: &Study) -> usize {
    plan.iter()
        .position(|(s, _)| std::ptr::eq(*s, study))
        .unwrap_or(usize::MAX)
}
