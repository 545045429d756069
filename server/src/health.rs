//! `GET /healthz`: liveness of the server and its database, for load balancers and tests.

use axum::{extract::State, http::StatusCode, routing::get, Json, Router};
use shared::health::{Health, HealthStatus};

use crate::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(crate::metrics::handler))
}

async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let ping = sqlx::query("SELECT 1").execute(&state.db);
    match tokio::time::timeout(crate::HEALTH_DB_TIMEOUT, ping).await {
        Ok(Ok(_)) => (StatusCode::OK, Json(Health::new(HealthStatus::Ok))),
        Ok(Err(error)) => {
            tracing::error!(%error, "health check: database query failed");
            unavailable()
        }
        Err(_) => {
            tracing::error!("health check: database did not answer in time");
            unavailable()
        }
    }
}

fn unavailable() -> (StatusCode, Json<Health>) {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(Health::new(HealthStatus::Unavailable)),
    )
}
