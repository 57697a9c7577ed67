//! `metav1.Status` failures, shaped exactly like kube-apiserver's.

use http::StatusCode;
use serde_json::{Value, json};

use crate::json::Fields;

/// An API failure: becomes a `Status` body with the matching HTTP code.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// Boxed: errors travel through every `Result` in the server and should stay small.
    pub details: Box<Details>,
}

/// `Status.details`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// The object the failure is about.
    pub name: Option<String>,
    /// The API group of the object ("" is omitted).
    pub group: String,
    /// The resource (plural) as the real server reports it, or the Kind for Invalid.
    pub kind: Option<String>,
    pub retry_after: Option<u32>,
    pub causes: Vec<Value>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Box::default(),
        }
    }

    /// Attach `details.{name,group,kind}`.
    pub fn about(mut self, group: &str, plural: &str, name: &str) -> Self {
        self.details.group = group.to_string();
        self.details.kind = Some(plural.to_string());
        if !name.is_empty() {
            self.details.name = Some(name.to_string());
        }
        self
    }

    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(404, "NotFound", format!("{what} \"{name}\" not found"))
            .about(group, plural, name)
    }

    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(
            409,
            "AlreadyExists",
            format!("{what} \"{name}\" already exists"),
        )
        .about(group, plural, name)
    }

    /// 409 Conflict: "Operation cannot be fulfilled on pods \"x\": {why}".
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let what = qualified(group, plural);
        let msg = format!("Operation cannot be fulfilled on {what} \"{name}\": {why}");
        Self::new(409, "Conflict", msg).about(group, plural, name)
    }

    pub fn modified(group: &str, plural: &str, name: &str) -> Self {
        Self::conflict(
            group,
            plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 422 Invalid: `Kind "name" is invalid: {why}`.
    /// Invalid errors name the Kind (not the resource) in `details.kind`.
    pub fn invalid(group: &str, kind: &str, name: &str, why: &str) -> Self {
        let what = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        Self::new(
            422,
            "Invalid",
            format!("{what} \"{name}\" is invalid: {why}"),
        )
        .about(group, kind, name)
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Gone", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn too_many_requests(message: impl Into<String>, retry_after: u32) -> Self {
        let mut e = Self::new(429, "TooManyRequests", message);
        e.details.retry_after = Some(retry_after);
        e
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got {content_type:?})"
            ),
        )
    }

    /// 503 ServiceUnavailable, as the service proxy answers when it has nowhere to go.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message)
    }

    /// A plain 404 for paths the server does not serve at all.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    pub fn http_status(&self) -> StatusCode {
        StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The `Status` object, as sent in bodies and in watch `ERROR` events.
    pub fn to_status(&self) -> Value {
        let mut details = serde_json::Map::new();
        if let Some(name) = &self.details.name {
            details.insert("name".into(), json!(name));
        }
        if !self.details.group.is_empty() {
            details.insert("group".into(), json!(self.details.group));
        }
        if let Some(kind) = &self.details.kind {
            details.insert("kind".into(), json!(kind));
        }
        if !self.details.causes.is_empty() {
            details.insert("causes".into(), Value::Array(self.details.causes.clone()));
        }
        if let Some(secs) = self.details.retry_after {
            details.insert("retryAfterSeconds".into(), json!(secs));
        }
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if !details.is_empty() {
            status.set("details", Value::Object(details));
        }
        status
    }
}

/// A success `Status`, returned by deletes of most resources.
pub fn success(group: &str, plural: &str, name: &str, uid: &str) -> Value {
    let mut details = json!({ "name": name, "kind": plural, "uid": uid });
    if !group.is_empty() {
        details.set("group", json!(group));
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

/// `pods` or `deployments.apps`, as used in real messages.
pub fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
