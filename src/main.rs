//! The `interai` command line: `serve` runs an instance, `admin …` manages it.

use clap::Parser;

/// The process's memory allocator: mimalloc instead of the C library's. An instance allocates and frees many small
/// buffers per federated activity (its JSON, its canonical form, its rows), and glibc's malloc spent a fifth of
/// the replication benchmark's CPU in its own bookkeeping (docs/benchmarks.md, "mimalloc allocator"). This is the one
/// process-wide setting the binary makes; it holds no state of the instance, and the library sets nothing.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = interai::cli::Cli::parse();
    match interai::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // One clear line: the error and its causes, each said once, without a backtrace.
            eprintln!("error: {}", interai::cli::error_text(&error));
            std::process::ExitCode::FAILURE
        }
    }
}
