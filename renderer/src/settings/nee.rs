//! Next-event estimation on or off: the scene's `render.nee` (a boolean),
//! `--nee on|off` and the experiment setting `nee` all name one of these.

use clap::ValueEnum;

/// Whether paths sample the lights directly, by the names the command line
/// and configs use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum NeeMode {
    /// Light is found by scattered rays only.
    #[default]
    Off,
    /// Every diffuse hit also sends a shadow ray to a light, weighted
    /// against scattering by multiple importance sampling.
    On,
}

impl NeeMode {
    /// The device crate's value.
    pub fn device(self) -> device::scene::Nee {
        match self {
            NeeMode::Off => device::scene::Nee::Off,
            NeeMode::On => device::scene::Nee::On,
        }
    }

    /// The name the command line and configs use.
    pub fn name(self) -> &'static str {
        match self {
            NeeMode::Off => "off",
            NeeMode::On => "on",
        }
    }
}

impl From<bool> for NeeMode {
    fn from(on: bool) -> Self {
        if on { NeeMode::On } else { NeeMode::Off }
    }
}

impl From<device::scene::Nee> for NeeMode {
    fn from(nee: device::scene::Nee) -> Self {
        match nee {
            device::scene::Nee::Off => NeeMode::Off,
            device::scene::Nee::On => NeeMode::On,
        }
    }
}
