//! A JSON list's items and metadata found as its bytes arrive, however they are cut: read
//! from what `list_pods` returns and the next page it asks for.

use opc_core::cluster::{ListError, Scope, list_pods};
use opc_core::config::WireFormat;

use crate::cluster_watch::{Answer, scripted};

/// What a list showed: its pods' names, its resourceVersion, and the `continue` token of the
/// page asked for after it, if one was.
#[derive(Debug, PartialEq)]
pub(crate) struct Split {
    pub(crate) names: Vec<String>,
    pub(crate) version: String,
    pub(crate) token: Option<String>,
}

/// `list_pods` answered with `pages` in turn, each sent `step` bytes at a time.
pub(crate) async fn split_in(pages: &[&[u8]], step: usize) -> Result<Split, ListError> {
    let script = pages
        .iter()
        .map(|page| Answer::body(200, *page).in_pieces(step))
        .collect();
    let (client, mut server) = scripted(script);
    let tokens = tokio::spawn(async move {
        let mut token = None;
        while let Some(seen) = server.next_or_end().await {
            token = token.or(seen.param("continue"));
        }
        token
    });
    let listed = list_pods(&client, &Scope::All, 500, WireFormat::Json).await;
    drop(client);
    let token = tokens.await.unwrap();
    let listed = listed?;
    Ok(Split {
        names: listed.pods.iter().map(|p| p.name.to_string()).collect(),
        version: listed.resource_version,
        token,
    })
}

/// `body`, then a last page with no metadata, split the same whatever the cut.
async fn every_split(body: &str) -> Split {
    let pages: [&[u8]; 2] = [body.as_bytes(), br#"{"items":[]}"#];
    let whole = split_in(&pages, body.len()).await.unwrap();
    for step in 1..body.len() {
        assert_eq!(
            split_in(&pages, step).await.unwrap(),
            whole,
            "fed {step} bytes at a time"
        );
    }
    whole
}

const LIST: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"a\"}b"},"items":[{"metadata":{"name":"a]}"},"n":[1,{"x":"\\"}]},
    {"metadata":{"name":"b"},"s":"\u00e9 {"} ,{ } ]}"#;

#[tokio::test]
async fn items_and_metadata_come_out_whole_however_the_bytes_are_cut() {
    let split = every_split(LIST).await;
    assert_eq!(
        (split.version.as_str(), split.token.as_deref()),
        ("42", Some(r#"a"}b"#))
    );
    assert_eq!(split.names, ["a]}", "b", ""]);
}

#[tokio::test]
async fn keys_in_any_order_and_scalars_beside_them() {
    let body = r#" { "items" : [ ] , "n" : -1.5e3 , "t" : true , "metadata" : { } , "z":null } "#;
    let split = every_split(body).await;
    assert_eq!((split.version.as_str(), split.token), ("", None));
    assert!(split.names.is_empty());
    let null_items = every_split(r#"{"metadata":{},"items":null}"#).await;
    assert!(null_items.names.is_empty());
}
