//! A stateful fake GitHub (being built).
