//! `wavepath report DIR`: tables and figures from an experiment folder.
