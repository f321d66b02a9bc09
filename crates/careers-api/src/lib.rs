//! careers-api: the HTTP API of the careers marketplace.
//!
//! Data flows one way: tower layers -> area router -> area extractor (authenticate with the
//! context, authorise the area) -> thin handler -> data layer -> view.

pub mod answers;
pub mod app;
pub mod areas;
pub mod audit;
pub mod cli;
pub mod config;
pub mod contexts;
pub mod db;
pub mod demo;
pub mod edge;
pub mod error;
pub mod extract;
pub mod forms;
pub mod logging;
pub mod mail;
pub mod metrics;
pub mod mfa;
pub mod models;
pub mod openapi;
pub mod password;
pub mod seed;
pub mod state;
pub mod throttle;
pub mod timestamp;
pub mod views;
pub mod webhooks;
