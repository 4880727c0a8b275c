//! Integration within a substep: gravity into velocities, velocities into positions and rotations.
//!
//! Semi-implicit Euler: velocities first, then positions from the solved velocities. Rotations
//! advance by the exact rotation of `angular_velocity * h` (`math::rotation_from_scaled_axis`,
//! `sim_math`'s with the CPU's square root and division),
//! accumulated over the substeps and applied to the body once at the end of the tick, renormalized
//! so they never drift off unit length. Each body also records how far it
//! has moved since the start of the tick, which the contact solver uses to track gaps. A body's
//! gravity, step and end of tick read only its own values, so a large world's bodies are moved on
//! the pool's threads with the same bits. This module must never look at contacts.

use bevy::math::{Quat, Vec3};
use rayon::prelude::*;

use super::body_state::{Displacement, Velocity};
use super::{SolverBody, StepParams, each_on_the_pool, math};
use crate::physics::components::BodyKind;
use crate::runtime::{guard_worker, sim_math};

/// The bodies that [`positions`] moves (awake dynamic and kinematic ones), by index, ascending,
/// into `out`, found among `involved` (ascending, and holding every such body): the substeps visit
/// these and leave the rest (asleep or fixed) alone.
pub fn moving(bodies: &[SolverBody], involved: &[u32], out: &mut Vec<u32>) {
    out.clear();
    out.extend(
        involved
            .iter()
            .copied()
            .filter(|&i| is_moving(&bodies[i as usize])),
    );
}

/// Whether the substeps move `body`: awake dynamic, or kinematic.
pub fn is_moving(body: &SolverBody) -> bool {
    match body.kind {
        BodyKind::Dynamic => !body.sleeping,
        BodyKind::Kinematic => true,
        BodyKind::Static => false,
    }
}

/// Adds `h` seconds of gravity to every awake dynamic body's velocity (among `moving`).
pub fn gravity(
    params: &StepParams,
    h: f32,
    bodies: &[SolverBody],
    moving: &[u32],
    velocities: &mut [Velocity],
) {
    let fall = |body: &SolverBody, velocity: &mut Velocity| {
        if body.is_awake_dynamic() {
            velocity.linear += params.settings.gravity * (body.gravity_scale * h);
            if body.locks.locks_translation() {
                velocity.linear = body.locks.clear_translation(velocity.linear);
            }
        }
    };
    // Each body's velocity depends on that body alone.
    if each_on_the_pool(bodies.len(), moving.len()) {
        velocities
            .par_iter_mut()
            .zip(bodies.par_iter())
            .filter(|(_, body)| is_moving(body))
            .for_each_init(
                || guard_worker(|| "before the substep's gravity".to_owned()),
                |_, (velocity, body)| fall(body, velocity),
            );
        return;
    }
    for &i in moving {
        fall(&bodies[i as usize], &mut velocities[i as usize]);
    }
}

/// Moves the `moving` bodies (awake dynamic and kinematic ones) by `h` seconds of their velocity.
pub fn positions(
    h: f32,
    bodies: &mut [SolverBody],
    moving: &[u32],
    velocities: &[Velocity],
    displacements: &mut [Displacement],
) {
    let advance = |body: &mut SolverBody, velocity: &Velocity, moved: &mut Displacement| {
        let step = velocity.linear * h;
        body.position += step;
        moved.position += step;
        if velocity.angular != Vec3::ZERO {
            let turn = math::rotation_from_scaled_axis(velocity.angular * h);
            moved.rotation = math::quat_unit(sim_math::quat_mul(turn, moved.rotation));
            let m = sim_math::rotation_matrix(moved.rotation);
            moved.matrix = [m.x_axis, m.y_axis, m.z_axis];
        }
    };
    if each_on_the_pool(bodies.len(), moving.len()) {
        bodies
            .par_iter_mut()
            .zip(velocities.par_iter())
            .zip(displacements.par_iter_mut())
            .filter(|((body, _), _)| is_moving(body))
            .for_each_init(
                || guard_worker(|| "before the substep's moves".to_owned()),
                |_, ((body, velocity), moved)| advance(body, velocity, moved),
            );
        return;
    }
    for &i in moving {
        let (body, velocity) = (&mut bodies[i as usize], &velocities[i as usize]);
        advance(body, velocity, &mut displacements[i as usize]);
    }
}

/// Ends the tick of each moving body: its rotation over the tick (the product of its substep
/// turns) applied to its starting rotation (no other body turns), and a dynamic body's solved
/// velocity kept.
pub fn finish(
    bodies: &mut [SolverBody],
    moving: &[u32],
    velocities: &[Velocity],
    displacements: &[Displacement],
) {
    let end = |body: &mut SolverBody, velocity: &Velocity, moved: &Displacement| {
        if moved.rotation != Quat::IDENTITY {
            body.rotation = math::quat_unit(sim_math::quat_mul(moved.rotation, body.rotation));
        }
        if body.is_awake_dynamic() {
            body.linear_velocity = velocity.linear;
            body.angular_velocity = velocity.angular;
        }
    };
    if each_on_the_pool(bodies.len(), moving.len()) {
        bodies
            .par_iter_mut()
            .zip(velocities.par_iter())
            .zip(displacements.par_iter())
            .filter(|((body, _), _)| is_moving(body))
            .for_each_init(
                || guard_worker(|| "before the end of the tick's moves".to_owned()),
                |_, ((body, velocity), moved)| end(body, velocity, moved),
            );
        return;
    }
    for &i in moving {
        let i = i as usize;
        end(&mut bodies[i], &velocities[i], &displacements[i]);
    }
}
