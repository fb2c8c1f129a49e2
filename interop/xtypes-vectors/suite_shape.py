#!/usr/bin/env python3
"""The XTypes representation Cyclone DDS 11.0.1 computes for the OMG interoperability suite's
ShapeType (interop/shape/shape.idl: @appendable, @key string<128> color, three int32,
sequence<uint8> additional_payload_size), through its Python binding's XTBuilder (which agrees
with the idlc C path on all 22 types of vectors.json). Writes suite_shape.json:
TypeInformation, and each TypeObject by its identifier.

    target/interop/cyclone11-venv/bin/python3 interop/xtypes-vectors/suite_shape.py
"""

import json
from dataclasses import dataclass
from pathlib import Path

from cyclonedds.idl import IdlStruct
from cyclonedds.idl._support import Endianness
from cyclonedds.idl._xt_builder import XTBuilder
from cyclonedds.idl.annotations import appendable, key
from cyclonedds.idl.types import bounded_str, int32, sequence, uint8


@dataclass
@appendable
class ShapeType(IdlStruct, typename="ShapeType"):
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32
    additional_payload_size: sequence[uint8]


def ser(obj) -> bytes:
    """XCDR2 little-endian, encapsulation header stripped (as Cyclone does for type meta)."""
    return obj.serialize(endianness=Endianness.Little, use_version_2=True)[4:]


def main():
    ti, tm = XTBuilder.process_type(ShapeType)
    objects = {}
    for pairs in (tm.identifier_object_pair_minimal, tm.identifier_object_pair_complete):
        for p in pairs:
            objects[ser(p.type_identifier).hex()] = ser(p.type_object).hex()
    out = {
        "generator": "interop/xtypes-vectors/suite_shape.py (cyclonedds 11.0.1 XTBuilder)",
        "idl": (Path(__file__).resolve().parent.parent / "shape" / "shape.idl").read_text(),
        "type_information_hex": ser(ti).hex(),
        "minimal_id_hex": ser(ti.minimal.typeid_with_size.type_id).hex(),
        "complete_id_hex": ser(ti.complete.typeid_with_size.type_id).hex(),
        "type_objects": objects,
    }
    path = Path(__file__).resolve().parent / "suite_shape.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
