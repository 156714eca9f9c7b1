//! (being built)

pub mod registry;
