//! A simulated Kubernetes API server for `--demo` and the integration tests.
