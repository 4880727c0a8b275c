//! The float-controls check of a CrossPlatform shader variant: proves the module asks the device
//! for the 32-bit float behaviour `CrossPlatform` determinism needs.
//!
//! A module passes when every entry point declares the execution modes `DenormPreserve`,
//! `SignedZeroInfNanPreserve` and `RoundingModeRTE` for 32-bit floats, and the module declares the
//! matching capabilities. Without them a driver may flush subnormals, assume away signed zeros,
//! infinities and NaNs, or pick its own rounding, and two devices part. This module reads SPIR-V
//! only; it must never compile or run a shader.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{Capability, ExecutionMode};

/// Why a module does not declare the float controls `CrossPlatform` needs.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FloatControlsError {
    /// The words are not a SPIR-V module rspirv can read.
    #[error("{shader}: not valid SPIR-V: {reason}")]
    InvalidSpirv {
        /// The shader's name.
        shader: String,
        /// What the parser reported.
        reason: String,
    },
    /// The module has no entry point to declare modes on.
    #[error("{shader}: no entry point")]
    NoEntryPoint {
        /// The shader's name.
        shader: String,
    },
    /// Some of the declarations are missing.
    #[error(
        "{shader}: does not declare the float controls CrossPlatform needs: missing {}",
        .missing.join(", ")
    )]
    Missing {
        /// The shader's name.
        shader: String,
        /// Each missing declaration, as `ExecutionMode DenormPreserve 32` or
        /// `Capability DenormPreserve`.
        missing: Vec<String>,
    },
}

/// The execution modes (for 32-bit floats) and their capabilities that `CrossPlatform` needs.
const REQUIRED: [(ExecutionMode, Capability); 3] = [
    (ExecutionMode::DenormPreserve, Capability::DenormPreserve),
    (
        ExecutionMode::SignedZeroInfNanPreserve,
        Capability::SignedZeroInfNanPreserve,
    ),
    (ExecutionMode::RoundingModeRTE, Capability::RoundingModeRTE),
];

/// Checks that the module `words` (named `shader` in errors) declares, on every entry point, the
/// 32-bit float controls `CrossPlatform` needs, with their capabilities.
///
/// # Errors
///
/// [`FloatControlsError`] naming what is missing.
pub fn check_float_controls(shader: &str, words: &[u32]) -> Result<(), FloatControlsError> {
    let words =
        super::without_source_text(words).map_err(|reason| FloatControlsError::InvalidSpirv {
            shader: shader.to_owned(),
            reason,
        })?;
    let module = dr::load_words(&words).map_err(|err| FloatControlsError::InvalidSpirv {
        shader: shader.to_owned(),
        reason: err.to_string(),
    })?;
    let entries: Vec<u32> = module
        .entry_points
        .iter()
        .filter_map(|entry| match entry.operands.get(1) {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        })
        .collect();
    if entries.is_empty() {
        return Err(FloatControlsError::NoEntryPoint {
            shader: shader.to_owned(),
        });
    }
    let declares_mode = |entry: u32, mode: ExecutionMode| {
        module.execution_modes.iter().any(|instruction| {
            matches!(
                instruction.operands.as_slice(),
                [Operand::IdRef(id), Operand::ExecutionMode(m), Operand::LiteralBit32(32)]
                    if *id == entry && *m == mode
            )
        })
    };
    let declares_capability = |capability: Capability| {
        module.capabilities.iter().any(|instruction| {
            matches!(instruction.operands.as_slice(), [Operand::Capability(c)] if *c == capability)
        })
    };
    let mut missing = Vec::new();
    for (mode, capability) in REQUIRED {
        if !entries.iter().all(|&entry| declares_mode(entry, mode)) {
            missing.push(format!("ExecutionMode {mode:?} 32"));
        }
        if !declares_capability(capability) {
            missing.push(format!("Capability {capability:?}"));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(FloatControlsError::Missing {
            shader: shader.to_owned(),
            missing,
        })
    }
}
