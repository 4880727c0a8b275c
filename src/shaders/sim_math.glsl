// sim_math.glsl: bit-exact float math for simulation shaders.
//
// This file is the GLSL mirror of `rusting_engine::runtime::sim_math` (src/runtime/sim_math/):
// every routine here repeats the Rust reference operation for operation, with the same seeds,
// constants and evaluation order, so both land on the same bits. Change one side only together
// with the other; `shader_sim_math_matches_the_rust_reference_bit_for_bit` compares them.
//
// It owns division, square roots, the inverse square root, float-to-int conversion, dot products,
// lengths, normalization and matrix-vector products. It must never use the hardware `/`, `sqrt`,
// `inversesqrt`, `dot`, `length`, `normalize`, `fma`, matrix products or any transcendental: their
// precision and evaluation order differ between devices. Every float value is `precise`, which
// puts SPIR-V `NoContraction` on each operation so no driver fuses a multiply into an add; the
// precision check (`physics::gpu::precision`) fails the build's tests when one is missing.
//
// Values outside the normal range: the division and square-root routines classify their inputs
// by their bits (subnormals count as zero) and never compute on a subnormal, so they give the same
// bits whether or not a device flushes denormals. The vector routines use plain `+` and `*`, so
// their results on subnormal inputs or products depend on the device's denormal handling, as in
// the Rust reference on a CPU (which keeps subnormals).

#ifndef RUSTING_SIM_MATH_GLSL
#define RUSTING_SIM_MATH_GLSL

// Bits of the canonical quiet NaN every routine returns (`sim_math::CANONICAL_NAN_BITS`).
const uint SIM_CANONICAL_NAN_BITS = 0x7fc00000u;

const uint SIM_SIGN_MASK = 0x80000000u;
const uint SIM_EXPONENT_MASK = 0x7f800000u;
const uint SIM_MANTISSA_MASK = 0x007fffffu;
const uint SIM_ONE_BITS = 0x3f800000u;
// f32::EPSILON, 2^-23.
const float SIM_EPSILON = 1.1920928955078125e-7;
// Veltkamp's splitter for a 24-bit significand: 2^12 + 1.
const float SIM_SPLITTER = 4097.0;

// How an input is treated: the routines below only compute on normal values.
const uint SIM_CLASS_NAN = 0u;
const uint SIM_CLASS_ZERO = 1u; // zero or subnormal
const uint SIM_CLASS_NORMAL = 2u;
const uint SIM_CLASS_INFINITE = 3u;

// The largest number of terms `sim_sign_of_sum` takes.
const int SIM_MAX_TERMS = 7;

uint sim_classify(uint bits) {
    uint exponent = bits & SIM_EXPONENT_MASK;
    if (exponent == SIM_EXPONENT_MASK) {
        return (bits & SIM_MANTISSA_MASK) == 0u ? SIM_CLASS_INFINITE : SIM_CLASS_NAN;
    }
    return exponent == 0u ? SIM_CLASS_ZERO : SIM_CLASS_NORMAL;
}

float sim_nan() {
    return uintBitsToFloat(SIM_CANONICAL_NAN_BITS);
}

float sim_signed_zero(uint sign) {
    return uintBitsToFloat(sign);
}

float sim_signed_infinity(uint sign) {
    return uintBitsToFloat(sign | SIM_EXPONENT_MASK);
}

// The unbiased exponent of a normal float.
int sim_exponent_of(uint bits) {
    return int((bits & SIM_EXPONENT_MASK) >> 23) - 127;
}

// The significand of a normal float, as a value in [1, 2).
float sim_significand_of(uint bits) {
    return uintBitsToFloat((bits & SIM_MANTISSA_MASK) | SIM_ONE_BITS);
}

// `value * 2^shift` for a positive normal `value`, with `sign` applied; flushes to zero below the
// normal range and saturates to infinity above it.
float sim_scale(float value, int shift, uint sign) {
    uint bits = floatBitsToUint(value);
    int exponent = int((bits & SIM_EXPONENT_MASK) >> 23) + shift;
    if (exponent <= 0) {
        return sim_signed_zero(sign);
    }
    if (exponent >= 255) {
        return sim_signed_infinity(sign);
    }
    return uintBitsToFloat(sign | (bits & SIM_MANTISSA_MASK) | (uint(exponent) << 23));
}

// The next float above a positive normal `x`.
float sim_next_up(float x) {
    return uintBitsToFloat(floatBitsToUint(x) + 1u);
}

// The next float below a positive normal `x`.
float sim_next_down(float x) {
    return uintBitsToFloat(floatBitsToUint(x) - 1u);
}

// `x`, moved one float up when `up` is positive and one float down when `down` is negative.
float sim_nudge(float x, int up, int down) {
    return uintBitsToFloat(floatBitsToUint(x) + uint(up > 0) - uint(down < 0));
}

// Knuth's two-sum: s = fl(a + b) and s + e = a + b exactly.
void sim_two_sum(float a, float b, out float s, out float e) {
    precise float sum = a + b;
    precise float b_virtual = sum - a;
    precise float a_virtual = sum - b_virtual;
    precise float error = (a - a_virtual) + (b - b_virtual);
    s = sum;
    e = error;
}

// Veltkamp's split: hi + lo = a, each half with at most 12 significant bits.
void sim_split(float a, out float hi, out float lo) {
    precise float c = SIM_SPLITTER * a;
    precise float high = c - (c - a);
    precise float low = a - high;
    hi = high;
    lo = low;
}

// Dekker's two-product: p = fl(a * b) and p + e = a * b exactly.
void sim_two_prod(float a, float b, out float p, out float e) {
    precise float product = a * b;
    float a_hi;
    float a_lo;
    float b_hi;
    float b_lo;
    sim_split(a, a_hi, a_lo);
    sim_split(b, b_hi, b_lo);
    precise float error = (((a_hi * b_hi - product) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo;
    p = product;
    e = error;
}

// The exact sign (-1, 0 or 1) of terms[0] + ... + terms[n - 1] (Shewchuk's expansion growth,
// smallest component first; the last non-zero component carries the sign).
int sim_exact_sign(float terms[SIM_MAX_TERMS], int n) {
    precise float expansion[SIM_MAX_TERMS];
    for (int len = 0; len < n; len++) {
        precise float carry = terms[len];
        for (int i = 0; i < len; i++) {
            float sum;
            float error;
            sim_two_sum(carry, expansion[i], sum, error);
            expansion[i] = error;
            carry = sum;
        }
        expansion[len] = carry;
    }
    for (int i = n - 1; i >= 0; i--) {
        if (expansion[i] > 0.0) {
            return 1;
        }
        if (expansion[i] < 0.0) {
            return -1;
        }
    }
    return 0;
}

// The exact sign of terms[0] + ... + terms[n - 1], cheap when the sum is not close to zero: the
// plain left-to-right sum decides unless it lies within 2 n u sum(|t|) of zero.
int sim_sign_of_sum(float terms[SIM_MAX_TERMS], int n) {
    precise float sum = 0.0;
    precise float magnitude = 0.0;
    for (int i = 0; i < n; i++) {
        sum = sum + terms[i];
        magnitude = magnitude + abs(terms[i]);
    }
    precise float bound = magnitude * (float(n) * SIM_EPSILON);
    if (sum > bound) {
        return 1;
    }
    if (sum < -bound) {
        return -1;
    }
    return sim_exact_sign(terms, n);
}

// Picks the correctly rounded quotient a / b among q and its neighbours.
float sim_round_quotient(float a, float b, float q) {
    float p;
    float e;
    sim_two_prod(b, q, p, e);
    precise float base = a - p;
    precise float half_up = (sim_next_up(q) - q) * 0.5;
    precise float half_down = (q - sim_next_down(q)) * 0.5;
    precise float terms[SIM_MAX_TERMS];
    terms[0] = base;
    terms[1] = -e;
    terms[2] = -(b * half_up);
    int above = sim_sign_of_sum(terms, 3);
    terms[2] = b * half_down;
    int below = sim_sign_of_sum(terms, 3);
    return sim_nudge(q, above, below);
}

// Correctly rounded a / b for a, b in [1, 2), as a value in (0.5, 2).
float sim_divide_significands(float a, float b) {
    // Seed: subtracting the bits from a magic constant negates the exponent and roughly inverts
    // the significand (relative error below 6%).
    precise float r = uintBitsToFloat(0x7ef311c3u - floatBitsToUint(b));
    r = r * (2.0 - b * r);
    r = r * (2.0 - b * r);
    precise float q0 = a * r;
    float p;
    float e;
    sim_two_prod(b, q0, p, e);
    precise float q = q0 + ((a - p) - e) * r;
    return sim_round_quotient(a, b, q);
}

// About 1 / sqrt(m) for m in [1, 4), within a relative 5e-6.
float sim_inv_sqrt_estimate(float m) {
    precise float y = uintBitsToFloat(0x5f375a86u - (floatBitsToUint(m) >> 1));
    precise float half_m = 0.5 * m;
    y = y * (1.5 - half_m * y * y);
    y = y * (1.5 - half_m * y * y);
    return y;
}

// Picks the correctly rounded sqrt(m) among s and its neighbours.
float sim_round_sqrt(float m, float s) {
    float p;
    float e;
    sim_two_prod(s, s, p, e);
    precise float base = m - p;
    precise float half_up = (sim_next_up(s) - s) * 0.5;
    precise float half_down = (s - sim_next_down(s)) * 0.5;
    precise float terms[SIM_MAX_TERMS];
    terms[0] = base;
    terms[1] = -e;
    terms[2] = -(2.0 * s * half_up);
    terms[3] = -(half_up * half_up);
    int above = sim_sign_of_sum(terms, 4);
    terms[2] = 2.0 * s * half_down;
    terms[3] = -(half_down * half_down);
    int below = sim_sign_of_sum(terms, 4);
    return sim_nudge(s, above, below);
}

// Correctly rounded sqrt(m) for m in [1, 4), as a value in [1, 2).
float sim_sqrt_significand(float m) {
    precise float y = sim_inv_sqrt_estimate(m);
    precise float s0 = m * y;
    float p;
    float e;
    sim_two_prod(s0, s0, p, e);
    precise float s = s0 + ((m - p) - e) * (0.5 * y);
    return sim_round_sqrt(m, s);
}

// Picks the correctly rounded 1 / sqrt(m) among y and its neighbours.
float sim_round_inv_sqrt(float m, float y) {
    float p;
    float e;
    float p1;
    float e1;
    float p2;
    float e2;
    float p3;
    float e3;
    sim_two_prod(y, y, p, e);
    sim_two_prod(m, p, p1, e1);
    sim_two_prod(m, e, p2, e2);
    sim_two_prod(m, y, p3, e3);
    precise float base = 1.0 - p1;
    precise float half_up = (sim_next_up(y) - y) * 0.5;
    precise float twice_up = 2.0 * half_up;
    precise float terms[SIM_MAX_TERMS];
    terms[0] = base;
    terms[1] = -e1;
    terms[2] = -p2;
    terms[3] = -e2;
    terms[4] = -(p3 * twice_up);
    terms[5] = -(e3 * twice_up);
    terms[6] = -(m * (half_up * half_up));
    int above = sim_sign_of_sum(terms, 7);
    precise float half_down = (y - sim_next_down(y)) * 0.5;
    precise float twice_down = 2.0 * half_down;
    terms[4] = p3 * twice_down;
    terms[5] = e3 * twice_down;
    terms[6] = -(m * (half_down * half_down));
    int below = sim_sign_of_sum(terms, 7);
    return sim_nudge(y, above, below);
}

// Correctly rounded 1 / sqrt(m) for m in [1, 4), as a value in (0.5, 1].
float sim_inv_sqrt_significand(float m) {
    precise float y0 = sim_inv_sqrt_estimate(m);
    float p;
    float e;
    float mp;
    float mp_err;
    sim_two_prod(y0, y0, p, e);
    sim_two_prod(m, p, mp, mp_err);
    precise float residual = (((1.0 - mp) - mp_err) - m * e) * 0.5;
    precise float y = y0 + y0 * residual;
    return sim_round_inv_sqrt(m, y);
}

// 1 / x, correctly rounded (`sim_math::recip`): NaN gives NaN, +-0 and subnormals +-inf, +-inf +-0,
// results below the normal range +-0.
float sim_recip(float x) {
    uint bits = floatBitsToUint(x);
    uint sign = bits & SIM_SIGN_MASK;
    uint class_x = sim_classify(bits);
    if (class_x == SIM_CLASS_NAN) {
        return sim_nan();
    }
    if (class_x == SIM_CLASS_ZERO) {
        return sim_signed_infinity(sign);
    }
    if (class_x == SIM_CLASS_INFINITE) {
        return sim_signed_zero(sign);
    }
    precise float q = sim_divide_significands(1.0, sim_significand_of(bits));
    return sim_scale(q, -sim_exponent_of(bits), sign);
}

// a / b, correctly rounded (`sim_math::div`).
float sim_div(float a, float b) {
    uint a_bits = floatBitsToUint(a);
    uint b_bits = floatBitsToUint(b);
    uint sign = (a_bits ^ b_bits) & SIM_SIGN_MASK;
    uint class_a = sim_classify(a_bits);
    uint class_b = sim_classify(b_bits);
    if (class_a == SIM_CLASS_NAN || class_b == SIM_CLASS_NAN) {
        return sim_nan();
    }
    if ((class_a == SIM_CLASS_ZERO && class_b == SIM_CLASS_ZERO)
        || (class_a == SIM_CLASS_INFINITE && class_b == SIM_CLASS_INFINITE)) {
        return sim_nan();
    }
    if (class_a == SIM_CLASS_ZERO || class_b == SIM_CLASS_INFINITE) {
        return sim_signed_zero(sign);
    }
    if (class_a == SIM_CLASS_INFINITE || class_b == SIM_CLASS_ZERO) {
        return sim_signed_infinity(sign);
    }
    precise float q = sim_divide_significands(sim_significand_of(a_bits), sim_significand_of(b_bits));
    return sim_scale(q, sim_exponent_of(a_bits) - sim_exponent_of(b_bits), sign);
}

// Splits a positive normal float into a significand in [1, 4) and half its (even) exponent.
float sim_even_split(uint bits, out int half_exponent) {
    int exponent = sim_exponent_of(bits);
    int odd = exponent & 1;
    half_exponent = (exponent - odd) / 2;
    return uintBitsToFloat((bits & SIM_MANTISSA_MASK) | ((127u + uint(odd)) << 23));
}

// sqrt(x), correctly rounded (`sim_math::sqrt`): NaN and negative inputs other than -0 give NaN,
// +-0 and subnormals +-0, +inf +inf.
float sim_sqrt(float x) {
    uint bits = floatBitsToUint(x);
    uint sign = bits & SIM_SIGN_MASK;
    uint class_x = sim_classify(bits);
    if (class_x == SIM_CLASS_NAN) {
        return sim_nan();
    }
    if (class_x == SIM_CLASS_ZERO) {
        return sim_signed_zero(sign);
    }
    if (sign != 0u) {
        return sim_nan();
    }
    if (class_x == SIM_CLASS_INFINITE) {
        return sim_signed_infinity(0u);
    }
    int half_exponent;
    precise float m = sim_even_split(bits, half_exponent);
    return sim_scale(sim_sqrt_significand(m), half_exponent, 0u);
}

// 1 / sqrt(x), correctly rounded (`sim_math::inv_sqrt`): NaN and negative inputs other than -0
// give NaN, +-0 and subnormals +-inf, +inf +0.
float sim_rsqrt(float x) {
    uint bits = floatBitsToUint(x);
    uint sign = bits & SIM_SIGN_MASK;
    uint class_x = sim_classify(bits);
    if (class_x == SIM_CLASS_NAN) {
        return sim_nan();
    }
    if (class_x == SIM_CLASS_ZERO) {
        return sim_signed_infinity(sign);
    }
    if (sign != 0u) {
        return sim_nan();
    }
    if (class_x == SIM_CLASS_INFINITE) {
        return sim_signed_zero(0u);
    }
    int half_exponent;
    precise float m = sim_even_split(bits, half_exponent);
    return sim_scale(sim_inv_sqrt_significand(m), -half_exponent, 0u);
}

// Rust's `x as i32` (`sim_math::to_int`): truncates toward zero, saturates to the int range and
// turns NaN into 0. GLSL `int()` is left only the in-range values.
int sim_to_int(float x) {
    if (sim_classify(floatBitsToUint(x)) == SIM_CLASS_NAN) {
        return 0;
    }
    if (x >= 2147483648.0) {
        return 2147483647;
    }
    if (x < -2147483648.0) {
        return -2147483647 - 1;
    }
    return int(x);
}

// a.x*b.x + a.y*b.y (`sim_math::dot2`).
float sim_dot(vec2 a, vec2 b) {
    precise float r = a.x * b.x + a.y * b.y;
    return r;
}

// (a.x*b.x + a.y*b.y) + a.z*b.z (`sim_math::dot3`).
float sim_dot(vec3 a, vec3 b) {
    precise float r = (a.x * b.x + a.y * b.y) + a.z * b.z;
    return r;
}

// ((a.x*b.x + a.y*b.y) + a.z*b.z) + a.w*b.w (`sim_math::dot4`).
float sim_dot(vec4 a, vec4 b) {
    precise float r = ((a.x * b.x + a.y * b.y) + a.z * b.z) + a.w * b.w;
    return r;
}

// sqrt(dot(v, v)) (`sim_math::length`).
float sim_length(vec3 v) {
    precise float squared = sim_dot(v, v);
    return sim_sqrt(squared);
}

// v scaled to length 1, or zero when its squared length is zero, subnormal, infinite or NaN
// (`sim_math::normalize`). The range test is on the bits, so no device's NaN comparison matters.
vec3 sim_normalize(vec3 v) {
    precise float squared = sim_dot(v, v);
    uint bits = floatBitsToUint(squared);
    if (bits < 0x00800000u || bits > 0x7f7fffffu) {
        return vec3(0.0);
    }
    precise float inv = sim_rsqrt(squared);
    precise vec3 r = vec3(v.x * inv, v.y * inv, v.z * inv);
    return r;
}

// m * v for a 3x3 matrix, each row summed left to right (`sim_math::mat3_mul_vec3`). GLSL
// matrices are column-major like glam's: m[0] is the first column.
vec3 sim_mat3_mul_vec3(mat3 m, vec3 v) {
    precise vec3 r = vec3(
        (m[0].x * v.x + m[1].x * v.y) + m[2].x * v.z,
        (m[0].y * v.x + m[1].y * v.y) + m[2].y * v.z,
        (m[0].z * v.x + m[1].z * v.y) + m[2].z * v.z);
    return r;
}

// m * v for a 4x4 matrix (`sim_math::mat4_mul_vec4`).
vec4 sim_mat4_mul_vec4(mat4 m, vec4 v) {
    precise vec4 r = vec4(
        ((m[0].x * v.x + m[1].x * v.y) + m[2].x * v.z) + m[3].x * v.w,
        ((m[0].y * v.x + m[1].y * v.y) + m[2].y * v.z) + m[3].y * v.w,
        ((m[0].z * v.x + m[1].z * v.y) + m[2].z * v.z) + m[3].z * v.w,
        ((m[0].w * v.x + m[1].w * v.y) + m[2].w * v.z) + m[3].w * v.w);
    return r;
}

// m * (p, 1) without the last row: a point through an affine 4x4 matrix
// (`sim_math::mat4_transform_point`).
vec3 sim_mat4_transform_point(mat4 m, vec3 p) {
    precise vec3 r = vec3(
        ((m[0].x * p.x + m[1].x * p.y) + m[2].x * p.z) + m[3].x,
        ((m[0].y * p.x + m[1].y * p.y) + m[2].y * p.z) + m[3].y,
        ((m[0].z * p.x + m[1].z * p.y) + m[2].z * p.z) + m[3].z);
    return r;
}

#endif // RUSTING_SIM_MATH_GLSL
