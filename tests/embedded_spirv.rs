//! The simulation shaders' committed SPIR-V, as games embed it, passes the precision check. Runs in
//! the default test suite: it needs no GPU and no shader compiler.

use rusting_engine::physics::gpu::{EMBEDDED_SPIRV, SIMULATION_SHADERS, embedded_spirv};
use rusting_spirv::check_spirv;

/// Every simulation shader has committed SPIR-V, and every committed module passes the precision
/// check. Fails when a `.spv` file is missing from `EMBEDDED_SPIRV` or was compiled from a shader
/// with a value that is not `precise` (remove one `precise` in `physics_shapes.glsl` and run
/// `tools/compile-shaders.sh`).
#[test]
fn embedded_spirv_passes_the_precision_check() {
    assert_eq!(EMBEDDED_SPIRV.len(), SIMULATION_SHADERS.len());
    for shader in SIMULATION_SHADERS {
        let words =
            embedded_spirv(shader.name).unwrap_or_else(|err| panic!("{}: {err}", shader.name));
        if let Err(err) = check_spirv(shader.name, &words) {
            panic!("{err}");
        }
    }
}
