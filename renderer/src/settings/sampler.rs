//! Which sampler draws a path's random numbers: the scene's
//! `render.sampler`, `--sampler` and the experiment setting `sampler` all
//! name one of these.

use clap::ValueEnum;

/// A sampler, by the names scenes, the command line and configs use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplerKind {
    /// Independent numbers: a hash of (seed, pixel, sample, bounce,
    /// dimension).
    #[default]
    Hash,
    /// Owen-scrambled Sobol points across the samples of a pixel (Burley
    /// 2020), padded in groups of four dimensions.
    Sobol,
}

impl SamplerKind {
    /// The device crate's value.
    pub fn device(self) -> device::rng::Sampler {
        match self {
            SamplerKind::Hash => device::rng::Sampler::Hash,
            SamplerKind::Sobol => device::rng::Sampler::Sobol,
        }
    }

    /// The name scenes and configs use.
    pub fn name(self) -> &'static str {
        match self {
            SamplerKind::Hash => "hash",
            SamplerKind::Sobol => "sobol",
        }
    }
}

impl From<device::rng::Sampler> for SamplerKind {
    fn from(sampler: device::rng::Sampler) -> Self {
        match sampler {
            device::rng::Sampler::Hash => SamplerKind::Hash,
            device::rng::Sampler::Sobol => SamplerKind::Sobol,
        }
    }
}
