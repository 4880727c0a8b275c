//! [`Tween`]: moves an entity between two points over a fixed time, once, looping or ping-pong.
//!
//! The tween's `played` time is simulation state and advances by `FrameTime::fixed_delta` each
//! tick, so a tween ends on the same tick however frames are paced. Easing curves use `sim_math`
//! (the sine curve through `sim_math::sin_cos`). A tween on a kinematic body drives its velocity so
//! that the solver moves it and it carries what stands on it; on anything else it sets the
//! translation directly. This module must never read the frame delta.

use bevy::math::Vec3;
use bevy::prelude::{Component, Query, Res, Transform};
use serde::{Deserialize, Serialize};

use crate::physics::{BodyKind, RigidBody};
use crate::runtime::{FrameTime, sim_math};

/// How the eased fraction follows the played fraction.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub enum Easing {
    /// Constant speed.
    #[default]
    Linear,
    /// Slow at both ends: `t^2` then mirrored.
    QuadInOut,
    /// Slow at both ends along a half cosine.
    SineInOut,
    /// Fast start, slow end: `1 - (1 - t)^3`.
    CubicOut,
}

impl Easing {
    /// The eased value of `t` in `[0, 1]`; 0 and 1 map to exactly 0 and 1.
    pub fn apply(self, t: f32) -> f32 {
        if t <= 0.0 {
            return 0.0;
        }
        if t >= 1.0 {
            return 1.0;
        }
        match self {
            Easing::Linear => t,
            Easing::QuadInOut => {
                if t < 0.5 {
                    2.0 * t * t
                } else {
                    let u = 2.0 - 2.0 * t;
                    1.0 - 0.5 * u * u
                }
            }
            Easing::SineInOut => {
                let (_, cos) = sim_math::sin_cos(sim_math::PI * t);
                0.5 - 0.5 * cos
            }
            Easing::CubicOut => {
                let u = 1.0 - t;
                1.0 - u * u * u
            }
        }
    }
}

/// What a tween does when it reaches its end.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
pub enum TweenMode {
    /// Stop at `to`.
    #[default]
    Once,
    /// Jump back to `from` and play again.
    Loop,
    /// Play backwards to `from`, then forwards again.
    PingPong,
}

/// Moves an entity's translation from `from` to `to` over `duration` seconds (simulation state).
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct Tween {
    /// Start position.
    pub from: Vec3,
    /// End position.
    pub to: Vec3,
    /// Seconds from `from` to `to` (positive).
    pub duration: f32,
    /// The curve.
    #[serde(default)]
    pub easing: Easing,
    /// Once, loop or ping-pong.
    #[serde(default)]
    pub mode: TweenMode,
    /// Seconds played so far.
    #[serde(default)]
    pub played: f32,
}

impl Tween {
    /// A linear, one-shot tween.
    pub fn new(from: Vec3, to: Vec3, duration: f32) -> Self {
        Tween {
            from,
            to,
            duration,
            easing: Easing::Linear,
            mode: TweenMode::Once,
            played: 0.0,
        }
    }

    /// Whether a one-shot tween has reached its end.
    pub fn finished(&self) -> bool {
        self.mode == TweenMode::Once && self.played >= self.duration
    }

    /// The fraction of the way from `from` to `to` after `played` seconds, before easing.
    fn progress(&self) -> f32 {
        if self.duration.is_nan() || self.duration <= 0.0 {
            return 1.0;
        }
        let cycles = self.played / self.duration;
        match self.mode {
            TweenMode::Once => cycles.min(1.0),
            TweenMode::Loop => cycles - cycles.floor(),
            TweenMode::PingPong => {
                let phase = cycles - 2.0 * (cycles * 0.5).floor();
                if phase <= 1.0 { phase } else { 2.0 - phase }
            }
        }
    }

    /// Where the tween puts the entity now. At the end of a one-shot tween this is exactly `to`.
    pub fn position(&self) -> Vec3 {
        let eased = self.easing.apply(self.progress());
        if eased == 1.0 {
            self.to
        } else if eased == 0.0 {
            self.from
        } else {
            self.from + (self.to - self.from) * eased
        }
    }
}

/// Advances every tween by one tick and moves its entity.
pub fn advance_tweens(
    time: Res<FrameTime>,
    mut tweens: Query<(&mut Tween, &mut Transform, Option<&mut RigidBody>)>,
) {
    let dt = time.fixed_delta;
    for (mut tween, mut transform, body) in &mut tweens {
        if tween.finished() {
            if let Some(mut body) = body.filter(|b| b.kind == BodyKind::Kinematic) {
                body.linear_velocity = Vec3::ZERO;
            }
            continue;
        }
        tween.played += dt;
        let target = tween.position();
        match body {
            Some(mut body) if body.kind == BodyKind::Kinematic => {
                // The solver moves the body there on the next tick, carrying what rests on it.
                body.linear_velocity = (target - transform.translation) * (1.0 / dt);
            }
            _ => transform.translation = target,
        }
    }
}
