//! `demo-us`: checkout, search, media and ingest in another region; other workloads and
//! another mix of trouble (image pulls, crash loops, failed jobs, an unbound volume), no
//! evictions and no lost node.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::shape::{Fault, ImageFault};
use super::{Churn, Scenario, SimCluster, failed_job, stamp, unschedulable};

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
            detail: "failed to authorize: failed to fetch oauth token: unexpected status: 401 \
                     Unauthorized",
        },
    ),
    (
        "thumbnailer",
        Fault::CrashLoop {
            restarts: 9,
            last_reason: "OOMKilled",
            exit_code: 137,
        },
    ),
    (
        "collector",
        Fault::CrashLoop {
            restarts: 7,
            last_reason: "Error",
            exit_code: 1,
        },
    ),
];

fn standing(_cluster: &SimCluster, now: DateTime<Utc>) -> Vec<Value> {
    let ago = |minutes: i64| stamp(now - chrono::Duration::minutes(minutes));
    vec![
        failed_job(
            ("ingest", "backfill-28346-q8x2m"),
            ("backfill", "registry.local/ingest/backfill:1.2"),
            ("Error", 1),
            (&ago(180), &ago(170)),
        ),
        failed_job(
            ("ingest", "compact-28346-t5n7c"),
            ("compact", "registry.local/ingest/compact:1.2"),
            ("OOMKilled", 137),
            (&ago(75), &ago(62)),
        ),
        unschedulable(
            ("search", "snapshot-restore-0"),
            ("restore", "registry.local/search/restore:8.1.0"),
            &ago(40),
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
        ),
    ]
}
