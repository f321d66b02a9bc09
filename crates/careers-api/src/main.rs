use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    careers_api::logging::init();
    let code = careers_api::cli::run(careers_api::cli::Cli::parse()).await;
    careers_api::logging::flush();
    code
}
