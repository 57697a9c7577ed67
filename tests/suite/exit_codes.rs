//! Each error's exit code: 2 when the config or the command line is the user's to fix, 3 for
//! anything that went wrong while running.

use std::io;
use std::path::PathBuf;

use kube::config::KubeconfigError;

use opc_core::Error;
use opc_core::actions::ReadError;
use opc_core::cluster::{ClusterName, ConnectError, ListProblem, RequestError, Scope};
use opc_core::config::{ConfigError, Problem};
use opc_core::error::{FileKind, IoOp};
use opc_core::lease::LeaseError;
use ops_pod_cleaner::commands::{EXIT_CONFIG, EXIT_RUNTIME, exit_code};

fn io_error() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "denied")
}

fn core_exit_code(error: Error) -> u8 {
    exit_code(&ops_pod_cleaner::Error::Core(error))
}

/// Each case is a variant's pattern, an example of it and the code it must exit with. The
/// patterns also make one `match` with no wildcard: a variant without a case here does not
/// compile, and the example must be of the variant its pattern names.
macro_rules! check_every_variant {
    ($($variant:pat => $example:expr, $code:expr;)+) => {
        $(
            let example = $example;
            assert!(matches!(example, $variant), "{example:?} is not {}", stringify!($variant));
            let shown = format!("{example:?}");
            assert_eq!(core_exit_code(example), $code, "{shown}");
        )+
        let _every_variant_has_a_case = |error: &Error| match error {
            $($variant => (),)+
        };
    };
}

#[test]
fn each_error_exits_with_its_code() {
    check_every_variant! {
        Error::Config(_) => Error::Config(ConfigError::of_file(
            "config.yaml",
            Problem::NoSettings,
        )), EXIT_CONFIG;
        Error::Usage(_) => Error::Usage(opc_core::Usage::NoCluster), EXIT_CONFIG;
        Error::Io { .. } => Error::Io {
            path: PathBuf::from("/audit.jsonl"),
            op: IoOp::Write,
            source: io_error(),
        }, EXIT_RUNTIME;
        Error::UnsafeFile { .. } => Error::UnsafeFile {
            path: PathBuf::from("/audit.jsonl"),
            found: FileKind::Symlink,
        }, EXIT_RUNTIME;
        Error::HttpClient(_) => Error::HttpClient(
            reqwest::Client::new().get("not a url").build().unwrap_err(),
        ), EXIT_RUNTIME;
        Error::Encode(_) => Error::Encode(serde_json::from_str::<u8>("x").unwrap_err()),
            EXIT_RUNTIME;
        Error::Connect(_) => Error::Connect(ConnectError::Silent {
            cluster: ClusterName::new("prod"),
            url: "https://prod:6443".into(),
        }), EXIT_RUNTIME;
        Error::NotSynced { .. } => Error::NotSynced {
            within: std::time::Duration::from_secs(120),
            last_error: None,
        }, EXIT_RUNTIME;
        Error::Kubeconfig(_) => Error::Kubeconfig(KubeconfigError::CurrentContextNotSet),
            EXIT_RUNTIME;
        Error::Request(_) => Error::Request(RequestError {
            verb: "list",
            resource: "pods",
            scope: Scope::All,
            source: Box::new(kube::Error::Service("down".into())),
            context: None,
        }), EXIT_RUNTIME;
        Error::Read { .. } => Error::Read {
            cluster: ClusterName::new("prod"),
            source: ReadError::Gone("ConfigMap ops/parked".into()),
        }, EXIT_RUNTIME;
        Error::List(_) => Error::List(ListProblem::PageLost("cancelled".into())), EXIT_RUNTIME;
        Error::Lease { .. } => Error::Lease {
            lease: "ops/ops-pod-cleaner".into(),
            source: LeaseError::Vanished,
        }, EXIT_RUNTIME;
        Error::NoSuchNamespace(_) => Error::NoSuchNamespace(vec!["no namespace x".into()]),
            EXIT_RUNTIME;
        Error::Kube(_) => Error::Kube(kube::Error::Service("down".into())), EXIT_RUNTIME;
    }
}

/// The binary's own: a port taken is the command line's to fix; the rest is not.
#[test]
fn the_binarys_own_errors_exit_with_their_codes() {
    use ops_pod_cleaner::Error;
    let listen = Error::Listen {
        addr: ([127, 0, 0, 1], 9).into(),
        source: io_error(),
    };
    let terminal = Error::Terminal {
        what: "terminal",
        source: io_error(),
    };
    let demo = Error::DemoStart {
        name: "demo-eu".into(),
        source: io_error(),
    };
    assert_eq!(exit_code(&listen), EXIT_CONFIG);
    assert_eq!(exit_code(&terminal), EXIT_RUNTIME);
    assert_eq!(exit_code(&demo), EXIT_RUNTIME);
    let usage: Error = opc_core::Usage::NoCluster.into();
    assert_eq!(exit_code(&usage), EXIT_CONFIG);
}
