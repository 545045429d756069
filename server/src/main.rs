use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

// See server/Cargo.toml for why, and README ("Benchmarks") for what it costs in memory.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,tower_http=info,sqlx=warn")),
        )
        .init();
    let started = match server::Config::from_env() {
        Ok(config) => server::run(config).await,
        Err(error) => Err(error.into()),
    };
    match started {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("datban: {error}");
            ExitCode::FAILURE
        }
    }
}
