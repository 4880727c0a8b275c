//! [`LevelMeshes`]: the static triangle meshes (and height grids, which become meshes) that a
//! level's `Shape::Mesh` colliders name by their content id.
//!
//! A mesh never changes once made: it is named by the hash of its vertices and indices, so the
//! `Collider` that names it (and is hashed, snapshotted and compared like every collider) stands
//! for every vertex, and a restored or re-simulated tick finds the same mesh under the same id.
//! Meshes are added when a scene is spawned (or by a game, through [`LevelMeshes::insert`]) and
//! never removed, so a rollback that brings back a despawned level collider finds its mesh.
//!
//! This module owns the store only: it must never collide or query.

use std::collections::BTreeMap;
use std::sync::Arc;

use bevy::prelude::Resource;

use super::geometry::mesh::TriangleMesh;

/// Every level mesh, by content id. Cloning it is one reference count (the solver takes a copy
/// into its step parameters every tick); adding a mesh copies the map only while a clone holds it.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct LevelMeshes {
    meshes: Arc<BTreeMap<u64, Arc<TriangleMesh>>>,
}

impl LevelMeshes {
    /// Adds `mesh` (if a mesh of the same id is not there already) and returns its id, for
    /// `Collider::mesh`.
    pub fn insert(&mut self, mesh: TriangleMesh) -> u64 {
        let id = mesh.id();
        if !self.meshes.contains_key(&id) {
            Arc::make_mut(&mut self.meshes).insert(id, Arc::new(mesh));
        }
        id
    }

    /// The mesh of id `id`.
    pub fn get(&self, id: u64) -> Option<&TriangleMesh> {
        self.meshes.get(&id).map(|mesh| &**mesh)
    }

    /// How many meshes there are.
    pub fn len(&self) -> usize {
        self.meshes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty()
    }
}
