//! Finds a protobuf list's items as the bytes arrive, as [`super::split`] does for JSON: a
//! body is the magic `k8s\0` and a `runtime.Unknown` whose `raw` (field 2) is the list
//! message; in it, field 1 is the `ListMeta` and each field 2 an item. Only the bytes of the
//! piece being read are held; any other field is stepped over, even across chunks.

use super::split::{ListSplitter, Malformed, Piece};
use crate::pod::{FRAME_CAP, MAGIC};

/// Where the splitter is in the body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum At {
    #[default]
    Magic,
    /// Between fields of the envelope.
    Envelope,
    /// Inside the list message, with this many of its bytes still to come.
    List { left: u64 },
    /// Skipping this many bytes of a field not read; then back to the list, with `list` of
    /// its bytes still to come, or to the envelope when none.
    Skip { left: u64, list: Option<u64> },
}

#[derive(Debug, Default)]
pub(crate) struct ProtoSplitter {
    /// Unread bytes: from the start of the field being read to the end of what arrived.
    buf: Vec<u8>,
    /// The body offset of `buf[0]`, for errors.
    offset: u64,
    at: At,
    saw_list: bool,
}

/// A field's number, wire type and, for a length-delimited one, its length; and how many
/// bytes its head took. None while the head has not all arrived.
type Head = Option<(u64, u8, u64, usize)>;

/// A varint at the front of `bytes` and its length; None if it has not all arrived.
fn varint(bytes: &[u8]) -> Result<Option<(u64, usize)>, &'static str> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if bytes.len() >= 10 {
        Err("a varint longer than ten bytes")
    } else {
        Ok(None)
    }
}

/// The head of the field at the front of `bytes`: its key, and its length if it has one.
fn head(bytes: &[u8]) -> Result<Head, &'static str> {
    let Some((key, key_len)) = varint(bytes)? else {
        return Ok(None);
    };
    let (field, wire) = (key >> 3, (key & 7) as u8);
    let rest = bytes.get(key_len..).unwrap_or_default();
    let (len, len_len) = match wire {
        0 => match varint(rest)? {
            // A varint's value is skipped as a length of its own bytes.
            Some((_, n)) => (n as u64, 0),
            None => return Ok(None),
        },
        1 => (8, 0),
        2 => match varint(rest)? {
            Some((len, n)) => (len, n),
            None => return Ok(None),
        },
        5 => (4, 0),
        _ => return Err("a protobuf wire type Kubernetes does not write"),
    };
    Ok(Some((field, wire, len, key_len + len_len)))
}

impl ListSplitter for ProtoSplitter {
    fn feed(&mut self, chunk: &[u8], on: &mut dyn FnMut(Piece<'_>)) -> Result<(), Malformed> {
        self.buf.extend_from_slice(chunk);
        let mut pos = 0usize;
        let result = self.scan(&mut pos, on);
        self.buf.drain(..pos);
        self.offset += pos as u64;
        result
    }

    /// It must have ended between fields, after the list.
    fn finish(&self) -> Result<(), Malformed> {
        if self.at == At::Envelope && self.buf.is_empty() && self.saw_list {
            Ok(())
        } else {
            Err(self.malformed(0, "the protobuf list ends early"))
        }
    }
}

impl ProtoSplitter {
    fn malformed(&self, pos: usize, why: &'static str) -> Malformed {
        Malformed {
            at: self.offset + pos as u64,
            why,
        }
    }

    /// Reads what `buf[*pos..]` completes, moving `pos` past it.
    fn scan(&mut self, pos: &mut usize, on: &mut dyn FnMut(Piece<'_>)) -> Result<(), Malformed> {
        loop {
            let rest = self.buf.get(*pos..).unwrap_or_default();
            match self.at {
                At::Magic => {
                    if rest.len() < MAGIC.len() {
                        return Ok(());
                    }
                    if !rest.starts_with(MAGIC) {
                        return Err(self.malformed(*pos, "not a Kubernetes protobuf body"));
                    }
                    *pos += MAGIC.len();
                    self.at = At::Envelope;
                }
                At::Skip { left, list } => {
                    let n = (rest.len() as u64).min(left);
                    *pos += n as usize;
                    if n < left {
                        self.at = At::Skip {
                            left: left - n,
                            list,
                        };
                        return Ok(());
                    }
                    self.at = list.map_or(At::Envelope, |left| At::List { left });
                }
                At::Envelope => {
                    let Some((field, wire, len, head_len)) =
                        head(rest).map_err(|why| self.malformed(*pos, why))?
                    else {
                        return Ok(());
                    };
                    *pos += head_len;
                    self.at = if field == 2 && wire == 2 {
                        self.saw_list = true;
                        At::List { left: len }
                    } else {
                        At::Skip {
                            left: len,
                            list: None,
                        }
                    };
                }
                At::List { left: 0 } => self.at = At::Envelope,
                At::List { left } => {
                    let Some((field, wire, len, head_len)) =
                        head(rest).map_err(|why| self.malformed(*pos, why))?
                    else {
                        return Ok(());
                    };
                    let whole = (head_len as u64).checked_add(len);
                    let Some(whole) = whole.filter(|whole| *whole <= left) else {
                        return Err(self.malformed(*pos, "a list item runs past its list"));
                    };
                    let after = left - whole;
                    let held = wire == 2 && matches!(field, 1 | 2);
                    // What a server declares is not held on its word: no object is this large.
                    if held && len > FRAME_CAP as u64 {
                        return Err(self.malformed(*pos, "a list item larger than any object"));
                    }
                    if held {
                        // Held until all of it has arrived: the only piece ever held whole.
                        let Some(piece) = rest.get(head_len..head_len + len as usize) else {
                            return Ok(());
                        };
                        on(if field == 1 {
                            Piece::Meta(piece)
                        } else {
                            Piece::Item(piece)
                        });
                        *pos += head_len + len as usize;
                        self.at = At::List { left: after };
                    } else {
                        *pos += head_len;
                        self.at = At::Skip {
                            left: len,
                            list: Some(after),
                        };
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited protobuf field.
    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let length = u8::try_from(bytes.len()).unwrap();
        [&[number << 3 | 2, length][..], bytes].concat()
    }

    /// A list body: its metadata, two items, and fields around them that are skipped.
    fn body() -> Vec<u8> {
        let list = [
            field(1, b"meta"),
            field(2, b"first"),
            vec![3 << 3, 0x96, 0x01],
            field(2, b"second"),
        ]
        .concat();
        let type_meta = field(1, &field(2, b"PodList"));
        [&MAGIC[..], &type_meta, &field(2, &list), &field(3, b"")].concat()
    }

    #[test]
    fn a_cut_body_or_json_is_refused() {
        let whole = body();
        let mut splitter = ProtoSplitter::default();
        splitter
            .feed(&whole[..whole.len() - 4], &mut |_| {})
            .unwrap();
        assert!(splitter.finish().is_err());
        let mut splitter = ProtoSplitter::default();
        assert!(splitter.feed(b"{\"kind\":", &mut |_| {}).is_err());
    }
}
