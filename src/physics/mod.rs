//! Rigid-body physics: components, resources, the persistent solver state and the CPU solver.
//!
//! - [`components`]: `RigidBody`, `Collider`, `CollisionLayers`, `LockedAxes`, `PhysicsBody`,
//!   `Sleeping`, `PhysicsId`: what a game puts on entities.
//! - [`resources`]: `PhysicsSettings`, `PhysicsIdRegistry`, `CollisionEvents` and the solver
//!   constants `SOLVER_ITERATIONS`, `POSITION_ITERATIONS`, `SLEEP_STEPS`.
//! - [`joint`]: `Joint`, two bodies held by a hinge, slider, ball joint, weld or rope.
//! - [`world`]: `PhysicsWorld`, the state the solver carries between ticks.
//! - [`level`]: `LevelMeshes`, the static triangle meshes that `Shape::Mesh` colliders name.
//! - [`cpu`]: the solver itself, plain Rust over slices.
//! - [`gpu`]: Vulkan compute (`GpuContext`), the simulation shaders and their precision check.
//! - [`plugin`]: `PhysicsPlugin` and the fixed system that copies bodies in and out.
//! - [`query`]: `SpatialQuery`, rays, shape casts and overlaps against the colliders, from fixed
//!   systems.
//! - [`geometry`]: convex shapes, GJK shape casts and overlap tests, shared by the queries and
//!   the solver's continuous collision.

pub mod body_copy;
pub mod components;
pub mod cpu;
pub mod geometry;
pub mod gpu;
pub mod joint;
pub mod level;
pub mod plugin;
pub mod query;
pub mod resources;
pub mod world;

pub use components::{
    BodyClass, BodyKind, Collider, CollisionLayers, LockedAxes, PhysicsBody, PhysicsId, RigidBody,
    Shape, Sleeping,
};
pub use joint::{Joint, JointError, JointFrame, JointKind, JointLimits, Motor, Spring};
pub use level::LevelMeshes;
pub use plugin::PhysicsPlugin;
pub use resources::{
    CollisionEvent, CollisionEventKind, CollisionEvents, ContactReport, JointBroke, JointEvents,
    PhysicsIdRegistry, PhysicsSettings, SLEEP_STEPS, SOLVER_ITERATIONS, SOLVER_SUBSTEPS, Touch,
};
pub use world::PhysicsWorld;
