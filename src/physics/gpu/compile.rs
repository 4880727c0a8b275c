//! GLSL to SPIR-V in process, with the `shaderc` crate (feature `shader-compiler`).
//!
//! This module owns the one set of compiler options every simulation shader is built with
//! ([`compile_options_summary`] says them in `glslc` terms) and the include resolution against
//! [`super::shaders::SHADER_INCLUDES`]. Debug line information is always on, so the precision check
//! can name source lines. It must never optimise (an optimiser may drop the line information the
//! check reports), never read includes from the file system, and never panic on a broken shader:
//! the error names the file and line the compiler reported.

use super::shaders::{ShaderSource, SpirvVariant, include};

/// The `glslc` command line that produces the same SPIR-V as [`compile`] for a shader in
/// `src/shaders/` (run there, with the file name as the last argument).
pub fn compile_options_summary() -> &'static [&'static str] {
    &["--target-env=vulkan1.2", "-g", "-o", "-"]
}

/// Why a shader did not compile.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShaderError {
    /// The shaderc library could not start.
    #[error("the shader compiler could not start: {reason}")]
    CompilerUnavailable {
        /// What shaderc reported.
        reason: String,
    },
    /// The file name does not say which stage the shader is (only `.comp` is known).
    #[error("{shader}: unknown shader stage (simulation shaders are compute shaders, `.comp`)")]
    UnknownStage {
        /// The shader's name.
        shader: String,
    },
    /// The compiler rejected the shader; `message` starts with the file and line.
    #[error("{shader} does not compile:\n{message}")]
    Compile {
        /// The shader's name.
        shader: String,
        /// The compiler's messages, each as `file:line: error: ...`.
        message: String,
    },
}

/// Compiles one of the engine's simulation shaders (its plain variant).
pub fn compile(shader: &ShaderSource) -> Result<Vec<u32>, ShaderError> {
    compile_variant(shader, SpirvVariant::Plain)
}

/// Compiles one of the engine's simulation shaders as `variant` (with `RUSTING_FLOAT_CONTROLS`
/// defined for the float-controls one, as `glslc -DRUSTING_FLOAT_CONTROLS` does).
pub fn compile_variant(
    shader: &ShaderSource,
    variant: SpirvVariant,
) -> Result<Vec<u32>, ShaderError> {
    compile_with(shader.name, shader.source, variant.define())
}

/// Compiles a compute shader from source. `name` must end in `.comp`; `#include "..."` resolves
/// against the engine's shader includes (such as `sim_math.glsl`).
pub fn compile_source(name: &str, source: &str) -> Result<Vec<u32>, ShaderError> {
    compile_with(name, source, None)
}

fn compile_with(name: &str, source: &str, define: Option<&str>) -> Result<Vec<u32>, ShaderError> {
    if !name.ends_with(".comp") {
        return Err(ShaderError::UnknownStage {
            shader: name.to_owned(),
        });
    }
    let unavailable = |err: shaderc::Error| ShaderError::CompilerUnavailable {
        reason: err.to_string(),
    };
    let compiler = shaderc::Compiler::new().map_err(unavailable)?;
    let mut options = shaderc::CompileOptions::new().map_err(unavailable)?;
    options.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_2 as u32,
    );
    options.set_generate_debug_info();
    if let Some(define) = define {
        options.add_macro_definition(define, None);
    }
    options.set_include_callback(|requested, _kind, requesting, _depth| {
        include(requested)
            .map(|file| shaderc::ResolvedInclude {
                resolved_name: file.name.to_owned(),
                content: file.source.to_owned(),
            })
            .ok_or_else(|| {
                format!(
                    "`{requested}` (included from {requesting}) is not an engine shader include"
                )
            })
    });
    let artifact = compiler
        .compile_into_spirv(
            source,
            shaderc::ShaderKind::Compute,
            name,
            "main",
            Some(&options),
        )
        .map_err(|err| ShaderError::Compile {
            shader: name.to_owned(),
            message: err.to_string(),
        })?;
    Ok(artifact.as_binary().to_vec())
}
