//! Support for whole networks of instances in one test process.

pub mod network;
