//! GPU physics bodies and CPU colliders as the host gives them, and their buffer records.
//!
//! This module owns [`GpuBodyInit`] (a GPU body with its rule, [`GpuRule`]), [`GpuCollider`] (a
//! CPU body's collider the GPU bodies collide with), [`GpuBodyState`] (a body read back), and their
//! conversion to and from the word records of `physics_layout.glsl`. Poses go up as
//! `sim_math::transform_matrix` and come back through `sim_math::transform_from_matrix`, so the
//! GPU's model matrix is the state and both directions are bit-exact functions. It must never
//! accept a shape the GPU cannot simulate: a half-space GPU body is [`GpuError::UnsupportedShape`].

use bevy::math::{Mat4, Quat, Vec3};
use bevy::prelude::Transform;

use super::error::GpuError;
use super::physics_layout::*;
use crate::physics::components::{BodyKind, Collider, CollisionLayers, RigidBody, Shape};
use crate::physics::cpu::inverse_local_inertia;
use crate::runtime::sim_math;

/// What a GPU body does on its own, besides moving: the rules that emit [`super::GpuEvent`]s.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    rusting_macros::SimState,
)]
pub enum GpuRule {
    /// Nothing.
    #[default]
    None,
    /// Emits a timer event on every tick during which the GPU clock (`tick * fixed_delta`)
    /// crosses a multiple of `period` seconds of simulated time.
    EmitEvery {
        /// Seconds of simulated time; positive and finite.
        period: f32,
    },
    /// Emits a below event on the tick `translation.y` goes below `height`, once per crossing:
    /// it fires again only after the body has come back up to `height` or above.
    EmitBelow {
        /// Metres.
        height: f32,
    },
}

/// A GPU body as the host sets it up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuBodyInit {
    /// Its slot in the GPU buffers (its `PhysicsId`), below the world's capacity.
    pub slot: u32,
    /// Position, metres.
    pub translation: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// m/s.
    pub linear_velocity: Vec3,
    /// rad/s about the world axes.
    pub angular_velocity: Vec3,
    /// A sphere, box or capsule, with friction, restitution and the sensor flag.
    pub collider: Collider,
    /// Kind, mass and gravity scale (the velocities above are used, not the body's own).
    pub body: RigidBody,
    /// Which bodies and colliders it touches.
    pub layers: CollisionLayers,
    /// What it emits.
    pub rule: GpuRule,
    /// Game values carried, hashed and read back; the solver never reads them.
    pub custom: [f32; 4],
}

/// A CPU body's collider, which GPU bodies collide with. It stays where it is for the GPU tick and
/// pushes GPU bodies; GPU bodies never push it back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuCollider {
    /// Any shape, half-spaces included.
    pub collider: Collider,
    /// Position, metres.
    pub translation: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// Which GPU bodies it touches.
    pub layers: CollisionLayers,
}

/// A GPU body as read back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuBodyState {
    /// Its slot.
    pub slot: u32,
    /// Position, metres (the model matrix's translation).
    pub translation: Vec3,
    /// Orientation, through `sim_math::transform_from_matrix`.
    pub rotation: Quat,
    /// m/s.
    pub linear_velocity: Vec3,
    /// rad/s.
    pub angular_velocity: Vec3,
    /// The game values.
    pub custom: [f32; 4],
}

/// The model matrix of a pose, column-major, through `sim_math::transform_matrix`.
pub(crate) fn pose_matrix(translation: Vec3, rotation: Quat) -> [f32; 16] {
    sim_math::transform_matrix(&Transform {
        translation,
        rotation,
        scale: Vec3::ONE,
    })
    .to_cols_array()
}

/// The translation and rotation of a model matrix, through `sim_math::transform_from_matrix`.
pub(crate) fn matrix_pose(columns: &[f32; 16]) -> (Vec3, Quat) {
    let transform = sim_math::transform_from_matrix(&Mat4::from_cols_array(columns));
    (transform.translation, transform.rotation)
}

fn put(record: &mut [u32], word: usize, values: &[f32]) {
    for (offset, value) in values.iter().enumerate() {
        record[word + offset] = value.to_bits();
    }
}

fn get(record: &[u32], word: usize) -> f32 {
    f32::from_bits(record[word])
}

fn get3(record: &[u32], word: usize) -> Vec3 {
    Vec3::new(
        get(record, word),
        get(record, word + 1),
        get(record, word + 2),
    )
}

fn finite(values: &[f32]) -> bool {
    values.iter().all(|value| value.is_finite())
}

/// The shape kind (`SHAPE_*`) and its three parameter words.
fn shape_words(shape: &Shape) -> (u32, [f32; 3]) {
    match *shape {
        Shape::Sphere { radius } => (SHAPE_SPHERE, [radius, 0.0, 0.0]),
        Shape::Box { half_extents } => (SHAPE_BOX, half_extents.to_array()),
        Shape::Capsule {
            half_height,
            radius,
        } => (SHAPE_CAPSULE, [half_height, radius, 0.0]),
        Shape::HalfSpace { normal } => (SHAPE_HALF_SPACE, normal.to_array()),
        // Never on the device: a GPU body may not be a mesh, and the colliders mirrored to the
        // device leave meshes out (GPU bodies do not meet level meshes).
        Shape::Mesh { .. } => (SHAPE_NONE, [0.0; 3]),
    }
}

/// The shape word of a shape the device has no code for.
const SHAPE_NONE: u32 = u32::MAX;

impl GpuBodyInit {
    /// The body's record (`BODY_STRIDE` words). A dynamic body whose mass is not positive and
    /// finite counts as static, as on the CPU.
    pub(crate) fn record(&self) -> Result<Vec<u32>, GpuError> {
        let invalid = |reason: &str| GpuError::InvalidBody {
            slot: self.slot,
            reason: reason.to_owned(),
        };
        let (shape, params) = shape_words(&self.collider.shape);
        if shape == SHAPE_HALF_SPACE || shape == SHAPE_NONE {
            return Err(GpuError::UnsupportedShape {
                slot: self.slot,
                shape: if shape == SHAPE_NONE {
                    "mesh"
                } else {
                    "half-space"
                },
            });
        }
        if !finite(&params) || params.iter().any(|value| *value < 0.0) {
            return Err(invalid("shape sizes must be finite and not negative"));
        }
        let pose_ok = finite(&self.translation.to_array())
            && finite(&self.rotation.to_array())
            && finite(&self.linear_velocity.to_array())
            && finite(&self.angular_velocity.to_array());
        if !pose_ok {
            return Err(invalid("pose and velocities must be finite"));
        }
        let kind = match self.body.kind {
            BodyKind::Dynamic if self.body.mass > 0.0 && self.body.mass.is_finite() => KIND_DYNAMIC,
            BodyKind::Dynamic | BodyKind::Static => KIND_STATIC,
            BodyKind::Kinematic => KIND_KINEMATIC,
        };
        let (rule, param) = match self.rule {
            GpuRule::None => (RULE_NONE, 0.0),
            GpuRule::EmitEvery { period } => {
                if !(period > 0.0 && period.is_finite()) {
                    return Err(invalid("an EmitEvery period must be positive and finite"));
                }
                (RULE_EMIT_EVERY, period)
            }
            GpuRule::EmitBelow { height } => {
                if !height.is_finite() {
                    return Err(invalid("an EmitBelow height must be finite"));
                }
                (RULE_EMIT_BELOW, height)
            }
        };
        let mut record = vec![0u32; BODY_STRIDE];
        put(
            &mut record,
            BODY_MATRIX,
            &pose_matrix(self.translation, self.rotation),
        );
        put(&mut record, BODY_LINEAR, &self.linear_velocity.to_array());
        put(&mut record, BODY_MASS, &[self.body.mass]);
        put(&mut record, BODY_ANGULAR, &self.angular_velocity.to_array());
        put(&mut record, BODY_GRAVITY_SCALE, &[self.body.gravity_scale]);
        put(&mut record, BODY_CUSTOM, &self.custom);
        record[BODY_SHAPE] = shape;
        put(&mut record, BODY_SHAPE_PARAMS, &params);
        record[BODY_KIND] = kind;
        record[BODY_MEMBERSHIPS] = self.layers.memberships;
        record[BODY_FILTERS] = self.layers.filters;
        record[BODY_FLAGS] = FLAG_OCCUPIED | if self.collider.sensor { FLAG_SENSOR } else { 0 };
        record[BODY_RULE] = rule;
        put(&mut record, BODY_RULE_PARAM, &[param]);
        put(&mut record, BODY_FRICTION, &[self.collider.friction]);
        put(&mut record, BODY_RESTITUTION, &[self.collider.restitution]);
        if kind == KIND_DYNAMIC {
            let inverse = inverse_local_inertia(&self.collider.shape, self.body.mass);
            put(&mut record, BODY_INV_INERTIA, &inverse.to_array());
        }
        Ok(record)
    }
}

impl GpuCollider {
    /// The collider's record (`COLLIDER_STRIDE` words).
    pub(crate) fn record(&self) -> Vec<u32> {
        let (shape, params) = shape_words(&self.collider.shape);
        let mut record = vec![0u32; COLLIDER_STRIDE];
        put(
            &mut record,
            COLLIDER_MATRIX,
            &pose_matrix(self.translation, self.rotation),
        );
        record[COLLIDER_SHAPE] = shape;
        put(&mut record, COLLIDER_PARAMS, &params);
        record[COLLIDER_MEMBERSHIPS] = self.layers.memberships;
        record[COLLIDER_FILTERS] = self.layers.filters;
        record[COLLIDER_FLAGS] = if self.collider.sensor { FLAG_SENSOR } else { 0 };
        put(&mut record, COLLIDER_FRICTION, &[self.collider.friction]);
        record
    }
}

impl GpuBodyState {
    /// The state of the body in `record`, or `None` for an empty slot.
    pub(crate) fn from_record(slot: u32, record: &[u32]) -> Option<Self> {
        if record[BODY_FLAGS] & FLAG_OCCUPIED == 0 {
            return None;
        }
        let mut columns = [0.0f32; 16];
        for (word, value) in columns.iter_mut().enumerate() {
            *value = get(record, BODY_MATRIX + word);
        }
        let (translation, rotation) = matrix_pose(&columns);
        Some(GpuBodyState {
            slot,
            translation,
            rotation,
            linear_velocity: get3(record, BODY_LINEAR),
            angular_velocity: get3(record, BODY_ANGULAR),
            custom: [
                get(record, BODY_CUSTOM),
                get(record, BODY_CUSTOM + 1),
                get(record, BODY_CUSTOM + 2),
                get(record, BODY_CUSTOM + 3),
            ],
        })
    }
}
