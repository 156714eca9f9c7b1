//! The `ci-medic` binary: a thin shell over [`ci_medic::cli`].

fn main() -> std::process::ExitCode {
    ci_medic::cli::main()
}
