#!/usr/bin/env bash
# Installs what building and testing Rusting needs on a fresh Debian or Ubuntu machine.
#
# The Rust toolchain itself is pinned by rust-toolchain.toml (1.95.0 with rustfmt and clippy);
# rustup installs it on the first cargo call. This script adds the system packages on top.
set -euo pipefail

# System packages the build and the tests need. bevy is built with a minimal feature set (no
# window, audio or gamepad backends), so a C compiler and pkg-config cover it.
#
# The GPU tests (`--features gpu-tests`) add Mesa's lavapipe (a Vulkan device on the CPU, with
# the Vulkan loader), shaderc's static libraries with glslang and SPIRV-Tools (linked by build.rs),
# glslc and the SPIR-V tools, and g++ for linking the C++ archives. cmake is left out on purpose:
# without it, a shaderc set-up that cannot find the system libraries fails at once instead of
# building shaderc from source for half an hour. The default build needs none of these.
#
# Playing in a window (`--features window`, the window tests) needs no development headers: the
# engine's window is X11 only, and winit opens X11, XCursor, XRandR, XInput and xkbcommon at run
# time, so their runtime libraries are listed. The window tests run under Xvfb (`xvfb-run`,
# which needs xauth) and type into the window with xdotool; the renderer draws on lavapipe.
# chromium renders the HTML reports in their test, and brings Google's SwiftShader, the second
# Vulkan implementation the GPU tests run on (chromium-common's vk_swiftshader_icd.json). The
# Khronos validation layer (vulkan-validationlayers) checks the engine's Vulkan use in the GPU
# tests.
packages=(build-essential pkg-config mesa-vulkan-drivers libvulkan1 libshaderc-dev glslc spirv-tools g++ chromium
  vulkan-validationlayers xvfb xauth xdotool libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install rustup (https://rustup.rs), then run this script again" >&2
  exit 1
fi
# Installs the pinned toolchain and its components if they are missing.
rustup show active-toolchain >/dev/null
rustup component add rustfmt clippy >/dev/null
echo "system packages and toolchain ready"
