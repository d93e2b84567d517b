//! Scaling over GPUs: a study that sweeps `gpus` (the GPUs that render
//! one image together) measures strong scaling, the same image on more
//! GPUs; with `scaling = "weak"` each run's image height is multiplied by
//! its `gpus`, so every GPU keeps the same number of pixels.

use super::params::RunSpec;
use renderer::settings::echo::shorten_for_error;
use renderer::settings::size::{MAX_IMAGE_SIDE, size_label};

/// How a study's runs grow with their GPU count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scaling {
    /// The same image whatever the GPU count (speedup against GPUs).
    #[default]
    Strong,
    /// The image height times the GPU count (efficiency against GPUs).
    Weak,
}

impl Scaling {
    /// `strong` or `weak`, as a config names it.
    pub fn parse(text: &str) -> Result<Scaling, String> {
        match text {
            "strong" => Ok(Scaling::Strong),
            "weak" => Ok(Scaling::Weak),
            other => Err(format!(
                "expected `strong` or `weak`, got `{}`",
                shorten_for_error(other)
            )),
        }
    }

    /// Its name in configs and manifests.
    pub fn name(self) -> &'static str {
        match self {
            Scaling::Strong => "strong",
            Scaling::Weak => "weak",
        }
    }

    /// Gives `run` its size under this scaling: under weak scaling a run
    /// of `gpus` GPUs renders `gpus` times the height of the size it was
    /// given. Strong scaling, and a run without a size, are left as they are.
    pub fn apply(self, run: &mut RunSpec) {
        if let (Scaling::Weak, Some((w, h))) = (self, run.overrides.size) {
            run.overrides.size = Some((w, h.saturating_mul(run.gpus)));
        }
    }

    /// Checks a planned run under this scaling: under weak scaling every
    /// GPU run needs its size in the config, and the grown image must stay
    /// within the largest side.
    pub fn check(self, run: &RunSpec) -> Result<(), String> {
        if self == Scaling::Strong || !run.backend.is_gpu() {
            return Ok(());
        }
        match run.overrides.size {
            None => Err(
                "scaling = \"weak\" multiplies the image height by `gpus`, so it needs the size: \
                 set `size` in `fixed` (or sweep it)"
                    .into(),
            ),
            Some((w, h)) if h > MAX_IMAGE_SIDE => Err(format!(
                "weak scaling over {} GPUs makes the image {}, past the largest side of {MAX_IMAGE_SIDE} pixels: \
                 give a smaller `size`",
                run.gpus,
                size_label((w, h))
            )),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renderer::backend::BackendKind;
    use std::path::PathBuf;

    fn run(backend: BackendKind, size: Option<(u32, u32)>, gpus: u32) -> RunSpec {
        let mut r = RunSpec::new(PathBuf::from("s.toml"), backend);
        r.overrides.size = size;
        r.gpus = gpus;
        r
    }

    #[test]
    fn weak_scaling_multiplies_the_height_by_the_gpus() {
        let mut r = run(BackendKind::GpuMega, Some((640, 360)), 2);
        Scaling::Weak.apply(&mut r);
        assert_eq!(r.overrides.size, Some((640, 720)));
        let mut r = run(BackendKind::GpuWave, Some((640, 360)), 4);
        Scaling::Weak.apply(&mut r);
        assert_eq!(r.overrides.size, Some((640, 1440)));
        let mut r = run(BackendKind::GpuMega, Some((640, 360)), 2);
        Scaling::Strong.apply(&mut r);
        assert_eq!(r.overrides.size, Some((640, 360)));
    }

    #[test]
    fn weak_scaling_needs_a_size_that_fits() {
        assert!(
            Scaling::Weak
                .check(&run(BackendKind::GpuMega, Some((64, 64)), 2))
                .is_ok()
        );
        let e = Scaling::Weak.check(&run(BackendKind::GpuMega, None, 2)).unwrap_err();
        assert!(e.contains("needs the size"), "{e}");
        let e = Scaling::Weak
            .check(&run(BackendKind::GpuMega, Some((64, 40_000)), 2))
            .unwrap_err();
        assert!(e.contains("64x40000") && e.contains("2 GPUs"), "{e}");
        assert!(Scaling::Weak.check(&run(BackendKind::Cpu, None, 1)).is_ok());
        assert!(Scaling::Strong.check(&run(BackendKind::GpuMega, None, 2)).is_ok());
        assert_eq!(Scaling::parse("weak"), Ok(Scaling::Weak));
        assert!(Scaling::parse("linear").unwrap_err().contains("`strong` or `weak`"));
    }
}
