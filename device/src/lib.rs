//! wavepath's shared render code.
//!
//! One `#![no_std]` crate holds everything a path needs: vector math and the
//! crate's own transcendental functions, the counter-based RNG, the camera,
//! the primitives, scene traversal, the materials and the path stages
//! (generate, extend, shade). It is built twice from the same source:
//!
//! * for the host, as an ordinary rlib that the CPU back ends call, and
//! * for `nvptx64-nvidia-cuda` by the renderer's `build.rs`, where the kernels in
//!   [`kernels`] become PTX entry points ([`kernel`] says how a kernel is
//!   declared; the host's emulation runs the same kernels serially).
//!
//! Every float operation is IEEE-strict on both targets (no fast-math, no
//! implicit fused multiply-add) and every transcendental is the crate's own
//! ([`math::scalar`]), so a CPU render and a GPU render of one scene and seed are
//! bit-for-bit the same image.
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch))]
#![feature(core_intrinsics)]
// `core::simd` on the host: the 8-wide BVH tests a node's eight boxes at once.
#![cfg_attr(not(target_arch = "nvptx64"), feature(portable_simd))]
// `#[inline(always)]` on a closure (the drain's per-item body): see `kernels`.
#![feature(stmt_expr_attributes)]
#![allow(internal_features)]

pub mod accel;
pub mod bound;
pub mod camera;
pub mod features;
pub mod film;
pub mod geometry;
pub mod integrator;
pub mod kernel;
pub mod kernels;
pub mod launch;
pub mod light;
pub mod material;
pub mod math;
pub mod noise;
pub mod observe;
pub mod queue;
pub mod rng;
pub mod scene;
pub mod schedule;
pub mod shading;
pub mod slice;
pub mod stages;
pub mod texture;
pub mod warp;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // NOTE: built with -Cpanic=immediate-abort, so this is never reached from
    // core; it only satisfies the no_std requirement for a handler.
    core::intrinsics::abort()
}
