//! Arbitrary operation sequences against a participant's writer and readers (the same
//! interpreter the `endpoint_ops` fuzz target runs): no panic, resource limits hold, no sample
//! delivered twice or out of order.

use proptest::prelude::*;
use tachyon_proto::fuzzing::run_ops;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_operations_keep_the_invariants(data in proptest::collection::vec(any::<u8>(), 0..1500)) {
        run_ops(&data);
    }

    /// Operations drawn from a small alphabet of well-formed, in-range messages, so long
    /// reliable exchanges (not only rejections) happen.
    #[test]
    fn structured_operations_keep_the_invariants(
        ops in proptest::collection::vec((0u8..12, proptest::collection::vec(0u8..24, 24)), 0..120)
    ) {
        let mut data = Vec::new();
        for (op, fields) in ops {
            data.push(op);
            data.extend_from_slice(&fields);
        }
        run_ops(&data);
    }
}

#[test]
fn a_plain_exchange_delivers_in_order() {
    // DATA sn 1..=20 (op 0, DATA submessage, in-range fields) then a take.
    let mut data = Vec::new();
    for sn in 1u8..=20 {
        // message not corrupted, 1 submessage, any reader, DATA, small sn, no status,
        // key 3, 32 bytes of data
        data.extend_from_slice(&[0, 1, 0, 0, 0, 2, sn, 5, 1, 3, 20, 0, 1]);
    }
    data.push(10);
    let o = run_ops(&data);
    assert!(o.taken > 0, "{o:?}");
}

#[test]
fn regression_corrupted_sequence_number_is_not_a_duplicate() {
    let data: Vec<u8> = vec![
        0, 4, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 6, 4, 0, 0, 0, 0, 9,
        0, 6, 0, 8, 0, 0, 17, 8, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 13, 0, 6, 2, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 6, 2, 0, 4,
        0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 0, 12, 20, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 0, 12, 9,
        0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 3, 2, 0, 2, 0, 0, 0, 1, 9, 9, 0, 19, 0, 22, 0, 0, 0, 0, 0,
        0, 1, 0, 0, 0, 0, 0, 0, 12, 2, 0, 0, 1, 0, 0, 0, 0, 0, 12, 10, 2, 22, 9, 1, 0, 0, 0, 1, 0,
        14, 0, 0, 0, 0, 0, 2, 0, 20, 0, 0, 0, 0, 1, 0, 19, 0, 17, 2, 0, 0, 1, 0, 0, 2, 10, 2, 22,
        3, 1, 1, 0, 0, 1, 0, 16, 2, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 6, 2, 0, 9, 0, 0, 0, 8, 20, 16,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    run_ops(&data);
}
