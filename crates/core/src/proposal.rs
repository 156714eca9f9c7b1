//! Fix Packet v2 and code_fix DDS v2: builders, validation and the state machine.
//!
//! The flow: a failed check's bug reports become a [`FixPacket`] ([`build_fix_packet`]); the
//! failure is recorded as a failed `code_change` ([`build_failed_dds`]); a `code_fix` is derived
//! from it ([`derive_code_fix`]), checked by the specification's ten rules
//! ([`validate_code_fix`]) and moved through its states by [`StoredProposal::apply`]. The life of
//! one check's proposals on a pull request, the comment and the registry transitions included,
//! is the state machine [`machine::step`].
//!
//! Everything here is pure: ids and times are arguments (the service's registry owns the
//! per-day counters and the clock). Nothing here stores, sends or reads anything.

pub mod bundle;
pub mod dds;
pub mod machine;
pub mod packet;
pub mod paths;
pub mod state;
pub mod validate;

pub use bundle::{DdsBundle, ProtectedPath, standalone_dds};
pub use dds::{
    BuildError, CODE_FIX_MAX_FILES, CodeFixDds, DdsConstraints, DdsStatus, DdsType, DerivedFix,
    ERROR_MESSAGE_MAX_CHARS, ErrorContext, FailedCheck, FailedDds, SourceDds, TOOL,
    build_failed_dds, derive_code_fix, error_text, failed_dds_id, is_failed_dds_id, iso8601,
    parse_iso8601, sanitize_error_message,
};
pub use machine::{
    Effect, Event, MachineError, NotCode, Phase, Proposal, Record, RunState, Stage, step,
};
pub use packet::{
    CheckRef, DEFAULT_GOAL, FIX_PACKET_SCHEMA, FixPacket, Metrics, PacketConstraints, Severity,
    Violation, build_fix_packet, gate_of, instructions_for, severity_of,
};
pub use paths::{
    PathError, PathPattern, PathPatterns, check_relative_path, compile_glob, path_in_scope,
    path_within,
};
pub use state::{StoredProposal, Transition, TransitionError, is_final, next_status};
pub use validate::{Rule, ValidationError, ValidationErrors, validate_code_fix};
