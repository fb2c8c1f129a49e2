#!/usr/bin/env bash
# Regenerates the fuzz seeds: CDR encodings of the fuzz type, and RTPS messages and parameter
# lists taken from the committed peer captures.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p tachyon-cdr --example write_fuzz_seeds -- fuzz/corpus/cdr_decode
python3 scripts/fuzz_seeds.py .
