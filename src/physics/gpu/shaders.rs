//! The engine's simulation shaders, embedded in the library as GLSL source.
//!
//! This module owns the list of simulation shaders ([`SIMULATION_SHADERS`]) and the files they may
//! `#include` ([`SHADER_INCLUDES`]), all under `src/shaders/`. Everything in these lists must pass
//! `rusting_spirv::check_spirv` once compiled; rendering shaders never belong here. It must
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

/// The float-control execution modes of the CrossPlatform variants (included when
/// `RUSTING_FLOAT_CONTROLS` is defined).
pub const FLOAT_CONTROLS_GLSL: ShaderSource = ShaderSource {
    name: "float_controls.glsl",
    source: include_str!("../../shaders/float_controls.glsl"),
};

/// The SPIR-V variant of a simulation shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpirvVariant {
    /// No float-control execution modes: for devices without them (`Local` determinism only).
    Plain,
    /// `DenormPreserve`, `SignedZeroInfNanPreserve` and `RoundingModeRTE` for 32-bit floats
    /// (compiled with `RUSTING_FLOAT_CONTROLS` defined): what `CrossPlatform` needs.
    FloatControls,
}

impl SpirvVariant {
    /// Both variants.
    pub const ALL: [SpirvVariant; 2] = [SpirvVariant::Plain, SpirvVariant::FloatControls];

    /// The macro the variant defines, if any.
    pub fn define(self) -> Option<&'static str> {
        match self {
            SpirvVariant::Plain => None,
            SpirvVariant::FloatControls => Some("RUSTING_FLOAT_CONTROLS"),
        }
    }
}

/// `sim_math_probe.comp`: runs one `sim_math.glsl` routine over a buffer of cases; the bit-exact
/// GPU test and device checks use it (its header documents the buffer layout).
pub const SIM_MATH_PROBE: ShaderSource = ShaderSource {
    name: "sim_math_probe.comp",
    source: include_str!("../../shaders/sim_math_probe.comp"),
};

/// `physics_layout.glsl`: the buffers, push constants and record layouts the GPU physics shaders
/// share (mirrored by `physics::gpu::physics_layout`).
pub const PHYSICS_LAYOUT_GLSL: ShaderSource = ShaderSource {
    name: "physics_layout.glsl",
    source: include_str!("../../shaders/physics_layout.glsl"),
};

/// `physics_shapes.glsl`: contact tests between spheres, boxes, capsules and half-spaces.
pub const PHYSICS_SHAPES_GLSL: ShaderSource = ShaderSource {
    name: "physics_shapes.glsl",
    source: include_str!("../../shaders/physics_shapes.glsl"),
};

/// `physics.comp`: commands, integration, contact application, rules and events.
pub const PHYSICS_COMP: ShaderSource = ShaderSource {
    name: "physics.comp",
    source: include_str!("../../shaders/physics.comp"),
};

/// `physics_contacts.comp`: the hash grid, the fallback list and the fixed-point contact sums.
pub const PHYSICS_CONTACTS_COMP: ShaderSource = ShaderSource {
    name: "physics_contacts.comp",
    source: include_str!("../../shaders/physics_contacts.comp"),
};

/// `physics_hash.comp`: the order-independent GPU state hash.
pub const PHYSICS_HASH_COMP: ShaderSource = ShaderSource {
    name: "physics_hash.comp",
    source: include_str!("../../shaders/physics_hash.comp"),
};

/// Every simulation compute shader. Each must compile and pass the precision check.
pub const SIMULATION_SHADERS: &[ShaderSource] = &[
    SIM_MATH_PROBE,
    PHYSICS_COMP,
    PHYSICS_CONTACTS_COMP,
    PHYSICS_HASH_COMP,
];

/// The files simulation shaders may `#include "..."`, by name.
pub const SHADER_INCLUDES: &[ShaderSource] = &[
    SIM_MATH_GLSL,
    PHYSICS_LAYOUT_GLSL,
    PHYSICS_SHAPES_GLSL,
    FLOAT_CONTROLS_GLSL,
];

/// The include file called `name`, if there is one.
pub fn include(name: &str) -> Option<&'static ShaderSource> {
    SHADER_INCLUDES.iter().find(|source| source.name == name)
}
