use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than the system allocator: fewer instructions per request, and no glibc
/// fastbin consolidation on the list's many small allocations.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    careers_api::logging::init();
    let code = careers_api::cli::run(careers_api::cli::Cli::parse()).await;
    careers_api::logging::flush();
    code
}
