//! `--demo`'s simulated clusters, in a build with the `demo` feature (the default); a build
//! without it has no simulator in it, and says so.

/// The demo clusters' context names (none without the simulator); `start` starts the named
/// ones with the guards that keep them up (`Running`, dropped to stop them).
pub(crate) use imp::{CONTEXTS, Running, start};

pub(crate) fn contexts() -> Vec<String> {
    CONTEXTS.iter().map(|c| c.to_string()).collect()
}

#[cfg(feature = "demo")]
mod imp {
    use futures::future::try_join_all;
    pub(crate) use kube_sim::demo::CONTEXTS;
    use kube_sim::demo::{self, Demo};

    use crate::{Error, Result};
    use opc_core::cluster::{Cluster, ClusterName, Deadlines, client_with_deadlines};

    /// A simulated cluster; it stops when dropped.
    pub(crate) type Running = Demo;

    pub(crate) async fn start(
        names: &[String],
        deadlines: Deadlines,
    ) -> Result<(Vec<Cluster>, Vec<Running>)> {
        let demos = try_join_all(names.iter().map(|n| demo::start_named(n)))
            .await
            .map_err(demo_error)?;
        // Clients built as for any other cluster, with the config's deadlines.
        let clusters = demos
            .iter()
            .map(|d| {
                Ok(Cluster {
                    name: ClusterName::new(d.name()),
                    client: client_with_deadlines(d.server().config(), deadlines)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((clusters, demos))
    }

    /// The simulator's error in the command line's words.
    fn demo_error(e: kube_sim::Error) -> Error {
        match e {
            kube_sim::Error::UnknownDemo(name) => opc_core::Usage::UnknownDemo {
                name,
                offered: CONTEXTS.to_vec(),
            }
            .into(),
            kube_sim::Error::Start { name, source } => Error::DemoStart { name, source },
        }
    }
}

#[cfg(not(feature = "demo"))]
mod imp {
    use crate::Result;
    use opc_core::cluster::{Cluster, Deadlines};

    pub(crate) const CONTEXTS: [&str; 0] = [];

    /// Never made: there is nothing to run.
    pub(crate) enum Running {}

    pub(crate) async fn start(
        _names: &[String],
        _deadlines: Deadlines,
    ) -> Result<(Vec<Cluster>, Vec<Running>)> {
        Err(opc_core::Usage::NoDemoInBuild.into())
    }
}
