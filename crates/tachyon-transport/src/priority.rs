//! TRANSPORT_PRIORITY → `SO_PRIORITY` and DSCP (`IP_TOS`).
//!
//! The DDS QoS is an unbounded `i32` whose meaning the spec leaves to the implementation.
//! Tachyon maps it, after clamping to `0..=7`, as follows:
//!
//! | priority p | SO_PRIORITY (qdisc band) | DSCP (class selector) | IP_TOS byte |
//! |---|---|---|---|
//! | ≤ 0 | 0 | CS0 (0) | 0x00 |
//! | 1..=6 | p | CSp (p·8) | p·32 |
//! | ≥ 7 | 6 | CS7 (56) | 0xe0 |
//!
//! `SO_PRIORITY` stops at 6 because Linux lets any process set 0..=6 and needs CAP_NET_ADMIN
//! above. DSCP is set before `SO_PRIORITY` because Linux rewrites the socket priority from the
//! TOS byte when `IP_TOS` is set.

/// The highest `SO_PRIORITY` a process may set without CAP_NET_ADMIN.
pub const MAX_UNPRIVILEGED_SO_PRIORITY: i32 = 6;

/// The priority clamped to the range the mapping distinguishes (`0..=7`); two priorities with
/// the same key produce the same socket options.
pub fn priority_key(priority: i32) -> i32 {
    priority.clamp(0, 7)
}

/// The `SO_PRIORITY` value for a TRANSPORT_PRIORITY.
pub fn so_priority(priority: i32) -> i32 {
    priority_key(priority).min(MAX_UNPRIVILEGED_SO_PRIORITY)
}

/// The 6-bit DSCP (class selector) for a TRANSPORT_PRIORITY.
pub fn dscp(priority: i32) -> u8 {
    // priority_key is in 0..=7, so the shift stays below 64.
    (priority_key(priority) as u8) << 3
}

/// The `IP_TOS` byte (DSCP in the upper six bits, ECN bits zero) for a TRANSPORT_PRIORITY.
pub fn tos(priority: i32) -> u8 {
    dscp(priority) << 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_table() {
        let rows: Vec<(i32, i32, u8, u8)> = [i32::MIN, -1, 0, 1, 5, 6, 7, 8, i32::MAX]
            .iter()
            .map(|&p| (p, so_priority(p), dscp(p), tos(p)))
            .collect();
        assert_eq!(
            rows,
            vec![
                (i32::MIN, 0, 0, 0),
                (-1, 0, 0, 0),
                (0, 0, 0, 0),
                (1, 1, 8, 0x20),
                (5, 5, 40, 0xa0),
                (6, 6, 48, 0xc0),
                (7, 6, 56, 0xe0),
                (8, 6, 56, 0xe0),
                (i32::MAX, 6, 56, 0xe0),
            ]
        );
    }

    #[test]
    fn key_identifies_equal_socket_options() {
        for a in -3..12 {
            for b in -3..12 {
                if priority_key(a) == priority_key(b) {
                    assert_eq!((so_priority(a), tos(a)), (so_priority(b), tos(b)));
                }
            }
        }
    }
}
