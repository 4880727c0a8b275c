//! The bodies a tick's narrow phase, solve and continuous sweep can look at.
//!
//! After the broad phase and waking, only three kinds of body can take part in the rest of the
//! tick: one the substeps move (awake dynamic or kinematic), one in a candidate pair, and one held
//! by a joint. Every later stage reads a body's mass properties, velocity, displacement or start
//! only through one of those three lists. So the per-body lists of those stages need an entry for
//! these bodies alone, and a world of sleeping bodies does not pay for building the rest: a
//! sleeping box far from anything that moves is in no pair and no joint, and is not moved.
//!
//! The per-body lists keep one slot per body (so a pair or joint finds a body at its index), and
//! a slot outside this set is left as an earlier tick left it, never read. What is computed for a
//! body in the set is exactly what the whole-list version computed, so the bits never change.
//!
//! This module must never decide anything about a body: it only lists them.

use super::SolverBody;
use super::integrate;

/// The involved bodies of one tick (scratch, rebuilt every tick).
#[derive(Debug, Default)]
pub struct Involved {
    /// One per body: whether it is listed.
    marked: Vec<bool>,
    /// The involved bodies by index, ascending, each once.
    pub list: Vec<u32>,
}

impl Involved {
    /// Lists the bodies the substeps move, those in `pairs`, and those at either end of `joints`
    /// (a joint's slot past the last body is the world, not a body).
    pub fn gather(&mut self, bodies: &[SolverBody], pairs: &[(u32, u32)], joints: &[(u32, u32)]) {
        let count = bodies.len();
        self.marked.clear();
        self.marked.resize(count, false);
        let marked = &mut self.marked;
        for (mark, body) in marked.iter_mut().zip(bodies) {
            *mark = integrate::is_moving(body);
        }
        for &(a, b) in pairs.iter().chain(joints) {
            for i in [a as usize, b as usize] {
                if i < count {
                    marked[i] = true;
                }
            }
        }
        self.list.clear();
        self.list
            .extend((0..count as u32).filter(|&i| marked[i as usize]));
    }

    /// One flag per body (of the last [`Involved::gather`]): whether it is listed.
    pub fn marks(&self) -> &[bool] {
        &self.marked
    }

    /// Lists no body: a tick at rest moves nothing and has no pair or joint.
    pub fn clear(&mut self) {
        self.marked.clear();
        self.list.clear();
    }
}

#[cfg(test)]
mod tests {
    use bevy::math::{Quat, Vec3};
    use bevy::prelude::Entity;

    use super::*;
    use crate::physics::components::{BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsId};
    use crate::state::SimId;

    fn body(id: u64, kind: BodyKind, sleeping: bool) -> SolverBody {
        SolverBody {
            sim_id: SimId(id),
            entity: Entity::PLACEHOLDER,
            id: PhysicsId(id as u32),
            kind,
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            mass: 1.0,
            gravity_scale: 1.0,
            collider: Collider::sphere(0.5),
            layers: CollisionLayers::default(),
            sleeping,
            locks: LockedAxes::default(),
        }
    }

    /// Leaving out a body the substeps move (say, listing only pairs and joints) fails this test.
    #[test]
    fn lists_movers_pairs_and_joint_ends_once_in_order() {
        let bodies = [
            body(1, BodyKind::Static, false),
            body(2, BodyKind::Dynamic, true),
            body(3, BodyKind::Dynamic, false),
            body(4, BodyKind::Kinematic, false),
            body(5, BodyKind::Dynamic, true),
            body(6, BodyKind::Dynamic, true),
            body(7, BodyKind::Static, false),
        ];
        let mut involved = Involved::default();
        involved.gather(&bodies, &[(0, 2), (2, 4)], &[(5, 7), (7, 7)]);
        assert_eq!(involved.list, [0, 2, 3, 4, 5]);
        involved.gather(&bodies[..2], &[], &[]);
        assert!(involved.list.is_empty());
    }
}
