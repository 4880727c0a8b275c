//! The simulation shaders compile, match `glslc`, and pass the SPIR-V precision check; the check
//! fails on shaders that fuse, relax or call a function devices disagree on.
//!
//! Feature `gpu-tests` (needs shaderc's static libraries and `glslc`; no GPU).

use std::path::Path;
use std::process::Command;

use rusting_engine::physics::gpu::compile::{
    ShaderError, compile, compile_options_summary, compile_source, compile_variant,
};
use rusting_engine::physics::gpu::{SIMULATION_SHADERS, SpirvVariant, embedded_spirv_variant};
use rusting_spirv::{Problem, check_spirv};

/// Every simulation shader, compiled with debug information, has `NoContraction` on every float
/// operation, no `RelaxedPrecision`, and only exact GLSL.std.450 functions.
///
/// Fails if `precise` is removed from any value in `sim_math.glsl` or `sim_math_probe.comp` that
/// an arithmetic operation feeds (for example `precise float r = a.x * b.x + a.y * b.y;` in
/// `sim_dot` written as `float r = ...`), or if a simulation shader calls `fma`, `sqrt`, `dot` or a
/// transcendental.
#[test]
fn simulation_shaders_are_precise_and_never_relaxed() {
    assert!(!SIMULATION_SHADERS.is_empty());
    let mut failures = Vec::new();
    for shader in SIMULATION_SHADERS {
        let words = compile(shader).unwrap_or_else(|err| panic!("{err}"));
        if let Err(err) = check_spirv(shader.name, &words) {
            failures.push(err.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Inputs and outputs are separate buffers: glslang tracks `precise` per buffer, so reading the
// buffer a precise value is written to would make every write to it precise.
const ONE_IMPRECISE_MULTIPLY: &str = "#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    precise float a = x[0] * x[1];
    float b = x[2] * x[3];
    precise float c = a + x[4];
    y[0] = c;
    y[1] = b;
}
";

/// The check names the one multiply that is not `precise`, with its line.
///
/// Fails if the check accepts an undecorated `OpFMul`, or loses the line information.
#[test]
fn the_check_fails_on_one_imprecise_multiply_and_names_its_line() {
    let words = compile_source("imprecise.comp", ONE_IMPRECISE_MULTIPLY).expect("compiles");
    let err = check_spirv("imprecise.comp", &words).unwrap_err();
    let [violation] = err.violations() else {
        panic!("expected exactly one violation:\n{err}");
    };
    assert_eq!(violation.problem, Problem::MissingNoContraction);
    assert!(violation.instruction.starts_with("OpFMul"), "{violation}");
    let location = violation
        .location
        .as_ref()
        .expect("compiled with debug info");
    assert_eq!(
        (location.file.as_str(), location.line),
        ("imprecise.comp", 7)
    );
    println!("{err}");
}

/// `fma`, `sin` and `inversesqrt` fail even on `precise` values: glslang puts no `NoContraction`
/// on extended instructions, and their results differ between devices.
///
/// Fails if any of them is added to the check's exact set.
#[test]
fn the_check_fails_on_fma_and_transcendentals() {
    let source = "#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { float data[]; };
void main() {
    precise float f = fma(data[0], data[1], data[2]);
    precise float s = sin(data[3]);
    precise float r = inversesqrt(data[4]);
    precise float ok = clamp(floor(data[5]), 0.0, 1.0);
    data[6] = f + s + r + ok;
}
";
    let words = compile_source("ext.comp", source).expect("compiles");
    let err = check_spirv("ext.comp", &words).unwrap_err();
    let found: Vec<(String, u32)> = err
        .violations()
        .iter()
        .map(|v| {
            assert_eq!(v.problem, Problem::ForbiddenFunction, "{v}");
            (
                v.instruction.clone(),
                v.location.as_ref().map_or(0, |l| l.line),
            )
        })
        .collect();
    assert_eq!(found.len(), 3, "{err}");
    for ((instruction, line), (name, expected_line)) in
        found
            .iter()
            .zip([("Fma", 5), ("Sin", 6), ("InverseSqrt", 7)])
    {
        assert!(instruction.contains(name), "{instruction}");
        assert_eq!(*line, expected_line, "{instruction}");
    }
}

/// `mediump` and the built-in `dot` fail the check.
#[test]
fn the_check_fails_on_mediump_and_builtin_dot() {
    let source = "#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { vec4 data[]; };
void main() {
    mediump float m = data[0].x;
    precise float d = dot(data[1], data[2]);
    data[3].x = d + m;
}
";
    let words = compile_source("relaxed.comp", source).expect("compiles");
    let err = check_spirv("relaxed.comp", &words).unwrap_err();
    let problems: Vec<&Problem> = err.violations().iter().map(|v| &v.problem).collect();
    assert!(problems.contains(&&Problem::RelaxedPrecision), "{err}");
    assert!(problems.contains(&&Problem::UnorderedProduct), "{err}");
}

/// A shader that does not compile is an error naming the file and line, not a panic.
#[test]
fn a_broken_shader_is_an_error_with_file_and_line() {
    let source = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n    float x = undefined_name;\n}\n";
    let err = compile_source("broken.comp", source).unwrap_err();
    let ShaderError::Compile { message, .. } = &err else {
        panic!("expected a compile error, got {err}");
    };
    assert!(message.contains("broken.comp:4"), "{message}");
    let err = compile_source(
        "missing.comp",
        "#version 450\n#include \"nope.glsl\"\nvoid main() {}\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("nope.glsl"), "{err}");
}

/// The `shaderc` crate and the system's `glslc` give the same SPIR-V words for every simulation
/// shader. Debian builds shaderc against a different glslang than `glslang-dev`; this catches a
/// mismatch between the library the engine links and the compiler people use by hand.
///
/// Fails if the compile options in `physics::gpu::compile` drift from
/// `compile_options_summary()` (say, a different target environment), or if the linked glslang
/// differs from glslc's.
#[test]
fn the_crate_compiles_every_simulation_shader_to_the_same_words_as_glslc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shaders");
    for shader in SIMULATION_SHADERS {
        let output = Command::new("glslc")
            .args(compile_options_summary())
            .arg(shader.name)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|err| {
                panic!("glslc is needed for this test (apt-get install glslc): {err}")
            });
        assert!(
            output.status.success(),
            "glslc failed on {}: {}",
            shader.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let glslc_words: Vec<u32> = output
            .stdout
            .chunks_exact(4)
            .map(|bytes| u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect();
        let crate_words = compile(shader).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(
            crate_words.len(),
            glslc_words.len(),
            "{}: lengths differ",
            shader.name
        );
        if let Some(word) = crate_words
            .iter()
            .zip(&glslc_words)
            .position(|(a, b)| a != b)
        {
            panic!(
                "{}: word {word} differs: crate {:#010x}, glslc {:#010x}",
                shader.name, crate_words[word], glslc_words[word]
            );
        }
    }
}

/// The SPIR-V committed under `src/shaders/spirv/` (and embedded in the library, so games need no
/// shader compiler) is exactly what the shader sources compile to today, word for word. Fails when
/// a shader or an include changes without `tools/compile-shaders.sh` being run (edit a comment in
/// `physics_shapes.glsl`: its line numbers move, and so do the debug words).
#[test]
fn committed_spirv_matches_the_shader_sources() {
    for shader in SIMULATION_SHADERS {
        for variant in SpirvVariant::ALL {
            let compiled = compile_variant(shader, variant).unwrap_or_else(|err| panic!("{err}"));
            let committed =
                embedded_spirv_variant(shader.name, variant).unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(
                compiled.len(),
                committed.len(),
                "{} ({variant:?}): the committed SPIR-V is stale (run tools/compile-shaders.sh)",
                shader.name
            );
            if let Some(word) = compiled.iter().zip(&committed).position(|(a, b)| a != b) {
                panic!(
                    "{} ({variant:?}): word {word} differs from the committed SPIR-V (run \
                     tools/compile-shaders.sh)",
                    shader.name
                );
            }
        }
    }
}
