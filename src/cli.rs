//! The command line: `serve`, `analyze`, `demo`, `exec`, `manifest`.

use std::process::ExitCode;

pub fn main() -> ExitCode {
    ExitCode::SUCCESS
}
