//! Files in and out: input files read under a size limit, output files
//! checked before the work and written whole or not at all, images and CSV.
//!
//! - [`input_file`]: scene, mesh and config files, regular and bounded;
//! - [`document_path`]: paths into TOML documents (`generators[0].grid`);
//! - [`atomic_file`]: output checks and atomic writes, shared by every
//!   command that writes;
//! - [`image`]: film → tone map → PNG, PPM or BMP;
//! - [`csv`]: rows of any serialisable type as a CSV file;

pub mod atomic_file;
pub mod csv;
pub mod document_path;
pub mod image;
pub mod input_file;
