//! A `kube::Client` over a scripted API: every request must be the next expected one (method,
//! path, query, body). `verify` fails on any request missing, extra or different, and so does
//! dropping the scenario: a test cannot build one and forget to check it.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use serde_json::Value;

struct Exchange {
    method: String,
    path: String,
    query: BTreeSet<String>,
    body: Option<Value>,
    status: u16,
    response: Value,
    /// Runs when the request arrives, before it is answered.
    on_arrival: Option<Box<dyn Fn() + Send>>,
    /// Never answer: the client waits until it gives up or is dropped.
    hang: bool,
    /// Checks a body that cannot be compared whole (it carries a time); says what is wrong.
    check: Option<BodyCheck>,
}

type BodyCheck = Box<dyn Fn(&Value) -> Result<(), String> + Send>;

#[derive(Default)]
struct State {
    expected: VecDeque<Exchange>,
    problems: Vec<String>,
}

/// Not `Clone`: the one value the test holds is the one whose drop verifies.
#[derive(Default)]
pub struct Scenario {
    state: Arc<Mutex<State>>,
}

fn split(uri: &str) -> (String, BTreeSet<String>) {
    match uri.split_once('?') {
        Some((path, query)) => (
            path.to_string(),
            query
                .split('&')
                .filter(|q| !q.is_empty())
                .map(String::from)
                .collect(),
        ),
        None => (uri.to_string(), BTreeSet::new()),
    }
}

impl Scenario {
    pub fn new() -> Scenario {
        Scenario::default()
    }

    /// Expect `method uri` (query in any order) with this JSON body (None: no body checked),
    /// and answer `status` with `response`.
    pub fn expect(
        self,
        method: &str,
        uri: &str,
        body: Option<Value>,
        status: u16,
        response: Value,
    ) -> Scenario {
        let (path, query) = split(uri);
        let exchange = Exchange {
            method: method.to_string(),
            path,
            query,
            body,
            status,
            response,
            on_arrival: None,
            hang: false,
            check: None,
        };
        self.state.lock().unwrap().expected.push_back(exchange);
        self
    }

    /// Like `expect`, running `hook` the moment the request arrives.
    pub fn expect_then(
        self,
        method: &str,
        uri: &str,
        body: Option<Value>,
        status: u16,
        response: Value,
        hook: impl Fn() + Send + 'static,
    ) -> Scenario {
        let scenario = self.expect(method, uri, body, status, response);
        if let Some(last) = scenario.state.lock().unwrap().expected.back_mut() {
            last.on_arrival = Some(Box::new(hook));
        }
        scenario
    }

    /// Like `expect`, with the body checked by `check` instead of compared whole.
    pub fn expect_body(
        self,
        method: &str,
        uri: &str,
        check: impl Fn(&Value) -> Result<(), String> + Send + 'static,
        status: u16,
        response: Value,
    ) -> Scenario {
        let scenario = self.expect(method, uri, None, status, response);
        if let Some(last) = scenario.state.lock().unwrap().expected.back_mut() {
            last.check = Some(Box::new(check));
        }
        scenario
    }

    /// The last expected request is received but never answered.
    pub fn hang_after(self) -> Scenario {
        if let Some(last) = self.state.lock().unwrap().expected.back_mut() {
            last.hang = true;
        }
        self
    }

    pub fn client(&self) -> kube::Client {
        let state = self.state.clone();
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            let state = state.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let Some((status, answer)) = answer(&state, &parts, &bytes) else {
                    return std::future::pending().await;
                };
                let response = Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(answer.to_string().into_bytes()))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    /// Fail the test on any unexpected or missing request.
    pub fn verify(&self) {
        let state = self.state.lock().unwrap();
        let mut problems = state.problems.clone();
        for left in &state.expected {
            problems.push(format!(
                "expected request never came: {} {}",
                left.method, left.path
            ));
        }
        assert!(
            problems.is_empty(),
            "API scenario:\n{}",
            problems.join("\n")
        );
    }
}

impl Drop for Scenario {
    /// Verified at the end of the test too. A test already failing has said why: a second
    /// panic while unwinding would abort the process instead.
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.verify();
        }
    }
}

/// The scripted answer, or `None` for a request that is never answered.
fn answer(
    state: &Mutex<State>,
    parts: &http::request::Parts,
    body: &Bytes,
) -> Option<(u16, Value)> {
    let mut state = state.lock().unwrap();
    let (path, query) = split(&parts.uri.to_string());
    let got = format!(
        "{} {}?{}",
        parts.method,
        path,
        query.iter().cloned().collect::<Vec<_>>().join("&")
    );
    let Some(next) = state.expected.pop_front() else {
        state
            .problems
            .push(format!("unexpected extra request: {got}"));
        return Some((
            500,
            serde_json::json!({"kind": "Status", "code": 500, "message": "unexpected"}),
        ));
    };
    let mut wrong = Vec::new();
    if parts.method.as_str() != next.method || path != next.path || query != next.query {
        wrong.push(format!(
            "got {got}, want {} {}?{:?}",
            next.method, next.path, next.query
        ));
    }
    if let Some(want) = &next.body {
        let have: Value = serde_json::from_slice(body)
            .unwrap_or(Value::String(String::from_utf8_lossy(body).into()));
        if &have != want {
            wrong.push(format!("{got}: body {have}, want {want}"));
        }
    }
    if let Some(check) = &next.check {
        let have: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        if let Err(why) = check(&have) {
            wrong.push(format!("{got}: {why}; body {have}"));
        }
    }
    state.problems.extend(wrong);
    if let Some(hook) = &next.on_arrival {
        hook();
    }
    (!next.hang).then_some((next.status, next.response))
}

/// A Status body like the API server's.
pub fn status(code: u16, reason: &str, message: &str) -> Value {
    serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}

#[test]
#[should_panic(expected = "expected request never came: GET /api/v1/pods")]
fn a_scenario_dropped_before_its_requests_came_fails_the_test() {
    let _unplayed = Scenario::new().expect("GET", "/api/v1/pods", None, 200, Value::Null);
}
