//! Byte helpers tuned for the short strings that dominate DDS samples (keys, names).

/// True when `bytes` contains a NUL. Short strings (the usual case for keys and names) are
/// checked with two overlapping word loads instead of a byte loop.
#[inline(always)]
pub(crate) fn has_nul(bytes: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(LO) & !x & HI != 0;
    let n = bytes.len();
    if (8..=16).contains(&n) {
        let a = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([1; 8]));
        let b = u64::from_le_bytes(bytes[n - 8..].try_into().unwrap_or([1; 8]));
        zero_byte(a) || zero_byte(b)
    } else if (4..8).contains(&n) {
        let a = u32::from_le_bytes(bytes[..4].try_into().unwrap_or([1; 4]));
        let b = u32::from_le_bytes(bytes[n - 4..].try_into().unwrap_or([1; 4]));
        zero_byte(u64::from(a) | 0x0101_0101_0000_0000)
            || zero_byte(u64::from(b) | 0x0101_0101_0000_0000)
    } else {
        bytes.contains(&0)
    }
}
