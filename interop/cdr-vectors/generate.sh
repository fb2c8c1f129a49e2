#!/usr/bin/env bash
# Regenerate interop/cdr-vectors/vectors.json from Cyclone DDS itself.
#
# Needs: Debian packages cyclonedds-dev (idlc, headers, libddsc 0.10.2), gcc, pkg-config,
#        python3, util-linux `unshare` + iproute2 `ip` (root or user namespaces), and a venv with
#        the PyPI `cyclonedds` package (created on first use at $CYCLONE_VENV, default
#        ~/.cache/tachyon/venv-cyclone; the cross-check can be skipped with SKIP_PYCHECK=1, which
#        leaves "python_check": "not checked" in the output).
# The build happens in a temporary directory; only vectors.json is written here.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CYCLONE_VENV="${CYCLONE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tachyon/venv-cyclone}"
PY_CYCLONEDDS_VERSION="${PY_CYCLONEDDS_VERSION:-11.0.1}"
BUILD="$(mktemp -d "${TMPDIR:-/tmp}/cdr-vectors.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT

"$HERE/../../scripts/ensure-packages.sh" cyclonedds-dev gcc pkg-config python3 python3-venv \
    util-linux iproute2

IDLC_VERSION="$(dpkg-query -W -f '${Version}' cyclonedds-dev 2>/dev/null || echo unknown)"
echo "cyclonedds-dev $IDLC_VERSION; building in $BUILD" >&2

# 1. idlc -> C type support
( cd "$BUILD" && idlc "$HERE/types.idl" ) 2>&1 | grep -v "No default extensibility" >&2 || true
test -f "$BUILD/types.c"

# 2. build the generator against Debian's libddsc (pkg-config supplies -DDDS_NDEBUG,
#    which changes the layout of struct ddsi_serdata_default)
gcc -O2 -Wall -I"$BUILD" $(pkg-config --cflags CycloneDDS) -o "$BUILD/gen" \
    "$HERE/gen.c" "$BUILD/types.c" $(pkg-config --libs CycloneDDS)

# 3. run it inside a private network namespace (a participant is created; nothing may
#    leave the machine)
unshare -n bash -c 'ip link set lo up; exec "$0"' "$BUILD/gen" > "$BUILD/gen.tsv" \
    2> >(grep -v "not multicast-capable" >&2)

# 4. cross-check with the pure-Python serializer of the PyPI package
if [ "${SKIP_PYCHECK:-0}" = 1 ]; then
  : > "$BUILD/py.tsv"
  PYVER="(not run)"
else
  if [ ! -x "$CYCLONE_VENV/bin/python" ]; then
    python3 -m venv "$CYCLONE_VENV"
    "$CYCLONE_VENV/bin/pip" install -q "cyclonedds==$PY_CYCLONEDDS_VERSION"
  fi
  PYVER="$("$CYCLONE_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("cyclonedds"))')"
  "$CYCLONE_VENV/bin/python" "$HERE/pycheck.py" < "$BUILD/gen.tsv" > "$BUILD/py.tsv"
fi

# 5. assemble
python3 "$HERE/tojson.py" "$BUILD/gen.tsv" "$BUILD/py.tsv" "$PYVER" > "$BUILD/vectors.json"
mv "$BUILD/vectors.json" "$HERE/vectors.json"
echo "wrote $HERE/vectors.json: $(grep -c '"encoding"' "$HERE/vectors.json") vector/unsupported entries" >&2
