//! The body of `GET /healthz`.

use serde::{Deserialize, Serialize};

/// Liveness report of a running server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// Whether the server and its database can serve requests.
    pub status: HealthStatus,
    /// The crate version the server was built from.
    pub version: String,
}

/// Whether the server considers itself able to serve requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// Serving normally.
    Ok,
    /// Up, but a dependency it needs (the database) does not answer.
    Unavailable,
}

impl Health {
    /// A report with the given status for this build.
    pub fn new(status: HealthStatus) -> Self {
        Self {
            status,
            version: crate::VERSION.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lets the same tests run under wasm-bindgen-test-runner for wasm32.
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn health_serialises_to_the_documented_shape() {
        let value = serde_json::to_value(Health::new(HealthStatus::Ok)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"status": "ok", "version": crate::VERSION})
        );
        let down = serde_json::to_value(Health::new(HealthStatus::Unavailable)).unwrap();
        assert_eq!(down["status"], "unavailable");
    }

    #[test]
    fn health_round_trips_and_rejects_unknown_shapes() {
        let parsed: Health = serde_json::from_str(r#"{"status":"ok","version":"1.2.3"}"#).unwrap();
        assert_eq!(parsed.status, HealthStatus::Ok);
        assert_eq!(parsed.version, "1.2.3");
        assert!(serde_json::from_str::<Health>(r#"{"status":"down","version":"1"}"#).is_err());
        assert!(serde_json::from_str::<Health>(r#"{"status":"ok","version":"1","x":1}"#).is_err());
    }
}
