//! Continuous collision: a fast body is stopped at the first static or kinematic surface on its
//! path through the tick, so it cannot pass through a thin wall between two ticks.
//!
//! Speculative contacts (see `solver`) already stop a body that comes straight at a surface; one
//! that comes at an angle, or spins, can still end the tick on the far side, since the contact is
//! solved at points found before the move. So after the solve, every awake dynamic body that moved
//! more than half its smallest extent this tick is swept, at its new rotation, from where it
//! started to where it ended, against the static and kinematic colliders its broad-phase pairs name
//! ([`crate::physics::geometry::cast`]), and put back at the first one it meets, keeping its
//! velocity: the next tick's contacts stop it at the surface. This is Box2D v3's continuous
//! pass, with a linear sweep for its time of impact.
//!
//! A body already within [`START_BAND`] of a surface when the sweep starts (sliding or rolling on
//! it) would be held in place by it; for that surface only a ball of a quarter of the body's
//! smallest extent around its centre is swept, which stops the centre from crossing but lets the
//! body move along the surface. Dynamic bodies never stop each other here (their contacts do).
//!
//! Bodies are swept in body order, each against targets that do not move in this pass, so the
//! result is the same on every thread count. The fast bodies are found first, so a tick in which
//! none moved that far (most ticks of most scenes) visits no pair. This module must never change
//! velocities.

use bevy::math::Vec3;

use super::SolverBody;
use crate::physics::components::{BodyKind, Shape};
use crate::physics::geometry::{CastHit, Convex, Core, cast, cast_against_half_space};
use crate::physics::level::LevelMeshes;
use crate::runtime::sim_math::quat_rotate;

/// How close to a surface (metres) a body may start its sweep and still be swept at full size.
pub const START_BAND: f32 = 0.005;

/// The sweep's buffers, reused between ticks. Never part of the simulation state.
#[derive(Default)]
pub struct Sweeps {
    /// Where each body was when the tick began.
    pub starts: Vec<Vec3>,
    /// How far along its path each body may go (infinity when nothing stops it).
    reach: Vec<f32>,
    /// Whether each involved body moved far enough this tick to be swept.
    fast: Vec<bool>,
}

impl Sweeps {
    /// Remembers where the `involved` bodies start the tick, each at its body's slot (only a body
    /// in a pair can be swept, and every such body is involved).
    pub fn begin(&mut self, bodies: &[SolverBody], involved: &[u32]) {
        self.starts.resize(bodies.len(), Vec3::ZERO);
        for &i in involved {
            self.starts[i as usize] = bodies[i as usize].position;
        }
    }
}

/// Half a body's smallest extent: a move longer than this in one tick is swept.
fn inner_radius(shape: &Shape) -> f32 {
    match *shape {
        Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius,
        Shape::Box { half_extents: h } => h.x.min(h.y).min(h.z),
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => f32::INFINITY,
    }
}

/// Puts every fast body back at the first static or kinematic surface on its path this tick.
/// Only a body in one of `pairs` can be stopped, and every such body is among `involved` (whose
/// starts [`Sweeps::begin`] kept).
pub fn stop_fast_bodies(
    bodies: &mut [SolverBody],
    pairs: &[(u32, u32)],
    involved: &[u32],
    meshes: &LevelMeshes,
    sweeps: &mut Sweeps,
) {
    sweeps.reach.resize(bodies.len(), f32::INFINITY);
    sweeps.fast.resize(bodies.len(), false);
    let mut any_fast = false;
    for &i in involved {
        let i = i as usize;
        sweeps.reach[i] = f32::INFINITY;
        sweeps.fast[i] = is_fast(&bodies[i], sweeps.starts[i]);
        any_fast |= sweeps.fast[i];
    }
    if !any_fast {
        // Nothing to sweep: most ticks of most scenes, and no reason to visit every pair.
        return;
    }
    for &(a, b) in pairs {
        if !(sweeps.fast[a as usize] || sweeps.fast[b as usize]) {
            continue;
        }
        for (mover, target) in [(a, b), (b, a)] {
            let (body, other) = (&bodies[mover as usize], &bodies[target as usize]);
            if !sweeps.fast[mover as usize]
                || other.kind == BodyKind::Dynamic
                || body.collider.sensor
                || other.collider.sensor
            {
                continue;
            }
            let start = sweeps.starts[mover as usize];
            if let Some(distance) = first_touch(body, start, other, meshes) {
                let reach = &mut sweeps.reach[mover as usize];
                *reach = reach.min(distance);
            }
        }
    }
    for &index in involved {
        let (body, reach) = (&mut bodies[index as usize], sweeps.reach[index as usize]);
        if reach.is_finite() {
            let start = sweeps.starts[index as usize];
            let path = body.position - start;
            let (direction, length) = super::math::direction_or(path, Vec3::ZERO);
            if reach < length {
                body.position = start + direction * reach;
            }
        }
    }
}

fn is_fast(body: &SolverBody, start: Vec3) -> bool {
    if !body.is_awake_dynamic() {
        return false;
    }
    let path = body.position - start;
    let limit = 0.5 * inner_radius(&body.collider.shape);
    crate::runtime::sim_math::dot3(path, path) > limit * limit
}

/// How far along its path from `start` the body first touches `target`, if it does within the
/// path and not where it starts.
fn first_touch(
    body: &SolverBody,
    start: Vec3,
    target: &SolverBody,
    meshes: &LevelMeshes,
) -> Option<f32> {
    let (direction, length) = super::math::direction_or(body.position - start, Vec3::ZERO);
    let full = Convex::placed(&body.collider.shape, start, body.rotation)?;
    let banded = Convex {
        radius: full.radius + START_BAND,
        ..full
    };
    let sweep = |moving: &Convex| -> Option<CastHit> {
        match target.collider.shape {
            Shape::HalfSpace { normal } => cast_against_half_space(
                moving,
                start,
                direction,
                length,
                target.position,
                quat_rotate(target.rotation, normal),
            ),
            Shape::Mesh { mesh } => {
                let mesh = meshes.get(mesh)?;
                let local = Convex::into_frame(target.position, target.rotation);
                let moved = moving.mapped(&local);
                mesh.cast_shape(&moved, local(start, true), local(direction, false), length)
            }
            shape => Convex::placed(&shape, target.position, target.rotation)
                .and_then(|placed| cast(moving, start, direction, length, &placed)),
        }
    };
    let hit = match sweep(&banded)? {
        hit if hit.distance > 0.0 => hit,
        _ => {
            // Touching where it starts: sweep only the body's centre, grown a little.
            let centre = Convex {
                core: Core::Point(start),
                radius: 0.25 * inner_radius(&body.collider.shape),
            };
            sweep(&centre)?
        }
    };
    (hit.distance > 0.0).then_some(hit.distance)
}
