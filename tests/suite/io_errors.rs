//! How the errors the binary reports read, through its public API.

use std::io;
use std::path::PathBuf;

use opc_core::Error;
use opc_core::error::IoOp;

fn io_error() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "denied")
}

#[test]
fn io_errors_say_whether_they_read_or_wrote() {
    let error = |op| Error::Io {
        path: PathBuf::from("/var/lib/x"),
        op,
        source: io_error(),
    };
    assert_eq!(
        error(IoOp::Read).to_string(),
        "cannot read /var/lib/x: denied"
    );
    assert_eq!(
        error(IoOp::Write).to_string(),
        "cannot write /var/lib/x: denied"
    );
    assert!(std::error::Error::source(&error(IoOp::Write)).is_some());
}
