//! The one error of the HTTP API, what makes one (extractors, storage, the run registry),
//! and the one place it is written as an answer.

use axum::{
    extract::rejection::JsonRejection,
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use serde::Serialize;
use serde_json::Value;
use shared::{http::ApiCode, tools::ValidationIssue};

use crate::store::StoreError;

/// An API error: `{"error":{"code","message"}}` with the code's HTTP status.
///
/// Every refusal under `/api/` is one of these, from the handlers, the extractors and the
/// edge layers alike, and is written by its one [`IntoResponse`]. What went wrong inside
/// (a database error, say) travels in `cause` to the request's log line, written once by
/// [`edge::json_answers`] in the request's span; it is never sent.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: ApiCode,
    message: String,
    /// What only some refusals carry; boxed, so a `Result` of every handler stays small.
    more: Box<More>,
}

#[derive(Debug, Default)]
struct More {
    /// What went wrong inside, for the log (never sent).
    cause: Option<String>,
    /// Seconds for `retry-after`, when not the code's usual wait.
    retry_after: Option<u64>,
    /// For a decision on a call that was already decided: the call's part as stored, so a
    /// replayed decision learns what happened without anything running again.
    outcome: Option<Value>,
    /// For a refused edit: which fields broke which rules, so the page can say it in the
    /// person's language.
    issues: Vec<ValidationIssue>,
    /// For `RUN_IN_PROGRESS`: the run writing the conversation, which a client follows
    /// (`GET /api/chat/{id}/stream?run=…`) instead of starting another.
    running: Option<String>,
}

impl ApiError {
    pub(crate) fn new(code: ApiCode, message: impl Into<String>) -> Self {
        Self {
            // Every code's status is a valid one (checked by a test of the table).
            status: StatusCode::from_u16(code.status()).unwrap_or(StatusCode::BAD_REQUEST),
            code,
            message: message.into(),
            more: Box::default(),
        }
    }

    pub(crate) fn not_found(what: &str) -> Self {
        Self::new(ApiCode::NotFound, format!("{what} not found."))
    }

    /// The same refusal with another status, for a code sent with more than one
    /// (`BAD_REQUEST` as 415 or 422).
    pub(crate) fn with_status(self, status: StatusCode) -> Self {
        Self { status, ..self }
    }

    /// What went wrong inside, for the log line of the request (never sent).
    pub(crate) fn caused_by(mut self, cause: impl std::fmt::Display) -> Self {
        self.more.cause = Some(cause.to_string());
        self
    }

    /// The call's part as stored, for a decision on a call already decided.
    pub(crate) fn with_outcome(mut self, outcome: Option<Value>) -> Self {
        self.more.outcome = outcome;
        self
    }

    /// The run writing the conversation, for `RUN_IN_PROGRESS`.
    pub(crate) fn with_running(mut self, running: Option<String>) -> Self {
        self.more.running = running;
        self
    }

    /// Which fields of a refused edit broke which rules.
    pub(crate) fn with_issues(mut self, issues: Vec<ValidationIssue>) -> Self {
        self.more.issues = issues;
        self
    }

    /// Asks the client to wait `seconds` before trying again.
    pub(crate) fn retry_after(mut self, seconds: u64) -> Self {
        self.more.retry_after = Some(seconds);
        self
    }

    /// The code sent.
    pub(crate) fn code(&self) -> ApiCode {
        self.code
    }
}

/// The cause of a refusal, handed from [`ApiError`]'s response to the layer that logs it.
#[derive(Debug, Clone)]
pub(crate) struct Cause(pub String);

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            // Our data gone wrong: retrying reads the same rows.
            StoreError::Corrupt { .. } => Self::new(
                ApiCode::Internal,
                "This could not be loaded. Nothing was changed.",
            ),
            // Our storage is infrastructure: a retry may well succeed, and the request
            // changed nothing (a decision stays pending), so 503 with `retry-after`.
            StoreError::Db(_) => Self::new(
                ApiCode::StorageUnavailable,
                "Something went wrong on our side; nothing was changed. Please try again.",
            ),
        }
        .caused_by(format_args!("storage failed: {error}"))
    }
}

/// A JSON request body whose rejection is an [`ApiError`]: every handler refuses a bad
/// body in the one error shape (`{"error":{"code","message"}}`, the field and the expected
/// JSON type in the message), without matching on axum's rejection itself.
pub(crate) struct AppJson<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for AppJson<T>
where
    Json<T>: axum::extract::FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let Json(value) = Json::<T>::from_request(request, state).await?;
        Ok(Self(value))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = match rejection {
            JsonRejection::MissingJsonContentType(_) => {
                return Self::new(
                    ApiCode::UnsupportedMediaType,
                    "Send the body as JSON, with `Content-Type: application/json`.",
                )
            }
            JsonRejection::JsonDataError(_) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(ApiCode::BadRequest, plain(&rejection.body_text())).with_status(status)
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        Self::new(ApiCode::BadRequest, plain(&rejection.body_text()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: Inner<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            outcome: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            running: Option<Running<'a>>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Running<'a> {
            run_id: &'a str,
        }
        #[derive(Serialize)]
        struct Inner<'a> {
            code: &'a str,
            message: &'a str,
            #[serde(skip_serializing_if = "<[ValidationIssue]>::is_empty")]
            issues: &'a [ValidationIssue],
        }
        let body = Body {
            error: Inner {
                code: self.code.as_str(),
                message: &self.message,
                issues: &self.more.issues,
            },
            outcome: self.more.outcome.as_ref(),
            running: self
                .more
                .running
                .as_deref()
                .map(|run_id| Running { run_id }),
        };
        let mut response = (self.status, Json(body)).into_response();
        let retry_after = self.more.retry_after.or(match self.code {
            ApiCode::StorageUnavailable | ApiCode::ShuttingDown | ApiCode::RateLimited => Some(1),
            // Replies take seconds; one of the person's may well be done by then.
            ApiCode::TooManyRuns => Some(2),
            _ => None,
        });
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(cause) = self.more.cause {
            response.extensions_mut().insert(Cause(cause));
        }
        response
    }
}

/// An extractor's or serde's message in JSON terms: the field path kept, Rust's type
/// names (`struct ChatBody with 3 elements`, `u8`, `floating point`) said as JSON types.
pub(crate) fn plain(text: &str) -> String {
    let text = text
        .replace(
            "Failed to deserialize the JSON body into the target type: ",
            "The JSON body does not fit: ",
        )
        .replace(
            "Failed to parse the request body as JSON: ",
            "The body is not valid JSON: ",
        )
        .replace(
            "Failed to deserialize query string: ",
            "The query string does not fit: ",
        )
        .replace("Invalid URL: ", "The path is not valid: ");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("expected ") {
        let (before, after) = rest.split_at(at + "expected ".len());
        out.push_str(before);
        let end = after
            .find([',', '\n', ';'])
            .or_else(|| after.find(" at line "))
            .unwrap_or(after.len());
        let (wanted, tail) = after.split_at(end);
        out.push_str(&json_type(wanted.trim_end()));
        rest = tail;
    }
    out.push_str(rest);
    out.replace("floating point `", "the number `")
        .replace("integer `", "the number `")
        .replace("invalid type: map", "invalid type: an object")
        .replace("invalid type: sequence", "invalid type: an array")
        .replace("invalid type: unit value", "invalid type: null")
        // A query value that is not a number (Rust's integer parse says only "digit").
        .replace(
            "invalid digit found in string",
            "expected a whole number, 0 or more",
        )
        .replace(
            "cannot parse integer from empty string",
            "expected a whole number, found nothing",
        )
        .replace(
            "number too large to fit in target type",
            "the number is too large",
        )
}

/// What serde expected, as a JSON type.
fn json_type(wanted: &str) -> String {
    let word = wanted.trim();
    let named = match word {
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a map" | "map" => "a JSON object",
        "a sequence" | "sequence" => "a JSON array",
        "a boolean" | "bool" => "true or false",
        _ if word.starts_with("struct ") || word.starts_with("a map ") => "a JSON object",
        _ if word.starts_with("tuple") || word.starts_with("a sequence ") => "a JSON array",
        _ if word.starts_with("enum ") || word.starts_with("variant ") => {
            "one of the allowed values"
        }
        _ => return wanted.to_owned(),
    };
    named.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_is_said_in_json_terms() {
        assert_eq!(
            plain("Failed to deserialize query string: after: invalid digit found in string"),
            "The query string does not fit: after: expected a whole number, 0 or more"
        );
        assert_eq!(
            plain("Failed to deserialize the JSON body into the target type: invalid type: sequence, expected struct ChatBody with 3 elements at line 1 column 0"),
            "The JSON body does not fit: invalid type: an array, expected a JSON object at line 1 column 0"
        );
        assert_eq!(
            plain("Failed to deserialize the JSON body into the target type: partySize: invalid type: floating point `4.5`, expected u8 at line 1 column 20"),
            "The JSON body does not fit: partySize: invalid type: the number `4.5`, expected an integer from 0 to 255 at line 1 column 20"
        );
        assert_eq!(
            plain("Failed to deserialize the JSON body into the target type: approved: invalid type: string \"yes\", expected a boolean at line 1 column 9"),
            "The JSON body does not fit: approved: invalid type: string \"yes\", expected true or false at line 1 column 9"
        );
        assert_eq!(
            plain("Failed to deserialize the JSON body into the target type: missing field `text` at line 1 column 2"),
            "The JSON body does not fit: missing field `text` at line 1 column 2"
        );
        assert!(!plain("invalid type: integer `5`, expected usize").contains("usize"));
    }
}
