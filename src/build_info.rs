//! What `--version` says about this build; `build.rs` fills in the commit, date and features.

/// e.g. `0.1.0 (commit 1d486c3, built 2026-11-25, features: demo)`; clap prefixes the name.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("OPC_BUILD_COMMIT"),
    ", built ",
    env!("OPC_BUILD_DATE"),
    ", features: ",
    env!("OPC_BUILD_FEATURES"),
    ")"
);
