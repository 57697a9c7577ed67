//! The interactive screen: the pods of every open cluster, their details, and the actions on them.
//!
//! The UI task owns a [`State`]; everything else (the cache, the worker, API calls) reaches it
//! as [`Event`]s on channels, and `update` answers with [`Effect`]s the runtime carries out.
//! Drawing reads `&State` only, so every pane can be snapshot-tested on a `TestBackend`.

mod cluster_view;
mod confirm;
mod details;
mod effects;
mod event;
pub mod export;
mod keys;
mod logging;
mod order;
mod run;
mod session;
mod snapshot;
mod state;
mod terminal;
mod theme;
mod update;
mod view;

pub use details::PodDetails;
pub use event::{Checked, ClusterLine, Effect, Event, Routed, Snapshot, SourceLine, Unanswered};
pub(crate) use keys::help_lines;
pub use logging::init_logging;
pub(crate) use run::{RunOptions, run};
pub(crate) use session::{Connector, Session};
pub use snapshot::{cluster_line, snapshot, watch_line};
pub use state::{BottomPane, Overlay, State, Switches, WatchLine};
pub use update::update;
pub use view::draw;
