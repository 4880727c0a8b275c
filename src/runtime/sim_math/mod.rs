//! Bit-exact `f32` math for simulation code: the Rust reference of `src/shaders/sim_math.glsl`.
//!
//! Simulation state must come out with the same bits on every CPU, build and (in
//! `CrossPlatform` mode) GPU. IEEE-754 guarantees that only for a small set of operations:
//! `+ - *`, negation, `abs`, comparisons, `min`/`max`, `floor`/`ceil`/`trunc`, in-range float to
//! integer conversion and bit casts. Everything else a simulation needs is built here from that
//! set, in a fixed order:
//!
//! - [`recip`], [`div`], [`sqrt`], [`inv_sqrt`]: bit-trick seed, three Newton steps, one residual
//!   correction, then an exact midpoint test that picks the correctly rounded result (0 ULP; the
//!   specification asks for 1, and 2 for the inverse square root). GPUs may be 2.5 ULP off for
//!   division, so shaders must call these instead of `/` and `sqrt`.
//! - [`to_int`]: Rust's `as i32` (truncate, saturate, NaN to 0), which GLSL `int()` does not
//!   promise.
//! - [`sin_cos`], [`atan`], [`atan2`], [`asin`], [`acos`]: Cephes-style polynomials.
//! - [`dot2`], [`dot3`], [`dot4`], [`length`], [`normalize`], matrix-vector and quaternion
//!   products, written out left to right.
//! - `Vec2` on a plane: [`length2`], [`normalize2`], [`cross2`], [`perp2`], [`angle2`],
//!   [`from_angle2`], [`rotate2`], from the routines above.
//! - Rotation conversions: [`rotation_from_euler`], [`euler_from_rotation`],
//!   [`rotation_from_scaled_axis`], [`transform_matrix`], [`transform_from_matrix`].
//!
//! Nothing in this module may call `mul_add`, a platform transcendental, or glam's SIMD
//! methods. Changing any output bit here changes every simulation built on it: the pinned
//! checksums in `tests/sim_math.rs` fail when that happens, on purpose.

mod arith;
mod exact;
mod plane;
mod rotation;
mod trig;
mod vector;

pub use arith::{CANONICAL_NAN_BITS, div, flush_subnormal, inv_sqrt, recip, sqrt, to_int};
pub use plane::{angle2, cross2, from_angle2, length2, normalize2, perp2, rotate2};
pub use rotation::{
    EulerOrder, euler_from_rotation, rotation_from_euler, rotation_from_matrix,
    rotation_from_scaled_axis, rotation_matrix, transform_from_matrix, transform_matrix,
};
pub use trig::{FRAC_PI_2, FRAC_PI_4, PI, acos, asin, atan, atan2, sin_cos};
pub use vector::{
    cross, dot2, dot3, dot4, length, mat3_mul_vec3, mat4_mul_vec4, mat4_transform_point, normalize,
    quat_mul, quat_normalize, quat_rotate,
};
