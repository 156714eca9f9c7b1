//! The proposal registry (being built by the proposal stage).
