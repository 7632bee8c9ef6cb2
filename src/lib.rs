//! The interai instance as a library: every module the binary and the integration tests share.
