//! Appending one audit record to the log, whole or not at all: a write cut short (a full
//! disk) must not leave a fragment for the next record to join, which would make both one
//! unreadable line until the next start.

use std::fs::File;
use std::io::{self, Write};

/// Where records go: the log file; in tests, a disk that fills up mid-record.
pub(super) trait Appendable: Write {
    fn sync(&mut self) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    fn cut(&mut self, len: u64) -> io::Result<()>;
}

impl Appendable for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn cut(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

pub(super) struct Writer<F = File> {
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
        let start = self.file.len()?;
        if let Err(failed) = self.file.write_all(line).and_then(|_| self.file.sync()) {
            self.torn = self.file.cut(start).is_err();
            self.size = start;
            return Err(failed);
        }
        self.size = start + line.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk with room for `room` bytes in all.
    struct Disk {
        bytes: Vec<u8>,
        room: usize,
        cut_fails: bool,
    }

    fn disk(room: usize, cut_fails: bool) -> Writer<Disk> {
        let disk = Disk {
            bytes: Vec::new(),
            room,
            cut_fails,
        };
        Writer::new(disk, 0)
    }

    fn text(writer: &Writer<Disk>) -> String {
        String::from_utf8(writer.file.bytes.clone()).unwrap()
    }

    const LONG: &[u8] = b"{\"id\":\"2\",\"detail\":\"more than the disk has room for\"}\n";

    impl Write for Disk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.room.saturating_sub(self.bytes.len()));
            if n == 0 && !buf.is_empty() {
                return Err(io::ErrorKind::StorageFull.into());
            }
            self.bytes.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Appendable for Disk {
        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }

        fn len(&self) -> io::Result<u64> {
            Ok(self.bytes.len() as u64)
        }

        fn cut(&mut self, len: u64) -> io::Result<()> {
            if self.cut_fails {
                return Err(io::ErrorKind::PermissionDenied.into());
            }
            self.bytes.truncate(len as usize);
            Ok(())
        }
    }

    #[test]
    fn a_record_cut_short_by_a_full_disk_leaves_nothing_for_the_next_to_join() {
        let mut writer = disk(40, false);
        writer.append(b"{\"id\":\"1\"}\n").unwrap();
        let full = writer.append(LONG).unwrap_err();
        assert_eq!(full.kind(), io::ErrorKind::StorageFull);
        assert_eq!(
            text(&writer),
            "{\"id\":\"1\"}\n",
            "the fragment is cut away"
        );
        // Room again (a log rotated away, a volume grown): the next record is a line of its own.
        writer.file.room = usize::MAX;
        writer.append(b"{\"id\":\"3\"}\n").unwrap();
        assert_eq!(text(&writer), "{\"id\":\"1\"}\n{\"id\":\"3\"}\n");
        assert_eq!(writer.size, text(&writer).len() as u64);
    }

    #[test]
    fn a_fragment_that_cannot_be_cut_away_is_ended_before_the_next_record() {
        let mut writer = disk(40, true);
        writer.append(b"{\"id\":\"1\"}\n").unwrap();
        assert!(writer.append(LONG).is_err());
        writer.file.room = usize::MAX;
        writer.append(b"{\"id\":\"3\"}\n").unwrap();
        let text = text(&writer);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(
            lines[2], "{\"id\":\"3\"}",
            "the next record is whole: {text}"
        );
    }
}
