"""Cross-check of the libddsc vectors against the pure-Python serializer of the PyPI
`cyclonedds` package (cyclonedds.idl).  Run by generate.sh inside /work/venv-cyclone.

The Python types below mirror types.idl one for one (hand-written declarations: the
Python package's idlc plugin does not load into Debian's idlc 0.10.2).  The encoding
itself is done by cyclonedds.idl.

Input: gen's TSV on stdin.  Output (stdout), TSV:
  P <type> <sample> <encoding> <hex>                  python's bytes
  C <type> <sample> <encoding> <same|differs> <note>  comparison with libddsc
"""
import sys
from dataclasses import dataclass
from typing import Optional

from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum
from cyclonedds.idl.types import (int8, uint8, int16, uint16, int32, uint32, int64, uint64,
                                  float32, float64, char, sequence, array, bounded_str, case)
from cyclonedds.idl._support import Endianness
import cyclonedds.idl.annotations as annotate


@dataclass
class ShapeType(IdlStruct, typename="ShapeType"):
    color: bounded_str[128]
    annotate.key("color")
    x: int32
    y: int32
    shapesize: int32


@dataclass
@annotate.appendable
class AppendableShape(IdlStruct, typename="AppendableShape"):
    color: bounded_str[128]
    annotate.key("color")
    x: int32
    y: int32
    shapesize: int32


@dataclass
class Primitives(IdlStruct, typename="Primitives"):
    b: bool
    c: char
    o: uint8
    i8v: int8
    u8v: uint8
    s: int16
    us: uint16
    l: int32
    ul: uint32
    ll: int64
    ull: uint64
    f: float32
    d: float64
    o2: uint8
    d2: float64


@dataclass
class Strings(IdlStruct, typename="Strings"):
    plain: str
    bounded: bounded_str[8]
    empty: str


@dataclass
class Inner(IdlStruct, typename="Inner"):
    a: int16
    b: float64


@dataclass
class Sequences(IdlStruct, typename="Sequences"):
    longs: sequence[int32]
    octets: sequence[uint8, 16]
    doubles: sequence[float64]
    strings: sequence[str]
    inners: sequence[Inner]


@dataclass
class Arrays(IdlStruct, typename="Arrays"):
    a1: array[int32, 3]
    a2: array[array[int16, 3], 2]
    a3: array[str, 2]
    a4: array[float64, 2]
    a5: array[uint8, 5]
    a6: array[Inner, 2]


@dataclass
class Nested(IdlStruct, typename="Nested"):
    tag: uint8
    inner: Inner
    seq: sequence[Inner, 4]


class Color(IdlEnum, typename="Color"):
    RED = 0
    GREEN = 1
    BLUE = 2


@dataclass
class WithEnum(IdlStruct, typename="WithEnum"):
    c: Color
    cs: sequence[Color]
    arr: array[Color, 2]


class Choice(IdlUnion, discriminator=int32, typename="Choice"):
    l: case[1, int32]
    s: case[2, str]
    d: case[3, float64]
    inner: case[4, Inner]


class Small(IdlUnion, discriminator=int16, typename="Small"):
    o: case[1, uint8]
    ll: case[2, int64]


@dataclass
class WithUnion(IdlStruct, typename="WithUnion"):
    a: Choice
    b: Choice
    c: Choice
    d: Choice
    e: Small
    f: Small


@dataclass
class WithOptional(IdlStruct, typename="WithOptional"):
    a: int32
    b: Optional[int32]
    c: Optional[str]
    d: Optional[Inner]


@dataclass
@annotate.appendable
class AppendableStruct(IdlStruct, typename="AppendableStruct"):
    a: int32
    b: str
    c: sequence[int16]


@dataclass
@annotate.mutable
class MutableStruct(IdlStruct, typename="MutableStruct"):
    ident: int32
    annotate.key("ident")
    name: str
    annotate.member_id("name", 10)
    value: float64
    opt: Optional[int16]


@dataclass
@annotate.mutable
@annotate.autoid("hash")
class HashIds(IdlStruct, typename="HashIds"):
    alpha: int32
    beta: str


@dataclass
@annotate.mutable
class MustUnderstand(IdlStruct, typename="MustUnderstand"):
    id: int32
    annotate.key("id")
    m: int32
    annotate.must_understand("m")


@dataclass
class KeyedMulti(IdlStruct, typename="KeyedMulti"):
    k1: uint8
    annotate.key("k1")
    k2: int64
    annotate.key("k2")
    v: int32


@dataclass
class KeyedNested(IdlStruct, typename="KeyedNested"):
    k: Inner
    annotate.key("k")
    v: int32


@dataclass
class KeyedSmallString(IdlStruct, typename="KeyedSmallString"):
    name: bounded_str[8]
    annotate.key("name")
    v: int32


@dataclass
class Big(IdlStruct, typename="Big"):
    data: sequence[uint8]


SAMPLES = {
    ("ShapeType", "shape_red"): ShapeType("RED", 10, 20, 30),
    ("ShapeType", "shape_long"): ShapeType("MAGENTA_LONGER_COLOR_NAME", -1, 2147483647, 0),
    ("AppendableShape", "shape_red"): AppendableShape("RED", 10, 20, 30),
    ("AppendableShape", "shape_long"): AppendableShape("MAGENTA_LONGER_COLOR_NAME", -1, 2147483647, 0),
    ("Primitives", "prims"): Primitives(True, "A", 0xAB, -5, 250, -1234, 54321, -123456789, 4000000000,
                                        -1234567890123, 18000000000000000000, 1.5, -2.25, 7, 3.0e100),
    ("Strings", "strs"): Strings("hello, world", "12345678", ""),
    ("Sequences", "seqs"): Sequences([1, -2, 3], [1, 2, 3, 4, 5], [0.5], ["a", "bc", ""],
                                     [Inner(1, 1.0), Inner(-1, -1.0)]),
    ("Sequences", "seqs_empty"): Sequences([], [], [], [], []),
    ("Arrays", "arrs"): Arrays([1, 2, 3], [[1, 2, 3], [4, 5, 6]], ["x", "yz"], [1.0, -1.0], [9, 8, 7, 6, 5],
                               [Inner(1, 2.0), Inner(3, 4.0)]),
    ("Nested", "nested"): Nested(1, Inner(7, 0.25), [Inner(8, 8.5)]),
    ("WithEnum", "enums"): WithEnum(Color.BLUE, [Color.RED, Color.GREEN, Color.BLUE], [Color.GREEN, Color.RED]),
    ("WithUnion", "unions"): WithUnion(Choice(l=-7), Choice(s="union"), Choice(d=6.5), Choice(inner=Inner(2, 2.5)),
                                       Small(o=0x11), Small(ll=-9)),
    ("WithOptional", "opt_all"): WithOptional(1, 2, "three", Inner(4, 5.0)),
    ("WithOptional", "opt_none"): WithOptional(1, None, None, None),
    ("AppendableStruct", "app"): AppendableStruct(42, "app", [1, 2, 3]),
    ("MutableStruct", "mut_all"): MutableStruct(7, "mutable", 0.125, 9),
    ("MutableStruct", "mut_noopt"): MutableStruct(7, "mutable", 0.125, None),
    ("HashIds", "hash"): HashIds(1, "beta"),
    ("MustUnderstand", "mu"): MustUnderstand(3, 4),
    ("KeyedMulti", "km"): KeyedMulti(1, 0x0102030405060708, 99),
    ("KeyedNested", "kn"): KeyedNested(Inner(5, 6.5), 1),
    ("KeyedSmallString", "kss"): KeyedSmallString("abc", 2),
    ("KeyedSmallString", "kss_full"): KeyedSmallString("12345678", 3),
    ("Big", "big1k"): Big([i % 251 for i in range(1024)]),
}

V2 = {"CDR2_BE", "CDR2_LE", "D_CDR2_BE", "D_CDR2_LE", "PL_CDR2_BE", "PL_CDR2_LE"}


def main():
    cvec = {}
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        if f[0] == "V":
            cvec[(f[1], f[2], f[3])] = bytes.fromhex(f[5])
    for (tname, sname, enc), cb in cvec.items():
        obj = SAMPLES[(tname, sname)]
        v2 = enc in V2
        be = enc.endswith("_BE")
        try:
            pb = obj.serialize(use_version_2=v2, endianness=Endianness.Big if be else Endianness.Little)
        except Exception as e:  # pragma: no cover - reported, not fatal
            print(f"C\t{tname}\t{sname}\t{enc}\tdiffers\tpython raised {type(e).__name__}: {e}")
            continue
        print(f"P\t{tname}\t{sname}\t{enc}\t{pb.hex()}")
        pad = cb[3] & 3
        cbody = cb[4:len(cb) - pad]
        notes = []
        if pb[:2] != cb[:2]:
            notes.append(f"encapsulation id python {pb[:2].hex()} vs libddsc {cb[:2].hex()}")
        if pb[2:4] != cb[2:4]:
            notes.append(f"options python {pb[2:4].hex()} vs libddsc {cb[2:4].hex()} (python neither pads to 4 nor sets the padding count)")
        if pb[4:] != cbody:
            # find first differing offset (relative to the start of the payload incl. header)
            n = next((i for i in range(min(len(pb) - 4, len(cbody))) if pb[4 + i] != cbody[i]), min(len(pb) - 4, len(cbody)))
            notes.append(f"body differs from payload offset {n + 4} (python {len(pb)} bytes, libddsc {len(cb)} bytes incl. {pad} pad)")
            same = "differs"
        else:
            same = "same-body"
        print(f"C\t{tname}\t{sname}\t{enc}\t{same}\t{'; '.join(notes)}")


if __name__ == "__main__":
    main()
