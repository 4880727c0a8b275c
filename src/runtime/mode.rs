//! [`DeterminismMode`], [`DeterminismSupport`] and the startup check between them.
//!
//! A project chooses how much determinism it needs; each simulation part (a solver, a gameplay
//! module, a game's own plugin) declares the strongest mode it can keep. At startup the engine
//! compares the two and refuses to run a project whose parts promise less than it asks for, naming
//! every such part. This module owns that comparison; it must never decide what a part supports:
//! only the part knows.

use std::collections::BTreeMap;
use std::fmt;

use bevy::prelude::Resource;
use serde::{Deserialize, Serialize};

/// How much determinism a project requires (simulation state).
///
/// Modes are ordered: `Off < Local < CrossPlatform`.
#[derive(
    Resource,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
)]
pub enum DeterminismMode {
    /// No promise.
    Off,
    /// The same bits on every run and thread count of one build on one machine.
    #[default]
    Local,
    /// The same bits on every supported CPU and GPU.
    CrossPlatform,
}

impl fmt::Display for DeterminismMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeterminismMode::Off => "Off",
            DeterminismMode::Local => "Local",
            DeterminismMode::CrossPlatform => "CrossPlatform",
        })
    }
}

/// The strongest mode each simulation part supports, by part name.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct DeterminismSupport {
    parts: BTreeMap<String, DeterminismMode>,
}

impl DeterminismSupport {
    /// Records that `part` supports at most `mode`. A part declared twice keeps the weaker mode, so
    /// one plugin cannot raise what another found.
    pub fn declare(&mut self, part: impl Into<String>, mode: DeterminismMode) {
        self.parts
            .entry(part.into())
            .and_modify(|current| *current = (*current).min(mode))
            .or_insert(mode);
    }

    /// The mode `part` declared, if it declared one.
    pub fn supported(&self, part: &str) -> Option<DeterminismMode> {
        self.parts.get(part).copied()
    }

    /// Every declared part and its mode, sorted by part name.
    pub fn parts(&self) -> impl Iterator<Item = (&str, DeterminismMode)> {
        self.parts.iter().map(|(part, mode)| (part.as_str(), *mode))
    }

    /// Checks that every part supports `required`; otherwise names every part that does not.
    pub fn check(&self, required: DeterminismMode) -> Result<(), DeterminismError> {
        let below: Vec<UnsupportedPart> = self
            .parts()
            .filter(|(_, supported)| *supported < required)
            .map(|(part, supported)| UnsupportedPart {
                part: part.to_owned(),
                supported,
            })
            .collect();
        if below.is_empty() {
            Ok(())
        } else {
            Err(DeterminismError::Unsupported {
                required,
                parts: below,
            })
        }
    }
}

/// A simulation part and the mode it supports, below what the project requires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedPart {
    /// The part's name, as declared.
    pub part: String,
    /// The strongest mode it supports.
    pub supported: DeterminismMode,
}

/// Why a project cannot run in its determinism mode.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeterminismError {
    /// Some simulation parts support less than the project's mode. `parts` is sorted by name.
    #[error("the project requires {required} determinism, but {}", describe(.parts))]
    Unsupported {
        /// The project's mode.
        required: DeterminismMode,
        /// Every part below it, sorted by part name.
        parts: Vec<UnsupportedPart>,
    },
}

fn describe(parts: &[UnsupportedPart]) -> String {
    parts
        .iter()
        .map(|p| format!("`{}` supports only {}", p.part, p.supported))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_names_every_weaker_part_sorted_and_a_second_declaration_keeps_the_weaker() {
        let mut support = DeterminismSupport::default();
        support.declare("physics.gpu", DeterminismMode::Local);
        support.declare("gameplay.tween", DeterminismMode::CrossPlatform);
        support.declare("audio", DeterminismMode::CrossPlatform);
        support.declare("audio", DeterminismMode::Off);
        support.declare("physics.gpu", DeterminismMode::CrossPlatform);
        assert_eq!(support.supported("audio"), Some(DeterminismMode::Off));
        assert_eq!(
            support.supported("physics.gpu"),
            Some(DeterminismMode::Local)
        );

        assert_eq!(support.check(DeterminismMode::Off), Ok(()));
        let err = support.check(DeterminismMode::CrossPlatform).unwrap_err();
        let DeterminismError::Unsupported { required, parts } = &err;
        assert_eq!(*required, DeterminismMode::CrossPlatform);
        let names: Vec<&str> = parts.iter().map(|p| p.part.as_str()).collect();
        assert_eq!(names, ["audio", "physics.gpu"]);
        assert_eq!(
            err.to_string(),
            "the project requires CrossPlatform determinism, but `audio` supports only Off, \
             `physics.gpu` supports only Local"
        );
        let err = support.check(DeterminismMode::Local).unwrap_err();
        let DeterminismError::Unsupported { parts, .. } = err;
        assert_eq!(parts.len(), 1);
    }
}
