//! A protobuf list's pieces found as its bytes arrive, whatever the chunks: read from what
//! `list_pods` returns.

use opc_core::pod::MAGIC;

use crate::cluster_split::{Split, split_in};
use crate::pod_proto::proto_build::field;

/// A list body: its metadata (resourceVersion "meta"), two pods named "first" and "second",
/// and fields around them that are skipped.
fn body() -> Vec<u8> {
    let named = |name: &[u8]| field(1, &field(1, name));
    let list = [
        field(1, &field(2, b"meta")),
        field(2, &named(b"first")),
        vec![3 << 3, 0x96, 0x01],
        field(2, &named(b"second")),
    ]
    .concat();
    let type_meta = field(1, &field(2, b"PodList"));
    [&MAGIC[..], &type_meta, &field(2, &list), &field(3, b"")].concat()
}

#[tokio::test]
async fn pieces_come_out_whatever_the_chunks() {
    let body = body();
    for chunk in 1..=body.len() {
        assert_eq!(
            split_in(&[&body], chunk).await.unwrap(),
            Split {
                names: vec!["first".into(), "second".into()],
                version: "meta".into(),
                token: None,
            },
            "chunks of {chunk}"
        );
    }
}
