//! The interai instance as a library: every module the binary and the integration tests share.

pub mod agent_documents;
pub mod apub;
pub mod bounded_memo;
pub mod cli;
pub mod clock;
pub mod config;
pub mod console;
pub mod domain;
pub mod http;
pub mod instance;
pub mod mcp;
pub mod metrics;
pub mod seed;
pub mod service;
pub mod store;
pub mod trust;
pub mod workers;
