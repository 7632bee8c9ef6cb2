//! The `interai` command line: `serve` runs an instance, `admin …` manages it.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = interai::cli::Cli::parse();
    match interai::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // One clear line: the error and its causes, without a backtrace.
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
