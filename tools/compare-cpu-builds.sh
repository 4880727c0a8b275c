#!/usr/bin/env bash
# Evidence for the CPU solver's CrossPlatform claim: builds one physics scene's headless run with
# `-C target-cpu=x86-64` (SSE2 only) and `-C target-cpu=native` (AVX2/FMA where the machine has
# them), each at opt-level 0 and 3, runs all four, and compares every tick's state hash.
#
# Usage: tools/compare-cpu-builds.sh [ticks]   (default 300; each build needs its own bevy build,
# several minutes on two cores)
set -euo pipefail
cd "$(dirname "$0")/.."
ticks="${1:-300}"
out="target/cpu-builds"
mkdir -p "$out"

for cpu in x86-64 native; do
  for opt in 0 3; do
    name="$cpu-O$opt"
    echo "building $name" >&2
    CARGO_TARGET_DIR="target/cpu-build-$name" RUSTFLAGS="-C target-cpu=$cpu" \
      cargo build --quiet --example cpu_scene_bits \
        --config "profile.dev.opt-level=$opt" \
        --config "profile.dev.package.\"*\".opt-level=$opt"
    "target/cpu-build-$name/debug/examples/cpu_scene_bits" "$ticks" > "$out/$name.txt"
    echo "$name: $(tail -n 1 "$out/$name.txt")" >&2
  done
done

reference="$out/x86-64-O0.txt"
status=0
for other in "$out"/*.txt; do
  if ! cmp -s "$reference" "$other"; then
    first=$(diff "$reference" "$other" | sed -n '2p')
    echo "DIFFERS: $(basename "$other") from x86-64-O0, first at: $first"
    status=1
  fi
done
[ $status -eq 0 ] && echo "all four builds agree on every tick ($ticks ticks)"
exit $status
