//! Secret-bearing keys: `url`/`urlFrom` and `secret`/`secretFrom` of the report sinks.
//!
//! A value is written inline or read from `{env: NAME}` or `{file: PATH}` when the config is
//! loaded, so a missing variable or file stops everything before start, as any bad config does.
//! Every error here names the key and the variable or file, and never quotes the value.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Result;
use super::read::{Field, MapReader};
use super::secret::{Secret, SecretSource, mask_url};
use super::tree::Value;

/// Where `{env: ...}` and `{file: ...}` are read: the process, or a fixed set in tests.
pub trait Environment {
    fn var(&self, name: &str) -> Option<OsString>;
    fn read_file(&self, path: &Path) -> std::io::Result<String>;
}

pub(crate) struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
}

/// A fixed set of variables and files, for tests and for checking a config written for
/// another machine (a Pod's mounted Secret). Anything not added is unset or missing.
#[derive(Debug, Default, Clone)]
pub struct FixedEnvironment {
    vars: BTreeMap<String, String>,
    files: BTreeMap<PathBuf, String>,
}

impl FixedEnvironment {
    pub fn with_var(mut self, name: &str, value: &str) -> FixedEnvironment {
        self.vars.insert(name.into(), value.into());
        self
    }
    pub fn with_file(mut self, path: impl Into<PathBuf>, text: &str) -> FixedEnvironment {
        self.files.insert(path.into(), text.into());
        self
    }
}

impl Environment for FixedEnvironment {
    fn var(&self, name: &str) -> Option<OsString> {
        self.vars.get(name).map(OsString::from)
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        self.files.get(path).cloned().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory")
        })
    }
}

/// A sink's webhook URL from `url` or `urlFrom`; `None` when neither is given.
pub(crate) fn url(m: &MapReader, env: &dyn Environment) -> Result<Option<Secret>> {
    let Some((field, secret)) = value(m, "url", env)? else {
        return Ok(None);
    };
    match check_url(secret.expose()) {
        Ok(()) => Ok(Some(secret)),
        Err(why) => Err(field.error(match secret.source() {
            SecretSource::Inline => why,
            from => format!("{from} holds no usable URL: {why}"),
        })),
    }
}

/// The seed's `apiurl`: inline only, checked like `url`.
pub(crate) fn inline_url(field: &Field) -> Result<Secret> {
    let text = inline(field)?;
    check_url(&text).map_err(|why| field.error(why))?;
    Ok(Secret::new(text))
}

/// Webhook URLs must be http(s) with a host; a typo here would only show up at the first
/// report. The message shows the URL masked, enough to spot a mistyped scheme or host, never
/// whole, since it may hold a token.
fn check_url(text: &str) -> std::result::Result<(), String> {
    let found = match reqwest::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
            return Ok(());
        }
        Ok(_) => format!(
            "{} (the rest is not shown: it may hold a token)",
            mask_url(text)
        ),
        Err(_) => "text that is not a URL (not shown: it may hold a token)".into(),
    };
    Err(format!(
        "expected an http:// or https:// URL, found {found}"
    ))
}

/// `key` inline or `{key}From`, never both; with the field to blame for a bad value. `None`
/// when neither is given.
pub(crate) fn value<'a>(
    m: &MapReader<'a>,
    key: &str,
    env: &dyn Environment,
) -> Result<Option<(Field<'a>, Secret)>> {
    let from_key = format!("{key}From");
    match (m.get(key), m.get(&from_key)) {
        (None, None) => Ok(None),
        (Some(_), Some(from)) => {
            Err(from.error(format!("give either {key:?} or {from_key:?}, not both")))
        }
        (Some(field), None) => {
            let secret = Secret::new(inline(&field)?);
            Ok(Some((field, secret)))
        }
        (None, Some(from)) => read_from(&from, env).map(Some),
    }
}

/// An inline secret: a non-empty string, trimmed. Errors say what kind of value was found,
/// never the value (`secret: 12345` is the secret itself, written unquoted).
fn inline(field: &Field) -> Result<String> {
    let Value::Str(text) = &field.node.value else {
        return Err(field.error(format!(
            "expected a string (quote it if it looks like a number or boolean), found {} \
             (not shown: this key holds a secret)",
            field.node.value.kind()
        )));
    };
    match text.trim() {
        "" => Err(field.error("expected a non-empty string")),
        text => Ok(text.to_string()),
    }
}

/// Why a sink is left out: a source of it marked `optional: true` is absent (a Secret not
/// created yet), in words; `None` when every source it names is there or is not optional.
pub(crate) fn optional_absent(m: &MapReader, env: &dyn Environment) -> Result<Option<String>> {
    for key in ["urlFrom", "secretFrom"] {
        let Some(from) = m.get(key) else { continue };
        let sources = from.map(&["env", "file", "optional"])?;
        let mut optional = false;
        sources.set("optional", &mut optional, Field::bool)?;
        if !optional {
            continue;
        }
        if let Some(name) = sources.get("env") {
            let var = name.non_empty()?;
            if env.var(&var).is_none() {
                return Ok(Some(format!(
                    "environment variable {var} is not set (optional)"
                )));
            }
        }
        if let Some(file) = sources.get("file") {
            let path = file.path()?;
            if let Err(e) = env.read_file(&path)
                && e.kind() == std::io::ErrorKind::NotFound
            {
                return Ok(Some(format!(
                    "file {} is absent (optional)",
                    path.display()
                )));
            }
        }
    }
    Ok(None)
}

/// `{env: NAME}` or `{file: PATH}`, either `optional` (see [`optional_absent`]).
fn read_from<'a>(from: &Field<'a>, env: &dyn Environment) -> Result<(Field<'a>, Secret)> {
    let m = from.map(&["env", "file", "optional"])?;
    match (m.get("env"), m.get("file")) {
        (Some(name), None) => {
            let var = name.non_empty()?;
            let value = env
                .var(&var)
                .ok_or_else(|| name.error(format!("environment variable {var} is not set")))?
                .into_string()
                .map_err(|_| {
                    name.error(format!("environment variable {var} is not valid UTF-8"))
                })?;
            let value = non_empty(&name, value, &format!("environment variable {var}"))?;
            Ok((name, Secret::from_source(value, SecretSource::Env(var))))
        }
        (None, Some(file)) => {
            let path = file.path()?;
            let text = env.read_file(&path).map_err(|e| {
                file.error(format!(
                    "cannot read {}: {}",
                    path.display(),
                    io_reason(&e)
                ))
            })?;
            let value = non_empty(&file, text, &format!("file {}", path.display()))?;
            Ok((file, Secret::from_source(value, SecretSource::File(path))))
        }
        _ => Err(from.error(
            "expected exactly one of {env: VARIABLE} or {file: PATH}, e.g. {env: FEISHU_WEBHOOK_URL}",
        )),
    }
}

/// Surrounding whitespace is dropped: files from Secrets and `echo` end in a newline.
fn non_empty(field: &Field, value: String, what: &str) -> Result<String> {
    match value.trim() {
        "" => Err(field.error(format!("{what} is empty"))),
        text => Ok(text.to_string()),
    }
}

/// The kind of I/O failure only: some errors (invalid UTF-8) describe the content.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::InvalidData => "it is not UTF-8 text".into(),
        _ => e.to_string(),
    }
}
