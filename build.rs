//! Records for `--version` the commit, the build date and the enabled features. No
//! dependencies: `git` when it is there ("unknown" from a package, e.g. `cargo install`), the
//! date from the clock or `$SOURCE_DATE_EPOCH` for reproducible builds; `$SOURCE_COMMIT` names
//! the commit where there is no `.git` (an image build).

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=SOURCE_COMMIT");
    // A build without .git (an image's context) is told its commit.
    let commit = std::env::var("SOURCE_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git(&["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    // A new commit or checkout moves HEAD or the branch it names: build again then.
    for path in ["HEAD", "packed-refs"] {
        watch_git_path(path);
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch_git_path(&branch);
    }
    println!("cargo:rustc-env=OPC_BUILD_COMMIT={commit}");
    println!("cargo:rustc-env=OPC_BUILD_DATE={}", build_date());
    println!("cargo:rustc-env=OPC_BUILD_FEATURES={}", features());
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !text.is_empty()).then_some(text)
}

fn watch_git_path(path: &str) {
    if let Some(file) = git(&["rev-parse", "--git-path", path]) {
        println!("cargo:rerun-if-changed={file}");
    }
}

/// The enabled features but `default`, as cargo names them to build scripts.
fn features() -> String {
    let mut names: Vec<String> = std::env::vars()
        .filter_map(|(key, _)| key.strip_prefix("CARGO_FEATURE_").map(str::to_string))
        .filter(|name| name != "DEFAULT")
        .map(|name| name.to_lowercase().replace('_', "-"))
        .collect();
    names.sort();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(",")
    }
}

/// YYYY-MM-DD (UTC).
fn build_date() -> String {
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
