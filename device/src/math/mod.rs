//! Math shared by every back end: vectors, colours, rays and scalar functions
//! that give the same bits on the CPU and the GPU.

pub mod ray;
pub mod rgb;
pub mod scalar;
pub mod vec3;

pub use ray::Ray;
pub use rgb::Rgb;
pub use vec3::Vec3;
