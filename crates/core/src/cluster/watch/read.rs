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
use crate::cluster::negotiate::WireFormat;
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
    use futures::TryStreamExt;

    use super::*;
    use crate::cluster::kind::Pods;
    use crate::pod::WirePod;
    use crate::pod::proto_build::{body, field, frame, message};

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

    /// `bytes` as a body that arrives `step` bytes at a time.
    fn arriving(bytes: Vec<u8>, step: usize) -> impl AsyncBufRead + Send + 'static {
        let chunks: Vec<std::io::Result<Vec<u8>>> =
            bytes.chunks(step).map(|c| Ok(c.to_vec())).collect();
        futures::stream::iter(chunks).into_async_read()
    }

    async fn read_all(bytes: Vec<u8>, format: WireFormat) -> Vec<kube::Result<Read<WirePod>>> {
        events::<Pods>(arriving(bytes, 3), format).collect().await
    }

    fn pod_named(name: &str, version: &str) -> Vec<u8> {
        let meta = message(&[field(1, name.as_bytes()), field(6, version.as_bytes())]);
        body("Pod", &field(1, &meta))
    }

    #[tokio::test]
    async fn frames_split_across_reads_are_put_together_and_a_bad_one_is_skipped() {
        let garbage = [&4u32.to_be_bytes()[..], &[0xff, 0xff, 0xff, 0xff]].concat();
        let stream = [
            frame("ADDED", &pod_named("web", "7")),
            garbage,
            frame("MODIFIED", &pod_named("web", "8")),
        ]
        .concat();
        let read = read_all(stream, WireFormat::Protobuf).await;
        let [
            Ok(Read::Event(WatchEvent::Added(a))),
            Ok(Read::Undecodable(_)),
            Ok(Read::Event(WatchEvent::Modified(m))),
        ] = &read[..]
        else {
            panic!("{read:?}")
        };
        assert_eq!(
            (
                a.metadata.resource_version.as_str(),
                m.metadata.resource_version.as_str()
            ),
            ("7", "8")
        );
    }

    #[tokio::test]
    async fn a_frame_longer_than_any_object_breaks_the_stream() {
        let stream = [&u32::MAX.to_be_bytes()[..], b"rest"].concat();
        let read = read_all(stream, WireFormat::Protobuf).await;
        assert!(
            matches!(&read[..], [Err(kube::Error::ReadEvents(_))]),
            "{read:?}"
        );
    }

    #[tokio::test]
    async fn json_lines_give_events_skip_what_does_not_decode_and_read_an_error_status_at_the_end()
    {
        let lines = concat!(
            r#"{"type":"ADDED","object":{"metadata":{"name":"web","resourceVersion":"7"}}}"#,
            "\n\n",
            r#"{"type":"ADDED","object":{"metadata":{"name":7}}}"#,
            "\n",
            r#"{"kind":"Status","status":"Failure","reason":"Expired","code":410}"#,
        );
        let read = read_all(lines.as_bytes().to_vec(), WireFormat::Json).await;
        let [
            Ok(Read::Event(WatchEvent::Added(a))),
            Ok(Read::Undecodable(_)),
            Err(kube::Error::Api(gone)),
        ] = &read[..]
        else {
            panic!("{read:?}")
        };
        assert_eq!((a.metadata.name.as_str(), gone.code), ("web", 410));
    }

    #[tokio::test]
    async fn a_stream_ending_inside_an_event_ends_without_it() {
        let whole = frame("ADDED", &pod_named("web", "7"));
        let half = whole[..whole.len() / 2].to_vec();
        let read: Vec<_> = events::<Pods>(arriving(half, 5), WireFormat::Protobuf)
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        assert!(read.is_empty(), "{read:?}");
    }
}
