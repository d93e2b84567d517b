//! Scaling over GPUs, for a study that sweeps `gpus`: each configuration's
//! time on one GPU over its time on N (T1/TN), against its twin of one GPU
//! (the configuration whose label differs only in `gpus=1`). Under strong
//! scaling (the same image) that is the speedup, ideally N; under weak
//! scaling (`scaling = "weak"`: the image N times as tall) the efficiency,
//! ideally 1. [`super::figures`] draws it and [`super::tables`] tabulates it.

use super::stats::{ConfigRows, StudyData};

/// Whether the study's images grow with their GPU count.
pub fn is_weak(study: &StudyData) -> bool {
    study.info.scaling.as_deref() == Some("weak")
}

/// The label of the one-GPU twin of a configuration labelled `label` that
/// renders on `gpus`: `gpus=N` replaced by `gpus=1`.
pub fn one_gpu_label(label: &str, gpus: u32) -> Option<String> {
    let words: Vec<String> = label
        .split(' ')
        .map(|w| match w == format!("gpus={gpus}") {
            true => "gpus=1".to_string(),
            false => w.to_string(),
        })
        .collect();
    let twin = words.join(" ");
    (twin != label || gpus == 1).then_some(twin)
}

/// T1/TN of configuration `c`: the median time of its one-GPU twin over
/// its own. `None` without a `gpus` or a measured twin.
pub fn ratio(study: &StudyData, c: &ConfigRows) -> Option<f64> {
    let gpus = c.row.gpus?;
    let twin = one_gpu_label(&c.row.config, gpus)?;
    let one = study
        .configs
        .iter()
        .find(|o| o.row.config == twin && o.row.gpus == Some(1))?;
    Some(one.median_ms / c.median_ms)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::stats::group_configs;
    use lab::records::{ManifestStudy, RunRow};

    /// A timed row of `config` on `gpus` GPUs taking `ms`.
    pub fn row(run: u32, config: &str, gpus: u32, ms: f64) -> RunRow {
        RunRow {
            study: "s".into(),
            run,
            config: config.into(),
            scene_name: config.split(' ').next().unwrap_or_default().into(),
            backend: config.split(' ').nth(1).unwrap_or_default().into(),
            gpus: Some(gpus),
            scaled_wall_ms: ms,
            width: 64,
            height: 64 * gpus,
            ..RunRow::default()
        }
    }

    /// Strong scaling of two back ends on one scene: megakernel 800 ms on
    /// one GPU, 400 on two, 250 on four; wavefront 600 and 400.
    pub fn rows() -> Vec<RunRow> {
        vec![
            row(0, "cs500 gpu-mega gpus=1", 1, 800.0),
            row(1, "cs500 gpu-mega gpus=2", 2, 400.0),
            row(2, "cs500 gpu-mega gpus=4", 4, 250.0),
            row(3, "cs500 gpu-wave gpus=1", 1, 600.0),
            row(4, "cs500 gpu-wave gpus=2", 2, 400.0),
        ]
    }

    /// A study sweeping `gpus`, `weak` or strong.
    pub fn info(weak: bool) -> ManifestStudy {
        ManifestStudy {
            name: "s".into(),
            swept: vec!["gpus".into()],
            scaling: weak.then(|| "weak".into()),
            ..ManifestStudy::default()
        }
    }

    #[test]
    fn twins_differ_only_in_gpus() {
        assert_eq!(
            one_gpu_label("cs500 gpu-mega gpus=2 block=8x8", 2).as_deref(),
            Some("cs500 gpu-mega gpus=1 block=8x8")
        );
        assert_eq!(one_gpu_label("gpu-mega gpus=1", 1).as_deref(), Some("gpu-mega gpus=1"));
        assert_eq!(one_gpu_label("gpu-mega gpus=12", 2), None);
    }

    #[test]
    fn t1_over_tn_is_the_speedup_against_the_one_gpu_twin() {
        let info = info(false);
        let configs = group_configs(&rows());
        let study = StudyData::new(&info, &configs, &[]);
        let ratios: Vec<Option<f64>> = study.configs.iter().map(|c| ratio(&study, c)).collect();
        assert_eq!(ratios, [Some(1.0), Some(2.0), Some(3.2), Some(1.0), Some(1.5)]);
    }
}
