//! Opening a GPU: driver present, device found, PTX chosen and loaded.

use super::{GpuError, driver_error};
use crate::ptx;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use std::sync::{Arc, Mutex};

/// What the report says about the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Resident threads per multiprocessor.
    pub max_threads_per_multiprocessor: u32,
    /// Device memory in bytes.
    pub memory_bytes: usize,
    /// CUDA driver API version (major, minor), e.g. (13, 0).
    pub driver_version: (u32, u32),
    /// The embedded PTX architecture that was loaded (e.g. 90 for sm_90).
    pub ptx_arch: u32,
}

impl GpuInfo {
    /// One line for summaries and CSV metadata.
    pub fn describe(&self) -> String {
        let (ma, mi) = self.compute_capability;
        let (da, di) = self.driver_version;
        format!(
            "{} (sm_{ma}{mi}, {} SMs, {:.0} GiB, CUDA driver {da}.{di}, PTX sm_{})",
            self.name,
            self.multiprocessors,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.ptx_arch
        )
    }
}

/// Resource use of one kernel at one block size, as the driver reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// Entry-point name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Local (stack/spill) memory per thread, bytes.
    pub local_bytes: u32,
    /// Threads per block it was launched with.
    pub block_threads: u32,
    /// Resident blocks per multiprocessor at that block size.
    pub blocks_per_multiprocessor: u32,
    /// Theoretical occupancy: resident threads over the multiprocessor's maximum.
    pub occupancy: f64,
}

/// A register cap and the module JIT-compiled with it.
type CappedModule = (u32, Arc<CudaModule>);

/// An open GPU with the wavepath module loaded. Clones share the context,
/// stream and module.
#[derive(Clone)]
pub struct Gpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    ptx: &'static str,
    /// Modules loaded with a register cap (shared by clones).
    capped: Arc<Mutex<Vec<CappedModule>>>,
    info: GpuInfo,
}

impl Gpu {
    /// Opens device `ordinal`, picks the newest embedded PTX it can run and
    /// JIT-loads it.
    pub fn open(ordinal: usize) -> Result<Self, GpuError> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        cudarc::driver::result::init().map_err(|e| GpuError::NoDevice(super::describe(&e)))?;
        let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice(super::describe(&e)))?;
        if ordinal as i32 >= count {
            return Err(GpuError::NoDevice(format!(
                "device {ordinal} requested, {count} present"
            )));
        }
        let context = CudaContext::new(ordinal).map_err(driver_error("creating a context"))?;
        let name = context.name().map_err(driver_error("reading the device name"))?;
        let (major, minor) = context
            .compute_capability()
            .map_err(driver_error("reading the compute capability"))?;
        let (major, minor) = (major as u32, minor as u32);
        let (ptx_arch, ptx_text) =
            ptx::for_compute_capability(major * 10 + minor).ok_or_else(|| GpuError::NoPtxForDevice {
                name: name.clone(),
                major,
                minor,
                oldest: ptx::PTX_MODULES[0].0,
            })?;
        let module = context
            .load_module(Ptx::from_src(ptx_text))
            .map_err(driver_error(format!("loading the sm_{ptx_arch} PTX module")))?;
        let attribute = |a| {
            context
                .attribute(a)
                .map(|v| v as u32)
                .map_err(driver_error("reading a device attribute"))
        };
        let info = GpuInfo {
            name,
            compute_capability: (major, minor),
            multiprocessors: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_multiprocessor: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )?,
            memory_bytes: context.total_mem().map_err(driver_error("reading the memory size"))?,
            driver_version: driver_version()?,
            ptx_arch,
        };
        let stream = context.default_stream();
        Ok(Gpu {
            context,
            stream,
            module,
            ptx: ptx_text,
            capped: Arc::default(),
            info,
        })
    }

    /// The device description.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// The stream every launch and copy goes through.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize), GpuError> {
        self.context.mem_get_info().map_err(driver_error("reading free memory"))
    }

    /// A timing event recorded now on the stream.
    pub fn timing_event(&self) -> Result<cudarc::driver::CudaEvent, GpuError> {
        self.stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording an event"))
    }

    /// Page-locked host memory for small, frequent readbacks.
    pub fn alloc_pinned(&self, len: usize) -> Result<cudarc::driver::PinnedHostSlice<u8>, GpuError> {
        // SAFETY: the bytes are written by a copy before they are read.
        unsafe { self.context.alloc_pinned::<u8>(len) }.map_err(driver_error("allocating pinned memory"))
    }

    /// The same GPU with every kernel capped at `registers` per thread
    /// (`None`: the module as compiled). Each cap's module is JIT-compiled
    /// once and kept.
    pub fn with_register_cap(&self, registers: Option<u32>) -> Result<Gpu, GpuError> {
        let Some(cap) = registers else {
            return Ok(self.clone());
        };
        let mut capped = self.capped.lock().unwrap_or_else(|e| e.into_inner());
        let module = match capped.iter().find(|(c, _)| *c == cap) {
            Some((_, m)) => m.clone(),
            None => {
                let text = ptx::with_register_cap(self.ptx, cap);
                let m = self
                    .context
                    .load_module(Ptx::from_src(text))
                    .map_err(driver_error(format!(
                        "loading the PTX module capped at {cap} registers"
                    )))?;
                capped.push((cap, m.clone()));
                m
            }
        };
        Ok(Gpu { module, ..self.clone() })
    }

    /// A kernel of the loaded module.
    pub fn function(&self, name: &str) -> Result<CudaFunction, GpuError> {
        self.module
            .load_function(name)
            .map_err(driver_error(format!("looking up kernel `{name}`")))
    }

    /// Registers, local memory and theoretical occupancy of `function` at
    /// `block_threads` threads per block; a block larger than the kernel's
    /// registers allow is a configuration error.
    pub fn kernel_info(&self, name: &str, function: &CudaFunction, block_threads: u32) -> Result<KernelInfo, GpuError> {
        let attr = |a| {
            function
                .get_attribute(a)
                .map(|v| v as u32)
                .map_err(driver_error(format!("reading attributes of `{name}`")))
        };
        let registers = attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
        let max_threads = attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        if block_threads > max_threads {
            return Err(GpuError::Config {
                what: "launch",
                error: format!(
                    "`{name}` uses {registers} registers per thread, which allows at most {max_threads} \
                     threads per block, not {block_threads}"
                ),
            });
        }
        let blocks = function
            .occupancy_max_active_blocks_per_multiprocessor(block_threads, 0, None)
            .map_err(driver_error(format!("computing the occupancy of `{name}`")))?;
        Ok(KernelInfo {
            name: name.to_string(),
            registers,
            local_bytes: attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            block_threads,
            blocks_per_multiprocessor: blocks,
            occupancy: (blocks * block_threads) as f64 / self.info.max_threads_per_multiprocessor as f64,
        })
    }
}

fn driver_version() -> Result<(u32, u32), GpuError> {
    let mut v = 0i32;
    // SAFETY: writes one int; the library is loaded (checked in `open`).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(driver_error("reading the driver version"))?;
    Ok((v as u32 / 1000, (v as u32 % 1000) / 10))
}
