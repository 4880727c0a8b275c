//! Spatial queries: asking the world's colliders a question from a fixed system (a hitscan, a
//! line of sight, a ground check, "who is inside").
//!
//! - [`SpatialQuery`] (a system parameter): the first hit and all hits of a [`Ray`], and the
//!   colliders containing a point, with a [`QueryFilter`] (layers, excluded bodies, sensors) and
//!   a predicate.
//! - [`shapes`]: the exact ray and point tests of each shape, and their edge cases.
//!
//! docs/queries.md says which tick's positions a query sees and how answers are ordered. This
//! folder must never change simulation state.

pub mod error;
pub mod shapes;
pub mod spatial;

pub use error::QueryError;
pub use spatial::{QueryFilter, Ray, RayHit, SpatialQuery};
