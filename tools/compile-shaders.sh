#!/usr/bin/env bash
# Regenerates the committed SPIR-V of every simulation shader (src/shaders/spirv/<name>.spv, and
# its float-controls variant <name>.float-controls.spv) with
# glslc, using the options the engine's in-process compiler uses (`--target-env=vulkan1.2 -g`, no
# optimisation). Run it after changing any file in src/shaders/; the gpu-tests test
# `committed_spirv_matches_the_shader_sources` fails while the committed words are stale.
#
# Needs glslc (tools/install-system-packages.sh installs it). Usage: tools/compile-shaders.sh
set -euo pipefail

cd "$(dirname "$0")/../src/shaders"
mkdir -p spirv
for shader in *.comp; do
    # Run from src/shaders with the bare file name, so the debug information names the files the
    # way the in-process compiler does.
    glslc --target-env=vulkan1.2 -g -o "spirv/${shader}.spv" "${shader}"
    echo "spirv/${shader}.spv"
    # The CrossPlatform variant: the float-control execution modes of float_controls.glsl.
    glslc --target-env=vulkan1.2 -g -DRUSTING_FLOAT_CONTROLS -o "spirv/${shader}.float-controls.spv" "${shader}"
    echo "spirv/${shader}.float-controls.spv"
done
