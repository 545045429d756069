//! Configuration from the environment, read once at start-up.

use leptos::prelude::LeptosOptions;

/// The database used when `DATABASE_URL` is not set: a file beside the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/datban.db";

/// Everything the server reads from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Site root, pkg dir, output name and address (`LEPTOS_*` variables).
    pub leptos_options: LeptosOptions,
    /// `DATABASE_URL`, or [`DEFAULT_DATABASE_URL`].
    pub database_url: String,
    /// Bounds of each agent run (`DATBAN_MAX_STEPS`, `DATBAN_MAX_TOOL_ERRORS`).
    pub agent: crate::agent::AgentConfig,
    /// Pause between the offline model's tokens (`DATBAN_OFFLINE_TOKEN_DELAY_MS`), so its
    /// replies stream visibly like a real model's.
    pub offline_token_delay: std::time::Duration,
}

/// A configuration value that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// One of the `LEPTOS_*` variables is malformed (for example `LEPTOS_SITE_ADDR`).
    #[error("{0}")]
    Leptos(String),
    /// A variable is set but not valid Unicode.
    #[error("{0} is not valid UTF-8")]
    NotUnicode(&'static str),
    /// A number is out of range or not a number.
    #[error("{name} must be a whole number from {min} to {max}")]
    BadNumber {
        /// The variable.
        name: &'static str,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
}

fn number(name: &'static str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Ok(default),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::NotUnicode(name)),
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or(ConfigError::BadNumber { name, min, max }),
    }
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        let leptos_options = leptos::prelude::get_configuration(None)
            .map_err(|error| ConfigError::Leptos(error.to_string()))?
            .leptos_options;
        let database_url = match std::env::var("DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => url,
            Ok(_) | Err(std::env::VarError::NotPresent) => DEFAULT_DATABASE_URL.to_owned(),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(ConfigError::NotUnicode("DATABASE_URL"))
            }
        };
        let defaults = crate::agent::AgentConfig::default();
        let agent = crate::agent::AgentConfig {
            max_steps: number("DATBAN_MAX_STEPS", defaults.max_steps as u64, 1, 50)? as usize,
            max_tool_errors: number(
                "DATBAN_MAX_TOOL_ERRORS",
                defaults.max_tool_errors as u64,
                1,
                50,
            )? as usize,
        };
        let delay = number("DATBAN_OFFLINE_TOKEN_DELAY_MS", 15, 0, 2000)?;
        Ok(Self {
            leptos_options,
            database_url,
            agent,
            offline_token_delay: std::time::Duration::from_millis(delay),
        })
    }
}
