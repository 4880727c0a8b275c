//! [`DeterminismMode`], [`DeterminismSupport`] and the startup check between them.
//!
//! A project chooses how much determinism it needs; each simulation part (a solver, a gameplay
//! module, a game's own plugin) declares the strongest mode it can keep. At startup the engine
//! compares the two and refuses to run a project whose parts promise less than it asks for, naming
//! every such part and the first scene entity that uses it. `rusting validate` runs the same
//! comparison ([`DeterminismSupport::check_uses`]) before shipping, so both print the same message.
//! This module owns that comparison; it must never decide what a part supports (only the part
//! knows) nor which entities use it (the scene does: `scene::parts`).

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
    rusting_macros::SimState,
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
    /// Why a part supports less than `CrossPlatform`, where its declaration said.
    reasons: BTreeMap<String, String>,
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

    /// [`declare`](Self::declare), with why `part` supports no more than `mode` (such as the
    /// conformance probe's first difference on this device); the startup check's message ends
    /// with it.
    pub fn declare_with_reason(
        &mut self,
        part: impl Into<String>,
        mode: DeterminismMode,
        reason: impl Into<String>,
    ) {
        let part = part.into();
        self.declare(part.clone(), mode);
        self.reasons.entry(part).or_insert_with(|| reason.into());
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
        self.check_uses(required, &PartUsers::new())
    }

    /// [`check`](Self::check), naming for each part below `required` the first entity that uses
    /// it, from `users` (part name to first user). The game's startup check and `rusting validate`
    /// both call this, so a project refused at startup fails validation with the same message.
    pub fn check_uses(
        &self,
        required: DeterminismMode,
        users: &PartUsers,
    ) -> Result<(), DeterminismError> {
        let below: Vec<UnsupportedPart> = self
            .parts()
            .filter(|(_, supported)| *supported < required)
            .map(|(part, supported)| UnsupportedPart {
                part: part.to_owned(),
                supported,
                required,
                first_user: users.get(part).cloned(),
                reason: self.reasons.get(part).cloned(),
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

/// The first entity that uses each simulation part, by part name.
pub type PartUsers = BTreeMap<String, PartUser>;

/// A scene entity that uses a simulation part: where it is and what it is called.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PartUser {
    /// The scene file, relative to the project directory with `/` separators.
    pub scene: String,
    /// The entity's place in the scene source, as a JSON pointer (`/entities/3`).
    pub pointer: String,
    /// Its `SceneId`.
    pub scene_id: u64,
    /// Its `Name` (empty when the scene gives none).
    pub name: String,
}

impl fmt::Display for PartUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entity {}", self.scene_id)?;
        if !self.name.is_empty() {
            write!(f, " `{}`", self.name)?;
        }
        write!(f, " at {}#{}", self.scene, self.pointer)
    }
}

/// A simulation part and the mode it supports, below what the project requires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedPart {
    /// The part's name, as declared.
    pub part: String,
    /// The strongest mode it supports.
    pub supported: DeterminismMode,
    /// The mode the project requires.
    pub required: DeterminismMode,
    /// The first scene entity that uses the part, when one is known.
    pub first_user: Option<PartUser>,
    /// Why the part supports no more, when its declaration said.
    pub reason: Option<String>,
}

impl fmt::Display for UnsupportedPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the project requires {} determinism, but `{}` supports only {}",
            self.required, self.part, self.supported
        )?;
        if let Some(user) = &self.first_user {
            write!(f, " (first used by {user})")?;
        }
        if let Some(reason) = &self.reason {
            write!(f, ": {reason}")?;
        }
        Ok(())
    }
}

/// Why a project cannot run in its determinism mode.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeterminismError {
    /// Some simulation parts support less than the project's mode. `parts` is sorted by name; the
    /// message is each part's message, joined by `; `.
    #[error("{}", describe(.parts))]
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
        .map(UnsupportedPart::to_string)
        .collect::<Vec<_>>()
        .join("; ")
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
            "the project requires CrossPlatform determinism, but `audio` supports only Off; the \
             project requires CrossPlatform determinism, but `physics.gpu` supports only Local"
        );
        let mut users = PartUsers::new();
        users.insert(
            "physics.gpu".into(),
            PartUser {
                scene: "scenes/main.scene.json".into(),
                pointer: "/entities/4".into(),
                scene_id: 12,
                name: "Crate".into(),
            },
        );
        let err = support
            .check_uses(DeterminismMode::Local, &users)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the project requires Local determinism, but `audio` supports only Off"
        );
        let err = support
            .check_uses(DeterminismMode::CrossPlatform, &users)
            .unwrap_err();
        assert!(
            err.to_string().ends_with(
                "`physics.gpu` supports only Local (first used by entity 12 `Crate` at \
                 scenes/main.scene.json#/entities/4)"
            ),
            "{err}"
        );
        let err = support.check(DeterminismMode::Local).unwrap_err();
        let DeterminismError::Unsupported { parts, .. } = err;
        assert_eq!(parts.len(), 1);
    }
}
