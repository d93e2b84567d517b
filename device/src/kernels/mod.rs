//! GPU entry points (NVPTX only). Each is thin: compute the thread's index,
//! check bounds, call the same function the CPU back ends call.

pub mod megakernel;
