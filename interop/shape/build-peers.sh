#!/usr/bin/env bash
# Builds the other vendors' shape_main of the OMG DDS-RTPS interoperability suite from a
# checkout of github.com/omg-dds/dds-rtps (not part of this project) into OUTDIR
# (default target/shape):
#   cyclone_shape_main  srcC/shape_main.c against Debian's Cyclone DDS 0.10 (cyclonedds-dev),
#                       plus cyclone_compat.c: dds_take_next_instance / dds_read_next_instance,
#                       which 0.10 lacks
#   fastdds_shape_main  srcCxx/shape_main.cxx against Debian's Fast DDS 2.9 (libfastrtps-dev,
#                       libfastcdr-dev), with fastdds/GeneratedCode (ShapeType's type support,
#                       hand-written as fastddsgen 2.x generates it: Debian has no fastddsgen)
#                       and fastdds29_compat.hpp (RETCODE_OK). One edit is made to the copy of
#                       shape_main.cxx built here: Fast DDS 2.9 keeps a reader's
#                       DATA_REPRESENTATION in `type_consistency().representation`, not in
#                       `representation()` as 3.x does.
# Tachyon's is `cargo build --release -p tachyon-cli` (target/release/shape_main).
#
#   interop/shape/build-peers.sh DDS_RTPS_DIR [OUTDIR]     (or DDS_RTPS_DIR in the environment)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE="${1:-${DDS_RTPS_DIR:-}}"
OUT="${2:-$HERE/../../target/shape}"
[ -n "$SUITE" ] && [ -f "$SUITE/srcC/shape_main.c" ] && [ -f "$SUITE/srcCxx/shape_main.cxx" ] || {
    echo "usage: $0 DDS_RTPS_DIR [OUTDIR]  (a checkout of https://github.com/omg-dds/dds-rtps)" >&2
    exit 2
}
SUITE="$(cd "$SUITE" && pwd)"
mkdir -p "$OUT/cyclone" "$OUT/fastdds"
OUT="$(cd "$OUT" && pwd)"

"$HERE/../../scripts/ensure-packages.sh" cyclonedds-dev libfastrtps-dev libfastcdr-dev g++ gcc \
    pkg-config

echo "building cyclone_shape_main" >&2
(
    cd "$OUT/cyclone"
    cp "$SUITE/srcC/shape_main.c" "$SUITE/srcC/shape.idl" .
    cp "$SUITE"/srcC/shape_configurator_*.h . 2>/dev/null || true
    idlc -Wno-implicit-extensibility shape.idl
    gcc -O2 -DCYCLONE_DDS -I. -I"$HERE" $(pkg-config --cflags CycloneDDS) \
        -include cyclone_compat.h -o "$OUT/cyclone_shape_main" \
        shape_main.c shape.c "$HERE/cyclone_compat.c" $(pkg-config --libs CycloneDDS) -lm \
        2> build.log || { cat build.log >&2; exit 1; }
)

echo "building fastdds_shape_main" >&2
(
    cd "$OUT/fastdds"
    cp "$SUITE/srcCxx/shape_main.cxx" "$SUITE/srcCxx/shape_configurator_eprosima_fast_dds.h" .
    sed -i 's/dr_qos\.representation()/dr_qos.type_consistency().representation/g' shape_main.cxx
    g++ -O2 -std=c++17 -DEPROSIMA_FAST_DDS=1 -I. -I"$HERE/fastdds" \
        -include fastdds29_compat.hpp -o "$OUT/fastdds_shape_main" shape_main.cxx \
        -lfastrtps -lfastcdr -lpthread 2> build.log || { cat build.log >&2; exit 1; }
)
echo "built $OUT/cyclone_shape_main $OUT/fastdds_shape_main" >&2
