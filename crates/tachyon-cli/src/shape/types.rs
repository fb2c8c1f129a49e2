//! The suite's `ShapeType` (dds-rtps `shape.idl`): `@appendable struct ShapeType { @key
//! string<128> color; int32 x; int32 y; int32 shapesize; sequence<uint8>
//! additional_payload_size; };`.

use tachyon::DdsType;

/// One shape: its color is the instance key.
#[derive(DdsType, Clone, Debug, Default, PartialEq)]
#[dds(name = "ShapeType", appendable)]
pub struct ShapeType {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
    #[dds(idl = "uint8")]
    pub additional_payload_size: Vec<u8>,
}

impl ShapeType {
    /// The line shape_main prints for a sample: `%-10s %-10s %03d %03d [%d]`, and ` {%u}`
    /// with the last octet of the additional payload when there is one.
    pub fn line(&self, topic: &str) -> String {
        let mut s = format!(
            "{topic:<10} {:<10} {:03} {:03} [{}]",
            self.color, self.x, self.y, self.shapesize
        );
        if let Some(last) = self.additional_payload_size.last() {
            s.push_str(&format!(" {{{last}}}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_as_shape_main_prints() {
        let s = ShapeType {
            color: "BLUE".into(),
            x: 5,
            y: 120,
            shapesize: 30,
            additional_payload_size: vec![255; 3],
        };
        assert_eq!(s.line("Square"), "Square     BLUE       005 120 [30] {255}");
    }

    /// The type is the suite's, byte for byte as Cyclone DDS 11 represents it
    /// (`interop/xtypes-vectors/suite_shape.json`): so shape_main matches the other vendors'
    /// shape_main by type, not only by name.
    #[test]
    fn the_type_is_the_suites_as_cyclone_dds_11_represents_it() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../interop/xtypes-vectors/suite_shape.json"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("vector")).expect("json");
        let desc = <ShapeType as tachyon::DdsType>::type_desc().expect("described");
        let reps = tachyon::xtypes::TypeRepresentations::of(&desc).expect("representable");
        let hex: String = reps
            .type_information()
            .to_bytes()
            .expect("encodes")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, v["type_information_hex"].as_str().expect("hex"));
    }
}
