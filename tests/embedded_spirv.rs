//! The simulation shaders' committed SPIR-V, as games embed it, passes the precision check. Runs in
//! the default test suite: it needs no GPU and no shader compiler.

use rusting_engine::physics::gpu::{
    EMBEDDED_SPIRV, SIMULATION_SHADERS, SpirvVariant, embedded_spirv_variant,
};
use rusting_spirv::{FloatControlsError, check_float_controls, check_spirv};

/// Every simulation shader has committed SPIR-V in both variants, and every committed module
/// passes the precision check. Fails when a `.spv` file is missing from `EMBEDDED_SPIRV` or was
/// compiled from a shader with a value that is not `precise` (remove one `precise` in
/// `physics_shapes.glsl` and run `tools/compile-shaders.sh`).
#[test]
fn embedded_spirv_passes_the_precision_check() {
    assert_eq!(EMBEDDED_SPIRV.len(), 2 * SIMULATION_SHADERS.len());
    for shader in SIMULATION_SHADERS {
        for variant in SpirvVariant::ALL {
            let words = embedded_spirv_variant(shader.name, variant)
                .unwrap_or_else(|err| panic!("{} ({variant:?}): {err}", shader.name));
            if let Err(err) = check_spirv(shader.name, &words) {
                panic!("{err}");
            }
        }
    }
}

/// The float-controls variant of every simulation shader declares `DenormPreserve`,
/// `SignedZeroInfNanPreserve` and `RoundingModeRTE` for 32-bit floats with their capabilities, as
/// `CrossPlatform` requires, and the plain variant (for devices without them) declares none. Fails
/// when a shader loses its `#include "float_controls.glsl"` under `RUSTING_FLOAT_CONTROLS`, when
/// `float_controls.glsl` drops a mode, or when `tools/compile-shaders.sh` compiles the variant
/// without the define (seen: `missing ExecutionMode DenormPreserve 32, Capability DenormPreserve,
/// ...` for every shader).
#[test]
fn simulation_shaders_declare_float_controls() {
    for shader in SIMULATION_SHADERS {
        let controlled = embedded_spirv_variant(shader.name, SpirvVariant::FloatControls).unwrap();
        if let Err(err) = check_float_controls(shader.name, &controlled) {
            panic!("{err}");
        }
        let plain = embedded_spirv_variant(shader.name, SpirvVariant::Plain).unwrap();
        match check_float_controls(shader.name, &plain) {
            Err(FloatControlsError::Missing { missing, .. }) => assert_eq!(missing.len(), 6),
            other => panic!(
                "{}: the plain variant declares float controls: {other:?}",
                shader.name
            ),
        }
    }
}
