//! Opening a GPU: driver present, device found, PTX chosen and loaded; and
//! the calls that wait for it, whose errors name the launch that faulted
//! ([`super::in_flight`]).

use super::error::{GpuError, describe};
use super::in_flight::InFlight;
use super::launch_site::LaunchSite;
use crate::io::input_file::read_text;
use crate::system::ptx;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute, cudaError_enum as Code};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use device::bound::Arithmetic;
use device::features::Features;
use device::kernel::EntryPoint;
use device::kernels::fault::FaultTrap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What the driver loads for `text`: the PTX itself, for its JIT, or the
/// machine code `assembler` makes of it for `sm_{arch}`.
fn machine_code(assembler: Option<&Path>, text: String, arch: u32) -> Result<Ptx, GpuError> {
    match assembler {
        None => Ok(Ptx::from_src(text)),
        Some(ptxas) => ptx::assemble(ptxas, &text, arch)
            .map(Ptx::from_binary)
            .map_err(|error| GpuError::Config { what: "PTX", error }),
    }
}

/// The PTX module that `WAVEPATH_PTX` names, if it names one
/// ([`read_outside_module`]), and the architecture its `.target` line
/// gives: the GPU back ends load it in place of the embedded one. It must
/// come from the device crate of the same commit (the argument structs are
/// the binary's). For measuring a variant of the kernels without
/// rebuilding the host; the binary's summary names the file, and
/// `experiment` refuses it. The file is read once per process, at the first
/// GPU's opening, and lives as long as the process, as an embedded module
/// does: every GPU a render opens loads the same text.
fn outside_module() -> Result<Option<&'static OutsideModule>, String> {
    static MODULE: OnceLock<Result<Option<OutsideModule>, String>> = OnceLock::new();
    let module = MODULE.get_or_init(|| {
        let Some(path) = std::env::var_os("WAVEPATH_PTX")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
        else {
            return Ok(None);
        };
        let (arch, text) = read_outside_module(&path)?;
        Ok(Some(OutsideModule { path, arch, text }))
    });
    module.as_ref().map(Option::as_ref).map_err(Clone::clone)
}

/// A PTX module that `WAVEPATH_PTX` names, as read.
struct OutsideModule {
    /// The file.
    path: PathBuf,
    /// The architecture its `.target` line gives.
    arch: u32,
    /// Its text.
    text: String,
}

/// The architecture and text of the PTX module in the file at `path`, read
/// as an input is: a regular file of at most [`ptx::MAX_PTX_FILE_BYTES`],
/// UTF-8 text that [`ptx::module_arch`] accepts. Errors name the file as
/// `WAVEPATH_PTX` does.
fn read_outside_module(path: &Path) -> Result<(u32, String), String> {
    let named = |problem: String| format!("WAVEPATH_PTX={}: {problem}", path.display());
    let text = read_text(path, ptx::MAX_PTX_FILE_BYTES).map_err(named)?;
    let arch = ptx::module_arch(&text).map_err(named)?;
    Ok((arch, text))
}

/// What the report says about the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// The driver's ordinal of the device (0 for the first).
    pub ordinal: usize,
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
    /// The PTX architecture that was loaded (e.g. 90 for sm_90).
    pub ptx_arch: u32,
    /// The file the PTX came from instead, where `WAVEPATH_PTX` named one.
    pub ptx_file: Option<PathBuf>,
}

impl GpuInfo {
    /// One line for summaries and CSV metadata.
    pub fn describe(&self) -> String {
        let (ma, mi) = self.compute_capability;
        let (da, di) = self.driver_version;
        let file = self
            .ptx_file
            .as_ref()
            .map_or(String::new(), |f| format!(" from {}", f.display()));
        format!(
            "{} (sm_{ma}{mi}, {} SMs, {:.0} GiB, CUDA driver {da}.{di}, PTX sm_{}{file})",
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

/// A kernel's module as loaded: its register cap (`None`: as compiled),
/// the features bound into it (`None` for a kernel that reads none), its
/// arithmetic and its entry point's name.
type ModuleKey = (Option<u32>, Option<Features>, Arithmetic, &'static str);

/// The modules loaded so far, by key.
type Modules = Vec<(ModuleKey, Arc<CudaModule>)>;

/// An open GPU. Each kernel is JIT-compiled on first use, alone in its
/// module ([`ptx::entry_module`]), once per register cap, feature set
/// ([`device::features`]) and arithmetic bound into it. Clones share the
/// context, stream and modules; each clone has its own cap, features and
/// arithmetic.
#[derive(Clone)]
pub struct Gpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ptx: &'static str,
    /// The register cap of the kernels this handle looks up.
    cap: Option<u32>,
    /// The features bound into the kernels this handle looks up (`None`:
    /// none given, and a kernel that reads its features cannot load).
    features: Option<Features>,
    /// The arithmetic the kernels this handle looks up are bound to.
    arithmetic: Arithmetic,
    /// Every module loaded so far (shared by clones).
    modules: Arc<Mutex<Modules>>,
    /// Launches not yet seen to finish, and the fault, once one happens
    /// (shared by clones: they share the stream).
    in_flight: Arc<Mutex<InFlight>>,
    /// `CUDA_LAUNCH_BLOCKING=1`: every launch call waits for its kernel.
    launch_blocking: bool,
    /// The outside ptxas that assembles each module, if one is named
    /// ([`ptx::outside_assembler`]); otherwise the driver JIT-compiles it.
    assembler: Option<PathBuf>,
    info: GpuInfo,
}

impl Gpu {
    /// Opens device `ordinal`, picks the newest embedded PTX it can run and
    /// JIT-loads its smallest kernel, so that a PTX the driver cannot load
    /// is found here.
    pub fn open(ordinal: usize) -> Result<Self, GpuError> {
        let count = Gpu::count()?;
        if ordinal >= count {
            return Err(GpuError::NoDevice(format!(
                "device {ordinal} requested, {count} present"
            )));
        }
        let context = CudaContext::new(ordinal).map_err(open_error("creating a context"))?;
        let name = context.name().map_err(open_error("reading the device name"))?;
        let (major, minor) = context
            .compute_capability()
            .map_err(open_error("reading the compute capability"))?;
        let (major, minor) = (major as u32, minor as u32);
        let outside = outside_module().map_err(|error| GpuError::Config { what: "PTX", error })?;
        let (ptx_file, (ptx_arch, ptx_text)) = match outside {
            Some(module) => (Some(module.path.clone()), (module.arch, module.text.as_str())),
            None => (None, choose_ptx(&name, (major, minor), ptx::PTX_MODULES)?),
        };
        let ptx_name = ptx::module_name(ptx_arch, ptx_file.as_deref());
        let probe = FaultTrap::NAME;
        let probe_text = ptx::entry_module(ptx_text, probe).ok_or_else(|| GpuError::Config {
            what: "PTX",
            error: format!("{ptx_name} has no kernel `{probe}`"),
        })?;
        let assembler = ptx::outside_assembler();
        let image = machine_code(assembler.as_deref(), probe_text, major * 10 + minor)?;
        let module = context.load_module(image).map_err(|e| module_error(&ptx_name, e))?;
        let attribute = |a| {
            context
                .attribute(a)
                .map(|v| v as u32)
                .map_err(open_error("reading a device attribute"))
        };
        let info = GpuInfo {
            ordinal,
            name,
            compute_capability: (major, minor),
            multiprocessors: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_multiprocessor: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )?,
            memory_bytes: context.total_mem().map_err(open_error("reading the memory size"))?,
            driver_version: driver_version()?,
            ptx_arch,
            ptx_file,
        };
        let stream = context.default_stream();
        Ok(Gpu {
            context,
            stream,
            ptx: ptx_text,
            cap: None,
            features: None,
            arithmetic: Arithmetic::Exact,
            modules: Arc::new(Mutex::new(vec![((None, None, Arithmetic::Exact, probe), module)])),
            in_flight: Arc::default(),
            launch_blocking: std::env::var("CUDA_LAUNCH_BLOCKING").is_ok_and(|v| v.trim() == "1"),
            assembler,
            info,
        })
    }

    /// How many GPUs the driver sees; an error where there is no driver.
    pub fn count() -> Result<usize, GpuError> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        cudarc::driver::result::init().map_err(|e| GpuError::NoDevice(describe(&e)))?;
        let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice(describe(&e)))?;
        Ok(count.max(0) as usize)
    }

    /// Makes this GPU's context current on the calling thread: a thread
    /// that renders on a GPU opened by another calls this first.
    pub fn bind_to_thread(&self) -> Result<(), GpuError> {
        self.context
            .bind_to_thread()
            .map_err(self.error("making the GPU's context current on a render thread"))
    }

    /// How messages name the PTX module its kernels come from.
    fn ptx_name(&self) -> String {
        ptx::module_name(self.info.ptx_arch, self.info.ptx_file.as_deref())
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
        self.context.mem_get_info().map_err(self.error("reading free memory"))
    }

    /// A timing event recorded now on the stream.
    pub fn timing_event(&self) -> Result<cudarc::driver::CudaEvent, GpuError> {
        self.stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(self.error("recording an event"))
    }

    /// Waits for everything queued on the stream; `action` says what the
    /// wait is for in an error. A kernel fault is reported here as
    /// [`GpuError::KernelFault`], naming the launch.
    pub fn synchronize(&self, action: &str) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(|e| self.error(action.to_string())(e))?;
        self.in_flight().all_finished();
        Ok(())
    }

    /// Maps a driver error met while doing `action` on this GPU: a kernel
    /// fault names the launch it came from ([`GpuError::KernelFault`]), or
    /// the fault that lost the context earlier ([`GpuError::ContextLost`]);
    /// anything else is a [`GpuError::Driver`].
    pub fn error(&self, action: impl Into<String> + 'static) -> impl FnOnce(DriverError) -> GpuError + '_ {
        move |e| self.in_flight().error(action.into(), &e)
    }

    /// Records a kernel launch just queued; `failed`: its launch call
    /// returned an error (reported next through [`Gpu::error`]).
    pub(crate) fn launched(&self, site: LaunchSite, failed: bool) {
        // A blocking launch call returns once the kernel is done, so the
        // launches before it are done too. A launch call that fails without
        // blocking reports an earlier fault: the kernel never started.
        if self.launch_blocking || !failed {
            self.in_flight().launched(site, self.launch_blocking && !failed);
        }
    }

    /// A mark after every launch queued so far, for [`Gpu::finished_through`].
    pub(crate) fn launch_mark(&self) -> u64 {
        self.in_flight().mark()
    }

    /// The launches queued before `mark` are known to have finished.
    pub(crate) fn finished_through(&self, mark: u64) {
        self.in_flight().finished_through(mark);
    }

    fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Page-locked host memory for small, frequent readbacks (read it
    /// through [`super::buffers::PinnedCopy`], which waits for its copy).
    pub(crate) fn alloc_pinned(&self, len: usize) -> Result<cudarc::driver::PinnedHostSlice<u8>, GpuError> {
        // SAFETY: the bytes are only read through `PinnedCopy::read`,
        // after a copy into them has finished.
        unsafe { self.context.alloc_pinned::<u8>(len) }.map_err(self.error("allocating pinned host memory"))
    }

    /// An event without timing, to record on the stream and wait for.
    pub(crate) fn marker_event(&self) -> Result<cudarc::driver::CudaEvent, GpuError> {
        self.context.new_event(None).map_err(self.error("creating an event"))
    }

    /// The same GPU with every kernel it looks up capped at `registers`
    /// per thread (`None`: as compiled).
    pub fn with_register_cap(&self, registers: Option<u32>) -> Gpu {
        Gpu {
            cap: registers,
            ..self.clone()
        }
    }

    /// The same GPU with `features` bound into every kernel it looks up
    /// that reads its features.
    pub fn with_features(&self, features: Features) -> Gpu {
        Gpu {
            features: Some(features),
            ..self.clone()
        }
    }

    /// The same GPU with every kernel it looks up bound to `arithmetic`.
    pub fn with_arithmetic(&self, arithmetic: Arithmetic) -> Gpu {
        Gpu {
            arithmetic,
            ..self.clone()
        }
    }

    /// The kernel `name`, JIT-compiled under this handle's register cap and
    /// with its features and arithmetic bound, on first use. A kernel that
    /// reads no features is kept under no feature set, so that handles
    /// bound to different sets share it.
    pub fn function(&self, name: &'static str) -> Result<CudaFunction, GpuError> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let cached = |features| {
            modules
                .iter()
                .find(|(k, _)| *k == (self.cap, features, self.arithmetic, name))
        };
        let module = match cached(self.features).or_else(|| cached(None)) {
            Some((_, m)) => m.clone(),
            None => {
                let (key, m) = self.load(name)?;
                modules.push((key, m.clone()));
                m
            }
        };
        drop(modules);
        module
            .load_function(name)
            .map_err(self.error(format!("looking up kernel `{name}`")))
    }

    /// Kernel `name` alone in a module, its features bound and its
    /// registers capped as this handle says, JIT-compiled; and the key it
    /// is cached under.
    fn load(&self, name: &'static str) -> Result<(ModuleKey, Arc<CudaModule>), GpuError> {
        let config = |error| GpuError::Config { what: "kernel", error };
        let text = ptx::entry_module(self.ptx, name)
            .ok_or_else(|| config(format!("{} has no kernel `{name}`", self.ptx_name())))?;
        let (text, bound) = ptx::with_features(&text, self.features, self.arithmetic)
            .map_err(|error| config(format!("kernel `{name}`: {error}")))?;
        let text = match self.cap {
            Some(cap) => ptx::with_register_cap(&text, cap),
            None => text,
        };
        let cap = self
            .cap
            .map_or("as compiled".into(), |c| format!("capped at {c} registers"));
        let features = bound.map_or(String::new(), |f| format!(", features {f}"));
        let arithmetic = match self.arithmetic {
            Arithmetic::Exact => "",
            Arithmetic::Fast => ", fast arithmetic",
        };
        let (major, minor) = self.info.compute_capability;
        let image = machine_code(self.assembler.as_deref(), text, major * 10 + minor)?;
        let m = self
            .context
            .load_module(image)
            .map_err(self.error(format!("loading kernel `{name}` ({cap}{features}{arithmetic})")))?;
        Ok(((self.cap, bound, self.arithmetic, name), m))
    }

    /// Registers, local memory and theoretical occupancy of `function` at
    /// `block_threads` threads per block; a block larger than the kernel's
    /// registers allow is a configuration error.
    pub fn kernel_info(&self, name: &str, function: &CudaFunction, block_threads: u32) -> Result<KernelInfo, GpuError> {
        let attr = |a| {
            function
                .get_attribute(a)
                .map(|v| v as u32)
                .map_err(self.error(format!("reading attributes of `{name}`")))
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
            .map_err(self.error(format!("computing the occupancy of `{name}`")))?;
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

/// The newest of the embedded `modules` (ascending by architecture) that a
/// device `name` of compute capability `(major, minor)` can load: PTX for an
/// older architecture is JIT-compiled forward by the driver, never back.
/// A binary built without PTX (`modules` empty) is told how to rebuild.
pub fn choose_ptx<'a>(
    name: &str,
    (major, minor): (u32, u32),
    modules: &[(u32, &'a str)],
) -> Result<(u32, &'a str), GpuError> {
    if modules.is_empty() {
        return Err(GpuError::NoPtx {
            name: name.to_string(),
            major,
            minor,
        });
    }
    let cc = major * 10 + minor;
    modules
        .iter()
        .rev()
        .find(|(arch, _)| *arch <= cc)
        .copied()
        .ok_or_else(|| GpuError::NoPtxForDevice {
            name: name.to_string(),
            major,
            minor,
            embedded: modules.iter().map(|(arch, _)| *arch).collect(),
        })
}

/// The error of loading the module `ptx_name` names
/// ([`ptx::module_name`]): a driver too old for the PTX's ISA version says
/// so.
fn module_error(ptx_name: &str, e: DriverError) -> GpuError {
    let action = format!("loading {ptx_name}");
    if e.0 == Code::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
        let (major, minor) = driver_version().unwrap_or((0, 0));
        return open_error(format!(
            "{action} (the CUDA driver, version {major}.{minor}, is older than the PTX it was built \
             into: update the NVIDIA driver, or rebuild for an older architecture with WAVEPATH_CUDA_ARCHS)"
        ))(e);
    }
    open_error(action)(e)
}

/// Maps a driver error met while opening the device: a kernel fault means
/// that this process lost the device's (shared, primary) context earlier.
fn open_error(action: impl Into<String>) -> impl FnOnce(DriverError) -> GpuError {
    move |e| InFlight::default().error(action.into(), &e)
}

fn driver_version() -> Result<(u32, u32), GpuError> {
    let mut v = 0i32;
    // SAFETY: writes one int; the library is loaded (checked in `open`).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(open_error("reading the driver version"))?;
    Ok((v as u32 / 1000, (v as u32 % 1000) / 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULES: &[(u32, &str)] = &[(75, "sm_75 text"), (80, "sm_80 text"), (90, "sm_90 text")];

    #[test]
    fn the_newest_module_not_newer_than_the_device_is_chosen() {
        let choose = |cc| choose_ptx("a GPU", cc, MODULES).map(|(arch, text)| (arch, text.to_string()));
        assert_eq!(choose((9, 0)).unwrap(), (90, "sm_90 text".into()));
        assert_eq!(choose((12, 0)).unwrap().0, 90);
        assert_eq!(choose((8, 9)).unwrap().0, 80);
        assert_eq!(choose((8, 6)).unwrap().0, 80);
        assert_eq!(choose((7, 5)).unwrap().0, 75);
        // The embedded modules themselves.
        let newest = ptx::PTX_MODULES[ptx::PTX_MODULES.len() - 1].0;
        assert_eq!(
            choose_ptx("a GPU", (newest / 10 + 1, 0), ptx::PTX_MODULES).unwrap().0,
            newest
        );
    }

    #[test]
    fn a_device_older_than_every_module_is_told_how_to_rebuild() {
        let e = choose_ptx("Tesla V100", (7, 0), MODULES).unwrap_err();
        let text = e.to_string();
        eprintln!("{text}");
        assert!(
            text.starts_with("Tesla V100 has compute capability 7.0 (sm_70), older than every PTX module embedded"),
            "{text}"
        );
        assert!(text.contains("(sm_75, sm_80, sm_90)"), "{text}");
        assert!(
            text.contains("WAVEPATH_CUDA_ARCHS=sm_70 cargo build --release"),
            "{text}"
        );
    }

    #[test]
    fn a_binary_built_without_ptx_is_told_how_to_rebuild() {
        let e = choose_ptx("NVIDIA H100", (9, 0), &[]).unwrap_err();
        assert!(matches!(e, GpuError::NoPtx { .. }), "{e}");
        let text = e.to_string();
        eprintln!("{text}");
        assert!(
            text.starts_with("NVIDIA H100 (compute capability 9.0) cannot run a GPU back end of this binary"),
            "{text}"
        );
        assert!(text.contains("built without PTX (WAVEPATH_CUDA_ARCHS=none)"), "{text}");
        assert!(
            text.contains("`WAVEPATH_CUDA_ARCHS=sm_90 cargo build --release` for this GPU"),
            "{text}"
        );
    }

    #[test]
    fn opening_without_a_gpu_says_what_is_missing_and_what_to_do() {
        match Gpu::open(0) {
            Ok(gpu) => eprintln!("SKIPPED: a GPU is present ({})", gpu.info().describe()),
            Err(e) => {
                let text = e.to_string();
                eprintln!("{text}");
                match e {
                    GpuError::NoDriver => assert!(text.contains("libcuda") && text.contains("NVIDIA driver"), "{text}"),
                    GpuError::NoDevice(_) => assert!(text.contains("nvidia-smi"), "{text}"),
                    other => panic!("unexpected error opening the GPU: {other}"),
                }
            }
        }
        let text = GpuError::NoDevice("device 1 requested, 1 present".into()).to_string();
        assert!(
            text.starts_with("no CUDA device is available (device 1 requested, 1 present); check `nvidia-smi`"),
            "{text}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_outside_module_is_read_as_an_input_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("probe.ptx");
        let named = |e: String| {
            let prefix = format!("WAVEPATH_PTX={}: ", file.display());
            e.strip_prefix(&prefix).unwrap_or_else(|| panic!("{e}")).to_string()
        };
        std::fs::write(&file, ".version 8.7\n.target sm_90\n.entry k()\n{\n}\n").unwrap();
        let (arch, text) = read_outside_module(&file).unwrap();
        assert_eq!((arch, text.lines().count()), (90, 5));

        std::fs::write(&file, ".target sm_90\n.entry k()\0\n").unwrap();
        assert!(named(read_outside_module(&file).unwrap_err()).starts_with("holds a NUL byte"));
        std::fs::write(&file, b".target sm_90\n\xff\n").unwrap();
        assert!(named(read_outside_module(&file).unwrap_err()).starts_with("is not UTF-8"));
        std::fs::write(&file, ".version 8.7\n").unwrap();
        assert_eq!(
            named(read_outside_module(&file).unwrap_err()),
            "no `.target sm_NN` line"
        );
        let huge = std::fs::File::create(&file).unwrap();
        huge.set_len(ptx::MAX_PTX_FILE_BYTES + 1).unwrap();
        let e = named(read_outside_module(&file).unwrap_err());
        assert!(
            e.contains(&format!("the limit is {} bytes", ptx::MAX_PTX_FILE_BYTES)),
            "{e}"
        );
        std::fs::remove_file(&file).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&file).status().unwrap();
        assert!(made.success());
        assert_eq!(
            named(read_outside_module(&file).unwrap_err()),
            "is a FIFO, not a regular file"
        );
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        assert_eq!(
            named(read_outside_module(&file).unwrap_err()),
            "is a device, not a regular file"
        );
    }
}
