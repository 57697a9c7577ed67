//! The resources the simulated server serves, and their discovery facts.

/// A served resource type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Res {
    Pod,
    Node,
    Event,
    ReplicationController,
    ReplicaSet,
    Deployment,
    StatefulSet,
    Rollout,
    PodDisruptionBudget,
    Lease,
    ConfigMap,
    Service,
    Endpoints,
}

/// Static facts about a resource, as discovery reports them.
pub struct ResDef {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub subresources: &'static [&'static str],
}

const RW: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl Res {
    pub const ALL: [Res; 13] = [
        Res::Pod,
        Res::Node,
        Res::Event,
        Res::ReplicationController,
        Res::ReplicaSet,
        Res::Deployment,
        Res::StatefulSet,
        Res::Rollout,
        Res::PodDisruptionBudget,
        Res::Lease,
        Res::ConfigMap,
        Res::Service,
        Res::Endpoints,
    ];

    pub fn def(self) -> &'static ResDef {
        match self {
            Res::Pod => &POD,
            Res::Node => &NODE,
            Res::Event => &EVENT,
            Res::ReplicationController => &RC,
            Res::ReplicaSet => &RS,
            Res::Deployment => &DEPLOY,
            Res::StatefulSet => &STS,
            Res::Rollout => &ROLLOUT,
            Res::PodDisruptionBudget => &PDB,
            Res::Lease => &LEASE,
            Res::ConfigMap => &CONFIG_MAP,
            Res::Service => &SERVICE,
            Res::Endpoints => &ENDPOINTS,
        }
    }

    pub fn group(self) -> &'static str {
        self.def().group
    }

    pub fn plural(self) -> &'static str {
        self.def().plural
    }

    pub fn kind(self) -> &'static str {
        self.def().kind
    }

    pub fn api_version(self) -> String {
        let d = self.def();
        if d.group.is_empty() {
            d.version.to_string()
        } else {
            format!("{}/{}", d.group, d.version)
        }
    }

    pub fn verbs(self) -> &'static [&'static str] {
        RW
    }

    pub fn lookup(group: &str, version: &str, plural: &str) -> Option<Res> {
        Res::ALL.into_iter().find(|r| {
            let d = r.def();
            d.group == group && d.version == version && d.plural == plural
        })
    }

    pub fn by_kind(api_version: &str, kind: &str) -> Option<Res> {
        Res::ALL
            .into_iter()
            .find(|r| r.kind() == kind && r.api_version() == api_version)
    }
}

const POD: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "pods",
    singular: "pod",
    kind: "Pod",
    namespaced: true,
    short_names: &["po"],
    subresources: &["status", "eviction", "log"],
};
const NODE: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "nodes",
    singular: "node",
    kind: "Node",
    namespaced: false,
    short_names: &["no"],
    subresources: &["status"],
};
const EVENT: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "events",
    singular: "event",
    kind: "Event",
    namespaced: true,
    short_names: &["ev"],
    subresources: &[],
};
const RC: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "replicationcontrollers",
    singular: "replicationcontroller",
    kind: "ReplicationController",
    namespaced: true,
    short_names: &["rc"],
    subresources: &["status", "scale"],
};
const RS: ResDef = ResDef {
    group: "apps",
    version: "v1",
    plural: "replicasets",
    singular: "replicaset",
    kind: "ReplicaSet",
    namespaced: true,
    short_names: &["rs"],
    subresources: &["status", "scale"],
};
const DEPLOY: ResDef = ResDef {
    group: "apps",
    version: "v1",
    plural: "deployments",
    singular: "deployment",
    kind: "Deployment",
    namespaced: true,
    short_names: &["deploy"],
    subresources: &["status", "scale"],
};
const STS: ResDef = ResDef {
    group: "apps",
    version: "v1",
    plural: "statefulsets",
    singular: "statefulset",
    kind: "StatefulSet",
    namespaced: true,
    short_names: &["sts"],
    subresources: &["status", "scale"],
};
const ROLLOUT: ResDef = ResDef {
    group: "argoproj.io",
    version: "v1alpha1",
    plural: "rollouts",
    singular: "rollout",
    kind: "Rollout",
    namespaced: true,
    short_names: &["ro"],
    subresources: &["status", "scale"],
};
const PDB: ResDef = ResDef {
    group: "policy",
    version: "v1",
    plural: "poddisruptionbudgets",
    singular: "poddisruptionbudget",
    kind: "PodDisruptionBudget",
    namespaced: true,
    short_names: &["pdb"],
    subresources: &["status"],
};
const LEASE: ResDef = ResDef {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    singular: "lease",
    kind: "Lease",
    namespaced: true,
    short_names: &[],
    subresources: &[],
};
/// Served for the parked-workloads record (`ops-pod-cleaner-parked`): plain data, updates
/// guarded by resourceVersion like every other object.
const CONFIG_MAP: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "configmaps",
    singular: "configmap",
    kind: "ConfigMap",
    namespaced: true,
    short_names: &["cm"],
    subresources: &[],
};
/// Served so a client can reach an in-cluster worker through the API server's service proxy.
const SERVICE: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "services",
    singular: "service",
    kind: "Service",
    namespaced: true,
    short_names: &["svc"],
    subresources: &["status", "proxy"],
};
/// Where a Service's proxy goes: kube-apiserver's service proxy reads core Endpoints (not
/// EndpointSlices) to pick a ready address.
const ENDPOINTS: ResDef = ResDef {
    group: "",
    version: "v1",
    plural: "endpoints",
    singular: "endpoints",
    kind: "Endpoints",
    namespaced: true,
    short_names: &["ep"],
    subresources: &[],
};
