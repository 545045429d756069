//! How an executor fails: the one error type of tool execution, shared by the executors
//! (`tools/`) and the idempotency layer (`idempotency.rs`) without either importing the
//! other's module.

use shared::tools::{ErrorCode, Rule, ToolError};

/// How an executor failed.
#[derive(Debug)]
pub enum ExecError {
    /// A failure the model and the person may see as it is (validation against data,
    /// upstream unavailable…).
    Tool(ToolError),
    /// A failure of ours; the details go to the log only.
    Internal(String),
}

impl From<sqlx::Error> for ExecError {
    fn from(error: sqlx::Error) -> Self {
        ExecError::Internal(format!("database: {error}"))
    }
}

impl ExecError {
    /// A validation failure found by looking at data (the restaurant is closed then…).
    pub fn invalid(message: impl Into<String>) -> Self {
        ExecError::Tool(ToolError::new(ErrorCode::ValidationError, message))
    }

    /// A validation failure of one field against data, with the rule it broke, so the
    /// person can be told in their language (the message stays the model's).
    pub fn invalid_at(path: &str, rule: Rule, message: impl Into<String>) -> Self {
        ExecError::Tool(ToolError::new(ErrorCode::ValidationError, message).at(path, rule))
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Tool(error) => write!(f, "{:?}: {}", error.code, error.message),
            ExecError::Internal(details) => write!(f, "internal: {details}"),
        }
    }
}

impl std::error::Error for ExecError {}
