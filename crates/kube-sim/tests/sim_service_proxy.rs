//! Services, their Endpoints, and the API server's service proxy, exercised through an
//! unchanged `kube::Client` as a product would reach an in-cluster worker.

// A test fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use k8s_openapi::api::core::v1::{Endpoints, Service};
use kube::api::{Api, ListParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use serde_json::{Value, json};

const NS: &str = "ops";

async fn start() -> (SimCluster, SimServer) {
    let cluster = SimCluster::new();
    let server = SimServer::start(cluster.clone())
        .await
        .expect("server starts");
    (cluster, server)
}

fn api_status(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

/// A Service with `ports` as (name, port, targetPort); an empty name is an unnamed port.
fn service(name: &str, ports: &[(&str, u16, u16)]) -> Service {
    let ports: Vec<Value> = ports
        .iter()
        .map(|(port_name, port, target)| {
            let mut p = json!({ "port": port, "targetPort": target, "protocol": "TCP" });
            if !port_name.is_empty() {
                p["name"] = json!(port_name);
            }
            p
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": NS },
        "spec": { "selector": { "app": name }, "ports": ports },
    }))
    .expect("valid service")
}

/// Endpoints for `name`: one address `ip` backed by pod `pod`, ready or not, on `ports` as
/// (name, port).
fn endpoints(name: &str, ip: &str, pod: &str, ready: bool, ports: &[(&str, u16)]) -> Endpoints {
    let address = json!({
        "ip": ip,
        "targetRef": { "kind": "Pod", "namespace": NS, "name": pod },
    });
    let which = if ready {
        "addresses"
    } else {
        "notReadyAddresses"
    };
    let ports: Vec<Value> = ports
        .iter()
        .map(|(port_name, port)| {
            let mut p = json!({ "port": port, "protocol": "TCP" });
            if !port_name.is_empty() {
                p["name"] = json!(port_name);
            }
            p
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": NS },
        "subsets": [{ which: [address], "ports": ports }],
    }))
    .expect("valid endpoints")
}

#[tokio::test]
async fn services_and_endpoints_are_stored_listed_and_denied_like_other_objects() {
    let (cluster, server) = start().await;
    let services: Api<Service> = Api::namespaced(server.client(), NS);
    let all_endpoints: Api<Endpoints> = Api::namespaced(server.client(), NS);
    let pp = PostParams::default();
    services
        .create(&pp, &service("worker", &[("http", 9090, 9090)]))
        .await
        .unwrap();
    all_endpoints
        .create(
            &pp,
            &endpoints("worker", "10.0.0.5", "worker-0", true, &[("http", 9090)]),
        )
        .await
        .unwrap();

    let got = services.get("worker").await.unwrap();
    assert_eq!(got.spec.unwrap().ports.unwrap()[0].port, 9090);
    let listed = all_endpoints.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    let address = &listed.items[0].subsets.as_ref().unwrap()[0]
        .addresses
        .as_ref()
        .unwrap()[0];
    assert_eq!(address.ip, "10.0.0.5");

    cluster.faults().deny("list", "services", Some(NS));
    let denied = api_status(services.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(denied.code, 403);
    assert_eq!(
        denied.message,
        format!(
            "services is forbidden: User \"{}\" cannot list resource \"services\" in API group \"\" in the namespace \"{NS}\"",
            kube_sim::USER
        )
    );
    let missing = api_status(services.get("nope").await.unwrap_err());
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (404, "services \"nope\" not found")
    );
}
