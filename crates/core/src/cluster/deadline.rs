//! A deadline on every API call but a watch.
//!
//! kube sets no read timeout (it would cut long watches), so a request to a server that
//! accepted the connection and then froze waits forever. This layer bounds each request's
//! answer, then each wait for the next piece of its body: a list of 150,000 pods sent in one
//! body takes longer than any fixed deadline, and must not be cut while its bytes keep coming.
//! It leaves `watch=true` requests alone: the watch loop judges those by their silence.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response};
use hyper::body::{Body, Frame, SizeHint};
use kube::client::ClientBuilder;
use kube::{Client, Config};
use tokio::time::{Instant, Sleep};
use tower::{BoxError, Service};

use super::connect_error::ConnectError;

pub(crate) const CONNECT_TIMEOUT_ENV: &str = "OPS_POD_CLEANER_CONNECT_TIMEOUT";
pub(crate) const REQUEST_TIMEOUT_ENV: &str = "OPS_POD_CLEANER_REQUEST_TIMEOUT";

/// How long a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// To open a connection (TCP and TLS).
    pub connect: Duration,
    /// For a request other than a watch: its answer, then each piece of its body.
    pub request: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            connect: Duration::from_secs(10),
            request: Duration::from_secs(30),
        }
    }
}

impl Deadlines {
    /// The config's `cluster:` deadlines, each overridden by its environment variable.
    pub fn from_config(config: &crate::config::ClusterConfig) -> Result<Deadlines, crate::Usage> {
        Ok(Deadlines {
            connect: super::env_duration(CONNECT_TIMEOUT_ENV)?.unwrap_or(config.connect_timeout),
            request: super::env_duration(REQUEST_TIMEOUT_ENV)?.unwrap_or(config.request_timeout),
        })
    }
}

/// A client whose calls other than watches fail once their deadline passes.
pub fn client_with_deadlines(
    mut config: Config,
    deadlines: Deadlines,
) -> Result<Client, ConnectError> {
    let url = config.cluster_url.to_string();
    config.connect_timeout = Some(deadlines.connect);
    let builder =
        ClientBuilder::try_from(config).map_err(|source| ConnectError::Client { url, source })?;
    let limit = deadlines.request;
    let layer = tower::layer::layer_fn(|inner| WithDeadline { inner, limit });
    Ok(builder.with_layer(&layer).build())
}

/// The error a late call ends with; kube shows it as `ServiceError: …`.
#[derive(Debug, thiserror::Error)]
#[error(
    "the API server did not answer within {}s (${REQUEST_TIMEOUT_ENV} sets this deadline)",
    .0.as_secs_f64()
)]
pub(crate) struct TimedOut(Duration);

fn is_watch<B>(req: &Request<B>) -> bool {
    req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    })
}

struct WithDeadline<S> {
    inner: S,
    limit: Duration,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for WithDeadline<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Response<DeadlineBody<ResBody>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, std::result::Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let limit = self.limit;
        let deadline = (!is_watch(&req)).then(|| Instant::now() + limit);
        let answer = self.inner.call(req);
        Box::pin(async move {
            let response = match deadline {
                None => answer.await.map_err(Into::into)?,
                Some(at) => match tokio::time::timeout_at(at, answer).await {
                    Ok(answered) => answered.map_err(Into::into)?,
                    Err(_) => return Err(Box::new(TimedOut(limit)) as BoxError),
                },
            };
            Ok(response.map(|body| DeadlineBody {
                inner: body,
                sleep: deadline.map(|at| Box::pin(tokio::time::sleep_until(at))),
                limit,
            }))
        })
    }
}

/// A response body that fails when its next piece is later than the deadline; each piece that
/// comes moves the deadline on.
pub(crate) struct DeadlineBody<B> {
    inner: B,
    sleep: Option<Pin<Box<Sleep>>>,
    limit: Duration,
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, BoxError>>> {
        let limit = self.limit;
        if let Some(sleep) = self.sleep.as_mut()
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(Box::new(TimedOut(limit)))));
        }
        let polled = Pin::new(&mut self.inner).poll_frame(cx).map_err(Into::into);
        if let (Poll::Ready(Some(Ok(_))), Some(sleep)) = (&polled, self.sleep.as_mut()) {
            sleep.as_mut().reset(Instant::now() + limit);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
