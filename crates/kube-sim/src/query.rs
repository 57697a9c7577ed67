//! Query-string parsing for list, watch and delete parameters.

use std::time::Duration;

use super::resources::Res;
use super::select::{FieldSelector, LabelSelector};
use super::status::{ApiError, ApiResult};

/// Decoded `key=value` pairs of a query string.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let pairs = raw
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k), decode(v))
            })
            .collect();
        Self { pairs }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    pub fn int(&self, key: &str) -> ApiResult<Option<i64>> {
        self.get(key)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid {key}: {v:?}")))
            })
            .transpose()
    }

    pub fn is_watch(&self) -> bool {
        self.flag("watch")
    }

    pub fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

/// The selection and paging parameters shared by list and watch.
pub struct Selection {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selection {
    pub fn from_query(q: &Query, res: Res) -> ApiResult<Self> {
        let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = FieldSelector::parse(q.get("fieldSelector").unwrap_or(""), res)
            .map_err(ApiError::bad_request)?;
        Ok(Self { labels, fields })
    }

    pub fn matches(&self, obj: &serde_json::Value) -> bool {
        self.labels.matches(&super::meta::labels(obj)) && self.fields.matches(obj)
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields == FieldSelector::default()
    }
}

pub fn timeout(q: &Query) -> ApiResult<Option<Duration>> {
    Ok(q.int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map(|t| Duration::from_secs(t as u64)))
}

/// Percent-decoding with `+` as space (form encoding, as clients send it).
fn decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'+' => out.push(b' '),
            b'%' => match raw
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                Some(b) => {
                    out.push(b);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Hex, for opaque continue tokens.
pub fn hex_encode(raw: &str) -> String {
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

pub fn hex_decode(raw: &str) -> Option<String> {
    if !raw.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..raw.len())
        .step_by(2)
        .map(|i| {
            raw.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    String::from_utf8(bytes?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_selectors() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier%21%3Ddb&watch=1&x=%zz"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier!=db"));
        assert!(q.is_watch());
        assert_eq!(q.get("x"), Some("%zz"));
        assert_eq!(
            hex_decode(&hex_encode("7\u{0}ns/p")),
            Some("7\u{0}ns/p".to_string())
        );
        assert_eq!(hex_decode("zz"), None);
    }
}
