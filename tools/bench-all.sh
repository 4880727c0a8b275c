#!/usr/bin/env bash
# Prints every figure of docs/performance.md that is a ratio or a target, in one run on this
# machine: the physics tick against rapier (and the two-thread speedup), how a tick grows with the
# number of bodies, the world-state hash against a plain copy, snapshots and restores, sim_math
# against the hardware, and replays.
#
# Usage: tools/bench-all.sh
# Builds everything in release first (the rapier bench is its own workspace and shares this
# one's target directory), so the timed runs do not compete with a compiler. Each figure comes
# from one process in which both sides of the ratio ran under the same conditions.
set -euo pipefail
cd "$(dirname "$0")/.."

rapier=(--release --locked --manifest-path benches/rapier/Cargo.toml --target-dir target)
echo "building the benchmarks..." >&2
cargo build --quiet "${rapier[@]}"
cargo bench --quiet --no-run --bench state_hash --bench snapshot --bench sim_math --bench replay \
  --bench rollback --bench jobs --bench scaling 2>/dev/null

section() {
  echo
  echo "== $1"
  echo "   ($2)"
}

section "Physics tick against rapier 0.36" "docs/performance.md, 'The CPU solver against rapier', 'Joints against rapier', 'Queries, ...'"
target/release/rusting_rapier_bench

section "How cost grows" "'How cost grows' (the GPU rows take minutes on lavapipe)"
cargo bench --quiet --bench scaling

section "World-state hash against a plain copy" "'The world-state hash'"
cargo bench --quiet --bench state_hash

section "Snapshots and restores" "'Snapshots and seeking'"
cargo bench --quiet --bench snapshot

section "Rolling back" "'Rolling back'"
cargo bench --quiet --bench rollback

section "Deadline jobs" "'Deadline jobs'"
cargo bench --quiet --bench jobs

section "sim_math against the hardware" "'sim_math against the hardware'"
cargo bench --quiet --bench sim_math

section "Replays" "'Replays'"
cargo bench --quiet --bench replay
