//! Fuzz entry points: pure functions over bytes, used by cargo-fuzz targets and corpus replay.

use crate::message::{Message, MessageView};
use crate::parameter::payload::{ParameterListPayload, ParameterListPayloadView};
use crate::submessage::SubmessageView;

/// Fuzz entry point for whole messages.
///
/// Parses `data` as a view and as a [`Message`], renders both with `Display`, and when parsing
/// succeeds asserts that re-emitting reproduces `data` byte for byte. Panics only on a bug.
pub fn fuzz_parse_message(data: &[u8]) {
    if let Ok(view) = MessageView::new_checked(data) {
        let _ = view.to_string();
        for sub in view.submessages().flatten() {
            let _ = sub.trailing();
            if let SubmessageView::Data(d) = sub {
                let _ = (d.writer_sn(), d.serialized_payload(), d.gap());
                if let Some(q) = d.inline_qos() {
                    let _ = q.iter().count();
                }
            }
        }
    }
    if let Ok(msg) = Message::parse(data) {
        assert!(!msg.to_string().is_empty(), "Display must render something");
        assert_eq!(
            msg.buffer_len(),
            data.len(),
            "buffer_len of a parsed message"
        );
        let out = match msg.to_bytes() {
            Ok(out) => out,
            Err(e) => panic!("a parsed message must re-emit: {e}"),
        };
        assert_eq!(out, data, "emit(parse(x)) must equal x");
    }
}

/// Fuzz entry point for parameter-list payloads (SPDP/SEDP serialized data).
///
/// `data` is a serialized payload: a 4-byte encapsulation header (PL_CDR_BE / PL_CDR_LE) and a
/// parameter list. When it parses, `Display` must render and re-emitting must reproduce `data`.
pub fn fuzz_parse_parameter_list(data: &[u8]) {
    let Ok(view) = ParameterListPayloadView::parse(data) else {
        return;
    };
    let _ = view.list().iter().count();
    let payload = ParameterListPayload::parse(&view);
    assert!(
        !payload.to_string().is_empty(),
        "Display must render something"
    );
    let mut out = vec![0u8; payload.buffer_len()];
    match payload.emit(&mut out) {
        Ok(n) => assert_eq!(n, out.len(), "emit writes buffer_len bytes"),
        Err(e) => panic!("a parsed parameter list must re-emit: {e}"),
    }
    assert_eq!(out, data, "emit(parse(x)) must equal x");
}
