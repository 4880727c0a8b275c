//! The word layout of the GPU physics buffers and push constants, mirrored from
//! `src/shaders/physics_layout.glsl`.
//!
//! This module owns the offsets the host writes and reads the physics buffers at, and the push
//! constant block every physics pipeline takes ([`StepConstants`]). It must change only together
//! with the GLSL file; `docs/gpu.md` lists the same layout. Everything crosses as raw 32-bit words.

use bevy::math::Vec3;

/// Words per body slot in the bodies buffer.
pub const BODY_STRIDE: usize = 52;
/// Model matrix, 16 words, column-major.
pub const BODY_MATRIX: usize = 0;
/// Linear velocity, 3 words.
pub const BODY_LINEAR: usize = 16;
/// Mass, 1 word.
pub const BODY_MASS: usize = 19;
/// Angular velocity, 3 words.
pub const BODY_ANGULAR: usize = 20;
/// Gravity scale, 1 word.
pub const BODY_GRAVITY_SCALE: usize = 23;
/// Custom values, 4 words.
pub const BODY_CUSTOM: usize = 24;
/// Shape kind (`SHAPE_*`), 1 word.
pub const BODY_SHAPE: usize = 28;
/// Shape parameters, 3 words.
pub const BODY_SHAPE_PARAMS: usize = 29;
/// Body kind (`KIND_*`), 1 word.
pub const BODY_KIND: usize = 32;
/// Collision layer memberships, 1 word.
pub const BODY_MEMBERSHIPS: usize = 33;
/// Collision layer filters, 1 word.
pub const BODY_FILTERS: usize = 34;
/// Flags (`FLAG_*`), 1 word.
pub const BODY_FLAGS: usize = 35;
/// Rule kind (`RULE_*`), 1 word.
pub const BODY_RULE: usize = 36;
/// Rule parameter (period or height), 1 word.
pub const BODY_RULE_PARAM: usize = 37;
/// Rule state: 1 while below the `EmitBelow` height.
pub const BODY_RULE_EDGE: usize = 38;
/// Rule state: 1 when the rule emitted on the last tick.
pub const BODY_RULE_EMITTED: usize = 39;
/// Rule state: the GPU clock of the last emission, seconds.
pub const BODY_RULE_LAST: usize = 40;
/// Friction coefficient, 1 word.
pub const BODY_FRICTION: usize = 41;
/// Restitution, 1 word.
pub const BODY_RESTITUTION: usize = 42;
/// The inverse of the inertia tensor about the centre in the body's frame (diagonal), 3 words;
/// zero for kinematic and static bodies.
pub const BODY_INV_INERTIA: usize = 43;
/// Words `0 .. BODY_HASHED_WORDS` are simulation state and configuration, hashed every tick; the
/// rest of a record is the contact pass's scratch.
pub const BODY_HASHED_WORDS: usize = 46;

/// A sphere.
pub const SHAPE_SPHERE: u32 = 0;
/// A box.
pub const SHAPE_BOX: u32 = 1;
/// A capsule.
pub const SHAPE_CAPSULE: u32 = 2;
/// A half-space (CPU colliders only).
pub const SHAPE_HALF_SPACE: u32 = 3;

/// Moved by gravity, contacts and velocity.
pub const KIND_DYNAMIC: u32 = 0;
/// Moved by velocity only.
pub const KIND_KINEMATIC: u32 = 1;
/// Never moves.
pub const KIND_STATIC: u32 = 2;

/// The slot holds a body.
pub const FLAG_OCCUPIED: u32 = 1;
/// The body or collider is a sensor: it neither pushes nor is pushed.
pub const FLAG_SENSOR: u32 = 2;

/// No rule.
pub const RULE_NONE: u32 = 0;
/// `GpuRule::EmitEvery`.
pub const RULE_EMIT_EVERY: u32 = 1;
/// `GpuRule::EmitBelow`.
pub const RULE_EMIT_BELOW: u32 = 2;

/// Words per command: kind, slot, 12 argument words.
pub const COMMAND_STRIDE: usize = 14;
/// Teleport: rotation columns (9) and translation (3).
pub const COMMAND_TELEPORT: u32 = 0;
/// Set velocity: linear (3), angular (3).
pub const COMMAND_SET_VELOCITY: u32 = 1;
/// Impulse (3).
pub const COMMAND_IMPULSE: u32 = 2;
/// Set the custom values (4).
pub const COMMAND_SET_CUSTOM: u32 = 3;

/// Words per CPU collider.
pub const COLLIDER_STRIDE: usize = 24;
/// Model matrix, 16 words.
pub const COLLIDER_MATRIX: usize = 0;
/// Shape kind.
pub const COLLIDER_SHAPE: usize = 16;
/// Shape parameters, 3 words.
pub const COLLIDER_PARAMS: usize = 17;
/// Layer memberships.
pub const COLLIDER_MEMBERSHIPS: usize = 20;
/// Layer filters.
pub const COLLIDER_FILTERS: usize = 21;
/// Flags (`FLAG_SENSOR`).
pub const COLLIDER_FLAGS: usize = 22;
/// Friction coefficient.
pub const COLLIDER_FRICTION: usize = 23;

/// Ints per slot in the pushes buffer: position push (2^-20 m), velocity change (2^-16 m/s),
/// angular velocity change (2^-16 rad/s).
pub const PUSH_STRIDE: usize = 9;

/// Words before the first event: count, lost.
pub const EVENT_HEADER: usize = 2;
/// Words per event: slot, kind, tick (2), rotation columns (9), translation (3).
pub const EVENT_STRIDE: usize = 16;
/// A timer event.
pub const EVENT_TIMER: u32 = 0;
/// A below-height event.
pub const EVENT_BELOW: u32 = 1;

/// `physics.comp`: apply commands and integrate.
pub const MODE_INTEGRATE: u32 = 0;
/// `physics.comp`: apply contact sums and run rules.
pub const MODE_APPLY: u32 = 1;
/// `physics_contacts.comp`: fill the grid and the fallback list.
pub const MODE_INSERT: u32 = 0;
/// `physics_contacts.comp`: sum each body's pushes.
pub const MODE_CONTACTS: u32 = 1;

/// Bindings of every physics pipeline: bodies, commands, colliders, grid, pushes, events, hash.
pub const STORAGE_BUFFERS: u32 = 7;
/// Invocations per work group (`local_size_x`).
pub const WORKGROUP_SIZE: u32 = 64;

/// The push constant block of every physics pipeline (`Step` in `physics_layout.glsl`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepConstants {
    /// The GPU tick being simulated.
    pub tick: u64,
    /// Seconds per tick.
    pub fixed_delta: f32,
    /// m/s^2.
    pub gravity: [f32; 3],
    /// The pipeline's mode (`MODE_*`).
    pub mode: u32,
    /// Slots.
    pub capacity: u32,
    /// Hash grid buckets; 0 for none.
    pub grid_cells: u32,
    /// Metres per grid cell.
    pub cell_size: f32,
    /// Event buffer entries.
    pub max_events: u32,
    /// CPU colliders uploaded.
    pub collider_count: u32,
}

/// Bytes of [`StepConstants`] as pushed.
pub const STEP_CONSTANT_BYTES: u32 = 48;

impl StepConstants {
    /// The block's bytes, in the GLSL member order, little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let words = [
            self.tick as u32,
            (self.tick >> 32) as u32,
            self.fixed_delta.to_bits(),
            self.gravity[0].to_bits(),
            self.gravity[1].to_bits(),
            self.gravity[2].to_bits(),
            self.mode,
            self.capacity,
            self.grid_cells,
            self.cell_size.to_bits(),
            self.max_events,
            self.collider_count,
        ];
        words.iter().flat_map(|word| word.to_le_bytes()).collect()
    }
}

/// The sizes of a GPU physics world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuPhysicsConfig {
    /// Body slots; every body's slot is below it.
    pub capacity: u32,
    /// Edge of a hash-grid cell, metres. A body whose bounding sphere is wider than 0.9 of a cell
    /// goes to the fallback list, which every body scans; size cells to fit most bodies.
    pub cell_size: f32,
    /// Hash-grid buckets; 0 gives no hash memory, and every body goes through the fallback list
    /// (same results, O(n^2) work).
    pub grid_cells: u32,
    /// Events one tick can report; more are counted in `GpuTickResult::lost_events`.
    pub max_events: u32,
}

/// The fraction of a grid cell a body's bounding diameter may span and still go into the hash grid
/// (`OVERSIZED_FRACTION` in `physics_contacts.comp`); wider bodies go to the fallback list, which
/// every body scans each tick.
pub const GRID_FIT_FRACTION: f32 = 0.9;

impl GpuPhysicsConfig {
    /// The widest bounding diameter a body may have and still go into the hash grid.
    pub fn widest_grid_body(&self) -> f32 {
        GRID_FIT_FRACTION * self.cell_size
    }
}

/// The diameter of the sphere around a shape's centre that holds the whole shape, as the GPU
/// computes it for the grid (`None` for a half-space or a mesh, which are not GPU bodies).
pub fn bounding_diameter(shape: &crate::physics::Shape) -> Option<f32> {
    use crate::physics::Shape;
    let radius = match *shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { half_extents } => half_extents.length(),
        Shape::Capsule {
            half_height,
            radius,
        } => half_height + radius,
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => return None,
    };
    Some(2.0 * radius)
}

impl Default for GpuPhysicsConfig {
    fn default() -> Self {
        GpuPhysicsConfig {
            capacity: 1024,
            cell_size: 2.0,
            grid_cells: 4096,
            max_events: 1024,
        }
    }
}

/// One tick to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuStepParams {
    /// The GPU tick being simulated: the ticks completed before it. The GPU clock is
    /// `tick * fixed_delta` (exactly `(tick as f32) * fixed_delta` below 2^32 ticks).
    pub tick: u64,
    /// Seconds per tick.
    pub fixed_delta: f32,
    /// m/s^2, scaled by each body's gravity scale.
    pub gravity: Vec3,
}
