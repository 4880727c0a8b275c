//! [`DebugLines`]: lines a game draws to see what its fixed systems do (a ray cast, a path, a
//! contact normal), shown in the window and never part of the simulation.
//!
//! A system takes the [`DebugDraw`] parameter and calls `line`, `ray`, `path` or `cross`. Drawing
//! goes through a lock inside the resource, so `DebugDraw` reads `DebugLines` and never writes it
//! through bevy: any number of systems draw without ordering among themselves (the fixed schedule
//! treats an unordered conflict as an error, and a shared `ResMut` would be one), and a drawing
//! system adds no deferred work, so no sync point that could apply the game's commands earlier
//! than without it. The lines a tick drew replace those of the tick before when the next tick
//! starts (`clear_debug_lines`, in `FixedFirst`, before any game system), so the window shows the
//! last tick's lines; a re-simulated tick draws its lines again. Headless, nothing reads them, and
//! drawing costs a push.
//!
//! The lines are presentation: snapshots ignore them and the hash never sees them, and a game
//! must never read them back into the simulation. At most [`MAX_DEBUG_LINES`] are kept a tick;
//! the rest are counted ([`DebugLines::dropped`]). This module must never change simulation
//! state.

use std::sync::Mutex;

use bevy::ecs::system::SystemParam;
use bevy::math::Vec3;
use bevy::prelude::{Query, Res, ResMut, Resource, Transform};

/// The most lines kept a tick.
pub const MAX_DEBUG_LINES: usize = 16_384;

/// A colour as linear red, green and blue from 0 to 1.
pub type DebugColor = [f32; 3];

/// Colours that read well on the window's ground and sky.
pub mod colors {
    use super::DebugColor;
    /// Red.
    pub const RED: DebugColor = [1.0, 0.1, 0.1];
    /// Green.
    pub const GREEN: DebugColor = [0.1, 1.0, 0.2];
    /// Blue.
    pub const BLUE: DebugColor = [0.2, 0.4, 1.0];
    /// Yellow.
    pub const YELLOW: DebugColor = [1.0, 0.9, 0.1];
    /// Magenta.
    pub const MAGENTA: DebugColor = [1.0, 0.0, 1.0];
    /// White.
    pub const WHITE: DebugColor = [1.0, 1.0, 1.0];
}

/// One line segment, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DebugLine {
    /// Where it starts.
    pub from: Vec3,
    /// Where it ends.
    pub to: Vec3,
    /// Its colour.
    pub color: DebugColor,
}

/// The lines the last tick drew (presentation; see the module docs).
#[derive(Resource, Debug, Default)]
pub struct DebugLines {
    /// The lines and the count of those past the bound.
    drawn: Mutex<Drawn>,
}

/// What [`DebugLines`] holds behind its lock.
#[derive(Debug, Default)]
struct Drawn {
    lines: Vec<DebugLine>,
    dropped: usize,
}

impl DebugLines {
    /// The lock, also after a panic while it was held (the lines are presentation: what a
    /// panicking system drew is still worth showing).
    fn drawn(&self) -> std::sync::MutexGuard<'_, Drawn> {
        self.drawn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `line`, or counts it past the bound.
    fn push(&self, line: DebugLine) {
        let mut drawn = self.drawn();
        if drawn.lines.len() < MAX_DEBUG_LINES {
            drawn.lines.push(line);
        } else {
            drawn.dropped += 1;
        }
    }

    /// The lines, in the order they were drawn.
    pub fn lines(&self) -> Vec<DebugLine> {
        self.drawn().lines.clone()
    }

    /// How many lines, kept or not, past [`MAX_DEBUG_LINES`].
    pub fn dropped(&self) -> usize {
        self.drawn().dropped
    }

    /// Forgets every line.
    pub fn clear(&mut self) {
        let drawn = self
            .drawn
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        drawn.lines.clear();
        drawn.dropped = 0;
    }
}

/// Draws debug lines from a system (a system parameter; see the module docs).
#[derive(SystemParam)]
pub struct DebugDraw<'w> {
    lines: Res<'w, DebugLines>,
}

impl DebugDraw<'_> {
    /// A segment from `from` to `to`.
    pub fn line(&mut self, from: Vec3, to: Vec3, color: DebugColor) {
        self.lines.push(DebugLine { from, to, color });
    }

    /// A ray: from `origin` along `direction` for `length` (a direction of any length is scaled
    /// by `length`; pass a unit one for metres).
    pub fn ray(&mut self, origin: Vec3, direction: Vec3, length: f32, color: DebugColor) {
        self.line(origin, origin + direction * length, color);
    }

    /// Segments through `points` in order.
    pub fn path(&mut self, points: &[Vec3], color: DebugColor) {
        for pair in points.windows(2) {
            self.line(pair[0], pair[1], color);
        }
    }

    /// Three segments of `size` crossing at `at`, along the world's axes.
    pub fn cross(&mut self, at: Vec3, size: f32, color: DebugColor) {
        let half = size * 0.5;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            self.line(at - axis * half, at + axis * half, color);
        }
    }
}

/// What the engine draws on its own, for a developer looking at the window: off unless a windowed
/// run asks (`RUSTING_DEBUG_DRAW`; `rusting run --debug-draw`). Presentation: never hashed.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DebugView {
    /// Each dynamic body's velocity, as a magenta line from its centre to where it would be in a
    /// quarter of a second.
    pub velocities: bool,
}

impl DebugView {
    /// The view named by `RUSTING_DEBUG_DRAW`'s comma-separated list (`velocities`); `None` for a
    /// name it does not know.
    pub fn parse(text: &str) -> Option<DebugView> {
        let mut view = DebugView::default();
        for name in text
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            match name {
                "velocities" => view.velocities = true,
                _ => return None,
            }
        }
        Some(view)
    }
}

/// How far ahead a velocity line reaches, in seconds of motion.
const VELOCITY_LINE_SECONDS: f32 = 0.25;

/// Draws what [`DebugView`] asks for (runs after the fixed chain, at the tick's end).
pub fn draw_debug_view(
    view: Res<DebugView>,
    mut draw: DebugDraw,
    bodies: Query<(&crate::physics::RigidBody, &Transform)>,
) {
    if !view.velocities {
        return;
    }
    for (body, transform) in &bodies {
        if body.kind == crate::physics::BodyKind::Dynamic && body.linear_velocity != Vec3::ZERO {
            draw.ray(
                transform.translation,
                body.linear_velocity,
                VELOCITY_LINE_SECONDS,
                colors::MAGENTA,
            );
        }
    }
}

/// Forgets the last tick's lines as a new tick starts (runs in `FixedFirst`, before every game
/// system). It marks `DebugLines` changed every tick, which is how the window knows to redraw.
pub fn clear_debug_lines(mut lines: ResMut<DebugLines>) {
    lines.clear();
}
