//! Spatial queries: asking the world's colliders a question from a fixed system (a hitscan, a
//! line of sight, a ground check, a character's sweep, "who is inside").
//!
//! - [`SpatialQuery`] (a system parameter): the first hit and all hits of a [`Ray`] or a
//!   [`ShapeCast`], and the colliders containing a point or meeting a shape or a box, with a
//!   [`QueryFilter`] (layers, excluded bodies, sensors) and a predicate.
//! - [`shapes`]: the exact ray and point tests of each shape, and their edge cases.
//! - [`shape_cast`]: shape casts and shape and box overlaps, through `physics::geometry`'s GJK.
//! - [`tree`]: the colliders as one run of a system reads them, with a bounding-volume hierarchy
//!   so a query tests only the colliders near it.
//!
//! docs/queries.md says which tick's positions a query sees and how answers are ordered. This
//! folder must never change simulation state.

pub mod error;
pub mod shape_cast;
pub mod shapes;
pub mod spatial;
pub mod tree;

pub use error::QueryError;
pub use shape_cast::{ShapeCast, ShapeHit};
pub use spatial::{QueryFilter, QueryHit, Ray, RayHit, SpatialQuery};
