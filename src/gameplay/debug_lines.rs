//! [`DebugLines`]: lines a game draws to see what its fixed systems do (a ray cast, a path, a
//! contact normal), shown in the window and never part of the simulation.
//!
//! A system takes the [`DebugDraw`] parameter and calls `line`, `ray`, `path` or `cross`. Each
//! system writes into a buffer of its own, which the engine moves into [`DebugLines`] at the
//! schedule's next sync point, so any number of systems draw without ordering among themselves
//! (the fixed schedule treats an unordered conflict as an error, and a shared `ResMut` would be
//! one). The lines a tick drew replace those of the tick before when the next tick starts
//! (`clear_debug_lines`, first in `SimSet::Input`), so the window shows the last tick's lines; a
//! re-simulated tick draws its lines again. Headless, nothing reads them, and drawing costs a push.
//!
//! The lines are presentation: snapshots ignore them and the hash never sees them, and a game
//! must never read them back into the simulation. At most [`MAX_DEBUG_LINES`] are kept a tick;
//! the rest are counted in [`DebugLines::dropped`]. This module must never change simulation
//! state.

use bevy::ecs::system::{Deferred, SystemBuffer, SystemMeta, SystemParam};
use bevy::ecs::world::DeferredWorld;
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
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct DebugLines {
    /// The lines, in the order the systems' buffers reached the resource.
    pub lines: Vec<DebugLine>,
    /// Lines past [`MAX_DEBUG_LINES`] this tick, not kept.
    pub dropped: usize,
}

impl DebugLines {
    /// Keeps `lines`, up to the bound.
    fn extend(&mut self, lines: &mut Vec<DebugLine>) {
        let room = MAX_DEBUG_LINES.saturating_sub(self.lines.len());
        let kept = lines.len().min(room);
        self.dropped += lines.len() - kept;
        self.lines.extend(lines.drain(..kept));
        lines.clear();
    }
}

/// One system's lines until the next sync point.
#[derive(Default)]
pub struct DebugBuffer(Vec<DebugLine>);

impl SystemBuffer for DebugBuffer {
    fn queue(&mut self, _meta: &SystemMeta, mut world: DeferredWorld) {
        if self.0.is_empty() {
            return;
        }
        if let Some(mut lines) = world.get_resource_mut::<DebugLines>() {
            lines.extend(&mut self.0);
        } else {
            self.0.clear();
        }
    }
}

/// Draws debug lines from a system (a system parameter; see the module docs).
#[derive(SystemParam)]
pub struct DebugDraw<'s> {
    buffer: Deferred<'s, DebugBuffer>,
}

impl DebugDraw<'_> {
    /// A segment from `from` to `to`.
    pub fn line(&mut self, from: Vec3, to: Vec3, color: DebugColor) {
        self.buffer.0.push(DebugLine { from, to, color });
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

/// Forgets the last tick's lines as a new tick starts (runs first in `SimSet::Input`).
pub fn clear_debug_lines(mut lines: ResMut<DebugLines>) {
    if !lines.lines.is_empty() || lines.dropped != 0 {
        lines.lines.clear();
        lines.dropped = 0;
    }
}
