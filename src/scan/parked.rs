//! `scan --parked`: the parked workloads as a table (JSON is the rows themselves).

use chrono::{DateTime, Utc};

use super::by_cluster;
use opc_core::actions::{Origin, ParkedRow, ParkedState};
use opc_core::inert;
use opc_core::rules::format_age;

/// A longer message is cut here in the table (JSON has it whole).
const MESSAGE_WIDTH: usize = 72;
const NONE: &str = "-";

/// One line per workload, oldest first; the cluster column only when there are several.
pub(crate) fn parked_table(
    rows: &[ParkedRow],
    several_clusters: bool,
    now: DateTime<Utc>,
) -> String {
    let rows = rows.iter().map(|row| {
        let trigger = row.trigger.as_ref();
        let text = |field: Option<&String>| field.map_or(NONE.to_string(), |t| t.clone());
        let cells = vec![
            row.workload.namespace().to_string(),
            format!("{}/{}", row.workload.kind().name(), row.workload.name()),
            row.replicas_before.to_string(),
            row.parked_for(now)
                .map_or(NONE.to_string(), |age| format!("for {}", format_age(age))),
            match row.origin {
                Some(Origin::Auto(rule)) => format!("auto {rule}"),
                Some(Origin::Manual) => row
                    .actor
                    .as_ref()
                    .map_or("manual".to_string(), |a| format!("manual {a}")),
                None => NONE.to_string(),
            },
            state(&row.now),
            text(trigger.and_then(|t| t.pod.as_ref())),
            text(trigger.and_then(|t| t.reason.as_ref())),
            cut(&text(trigger.and_then(|t| t.message.as_ref()))),
        ];
        (row.cluster.to_string(), cells)
    });
    let header = "NAMESPACE WORKLOAD BEFORE PARKED BY NOW POD REASON MESSAGE";
    by_cluster(header, rows, several_clusters)
}

fn state(now: &ParkedState) -> String {
    match now {
        ParkedState::Parked => "parked".to_string(),
        ParkedState::ScaledUp { replicas } => format!("scaled up to {replicas}"),
        ParkedState::Gone => "gone".to_string(),
        ParkedState::Unknown { why } => format!("unknown: {}", cut(why)),
    }
}

/// Escaped and cut in terminal cells: a message's newlines are shown, not followed.
fn cut(text: &str) -> String {
    inert::fit(text, MESSAGE_WIDTH)
}

/// "3 parked workloads in 2 clusters (1 scaled up since)".
pub(crate) fn parked_summary(rows: &[ParkedRow], clusters: usize) -> String {
    let parked = rows.iter().filter(|r| r.now == ParkedState::Parked).count();
    let others = rows.len() - parked;
    let place = match clusters {
        1 => String::new(),
        n => format!(" in {n} clusters"),
    };
    let noun = |n: usize| if n == 1 { "workload" } else { "workloads" };
    let mut line = format!("{parked} parked {}{place}", noun(parked));
    if others > 0 {
        line.push_str(&format!(
            "; {others} more recorded as parked but scaled up, gone or unreadable since"
        ));
    }
    line
}
