//! [`ColliderTree`]: the colliders a query system sees, copied once per run of the system, with a
//! bounding-volume hierarchy over their bounds, so a query tests the colliders near it rather than
//! every collider.
//!
//! On a system's first query of a run, every collider is read as it stands (so bodies spawned,
//! moved, slept or despawned earlier in the tick are seen as they are now) and its bounds taken.
//! When the same colliders are there as in the system's last run, the tree is refitted to their
//! new bounds; otherwise it is rebuilt. The tree is a cache of the colliders' current state, never
//! state of its own: a rollback changes the colliders, and the next run reads them again.
//!
//! The tree only chooses which colliders a query tests; every answer comes from the exact tests
//! and is ordered by (distance bits, `SimId`) or by `SimId`, so it never depends on the tree's
//! shape or visiting order. Its bounds are grown by [`BOUNDS_MARGIN`] (and a little more far from
//! the origin), more than the queries' own tolerance, so no collider an exact test would hit is
//! left out by a rounding of its box. This module must never change simulation state.

use bevy::math::{Quat, Vec3};
use bevy::prelude::Entity;

use crate::physics::geometry::Convex;
use crate::physics::geometry::bvh::{Bounds, Bvh};
use crate::physics::{Collider, LevelMeshes, Shape};
use crate::state::SimId;

/// How much every collider's bounds are grown, in metres, besides `1e-5` of their distance from
/// the origin.
pub const BOUNDS_MARGIN: f32 = 1.0e-3;

/// The world box around a box of a frame at `position` turned by `rotation`.
fn placed_box(local: Bounds, position: Vec3, rotation: Quat) -> (Vec3, Vec3) {
    let m = crate::runtime::sim_math::rotation_matrix(rotation);
    let placed = local.placed(position, &[m.x_axis, m.y_axis, m.z_axis]);
    (placed.min, placed.max)
}

/// One collider as a query sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    /// The collider's entity.
    pub entity: Entity,
    /// Its simulation id.
    pub sim_id: SimId,
    /// Its position.
    pub position: Vec3,
    /// Its rotation.
    pub rotation: Quat,
    /// Its shape and material.
    pub collider: Collider,
    /// The layers it is on (`CollisionLayers::memberships`, every layer without one).
    pub memberships: u32,
}

/// The colliders of one run of a query system, and a tree over the bounded ones.
#[derive(Default)]
pub struct ColliderTree {
    /// The colliders, in the order the ECS gave them.
    entries: Vec<Entry>,
    /// The entries with no bounds (half-spaces, and meshes missing from `LevelMeshes`): tested by
    /// every query.
    unbounded: Vec<u32>,
    /// The tree over the bounded entries (its items index `bounded`).
    tree: Bvh,
    /// The entry each tree item is.
    bounded: Vec<u32>,
    /// The bounds of each tree item.
    item_bounds: Vec<Bounds>,
    /// The run of the system this was read in.
    pub(super) run: Option<bevy::ecs::change_detection::Tick>,
}

impl ColliderTree {
    /// Replaces the colliders with `entries`, refitting the tree when they are the same
    /// colliders as before and rebuilding it otherwise.
    pub fn refresh(&mut self, entries: Vec<Entry>, meshes: &LevelMeshes) {
        let same = entries.len() == self.entries.len()
            && entries
                .iter()
                .zip(&self.entries)
                .all(|(a, b)| a.entity == b.entity && a.collider.shape == b.collider.shape);
        self.entries = entries;
        self.unbounded.clear();
        let mut bounded = Vec::with_capacity(self.entries.len());
        let mut item_bounds = Vec::with_capacity(self.entries.len());
        for (index, entry) in self.entries.iter().enumerate() {
            let reach = match entry.collider.shape {
                Shape::Mesh { mesh } => meshes
                    .get(mesh)
                    .map(|mesh| placed_box(mesh.bounds(), entry.position, entry.rotation)),
                shape => Convex::placed(&shape, entry.position, entry.rotation)
                    .map(|convex| convex.bounds()),
            };
            match reach {
                Some((min, max)) => {
                    let far = min.abs().max(max.abs()).max_element();
                    let grow = Vec3::splat(BOUNDS_MARGIN + 1.0e-5 * far);
                    let b = Bounds { min, max }.grown(grow);
                    bounded.push(index as u32);
                    item_bounds.push(b);
                }
                None => self.unbounded.push(index as u32),
            }
        }
        if same && bounded == self.bounded {
            self.tree.refit(&item_bounds);
        } else {
            self.tree = Bvh::build(&item_bounds);
        }
        self.bounded = bounded;
        self.item_bounds = item_bounds;
    }

    /// Calls `visit` with every entry the box test `probe` accepts (always with the unbounded
    /// ones), until `visit` returns false.
    pub fn visit(&self, probe: impl Fn(&Bounds) -> bool, mut visit: impl FnMut(&Entry) -> bool) {
        for &index in &self.unbounded {
            if !visit(&self.entries[index as usize]) {
                return;
            }
        }
        self.tree.visit(&self.item_bounds, probe, |item| {
            visit(&self.entries[self.bounded[item as usize] as usize])
        });
    }
}
