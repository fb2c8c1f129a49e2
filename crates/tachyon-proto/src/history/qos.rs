//! The QoS that shapes a history cache: HISTORY, RESOURCE_LIMITS, DURABILITY (writer side) and
//! READER_DATA_LIFECYCLE (reader side), checked for consistency once at construction.

use crate::time::Duration;

/// HISTORY QoS: how many samples per instance a cache keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    /// Keep the latest `depth` samples of each instance; older ones are replaced.
    KeepLast(usize),
    /// Keep every sample until it is delivered (writer) or taken (reader), within the limits.
    KeepAll,
}

impl Default for History {
    /// The DDS default: KEEP_LAST(1).
    fn default() -> History {
        History::KeepLast(1)
    }
}

/// RESOURCE_LIMITS QoS; `None` is LENGTH_UNLIMITED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Most samples held over all instances.
    pub max_samples: Option<usize>,
    /// Most instances held.
    pub max_instances: Option<usize>,
    /// Most samples held for one instance.
    pub max_samples_per_instance: Option<usize>,
}

/// DURABILITY as far as the writer's cache cares: may acknowledged samples be dropped?
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Acknowledged samples are released at once.
    #[default]
    Volatile,
    /// Acknowledged samples are kept (within HISTORY and RESOURCE_LIMITS) for late joiners.
    TransientLocal,
}

/// READER_DATA_LIFECYCLE QoS; `None` is an infinite delay (never purge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderDataLifecycle {
    /// How long an instance is kept after it became NOT_ALIVE_NO_WRITERS.
    pub autopurge_nowriter_samples_delay: Option<Duration>,
    /// How long the samples of an instance are kept after it became NOT_ALIVE_DISPOSED.
    pub autopurge_disposed_samples_delay: Option<Duration>,
}

/// Why a QoS combination cannot build a cache (DDS: INCONSISTENT_POLICY).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QosError {
    /// KEEP_LAST with depth 0.
    ZeroDepth,
    /// A resource limit of 0 (use `None` for unlimited).
    ZeroLimit,
    /// KEEP_LAST depth above `max_samples_per_instance`.
    DepthExceedsSamplesPerInstance,
    /// `max_samples_per_instance` above `max_samples`.
    SamplesPerInstanceExceedsSamples,
}

impl std::fmt::Display for QosError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QosError::ZeroDepth => "KEEP_LAST depth must be at least 1",
            QosError::ZeroLimit => "a resource limit must be at least 1 (None is unlimited)",
            QosError::DepthExceedsSamplesPerInstance => {
                "KEEP_LAST depth exceeds max_samples_per_instance"
            }
            QosError::SamplesPerInstanceExceedsSamples => {
                "max_samples_per_instance exceeds max_samples"
            }
        })
    }
}

impl std::error::Error for QosError {}

/// Checks HISTORY against RESOURCE_LIMITS as DDS 1.4 2.2.3 requires.
pub(crate) fn validate(history: History, limits: &ResourceLimits) -> Result<(), QosError> {
    let ResourceLimits {
        max_samples,
        max_instances,
        max_samples_per_instance,
    } = *limits;
    if [max_samples, max_instances, max_samples_per_instance].contains(&Some(0)) {
        return Err(QosError::ZeroLimit);
    }
    if let History::KeepLast(depth) = history {
        if depth == 0 {
            return Err(QosError::ZeroDepth);
        }
        if max_samples_per_instance.is_some_and(|m| depth > m) {
            return Err(QosError::DepthExceedsSamplesPerInstance);
        }
    }
    if let (Some(per), Some(all)) = (max_samples_per_instance, max_samples) {
        if per > all {
            return Err(QosError::SamplesPerInstanceExceedsSamples);
        }
    }
    Ok(())
}

/// Whether holding `n` items reaches `limit`.
pub(crate) fn at_limit(n: usize, limit: Option<usize>) -> bool {
    limit.is_some_and(|m| n >= m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inconsistent_policies_are_refused() {
        let lim = |s, i, p| ResourceLimits {
            max_samples: s,
            max_instances: i,
            max_samples_per_instance: p,
        };
        assert_eq!(
            validate(History::KeepLast(0), &lim(None, None, None)),
            Err(QosError::ZeroDepth)
        );
        assert_eq!(
            validate(History::KeepAll, &lim(Some(0), None, None)),
            Err(QosError::ZeroLimit)
        );
        assert_eq!(
            validate(History::KeepLast(3), &lim(None, None, Some(2))),
            Err(QosError::DepthExceedsSamplesPerInstance)
        );
        assert_eq!(
            validate(History::KeepAll, &lim(Some(2), None, Some(3))),
            Err(QosError::SamplesPerInstanceExceedsSamples)
        );
        assert_eq!(
            validate(History::KeepLast(2), &lim(Some(4), Some(2), Some(2))),
            Ok(())
        );
    }
}
