//! A back end ready to render ([`OpenedBackend`]): the host back ends as
//! they are, the GPU back ends each holding the GPU they render on, so that
//! no GPU back end exists without its GPU.

use super::BackendKind;
use super::gpu::Gpu;
use anyhow::Context;

/// A back end ready to render; a GPU back end holds its open GPU (with the
/// module loaded: opened once, shared by every render on it).
#[derive(Clone)]
pub enum OpenedBackend {
    /// `cpu-serial`: one host thread.
    CpuSerial,
    /// `cpu`: the host's threads.
    Cpu,
    /// `cpu-wave`: the wavefront's kernels emulated on the host.
    CpuWave,
    /// `gpu-mega`: the megakernel on this GPU.
    GpuMega(Gpu),
    /// `gpu-wave`: the wavefront on this GPU.
    GpuWave(Gpu),
}

impl OpenedBackend {
    /// Opens `kind`: a GPU back end on device 0, a host back end as it is.
    pub fn open(kind: BackendKind) -> anyhow::Result<Self> {
        match kind {
            BackendKind::GpuMega | BackendKind::GpuWave => {
                let gpu = Gpu::open(0).with_context(|| format!("the {} back end needs a GPU", kind.label()))?;
                OpenedBackend::on(kind, Some(&gpu))
            }
            _ => OpenedBackend::on(kind, None),
        }
    }

    /// `kind` on `gpu`, opened earlier (shared by many back ends), where
    /// it renders on a GPU; a host back end leaves `gpu` unused. A GPU
    /// back end without a GPU is an error that says so.
    pub fn on(kind: BackendKind, gpu: Option<&Gpu>) -> anyhow::Result<Self> {
        Ok(match (kind, gpu) {
            (BackendKind::CpuSerial, _) => OpenedBackend::CpuSerial,
            (BackendKind::Cpu, _) => OpenedBackend::Cpu,
            (BackendKind::CpuWave, _) => OpenedBackend::CpuWave,
            (BackendKind::GpuMega, Some(gpu)) => OpenedBackend::GpuMega(gpu.clone()),
            (BackendKind::GpuWave, Some(gpu)) => OpenedBackend::GpuWave(gpu.clone()),
            (BackendKind::GpuMega | BackendKind::GpuWave, None) => {
                anyhow::bail!("the {} back end needs a GPU", kind.label())
            }
        })
    }

    /// Which back end this is.
    pub fn kind(&self) -> BackendKind {
        match self {
            OpenedBackend::CpuSerial => BackendKind::CpuSerial,
            OpenedBackend::Cpu => BackendKind::Cpu,
            OpenedBackend::CpuWave => BackendKind::CpuWave,
            OpenedBackend::GpuMega(_) => BackendKind::GpuMega,
            OpenedBackend::GpuWave(_) => BackendKind::GpuWave,
        }
    }

    /// The GPU it renders on, for a GPU back end.
    pub fn gpu(&self) -> Option<&Gpu> {
        match self {
            OpenedBackend::GpuMega(gpu) | OpenedBackend::GpuWave(gpu) => Some(gpu),
            _ => None,
        }
    }
}
