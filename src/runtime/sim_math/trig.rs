//! Sine, cosine, arc tangent, arc sine and arc cosine as fixed polynomials.
//!
//! This module owns the transcendental functions simulation code may call. They follow the
//! Cephes single-precision algorithms (range reduction, then a short polynomial), with every
//! division and square root taken from [`super::arith`], so the result depends only on IEEE-754
//! `+ - *`. It must never call a platform `sin`, `cos`, `atan2`, `asin` or `acos`: those differ
//! between C libraries, CPUs and GPU drivers.
//!
//! Accuracy, checked against `f64` in the tests: within about `4e-7` of the true value, and for
//! `sin_cos` over `|x| <= 8192`. Beyond that range `sin_cos` loses accuracy (the argument
//! reduction runs out of bits) but keeps giving the same bits everywhere. Every routine reads a
//! subnormal input as zero of its sign, as [`super::arith`] does, so `atan2` of subnormal operands
//! is `atan2` of the flushed zeros, never NaN.

use super::arith::{div, flush_subnormal, recip, sqrt, to_int};

/// `pi` rounded to `f32`.
pub const PI: f32 = std::f32::consts::PI;
/// `pi / 2` rounded to `f32`.
pub const FRAC_PI_2: f32 = std::f32::consts::FRAC_PI_2;
/// `pi / 4` rounded to `f32`.
pub const FRAC_PI_4: f32 = std::f32::consts::FRAC_PI_4;

/// `4 / pi`, picks the octant.
const FOUR_OVER_PI: f32 = 1.273_239_5;
/// `pi / 4` split into three parts whose products with the octant index stay exact (the first
/// two) for octants below `2^13`, i.e. `|x| <= 8192`.
const QUARTER_PI_HI: f32 = 0.785_156_25;
const QUARTER_PI_MID: f32 = 2.418_756_5e-4;
const QUARTER_PI_LO: f32 = 3.774_895e-8;

/// Sine on `[-pi/4, pi/4]`.
#[inline(always)]
fn sin_poly(x: f32) -> f32 {
    let z = x * x;
    (((-1.951_529_6e-4 * z + 8.332_161e-3) * z - 1.666_665_5e-1) * z) * x + x
}

/// Cosine on `[-pi/4, pi/4]`.
#[inline(always)]
fn cos_poly(x: f32) -> f32 {
    let z = x * x;
    ((((2.443_315_7e-5 * z - 1.388_731_6e-3) * z + 4.166_664_6e-2) * z) * z - 0.5 * z) + 1.0
}

/// `(sin(x), cos(x))`. Infinite or NaN `x` gives `(NaN, NaN)`.
#[inline]
pub fn sin_cos(x: f32) -> (f32, f32) {
    let x = flush_subnormal(x);
    if !x.is_finite() {
        let nan = f32::from_bits(super::arith::CANONICAL_NAN_BITS);
        return (nan, nan);
    }
    let magnitude = x.abs();
    // The octant, as an integer-valued float (exact up to 2^24) and its residue modulo 8.
    let mut octant = (magnitude * FOUR_OVER_PI).floor();
    let mut residue = to_int(octant - 8.0 * (octant * 0.125).floor());
    // Map odd octants to the next even one so the reduced argument lies in [-pi/4, pi/4].
    if residue & 1 == 1 {
        residue += 1;
        octant += 1.0;
    }
    let residue = residue & 7;
    let reduced =
        ((magnitude - octant * QUARTER_PI_HI) - octant * QUARTER_PI_MID) - octant * QUARTER_PI_LO;
    // Up to 8192 the reduced angle stays within 1e-3 of [-pi/4, pi/4], where the polynomials are
    // accurate. Past it the reduction runs out of bits; the clamp keeps the result bounded.
    let reduced = reduced.clamp(-1.0, 1.0);
    let s = sin_poly(reduced);
    let c = cos_poly(reduced);
    // Quadrant of the reduced angle: 0, 1, 2, 3 for residues 0, 2, 4, 6.
    let (sin_abs, cos) = match residue {
        0 => (s, c),
        2 => (c, -s),
        4 => (-s, -c),
        _ => (-c, s),
    };
    let sin = if x.is_sign_negative() {
        -sin_abs
    } else {
        sin_abs
    };
    (sin, cos)
}

/// `atan(x)`.
#[inline]
pub fn atan(x: f32) -> f32 {
    let x = flush_subnormal(x);
    if x.is_nan() {
        return f32::from_bits(super::arith::CANONICAL_NAN_BITS);
    }
    let magnitude = x.abs();
    // Reduce to |t| <= tan(pi/8) with atan(x) = offset + atan(t).
    let (offset, t) = if magnitude > 2.414_213_7 {
        (FRAC_PI_2, -recip(magnitude))
    } else if magnitude > 0.414_213_57 {
        (FRAC_PI_4, div(magnitude - 1.0, magnitude + 1.0))
    } else {
        (0.0, magnitude)
    };
    let z = t * t;
    let poly =
        ((((8.053_744_6e-2 * z - 1.387_768_5e-1) * z + 1.997_771_1e-1) * z - 3.333_295e-1) * z) * t
            + t;
    let result = offset + poly;
    if x.is_sign_negative() {
        -result
    } else {
        result
    }
}

/// `atan2(y, x)`: the angle of the point `(x, y)`, in `[-pi, pi]`.
///
/// Signed zeros and infinities follow IEEE-754 `atan2`: `atan2(±0, +0) = ±0`,
/// `atan2(±0, -0) = ±pi`, `atan2(±inf, ±inf) = ±pi/4` or `±3pi/4`. NaN in gives NaN.
#[inline]
pub fn atan2(y: f32, x: f32) -> f32 {
    let (y, x) = (flush_subnormal(y), flush_subnormal(x));
    if x.is_nan() || y.is_nan() {
        return f32::from_bits(super::arith::CANONICAL_NAN_BITS);
    }
    let y_negative = y.is_sign_negative();
    let x_negative = x.is_sign_negative();
    let signed = |v: f32| if y_negative { -v } else { v };
    if y == 0.0 {
        return signed(if x_negative { PI } else { 0.0 });
    }
    if x == 0.0 {
        return signed(FRAC_PI_2);
    }
    if x.is_infinite() && y.is_infinite() {
        return signed(if x_negative {
            3.0 * FRAC_PI_4
        } else {
            FRAC_PI_4
        });
    }
    let base = atan(div(y, x));
    if x_negative { signed(PI) + base } else { base }
}

/// `asin(x)` for `x` in `[-1, 1]`; NaN outside.
#[inline]
pub fn asin(x: f32) -> f32 {
    let x = flush_subnormal(x);
    let magnitude = x.abs();
    if magnitude.is_nan() || magnitude > 1.0 {
        return f32::from_bits(super::arith::CANONICAL_NAN_BITS);
    }
    if magnitude < 1.0e-4 {
        return x;
    }
    // Above 1/2 use asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)).
    let folded = magnitude > 0.5;
    let (t, z) = if folded {
        let z = 0.5 * (1.0 - magnitude);
        (sqrt(z), z)
    } else {
        (magnitude, magnitude * magnitude)
    };
    let poly = (((((4.216_32e-2 * z + 2.418_131_2e-2) * z + 4.547_002_5e-2) * z + 7.495_300_5e-2)
        * z
        + 1.666_675_2e-1)
        * z)
        * t
        + t;
    let result = if folded {
        FRAC_PI_2 - (poly + poly)
    } else {
        poly
    };
    if x.is_sign_negative() {
        -result
    } else {
        result
    }
}

/// `acos(x)` for `x` in `[-1, 1]`; NaN outside.
#[inline]
pub fn acos(x: f32) -> f32 {
    let x = flush_subnormal(x);
    if x.is_nan() || x.abs() > 1.0 {
        return f32::from_bits(super::arith::CANONICAL_NAN_BITS);
    }
    if x > 0.5 {
        let half = asin(sqrt(0.5 * (1.0 - x)));
        half + half
    } else if x < -0.5 {
        let half = asin(sqrt(0.5 * (1.0 + x)));
        PI - (half + half)
    } else {
        (FRAC_PI_4 - asin(x)) + FRAC_PI_4
    }
}
