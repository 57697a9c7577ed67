//! A watch answer's events as they arrive, in the format the server answered in: JSON, an
//! event a line, or protobuf, an event a frame (a 4-byte length, then the event).
//!
//! Either way an event that does not decode is skipped and the stream goes on (its end is
//! known from the line or the frame); a stream whose framing breaks ends the connection.

use bytes::{Bytes, BytesMut};
use futures::{AsyncBufRead, Stream, StreamExt};
use kube::core::{Status, WatchEvent};
use tokio_util::codec::{AnyDelimiterCodec, Decoder, FramedRead, LengthDelimitedCodec};
use tokio_util::compat::FuturesAsyncReadCompatExt;

use crate::cluster::kind::Kind;
use crate::config::WireFormat;
use crate::pod::FRAME_CAP;

#[derive(Debug)]
pub(super) enum Read<W> {
    Event(WatchEvent<W>),
    /// One event that does not decode, and why: skipped.
    Undecodable(String),
}

pub(super) fn events<K: Kind>(
    body: impl AsyncBufRead + Send + 'static,
    format: WireFormat,
) -> impl Stream<Item = kube::Result<Read<K::Wire>>> + Send + 'static {
    FramedRead::new(body.compat(), Framing::of(format))
        .filter_map(move |event| {
            futures::future::ready(match event {
                Ok(bytes) => read::<K>(&bytes, format).transpose(),
                Err(Broken::Read(e)) => Some(Err(kube::Error::ReadEvents(e))),
                Err(Broken::TooLong) => Some(Err(broken("an event longer than any object may be"))),
            })
        })
        // An error ends the stream: after a broken frame nothing more can be read in step.
        .scan(false, |ended, read| {
            let next = (!*ended).then(|| {
                *ended = read.is_err();
                read
            });
            futures::future::ready(next)
        })
}

/// One event's bytes; `None` for a blank line.
fn read<K: Kind>(event: &[u8], format: WireFormat) -> kube::Result<Option<Read<K::Wire>>> {
    match format {
        WireFormat::Json => json_line::<K::Wire>(event),
        WireFormat::Protobuf => Ok(Some(match K::proto_event(event) {
            Ok(event) => Read::Event(event),
            Err(e) => Read::Undecodable(e.to_string()),
        })),
    }
}

/// How a body is cut into events, each at most a frame's cap: JSON at each newline, protobuf
/// by each frame's 4-byte big-endian length.
enum Framing {
    Lines(AnyDelimiterCodec),
    Frames(LengthDelimitedCodec),
}

impl Framing {
    fn of(format: WireFormat) -> Framing {
        match format {
            WireFormat::Json => Framing::Lines(AnyDelimiterCodec::new_with_max_length(
                b"\n".to_vec(),
                Vec::new(),
                FRAME_CAP,
            )),
            WireFormat::Protobuf => Framing::Frames(
                LengthDelimitedCodec::builder()
                    .max_frame_length(FRAME_CAP)
                    .new_codec(),
            ),
        }
    }
}

/// Why a body cannot be read on.
enum Broken {
    Read(std::io::Error),
    /// Longer than the cap: a broken stream, not an event to wait for.
    TooLong,
}

impl From<std::io::Error> for Broken {
    fn from(e: std::io::Error) -> Broken {
        Broken::Read(e)
    }
}

impl Decoder for Framing {
    type Item = Bytes;
    type Error = Broken;

    fn decode(&mut self, buffer: &mut BytesMut) -> Result<Option<Bytes>, Broken> {
        match self {
            Framing::Lines(lines) => lines.decode(buffer).map_err(|_| Broken::TooLong),
            Framing::Frames(frames) => match frames.decode(buffer) {
                Ok(frame) => Ok(frame.map(BytesMut::freeze)),
                Err(_) => Err(Broken::TooLong),
            },
        }
    }

    /// A last JSON line without its newline is still a line; a frame cut short is not a frame.
    fn decode_eof(&mut self, buffer: &mut BytesMut) -> Result<Option<Bytes>, Broken> {
        match self {
            Framing::Lines(lines) => lines.decode_eof(buffer).map_err(|_| Broken::TooLong),
            Framing::Frames(_) => self.decode(buffer),
        }
    }
}

/// One JSON line: an event, an error `Status` the server wrote in place of one, or neither.
fn json_line<W: serde::de::DeserializeOwned>(line: &[u8]) -> kube::Result<Option<Read<W>>> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice::<WatchEvent<W>>(line) {
        Ok(event) => Ok(Some(Read::Event(event))),
        Err(e) => match serde_json::from_slice::<Status>(line) {
            Ok(status) if status.code != 0 => Err(kube::Error::Api(Box::new(
                crate::pod::capped_status(status),
            ))),
            _ => Ok(Some(Read::Undecodable(e.to_string()))),
        },
    }
}

fn broken(why: &str) -> kube::Error {
    kube::Error::ReadEvents(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("the watch stream is broken: {why}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::WirePod;

    #[test]
    fn an_error_line_keeps_its_message_cut() {
        let long = "x".repeat(100_000);
        let line =
            format!(r#"{{"kind":"Status","status":"Failure","message":"{long}","code":410}}"#);
        match json_line::<WirePod>(line.as_bytes()) {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.message.len(), crate::pod::MESSAGE_CAP);
            }
            _ => panic!("an error Status"),
        }
    }
}
