//! The server's integration tests, as one test binary: each module is one area (its own
//! doc says what it checks), all sharing `support` (one `spawn_app`, one test provider,
//! the real server binary as a child process). One binary links the server once, not once
//! per file.

mod support;

mod agent_loop;
mod assistants;
mod concurrency;
mod crash;
mod durability;
mod forged_approvals;
mod health;
mod idempotency_http;
mod injection;
mod limits;
mod memory;
mod oauth;
mod owners;
mod pages;
mod postgres;
mod provider_anthropic;
mod provider_openai_chat;
mod provider_openai_responses;
mod resume;
mod upstream_failure;
