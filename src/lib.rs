//! ci-medic: a GitHub App that turns a failed check on a pull request into a reviewed, minimal fix.
//!
//! # Layout
//!
//! Modules follow the data flow, one per stage:
//!
//! ```text
//! intake ─► events ─► log_source ─► parser ─► triage ─► proposal ─► comment
//!   (HMAC, dedupe,      (Actions logs      (pure)   (pure: is it   (Fix Packet,  (PR comment +
//!    persist, enqueue)   or check output)            the code's?)   code_fix DDS)  annotations)
//!
//! commands (approval) ─► fix_agent ─► executor (optional) ─► git_agent ─► ci_monitor
//! ```
//!
//! A proposal's life (its stage, DDS status, history and registry transitions) is one pure
//! state machine, `ci_medic_core::proposal::machine`. The handlers are free functions over one
//! shared context ([`orchestrator::Context`]: store handles, the GitHub client, settings,
//! metrics), each in its stage: one per webhook event in [`events`], one per command in
//! [`commands`], and one per typed job: writing the fix in [`fix_agent`], its sandbox build in
//! [`executor`], the push in [`git_agent`], the verdicts and the reconcile pass in
//! [`ci_monitor`]. [`orchestrator`] is the wiring: it dispatches each job to its handler with
//! one `match`, and applies the machine's effects for every handler.
//! Infrastructure: [`github`] (API client, App auth), [`store`] (sled, and the payload spool
//! that is the intake's write-ahead log), [`jobs`] (durable queue and workers), [`server`]
//! (HTTP, health, metrics), [`status`] (the status page and admin API), [`config`] (process
//! settings), [`capped_log`] (the start and end of a long log, for people to read),
//! [`redelivery`] (asks GitHub to send again the webhooks it could not deliver while the service
//! was down).
//!
//! A failure the triage (`ci-medic-triage`) finds not to be the code's gets its kind and
//! evidence on the comment instead of a proposal, and `/rerun` (or `triage.auto_rerun`)
//! re-runs its failed Actions jobs; the CI monitor reports the re-run's verdict.
//!
//! The pure stages live in crates with no I/O dependencies at all, re-exported here:
//! `ci-medic-parser` ([`parser`]), `ci-medic-triage`, and `ci-medic-core` ([`proposal`],
//! [`comment`], [`commands`], the checks of [`fix_agent`], [`repo_config`]).

pub mod backoff;
pub mod capped_log;
pub mod cli;
pub mod config;
pub mod events;
pub mod intake;
pub mod jobs;
pub mod metrics;
pub mod redelivery;
pub mod server;
pub mod singleton;
pub mod status;
pub mod store;

pub mod log_source;
pub mod parser;

pub mod ci_monitor;
pub mod commands;
pub mod comment;
pub mod executor;
pub mod fix_agent;
pub mod git_agent;
pub mod github;
pub mod orchestrator;

#[cfg(feature = "demo")]
pub mod demo;
pub mod setup;

pub use ci_medic_core::{formatter, ids, proposal, repo_config};
