//! Where a Service's proxy goes: the Service and its Endpoints read as kube-apiserver reads
//! them to pick one ready address, with its refusals worded as it words them.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;

use super::cluster::{SimCluster, State};
use super::meta;
use super::resources::Res;
use super::status::{ApiError, ApiResult};

/// The `{name}`, `{name}:{port}` or `{scheme}:{name}:{port}` segment of a proxy path. The
/// scheme (`http` or `https`) is checked but not kept: the simulator has no TLS and speaks
/// plain HTTP to every backend a test registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceId {
    /// The segment as sent: some refusals name it whole.
    pub asked: String,
    pub name: String,
    /// A port number or name; empty: the service's unnamed port.
    pub port: String,
}

impl ServiceId {
    /// Split as kube-apiserver does; a bad segment is its 400.
    pub fn parse(id: &str) -> ApiResult<ServiceId> {
        let invalid = || ApiError::bad_request(format!("invalid service request \"{id}\""));
        let parts: Vec<&str> = id.split(':').collect();
        let (scheme, name, port) = match parts.as_slice() {
            [name] => ("", *name, ""),
            [name, port] => ("", *name, *port),
            [scheme, name, port] => (*scheme, *name, *port),
            _ => return Err(invalid()),
        };
        if name.is_empty() || !["", "http", "https"].contains(&scheme) {
            return Err(invalid());
        }
        Ok(ServiceId {
            asked: id.to_string(),
            name: name.to_string(),
            port: port.to_string(),
        })
    }
}

/// The address kube-apiserver would dial for `id` in `ns`: a port number is first turned
/// into the Service port's name, then the first Endpoints subset with that port name and a
/// ready address whose target pod has that IP gives it. (The real server starts at a random
/// subset and address; the simulator takes them in order so tests are repeatable.)
pub fn locate(s: &State, ns: &str, id: &ServiceId) -> ApiResult<SocketAddr> {
    let port_name = match id.port.parse::<i64>() {
        Ok(number) => service_port_name(s, ns, &id.name, number)?,
        Err(_) => id.port.clone(),
    };
    let endpoints = s
        .store
        .get(Res::Endpoints, ns, &id.name)
        .ok_or_else(|| ApiError::not_found("", "endpoints", &id.name))?;
    let subsets = array(endpoints, "/subsets");
    if subsets.is_empty() {
        return Err(no_endpoints(&id.name));
    }
    subsets
        .iter()
        .filter_map(|subset| {
            let port = array(subset, "/ports")
                .iter()
                .find(|p| meta::str_at(p, "/name") == port_name)?
                .get("port")?
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())?;
            let ip = array(subset, "/addresses")
                .iter()
                .find(|a| targets_a_pod_with_its_ip(s, ns, a))
                .and_then(|a| meta::str_at(a, "/ip").parse::<IpAddr>().ok())?;
            Some(SocketAddr::new(ip, port))
        })
        .next()
        .ok_or_else(|| no_endpoints(&id.asked))
}

fn service_port_name(s: &State, ns: &str, name: &str, number: i64) -> ApiResult<String> {
    let service = s
        .store
        .get(Res::Service, ns, name)
        .ok_or_else(|| ApiError::not_found("", "services", name))?;
    array(service, "/spec/ports")
        .iter()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(number))
        .map(|p| meta::str_at(p, "/name").to_string())
        .ok_or_else(|| {
            ApiError::service_unavailable(format!(
                "no service port {number} found for service \"{name}\""
            ))
        })
}

/// The real server follows an address only if it names a pod in the same namespace that
/// holds the address's IP.
fn targets_a_pod_with_its_ip(s: &State, ns: &str, address: &Value) -> bool {
    let target = address.get("targetRef");
    let target_ns = target.map_or("", |t| meta::str_at(t, "/namespace"));
    if target.is_none() || target_ns != ns {
        return false;
    }
    let target_name = target.map_or("", |t| meta::str_at(t, "/name"));
    let Some(pod) = s.store.get(Res::Pod, ns, target_name) else {
        return false;
    };
    let ip = meta::str_at(address, "/ip");
    // A pod written with only `podIP` has `podIPs` filled from it on the server.
    meta::str_at(pod, "/status/podIP") == ip
        || array(pod, "/status/podIPs")
            .iter()
            .any(|p| meta::str_at(p, "/ip") == ip)
}

fn no_endpoints(what: &str) -> ApiError {
    ApiError::service_unavailable(format!("no endpoints available for service \"{what}\""))
}

fn array<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

impl SimCluster {
    /// Move every address of Endpoints `namespace/name` to ready (`addresses`) or not ready
    /// (`notReadyAddresses`), as the endpoints controller does when its pods' readiness
    /// changes. False if there are no such Endpoints.
    pub fn set_endpoints_ready(&self, namespace: &str, name: &str, ready: bool) -> bool {
        let (from, to) = if ready {
            ("notReadyAddresses", "addresses")
        } else {
            ("addresses", "notReadyAddresses")
        };
        self.mutate(|s| {
            let Some(mut endpoints) = s.store.get(Res::Endpoints, namespace, name).cloned() else {
                return false;
            };
            for subset in endpoints
                .get_mut("subsets")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                let Some(fields) = subset.as_object_mut() else {
                    continue;
                };
                let Some(Value::Array(moved)) = fields.remove(from) else {
                    continue;
                };
                let into = fields.entry(to).or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(into) = into {
                    into.extend(moved);
                }
            }
            s.store.update(Res::Endpoints, endpoints);
            true
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_ids_split_as_the_real_server_splits_them() {
        let id = ServiceId::parse("https:worker:9090").unwrap();
        assert_eq!((id.name.as_str(), id.port.as_str()), ("worker", "9090"));
        assert_eq!(ServiceId::parse("worker").unwrap().port, "");
        for bad in ["ftp:worker:1", ":9090", "a:b:c:d"] {
            assert_eq!(ServiceId::parse(bad).unwrap_err().code, 400, "{bad}");
        }
    }
}
