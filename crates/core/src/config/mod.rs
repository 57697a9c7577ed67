//! Configuration in the seed's shape (`seed.rs`) or the native one (`config/default.yaml`),
//! told apart by their top-level keys, and the search order. A null key keeps its default;
//! every error is a [`ConfigError`] reading `file:line:column: key.path: what was expected`.

mod audit;
mod choices;
mod cluster;
mod describe;
mod duration;
mod error;
mod keys;
mod native;
mod paths;
mod read;
mod report;
mod safety;
mod schedule;
mod secret;
mod seed;
mod sources;
mod tree;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub use audit::AuditConfig;
pub use choices::{BadSource, Source, WireFormat};
pub(crate) use cluster::ClusterConfig;
pub use duration::format as format_duration;
pub(crate) use duration::parse as parse_duration;
pub use error::{ConfigError, LoadError, Problem};
pub use keys::{ACTIONS as UI_ACTIONS, KeyBinding, KeyCode, UiConfig};
pub use report::{DEFAULT_SCHEDULE, FileFormat, ReportConfig, Sink};
pub use safety::{BreakerConfig, SafetyConfig};
pub use schedule::CronSchedule;
pub use secret::{Secret, SecretSource, mask_url, scrub};
pub use sources::FixedEnvironment;
pub(crate) use sources::{Environment, ProcessEnvironment};

use crate::file_op::IoOp;
use crate::rules::RuleSpec;
/// A config read or checked: what is wrong with it, where.
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;
use read::{Field, MapReader};
use tree::Value;

pub(crate) const ENV_VAR: &str = "OPS_POD_CLEANER_CONFIG";

/// The built-in config, as `config/default.yaml` states it: every key at its default.
pub const DEFAULT_YAML: &str = include_str!("../../config/default.yaml");

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Every rule exactly once, in chain order.
    pub rules: Vec<RuleSpec>,
    pub safety: SafetyConfig,
    pub report: ReportConfig,
    pub audit: AuditConfig,
    pub cluster: ClusterConfig,
    pub ui: UiConfig,
    pub source: ConfigSource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    Builtin,
    File(PathBuf),
}

/// The code defaults; `config/default.yaml` states the same values (a test holds them equal).
impl Default for Config {
    fn default() -> Self {
        Config {
            rules: crate::rules::default_chain(),
            safety: SafetyConfig::default(),
            report: ReportConfig::default(),
            audit: AuditConfig::default(),
            cluster: ClusterConfig::default(),
            ui: UiConfig::default(),
            source: ConfigSource::Builtin,
        }
    }
}

impl Config {
    /// Parses either shape; `origin` names the file in messages and becomes the source.
    /// `urlFrom`/`secretFrom` read this process's environment and files.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Config> {
        Config::from_yaml_in(text, origin, &ProcessEnvironment)
    }

    /// As [`Config::from_yaml`], with `urlFrom`/`secretFrom` read from `env`.
    pub fn from_yaml_in(text: &str, origin: &str, env: &dyn Environment) -> Result<Config> {
        if is_blank(text) {
            return Err(ConfigError::of_file(origin, Problem::Empty));
        }
        let root = tree::parse(text, origin)?;
        if root.value == Value::Null {
            return Err(ConfigError::of_file(origin, Problem::NoSettings));
        }
        let field = Field::root(origin, &root);
        let mut config = if is_seed_shape(&root.value) {
            seed::read(&field)?
        } else {
            native::read(&field, env)?
        };
        config.source = ConfigSource::File(PathBuf::from(origin));
        Ok(config)
    }

    pub fn load_file(path: &Path) -> Result<Config, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            op: IoOp::Read,
            source,
        })?;
        let mut config = Config::from_yaml(&text, &path.display().to_string())?;
        config.source = ConfigSource::File(path.to_path_buf());
        Ok(config)
    }

    /// Loads the first config found by [`search`] in this process's environment.
    pub fn load(explicit: Option<&Path>) -> Result<Config, LoadError> {
        let cwd = std::env::current_dir().map_err(|source| LoadError::Io {
            path: PathBuf::from("."),
            op: IoOp::Read,
            source,
        })?;
        let env = std::env::var_os(ENV_VAR);
        let user_dir = dirs::config_dir();
        match search(explicit, env.as_deref(), &cwd, user_dir.as_deref())? {
            Some(path) => Config::load_file(&path),
            None => Ok(Config::builtin()),
        }
    }

    /// `config/default.yaml`, compiled in. Falls back to the code defaults if that file were
    /// ever broken (a test keeps it parsing and equal to them).
    pub fn builtin() -> Config {
        let mut config = Config::from_yaml(DEFAULT_YAML, "config/default.yaml").unwrap_or_default();
        config.source = ConfigSource::Builtin;
        config
    }
}

/// Which file [`Config::load`] reads (`None`: the built-in defaults), from injected inputs so
/// tests need no process state. A named file must exist; an empty `env_value` is unset.
pub fn search(
    explicit: Option<&Path>,
    env_value: Option<&OsStr>,
    cwd: &Path,
    user_config_dir: Option<&Path>,
) -> Result<Option<PathBuf>> {
    if let Some(path) = explicit {
        return named(cwd.join(path), "--config");
    }
    if let Some(value) = env_value.filter(|v| !v.is_empty()) {
        return named(cwd.join(value), &format!("${ENV_VAR}"));
    }
    let user = user_config_dir.map(|d| d.join("ops-pod-cleaner").join("config.yaml"));
    let candidates = [
        Some(cwd.join("config.yml")),
        Some(cwd.join("config.yaml")),
        user,
    ];
    Ok(candidates.into_iter().flatten().find(|p| p.is_file()))
}

/// A file the user named: missing is an error, not a reason to look elsewhere.
fn named(path: PathBuf, by: &str) -> Result<Option<PathBuf>> {
    if path.is_file() {
        Ok(Some(path))
    } else {
        Err(ConfigError::of_file(
            path.display(),
            Problem::NotFound {
                named_by: by.to_string(),
            },
        ))
    }
}

fn is_blank(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with('#') || l == "---" || l == "...")
}

fn is_seed_shape(root: &Value) -> bool {
    matches!(root, Value::Map(entries) if entries.iter().any(|(k, _)| seed::KEYS.contains(&k.name.as_str())))
}

/// The sections both shapes share.
fn read_common(m: &MapReader, config: &mut Config) -> Result<()> {
    m.set("safety", &mut config.safety, safety::read)?;
    m.set("audit", &mut config.audit, audit::read)?;
    m.set("cluster", &mut config.cluster, cluster::read)?;
    m.set("ui", &mut config.ui, keys::read)
}
