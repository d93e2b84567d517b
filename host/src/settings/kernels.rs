//! Which build of the kernels that dispatch over materials (the megakernel,
//! the wavefront's drain) a render runs: `--kernels` and the experiment
//! setting `kernels` name one of these.
//!
//! `auto` runs the smallest build that holds what the scene needs (Cycles
//! picks its kernel features the same way); naming a build measures the
//! specialisation itself, for example `full` against `auto` on a seed scene.

use clap::ValueEnum;
use device::shading::{COSTLY_CLASSES, Features, KernelVariant, NEE, TEXTURES};

/// A build of the material-dispatching kernels, by the names the command
/// line and configs use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum KernelBuild {
    /// The smallest build that holds the scene's needs.
    #[default]
    Auto,
    /// Without the coated class, next-event estimation and textures.
    Plain,
    /// Without the coated class.
    Lean,
    /// Every class and feature.
    Full,
}

impl KernelBuild {
    /// The name the command line and configs use.
    pub fn name(self) -> &'static str {
        match self {
            KernelBuild::Auto => "auto",
            KernelBuild::Plain => "plain",
            KernelBuild::Lean => "lean",
            KernelBuild::Full => "full",
        }
    }

    /// The suffix a back end's label carries: none for `auto`, else
    /// `/kernels-NAME`.
    pub fn label(self) -> String {
        match self {
            KernelBuild::Auto => String::new(),
            named => format!("/kernels-{}", named.name()),
        }
    }

    /// The variant to run for a render that needs `needed`: for `auto` the
    /// smallest that holds it; a named build if it holds it, else an error
    /// naming what it leaves out.
    pub fn variant(self, needed: Features) -> Result<KernelVariant, String> {
        let variant = match self {
            KernelBuild::Auto => return Ok(KernelVariant::holding(needed)),
            KernelBuild::Plain => KernelVariant::Plain,
            KernelBuild::Lean => KernelVariant::Lean,
            KernelBuild::Full => KernelVariant::Full,
        };
        let missing = needed & !variant.features();
        if missing == 0 {
            return Ok(variant);
        }
        let parts: Vec<&str> = [
            (COSTLY_CLASSES, "the coated material"),
            (NEE, "next-event estimation"),
            (TEXTURES, "textures"),
        ]
        .into_iter()
        .filter(|(f, _)| missing & f != 0)
        .map(|(_, name)| name)
        .collect();
        Err(format!(
            "kernels `{}` leave out {}, which this render needs; use `auto` or a larger build",
            self.name(),
            parts.join(" and ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::shading::{ALL_FEATURES, ShadeClass};

    const DIFFUSE: Features = 1 << ShadeClass::Diffuse as u32;

    #[test]
    fn auto_picks_the_smallest_build_and_named_builds_are_kept() {
        assert_eq!(KernelBuild::Auto.variant(DIFFUSE), Ok(KernelVariant::Plain));
        assert_eq!(KernelBuild::Auto.variant(DIFFUSE | NEE), Ok(KernelVariant::Lean));
        assert_eq!(KernelBuild::Full.variant(DIFFUSE), Ok(KernelVariant::Full));
        assert_eq!(KernelBuild::Lean.variant(DIFFUSE | TEXTURES), Ok(KernelVariant::Lean));
        assert_eq!(KernelBuild::Full.variant(ALL_FEATURES), Ok(KernelVariant::Full));
    }

    #[test]
    fn a_build_too_small_for_the_render_is_refused_naming_what_it_lacks() {
        let e = KernelBuild::Plain.variant(DIFFUSE | NEE | TEXTURES).unwrap_err();
        assert!(
            e.contains("`plain`") && e.contains("next-event estimation and textures"),
            "{e}"
        );
        let e = KernelBuild::Lean.variant(COSTLY_CLASSES).unwrap_err();
        assert!(e.contains("the coated material") && !e.contains("textures"), "{e}");
    }
}
