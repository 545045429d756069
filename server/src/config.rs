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
        Ok(Self {
            leptos_options,
            database_url,
        })
    }
}
