#!/usr/bin/env bash
# Evidence for the CPU solver's CrossPlatform claim on one machine: builds the GPU-free physics
# scenes (examples/physics_scenes.rs) with `-C target-cpu=x86-64` (SSE2 only) and
# `-C target-cpu=native` (AVX2/FMA/AVX-512 where the machine has them), each at opt-level 0 and 3,
# runs all four, and compares their state-hash reports tick by tick with `rusting hashes diff`
# (each build is a directory of reports, as a machine is in the CI matrix).
#
# Usage: tools/compare-cpu-builds.sh [ticks]   (default 300, at most 600; each build needs its own
# bevy build, several minutes on two cores)
set -euo pipefail
cd "$(dirname "$0")/.."
ticks="${1:-300}"
out="target/cpu-builds"
rm -rf "$out"
mkdir -p "$out"

for cpu in x86-64 native; do
  for opt in 0 3; do
    name="$cpu-O$opt"
    echo "building $name" >&2
    CARGO_TARGET_DIR="target/cpu-build-$name" RUSTFLAGS="-C target-cpu=$cpu" \
      cargo build --quiet --locked --example physics_scenes \
        --config "profile.dev.opt-level=$opt" \
        --config "profile.dev.package.\"*\".opt-level=$opt"
    mkdir -p "$out/$name"
    "target/cpu-build-$name/debug/examples/physics_scenes" "$out/$name" "$ticks" >&2
  done
done

cargo run --quiet --locked -p rusting-cli -- hashes diff --reference "$out/x86-64-O0" \
  "$out/x86-64-O0" "$out/x86-64-O3" "$out/native-O0" "$out/native-O3"
