//! The scene in device memory, and kernel arguments passed by value.

use super::{Gpu, GpuError, driver_error};
use crate::backend::RenderJob;
use crate::scene::Scene;
use cudarc::driver::sys::cudaError_enum as Code;
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};
use device::accel::AccelView;
use device::camera::Camera;
use device::film::FixedRgb;
use device::observe::DivergenceCounters;
use device::scene::{DeviceSlice, SceneView};
use std::marker::PhantomData;

/// A `#[repr(C)]` plain-data value passed to a kernel by value.
#[repr(transparent)]
pub struct KernelArg<T>(pub T);

// SAFETY: only the device crate's `#[repr(C)]` kernel-interface types are
// wrapped; their layout is identical on both targets (see `device::launch`).
unsafe impl<T: Copy> DeviceRepr for KernelArg<T> {}

/// An array of plain `#[repr(C)]` values in device memory, stored as bytes
/// (the device crate's types cannot implement cudarc's traits themselves).
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

/// Reads back a film of `pixels` fixed-point RGB sums (three `u64` each).
pub fn read_film(gpu: &Gpu, film: &CudaSlice<u64>, pixels: usize) -> Result<Vec<FixedRgb>, GpuError> {
    let raw = gpu
        .stream()
        .clone_dtoh(film)
        .map_err(driver_error("reading back the film"))?;
    Ok(raw
        .chunks_exact(3)
        .take(pixels)
        .map(|c| FixedRgb {
            r: c[0],
            g: c[1],
            b: c[2],
        })
        .collect())
}

/// Reads back consecutive divergence counters (two `u64` each), one per name.
pub fn read_divergence(
    gpu: &Gpu,
    counters: &CudaSlice<u64>,
    names: &[&str],
) -> Result<Vec<(String, DivergenceCounters)>, GpuError> {
    let raw = gpu
        .stream()
        .clone_dtoh(counters)
        .map_err(driver_error("reading back the divergence counters"))?;
    Ok(names
        .iter()
        .zip(raw.chunks_exact(2))
        .map(|(n, c)| {
            (
                n.to_string(),
                DivergenceCounters {
                    lanes: c[0],
                    groups: c[1],
                },
            )
        })
        .collect())
}

/// Allocates zeroed device memory for `len` values, reporting exhaustion as
/// [`GpuError::OutOfMemory`].
pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    what: &str,
    len: usize,
) -> Result<CudaSlice<T>, GpuError> {
    gpu.stream()
        .alloc_zeros::<T>(len.max(1))
        .map_err(|e| out_of_memory_or(gpu, what, len * size_of::<T>(), e))
}

fn out_of_memory_or(gpu: &Gpu, what: &str, bytes: usize, e: cudarc::driver::DriverError) -> GpuError {
    if e.0 == Code::CUDA_ERROR_OUT_OF_MEMORY {
        let (free, total) = gpu.memory().unwrap_or((0, 0));
        GpuError::OutOfMemory {
            what: what.to_string(),
            bytes,
            free,
            total,
        }
    } else {
        driver_error(format!("allocating {what}"))(e)
    }
}

impl<T: Copy> DeviceArray<T> {
    /// Copies `values` to the device.
    pub fn upload(gpu: &Gpu, what: &str, values: &[T]) -> Result<Self, GpuError> {
        let len_bytes = std::mem::size_of_val(values);
        // SAFETY: `T` is plain data; viewing it as bytes reads initialised memory.
        let bytes = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), len_bytes) };
        // Zero-length allocations are refused by the driver: keep one
        // (unused) element's worth so the pointer stays valid.
        let mut slice = alloc_zeros::<u8>(gpu, what, len_bytes.max(size_of::<T>()))?;
        if !bytes.is_empty() {
            gpu.stream()
                .memcpy_htod(bytes, &mut slice)
                .map_err(driver_error(format!("uploading {what}")))?;
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
    accel_prims: DeviceArray<device::geometry::PrimRef>,
}

impl DeviceScene {
    /// Uploads `scene`'s arrays.
    pub fn upload(gpu: &Gpu, scene: &Scene) -> Result<Self, GpuError> {
        let g = &scene.geometry;
        Ok(DeviceScene {
            spheres: DeviceArray::upload(gpu, "spheres", &g.spheres)?,
            boxes: DeviceArray::upload(gpu, "boxes", &g.boxes)?,
            polygons: DeviceArray::upload(gpu, "polygons", &g.polygons)?,
            polygon_vertices: DeviceArray::upload(gpu, "polygon vertices", &g.polygon_vertices)?,
            triangles: DeviceArray::upload(gpu, "triangles", &g.triangles)?,
            materials: DeviceArray::upload(gpu, "materials", &scene.materials)?,
            bvh_nodes: DeviceArray::upload(gpu, "BVH nodes", &scene.accel.bvh_nodes)?,
            kd_nodes: DeviceArray::upload(gpu, "kd-tree nodes", &scene.accel.kd_nodes)?,
            accel_prims: DeviceArray::upload(gpu, "primitive references", &scene.accel.prims)?,
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
            + self.accel_prims.byte_len()
    }

    /// The kernel-side view (device pointers) with `camera` and `scene`'s background.
    pub fn view(&self, gpu: &Gpu, scene: &Scene, camera: Camera) -> SceneView<'_> {
        SceneView {
            spheres: self.spheres.device_slice(gpu),
            boxes: self.boxes.device_slice(gpu),
            polygons: self.polygons.device_slice(gpu),
            polygon_vertices: self.polygon_vertices.device_slice(gpu),
            triangles: self.triangles.device_slice(gpu),
            materials: self.materials.device_slice(gpu),
            camera,
            background: scene.background,
            accel: AccelView {
                kind: scene.accel.kind,
                bvh_nodes: self.bvh_nodes.device_slice(gpu),
                kd_nodes: self.kd_nodes.device_slice(gpu),
                prims: self.accel_prims.device_slice(gpu),
                bounds: scene.accel.bounds,
            },
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
