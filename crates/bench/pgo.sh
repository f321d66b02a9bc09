#!/usr/bin/env bash
# Profile-guided release builds of careers-api and the floor (DECISIONS 53).
#
#   crates/bench/pgo.sh                                    # builds target/pgo/release/*
#   python3 crates/bench/run.py --target-dir target/pgo/release
#
# 1. builds the workspace instrumented (target/pgo-gen), 2. runs the load benchmark's scenarios
# on both backend pairs with it (the training: a few seconds each), 3. merges the profiles,
# 4. builds the workspace again with them (target/pgo). Both the service and the floor are
# built the same way, so that the benchmark's ratios still compare code. The ordinary
# `cargo build --release` is untouched.
#
# Needs llvm-profdata of the LLVM that rustc uses (`rustc -vV`, "LLVM version"): on Debian the
# package llvm-NN of that major version (apt.llvm.org); or set LLVM_PROFDATA. Two full release
# builds: about 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=${LLVM_PROFDATA:-/usr/lib/llvm-$major/bin/llvm-profdata}
if ! "$profdata" --version >/dev/null 2>&1; then
  echo "llvm-profdata for LLVM $major not found (install llvm-$major or set LLVM_PROFDATA)" >&2
  exit 1
fi

data="$PWD/target/pgo-data"
rm -rf "$data"
mkdir -p "$data"

echo "== instrumented build (target/pgo-gen)"
RUSTFLAGS="-Cprofile-generate=$data" cargo build --release --workspace --target-dir target/pgo-gen

echo "== training: the load benchmark's scenarios, both pairs"
python3 crates/bench/run.py --target-dir target/pgo-gen/release --duration 3 --repeat 1 >/dev/null

echo "== merging $(find "$data" -name '*.profraw' | wc -l) profiles"
"$profdata" merge -o "$data/merged.profdata" "$data"

echo "== optimised build (target/pgo)"
RUSTFLAGS="-Cprofile-use=$data/merged.profdata" cargo build --release --workspace --target-dir target/pgo

echo "built target/pgo/release/careers-api and target/pgo/release/floor"
