//! `SimServer`: serves a `SimCluster` over HTTP/1.1 on a loopback port.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::cluster::SimCluster;
use super::http;
use super::in_process::{self, Link};
use super::reply::Body;

/// The client config for a server on `addr`; see [`SimServer::config`].
fn client_config(addr: SocketAddr) -> std::io::Result<kube::Config> {
    let url = format!("http://{addr}")
        .parse()
        .map_err(std::io::Error::other)?;
    let mut config = kube::Config::new(url);
    config.default_retry = false;
    Ok(config)
}

/// How often the simulated kubelets look for expired grace periods.
const KUBELET_PERIOD: Duration = Duration::from_millis(100);

/// A running simulated API server. Stops when dropped or on [`SimServer::shutdown`].
pub struct SimServer {
    addr: SocketAddr,
    cluster: SimCluster,
    stop: watch::Sender<bool>,
    accept: Option<JoinHandle<()>>,
    /// Made once at start, where a failure can be returned: the accessors cannot fail.
    config: kube::Config,
    client: kube::Client,
}

impl SimServer {
    /// Bind `127.0.0.1:0` and start serving `cluster` (and running its kubelets).
    pub async fn start(cluster: SimCluster) -> std::io::Result<SimServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let config = client_config(addr)?;
        let client = kube::Client::try_from(config.clone()).map_err(std::io::Error::other)?;
        let (stop, stop_rx) = watch::channel(false);
        tokio::spawn(kubelets(cluster.clone(), stop_rx.clone()));
        let accept = tokio::spawn(accept_loop(listener, cluster.clone(), stop_rx));
        tracing::info!(%addr, "simulated API server listening");
        Ok(SimServer {
            addr,
            cluster,
            stop,
            accept: Some(accept),
            config,
            client,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn cluster(&self) -> &SimCluster {
        &self.cluster
    }

    /// A `kube::Config` for this server: default namespace `default`, and kube's built-in
    /// retry of 429/503/504 switched off so callers see exactly what the server answered.
    pub fn config(&self) -> kube::Config {
        self.config.clone()
    }

    /// A plain `kube::Client` built from [`SimServer::config`], with kube's own timeouts and no
    /// others. A caller that wants the product's request deadlines builds its client from
    /// [`SimServer::config`] instead.
    /// Every call returns a clone of one client, made at start: clones share its connections,
    /// as clones of any `kube::Client` do.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A client that reaches this server without a socket, and the [`Link`] that can cut it
    /// off: for tests on paused time (`tokio::time::pause`), where a socket would let
    /// deadlines fire while the server is still answering.
    pub fn in_process_client(&self) -> (kube::Client, Link) {
        in_process::client(
            self.cluster.clone(),
            self.stop.subscribe(),
            self.addr.to_string(),
        )
    }

    /// Say where endpoint address `ip:port` really listens (a backend on loopback); see
    /// [`SimCluster::serve_endpoint`].
    pub fn serve_endpoint(&self, ip: std::net::IpAddr, port: u16, to: SocketAddr) {
        self.cluster.serve_endpoint(ip, port, to);
    }

    /// Write a kubeconfig (context `sim`, namespace `default`) pointing at this server.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// The kubeconfig text [`SimServer::write_kubeconfig`] writes.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n\
             users:\n- name: sim\n  user: {{}}\ncontexts:\n- name: sim\n  context:\n    cluster: sim\n    \
             user: sim\n    namespace: default\ncurrent-context: sim\npreferences: {{}}\n",
            self.url()
        )
    }

    /// Stop accepting, end open watches, and wait for the accept loop to finish.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn accept_loop(listener: TcpListener, cluster: SimCluster, mut stop: watch::Receiver<bool>) {
    let server_address = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let (cluster, stop_rx, address) = (cluster.clone(), stop.clone(), server_address.clone());
        tokio::spawn(async move {
            let svc_stop = stop_rx.clone();
            let service = service_fn(move |req| {
                http::handle(cluster.clone(), svc_stop.clone(), address.clone(), req)
            });
            serve_connection(stream, service, stop_rx, peer).await;
        });
    }
}

async fn serve_connection<S>(
    stream: tokio::net::TcpStream,
    service: S,
    mut stop: watch::Receiver<bool>,
    peer: SocketAddr,
) where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        }
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

async fn kubelets(cluster: SimCluster, mut stop: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(KUBELET_PERIOD);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => cluster.tick(),
            _ = stop.changed() => return,
        }
    }
}
