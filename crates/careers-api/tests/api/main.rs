//! Black-box HTTP tests: each rule of the specification and contract, on SQLite + memory and on
//! PostgreSQL + Redis.

mod fixtures;
mod helpers;

mod abuse;
mod admin_totp;
mod areas;
mod cli;
mod companies;
mod concurrency;
mod cookies;
mod credentials;
mod data_layer;
mod email_verification;
mod fast_paths;
mod faults;
mod forms;
mod hardening;
mod hiring_journey;
mod hot_reads;
mod instances;
mod invitations;
mod isolation;
mod job_stages;
mod jobs;
mod key_rotation;
mod members;
mod module_rules;
mod notes_events;
mod openapi;
mod password_reset;
mod performance_guards;
mod pipeline;
mod process;
mod properties;
mod requests;
mod response_cache;
mod search;
mod session_lifecycle;
mod session_management;
mod shapes;
mod smtp_sink;
mod timing;
mod tokens;
mod webhooks;
