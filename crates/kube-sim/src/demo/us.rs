//! `demo-us`: checkout, search, media and ingest in another region; other workloads and
//! another mix of trouble (image pulls, crash loops, failed jobs, an unbound volume), no
//! evictions and no lost node.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::shape::{Fault, ImageFault};
use super::{Churn, Scenario, SimCluster, failed_job, stamp, unschedulable};
use crate::json::Fields;
use crate::pull::{PullError, Runtime};

pub(super) const SCENARIO: Scenario = Scenario {
    name: "demo-us",
    deployments: &[
        (
            "checkout",
            "storefront",
            3,
            "registry.local/checkout/storefront:5.4.0",
        ),
        (
            "checkout",
            "orders",
            2,
            "registry.local/checkout/orders:3.2.1",
        ),
        ("search", "query", 3, "registry.local/search/query:8.1.0"),
        (
            "search",
            "indexer",
            2,
            "registry.local/search/indexer:8.2.0-rc1",
        ),
        (
            "media",
            "thumbnailer",
            2,
            "registry.local/media/thumbnailer:1.4.2",
        ),
        (
            "ingest",
            "collector",
            2,
            "registry.local/ingest/collector:0.9.3",
        ),
        (
            "media",
            "transcoder",
            1,
            "harbor.corp.example/media/transcoder:3.0.1",
        ),
        ("search", "ranker", 1, "quay.io/acme/ranker:1.0"),
    ],
    statefulsets: &[("ingest", "kafka", 3, "registry.local/ingest/kafka:3.7")],
    faults: FAULTS,
    lost_node: None,
    budgets: &[("checkout", "storefront", 2)],
    standing,
    churn: Churn {
        evict: None,
        strand: None,
    },
};

const FAULTS: &[ImageFault] = &[
    (
        "indexer:8.2.0-rc1",
        Fault::ImagePull {
            runtime: Runtime::Containerd,
            error: PullError::Unauthorized,
            back_off: false,
        },
    ),
    // A registry behind a private CA the nodes do not trust.
    (
        "harbor.corp.example/",
        Fault::ImagePull {
            runtime: Runtime::Containerd,
            error: PullError::UnknownAuthority,
            back_off: true,
        },
    ),
    // A node pool on CRI-O: its words for a tag that is not there.
    (
        "quay.io/acme/ranker",
        Fault::ImagePull {
            runtime: Runtime::CriO,
            error: PullError::NotFound,
            back_off: true,
        },
    ),
    (
        "thumbnailer",
        Fault::CrashLoop {
            restarts: 9,
            last_reason: "OOMKilled",
            exit_code: 137,
            memory_limit: Some("512Mi"),
        },
    ),
    (
        "collector",
        Fault::CrashLoop {
            restarts: 7,
            last_reason: "Error",
            exit_code: 1,
            memory_limit: None,
        },
    ),
];

/// Two of the three nodes are GPU nodes, tainted `dedicated=gpu:NoSchedule`: the scheduler's
/// verdicts below (pkg/scheduler/framework/types.go, FitError) count them so.
fn standing(_cluster: &SimCluster, now: DateTime<Utc>) -> Vec<Value> {
    let ago = |minutes: i64| stamp(now - chrono::Duration::minutes(minutes));
    let mut replay = unschedulable(
        ("ingest", "replay-0"),
        ("replay", "registry.local/ingest/replay:0.9.3"),
        &ago(22),
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint \
         {dedicated: gpu}. preemption: 0/3 nodes are available: 1 No preemption victims found for \
         incoming pod, 2 Preemption is not helpful for scheduling.",
    );
    replay.set_in(
        "/spec/containers/0",
        "resources",
        json!({"requests": {"cpu": "12"}}),
    );
    let mut encoder = unschedulable(
        ("media", "encoder-gpu-0"),
        ("encoder", "registry.local/media/encoder:2.1.0"),
        &ago(12),
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No \
         preemption victims found for incoming pod.",
    );
    encoder.set_in(
        "/spec/containers/0",
        "resources",
        json!({"requests": {"cpu": "24"}, "limits": {"nvidia.com/gpu": "1"}}),
    );
    encoder.field("spec").set(
        "tolerations",
        json!([{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]),
    );
    // An OOM kill names the limit it hit.
    let mut compact = failed_job(
        ("ingest", "compact-28346-t5n7c"),
        ("compact", "registry.local/ingest/compact:1.2"),
        ("OOMKilled", 137),
        (&ago(75), &ago(62)),
    );
    compact.set_in(
        "/spec/containers/0",
        "resources",
        json!({"limits": {"memory": "1Gi"}}),
    );
    vec![
        replay,
        encoder,
        failed_job(
            ("ingest", "backfill-28346-q8x2m"),
            ("backfill", "registry.local/ingest/backfill:1.2"),
            ("Error", 1),
            (&ago(180), &ago(170)),
        ),
        compact,
        unschedulable(
            ("search", "snapshot-restore-0"),
            ("restore", "registry.local/search/restore:8.1.0"),
            &ago(40),
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: \
             0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        ),
    ]
}
