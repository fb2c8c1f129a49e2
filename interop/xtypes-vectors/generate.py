#!/usr/bin/env python3
"""Generate XTypes 1.3 type-representation vectors (TypeInformation, TypeIdentifiers,
TypeObjects, TypeMapping) for interop/cdr-vectors/types.idl, computed by Cyclone DDS 11.0.1.

Run with the Python of a venv holding PyPI `cyclonedds==11.0.1`:

    target/interop/cyclone11-venv/bin/python3 interop/xtypes-vectors/generate.py

Writes interop/xtypes-vectors/vectors.json (deterministic; re-runnable).  See README.md.

Ground truth ("C path"): Cyclone's own C code that the C backend of idlc uses to produce the
TYPE_INFO_CDR_<T> / TYPE_MAP_CDR_<T> arrays of a topic descriptor, i.e.
`generate_type_meta_ser()` in libcycloneddsidl 11.0.1.  The wheel ships the idlc driver and
libcycloneddsidl but not the C generator plugin (libcycloneddsidlc.so), so this script builds a
~40-line idlc generator plugin (gcc) that calls, for every top-level struct/union, the very
function pointer idlc hands to every backend (`config->generate_typeinfo_typemap`, which idlc
sets to `generate_type_meta_ser`) and prints the bytes as hex.  The wheel's idlc executable
crashes on start-up (see README: its patchelf-rewritten program headers leave .dynamic's DT_DEBUG
slot in a read-only page); a copy with that one segment made writable is used, in a temp dir.

SEDP form: the descriptor's TypeInformation bytes are put through the same libddsc 11.0.1 functions
that take them to the wire: ddsi_typeinfo_deser() (sertype), ddsi_typeinfo_dup() (ddsi_xqos_copy of
the endpoint QoS -> unalias_type_information) and dds_stream_write_with_byte_order(...,
DDS_XTypes_TypeInformation_desc.m_ops, LE) (ddsi_plist.c:ser_type_information).  ddsi_typeinfo_dup
does not copy the two top-level typeobject_serialized_size fields, so SEDP carries 0 there.
sedp_check.py confirms the result on the wire.

Cross-checks (all recorded in the JSON):
  * libddsc round trip without the dup reproduces the idlc bytes exactly (TypeInformation and
    TypeMapping); the SEDP form differs from them only in the two zeroed sizes.
  * Python path: `idlc -l py` (the wheel's _idlpy plugin) generates the dataclasses, and
    cyclonedds.idl._xt_builder.XTBuilder.process_type() computes TypeInformation/TypeMapping.
  * Every TypeObject hex is re-serialized by the Python XCDR2 serializer from the C TypeMapping;
    its length must equal the C typeobject_serialized_size and MD5[:14] must equal the C hash.
  * `idlc -x final` must give the same bytes as plain `idlc`.
"""

import ctypes
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import cyclonedds
from cyclonedds.idl._support import Buffer, Endianness
from cyclonedds.idl._typesupport.DDS import XTypes as xt
from cyclonedds.idl._xt_builder import XTBuilder

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
IDL = REPO / "interop" / "cdr-vectors" / "types.idl"
OUT = HERE / "vectors.json"

PKG = Path(cyclonedds.__file__).resolve().parent
LIBDIR = PKG.parent / "cyclonedds.libs"
IDLC = PKG / ".libs" / "idlc"
IDLPY = sorted(PKG.glob("_idlpy*.so"))[0]
LIBDDSC = sorted(LIBDIR.glob("libddsc*.so*"))[0]

PLUGIN_C = r"""
/* Minimal idlc generator plugin: prints the TypeInformation/TypeMapping that idlc's
   generate_type_meta_ser() (the code behind TYPE_INFO_CDR_x / TYPE_MAP_CDR_x) computes. */
#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
/* idl_typeinfo_typemap_t, idl/processor.h (11.0.1) */
typedef struct { unsigned char *typeinfo; size_t typeinfo_size; unsigned char *typemap; size_t typemap_size; } tm_t;
/* idlc_generator_config_t, idlc/generator.h (11.0.1) */
struct gen_config { char *output_dir; char *base_dir; bool generate_type_info;
  int (*generate_typeinfo_typemap)(const void *, const void *, tm_t *); };
/* leading part of idl_pstate_t, idl/processor.h (11.0.1) */
struct pstate_prefix { bool keylists; bool annotations;
  struct { uint32_t flags; int default_extensibility; bool default_nested; } config;
  void *track_warning; void *paths, *files, *sources; void *global_scope, *annotation_scope, *scope;
  void *directive; void *builtin_root, *root; };
extern void *idl_next(const void *); extern bool idl_is_struct(const void *);
extern bool idl_is_union(const void *); extern bool idl_is_enum(const void *);
extern const char *idl_identifier(const void *);
static void hex(const unsigned char *p, size_t n) { for (size_t i = 0; i < n; i++) printf("%02x", p[i]); }
int generate(const struct pstate_prefix *ps, const struct gen_config *cfg) {
  printf("CONFIG\t%u\t%d\t%d\t%d\t%d\n", ps->config.flags, ps->config.default_extensibility,
         (int)ps->config.default_nested, (int)cfg->generate_type_info, cfg->generate_typeinfo_typemap != NULL);
  for (const void *n = ps->root; n; n = idl_next(n)) {
    const char *kind = idl_is_struct(n) ? "struct" : idl_is_union(n) ? "union" : idl_is_enum(n) ? "enum" : "other";
    printf("TYPE\t%s\t%s", idl_identifier(n), kind);
    if (cfg->generate_typeinfo_typemap && (idl_is_struct(n) || idl_is_union(n))) {
      tm_t r = {0};
      int rc = cfg->generate_typeinfo_typemap(ps, n, &r);
      printf("\t%d\t", rc);
      if (rc == 0) { hex(r.typeinfo, r.typeinfo_size); printf("\t"); hex(r.typemap, r.typemap_size); }
    }
    printf("\n");
  }
  fflush(stdout);
  return 0;
}
"""

MEMBER_FLAG_BITS = ["TRY_CONSTRUCT1", "TRY_CONSTRUCT2", "IS_EXTERNAL", "IS_OPTIONAL",
                    "IS_MUST_UNDERSTAND", "IS_KEY", "IS_DEFAULT"]
TYPE_FLAG_BITS = ["IS_FINAL", "IS_APPENDABLE", "IS_MUTABLE", "IS_NESTED", "IS_AUTOID_HASH"]
TI_KIND_NAMES = {
    0: "TK_NONE", 1: "TK_BOOLEAN", 2: "TK_BYTE", 3: "TK_INT16", 4: "TK_INT32", 5: "TK_INT64",
    6: "TK_UINT16", 7: "TK_UINT32", 8: "TK_UINT64", 9: "TK_FLOAT32", 10: "TK_FLOAT64",
    11: "TK_FLOAT128", 12: "TK_INT8", 13: "TK_UINT8", 16: "TK_CHAR8", 17: "TK_CHAR16",
    112: "TI_STRING8_SMALL", 113: "TI_STRING8_LARGE", 114: "TI_STRING16_SMALL",
    115: "TI_STRING16_LARGE", 128: "TI_PLAIN_SEQUENCE_SMALL", 129: "TI_PLAIN_SEQUENCE_LARGE",
    144: "TI_PLAIN_ARRAY_SMALL", 145: "TI_PLAIN_ARRAY_LARGE", 160: "TI_PLAIN_MAP_SMALL",
    161: "TI_PLAIN_MAP_LARGE", 176: "TI_STRONGLY_CONNECTED_COMPONENT",
    241: "EK_MINIMAL", 242: "EK_COMPLETE",
}
TYPE_KIND_NAMES = {0x51: "TK_STRUCTURE", 0x52: "TK_UNION", 0x40: "TK_ENUM", 0x41: "TK_BITMASK",
                   0x30: "TK_ALIAS", 0x60: "TK_SEQUENCE", 0x61: "TK_ARRAY", 0x62: "TK_MAP",
                   0x53: "TK_BITSET", 0x50: "TK_ANNOTATION"}


# ----------------------------------------------------------------------------- helpers

def ser(obj) -> bytes:
    """XCDR2 little-endian, encapsulation header stripped (as Cyclone does for type meta)."""
    return obj.serialize(endianness=Endianness.Little, use_version_2=True)[4:]


def deser(cls, data: bytes):
    buf = Buffer(data, align_offset=0)
    buf.set_endianness(Endianness.Little)
    return cls.deserialize(buf, has_header=False, use_version_2=True)


def bits(flagobj, names):
    v = 0
    for i, n in enumerate(names):
        if getattr(flagobj, n):
            v |= 1 << i
    return v, [n for n in names if getattr(flagobj, n)]


def tid_key(tid) -> str:
    return ser(tid).hex()


def tid_json(tid) -> dict:
    d = tid.discriminator
    out = {"discriminator": d, "kind": TI_KIND_NAMES.get(d, "?"), "hex": ser(tid).hex()}
    if d in (xt.EK_MINIMAL, xt.EK_COMPLETE):
        out["hash"] = bytes(tid.value).hex()
    elif tid.value is not None:
        out["repr"] = repr(tid.value)
    return out


def flags_json(flagobj, names):
    v, n = bits(flagobj, names)
    return {"value": v, "names": n}


def summarize(to) -> dict:
    """Compact, human-readable summary of a (minimal or complete) TypeObject."""
    ek = to.discriminator
    inner = to.value            # MinimalTypeObject / CompleteTypeObject (union on TypeKind)
    tk = inner.discriminator
    body = inner.value
    complete = ek == xt.EK_COMPLETE
    s = {"equivalence_kind": "EK_COMPLETE" if complete else "EK_MINIMAL",
         "type_kind": tk, "type_kind_name": TYPE_KIND_NAMES.get(tk, "?")}

    def member_name(detail):
        return {"name": detail.name} if complete else {"name_hash": bytes(detail.name_hash).hex()}

    if tk == xt.TK_STRUCTURE:
        s["flags"] = flags_json(body.struct_flags, TYPE_FLAG_BITS)
        if complete:
            s["type_name"] = body.header.detail.type_name
        s["base_type"] = tid_json(body.header.base_type)
        s["members"] = [dict(member_id=m.common.member_id,
                             member_flags=flags_json(m.common.member_flags, MEMBER_FLAG_BITS),
                             **member_name(m.detail),
                             type_id=tid_json(m.common.member_type_id))
                        for m in body.member_seq]
    elif tk == xt.TK_UNION:
        s["flags"] = flags_json(body.union_flags, TYPE_FLAG_BITS)
        if complete:
            s["type_name"] = body.header.detail.type_name
        s["discriminator"] = {"member_flags": flags_json(body.discriminator.common.member_flags, MEMBER_FLAG_BITS),
                              "type_id": tid_json(body.discriminator.common.type_id)}
        s["members"] = [dict(member_id=m.common.member_id,
                             member_flags=flags_json(m.common.member_flags, MEMBER_FLAG_BITS),
                             labels=list(m.common.label_seq),
                             **member_name(m.detail),
                             type_id=tid_json(m.common.type_id))
                        for m in body.member_seq]
    elif tk == xt.TK_ENUM:
        s["flags"] = flags_json(body.enum_flags, TYPE_FLAG_BITS)
        s["bit_bound"] = body.header.common.bit_bound
        if complete:
            s["type_name"] = body.header.detail.type_name
        s["literals"] = [dict(value=l.common.value,
                              flags=flags_json(l.common.flags, MEMBER_FLAG_BITS),
                              **member_name(l.detail))
                         for l in body.literal_seq]
    return s


# ----------------------------------------------------------------------------- C path

def patch_idlc(src: Path, dst: Path) -> str:
    """Copy idlc, making writable the PT_LOAD segment(s) that share a page with .dynamic."""
    b = bytearray(src.read_bytes())
    assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "expected ELF64 LE"
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    phdrs = []
    for i in range(phnum):
        o = phoff + i * phentsize
        phdrs.append((o,) + struct.unpack_from("<IIQQQQQQ", b, o))
    dyn = [p for p in phdrs if p[1] == 2][0]
    dyn_lo, dyn_hi = dyn[4], dyn[4] + dyn[7]
    notes = []
    for o, typ, flg, off, va, pa, fs, ms, al in phdrs:
        if typ == 1 and not flg & 2 and (va & ~0xFFF) < dyn_hi and dyn_lo < va + ms:
            struct.pack_into("<I", b, o + 4, flg | 2)
            notes.append(f"PT_LOAD vaddr {va:#x} flags {flg:#x} -> {flg | 2:#x}")
    dst.write_bytes(bytes(b))
    dst.chmod(0o755)
    return "; ".join(notes) if notes else "no patch needed"


def idlc_env():
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join([str(LIBDIR)] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    return env


def run_c(tmp: Path, idlc: Path, extra_args):
    plugin = tmp / "libxtvgen.so"
    if not plugin.exists():
        (tmp / "xtvgen.c").write_text(PLUGIN_C)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(plugin), str(tmp / "xtvgen.c")], check=True)
    work = tmp / ("c" + "".join(a.replace("-", "_") for a in extra_args))
    work.mkdir()
    shutil.copy(IDL, work / "types.idl")
    p = subprocess.run([str(idlc), *extra_args, "-l", str(plugin), "types.idl"], cwd=work,
                       env=idlc_env(), capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"idlc failed ({p.returncode}): {p.stderr}")
    config, types = None, []
    for line in p.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "CONFIG":
            config = dict(pstate_flags=int(f[1]), default_extensibility=int(f[2]),
                          default_nested=bool(int(f[3])), generate_type_info=bool(int(f[4])),
                          generate_typeinfo_typemap_set=bool(int(f[5])))
        elif f[0] == "TYPE":
            t = {"name": f[1], "kind": f[2]}
            if len(f) > 3:
                t["rc"] = int(f[3])
                if t["rc"] == 0:
                    t["typeinfo"] = bytes.fromhex(f[4])
                    t["typemap"] = bytes.fromhex(f[5])
            types.append(t)
    return config, types, p.stderr.strip()


def idlc_version(idlc: Path) -> str:
    # (-v also tries to load the default "c" generator, which the wheel lacks: keep line 1)
    p = subprocess.run([str(idlc), "-v"], env=idlc_env(), capture_output=True, text=True)
    return [l for l in (p.stdout + p.stderr).splitlines() if l.startswith("idlc")][0].strip()


# ----------------------------------------------------------------------------- libddsc (SEDP)

class _OStream(ctypes.Structure):
    _fields_ = [("m_buffer", ctypes.c_void_p), ("m_size", ctypes.c_uint32),
                ("m_index", ctypes.c_uint32), ("m_xcdr_version", ctypes.c_uint32)]


class _TopicDescPrefix(ctypes.Structure):
    _fields_ = [("m_size", ctypes.c_uint32), ("m_align", ctypes.c_uint32),
                ("m_flagset", ctypes.c_uint32), ("m_nkeys", ctypes.c_uint32),
                ("m_typename", ctypes.c_char_p), ("m_keys", ctypes.c_void_p),
                ("m_nops", ctypes.c_uint32), ("m_ops", ctypes.c_void_p)]


class Ddsc:
    DDSRT_BOSEL_LE = 2
    DDSI_RTPS_CDR_ENC_VERSION_2 = 2

    def __init__(self):
        self.lib = lib = ctypes.CDLL(str(LIBDDSC))
        lib.ddsi_typeinfo_deser.restype = ctypes.c_void_p
        lib.ddsi_typeinfo_deser.argtypes = [ctypes.c_char_p, ctypes.c_uint32]
        lib.ddsi_typemap_deser.restype = ctypes.c_void_p
        lib.ddsi_typemap_deser.argtypes = [ctypes.c_char_p, ctypes.c_uint32]
        lib.ddsi_typeinfo_free.argtypes = [ctypes.c_void_p]
        lib.ddsi_typeinfo_dup.restype = ctypes.c_void_p
        lib.ddsi_typeinfo_dup.argtypes = [ctypes.c_void_p]
        lib.dds_stream_write_with_byte_order.restype = ctypes.c_void_p
        lib.dds_stream_write_with_byte_order.argtypes = [ctypes.POINTER(_OStream), ctypes.c_void_p, ctypes.c_void_p,
                                                         ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.dds_ostream_fini.argtypes = [ctypes.POINTER(_OStream), ctypes.c_void_p]
        self.alloc = ctypes.addressof(ctypes.c_char.in_dll(lib, "dds_cdrstream_default_allocator"))
        self.ti_ops = _TopicDescPrefix.in_dll(lib, "DDS_XTypes_TypeInformation_desc").m_ops
        self.tm_ops = _TopicDescPrefix.in_dll(lib, "DDS_XTypes_TypeMapping_desc").m_ops

    def _write(self, obj, ops) -> bytes:
        os_ = _OStream(None, 0, 0, self.DDSI_RTPS_CDR_ENC_VERSION_2)
        r = self.lib.dds_stream_write_with_byte_order(ctypes.byref(os_), self.alloc, None, obj, ops, self.DDSRT_BOSEL_LE)
        if not r:
            raise RuntimeError("dds_stream_write_with_byte_order failed")
        data = ctypes.string_at(os_.m_buffer, os_.m_index)
        self.lib.dds_ostream_fini(ctypes.byref(os_), self.alloc)
        return data

    def typeinfo_roundtrip(self, data: bytes, dup: bool) -> bytes:
        """deser (sertype) [-> ddsi_typeinfo_dup (xqos copy)] -> ser (plist), all libddsc code."""
        ti = self.lib.ddsi_typeinfo_deser(data, len(data))
        if not ti:
            raise RuntimeError("ddsi_typeinfo_deser failed")
        if dup:
            ti2 = self.lib.ddsi_typeinfo_dup(ti)
            self.lib.ddsi_typeinfo_free(ti)
            ti = ti2
        out = self._write(ti, self.ti_ops)
        self.lib.ddsi_typeinfo_free(ti)
        return out

    def typemap_roundtrip(self, data: bytes) -> bytes:
        tm = self.lib.ddsi_typemap_deser(data, len(data))
        if not tm:
            raise RuntimeError("ddsi_typemap_deser failed")
        return self._write(tm, self.tm_ops)  # (small leak: process is short-lived)


# ----------------------------------------------------------------------------- Python path

def run_py(tmp: Path, idlc: Path):
    work = tmp / "py"
    work.mkdir()
    shutil.copy(IDL, work / "xtv_types.idl")  # not "types.idl": a types.py would shadow stdlib `types`
    p = subprocess.run([str(idlc), "-l", str(IDLPY), "xtv_types.idl"], cwd=work, env=idlc_env(),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"idlc -l py failed ({p.returncode}): {p.stderr}")
    src = work / "xtv_types.py"
    spec = importlib.util.spec_from_file_location("xtv_types", src)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["xtv_types"] = mod
    spec.loader.exec_module(mod)
    return mod, src.read_text()


# ----------------------------------------------------------------------------- main

def idl_lines():
    out = {}
    for line in IDL.read_text().splitlines():
        words = line.replace("{", " ").split()
        for kw in ("struct", "union", "enum"):
            if kw in words:
                out[words[words.index(kw) + 1]] = line.strip()
    return out


def typeobject_entries(tm_c, which):
    """{typeid-hex: TypeObject} for 'minimal' or 'complete' from a deserialized TypeMapping."""
    pairs = tm_c.identifier_object_pair_minimal if which == "minimal" else tm_c.identifier_object_pair_complete
    return [(p.type_identifier, p.type_object) for p in pairs]


def describe_to(tid, to, size_expected, checks):
    raw = ser(to)
    h = hashlib.md5(raw).digest()[:14]
    ok_size = len(raw) == size_expected if size_expected is not None else None
    ok_hash = (bytes(tid.value) == h) if tid.discriminator in (xt.EK_MINIMAL, xt.EK_COMPLETE) else None
    if ok_size is False or ok_hash is False:
        checks.append(f"TypeObject for {tid_key(tid)}: size_ok={ok_size} hash_ok={ok_hash}")
    return {
        "type_identifier": tid_json(tid),
        "typeobject_serialized_size": len(raw),
        "type_object_hex": raw.hex(),
        "md5_of_type_object": hashlib.md5(raw).hexdigest(),
        "check_size_matches_typeinformation": ok_size,
        "check_md5_prefix_matches_hash": ok_hash,
        "summary": summarize(to),
        "dump": repr(to),
    }


def build_sides(ti_c, tm_c, checks):
    """minimal/complete sections: top-level + dependencies (with TypeObjects from the mapping)."""
    names_by_complete = {}
    for tid, to in typeobject_entries(tm_c, "complete"):
        s = summarize(to)
        names_by_complete[tid_key(tid)] = s.get("type_name")
    min_to_names = {}
    for pair in tm_c.identifier_complete_minimal:
        min_to_names.setdefault(tid_key(pair.type_identifier2), []).append(
            names_by_complete.get(tid_key(pair.type_identifier1)))
    sides = {}
    for which in ("minimal", "complete"):
        objs = {tid_key(t): (t, o) for t, o in typeobject_entries(tm_c, which)}
        w = getattr(ti_c, which)
        top = w.typeid_with_size
        t, o = objs[tid_key(top.type_id)]
        entry = describe_to(t, o, top.typeobject_serialized_size, checks)
        deps = []
        for d in w.dependent_typeids:
            k = tid_key(d.type_id)
            if k in objs:
                dd = describe_to(objs[k][0], objs[k][1], d.typeobject_serialized_size, checks)
            else:
                dd = {"type_identifier": tid_json(d.type_id), "type_object_hex": None}
                checks.append(f"dependency {k} has no TypeObject in the TypeMapping")
            dd["typeobject_serialized_size_in_typeinformation"] = d.typeobject_serialized_size
            nm = names_by_complete.get(k) if which == "complete" else min_to_names.get(k)
            dd = {"type_name": nm if which == "complete" else sorted(n for n in (nm or []) if n), **dd}
            deps.append(dd)
        entry["dependent_typeid_count"] = w.dependent_typeid_count
        entry["dependent_typeids"] = deps
        sides[which] = entry
    return sides


def compare_py(name, cls, c_ti_bytes, c_tm_bytes, tm_c, ddsc):
    out = {}
    try:
        pti, ptm = XTBuilder.process_type(cls)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    pti_b, ptm_b = ser(pti), ser(ptm)
    out["type_information_equal"] = pti_b == c_ti_bytes if c_ti_bytes is not None else None
    out["type_mapping_equal"] = ptm_b == c_tm_bytes if c_tm_bytes is not None else None
    if out["type_information_equal"] is not True:
        out["type_information_hex"] = pti_b.hex()
        out["type_information_sedp_hex"] = ddsc.typeinfo_roundtrip(pti_b, dup=True).hex()
        out["type_information_dump"] = repr(pti)
    if out["type_mapping_equal"] is not True:
        out["type_mapping_hex"] = ptm_b.hex()
        if tm_c is not None:
            diffs = []
            for which in ("minimal", "complete"):
                c_objs = {tid_key(t): o for t, o in typeobject_entries(tm_c, which)}
                p_objs = {tid_key(t): o for t, o in typeobject_entries(ptm, which)}
                for k in sorted(set(c_objs) | set(p_objs)):
                    if k in c_objs and k in p_objs:
                        if ser(c_objs[k]) != ser(p_objs[k]):
                            diffs.append({"kind": which, "typeid": k, "problem": "same id, different object"})
                    else:
                        o = c_objs.get(k) or p_objs.get(k)
                        diffs.append({"kind": which, "typeid": k,
                                      "only_in": "C" if k in c_objs else "python",
                                      "summary": summarize(o), "type_object_hex": ser(o).hex()})
            out["typeobject_differences"] = diffs
            out["mapping_order_or_content"] = ("same TypeObjects, different order/duplicates"
                                               if not diffs else "TypeObjects differ")
    return out


def main():
    idl_text = IDL.read_text()
    decl = idl_lines()
    ddsc = Ddsc()
    with tempfile.TemporaryDirectory(prefix="xtypes-vectors-") as tmpd:
        tmp = Path(tmpd)
        idlc = tmp / "idlc"
        patch_note = patch_idlc(IDLC, idlc)
        version = idlc_version(idlc)
        config, c_types, c_stderr = run_c(tmp, idlc, [])
        config_xf, c_types_xf, _ = run_c(tmp, idlc, ["-x", "final"])
        xfinal_same = ([(t["name"], t.get("typeinfo"), t.get("typemap")) for t in c_types]
                       == [(t["name"], t.get("typeinfo"), t.get("typemap")) for t in c_types_xf])
        pymod, py_src = run_py(tmp, idlc)

    checks = []
    types_out = []
    c_by_name = {t["name"]: t for t in c_types}
    all_complete_objs = {}   # name -> (tid, to) from all C typemaps, for types without their own
    all_minimal_objs = {}
    for t in c_types:
        if "typemap" in t:
            tm = deser(xt.TypeMapping, t["typemap"])
            cm = {tid_key(p.type_identifier1): p.type_identifier2 for p in tm.identifier_complete_minimal}
            mins = {tid_key(a): (a, b) for a, b in typeobject_entries(tm, "minimal")}
            for tid, to in typeobject_entries(tm, "complete"):
                n = summarize(to).get("type_name")
                all_complete_objs.setdefault(n, (tid, to, t["name"]))
                mk = tid_key(cm[tid_key(tid)])
                all_minimal_objs.setdefault(n, mins[mk] + (t["name"],))

    for t in c_types:
        name = t["name"]
        e = {"name": name, "kind": t["kind"], "idl": decl.get(name)}
        cls = getattr(pymod, name, None)
        if "typeinfo" in t:
            ti_b, tm_b = t["typeinfo"], t["typemap"]
            ti_c, tm_c = deser(xt.TypeInformation, ti_b), deser(xt.TypeMapping, tm_b)
            rt = ddsc.typeinfo_roundtrip(ti_b, dup=False)
            sedp = ddsc.typeinfo_roundtrip(ti_b, dup=True)
            tmrt = ddsc.typemap_roundtrip(tm_b)
            pad = (-len(sedp)) % 4
            sedp_ti = deser(xt.TypeInformation, sedp)
            expect = deser(xt.TypeInformation, ti_b)
            expect.minimal.typeid_with_size.typeobject_serialized_size = 0
            expect.complete.typeid_with_size.typeobject_serialized_size = 0
            if rt != ti_b:
                checks.append(f"{name}: libddsc TypeInformation round trip differs from idlc bytes")
            if ser(sedp_ti) != ser(expect) or sedp != ser(expect):
                checks.append(f"{name}: SEDP form differs from descriptor form by more than the top-level sizes")
            if tmrt != tm_b:
                checks.append(f"{name}: libddsc TypeMapping round trip differs from idlc bytes")
            if ser(ti_c) != ti_b or ser(tm_c) != tm_b:
                checks.append(f"{name}: Python re-serialization of the C bytes differs")
            e["source"] = "idlc C path (generate_type_meta_ser), libcycloneddsidl 11.0.1"
            e["type_information"] = {
                "sedp_hex": (sedp + b"\0" * pad).hex(),
                "sedp_parameter_length": len(sedp) + pad,
                "sedp_note": ("PID_TYPE_INFORMATION value as sent: descriptor_hex with the two top-level "
                              "typeobject_serialized_size fields = 0 (ddsi_typeinfo_dup in xqos copy)"),
                "sedp_dump": repr(sedp_ti),
                "descriptor_hex": ti_b.hex(),
                "descriptor_size": len(ti_b),
                "check_sedp_equals_descriptor_with_toplevel_sizes_zeroed": sedp == ser(expect),
                "check_libddsc_roundtrip_without_dup_equal": rt == ti_b,
                "check_python_reserialize_equal": ser(ti_c) == ti_b,
                "descriptor_dump": repr(ti_c),
            }
            e["type_mapping"] = {
                "hex": tm_b.hex(),
                "size": len(tm_b),
                "check_libddsc_roundtrip_equal": tmrt == tm_b,
                "check_python_reserialize_equal": ser(tm_c) == tm_b,
            }
            e.update(build_sides(ti_c, tm_c, checks))
            e["python_xtbuilder"] = compare_py(name, cls, ti_b, tm_b, tm_c, ddsc) if cls else {"error": "class not generated"}
        else:
            # enum (not a topic type: idlc generates no descriptor / TypeInformation for it).
            e["source"] = ("idlc C path: TypeObjects taken from the TypeMapping of "
                           f"{all_complete_objs.get(name, (None, None, None))[2]}; no TypeInformation "
                           "(idlc only makes TypeInformation for topic types: structs and unions)")
            e["type_information"] = None
            e["type_mapping"] = None
            if name in all_complete_objs:
                tid, to, _ = all_complete_objs[name]
                mtid, mto, _ = all_minimal_objs[name]
                e["minimal"] = describe_to(mtid, mto, None, checks)
                e["complete"] = describe_to(tid, to, None, checks)
                for side in ("minimal", "complete"):
                    e[side]["dependent_typeids"] = []
            py = {}
            if cls is not None:
                try:
                    pti, ptm = XTBuilder.process_type(cls)
                    py["type_information_hex"] = ser(pti).hex()
                    py["type_mapping_hex"] = ser(ptm).hex()
                    py["type_information_dump"] = repr(pti)
                    if name in all_complete_objs:
                        py["minimal_typeid_equal_to_C"] = (tid_key(pti.minimal.typeid_with_size.type_id)
                                                          == tid_key(all_minimal_objs[name][0]))
                        py["complete_typeid_equal_to_C"] = (tid_key(pti.complete.typeid_with_size.type_id)
                                                           == tid_key(all_complete_objs[name][0]))
                except Exception as ex:  # noqa: BLE001
                    py["error"] = f"{type(ex).__name__}: {ex}"
            e["python_xtbuilder"] = py
        types_out.append(e)

    py_diff = [e["name"] for e in types_out
               if e["type_information"] is not None and
               not (e["python_xtbuilder"].get("type_information_equal") and e["python_xtbuilder"].get("type_mapping_equal"))]
    doc = {
        "generator": "interop/xtypes-vectors/generate.py",
        "cyclonedds": {
            "python_package": importlib.metadata.version("cyclonedds"),
            "idlc_version": version,
            "libddsc": LIBDDSC.name,
            "idlc_patch": patch_note,
            "idlc_pstate_config": config,
            "idlc_stderr": c_stderr,
            "idlc_x_final_gives_identical_bytes": xfinal_same,
        },
        "idl_file": "interop/cdr-vectors/types.idl",
        "idl_sha256": hashlib.sha256(idl_text.encode()).hexdigest(),
        "encoding": ("all hex is XCDR2 little endian without encapsulation header "
                     "(TypeInformation, TypeMapping, TypeObject, TypeIdentifier)"),
        "summary": {
            "types": len(types_out),
            "with_type_information": sum(1 for e in types_out if e["type_information"] is not None),
            "python_xtbuilder_differs_from_C": py_diff,
            "failed_checks": checks,
        },
        "types": types_out,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT} ({len(types_out)} types); python differs: {py_diff or 'none'}; "
          f"failed checks: {len(checks)}")
    for c in checks:
        print("  CHECK FAILED:", c)


if __name__ == "__main__":
    main()
