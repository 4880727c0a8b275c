//! Error-free transformations: exact sums and products of `f32` values as unevaluated pairs.
//!
//! This module owns the building blocks that let [`super::arith`] pick a correctly rounded result
//! using only `+`, `-` and `*`: Knuth's two-sum, Veltkamp's split, Dekker's two-product, and the
//! exact sign of a short sum (Shewchuk's expansion growth). It must never call `mul_add` or any
//! library function: every step here has to give the same bits on every IEEE-754 device, and the
//! GLSL mirror in `src/shaders/sim_math.glsl` repeats it operation for operation.
//!
//! All routines assume their inputs and intermediate results stay inside the normal range (no
//! overflow, no result below `f32::MIN_POSITIVE` other than exact zero). The callers work on
//! mantissas scaled into `[1, 4)`, where that always holds.

/// Returns `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth's two-sum).
#[inline(always)]
pub(crate) fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let b_virtual = s - a;
    let a_virtual = s - b_virtual;
    let e = (a - a_virtual) + (b - b_virtual);
    (s, e)
}

/// Veltkamp's splitter for a 24-bit significand: `2^12 + 1`.
const SPLITTER: f32 = 4097.0;

/// Splits `a` into `hi + lo = a` with each half fitting in 12 significant bits, so that products
/// of halves are exact.
#[inline(always)]
fn split(a: f32) -> (f32, f32) {
    let c = SPLITTER * a;
    let hi = c - (c - a);
    let lo = a - hi;
    (hi, lo)
}

/// Returns `(p, e)` with `p = fl(a * b)` and `p + e = a * b` exactly (Dekker's two-product).
#[inline(always)]
pub(crate) fn two_prod(a: f32, b: f32) -> (f32, f32) {
    let p = a * b;
    let (a_hi, a_lo) = split(a);
    let (b_hi, b_lo) = split(b);
    let e = (((a_hi * b_hi - p) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo;
    (p, e)
}

/// The exact sign (`-1`, `0` or `1`) of `terms[0] + terms[1] + ... + terms[N - 1]`.
///
/// The terms are accumulated into a non-overlapping expansion, smallest component first: adding a
/// term runs it through every component with [`two_sum`], keeping the rounding errors as the new
/// components. The sum of a non-overlapping expansion has the sign of its largest non-zero
/// component, which is the last non-zero one.
#[inline(always)]
pub(crate) fn exact_sign<const N: usize>(terms: [f32; N]) -> i32 {
    let mut expansion = [0.0f32; N];
    for (len, &term) in terms.iter().enumerate() {
        let mut carry = term;
        for component in expansion.iter_mut().take(len) {
            let (sum, error) = two_sum(carry, *component);
            *component = error;
            carry = sum;
        }
        expansion[len] = carry;
    }
    for &component in expansion.iter().rev() {
        if component > 0.0 {
            return 1;
        }
        if component < 0.0 {
            return -1;
        }
    }
    0
}

/// The sign (`-1`, `0` or `1`) of `terms[0] + ... + terms[N - 1]`, exact, and cheap when the sum is
/// not close to zero.
///
/// The plain left-to-right sum is off by at most `(N - 1) u * sum(|t|)` with `u = 2^-24`; when it
/// lies farther than `2 N u * sum(|t|)` from zero its sign is the true sign. Only sums closer to zero
/// than that, which are rare, take the exact path. Either way the answer is the exact sign, so the
/// result does not depend on which path ran.
#[inline(always)]
pub(crate) fn sign_of_sum<const N: usize>(terms: [f32; N]) -> i32 {
    let mut sum = 0.0f32;
    let mut magnitude = 0.0f32;
    for &term in &terms {
        sum += term;
        magnitude += term.abs();
    }
    let bound = magnitude * (N as f32 * f32::EPSILON);
    if sum > bound {
        1
    } else if sum < -bound {
        -1
    } else {
        exact_sign(terms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_product_error_is_exact() {
        let a = 1.000_000_1f32;
        let b = 0.999_999_9f32;
        let (p, e) = two_prod(a, b);
        let exact = a as f64 * b as f64;
        assert_eq!(p as f64 + e as f64, exact);
    }

    #[test]
    fn exact_sign_sees_what_rounding_hides() {
        // 1 + 2^-30 - 1 rounds to 0 term by term, but the true sum is positive.
        let tiny = f32::from_bits(0x3080_0000); // 2^-30
        assert_eq!(exact_sign([1.0, tiny, -1.0]), 1);
        assert_eq!(exact_sign([1.0, -tiny, -1.0]), -1);
        assert_eq!(exact_sign([1.0, tiny, -1.0, -tiny]), 0);
        assert_eq!(sign_of_sum([1.0, tiny, -1.0]), 1);
        assert_eq!(sign_of_sum([1.0, -tiny, -1.0]), -1);
        assert_eq!(sign_of_sum([1.0, tiny, -1.0, -tiny]), 0);
        assert_eq!(sign_of_sum([1.0, 0.5, -1.0]), 1);
    }
}
