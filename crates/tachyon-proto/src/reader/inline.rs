//! The inline QoS parameters a reader looks at in a DATA or DATA_FRAG, found in one pass
//! over the list (one `get` per parameter walked it five times per sample).

use tachyon_cdr::KeyHash;
use tachyon_wire::ParameterListView;

use crate::history::coherent::{PID_COHERENT_SET, PID_TACHYON_COHERENT_GROUP};
use crate::local::PID_TACHYON_LOCAL_SAMPLE;
use crate::shared::PID_TACHYON_SHM_SAMPLE;

/// PID_KEY_HASH.
pub(super) const PID_KEY_HASH: u16 = 0x0070;
/// PID_STATUS_INFO.
pub(super) const PID_STATUS_INFO: u16 = 0x0071;

/// The values of the parameters a reader uses, each the first of its id in the list (as
/// `ParameterListView::get` finds it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InlineParams<'a> {
    key_hash: Option<&'a [u8]>,
    status_info: Option<&'a [u8]>,
    /// PID_COHERENT_SET.
    pub coherent_set: Option<&'a [u8]>,
    /// Tachyon's publisher-wide set parameter (read only from Tachyon writers).
    pub coherent_group: Option<&'a [u8]>,
    /// Tachyon's in-process reference to the sample (read only from Tachyon writers).
    pub local_sample: Option<&'a [u8]>,
    /// Tachyon's shared-memory reference to the sample (read only from Tachyon writers).
    pub shm_sample: Option<&'a [u8]>,
    /// The list's byte order is big endian.
    pub big_endian: bool,
}

impl<'a> InlineParams<'a> {
    /// The parameters of `qos` (none when absent).
    pub(crate) fn of(qos: Option<ParameterListView<'a>>) -> InlineParams<'a> {
        let mut p = InlineParams::default();
        let Some(q) = qos else {
            return p;
        };
        p.big_endian = q.endian() == tachyon_wire::Endian::Big;
        // The usual list (a steady stream's: `MessageBuilder::info_ts_and_data`): the key hash
        // and the sentinel (the list was checked: the sentinel follows), nothing to walk.
        if let Some(([0x70, 0, 16, 0], rest)) = q.as_bytes().split_first_chunk::<4>() {
            if rest.len() == 16 + 4 && !p.big_endian {
                p.key_hash = rest.get(..16);
                return p;
            }
        }
        for param in q.iter() {
            let slot = match param.pid {
                PID_KEY_HASH => &mut p.key_hash,
                PID_STATUS_INFO => &mut p.status_info,
                PID_COHERENT_SET => &mut p.coherent_set,
                PID_TACHYON_COHERENT_GROUP => &mut p.coherent_group,
                PID_TACHYON_LOCAL_SAMPLE => &mut p.local_sample,
                PID_TACHYON_SHM_SAMPLE => &mut p.shm_sample,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(param.value);
            }
        }
        p
    }

    /// The key hash, when present and whole.
    pub(crate) fn key_hash(&self) -> Option<KeyHash> {
        self.key_hash
            .and_then(|v| v.first_chunk::<16>())
            .map(|v| KeyHash(*v))
    }

    /// The status-info flags (0 when absent or short).
    pub(crate) fn status(&self) -> u32 {
        self.status_info
            .and_then(|v| v.first_chunk::<4>())
            .map_or(0, |v| u32::from_be_bytes(*v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::Endian;

    fn list(params: &[(u16, &[u8])], endian: Endian) -> Vec<u8> {
        let mut out = Vec::new();
        for (pid, value) in params {
            let (pid, len) = (*pid, value.len() as u16);
            match endian {
                Endian::Little => {
                    out.extend(pid.to_le_bytes());
                    out.extend(len.to_le_bytes());
                }
                Endian::Big => {
                    out.extend(pid.to_be_bytes());
                    out.extend(len.to_be_bytes());
                }
            }
            out.extend_from_slice(value);
        }
        // PID_SENTINEL (1), length 0.
        out.extend(match endian {
            Endian::Little => [1, 0, 0, 0],
            Endian::Big => [0, 1, 0, 0],
        });
        out
    }

    #[test]
    fn finds_the_first_of_each_and_skips_the_rest() {
        let key = [7u8; 16];
        let bytes = list(
            &[
                (0x0005, &[0; 8]), // PID_TOPIC_NAME-like, ignored
                (PID_KEY_HASH, &key),
                (PID_STATUS_INFO, &[0, 0, 0, 3]),
                (PID_KEY_HASH, &[9; 16]),
                (PID_COHERENT_SET, &[0, 0, 0, 0, 5, 0, 0, 0]),
                (PID_TACHYON_SHM_SAMPLE, &[1, 2, 3, 4]),
            ],
            Endian::Little,
        );
        let q = ParameterListView::parse(&bytes, Endian::Little).unwrap();
        let p = InlineParams::of(Some(q));
        assert_eq!(p.key_hash(), Some(KeyHash(key)));
        assert_eq!(p.status(), 3);
        assert_eq!(p.coherent_set, Some(&[0, 0, 0, 0, 5, 0, 0, 0][..]));
        assert_eq!(p.shm_sample, Some(&[1, 2, 3, 4][..]));
        assert_eq!((p.local_sample, p.coherent_group), (None, None));
        assert!(!p.big_endian);
        // What `get` finds, parameter by parameter.
        assert_eq!(p.coherent_set, q.get(PID_COHERENT_SET));
        assert_eq!(p.shm_sample, q.get(PID_TACHYON_SHM_SAMPLE));
    }

    /// The key hash alone (a steady stream's list, read without a walk) gives what the walk
    /// gives, in either byte order; a list that only starts the same way is walked.
    #[test]
    fn the_key_hash_alone_reads_as_the_walk_does() {
        let key = [5u8; 16];
        for endian in [Endian::Little, Endian::Big] {
            let bytes = list(&[(PID_KEY_HASH, &key)], endian);
            let q = ParameterListView::parse(&bytes, endian).unwrap();
            let p = InlineParams::of(Some(q));
            assert_eq!(p.key_hash(), Some(KeyHash(key)));
            assert_eq!(p.key_hash, q.get(PID_KEY_HASH));
            assert_eq!((p.status(), p.big_endian), (0, endian == Endian::Big));
            assert_eq!(
                (p.coherent_set, p.shm_sample, p.local_sample),
                (None, None, None)
            );
        }
        let bytes = list(
            &[(PID_KEY_HASH, &key), (PID_STATUS_INFO, &[0, 0, 0, 1])],
            Endian::Little,
        );
        let p = InlineParams::of(Some(
            ParameterListView::parse(&bytes, Endian::Little).unwrap(),
        ));
        assert_eq!((p.key_hash(), p.status()), (Some(KeyHash(key)), 1));
    }

    #[test]
    fn short_values_and_no_list_give_nothing() {
        let bytes = list(
            // A key hash of 8 octets, a status info of none: both unusable.
            &[(PID_KEY_HASH, &[1; 8]), (PID_STATUS_INFO, &[])],
            Endian::Big,
        );
        let q = ParameterListView::parse(&bytes, Endian::Big).unwrap();
        let p = InlineParams::of(Some(q));
        assert_eq!((p.key_hash(), p.status()), (None, 0));
        assert!(p.big_endian);
        let none = InlineParams::of(None);
        assert_eq!((none.key_hash(), none.status()), (None, 0));
        assert_eq!(none.coherent_set, None);
    }
}
