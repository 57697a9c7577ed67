//! Reading frames off the wire with bounds: a line too long or a snapshot too large is a
//! typed error the client reconnects (or gives up) on, never memory that grows with whatever
//! a server, or something posing as one, sends.

use super::{Frame, Snapshot};

/// What a client accepts from one worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest line, in bytes. A snapshot is one line, so this bounds it too.
    pub max_line: usize,
    pub max_rows: usize,
}

/// The longest line of the feed, a snapshot's included, on both sides: the worker refuses to
/// serve a longer one (413) and the client refuses to read one.
pub const MAX_LINE: usize = 64 << 20;

/// The reason a worker's 413 carries when its findings would be a line longer than [`MAX_LINE`].
pub const OVER_BOUND: &str = "FeedOverBound";

impl Default for Limits {
    /// Room for 20,000 abnormal pods of ~3 KB each. A typical row is ~600 bytes of JSON; every
    /// text in it was capped when the pod was read (names 253 bytes, messages 1 KiB, a
    /// scheduler's verdict 4 KiB), though escaping can make a control character six bytes.
    fn default() -> Limits {
        Limits {
            max_line: MAX_LINE,
            max_rows: 20_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("a line longer than {max} bytes")]
    LineTooLong { max: usize },
    #[error("a snapshot of {rows} findings, more than {max}")]
    TooManyRows { rows: usize, max: usize },
    /// Not a frame this build reads; the serde error, with no text of the line in it.
    #[error("not a frame: {0}")]
    Malformed(String),
}

/// One line (without its newline) as a frame.
pub fn decode_line(line: &[u8], limits: &Limits) -> Result<Frame, DecodeError> {
    if line.len() > limits.max_line {
        return Err(DecodeError::LineTooLong {
            max: limits.max_line,
        });
    }
    let decoded = match line.starts_with(SNAPSHOT_LINE) {
        // Read straight into its rows: read as a `Frame`, serde would first copy the whole
        // line into its buffered form (a tree of every string) to find the tag. The tag is
        // the one field a `Snapshot` does not have, and is ignored.
        true => serde_json::from_slice::<Snapshot>(line).map(Frame::Snapshot),
        false => serde_json::from_slice::<Frame>(line),
    };
    let frame = decoded.map_err(|e| {
        // Only where it failed: serde's message may quote what it read.
        DecodeError::Malformed(format!(
            "{:?} at line {} column {}",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    match &frame {
        Frame::Snapshot(s) if s.findings.len() > limits.max_rows => Err(DecodeError::TooManyRows {
            rows: s.findings.len(),
            max: limits.max_rows,
        }),
        _ => Ok(frame),
    }
}

/// How a worker's snapshot line starts: serde writes an internally tagged enum's tag first.
const SNAPSHOT_LINE: &[u8] = br#"{"type":"snapshot","#;

/// Splits a byte stream into frames, one per line, holding at most one line's worth.
#[derive(Debug)]
pub struct LineReader {
    limits: Limits,
    partial: Vec<u8>,
    refused: Option<DecodeError>,
}

impl LineReader {
    pub fn new(limits: Limits) -> LineReader {
        LineReader {
            limits,
            partial: Vec::new(),
            refused: None,
        }
    }

    /// The frames of the lines `chunk` completes. A line past the bound is refused as soon as
    /// it passes it, before it is held whole; after any error the stream is done: every later
    /// call says the same.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Frame>, DecodeError> {
        if let Some(refused) = &self.refused {
            return Err(refused.clone());
        }
        let mut frames = Vec::new();
        let mut rest = chunk;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end);
            rest = after.get(1..).unwrap_or_default();
            let decoded = match self.partial.is_empty() {
                true => self.decoded(line),
                false => {
                    let mut whole = std::mem::take(&mut self.partial);
                    whole.extend_from_slice(line);
                    self.decoded(&whole)
                }
            };
            match decoded {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => {}
                Err(e) => return Err(self.refuse(e)),
            }
        }
        if self.partial.len() + rest.len() > self.limits.max_line {
            let max = self.limits.max_line;
            return Err(self.refuse(DecodeError::LineTooLong { max }));
        }
        self.partial.extend_from_slice(rest);
        Ok(frames)
    }

    /// A blank line (a keep-alive) is no frame.
    fn decoded(&self, line: &[u8]) -> Result<Option<Frame>, DecodeError> {
        match line.iter().all(u8::is_ascii_whitespace) {
            true => Ok(None),
            false => decode_line(line, &self.limits).map(Some),
        }
    }

    fn refuse(&mut self, e: DecodeError) -> DecodeError {
        self.partial = Vec::new();
        self.refused = Some(e.clone());
        e
    }
}
