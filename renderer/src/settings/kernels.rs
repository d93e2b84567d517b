//! Which features the kernels of a render are bound to ([`KernelFeatures`]):
//! `--kernels` and the experiment setting `kernels`.
//!
//! `exact` (the default) binds exactly the features the render uses
//! (`RenderJob::features`), as Cycles compiles its kernels for a scene's
//! feature mask; `all` binds every feature, and `exact+nee+textures` the
//! render's and the features named. Naming more than the render uses
//! measures the specialisation itself: the same image, from kernels that
//! carry code the render never runs.

use crate::settings::echo::shorten_for_error;
use device::features::{Feature, Features};
use std::fmt;
use std::str::FromStr;

/// The features bound beyond those a render uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelFeatures {
    extra: Features,
}

impl KernelFeatures {
    /// Exactly the render's features.
    pub const EXACT: KernelFeatures = KernelFeatures { extra: Features::NONE };
    /// Every feature.
    pub const ALL: KernelFeatures = KernelFeatures { extra: Features::ALL };

    /// What the kernels of a render that uses `used` are bound to.
    pub fn bind(self, used: Features) -> Features {
        used.union(self.extra)
    }

    /// The suffix a back end's label carries: none for `exact`, else
    /// `/kernels-NAME`.
    pub fn label(self) -> String {
        if self == KernelFeatures::EXACT {
            String::new()
        } else {
            format!("/kernels-{self}")
        }
    }
}

impl fmt::Display for KernelFeatures {
    /// `exact`, `all`, or `exact+` and the features named.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.extra == Features::ALL {
            f.write_str("all")
        } else if self.extra.is_empty() {
            f.write_str("exact")
        } else {
            write!(f, "exact+{}", self.extra)
        }
    }
}

impl FromStr for KernelFeatures {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "all" {
            return Ok(KernelFeatures::ALL);
        }
        let mut parts = text.split('+');
        if parts.next() != Some("exact") {
            return Err(format!(
                "`{}` is not a kernel feature set: expected `exact`, `all` or `exact+FEATURE+…`",
                shorten_for_error(text)
            ));
        }
        let mut extra = Features::NONE;
        for name in parts {
            let feature = Feature::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
                let names: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "`{}` in `{}` is no feature; the features are {}",
                    shorten_for_error(name),
                    shorten_for_error(text),
                    names.join(", ")
                )
            })?;
            extra = extra.with(feature);
        }
        Ok(KernelFeatures { extra })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::geometry::PrimKind;
    use device::shading::MaterialKind;

    #[test]
    fn a_setting_binds_the_features_used_and_those_it_names() {
        let used = Features::of([
            Feature::Material(MaterialKind::Diffuse),
            Feature::Primitive(PrimKind::Sphere),
        ]);
        assert_eq!(KernelFeatures::EXACT.bind(used), used);
        assert_eq!(KernelFeatures::ALL.bind(used), Features::ALL);
        let plus: KernelFeatures = "exact+nee+triangle".parse().unwrap();
        assert_eq!(
            plus.bind(used),
            used.with(Feature::Nee).with(Feature::Primitive(PrimKind::Triangle))
        );
    }

    #[test]
    fn every_setting_reads_back_as_written() {
        for text in ["exact", "all", "exact+coated", "exact+sphere+textures"] {
            let k: KernelFeatures = text.parse().unwrap();
            assert_eq!(k.to_string(), text);
        }
        assert_eq!(KernelFeatures::EXACT.label(), "");
        assert_eq!(KernelFeatures::ALL.label(), "/kernels-all");
    }

    #[test]
    fn a_feature_set_that_names_no_feature_is_refused_naming_the_features() {
        let e = "exact+sparkles".parse::<KernelFeatures>().unwrap_err();
        assert!(
            e.contains("`sparkles`") && e.contains("nee") && e.contains("triangle"),
            "{e}"
        );
        let e = "full".parse::<KernelFeatures>().unwrap_err();
        assert!(e.contains("`full`") && e.contains("`exact`"), "{e}");
    }
}
