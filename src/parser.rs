//! Stage: parse a log into bug reports. The parser itself is the pure `ci-medic-parser` crate.
pub use ci_medic_parser::*;
