//! Geometry shared by the spatial queries and the solver's continuous collision: convex shapes as
//! support mappings ([`convex`]), GJK's simplex ([`simplex`]), the shape cast and overlap test
//! between two convex shapes ([`gjk`]), and a bounding-volume hierarchy of boxes ([`bvh`]).
//!
//! Pure functions of their inputs, in the solver's bit-stable operations. This folder must never
//! read the world or keep state.

pub mod bvh;
pub mod convex;
pub mod gjk;
pub mod mesh;
pub mod simplex;

pub use convex::{Convex, Core};
pub use gjk::{CastHit, cast, cast_against_half_space, overlap};
