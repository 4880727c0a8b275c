//! The engine's simulation shaders, embedded in the library as GLSL source.
//!
//! This module owns the list of simulation shaders ([`SIMULATION_SHADERS`]) and the files they may
//! `#include` ([`SHADER_INCLUDES`]), all under `src/shaders/`. Everything in these lists must pass
//! [`super::precision::check_spirv`] once compiled; rendering shaders never belong here. It must
//! never read shader files at run time: the sources are compiled into the library, so a game finds
//! the same shaders wherever it runs.

/// One GLSL file: its name under `src/shaders/` and its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderSource {
    /// The file name, such as `sim_math.glsl`. Compilers and the precision check report lines
    /// under this name.
    pub name: &'static str,
    /// The GLSL text.
    pub source: &'static str,
}

/// `sim_math.glsl`: the bit-exact math every simulation shader includes (the GLSL mirror of
/// `runtime::sim_math`).
pub const SIM_MATH_GLSL: ShaderSource = ShaderSource {
    name: "sim_math.glsl",
    source: include_str!("../../shaders/sim_math.glsl"),
};

/// `sim_math_probe.comp`: runs one `sim_math.glsl` routine over a buffer of cases; the bit-exact
/// GPU test and device checks use it (its header documents the buffer layout).
pub const SIM_MATH_PROBE: ShaderSource = ShaderSource {
    name: "sim_math_probe.comp",
    source: include_str!("../../shaders/sim_math_probe.comp"),
};

/// Every simulation compute shader. Each must compile and pass the precision check.
pub const SIMULATION_SHADERS: &[ShaderSource] = &[SIM_MATH_PROBE];

/// The files simulation shaders may `#include "..."`, by name.
pub const SHADER_INCLUDES: &[ShaderSource] = &[SIM_MATH_GLSL];

/// The include file called `name`, if there is one.
pub fn include(name: &str) -> Option<&'static ShaderSource> {
    SHADER_INCLUDES.iter().find(|source| source.name == name)
}
