//! Appending one audit record to the log, whole or not at all: a write cut short (a full
//! disk) must not leave a fragment for the next record to join, which would make both one
//! unreadable line until the next start.

use std::fs::File;
use std::io::{self, Write};

/// Where records go: the log file; in tests, a disk that fills up mid-record.
pub trait Appendable: Write {
    fn sync(&mut self) -> io::Result<()>;
    fn size(&self) -> io::Result<u64>;
    fn cut(&mut self, len: u64) -> io::Result<()>;
}

impl Appendable for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn cut(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// Appends records to `file`, each whole or not at all.
pub struct Writer<F = File> {
    file: F,
    /// Bytes in the file, for rotation.
    pub size: u64,
    /// A failed record could not be cut away: the next one starts with a newline.
    torn: bool,
}

impl<F: Appendable> Writer<F> {
    pub fn new(file: F, size: u64) -> Writer<F> {
        Writer {
            file,
            size,
            torn: false,
        }
    }

    /// Start on a new, empty file (the log was rotated).
    pub fn start_over(&mut self, file: F) {
        *self = Writer::new(file, 0);
    }

    /// Append `line` and sync it. If either fails, the file is cut back to where the line
    /// began; if even that fails, the next line starts on a line of its own.
    pub fn append(&mut self, line: &[u8]) -> io::Result<()> {
        if self.torn {
            self.file.write_all(b"\n")?;
            self.torn = false;
        }
        // Read now, not kept: another process may append to the same log.
        let start = self.file.size()?;
        if let Err(failed) = self.file.write_all(line).and_then(|_| self.file.sync()) {
            self.torn = self.file.cut(start).is_err();
            self.size = start;
            return Err(failed);
        }
        self.size = start + line.len() as u64;
        Ok(())
    }
}
