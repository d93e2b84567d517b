//! Which back end renders: a concrete one ([`BackendKind`]), or `auto`
//! ([`BackendChoice`]), and the names both go by ([`BackendArg`]).

use clap::ValueEnum;

/// Which back end renders, by the names the command line and configs use
/// (where `auto` is no choice: `verify`, `bench`, a study's back ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// One CPU thread.
    CpuSerial,
    /// Every CPU core.
    Cpu,
    /// The GPU megakernel.
    GpuMega,
    /// The GPU wavefront.
    GpuWave,
    /// The wavefront's kernels emulated on the host (a correctness tool).
    CpuWave,
}

impl BackendKind {
    /// Every back end, in the order messages list them.
    pub const ALL: [BackendKind; 5] = [
        BackendKind::CpuSerial,
        BackendKind::Cpu,
        BackendKind::GpuMega,
        BackendKind::GpuWave,
        BackendKind::CpuWave,
    ];

    /// The name used on the command line and in reports.
    pub fn label(self) -> &'static str {
        match self {
            BackendKind::CpuSerial => "cpu-serial",
            BackendKind::Cpu => "cpu",
            BackendKind::GpuMega => "gpu-mega",
            BackendKind::GpuWave => "gpu-wave",
            BackendKind::CpuWave => "cpu-wave",
        }
    }

    /// True for the back ends that need a GPU.
    pub fn is_gpu(self) -> bool {
        matches!(self, BackendKind::GpuMega | BackendKind::GpuWave)
    }

    /// True for the wavefront back ends (which take the wavefront's settings).
    pub fn is_wavefront(self) -> bool {
        matches!(self, BackendKind::GpuWave | BackendKind::CpuWave)
    }
}

/// Which back end a render asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The fastest available: a GPU when there is one, else `cpu`.
    Auto,
    /// Exactly this one.
    Exactly(BackendKind),
}

/// A back end, or `auto`, by the names the command line and configs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// `gpu-mega` when a GPU is usable, otherwise `cpu` (and it says so).
    Auto,
    /// One CPU thread.
    CpuSerial,
    /// All CPU cores.
    Cpu,
    /// The GPU megakernel.
    GpuMega,
    /// The GPU wavefront.
    GpuWave,
    /// The wavefront's kernels emulated on the host (slow; a correctness tool).
    CpuWave,
}

impl BackendArg {
    /// The choice this name stands for.
    pub fn choice(self) -> BackendChoice {
        match self {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::CpuSerial => BackendChoice::Exactly(BackendKind::CpuSerial),
            BackendArg::Cpu => BackendChoice::Exactly(BackendKind::Cpu),
            BackendArg::GpuMega => BackendChoice::Exactly(BackendKind::GpuMega),
            BackendArg::GpuWave => BackendChoice::Exactly(BackendKind::GpuWave),
            BackendArg::CpuWave => BackendChoice::Exactly(BackendKind::CpuWave),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_back_end_is_listed_once_under_its_command_line_name() {
        let named: Vec<BackendChoice> = BackendArg::value_variants().iter().map(|a| a.choice()).collect();
        let listed: Vec<BackendChoice> = BackendKind::ALL.iter().map(|&k| BackendChoice::Exactly(k)).collect();
        assert_eq!(named.len(), listed.len() + 1, "every name but auto is a back end");
        for kind in BackendKind::ALL {
            let arg = BackendArg::from_str(kind.label(), false).unwrap();
            assert_eq!(arg.choice(), BackendChoice::Exactly(kind));
        }
        // Where `auto` is no choice, the names are the back ends' alone.
        let kinds: Vec<String> = BackendKind::value_variants()
            .iter()
            .filter_map(|k| k.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect();
        assert_eq!(kinds, BackendKind::ALL.map(|k| k.label().to_string()));
    }
}
