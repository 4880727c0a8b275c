//! The simulation shaders' committed SPIR-V, embedded in the library.
//!
//! This module owns the compiled form games run: `src/shaders/spirv/<shader>.spv`, produced by
//! `tools/compile-shaders.sh` (`glslc --target-env=vulkan1.2 -g`, the options of the in-process
//! compiler) and embedded with `include_bytes!`, so running GPU physics needs no shader compiler.
//! It must never drift from the GLSL in [`super::shaders`]: the gpu-tests test
//! `committed_spirv_matches_the_shader_sources` recompiles every simulation shader and compares the
//! words, and `embedded_spirv_passes_the_precision_check` (default build) runs
//! `rusting_spirv::check_spirv` (the test `embedded_spirv_passes_the_precision_check`) on each.

use super::error::GpuError;

/// One committed SPIR-V module: the shader it was compiled from and its bytes (little-endian
/// words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbeddedSpirv {
    /// The GLSL file's name under `src/shaders/`, such as `physics.comp`.
    pub shader: &'static str,
    /// The `.spv` file's bytes.
    pub bytes: &'static [u8],
}

macro_rules! embedded {
    ($name:literal) => {
        EmbeddedSpirv {
            shader: $name,
            bytes: include_bytes!(concat!("../../shaders/spirv/", $name, ".spv")),
        }
    };
}

/// The committed SPIR-V of every simulation shader, in the order of
/// [`super::SIMULATION_SHADERS`].
pub const EMBEDDED_SPIRV: &[EmbeddedSpirv] = &[
    embedded!("sim_math_probe.comp"),
    embedded!("physics.comp"),
    embedded!("physics_contacts.comp"),
    embedded!("physics_hash.comp"),
];

impl EmbeddedSpirv {
    /// The module as 32-bit words.
    ///
    /// # Errors
    ///
    /// [`GpuError::NotSpirv`] when the byte count is not a multiple of four.
    pub fn words(&self) -> Result<Vec<u32>, GpuError> {
        if !self.bytes.len().is_multiple_of(4) {
            return Err(GpuError::NotSpirv {
                shader: self.shader.to_owned(),
                words: self.bytes.len() / 4,
            });
        }
        Ok(self
            .bytes
            .chunks_exact(4)
            .map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect())
    }
}

/// The committed SPIR-V words of simulation shader `shader`.
///
/// # Errors
///
/// [`GpuError::MissingSpirv`] when no SPIR-V is committed under that name, and
/// [`GpuError::NotSpirv`] when the file is not whole words.
pub fn embedded_spirv(shader: &str) -> Result<Vec<u32>, GpuError> {
    EMBEDDED_SPIRV
        .iter()
        .find(|embedded| embedded.shader == shader)
        .ok_or_else(|| GpuError::MissingSpirv {
            shader: shader.to_owned(),
        })?
        .words()
}
