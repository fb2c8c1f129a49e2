//! PRESENTATION's coherent sets and access brackets, as shape_main calls them.

use tachyon::{Publisher, Subscriber};

pub fn begin(p: &Publisher) -> Result<(), String> {
    p.begin_coherent_changes()
        .map_err(|e| format!("begin_coherent_changes failed: {e}"))
}

pub fn end(p: &Publisher) -> Result<(), String> {
    p.end_coherent_changes()
        .map_err(|e| format!("end_coherent_changes failed: {e}"))
}

pub fn begin_access(s: &Subscriber) -> Result<(), String> {
    s.begin_access()
        .map_err(|e| format!("begin_access failed: {e}"))
}

pub fn end_access(s: &Subscriber) -> Result<(), String> {
    s.end_access()
        .map_err(|e| format!("end_access failed: {e}"))
}
