//! [`SampleInfo`] with every DCPS field, the sample/view/instance states and their masks.

use std::ops::BitOr;

use tachyon_cdr::KeyHash;
use tachyon_wire::{Guid, Time};

use super::payload::Payload;
use crate::time::Instant;

/// Whether the application has read a sample before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleState {
    /// Returned by an earlier `read`.
    Read,
    /// Never returned.
    NotRead,
}

/// Whether the application has seen this generation of the instance before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViewState {
    /// First sight of the instance, or first since it came back to life.
    New,
    /// A sample of this generation was already returned.
    NotNew,
}

/// Whether the instance has live writers and is not disposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstanceState {
    /// Written by at least one live writer, not disposed.
    Alive,
    /// Disposed by a writer.
    NotAliveDisposed,
    /// Every writer unregistered it or was lost.
    NotAliveNoWriters,
}

macro_rules! state_mask {
    ($(#[$doc:meta])* $mask:ident for $state:ident { $($(#[$cdoc:meta])* $name:ident = $bit:literal => $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $mask(u8);

        impl $mask {
            $($(#[$cdoc])* pub const $name: $mask = $mask($bit);)+
            /// Every state.
            pub const ANY: $mask = $mask($($bit)|+);

            /// Whether `state` is in the mask.
            pub fn contains(self, state: $state) -> bool {
                let bit = match state { $($state::$variant => $bit,)+ };
                self.0 & bit != 0
            }
        }

        impl BitOr for $mask {
            type Output = $mask;
            fn bitor(self, rhs: $mask) -> $mask {
                $mask(self.0 | rhs.0)
            }
        }

        impl Default for $mask {
            /// [`Self::ANY`].
            fn default() -> $mask {
                $mask::ANY
            }
        }
    };
}

state_mask!(
    /// A set of [`SampleState`]s (DDS `SampleStateMask`).
    SampleStateMask for SampleState {
        /// READ_SAMPLE_STATE.
        READ = 1 => Read,
        /// NOT_READ_SAMPLE_STATE.
        NOT_READ = 2 => NotRead,
    }
);

state_mask!(
    /// A set of [`ViewState`]s (DDS `ViewStateMask`).
    ViewStateMask for ViewState {
        /// NEW_VIEW_STATE.
        NEW = 1 => New,
        /// NOT_NEW_VIEW_STATE.
        NOT_NEW = 2 => NotNew,
    }
);

state_mask!(
    /// A set of [`InstanceState`]s (DDS `InstanceStateMask`).
    InstanceStateMask for InstanceState {
        /// ALIVE_INSTANCE_STATE.
        ALIVE = 1 => Alive,
        /// NOT_ALIVE_DISPOSED_INSTANCE_STATE.
        NOT_ALIVE_DISPOSED = 2 => NotAliveDisposed,
        /// NOT_ALIVE_NO_WRITERS_INSTANCE_STATE.
        NOT_ALIVE_NO_WRITERS = 4 => NotAliveNoWriters,
    }
);

impl InstanceStateMask {
    /// NOT_ALIVE_INSTANCE_STATE: disposed or without writers.
    pub const NOT_ALIVE: InstanceStateMask = InstanceStateMask(2 | 4);
}

/// DCPS SampleInfo, as returned with each sample by `read` and `take`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleInfo {
    /// Read before or not.
    pub sample_state: SampleState,
    /// The instance's view state when the collection was built.
    pub view_state: ViewState,
    /// The instance's state when the collection was built.
    pub instance_state: InstanceState,
    /// Times the instance went from NOT_ALIVE_DISPOSED to ALIVE before this sample arrived.
    pub disposed_generation_count: u32,
    /// Times the instance went from NOT_ALIVE_NO_WRITERS to ALIVE before this sample arrived.
    pub no_writers_generation_count: u32,
    /// Samples of the same instance after this one in the returned collection.
    pub sample_rank: u32,
    /// Generations between this sample and the newest of its instance in the collection.
    pub generation_rank: u32,
    /// Generations between this sample and the instance's newest generation in the cache.
    pub absolute_generation_rank: u32,
    /// The writer's source timestamp.
    pub source_timestamp: Time,
    /// The instance handle (the key hash).
    pub instance_handle: KeyHash,
    /// The writer that sent the sample.
    pub publication_handle: Guid,
    /// False for a sample that only carries an instance-state change (no data).
    pub valid_data: bool,
    /// When the reader received the sample (not a DCPS field; for lifespan and diagnostics).
    pub reception_time: Instant,
}

/// One item of a `read`/`take` result: its info and, when `info.valid_data`, its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The SampleInfo.
    pub info: SampleInfo,
    /// The serialized data, `None` for an invalid-data sample.
    pub data: Option<Payload>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_select_states() {
        assert!(InstanceStateMask::NOT_ALIVE.contains(InstanceState::NotAliveNoWriters));
        assert!(!InstanceStateMask::NOT_ALIVE.contains(InstanceState::Alive));
        assert_eq!(
            InstanceStateMask::ALIVE | InstanceStateMask::NOT_ALIVE,
            InstanceStateMask::ANY
        );
        assert!(SampleStateMask::ANY.contains(SampleState::Read));
        assert!(!ViewStateMask::NEW.contains(ViewState::NotNew));
        assert_eq!(SampleStateMask::default(), SampleStateMask::ANY);
    }
}
