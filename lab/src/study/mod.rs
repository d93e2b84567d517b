//! Studies on a GPU machine and back: the study folders' names.
//!
//! - `folder`: a study folder's name (`NAME`, `NAME_COMMIT`, `NAME_gpusN`,
//!   `NAME_ranksN`), its parse and its format.

pub mod folder;
