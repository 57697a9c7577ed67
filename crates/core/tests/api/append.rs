//! Appending one audit record whole or not at all, on a disk that fills up mid-record.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use opc_core::actions::append::{Appendable, Writer};

/// A disk with room for `room` bytes in all, shared with the test that looks at it.
#[derive(Clone)]
struct Disk(Rc<RefCell<Room>>);

struct Room {
    bytes: Vec<u8>,
    room: usize,
    cut_fails: bool,
}

impl Disk {
    fn new(room: usize, cut_fails: bool) -> Disk {
        Disk(Rc::new(RefCell::new(Room {
            bytes: Vec::new(),
            room,
            cut_fails,
        })))
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.borrow().bytes.clone()).unwrap()
    }

    /// Room again: a log rotated away, a volume grown.
    fn grow(&self) {
        self.0.borrow_mut().room = usize::MAX;
    }
}

impl Write for Disk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut disk = self.0.borrow_mut();
        let n = buf.len().min(disk.room.saturating_sub(disk.bytes.len()));
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::StorageFull.into());
        }
        disk.bytes.extend_from_slice(&buf[..n]);
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

    fn size(&self) -> io::Result<u64> {
        Ok(self.0.borrow().bytes.len() as u64)
    }

    fn cut(&mut self, len: u64) -> io::Result<()> {
        let mut disk = self.0.borrow_mut();
        if disk.cut_fails {
            return Err(io::ErrorKind::PermissionDenied.into());
        }
        disk.bytes.truncate(len as usize);
        Ok(())
    }
}

const LONG: &[u8] = b"{\"id\":\"2\",\"detail\":\"more than the disk has room for\"}\n";

#[test]
fn a_record_cut_short_by_a_full_disk_leaves_nothing_for_the_next_to_join() {
    let disk = Disk::new(40, false);
    let mut writer = Writer::new(disk.clone(), 0);
    writer.append(b"{\"id\":\"1\"}\n").unwrap();
    let full = writer.append(LONG).unwrap_err();
    assert_eq!(full.kind(), io::ErrorKind::StorageFull);
    assert_eq!(disk.text(), "{\"id\":\"1\"}\n", "the fragment is cut away");
    disk.grow();
    writer.append(b"{\"id\":\"3\"}\n").unwrap();
    assert_eq!(disk.text(), "{\"id\":\"1\"}\n{\"id\":\"3\"}\n");
    assert_eq!(writer.size, disk.text().len() as u64);
}

#[test]
fn a_fragment_that_cannot_be_cut_away_is_ended_before_the_next_record() {
    let disk = Disk::new(40, true);
    let mut writer = Writer::new(disk.clone(), 0);
    writer.append(b"{\"id\":\"1\"}\n").unwrap();
    assert!(writer.append(LONG).is_err());
    disk.grow();
    writer.append(b"{\"id\":\"3\"}\n").unwrap();
    let text = disk.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[2], "{\"id\":\"3\"}",
        "the next record is whole: {text}"
    );
}
