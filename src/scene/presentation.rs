//! What a scene says about how it looks: an entity's [`Appearance`] and the scene's
//! [`CameraSettings`]. Presentation data: never simulation state, never hashed, and left out of
//! the scene's identity (recolouring a scene keeps its replays valid). The window reads it; a
//! headless run keeps it and never looks at it. This module must never touch simulation state.

use bevy::math::Vec3;
use bevy::prelude::{Component, Resource};
use serde::{Deserialize, Serialize};

/// How an entity is drawn: its colour (linear-free sRGB, each channel from 0 to 1). Written in a
/// scene as `"Appearance": {"color": [0.9, 0.2, 0.6]}`.
#[derive(Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Appearance {
    /// Red, green and blue, sRGB, each from 0 to 1.
    pub color: [f32; 3],
}

/// How the window's camera follows the player, from the scene's
/// `"settings": {"camera": {"offset": [0, 7, 11]}}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSettings {
    /// Where the camera sits relative to the player, in metres.
    pub offset: Vec3,
}

impl Default for CameraSettings {
    fn default() -> Self {
        CameraSettings {
            offset: Vec3::new(0.0, 7.0, 11.0),
        }
    }
}

/// The loaded scene's presentation settings (a presentation resource, inserted with the scene).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct ScenePresentation {
    /// The follow camera.
    pub camera: CameraSettings,
}
