//! Division, square roots and float-to-int conversion built from `+ - *` only.
//!
//! This module owns [`recip`], [`div`], [`sqrt`], [`inv_sqrt`] and [`to_int`]. Each works on the
//! significands scaled into `[1, 2)` or `[1, 4)`, so the Newton steps and the rounding test never
//! meet overflow or subnormals; the exponent is put back with integer arithmetic on the bits.
//! After a bit-trick seed and a fixed number of Newton steps, the result is rounded by testing
//! on which side of the two midpoints to its neighbours the true value lies. The test evaluates
//! the residual at the midpoint exactly (see [`super::exact`]), and no true result can sit exactly
//! on a midpoint for these operations, so the result is the correctly rounded one: the same bits
//! as IEEE-754 `/` and `sqrt`, but reachable on devices whose own division is not exact.
//!
//! It must never use the hardware `/`, `sqrt`, `mul_add` or a library function on floats: the GLSL
//! mirror repeats these steps and has to land on the same bits.
//!
//! # Values outside the normal range
//!
//! Subnormal inputs count as zero of the same sign, and results below `f32::MIN_POSITIVE` are
//! flushed to zero of the right sign (devices differ on subnormals; simulation must not rely on
//! them). Any NaN result is the canonical quiet NaN `0x7fc0_0000`.

use super::exact::{sign_of_sum, two_prod};

/// Bits of the canonical quiet NaN every routine returns.
pub const CANONICAL_NAN_BITS: u32 = 0x7fc0_0000;

const SIGN_MASK: u32 = 0x8000_0000;
const EXPONENT_MASK: u32 = 0x7f80_0000;
const MANTISSA_MASK: u32 = 0x007f_ffff;
const ONE_BITS: u32 = 0x3f80_0000;

/// How an input is treated: the routines below only compute on `Normal` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Nan,
    /// Zero or subnormal.
    Zero,
    Normal,
    Infinite,
}

#[inline(always)]
fn classify(bits: u32) -> Class {
    let exponent = bits & EXPONENT_MASK;
    if exponent == EXPONENT_MASK {
        if bits & MANTISSA_MASK == 0 {
            Class::Infinite
        } else {
            Class::Nan
        }
    } else if exponent == 0 {
        Class::Zero
    } else {
        Class::Normal
    }
}

/// `x`, or zero of its sign when `x` is subnormal: how every `sim_math` routine reads its inputs
/// (devices differ on subnormals; simulation must not rely on them).
#[inline(always)]
pub fn flush_subnormal(x: f32) -> f32 {
    let bits = x.to_bits();
    if bits & EXPONENT_MASK == 0 {
        signed_zero(bits & SIGN_MASK)
    } else {
        x
    }
}

#[inline(always)]
fn nan() -> f32 {
    f32::from_bits(CANONICAL_NAN_BITS)
}

#[inline(always)]
fn signed_zero(sign: u32) -> f32 {
    f32::from_bits(sign)
}

#[inline(always)]
fn signed_infinity(sign: u32) -> f32 {
    f32::from_bits(sign | EXPONENT_MASK)
}

/// The unbiased exponent of a normal float.
#[inline(always)]
fn exponent_of(bits: u32) -> i32 {
    ((bits & EXPONENT_MASK) >> 23) as i32 - 127
}

/// The significand of a normal float, as a value in `[1, 2)`.
#[inline(always)]
fn significand_of(bits: u32) -> f32 {
    f32::from_bits((bits & MANTISSA_MASK) | ONE_BITS)
}

/// `value * 2^shift` for a positive normal `value`, with `sign` applied; flushes to zero below
/// the normal range and saturates to infinity above it.
#[inline(always)]
fn scale(value: f32, shift: i32, sign: u32) -> f32 {
    let bits = value.to_bits();
    let exponent = ((bits & EXPONENT_MASK) >> 23) as i32 + shift;
    if exponent <= 0 {
        signed_zero(sign)
    } else if exponent >= 255 {
        signed_infinity(sign)
    } else {
        f32::from_bits(sign | (bits & MANTISSA_MASK) | ((exponent as u32) << 23))
    }
}

/// The next float above a positive normal `x`.
#[inline(always)]
fn next_up(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}

/// The next float below a positive normal `x`.
#[inline(always)]
fn next_down(x: f32) -> f32 {
    f32::from_bits(x.to_bits() - 1)
}

/// `x`, moved one float up when `up` is positive and one float down when `down` is negative
/// (without branches: which way the rounding goes is data, and hard to predict).
#[inline(always)]
fn nudge(x: f32, up: i32, down: i32) -> f32 {
    f32::from_bits(x.to_bits() + (up > 0) as u32 - (down < 0) as u32)
}

/// Correctly rounded `a / b` for `a, b` in `[1, 2)`, as a value in `(0.5, 2)`.
#[inline(always)]
fn divide_significands(a: f32, b: f32) -> f32 {
    // Seed: subtracting the bits from a magic constant negates the exponent and roughly inverts
    // the significand (relative error below 6%).
    let mut r = f32::from_bits(0x7ef3_11c3u32.wrapping_sub(b.to_bits()));
    // Two Newton steps for 1/b; each squares the relative error (6% -> 4e-3 -> 1.3e-5).
    r = r * (2.0 - b * r);
    r = r * (2.0 - b * r);
    // One correction of the quotient with the remainder a - b*q squares the error again (to about
    // 2e-10, well inside one ulp). The remainder is evaluated without cancellation error: b*q = p + e
    // exactly, and a - p is exact because p is within a few ulp of a.
    let q0 = a * r;
    let (p, e) = two_prod(b, q0);
    let q = q0 + ((a - p) - e) * r;
    round_quotient(a, b, q)
}

/// Picks the correctly rounded quotient `a / b` among `q` and its neighbours.
///
/// `a / b` lies above the midpoint `q + d` exactly when `a - b*q - b*d > 0`. With `b*q = p + e`
/// (two-product), `a - p` exact (Sterbenz) and `b*d` exact (`d` is a power of two), that is the
/// sign of a three-term sum, which [`sign_of_sum`] gets exactly.
#[inline(always)]
fn round_quotient(a: f32, b: f32, q: f32) -> f32 {
    let (p, e) = two_prod(b, q);
    let base = a - p;
    let half_up = (next_up(q) - q) * 0.5;
    let half_down = (q - next_down(q)) * 0.5;
    let above = sign_of_sum([base, -e, -(b * half_up)]);
    let below = sign_of_sum([base, -e, b * half_down]);
    nudge(q, above, below)
}

/// Correctly rounded `sqrt(m)` for `m` in `[1, 4)`, as a value in `[1, 2)`.
#[inline(always)]
fn sqrt_significand(m: f32) -> f32 {
    let y = inv_sqrt_estimate(m);
    // One correction: s' = s + (m - s^2) / (2 s), with m - s^2 from an exact square.
    let s0 = m * y;
    let (p, e) = two_prod(s0, s0);
    let s = s0 + ((m - p) - e) * (0.5 * y);
    round_sqrt(m, s)
}

/// Picks the correctly rounded `sqrt(m)` among `s` and its neighbours.
///
/// `sqrt(m)` lies above `s + d` exactly when `m - s^2 - 2sd - d^2 > 0`; `s^2 = p + e` is a
/// two-product and `2sd`, `d^2` are exact because `d` is a power of two.
#[inline(always)]
fn round_sqrt(m: f32, s: f32) -> f32 {
    let (p, e) = two_prod(s, s);
    let base = m - p;
    let half_up = (next_up(s) - s) * 0.5;
    let half_down = (s - next_down(s)) * 0.5;
    let above = sign_of_sum([base, -e, -(2.0 * s * half_up), -(half_up * half_up)]);
    let below = sign_of_sum([base, -e, 2.0 * s * half_down, -(half_down * half_down)]);
    nudge(s, above, below)
}

/// About `1 / sqrt(m)` for `m` in `[1, 4)`, within a relative `5e-6`.
#[inline(always)]
fn inv_sqrt_estimate(m: f32) -> f32 {
    // Seed: halving the bits halves the exponent; the constant negates it and fits the
    // significand (relative error below 3.5%).
    let mut y = f32::from_bits(0x5f37_5a86u32.wrapping_sub(m.to_bits() >> 1));
    let half = 0.5 * m;
    // Two Newton steps for 1/sqrt(m): 3.5% -> 2e-3 -> 5e-6. The caller's residual correction takes
    // it to about 4e-11.
    y = y * (1.5 - half * y * y);
    y = y * (1.5 - half * y * y);
    y
}

/// Correctly rounded `1 / sqrt(m)` for `m` in `[1, 4)`, as a value in `(0.5, 1]`.
#[inline(always)]
fn inv_sqrt_significand(m: f32) -> f32 {
    let y0 = inv_sqrt_estimate(m);
    // One correction: y' = y + y (1 - m y^2) / 2, with the residual from exact products.
    let (p, e) = two_prod(y0, y0);
    let (mp, mp_err) = two_prod(m, p);
    let residual = (((1.0 - mp) - mp_err) - m * e) * 0.5;
    let y = y0 + y0 * residual;
    round_inv_sqrt(m, y)
}

/// Picks the correctly rounded `1 / sqrt(m)` among `y` and its neighbours.
///
/// `1 / sqrt(m)` lies above `y + d` exactly when `1 - m (y + d)^2 > 0`. Expanded,
/// `m (y + d)^2 = m y^2 + 2 d m y + m d^2`, and each product becomes exact pairs: `y^2 = p + e`,
/// `m p = p1 + e1`, `m e = p2 + e2`, `m y = p3 + e3` (scaled by the power of two `2d`), `m d^2`.
#[inline(always)]
fn round_inv_sqrt(m: f32, y: f32) -> f32 {
    let (p, e) = two_prod(y, y);
    let (p1, e1) = two_prod(m, p);
    let (p2, e2) = two_prod(m, e);
    let (p3, e3) = two_prod(m, y);
    let base = 1.0 - p1;
    let half_up = (next_up(y) - y) * 0.5;
    let twice_up = 2.0 * half_up;
    let above = sign_of_sum([
        base,
        -e1,
        -p2,
        -e2,
        -(p3 * twice_up),
        -(e3 * twice_up),
        -(m * (half_up * half_up)),
    ]);
    let half_down = (y - next_down(y)) * 0.5;
    let twice_down = 2.0 * half_down;
    let below = sign_of_sum([
        base,
        -e1,
        -p2,
        -e2,
        p3 * twice_down,
        e3 * twice_down,
        -(m * (half_down * half_down)),
    ]);
    nudge(y, above, below)
}

/// `1 / x`, correctly rounded.
///
/// | `x` | result |
/// |---|---|
/// | NaN | NaN |
/// | `±0` or subnormal | `±inf` |
/// | `±inf` | `±0` |
/// | `|x| > 2^126` (result would be subnormal) | `±0` |
#[inline]
pub fn recip(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = bits & SIGN_MASK;
    match classify(bits) {
        Class::Nan => nan(),
        Class::Zero => signed_infinity(sign),
        Class::Infinite => signed_zero(sign),
        Class::Normal => {
            let q = divide_significands(1.0, significand_of(bits));
            scale(q, -exponent_of(bits), sign)
        }
    }
}

/// `a / b`, correctly rounded.
///
/// Subnormal operands count as zero. NaN in, `0 / 0` and `inf / inf` give NaN; `x / 0` gives an
/// infinity and `x / inf` a zero, signed by the operands' signs; results beyond `f32::MAX`
/// become infinities and results below `f32::MIN_POSITIVE` become zeros.
#[inline]
pub fn div(a: f32, b: f32) -> f32 {
    let a_bits = a.to_bits();
    let b_bits = b.to_bits();
    let sign = (a_bits ^ b_bits) & SIGN_MASK;
    match (classify(a_bits), classify(b_bits)) {
        (Class::Nan, _) | (_, Class::Nan) => nan(),
        (Class::Zero, Class::Zero) | (Class::Infinite, Class::Infinite) => nan(),
        (Class::Zero, _) | (_, Class::Infinite) => signed_zero(sign),
        (Class::Infinite, _) | (_, Class::Zero) => signed_infinity(sign),
        (Class::Normal, Class::Normal) => {
            let q = divide_significands(significand_of(a_bits), significand_of(b_bits));
            scale(q, exponent_of(a_bits) - exponent_of(b_bits), sign)
        }
    }
}

/// Splits a positive normal float into a significand in `[1, 4)` and half its (even) exponent.
#[inline(always)]
fn even_split(bits: u32) -> (f32, i32) {
    let exponent = exponent_of(bits);
    let odd = exponent & 1;
    let significand = f32::from_bits((bits & MANTISSA_MASK) | ((127 + odd as u32) << 23));
    (significand, (exponent - odd) / 2)
}

/// `sqrt(x)`, correctly rounded.
///
/// NaN and negative inputs (other than `-0`) give NaN; `±0` and subnormals give `±0`; `+inf`
/// gives `+inf`.
#[inline]
pub fn sqrt(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = bits & SIGN_MASK;
    match classify(bits) {
        Class::Nan => nan(),
        Class::Zero => signed_zero(sign),
        _ if sign != 0 => nan(),
        Class::Infinite => f32::INFINITY,
        Class::Normal => {
            let (m, half_exponent) = even_split(bits);
            scale(sqrt_significand(m), half_exponent, 0)
        }
    }
}

/// `1 / sqrt(x)`, correctly rounded.
///
/// NaN and negative inputs (other than `-0`) give NaN; `±0` and subnormals give `±inf`; `+inf`
/// gives `+0`.
#[inline]
pub fn inv_sqrt(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = bits & SIGN_MASK;
    match classify(bits) {
        Class::Nan => nan(),
        Class::Zero => signed_infinity(sign),
        _ if sign != 0 => nan(),
        Class::Infinite => 0.0,
        Class::Normal => {
            let (m, half_exponent) = even_split(bits);
            scale(inv_sqrt_significand(m), -half_exponent, 0)
        }
    }
}

/// `x as i32`, spelled out: truncates toward zero, saturates to `i32::MIN` / `i32::MAX`, and
/// turns NaN into 0. Only the in-range conversion is left to the hardware, because GLSL `int()`
/// is undefined for NaN and out-of-range values.
#[inline]
pub fn to_int(x: f32) -> i32 {
    if x.is_nan() {
        0
    } else if x >= 2_147_483_648.0 {
        i32::MAX
    } else if x < -2_147_483_648.0 {
        i32::MIN
    } else {
        x.trunc() as i32
    }
}
