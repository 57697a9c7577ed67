//! A client that reaches the server without a socket. Tests that run on paused time need it:
//! tokio moves a paused clock on only when every task waits, and a socket's far end working
//! looks like waiting to it, so deadlines would fire while the server still answers.

use ::http::{Request, Response};
use futures::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::watch;

use super::cluster::SimCluster;
use super::http;
use super::reply::Body;

/// The line between one in-process client and the server. While cut, nothing passes either
/// way (a network partition): requests are held unanswered and open responses stall, until
/// it is healed.
#[derive(Clone)]
pub struct Link {
    cut: watch::Sender<bool>,
}

impl Link {
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    pub fn heal(&self) {
        self.cut.send_replace(false);
    }
}

/// A `kube::Client` whose requests go straight to `cluster`'s handler in this runtime.
pub(crate) fn client(
    cluster: SimCluster,
    shutdown: watch::Receiver<bool>,
    address: String,
) -> (kube::Client, Link) {
    let (cut, passing) = watch::channel(false);
    let service = tower::service_fn(move |req: Request<kube::client::Body>| {
        let (cluster, shutdown, address) = (cluster.clone(), shutdown.clone(), address.clone());
        let mut passing = passing.clone();
        async move {
            let _ = passing.wait_for(|cut| !cut).await;
            let response = http::handle(cluster, shutdown, address, req).await?;
            Ok::<_, std::convert::Infallible>(stalled_while_cut(response, passing))
        }
    });
    (kube::Client::new(service, "default"), Link { cut })
}

/// `response` with each frame of its body held while the link is cut.
fn stalled_while_cut(response: Response<Body>, passing: watch::Receiver<bool>) -> Response<Body> {
    response.map(|body| {
        let frames = body.into_data_stream().then(move |data| {
            let mut passing = passing.clone();
            async move {
                let _ = passing.wait_for(|cut| !cut).await;
                data.map(hyper::body::Frame::data)
            }
        });
        BodyExt::boxed(StreamBody::new(frames))
    })
}
