//! [`QueryError`]: a spatial query asked with input it cannot answer.
//!
//! This module must never answer a query.

use bevy::math::{Quat, Vec3};

/// Why a query has no answer.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum QueryError {
    /// An input holds a NaN or an infinity.
    #[error("the query's {what} {value} is not finite")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Its value.
        value: Vec3,
    },
    /// A ray or shape cast whose direction has no length.
    #[error("the cast's direction {0} has no length")]
    ZeroDirection(Vec3),
    /// A maximum distance below 0 or NaN (0 and infinity are allowed).
    #[error("the cast's maximum distance {0} must be from 0 to infinity")]
    MaxDistance(f32),
    /// A query shape's rotation holds a NaN or an infinity, or has no length.
    #[error("the query shape's rotation {0} is not a finite rotation")]
    Rotation(Quat),
    /// A query shape whose size is negative, NaN or infinite.
    #[error("the query shape's {what} {value} must be finite and not negative")]
    ShapeSize {
        /// Which size.
        what: &'static str,
        /// Its value.
        value: f32,
    },
    /// A half-space as the query shape: it is unbounded, so it can be neither cast nor
    /// overlapped (test a point against it, or cast a box or a ray instead).
    #[error("a half-space cannot be a query shape: it is unbounded")]
    Unbounded,
    /// A level mesh as the query shape: cast or overlap a sphere, box or capsule instead.
    #[error("a mesh cannot be a query shape: cast or overlap a sphere, a box or a capsule")]
    MeshShape,
    /// An axis-aligned box whose minimum exceeds its maximum on some axis.
    #[error("the box's minimum {min} exceeds its maximum {max}")]
    InvertedBox {
        /// The minimum corner given.
        min: Vec3,
        /// The maximum corner given.
        max: Vec3,
    },
}
