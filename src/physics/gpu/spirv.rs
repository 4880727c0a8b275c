//! The simulation shaders' committed SPIR-V, embedded in the library.
//!
//! This module owns the compiled form games run: `src/shaders/spirv/<shader>.spv` and its
//! float-controls variant `<shader>.float-controls.spv` (compiled with `RUSTING_FLOAT_CONTROLS`
//! defined), produced by `tools/compile-shaders.sh` (`glslc --target-env=vulkan1.2 -g`, the
//! options of the in-process compiler) and embedded with `include_bytes!`, so running GPU physics
//! needs no shader compiler.
//! It must never drift from the GLSL in [`super::shaders`]: the gpu-tests test
//! `committed_spirv_matches_the_shader_sources` recompiles every simulation shader and compares the
//! words, and `embedded_spirv_passes_the_precision_check` (default build) runs
//! `rusting_spirv::check_spirv` (the test `embedded_spirv_passes_the_precision_check`) on each.

use super::error::GpuError;
use super::shaders::SpirvVariant;

/// One committed SPIR-V module: the shader it was compiled from and its bytes (little-endian
/// words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbeddedSpirv {
    /// The GLSL file's name under `src/shaders/`, such as `physics.comp`.
    pub shader: &'static str,
    /// Which variant it is.
    pub variant: SpirvVariant,
    /// The `.spv` file's bytes.
    pub bytes: &'static [u8],
}

macro_rules! embedded {
    ($name:literal, Plain) => {
        EmbeddedSpirv {
            shader: $name,
            variant: SpirvVariant::Plain,
            bytes: include_bytes!(concat!("../../shaders/spirv/", $name, ".spv")),
        }
    };
    ($name:literal, FloatControls) => {
        EmbeddedSpirv {
            shader: $name,
            variant: SpirvVariant::FloatControls,
            bytes: include_bytes!(concat!(
                "../../shaders/spirv/",
                $name,
                ".float-controls.spv"
            )),
        }
    };
}

/// The committed SPIR-V of every simulation shader, both variants of each (plain, then float
/// controls), in the order of [`super::SIMULATION_SHADERS`].
pub const EMBEDDED_SPIRV: &[EmbeddedSpirv] = &[
    embedded!("sim_math_probe.comp", Plain),
    embedded!("sim_math_probe.comp", FloatControls),
    embedded!("physics.comp", Plain),
    embedded!("physics.comp", FloatControls),
    embedded!("physics_contacts.comp", Plain),
    embedded!("physics_contacts.comp", FloatControls),
    embedded!("physics_hash.comp", Plain),
    embedded!("physics_hash.comp", FloatControls),
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

/// The committed SPIR-V words of simulation shader `shader`, plain variant.
///
/// # Errors
///
/// [`GpuError::MissingSpirv`] when no SPIR-V is committed under that name, and
/// [`GpuError::NotSpirv`] when the file is not whole words.
pub fn embedded_spirv(shader: &str) -> Result<Vec<u32>, GpuError> {
    embedded_spirv_variant(shader, SpirvVariant::Plain)
}

/// The committed SPIR-V words of simulation shader `shader` as `variant`.
///
/// # Errors
///
/// As [`embedded_spirv`].
pub fn embedded_spirv_variant(shader: &str, variant: SpirvVariant) -> Result<Vec<u32>, GpuError> {
    EMBEDDED_SPIRV
        .iter()
        .find(|embedded| embedded.shader == shader && embedded.variant == variant)
        .ok_or_else(|| GpuError::MissingSpirv {
            shader: shader.to_owned(),
        })?
        .words()
}
