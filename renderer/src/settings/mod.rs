//! The domain's value types, their parsers and every default, declared once.
//!
//! What a run can be told (which back end, an image or block size, a pool
//! capacity, a schedule, a thread count, how often to repeat) is a value
//! here, with the parser that reads it from text (`Result<_, String>`, the
//! message saying what was expected) and the constant that is its default.
//! The command line (`cli`) only maps clap arguments onto these;
//! experiment configs (`experiment`) parse the same values from TOML; the
//! back ends take their `Default`s from the constants here. This module
//! uses only [`crate::system`] and the `device` crate, never a layer above
//! it.
//!
//! - [`backend`]: which back end, or `auto`;
//! - [`scope`]: which back ends a setting or flag concerns, and the check
//!   that refuses a flag the back ends run would ignore;
//! - [`size`]: `WIDTHxHEIGHT` values and the render limits;
//! - [`mega_config`]: how the megakernel is launched, its defaults and the
//!   register cap;
//! - [`kernels`]: which build of the material-dispatching kernels runs;
//! - [`arithmetic`]: the GPU kernels' float arithmetic, exact or fast;
//! - [`wave_config`]: the wavefront's configuration: its schedule,
//!   compaction, refill and defaults;
//! - [`capacity`]: the wavefront's pool capacity;
//! - [`cpu`]: the `cpu` back end's threads and work distribution;
//! - [`devices`]: which GPUs a command renders on;
//! - [`repetitions`]: warm-ups and timed repetitions;
//! - [`sampler`]: the random-number sampler, hash or Sobol;
//! - [`nee`]: next-event estimation on or off;
//! - [`choice`]: one of a value enum's names;
//! - [`echo`]: user input quoted in an error, cut to a readable length.

pub mod arithmetic;
pub mod backend;
pub mod capacity;
pub mod choice;
pub mod cpu;
pub mod devices;
pub mod echo;
pub mod kernels;
pub mod mega_config;
pub mod nee;
pub mod repetitions;
pub mod sampler;
pub mod scope;
pub mod size;
pub mod wave_config;
