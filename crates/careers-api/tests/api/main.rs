//! Black-box HTTP tests: each rule of the specification and contract, on SQLite + memory and on
//! PostgreSQL + Redis.

mod helpers;

mod cli;
mod concurrency;
mod cookies;
mod data_layer;
mod isolation;
mod requests;
mod session_lifecycle;
mod tokens;
