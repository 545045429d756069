//! Configuration from the environment, read once at start-up.

use leptos_config::LeptosOptions;

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
    /// Which model answers (`DATBAN_PROVIDER` and friends).
    pub provider: ProviderConfig,
    /// Base URL of a weather service (`DATBAN_WEATHER_URL`); without one, forecasts come
    /// from the built-in climate tables.
    pub weather_url: Option<String>,
    /// How long one weather request may take (`DATBAN_WEATHER_TIMEOUT_MS`, default 5000).
    pub weather_timeout: std::time::Duration,
    /// How many replies one person may have being written at once
    /// (`DATBAN_MAX_RUNS_PER_OWNER`, default 3); one more is answered 429 `TOO_MANY_RUNS`.
    pub max_runs_per_owner: usize,
    /// How old a run's heartbeat may be before any server sharing the database closes
    /// the run as interrupted (`DATBAN_HEARTBEAT_TIMEOUT_MS`, default 15000).
    pub heartbeat_timeout: std::time::Duration,
    /// The public origin behind a proxy (`DATBAN_PUBLIC_ORIGIN`) and the per-owner rate
    /// limit (`DATBAN_RATE_PER_MINUTE`, default 20; `0` turns it off).
    pub security: crate::security::SecuritySettings,
    /// Bounds on connections: the header deadline (`DATBAN_HEADER_TIMEOUT_MS`, default
    /// 10000), connections per client address (`DATBAN_MAX_CONNECTIONS_PER_ADDRESS`,
    /// default 256, `0` none) and the shutdown grace (`DATBAN_SHUTDOWN_GRACE_MS`, 30000).
    pub edge: crate::serve::EdgeLimits,
}

/// The model provider chosen by `DATBAN_PROVIDER`.
#[derive(Clone, PartialEq, Eq)]
pub enum ProviderConfig {
    /// The built-in offline model (the default; needs nothing).
    Offline,
    /// OpenAI Chat Completions or any compatible server (Ollama, vLLM, llama.cpp, …).
    OpenAiChat(Remote),
    /// The OpenAI Responses API.
    OpenAiResponses(Remote),
    /// Anthropic Messages.
    Anthropic(Remote),
}

/// Where a remote provider is and how to call it.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    /// Base URL (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`).
    pub base_url: String,
    /// The key; never printed (see the `Debug` impl).
    pub api_key: Option<String>,
    /// `DATBAN_MODEL`; empty for a local OpenAI-compatible server that was not told one
    /// (the server's first model is used).
    pub model: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .finish()
    }
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderConfig::Offline => f.write_str("Offline"),
            ProviderConfig::OpenAiChat(remote) => {
                f.debug_tuple("OpenAiChat").field(remote).finish()
            }
            ProviderConfig::OpenAiResponses(remote) => {
                f.debug_tuple("OpenAiResponses").field(remote).finish()
            }
            ProviderConfig::Anthropic(remote) => f.debug_tuple("Anthropic").field(remote).finish(),
        }
    }
}

impl ProviderConfig {
    /// Reads `DATBAN_PROVIDER`, `DATBAN_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`,
    /// `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` through `var` (the environment, or a map
    /// in tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| {
            var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let provider = get("DATBAN_PROVIDER").unwrap_or_else(|| "offline".to_owned());
        let openai = |default_model: &str| -> Result<Remote, ConfigError> {
            let base_url =
                get("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".to_owned());
            let api_key = get("OPENAI_API_KEY");
            // A local server (Ollama, vLLM, …) needs no key; the official API does.
            if api_key.is_none() && base_url.starts_with("https://api.openai.com") {
                return Err(ConfigError::MissingKey {
                    provider: provider.clone(),
                    variable: "OPENAI_API_KEY",
                });
            }
            // A local server's model is asked for at start-up when not named (empty here).
            let official = base_url.starts_with("https://api.openai.com");
            let model = get("DATBAN_MODEL").unwrap_or_else(|| {
                if official {
                    default_model.to_owned()
                } else {
                    String::new()
                }
            });
            Ok(Remote {
                base_url: base_url.trim_end_matches('/').to_owned(),
                api_key,
                model,
            })
        };
        match provider.as_str() {
            "offline" => Ok(ProviderConfig::Offline),
            "openai" => Ok(ProviderConfig::OpenAiChat(openai("gpt-4o-mini")?)),
            "openai-responses" => Ok(ProviderConfig::OpenAiResponses(openai("gpt-4o-mini")?)),
            "anthropic" => {
                let api_key = get("ANTHROPIC_API_KEY").ok_or(ConfigError::MissingKey {
                    provider: provider.clone(),
                    variable: "ANTHROPIC_API_KEY",
                })?;
                Ok(ProviderConfig::Anthropic(Remote {
                    base_url: get("ANTHROPIC_BASE_URL")
                        .unwrap_or_else(|| "https://api.anthropic.com".to_owned())
                        .trim_end_matches('/')
                        .to_owned(),
                    api_key: Some(api_key),
                    model: get("DATBAN_MODEL").unwrap_or_else(|| "claude-haiku-4-5".to_owned()),
                }))
            }
            other => Err(ConfigError::UnknownProvider(other.to_owned())),
        }
    }
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
    /// `DATBAN_PROVIDER` names no provider we have.
    #[error("DATBAN_PROVIDER={0}: expected offline, openai, openai-responses or anthropic")]
    UnknownProvider(String),
    /// The chosen provider needs a key that is not set.
    #[error("DATBAN_PROVIDER={provider} needs {variable}; set it, or use DATBAN_PROVIDER=offline")]
    MissingKey {
        /// The provider chosen.
        provider: String,
        /// The variable to set.
        variable: &'static str,
    },
    /// `DATBAN_WEATHER_URL` cannot be used (the URL itself is left out: it may hold a key).
    #[error("DATBAN_WEATHER_URL: {0}")]
    Weather(String),
    /// `DATBAN_PUBLIC_ORIGIN` is not an origin.
    #[error("DATBAN_PUBLIC_ORIGIN must be an origin such as https://datban.example (scheme, host, optional port; no path)")]
    PublicOrigin,
    /// `DATBAN_CORS_ORIGINS` holds something that is not an origin.
    #[error("DATBAN_CORS_ORIGINS must be origins separated by commas, such as http://localhost:5173,https://app.example (scheme, host, optional port; no path); `{0}` is not one")]
    CorsOrigin(String),
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
        let leptos_options = leptos_config::get_configuration(None)
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
        let provider = ProviderConfig::from_vars(|name| std::env::var(name).ok())?;
        let weather_url = match std::env::var("DATBAN_WEATHER_URL") {
            Ok(url) if !url.trim().is_empty() => Some(url.trim().to_owned()),
            Ok(_) | Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(ConfigError::NotUnicode("DATBAN_WEATHER_URL"))
            }
        };
        let weather_timeout = number("DATBAN_WEATHER_TIMEOUT_MS", 5000, 1, 120_000)?;
        let max_runs_per_owner = number(
            "DATBAN_MAX_RUNS_PER_OWNER",
            crate::runs::DEFAULT_MAX_RUNS_PER_OWNER as u64,
            1,
            1000,
        )? as usize;
        let heartbeat_timeout = number(
            "DATBAN_HEARTBEAT_TIMEOUT_MS",
            u64::try_from(crate::runs::STALE_AFTER.as_millis()).unwrap_or(15_000),
            1_000,
            3_600_000,
        )?;
        let security = security_from_env()?;
        let defaults = crate::serve::EdgeLimits::default();
        let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let edge = crate::serve::EdgeLimits {
            header_timeout: std::time::Duration::from_millis(number(
                "DATBAN_HEADER_TIMEOUT_MS",
                millis(defaults.header_timeout),
                100,
                300_000,
            )?),
            per_address: number(
                "DATBAN_MAX_CONNECTIONS_PER_ADDRESS",
                defaults.per_address as u64,
                0,
                1_000_000,
            )? as usize,
            shutdown_grace: std::time::Duration::from_millis(number(
                "DATBAN_SHUTDOWN_GRACE_MS",
                millis(defaults.shutdown_grace),
                0,
                600_000,
            )?),
        };
        Ok(Self {
            leptos_options,
            database_url,
            agent,
            offline_token_delay: std::time::Duration::from_millis(delay),
            provider,
            weather_url,
            weather_timeout: std::time::Duration::from_millis(weather_timeout),
            max_runs_per_owner,
            heartbeat_timeout: std::time::Duration::from_millis(heartbeat_timeout),
            security,
            edge,
        })
    }
}

fn security_from_env() -> Result<crate::security::SecuritySettings, ConfigError> {
    use crate::security::{normalize_origin, RateLimit, DEFAULT_RATE_PER_MINUTE};
    let public_origin = match std::env::var("DATBAN_PUBLIC_ORIGIN") {
        Ok(text) if !text.trim().is_empty() => {
            Some(normalize_origin(&text).ok_or(ConfigError::PublicOrigin)?)
        }
        Ok(_) | Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(ConfigError::NotUnicode("DATBAN_PUBLIC_ORIGIN"))
        }
    };
    let per_minute = number(
        "DATBAN_RATE_PER_MINUTE",
        u64::from(DEFAULT_RATE_PER_MINUTE),
        0,
        10_000,
    )?;
    // At most 10 000, so the conversion cannot fail; 0 turns the limit off.
    let rate_limit = u32::try_from(per_minute)
        .ok()
        .and_then(std::num::NonZeroU32::new)
        .map(RateLimit::per_minute);
    let cors_origins = match std::env::var("DATBAN_CORS_ORIGINS") {
        Ok(text) => text
            .split(',')
            .map(str::trim)
            .filter(|origin| !origin.is_empty())
            .map(|origin| {
                normalize_origin(origin).ok_or_else(|| ConfigError::CorsOrigin(origin.to_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Err(std::env::VarError::NotPresent) => Vec::new(),
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(ConfigError::NotUnicode("DATBAN_CORS_ORIGINS"))
        }
    };
    Ok(crate::security::SecuritySettings {
        public_origin,
        rate_limit,
        body_timeout: None,
        cors_origins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<ProviderConfig, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProviderConfig::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn offline_is_the_default() {
        assert_eq!(config(&[]).unwrap(), ProviderConfig::Offline);
    }

    #[test]
    fn a_missing_key_stops_start_up_with_a_clear_message() {
        let error = config(&[("DATBAN_PROVIDER", "anthropic")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("ANTHROPIC_API_KEY"), "{error}");
        let error = config(&[("DATBAN_PROVIDER", "openai")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("OPENAI_API_KEY"), "{error}");
        assert!(config(&[("DATBAN_PROVIDER", "gemini")]).is_err());
    }

    #[test]
    fn a_local_openai_compatible_server_needs_no_key() {
        let chosen = config(&[
            ("DATBAN_PROVIDER", "openai"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1/"),
            ("DATBAN_MODEL", "qwen2.5:7b"),
        ])
        .unwrap();
        let ProviderConfig::OpenAiChat(remote) = chosen else {
            panic!("wrong provider");
        };
        assert_eq!(remote.base_url, "http://localhost:11434/v1");
        assert_eq!(remote.model, "qwen2.5:7b");
        assert_eq!(remote.api_key, None);
        // Two variables are enough: the model is then discovered at start-up.
        let two = config(&[
            ("DATBAN_PROVIDER", "openai"),
            ("OPENAI_BASE_URL", "http://localhost:8000/v1"),
        ])
        .unwrap();
        let ProviderConfig::OpenAiChat(remote) = two else {
            panic!("wrong provider");
        };
        assert_eq!(remote.model, "");
    }

    #[test]
    fn keys_never_show_in_debug_output() {
        let chosen = config(&[
            ("DATBAN_PROVIDER", "anthropic"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
        ])
        .unwrap();
        let printed = format!("{chosen:?}");
        assert!(!printed.contains("sk-ant-secret"), "{printed}");
        assert!(printed.contains("<set>"));
    }
}
