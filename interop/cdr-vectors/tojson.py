"""Assemble vectors.json from gen's TSV output and pycheck.py's TSV output.
Usage: python3 tojson.py gen.tsv py.tsv pyversion > vectors.json   (stdlib only)"""
import json
import sys


def rows(path):
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                yield line.split("\t")


def main():
    gen_tsv, py_tsv, pyver = sys.argv[1], sys.argv[2], sys.argv[3]
    vectors, keyhashes, unsupported, key_payloads, info, errors = [], [], [], [], [], []
    kh = {}
    for f in rows(gen_tsv):
        if f[0] == "V":
            api = f[4].split(":", 1)[1]
            vectors.append({"type": f[1], "sample": f[2], "encoding": f[3], "source": "libddsc",
                            "api": api, "hex": f[5]})
        elif f[0] == "K":
            key = (f[1], f[2], f[3])
            if key not in kh:
                kh[key] = {"type": f[1], "sample": f[2], "source": "libddsc",
                           "serdata_representation": "XCDR" + f[3]}
                keyhashes.append(kh[key])
            if f[4] == "0":
                kh[key]["hex"] = f[5]
            else:
                kh[key]["hex_force_md5"] = f[5]
        elif f[0] == "U":
            unsupported.append({"type": f[1], "encoding": f[2], "why": f[3]})
        elif f[0] == "I":
            if f[2].startswith("key-only serdata"):
                # "key-only serdata (SDK_KEY) for <sample>, XCDR<n>: <hex>"
                head, hexs = f[2].split(": ", 1)
                sample = head.split(" for ", 1)[1].split(",", 1)[0]
                rep = head.rsplit(", ", 1)[1]
                key_payloads.append({"type": f[1], "sample": sample, "serdata_representation": rep,
                                     "source": "libddsc", "api": "ddsi_serdata_from_sample(SDK_KEY)+ddsi_serdata_to_ser",
                                     "hex": hexs})
            else:
                info.append({"type": f[1], "info": f[2]})
        elif f[0] == "E":
            errors.append(f[1])
    if errors:
        sys.exit("gen reported internal errors: " + "; ".join(errors))

    check = {}
    for f in rows(py_tsv):
        if f[0] == "C":
            check[(f[1], f[2], f[3])] = (f[4], f[5])
    for v in vectors:
        r = check.get((v["type"], v["sample"], v["encoding"]))
        if r is None:
            v["python_check"] = "not checked"
        else:
            v["python_check"] = r[0] + (": " + r[1] if r[1] else "")

    out = {
        "generator": "interop/cdr-vectors/generate.sh",
        "peer": "Cyclone DDS 0.10.2 (Debian libddsc) + cyclonedds %s (PyPI, pure-Python serializer, used only to cross-check LE and BE)" % pyver,
        "vectors": vectors,
        "keyhashes": keyhashes,
        "unsupported": unsupported,
        "key_payloads": key_payloads,
        "info": info,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
