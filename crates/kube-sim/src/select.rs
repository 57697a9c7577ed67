//! Label and field selectors, from query strings and from `LabelSelector` objects.

use serde_json::{Map, Value};

use super::meta;
use super::resources::Res;

#[derive(Clone, Debug, PartialEq)]
enum Op {
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    reqs: Vec<(String, Op)>,
    /// A `LabelSelector` object that can never match (bad operator).
    nothing: bool,
}

impl LabelSelector {
    /// Parse `a=b,c!=d,e in (f,g),!h,i`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for term in split_terms(raw) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            reqs.push(parse_term(term)?);
        }
        Ok(Self {
            reqs,
            nothing: false,
        })
    }

    /// From a `metav1.LabelSelector` JSON object (matchLabels + matchExpressions).
    pub fn from_object(sel: Option<&Value>) -> Self {
        let mut out = Self::default();
        let Some(sel) = sel else { return out };
        if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                let v = v.as_str().unwrap_or("").to_string();
                out.reqs.push((k.clone(), Op::In(vec![v])));
            }
        }
        for expr in sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = meta::str_at(expr, "/key").to_string();
            let values: Vec<String> = expr
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let op = match meta::str_at(expr, "/operator") {
                "In" => Op::In(values),
                "NotIn" => Op::NotIn(values),
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::NotExists,
                _ => {
                    out.nothing = true;
                    continue;
                }
            };
            out.reqs.push((key, op));
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty() && !self.nothing
    }

    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        if self.nothing {
            return false;
        }
        self.reqs.iter().all(|(key, op)| {
            let value = labels.get(key).and_then(Value::as_str);
            match op {
                Op::In(vals) => value.is_some_and(|v| vals.iter().any(|x| x == v)),
                Op::NotIn(vals) => value.is_none_or(|v| !vals.iter().any(|x| x == v)),
                Op::Exists => value.is_some(),
                Op::NotExists => value.is_none(),
            }
        })
    }
}

/// Split on commas that are not inside `(...)`.
fn split_terms(raw: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in raw.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&raw[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&raw[start..]);
    out
}

fn parse_term(term: &str) -> Result<(String, Op), String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok((valid_key(key.trim())?, Op::NotExists));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok((valid_key(k.trim())?, Op::NotIn(vec![v.trim().to_string()])));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok((valid_key(k.trim())?, Op::In(vec![v.trim().to_string()])));
    }
    for (word, is_in) in [(" notin ", false), (" in ", true)] {
        if let Some((k, rest)) = term.split_once(word) {
            let set = parse_set(rest.trim())?;
            let op = if is_in { Op::In(set) } else { Op::NotIn(set) };
            return Ok((valid_key(k.trim())?, op));
        }
    }
    Ok((valid_key(term)?, Op::Exists))
}

fn parse_set(raw: &str) -> Result<Vec<String>, String> {
    let inner = raw
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("found '{raw}', expected: '('"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn valid_key(key: &str) -> Result<String, String> {
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if ok {
        Ok(key.to_string())
    } else {
        Err(format!("invalid label key \"{key}\""))
    }
}

/// A field selector: `metadata.name=x,spec.nodeName!=y`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub fn parse(raw: &str, res: Res) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for term in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, eq, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                ));
            };
            let field = field.trim();
            if !supported_fields(res).contains(&field) {
                return Err(format!("field label not supported: {field}"));
            }
            reqs.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(Self { reqs })
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.reqs.iter().all(|(field, eq, want)| {
            // An Event's `source` field is its source's component, as the API server indexes it.
            let pointer = match field.as_str() {
                "source" => "/source/component".to_string(),
                f => format!("/{}", f.replace('.', "/")),
            };
            (meta::str_at(obj, &pointer) == want) == *eq
        })
    }
}

fn supported_fields(res: Res) -> &'static [&'static str] {
    match res {
        Res::Pod => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        Res::Event => &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "source",
            "type",
        ],
        _ => &["metadata.name", "metadata.namespace"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn equality_and_sets() {
        let l = labels(json!({"app": "web", "tier": "front"}));
        assert!(
            LabelSelector::parse("app=web,tier!=back")
                .unwrap()
                .matches(&l)
        );
        assert!(!LabelSelector::parse("app=db").unwrap().matches(&l));
        assert!(
            LabelSelector::parse("app in (web,db),!gone")
                .unwrap()
                .matches(&l)
        );
        assert!(
            !LabelSelector::parse("tier notin (front)")
                .unwrap()
                .matches(&l)
        );
        assert!(LabelSelector::parse("a b=c").is_err());
    }

    #[test]
    fn field_selector_checks_fields() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
        let sel = FieldSelector::parse("metadata.name=p,spec.nodeName!=n2", Res::Pod).unwrap();
        assert!(sel.matches(&pod));
        assert!(FieldSelector::parse("spec.bogus=x", Res::Pod).is_err());
    }
}
