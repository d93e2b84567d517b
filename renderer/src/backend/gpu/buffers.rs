//! Device memory: the scene, typed buffers, and kernel arguments passed by
//! value. Every device allocation goes through [`alloc_zeros`], which
//! refuses one larger than the free memory before asking the driver, and
//! reports either refusal as [`GpuError::OutOfMemory`].

use super::device::Gpu;
use super::error::GpuError;
use crate::backend::{RenderJob, SizedBy};
use crate::prepared::PreparedScene;
use cudarc::driver::sys::cudaError_enum as Code;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
use device::accel::AccelView;
use device::camera::Camera;
use device::features::Features;
use device::geometry::Primitives;
use device::kernel::{AsBytes, Plain};
use device::light::LightView;
use device::scene::SceneView;
use device::slice::DeviceSlice;
use device::texture::Textures;
use std::marker::PhantomData;

/// A kernel's `#[repr(C)]` argument struct, passed by value.
#[repr(transparent)]
pub struct KernelArg<T>(pub T);

// SAFETY: only `Timeline::launch` wraps values, and only kernels' argument
// structs, whose layout is identical on both targets (see `device::launch`).
unsafe impl<T: Copy> DeviceRepr for KernelArg<T> {}

/// An array of `#[repr(C)]` values without padding ([`AsBytes`]) in device
/// memory, stored as bytes (the device crate's types cannot implement
/// cudarc's traits themselves).
pub struct DeviceArray<T> {
    bytes: CudaSlice<u8>,
    len: usize,
    _type: PhantomData<T>,
}

/// The device address of an allocation, for a pointer kernel argument.
pub fn device_address<T>(gpu: &Gpu, buffer: &CudaSlice<T>) -> *mut T {
    let (ptr, _sync) = buffer.device_ptr(gpu.stream());
    ptr as *mut T
}

/// Page-locked host memory that an asynchronous copy from the device
/// fills, and the event recorded on the stream after that copy: the host
/// queues the copy and goes on, and [`PinnedCopy::read`] waits for it.
///
/// The event is this type's own because cudarc records the event of a
/// `PinnedHostSlice` only on a context that has several streams: on ours,
/// with one, `PinnedHostSlice::as_slice` returns at once, copy or not, and
/// would hand back whatever the memory held before (a pinned allocation
/// may reuse one that held another render's schedule).
pub struct PinnedCopy {
    bytes: PinnedHostSlice<u8>,
    copied: CudaEvent,
}

impl PinnedCopy {
    /// Room for `len` bytes, not yet copied into.
    pub fn new(gpu: &Gpu, len: usize) -> Result<Self, GpuError> {
        Ok(PinnedCopy {
            bytes: gpu.alloc_pinned(len)?,
            copied: gpu.marker_event()?,
        })
    }

    /// Queues a copy of the first bytes of `source` (as many as this
    /// holds) after the work queued before it; `what` names them in errors.
    pub fn copy_from(&mut self, gpu: &Gpu, source: &DeviceBuffer<u8>, what: &str) -> Result<(), GpuError> {
        let len = self.bytes.len();
        gpu.stream()
            .memcpy_dtoh(&source.raw().slice(..len), &mut self.bytes)
            .map_err(gpu.error(format!("reading {what}")))?;
        self.copied
            .record(gpu.stream())
            .map_err(gpu.error(format!("reading {what}")))
    }

    /// Waits for the last copy queued and returns its bytes (those of a
    /// copy not yet made are zeros or stale: call after [`Self::copy_from`]).
    pub fn read(&self, gpu: &Gpu, what: &str) -> Result<&[u8], GpuError> {
        self.copied
            .synchronize()
            .map_err(gpu.error(format!("reading {what}")))?;
        self.bytes.as_slice().map_err(gpu.error(format!("reading {what}")))
    }
}

/// Zeroed device memory for `len` values of a plain type, typed on both
/// sides: the kernels get a `*mut T`, the host reads back `Vec<T>`. Both GPU
/// back ends allocate and read back through it (the wavefront's as raw
/// bytes, laid out by the device crate's declarations).
pub struct DeviceBuffer<T> {
    bytes: CudaSlice<u8>,
    len: usize,
    _type: PhantomData<T>,
}

impl<T: Plain> DeviceBuffer<T> {
    /// Allocates `len` zeroed values; `what` names them in errors, and
    /// `sized_by` says what to shrink when they do not fit.
    pub fn zeroed(gpu: &Gpu, what: &str, sized_by: SizedBy, len: usize) -> Result<Self, GpuError> {
        Ok(DeviceBuffer {
            bytes: alloc_zeros::<u8>(gpu, what, sized_by, len.saturating_mul(size_of::<T>()))?,
            len,
            _type: PhantomData,
        })
    }

    /// The device address, for a kernel argument.
    pub fn ptr(&self, gpu: &Gpu) -> *mut T {
        device_address(gpu, &self.bytes).cast()
    }

    /// Copies every value back (after the work queued before it).
    pub fn read(&self, gpu: &Gpu, what: &str) -> Result<Vec<T>, GpuError> {
        self.read_first(gpu, what, self.len)
    }

    /// Copies the first `count` values back (after the work queued before
    /// it; a fault of that work is reported as a kernel fault).
    pub fn read_first(&self, gpu: &Gpu, what: &str, count: usize) -> Result<Vec<T>, GpuError> {
        let count = count.min(self.len);
        let mark = gpu.launch_mark();
        let raw = gpu
            .stream()
            .clone_dtoh(&self.bytes.slice(..count * size_of::<T>()))
            .map_err(gpu.error(format!("reading back {what}")))?;
        // A copy to pageable memory returns once it is done, and it ran
        // after every launch queued before it.
        gpu.finished_through(mark);
        Ok(raw
            .chunks_exact(size_of::<T>())
            .map(|c| T::from_bytes(c).expect("chunks have the value's size"))
            .collect())
    }

    /// Copies `values` to the start of the buffer.
    pub fn write(&mut self, gpu: &Gpu, what: &str, values: &[T]) -> Result<(), GpuError> {
        let bytes = T::slice_as_bytes(values);
        gpu.stream()
            .memcpy_htod(bytes, &mut self.bytes.slice_mut(..bytes.len()))
            .map_err(gpu.error(format!("writing {what}")))
    }

    /// Sets every value to zero (after the work queued before it).
    pub fn zero(&mut self, gpu: &Gpu, what: &str) -> Result<(), GpuError> {
        gpu.stream()
            .memset_zeros(&mut self.bytes)
            .map_err(gpu.error(format!("zeroing {what}")))
    }

    /// Bytes of the values (`len` of them) on the device.
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The bytes on the device (for asynchronous copies).
    pub fn raw(&self) -> &CudaSlice<u8> {
        &self.bytes
    }
}

/// Allocates zeroed device memory for `len` values: the one place the GPU
/// back ends allocate device memory. `what` names the buffer in errors and
/// `sized_by` says what shrinks it. A request larger than the free memory
/// is refused without asking the driver; either refusal is a
/// [`GpuError::OutOfMemory`] with the bytes asked, free and total.
pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    what: &str,
    sized_by: SizedBy,
    len: usize,
) -> Result<CudaSlice<T>, GpuError> {
    let bytes = len.saturating_mul(size_of::<T>());
    check_fits(gpu, what, sized_by, bytes)?;
    gpu.stream().alloc_zeros::<T>(len.max(1)).map_err(|e| {
        if e.0 == Code::CUDA_ERROR_OUT_OF_MEMORY {
            out_of_memory(gpu, what, sized_by, bytes)
        } else {
            gpu.error(format!(
                "allocating {what} ({})",
                crate::system::memory::bytes_text(bytes)
            ))(e)
        }
    })
}

/// Refuses `bytes` for `what` when they exceed the free device memory.
fn check_fits(gpu: &Gpu, what: &str, sized_by: SizedBy, bytes: usize) -> Result<(), GpuError> {
    let (free, _) = gpu.memory()?;
    if bytes <= free {
        return Ok(());
    }
    // Memory freed on the stream stays in the driver's pool, not counted as
    // free, until the next synchronisation returns it: ask again after one.
    gpu.synchronize(&format!("freeing memory for {what}"))?;
    let (free, total) = gpu.memory()?;
    if bytes <= free {
        return Ok(());
    }
    Err(GpuError::OutOfMemory {
        what: what.to_string(),
        bytes,
        free,
        total,
        sized_by,
    })
}

/// The out-of-memory error for `bytes` of `what`, with the memory free now.
fn out_of_memory(gpu: &Gpu, what: &str, sized_by: SizedBy, bytes: usize) -> GpuError {
    match gpu.memory() {
        Ok((free, total)) => GpuError::OutOfMemory {
            what: what.to_string(),
            bytes,
            free,
            total,
            sized_by,
        },
        Err(e) => e,
    }
}

impl<T: AsBytes> DeviceArray<T> {
    /// Copies `values` to the device (`what` and `sized_by` as for [`alloc_zeros`]).
    pub fn upload(gpu: &Gpu, what: &str, sized_by: SizedBy, values: &[T]) -> Result<Self, GpuError> {
        let bytes = T::slice_as_bytes(values);
        // Zero-length allocations are refused by the driver: keep one
        // (unused) element's worth so the pointer stays valid.
        let mut slice = alloc_zeros::<u8>(gpu, what, sized_by, bytes.len().max(size_of::<T>()))?;
        if !bytes.is_empty() {
            gpu.stream()
                .memcpy_htod(bytes, &mut slice)
                .map_err(gpu.error(format!("uploading {what}")))?;
        }
        Ok(DeviceArray {
            bytes: slice,
            len: values.len(),
            _type: PhantomData,
        })
    }

    /// Bytes held on the device.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The device address of the first value, for a pointer kernel argument.
    pub fn device_ptr(&self, gpu: &Gpu) -> *const T {
        device_address(gpu, &self.bytes) as *const T
    }

    /// A device-side view for a kernel argument.
    fn device_slice(&self, gpu: &Gpu) -> DeviceSlice<'_, T> {
        let (ptr, _sync) = self.bytes.device_ptr(gpu.stream());
        // SAFETY: the allocation holds `len` values of `T`, outlives the
        // returned borrow, and is only read by kernels.
        unsafe { DeviceSlice::from_raw(ptr as *const T, self.len as u32) }
    }
}

/// Every scene array in device memory: uploaded once per render, or once
/// per scene by a caller that renders it many times ([`RenderJob::uploaded`]).
///
/// [`RenderJob::uploaded`]: crate::backend::RenderJob::uploaded
pub struct DeviceScene {
    spheres: DeviceArray<device::geometry::Sphere>,
    boxes: DeviceArray<device::geometry::Parallelepiped>,
    polygons: DeviceArray<device::geometry::Polygon>,
    polygon_vertices: DeviceArray<device::math::Vec3>,
    triangles: DeviceArray<device::geometry::Triangle>,
    materials: DeviceArray<device::material::Material>,
    bvh_nodes: DeviceArray<device::accel::BvhNode>,
    kd_nodes: DeviceArray<device::accel::KdNode>,
    bvh8_nodes: DeviceArray<device::accel::Bvh8Node>,
    accel_prims: DeviceArray<device::geometry::PrimRef>,
    lights: DeviceArray<device::light::Light>,
    light_cdf: DeviceArray<f32>,
    textures: DeviceArray<device::texture::Texture>,
    texels: DeviceArray<device::math::Rgb>,
    triangle_uvs: DeviceArray<device::texture::TriangleUvs>,
}

impl DeviceScene {
    /// Uploads `scene`'s arrays.
    pub fn upload(gpu: &Gpu, scene: &PreparedScene) -> Result<Self, GpuError> {
        let g = &scene.scene.geometry;
        Ok(DeviceScene {
            spheres: DeviceArray::upload(gpu, "spheres", SizedBy::Scene, &g.spheres)?,
            boxes: DeviceArray::upload(gpu, "boxes", SizedBy::Scene, &g.boxes)?,
            polygons: DeviceArray::upload(gpu, "polygons", SizedBy::Scene, &g.polygons)?,
            polygon_vertices: DeviceArray::upload(gpu, "polygon vertices", SizedBy::Scene, &g.polygon_vertices)?,
            triangles: DeviceArray::upload(gpu, "triangles", SizedBy::Scene, &g.triangles)?,
            materials: DeviceArray::upload(gpu, "materials", SizedBy::Scene, &scene.scene.materials)?,
            bvh_nodes: DeviceArray::upload(gpu, "BVH nodes", SizedBy::Scene, &scene.accel.bvh_nodes)?,
            kd_nodes: DeviceArray::upload(gpu, "kd-tree nodes", SizedBy::Scene, &scene.accel.kd_nodes)?,
            bvh8_nodes: DeviceArray::upload(gpu, "8-wide BVH nodes", SizedBy::Scene, &scene.accel.bvh8_nodes)?,
            accel_prims: DeviceArray::upload(gpu, "primitive references", SizedBy::Scene, &scene.accel.prims)?,
            lights: DeviceArray::upload(gpu, "lights", SizedBy::Scene, &scene.lights.lights)?,
            light_cdf: DeviceArray::upload(gpu, "the light pick table", SizedBy::Scene, &scene.lights.cdf)?,
            textures: DeviceArray::upload(gpu, "textures", SizedBy::Scene, &scene.scene.textures.textures)?,
            texels: DeviceArray::upload(gpu, "texels", SizedBy::Scene, &scene.scene.textures.texels)?,
            triangle_uvs: DeviceArray::upload(gpu, "texture coordinates", SizedBy::Scene, &g.triangle_uvs)?,
        })
    }

    /// The job's scene on the device: the caller's upload if it made one,
    /// otherwise a fresh upload owned by the render.
    pub fn for_job<'a>(gpu: &Gpu, job: &RenderJob<'a>) -> Result<SceneOnDevice<'a>, GpuError> {
        Ok(match job.uploaded {
            Some(scene) => SceneOnDevice::Shared(scene),
            None => SceneOnDevice::Owned(Box::new(DeviceScene::upload(gpu, job.scene)?)),
        })
    }

    /// Bytes of scene data on the device.
    pub fn byte_len(&self) -> usize {
        self.spheres.byte_len()
            + self.boxes.byte_len()
            + self.polygons.byte_len()
            + self.polygon_vertices.byte_len()
            + self.triangles.byte_len()
            + self.materials.byte_len()
            + self.bvh_nodes.byte_len()
            + self.kd_nodes.byte_len()
            + self.bvh8_nodes.byte_len()
            + self.accel_prims.byte_len()
            + self.lights.byte_len()
            + self.light_cdf.byte_len()
            + self.textures.byte_len()
            + self.texels.byte_len()
            + self.triangle_uvs.byte_len()
    }

    /// The kernel-side view (device pointers) with `camera` and `scene`'s
    /// background, for kernels bound to `features`.
    pub fn view(&self, gpu: &Gpu, scene: &PreparedScene, camera: Camera, features: Features) -> SceneView<'_> {
        SceneView {
            primitives: Primitives {
                spheres: self.spheres.device_slice(gpu),
                boxes: self.boxes.device_slice(gpu),
                polygons: self.polygons.device_slice(gpu),
                polygon_vertices: self.polygon_vertices.device_slice(gpu),
                triangles: self.triangles.device_slice(gpu),
            },
            materials: self.materials.device_slice(gpu),
            camera,
            background: scene.scene.background,
            accel: AccelView {
                kind: scene.accel.kind,
                bvh_nodes: self.bvh_nodes.device_slice(gpu),
                kd_nodes: self.kd_nodes.device_slice(gpu),
                bvh8_nodes: self.bvh8_nodes.device_slice(gpu),
                prims: self.accel_prims.device_slice(gpu),
                bounds: scene.accel.bounds,
            },
            lights: LightView {
                lights: self.lights.device_slice(gpu),
                cdf: self.light_cdf.device_slice(gpu),
                inv_total_power: scene.lights.inv_total_power,
                _pad: 0,
            },
            textures: Textures {
                textures: self.textures.device_slice(gpu),
                texels: self.texels.device_slice(gpu),
                triangle_uvs: self.triangle_uvs.device_slice(gpu),
            },
            features,
        }
    }
}

/// A scene on the device, uploaded by the render or shared by its caller.
pub enum SceneOnDevice<'a> {
    /// Uploaded by the caller, reused across renders.
    Shared(&'a DeviceScene),
    /// Uploaded for this render.
    Owned(Box<DeviceScene>),
}

impl std::ops::Deref for SceneOnDevice<'_> {
    type Target = DeviceScene;

    fn deref(&self) -> &DeviceScene {
        match self {
            SceneOnDevice::Shared(s) => s,
            SceneOnDevice::Owned(s) => s,
        }
    }
}
