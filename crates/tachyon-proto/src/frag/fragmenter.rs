//! Cutting a payload into fragments for DATA_FRAG.

/// Default fragment size: a DATA_FRAG with one fragment plus RTPS header, INFO_TS, INFO_DST and
/// inline QoS stays within a 1500-byte Ethernet MTU over IPv4/UDP (1500 − 20 − 8 = 1472 bytes of
/// UDP payload; 1344 leaves 128 bytes of RTPS overhead, the value Cyclone DDS uses).
pub const DEFAULT_FRAGMENT_SIZE: u16 = 1344;

/// A run of consecutive fragments to carry in one DATA_FRAG submessage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragmentRange {
    /// Number of the first fragment (1-based, as on the wire).
    pub starting_num: u32,
    /// How many fragments.
    pub count: u16,
    /// Byte range of the payload these fragments cover.
    pub start: usize,
    /// End of that byte range (exclusive).
    pub end: usize,
}

/// The DATA_FRAG submessages a payload of `len` bytes needs with fragments of `fragment_size`
/// bytes, at most `per_submessage` fragments each (at least 1).
pub fn fragments(
    len: usize,
    fragment_size: u16,
    per_submessage: u16,
) -> impl Iterator<Item = FragmentRange> {
    let size = usize::from(fragment_size.max(1));
    let per = usize::from(per_submessage.max(1));
    let total = len.div_ceil(size);
    (0..total).step_by(per).map(move |first| {
        let count = per.min(total - first);
        FragmentRange {
            starting_num: u32::try_from(first + 1).unwrap_or(u32::MAX),
            count: u16::try_from(count).unwrap_or(u16::MAX),
            start: first * size,
            end: ((first + count) * size).min(len),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_the_payload_exactly() {
        for len in [1usize, 1343, 1344, 1345, 10_000, 262_144] {
            for per in [1u16, 3, 40] {
                let ranges: Vec<_> = fragments(len, 1344, per).collect();
                assert_eq!(ranges.first().map(|r| r.start), Some(0));
                assert_eq!(ranges.last().map(|r| r.end), Some(len));
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                    assert_eq!(w[0].starting_num + u32::from(w[0].count), w[1].starting_num);
                }
                let frags: u32 = ranges.iter().map(|r| u32::from(r.count)).sum();
                assert_eq!(frags as usize, len.div_ceil(1344));
            }
        }
        assert_eq!(fragments(0, 1344, 1).count(), 0);
    }
}
