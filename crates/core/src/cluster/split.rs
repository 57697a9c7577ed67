//! Finds a list's items in its JSON as the bytes arrive, so no list body is ever held whole.
//!
//! A server whose watch cache cannot page answers `resourceVersion=0` with every pod in one
//! body (1.6 GB at 150,000 pods). The splitter keeps only the bytes of the item it is in:
//! each complete item of the top-level `items` array and the top-level `metadata` object are
//! handed out as they end; everything else (`kind`, `apiVersion`) is skipped. It checks only
//! the structure it needs to find their ends; an item is validated when it is decoded.

/// A piece of a list, handed out as soon as its last byte has arrived.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// The top-level `metadata` object (resourceVersion, continue).
    Meta(&'a [u8]),
    /// One element of the top-level `items` array.
    Item(&'a [u8]),
}

/// The body is not a JSON object with an `items` array.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why} at byte {at}")]
pub(crate) struct Malformed {
    /// The offset in the body where it went wrong.
    pub at: u64,
    pub why: &'static str,
}

/// Finds the pieces of a list in its body as the bytes arrive, whatever its format.
pub(crate) trait ListSplitter: Send {
    /// Take the next bytes of the body; every piece completed by them goes to `on`.
    fn feed(&mut self, bytes: &[u8], on: &mut dyn FnMut(Piece<'_>)) -> Result<(), Malformed>;

    /// The body has ended: it must have been a whole list.
    fn finish(&self) -> Result<(), Malformed>;
}

/// Where the splitter is in the top-level object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum At {
    /// Before the opening `{`.
    #[default]
    Start,
    /// After `{` or `,`: a key, or `}` right after `{`.
    Key {
        first: bool,
    },
    InKey,
    /// After a key: the `:`.
    Colon,
    /// After the `:`: the key's value begins.
    Value,
    /// Inside a value that is not `items`.
    InValue,
    /// After a value: `,` or `}`.
    AfterValue,
    /// Inside `items`, where an element or `]` comes (`first`: right after `[`).
    Element {
        first: bool,
    },
    InElement,
    /// After an element: `,` or `]`.
    AfterElement,
    /// After the closing `}`: only white space may follow.
    End,
}

/// What the key being read or whose value is being read is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Key {
    Items,
    Metadata,
    #[default]
    Other,
}

#[derive(Debug, Default)]
pub(crate) struct Splitter {
    /// Unconsumed bytes: from the start of the token being read to the end of what arrived.
    buf: Vec<u8>,
    /// How far into `buf` the scan has got.
    pos: usize,
    /// The body offset of `buf[0]`, for errors.
    offset: u64,
    at: At,
    key: Key,
    scan: ValueScan,
    seen_items: bool,
}

impl ListSplitter for Splitter {
    fn feed(&mut self, bytes: &[u8], on: &mut dyn FnMut(Piece<'_>)) -> Result<(), Malformed> {
        self.buf.extend_from_slice(bytes);
        // Where the token being read began (the last feed kept nothing before it): bytes
        // before it are done with.
        let mut start = 0;
        while let Some(&byte) = self.buf.get(self.pos) {
            if is_space(byte) && self.between_tokens() {
                self.pos += 1;
            } else {
                self.step(byte, &mut start, on)?;
            }
            if self.between_tokens() {
                start = self.pos;
            }
        }
        // Keep only the token still being read.
        self.buf.drain(..start);
        self.pos -= start;
        self.offset += start as u64;
        Ok(())
    }

    fn finish(&self) -> Result<(), Malformed> {
        match self.at {
            At::End if self.seen_items => Ok(()),
            At::End => Err(self.error("the list has no items")),
            _ => Err(self.error("the list ended early")),
        }
    }
}

impl Splitter {
    /// Where white space may come before the next token.
    fn between_tokens(&self) -> bool {
        !matches!(self.at, At::InKey | At::InValue | At::InElement)
    }

    /// One step through the top-level object; a piece goes to `on` as it ends.
    fn step(
        &mut self,
        byte: u8,
        start: &mut usize,
        on: &mut dyn FnMut(Piece<'_>),
    ) -> Result<(), Malformed> {
        match self.at {
            At::Start => {
                self.expect(byte, b'{', "the list is not a JSON object")?;
                self.at = At::Key { first: true };
            }
            At::Key { first } => match byte {
                b'"' => {
                    self.pos += 1;
                    *start = self.pos;
                    self.at = At::InKey;
                }
                b'}' if first => self.close(),
                _ => return Err(self.error("expected a key")),
            },
            At::InKey => self.key_under_way(*start),
            At::Colon => {
                self.expect(byte, b':', "expected ':' after a key")?;
                self.at = At::Value;
            }
            At::Value if self.key == Key::Items => {
                self.seen_items = true;
                if byte == b'n' {
                    // `"items": null` is an empty list.
                    self.begin_value(start, At::InValue);
                    self.key = Key::Other;
                } else {
                    self.expect(byte, b'[', "items is not an array")?;
                    self.at = At::Element { first: true };
                }
            }
            At::Value => self.begin_value(start, At::InValue),
            At::InValue => {
                if let Some(end) = self.scan_value()? {
                    if self.key == Key::Metadata {
                        on(Piece::Meta(self.buf.get(*start..end).unwrap_or_default()));
                    }
                    self.at = At::AfterValue;
                }
            }
            At::AfterValue => match byte {
                b',' => {
                    self.pos += 1;
                    self.at = At::Key { first: false };
                }
                b'}' => self.close(),
                _ => return Err(self.error("expected ',' or '}' after a value")),
            },
            At::End => return Err(self.error("bytes after the end of the list")),
            At::Element { first: true } if byte == b']' => {
                self.pos += 1;
                self.at = At::AfterValue;
            }
            At::Element { .. } => self.begin_value(start, At::InElement),
            At::InElement => {
                if let Some(end) = self.scan_value()? {
                    on(Piece::Item(self.buf.get(*start..end).unwrap_or_default()));
                    self.at = At::AfterElement;
                }
            }
            At::AfterElement => match byte {
                b',' => {
                    self.pos += 1;
                    self.at = At::Element { first: false };
                }
                b']' => {
                    self.pos += 1;
                    self.at = At::AfterValue;
                }
                _ => return Err(self.error("expected ',' or ']' after an item")),
            },
        }
        Ok(())
    }

    /// A key's string under way: read to its closing quote, then which key it is.
    fn key_under_way(&mut self, start: usize) {
        match memchr::memchr2(b'"', b'\\', self.rest()) {
            None => self.pos = self.buf.len(),
            Some(n) if self.buf.get(self.pos + n) == Some(&b'\\') => {
                // An escaped key is none of ours; skip the escape and read on.
                self.pos += n + 2;
            }
            Some(n) => {
                let end = self.pos + n;
                self.key = match self.buf.get(start..end) {
                    Some(b"items") => Key::Items,
                    Some(b"metadata") => Key::Metadata,
                    _ => Key::Other,
                };
                self.pos = end + 1;
                self.at = At::Colon;
            }
        }
    }

    /// A value (or an element) begins here; `within` is where its bytes are read.
    fn begin_value(&mut self, start: &mut usize, within: At) {
        *start = self.pos;
        self.scan = ValueScan::default();
        self.at = within;
    }

    fn close(&mut self) {
        self.pos += 1;
        self.at = At::End;
    }

    fn expect(&mut self, byte: u8, want: u8, why: &'static str) -> Result<(), Malformed> {
        if byte != want {
            return Err(self.error(why));
        }
        self.pos += 1;
        Ok(())
    }

    /// Scan the value under way; `Some(end)` once it has ended at `buf[..end]`.
    fn scan_value(&mut self) -> Result<Option<usize>, Malformed> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match self.scan.advance(rest) {
            Ok(Some(n)) => {
                self.pos += n;
                Ok(Some(self.pos))
            }
            Ok(None) => {
                self.pos = self.buf.len();
                Ok(None)
            }
            Err(n) => {
                self.pos += n;
                Err(self.error("unbalanced brackets"))
            }
        }
    }

    /// What has arrived and is not scanned yet.
    fn rest(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    fn error(&self, why: &'static str) -> Malformed {
        Malformed {
            at: self.offset + self.pos as u64,
            why,
        }
    }
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Finds where one JSON value ends, across as many calls as its bytes take to arrive.
#[derive(Debug, Default, Clone, Copy)]
struct ValueScan {
    begun: bool,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// A number, `true`, `false` or `null`: it ends before the next delimiter.
    scalar: bool,
}

impl ValueScan {
    /// Scan `bytes` (what follows what was scanned before): `Ok(Some(n))` when the value ends
    /// after `n` of them, `Ok(None)` when it goes on, `Err(n)` on a closing bracket too many.
    fn advance(&mut self, bytes: &[u8]) -> Result<Option<usize>, usize> {
        let mut i = 0;
        while let Some(&byte) = bytes.get(i) {
            if self.escaped {
                self.escaped = false;
                i += 1;
                continue;
            }
            if self.in_string {
                let rest = bytes.get(i..).unwrap_or_default();
                match memchr::memchr2(b'"', b'\\', rest) {
                    None => return Ok(None),
                    Some(n) if rest.get(n) == Some(&b'\\') => {
                        self.escaped = true;
                        i += n + 1;
                    }
                    Some(n) => {
                        self.in_string = false;
                        i += n + 1;
                        if self.depth == 0 {
                            return Ok(Some(i));
                        }
                    }
                }
                continue;
            }
            if self.scalar {
                if is_space(byte) || matches!(byte, b',' | b'}' | b']') {
                    return Ok(Some(i));
                }
                i += 1;
                continue;
            }
            if !self.begun {
                self.begun = true;
                if !matches!(byte, b'"' | b'{' | b'[') {
                    self.scalar = true;
                    i += 1;
                    continue;
                }
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.checked_sub(1).ok_or(i)?;
                    if self.depth == 0 {
                        return Ok(Some(i + 1));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_item_under_way_is_kept() {
        let item = format!(r#"{{"pad":"{}"}}"#, "x".repeat(1000));
        let mut splitter = Splitter::default();
        splitter
            .feed(br#"{"metadata":{},"items":["#, &mut |_| {})
            .unwrap();
        let mut count = 0;
        for _ in 0..1000 {
            splitter
                .feed(format!("{item},").as_bytes(), &mut |_| count += 1)
                .unwrap();
            assert!(splitter.buf.len() <= 1, "{} bytes kept", splitter.buf.len());
        }
        splitter.feed(b"{}]}", &mut |_| count += 1).unwrap();
        splitter.finish().unwrap();
        assert_eq!(count, 1001);
    }
}
