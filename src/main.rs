//! The `ci-medic` binary: a thin shell over [`ci_medic::cli`].

/// mimalloc instead of glibc's malloc: the intake allocates and frees a body-sized buffer per
/// delivery from several threads, and glibc's arenas spent ~9% of the service's CPU on it
/// (`_int_malloc`, `malloc_consolidate` in perf). Interleaved `cargo bench --bench intake`
/// runs: 250–278 → 224–250 µs of CPU per delivery.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ci_medic::cli::main()
}
