//! Jittered exponential backoff: retries spread out, so scopes and replicas that failed
//! together do not come back together.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::time::Duration;

#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    step: Duration,
    min: Duration,
    max: Duration,
}

impl Backoff {
    pub(crate) fn new(min: Duration, max: Duration) -> Backoff {
        Backoff {
            step: min,
            min,
            max: max.max(min),
        }
    }

    /// After a success: the next failure waits the least again.
    pub(crate) fn reset(&mut self) {
        self.step = self.min;
    }

    /// Pause before the next attempt: between half and all of the current step (so the cap
    /// never makes retries line up), and the step doubles up to the maximum.
    pub(crate) async fn wait(&mut self) {
        let pause = jitter(self.step);
        self.step = (self.step * 2).min(self.max);
        tokio::time::sleep(pause).await;
    }
}

/// Uniform in `[d/2, d]`.
pub(crate) fn jitter(d: Duration) -> Duration {
    d.mul_f64(0.5 + 0.5 * random_fraction())
}

/// Uniform in `[0, 1)`, from the standard library's randomly keyed hasher: backoff needs
/// spread, not cryptography.
fn random_fraction() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(0x5bd1_e995);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}
