//! [`QueryError`]: a spatial query asked with input it cannot answer.
//!
//! This module must never answer a query.

use bevy::math::Vec3;

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
    /// A ray whose direction has no length.
    #[error("the ray's direction {0} has no length")]
    ZeroDirection(Vec3),
    /// A maximum distance below 0 or NaN (0 and infinity are allowed).
    #[error("the ray's maximum distance {0} must be from 0 to infinity")]
    MaxDistance(f32),
}
