use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

// See server/Cargo.toml for why, and README ("Benchmarks") for what it costs in memory.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before the runtime's threads allocate anything, so no huge page is faulted in first.
    if !server::serve::small_pages_only() {
        // Only memory use changes; an old kernel without the option still serves.
        eprintln!("datban: transparent huge pages stay enabled (prctl refused)");
    }
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(serve()),
        Err(error) => {
            eprintln!("datban: cannot start the async runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
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
