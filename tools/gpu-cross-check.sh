#!/usr/bin/env bash
# Runs the GPU determinism checks on every Vulkan device this machine has and compares each one
# with lavapipe, Mesa's CPU device, which every CI run checks: one verdict line per device at the
# end. Meant for a machine with a real GPU (a discrete NVIDIA or AMD card, an integrated GPU);
# docs/gpu.md keeps the table of the implementations tried.
#
#   tools/gpu-cross-check.sh [OUT_DIR]    (default: target/gpu-cross-check)
#
# For each device (chosen with RUSTING_VULKAN_DEVICE):
#   1. the conformance probe (examples/vulkan_devices.rs): sim_math and a physics scene against
#      the CPU reference's pinned checksums;
#   2. the device tests: sim_math bit for bit, the CPU reference over 300 ticks, the probe's tests,
#      GPU physics; with the Khronos validation layer when it is installed;
#   3. a CrossPlatform project with GPU bodies (the starter with three GPU bodies) through
#      `rusting determinism`, then `rusting run --hashes-out`, and the state-hash report compared
#      with lavapipe's by `rusting hashes diff`.
# Logs go to OUT_DIR/<device>.log. Exits 0 when every device agrees with lavapipe, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="${1:-target/gpu-cross-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
ticks=300

if ! command -v python3 >/dev/null; then
  echo "gpu-cross-check: python3 is needed to write the test project's scene" >&2
  exit 2
fi
validation=0
if ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1; then
  validation=1
fi

echo "building the probe, the GPU tests and the rusting command line (release)..."
cargo build --release --locked --example vulkan_devices || exit 2
cargo build --release --locked -p rusting-cli || exit 2
cargo test --locked --features gpu-tests --no-run --test gpu_sim_math --test gpu_reference \
  --test gpu_conformance --test gpu_physics >/dev/null 2>&1 || exit 2
rusting="$root/target/release/rusting"

mapfile -t devices < <(target/release/examples/vulkan_devices --list)
if [ ${#devices[@]} -eq 0 ]; then
  echo "gpu-cross-check: the Vulkan loader lists no device" >&2
  exit 2
fi
lavapipe=""
for device in "${devices[@]}"; do
  case "$device" in llvmpipe*) lavapipe="$device" ;; esac
done
if [ -z "$lavapipe" ]; then
  echo "gpu-cross-check: lavapipe is not installed (apt-get install mesa-vulkan-drivers); it is" \
    "the reference every device is compared with" >&2
  exit 2
fi

# The test project: the starter, CrossPlatform, with a tipping crate, a rolling ball with a timer
# rule and a falling capsule as GPU bodies (the ones crates/rusting/tests/gpu_project.rs adds).
project="$out/gpu-project"
rm -rf "$project"
"$rusting" new "$project" --engine-path "$root" >/dev/null || exit 2
python3 - "$project" crates/rusting/tests/fixtures/gpu_bodies.json <<'PY'
import json, sys
project = sys.argv[1]
manifest = f"{project}/rusting.json"
settings = json.load(open(manifest))
settings["determinism"] = "CrossPlatform"
json.dump(settings, open(manifest, "w"), indent=2)
scene_path = f"{project}/scenes/main.scene.json"
scene = json.load(open(scene_path))
scene["entities"] += json.load(open(sys.argv[2]))
json.dump(scene, open(scene_path, "w"), indent=2)
PY

# Runs every check on one device; writes its report and log, prints nothing.
check_device() {
  local device="$1" slug="$2"
  local log="$out/$slug.log"
  : >"$log"
  export RUSTING_VULKAN_DEVICE="$device"
  export RUSTING_VULKAN_VALIDATION="$validation"
  target/release/examples/vulkan_devices >>"$log" 2>&1
  echo "probe: $?" >>"$log"
  cargo test --locked --features gpu-tests --test gpu_sim_math --test gpu_reference \
    --test gpu_conformance --test gpu_physics -- --test-threads=1 >>"$log" 2>&1
  echo "tests: $?" >>"$log"
  "$rusting" determinism "$project" --ticks "$ticks" --repeat 1 \
    --target-dir "$root/target" >>"$log" 2>&1
  echo "determinism: $?" >>"$log"
  "$rusting" run "$project" --headless --ticks "$ticks" --hashes-out "$out/$slug.hashes.json" \
    --target-dir "$root/target" >>"$log" 2>&1
  echo "run: $?" >>"$log"
  unset RUSTING_VULKAN_DEVICE RUSTING_VULKAN_VALIDATION
}

slug_of() { echo "$1" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//'; }

for device in "${devices[@]}"; do
  echo "checking $device..."
  check_device "$device" "$(slug_of "$device")"
done

status=0
echo
echo "verdicts ($ticks ticks of a CrossPlatform project with GPU bodies, compared with $lavapipe):"
reference="$out/$(slug_of "$lavapipe").hashes.json"
for device in "${devices[@]}"; do
  slug="$(slug_of "$device")"
  log="$out/$slug.log"
  failed=()
  for part in probe tests determinism run; do
    grep -q "^$part: 0$" "$log" || failed+=("$part")
  done
  if [ "$device" != "$lavapipe" ] && [ -f "$out/$slug.hashes.json" ] && [ -f "$reference" ]; then
    if ! "$rusting" hashes diff "$reference" "$out/$slug.hashes.json" >"$out/$slug.diff.txt" 2>&1; then
      failed+=("hashes differ from lavapipe's: $(head -n 1 "$out/$slug.diff.txt")")
    fi
  fi
  if [ ${#failed[@]} -eq 0 ]; then
    echo "  AGREES   $device: probe, device tests, determinism and every tick's CPU and GPU hash"
  else
    status=1
    echo "  DIFFERS  $device: $(IFS=';'; echo "${failed[*]}") (see $log)"
  fi
done
exit $status
