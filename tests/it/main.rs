//! The integration test binary: whole instances in one process, on SQLite by default and on PostgreSQL
//! when `INTERAI_TEST_DATABASE_URL` is set.

mod admin_api;
mod admin_truth;
mod archive;
mod cli;
mod console;
mod console_activity;
mod console_knowledge;
mod console_people;
mod discovery;
mod documents;
mod evidence_federation;
mod federation;
mod federation_processes;
mod fixtures;
mod foundation;
mod harness;
mod hostile_input;
mod instance_trust;
mod knowledge;
mod mcp_client;
mod mcp_endpoint;
mod mcp_protocol;
mod mcp_tools;
mod metrics;
mod migrations;
mod operations;
mod public_routes;
mod replication;
mod resources;
mod search_quality;
mod search_window;
mod secrets_at_rest;
mod stalled_requests;
mod support;
mod tidy;
