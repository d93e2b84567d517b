//! Which back ends a setting or a command-line flag concerns ([`Scope`]),
//! and the one check that refuses a flag that none of the back ends a
//! command runs would use ([`check_flags`]): every command calls it once
//! its back ends are known (`auto` resolved), before any work.

use super::backend::BackendKind;
use super::choice::prose_list;

/// The back ends a setting or a flag concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every back end.
    Every,
    /// The back ends that render on the host: cpu-serial, cpu and cpu-wave.
    Host,
    /// The `cpu` back end alone (its thread pool).
    Cpu,
    /// The GPU megakernel.
    Megakernel,
    /// The wavefront, on the GPU and emulated on the host.
    Wavefront,
    /// The back ends whose kernels dispatch on materials: the megakernel
    /// and both wavefronts.
    Dispatching,
    /// The GPU back ends.
    Gpu,
    /// The GPU wavefront alone.
    GpuWave,
}

impl Scope {
    /// True where the setting or flag changes what `backend` does.
    pub fn contains(self, backend: BackendKind) -> bool {
        match self {
            Scope::Every => true,
            Scope::Host => !backend.is_gpu(),
            Scope::Cpu => backend == BackendKind::Cpu,
            Scope::Megakernel => backend == BackendKind::GpuMega,
            Scope::Wavefront => backend.is_wavefront(),
            Scope::Dispatching => backend == BackendKind::GpuMega || backend.is_wavefront(),
            Scope::Gpu => backend.is_gpu(),
            Scope::GpuWave => backend == BackendKind::GpuWave,
        }
    }

    /// The back ends it concerns, in [`BackendKind::ALL`]'s order.
    pub fn members(self) -> Vec<BackendKind> {
        BackendKind::ALL.into_iter().filter(|&b| self.contains(b)).collect()
    }
}

/// A command-line flag that only the back ends of its scope use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendFlag {
    /// The flag as typed, e.g. `--capacity`.
    pub flag: &'static str,
    /// The back ends that use it.
    pub scope: Scope,
}

/// `the cpu back end`, `the gpu-wave and cpu-wave back ends`.
fn back_ends(kinds: &[BackendKind]) -> String {
    let names: Vec<&str> = kinds.iter().map(|k| k.label()).collect();
    let plural = if names.len() == 1 { "" } else { "s" };
    format!("the {} back end{plural}", prose_list(&names, "and"))
}

/// Refuses the flags of `given` that none of `backends` (the back ends the
/// command runs) would use: they would be ignored. The message says, one
/// line a flag, the back ends each applies to and those that would ignore
/// it.
pub fn check_flags(given: &[BackendFlag], backends: &[BackendKind]) -> Result<(), String> {
    let refusals: Vec<String> = given
        .iter()
        .filter(|f| !backends.iter().any(|&b| f.scope.contains(b)))
        .map(|ignored| {
            let members = ignored.scope.members();
            let choices: Vec<&str> = members.iter().map(|k| k.label()).collect();
            format!(
                "{flag} applies to {}; {} would ignore it: leave {flag} out or choose {}",
                back_ends(&members),
                back_ends(backends),
                prose_list(&choices, "or"),
                flag = ignored.flag,
            )
        })
        .collect();
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(refusals.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPACITY: BackendFlag = BackendFlag {
        flag: "--capacity",
        scope: Scope::Wavefront,
    };

    #[test]
    fn scopes_hold_the_back_ends_they_name() {
        use BackendKind::*;
        assert_eq!(Scope::Every.members(), BackendKind::ALL);
        assert_eq!(Scope::Host.members(), [CpuSerial, Cpu, CpuWave]);
        assert_eq!(Scope::Cpu.members(), [Cpu]);
        assert_eq!(Scope::Megakernel.members(), [GpuMega]);
        assert_eq!(Scope::Wavefront.members(), [GpuWave, CpuWave]);
        assert_eq!(Scope::Dispatching.members(), [GpuMega, GpuWave, CpuWave]);
        assert_eq!(Scope::Gpu.members(), [GpuMega, GpuWave]);
        assert_eq!(Scope::GpuWave.members(), [GpuWave]);
    }

    #[test]
    fn a_flag_is_refused_only_where_no_back_end_uses_it() {
        assert_eq!(check_flags(&[CAPACITY], &[BackendKind::CpuWave]), Ok(()));
        assert_eq!(
            check_flags(&[CAPACITY], &[BackendKind::Cpu, BackendKind::GpuWave]),
            Ok(())
        );
        assert_eq!(check_flags(&[], &[BackendKind::Cpu]), Ok(()));
        assert_eq!(
            check_flags(&[CAPACITY], &[BackendKind::Cpu]).unwrap_err(),
            "--capacity applies to the gpu-wave and cpu-wave back ends; the cpu back end would ignore it: \
             leave --capacity out or choose gpu-wave or cpu-wave"
        );
        let e = check_flags(&[CAPACITY], &[BackendKind::Cpu, BackendKind::GpuMega]).unwrap_err();
        assert!(e.contains("the cpu and gpu-mega back ends would ignore it"), "{e}");
        // Every flag ignored is named, one a line.
        let profile = BackendFlag {
            flag: "--profile",
            scope: Scope::Host,
        };
        let e = check_flags(&[CAPACITY, profile], &[BackendKind::GpuMega]).unwrap_err();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 2, "{e}");
        assert!(
            lines[0].starts_with("--capacity applies") && lines[1].starts_with("--profile applies"),
            "{e}"
        );
    }
}
