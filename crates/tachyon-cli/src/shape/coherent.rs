//! PRESENTATION's coherent sets and access brackets, as shape_main calls them.

use tachyon::{Publisher, Subscriber};

use super::ShapeOptions;

/// shape_main's check before creating the Publisher or Subscriber: a vendor without
/// coherent or ordered access says so with "not supported", which the suite reads as
/// PUB_/SUB_UNSUPPORTED_FEATURE.
pub fn check(o: &ShapeOptions) -> Result<(), String> {
    if o.coherent {
        return Err("    Presentation Coherent Access = not supported".to_owned());
    }
    if o.ordered {
        return Err("    Presentation Ordered Access = not supported".to_owned());
    }
    Ok(())
}

pub fn begin(_p: &Publisher) -> Result<(), String> {
    Ok(())
}

pub fn end(_p: &Publisher) -> Result<(), String> {
    Ok(())
}

pub fn begin_access(_s: &Subscriber) -> Result<(), String> {
    Ok(())
}

pub fn end_access(_s: &Subscriber) -> Result<(), String> {
    Ok(())
}
