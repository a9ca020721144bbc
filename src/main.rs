use std::process::ExitCode;

/// mimalloc instead of glibc's allocator: an ISO 20022 walk makes and frees a few small
/// strings per element, and glibc's `free`/`malloc_consolidate` were a fifth of `check`'s
/// CPU on pacs.008. The benches and examples declare the same, to measure what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    clearledger::cli::main()
}
