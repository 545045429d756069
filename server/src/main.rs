use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

// See server/Cargo.toml for why, and README ("Benchmarks") for what it costs in memory.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before the runtime's threads allocate anything, so no huge page is faulted in first.
    small_pages_only();
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

/// No transparent huge pages for this process. mimalloc asks for them on its whole arena
/// (`MADV_HUGEPAGE`), so every 2 MiB region it touches becomes resident at once: thousands of
/// replies held open, each using a few KiB scattered over the arena, then cost 36 → 57 KiB
/// each at 1,000 open and 25 → 30 KiB at 10,000, for no CPU measurably saved on this build
/// (README, "Benchmarks"). Equivalent to `MIMALLOC_ALLOW_THP=0`, which mimalloc reads
/// only from the environment.
fn small_pages_only() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes one integer flag and touches no memory of ours.
        let status = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if status != 0 {
            // Only memory use changes; an old kernel without the option still serves.
            eprintln!("datban: transparent huge pages stay enabled (prctl refused)");
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
