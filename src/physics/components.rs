//! The physics components a game puts on its entities.
//!
//! A CPU-simulated body is an entity with a [`Transform`] and a [`Collider`]; a [`RigidBody`] makes
//! it dynamic or kinematic (without one it is a static collider). Everything here is simulation
//! state and is hashed. This module owns the data only: it must never step, sort or query.

use bevy::math::Vec3;
use bevy::prelude::{Component, Transform};
use serde::{Deserialize, Serialize};

/// How a rigid body moves.
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
pub enum BodyKind {
    /// Moved by gravity, contacts and its velocity.
    #[default]
    Dynamic,
    /// Moved by its velocity only; pushes dynamic bodies as if infinitely heavy.
    Kinematic,
    /// Never moves.
    Static,
}

/// Mass and motion of a body (simulation state).
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[require(crate::state::SimId, Transform, PhysicsBody)]
#[serde(default, deny_unknown_fields)]
pub struct RigidBody {
    /// How the body moves.
    pub kind: BodyKind,
    /// Mass in kilograms (dynamic bodies; must be positive and finite, else the body counts as
    /// static).
    pub mass: f32,
    /// Multiplies `PhysicsSettings::gravity` for this body.
    pub gravity_scale: f32,
    /// Metres per second.
    pub linear_velocity: Vec3,
    /// Radians per second, about the world axes.
    pub angular_velocity: Vec3,
}

impl Default for RigidBody {
    fn default() -> Self {
        RigidBody::dynamic(1.0)
    }
}

impl RigidBody {
    /// A dynamic body of `mass` kilograms at rest.
    pub fn dynamic(mass: f32) -> Self {
        RigidBody {
            kind: BodyKind::Dynamic,
            mass,
            gravity_scale: 1.0,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
        }
    }

    /// A kinematic body moving at `linear_velocity`.
    pub fn kinematic(linear_velocity: Vec3) -> Self {
        RigidBody {
            kind: BodyKind::Kinematic,
            linear_velocity,
            ..RigidBody::dynamic(0.0)
        }
    }

    /// A static body.
    pub fn fixed() -> Self {
        RigidBody {
            kind: BodyKind::Static,
            ..RigidBody::dynamic(0.0)
        }
    }

    /// The same body with a velocity.
    pub fn with_velocity(mut self, linear: Vec3, angular: Vec3) -> Self {
        self.linear_velocity = linear;
        self.angular_velocity = angular;
        self
    }
}

/// World axes along and about which a dynamic body may not move (simulation state): an upright
/// character locks its rotation about X and Z, a game on the XY plane locks translation along Z
/// and rotation about X and Y.
///
/// The solver gives a locked axis no inverse mass or inertia, as rapier and avian do: contacts and
/// joints cannot push or turn the body along it, gravity does not move it there, and the body's
/// velocity on a locked axis is set to zero at the start of every tick (so a game that sets one
/// sees it cleared). The axes are the world's, not the body's. Bodies without the component, or
/// with nothing locked, step with the same bits as before locks existed. Only CPU bodies read it.
#[derive(
    Component,
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
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct LockedAxes {
    /// No motion along world X.
    pub translation_x: bool,
    /// No motion along world Y.
    pub translation_y: bool,
    /// No motion along world Z.
    pub translation_z: bool,
    /// No turning about world X.
    pub rotation_x: bool,
    /// No turning about world Y.
    pub rotation_y: bool,
    /// No turning about world Z.
    pub rotation_z: bool,
}

impl LockedAxes {
    /// Nothing locked.
    pub const NONE: LockedAxes = LockedAxes {
        translation_x: false,
        translation_y: false,
        translation_z: false,
        rotation_x: false,
        rotation_y: false,
        rotation_z: false,
    };

    /// Every rotation locked: the body never turns (a character controller's body).
    pub const ROTATION: LockedAxes = LockedAxes {
        rotation_x: true,
        rotation_y: true,
        rotation_z: true,
        ..LockedAxes::NONE
    };

    /// Rotation about X and Z locked: the body stays upright but may spin about Y.
    pub const UPRIGHT: LockedAxes = LockedAxes {
        rotation_x: true,
        rotation_z: true,
        ..LockedAxes::NONE
    };

    /// Motion on the XY plane only: translation along Z and rotation about X and Y locked.
    pub const PLANE_XY: LockedAxes = LockedAxes {
        translation_z: true,
        rotation_x: true,
        rotation_y: true,
        ..LockedAxes::NONE
    };

    /// Whether anything is locked.
    pub fn any(&self) -> bool {
        *self != LockedAxes::NONE
    }

    /// 1 on each free world axis of translation, 0 on each locked one.
    pub fn free_translation(&self) -> Vec3 {
        let free = |locked: bool| if locked { 0.0 } else { 1.0 };
        Vec3::new(
            free(self.translation_x),
            free(self.translation_y),
            free(self.translation_z),
        )
    }

    /// 1 on each free world axis of rotation, 0 on each locked one.
    pub fn free_rotation(&self) -> Vec3 {
        let free = |locked: bool| if locked { 0.0 } else { 1.0 };
        Vec3::new(
            free(self.rotation_x),
            free(self.rotation_y),
            free(self.rotation_z),
        )
    }

    /// Whether any translation is locked.
    pub fn locks_translation(&self) -> bool {
        self.translation_x || self.translation_y || self.translation_z
    }

    /// `v` with its locked translation axes set to zero.
    pub fn clear_translation(&self, v: Vec3) -> Vec3 {
        clear(
            v,
            [self.translation_x, self.translation_y, self.translation_z],
        )
    }

    /// `w` with its locked rotation axes set to zero.
    pub fn clear_rotation(&self, w: Vec3) -> Vec3 {
        clear(w, [self.rotation_x, self.rotation_y, self.rotation_z])
    }
}

/// `v` with the components where `locked` is set made exactly `+0.0`.
fn clear(v: Vec3, locked: [bool; 3]) -> Vec3 {
    let keep = |x: f32, locked: bool| if locked { 0.0 } else { x };
    Vec3::new(
        keep(v.x, locked[0]),
        keep(v.y, locked[1]),
        keep(v.z, locked[2]),
    )
}

/// A collision shape, in the body's local frame (the body's position is the shape's centre).
///
/// Transform scale is not applied: sizes are the numbers given here.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState)]
pub enum Shape {
    /// A ball.
    Sphere {
        /// Metres.
        radius: f32,
    },
    /// A box.
    Box {
        /// Half the size along the local X, Y and Z axes, in metres.
        half_extents: Vec3,
    },
    /// A cylinder with hemispherical caps along the local Y axis.
    Capsule {
        /// Half the length of the axis segment between the cap centres, in metres.
        half_height: f32,
        /// Metres.
        radius: f32,
    },
    /// Everything below a plane through the body's position: grounds and walls. Only static bodies
    /// should carry one.
    HalfSpace {
        /// The plane's outward normal in the body's local frame (unit length).
        normal: Vec3,
    },
    /// A static triangle mesh (a level, or a height grid made into triangles), in the body's local
    /// frame: a surface that every other shape meets from its front (see `physics::level`).
    /// Only static bodies may carry one; GPU bodies do not meet it.
    Mesh {
        /// The mesh's content id in `LevelMeshes` (from `LevelMeshes::insert`, or a scene's
        /// `TriMesh` or `Heightfield`).
        mesh: u64,
    },
}

/// What a body collides as (simulation state).
#[derive(
    Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize, rusting_macros::SimState,
)]
#[serde(deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct Collider {
    /// The shape.
    pub shape: Shape,
    /// Coulomb friction coefficient; two bodies use the geometric mean of theirs (default 0.5).
    #[serde(default = "default_friction")]
    pub friction: f32,
    /// Bounciness in `[0, 1]`; two bodies use the larger of theirs (default 0).
    #[serde(default)]
    pub restitution: f32,
    /// A sensor reports contacts (collision events) but never pushes: pickups, trigger zones.
    #[serde(default)]
    pub sensor: bool,
}

fn default_friction() -> f32 {
    0.5
}

impl Collider {
    fn with_shape(shape: Shape) -> Self {
        Collider {
            shape,
            friction: default_friction(),
            restitution: 0.0,
            sensor: false,
        }
    }

    /// A sphere of `radius` metres.
    pub fn sphere(radius: f32) -> Self {
        Collider::with_shape(Shape::Sphere { radius })
    }

    /// A box with the given half extents.
    pub fn cuboid(half_extents: Vec3) -> Self {
        Collider::with_shape(Shape::Box { half_extents })
    }

    /// A capsule along the local Y axis.
    pub fn capsule(half_height: f32, radius: f32) -> Self {
        Collider::with_shape(Shape::Capsule {
            half_height,
            radius,
        })
    }

    /// A half-space below the plane with the given local normal.
    pub fn half_space(normal: Vec3) -> Self {
        Collider::with_shape(Shape::HalfSpace { normal })
    }

    /// The level mesh of content id `mesh` in `LevelMeshes` (static bodies only).
    pub fn mesh(mesh: u64) -> Self {
        Collider::with_shape(Shape::Mesh { mesh })
    }

    /// The same collider with another friction coefficient.
    pub fn with_friction(mut self, friction: f32) -> Self {
        self.friction = friction;
        self
    }

    /// The same collider as a sensor: it reports contacts and pushes nothing.
    pub fn as_sensor(mut self) -> Self {
        self.sensor = true;
        self
    }

    /// The same collider with another restitution.
    pub fn with_restitution(mut self, restitution: f32) -> Self {
        self.restitution = restitution;
        self
    }
}

/// Which bodies collide: two bodies touch only when each one's `memberships` meet the other's
/// `filters` (simulation state).
#[derive(
    Component,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct CollisionLayers {
    /// The layers this body is on.
    pub memberships: u32,
    /// The layers this body collides with.
    pub filters: u32,
}

impl Default for CollisionLayers {
    fn default() -> Self {
        CollisionLayers {
            memberships: u32::MAX,
            filters: u32::MAX,
        }
    }
}

impl CollisionLayers {
    /// Whether bodies on `self` and `other` may collide.
    pub fn interacts_with(&self, other: &CollisionLayers) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }
}

/// Which solver simulates a body.
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
pub enum BodyClass {
    /// The CPU solver, in `FixedUpdate`.
    #[default]
    Cpu,
    /// The GPU solver; the CPU solver leaves these bodies alone.
    Gpu,
}

/// The solver a body belongs to (simulation state).
#[derive(
    Component,
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
#[serde(default, deny_unknown_fields)]
#[require(crate::state::SimId)]
pub struct PhysicsBody {
    /// CPU or GPU.
    pub class: BodyClass,
}

/// Marks a body the solver has put to sleep (simulation state). Remove it, or give the body a
/// velocity, to wake it.
#[derive(
    Component,
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
#[require(crate::state::SimId)]
pub struct Sleeping;

/// A body's stable slot id, assigned by the solver when the body first simulates and reused only
/// after the body is gone (simulation state).
#[derive(
    Component,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    rusting_macros::SimState,
)]
#[require(crate::state::SimId)]
pub struct PhysicsId(pub u32);
