//! Values that must never be printed: webhook URLs (their path or query is the token) and
//! signing secrets. [`Secret`] redacts itself in `Debug` and `Display`; only [`Secret::expose`]
//! hands out the value, so printing one takes a deliberate call that a reviewer can see.

use std::fmt;
use std::path::PathBuf;

/// Where a secret was read from. Printable: it names a variable or a file, never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// Written in the config file itself.
    Inline,
    Env(String),
    File(PathBuf),
}

impl fmt::Display for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SecretSource::Inline => f.write_str("inline"),
            SecretSource::Env(name) => write!(f, "env {name}"),
            SecretSource::File(path) => write!(f, "file {}", path.display()),
        }
    }
}

#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    value: String,
    source: SecretSource,
}

impl Secret {
    /// A value written in the config (or built by a test).
    pub fn new(value: impl Into<String>) -> Secret {
        Secret::from_source(value, SecretSource::Inline)
    }

    pub fn from_source(value: impl Into<String>, source: SecretSource) -> Secret {
        Secret {
            value: value.into(),
            source,
        }
    }

    /// The value itself: for the HTTP request or the HMAC key, never for a message.
    pub fn expose(&self) -> &str {
        &self.value
    }

    pub fn source(&self) -> &SecretSource {
        &self.source
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Secret(<redacted>, {})", self.source)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The one way a URL is shown: scheme and host (and port), e.g. `https://open.feishu.cn/…`.
/// Userinfo, path, query and fragment may all hold a token, so none of them is shown; text
/// that does not parse as a URL with a host is shown as `…` alone.
pub fn mask_url(text: &str) -> String {
    let Ok(url) = reqwest::Url::parse(text.trim()) else {
        return "…".into();
    };
    match url.host_str() {
        Some(host) if !host.is_empty() => {
            let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{host}{port}/…", url.scheme())
        }
        _ => "…".into(),
    }
}

/// `text` with every occurrence of the given secrets replaced by `…`: for messages that quote
/// a server's answer, which may echo the URL or its token back (`Cannot POST /hook/<token>`).
/// Plain words of a URL (`services`, `open-apis`) stay, so the message stays readable.
pub fn scrub(text: &str, secrets: &[&Secret]) -> String {
    let mut fragments: Vec<String> = Vec::new();
    for secret in secrets {
        fragments.extend(fragments_of(secret.expose()));
    }
    // Longest first, so a whole URL goes before the segments inside it.
    fragments.sort_by_key(|f| std::cmp::Reverse(f.len()));
    fragments
        .iter()
        .filter(|f| !f.is_empty())
        .fold(text.to_string(), |out, f| out.replace(f.as_str(), "…"))
}

fn fragments_of(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string(), value.trim().to_string()];
    let Ok(url) = reqwest::Url::parse(value.trim()) else {
        return out;
    };
    let pairs = url.query().unwrap_or("").split('&').flat_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        [pair, key, value]
    });
    let tokens: Vec<&str> = url
        .path()
        .split('/')
        .chain(pairs)
        .chain(url.fragment())
        .chain([url.username()])
        .chain(url.password())
        .filter(|p| looks_like_a_token(p))
        .collect();
    // A URL without a token-like part hides nothing past its host: do not scrub its "/".
    if !tokens.is_empty() {
        let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
        out.push(format!("{}{query}", url.path()));
        out.push(url.as_str().to_string());
    }
    out.extend(tokens.into_iter().map(str::to_string));
    out
}

/// Long, or mixing letters and digits: what generated tokens look like, and words do not.
fn looks_like_a_token(part: &str) -> bool {
    let long = part.chars().count() >= 16;
    let mixed = part.chars().any(|c| c.is_ascii_digit())
        && part.chars().any(|c| c.is_alphabetic())
        && part.chars().count() >= 6;
    long || mixed
}
