//! Protobuf as the API server writes it, built by hand for tests: fields, messages, whole
//! bodies and watch frames.

use super::MAGIC;

/// A length-delimited field: a string, bytes or a message.
pub(crate) fn field(number: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(number) << 3 | 2);
    out.extend(varint(bytes.len() as u64));
    out.extend_from_slice(bytes);
    out
}

pub(crate) fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

pub(crate) fn message(fields: &[Vec<u8>]) -> Vec<u8> {
    fields.concat()
}

/// A whole body: the magic, then an envelope naming `kind` around `raw`.
pub(crate) fn body(kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = message(&[field(1, b"v1"), field(2, kind.as_bytes())]);
    [&MAGIC[..], &field(1, &type_meta), &field(2, raw)].concat()
}

/// A watch frame as the API server streams it: a length, then a bare WatchEvent whose object
/// is a whole body.
pub(crate) fn frame(kind: &str, object: &[u8]) -> Vec<u8> {
    let event = message(&[field(1, kind.as_bytes()), field(2, &field(1, object))]);
    [&(event.len() as u32).to_be_bytes()[..], &event].concat()
}
