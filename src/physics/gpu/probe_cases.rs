//! The `sim_math.glsl` probe's cases and their expected bits: one case layout shared by the
//! probe shader (`sim_math_probe.comp`), the bit-exact GPU test and the conformance probe.
//!
//! This module owns the routines' numbering (the shader's `ROUTINE_*` constants), the case and
//! output layout, the hand-picked and counter-based random cases, and each case's expected result
//! from the Rust reference (`runtime::sim_math`), with which cases depend on a device's subnormal
//! handling. It must never touch a device: it is plain data, the same on every machine.

use bevy::math::{Mat3, Mat4, Vec2, Vec3, Vec4};

use crate::runtime::random::mix;
use crate::runtime::sim_math;

/// `2^-100`, exactly.
const TWO_TO_MINUS_100: f64 = f64::from_bits((1023 - 100) << 52);

/// `2^k` for a normal exponent (`-126 <= k <= 127`), built from its bits (exact everywhere).
fn power_of_two(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// The value at `index` of a counter-based SplitMix64 sequence.
fn counter(index: u64) -> u64 {
    mix(index.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// Words per case in the probe's input buffer.
pub const INPUT_STRIDE: usize = 20;
/// Where a case's second operand starts.
pub const SECOND: usize = 16;
/// Words per case in the output buffer.
pub const OUTPUT_STRIDE: usize = 4;
/// Invocations per work group (`local_size_x` in the probe).
pub const GROUP: usize = 64;

/// The probe's routines, numbered as its `ROUTINE_*` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routine {
    /// `sim_recip`: `1 / x`, correctly rounded.
    Recip = 0,
    /// `sim_div`: `a / b`, correctly rounded.
    Div = 1,
    /// `sim_sqrt`, correctly rounded.
    Sqrt = 2,
    /// `sim_rsqrt`: `1 / sqrt(x)`.
    Rsqrt = 3,
    /// `sim_to_int`: a saturating conversion to `i32`.
    ToInt = 4,
    /// `sim_dot` of two `vec2`.
    Dot2 = 5,
    /// `sim_dot` of two `vec3`.
    Dot3 = 6,
    /// `sim_dot` of two `vec4`.
    Dot4 = 7,
    /// `sim_length` of a `vec3`.
    Length = 8,
    /// `sim_normalize` of a `vec3`.
    Normalize = 9,
    /// `sim_mat3_mul_vec3`.
    Mat3MulVec3 = 10,
    /// `sim_mat4_mul_vec4`.
    Mat4MulVec4 = 11,
    /// `sim_mat4_transform_point`.
    Mat4TransformPoint = 12,
}

impl Routine {
    /// The GLSL routine's name, as `sim_math.glsl` spells it.
    pub fn glsl_name(self) -> &'static str {
        match self {
            Routine::Recip => "sim_recip",
            Routine::Div => "sim_div",
            Routine::Sqrt => "sim_sqrt",
            Routine::Rsqrt => "sim_rsqrt",
            Routine::ToInt => "sim_to_int",
            Routine::Dot2 => "sim_dot(vec2)",
            Routine::Dot3 => "sim_dot(vec3)",
            Routine::Dot4 => "sim_dot(vec4)",
            Routine::Length => "sim_length",
            Routine::Normalize => "sim_normalize",
            Routine::Mat3MulVec3 => "sim_mat3_mul_vec3",
            Routine::Mat4MulVec4 => "sim_mat4_mul_vec4",
            Routine::Mat4TransformPoint => "sim_mat4_transform_point",
        }
    }
}

/// Every routine, in the probe's order.
pub const ROUTINES: [Routine; 13] = [
    Routine::Recip,
    Routine::Div,
    Routine::Sqrt,
    Routine::Rsqrt,
    Routine::ToInt,
    Routine::Dot2,
    Routine::Dot3,
    Routine::Dot4,
    Routine::Length,
    Routine::Normalize,
    Routine::Mat3MulVec3,
    Routine::Mat4MulVec4,
    Routine::Mat4TransformPoint,
];

/// One probe case: up to 16 words of first operand, 4 of second, as f32 values.
#[derive(Clone, Copy, Debug)]
pub struct Case(pub [f32; INPUT_STRIDE]);

impl Case {
    /// A case of `first` (up to 16 words) and `second` (up to 4), zero elsewhere.
    pub fn new(first: &[f32], second: &[f32]) -> Self {
        let mut words = [0.0f32; INPUT_STRIDE];
        words[..first.len()].copy_from_slice(first);
        words[SECOND..SECOND + second.len()].copy_from_slice(second);
        Case(words)
    }
    fn a(&self, i: usize) -> f32 {
        self.0[i]
    }
    fn b(&self, i: usize) -> f32 {
        self.0[SECOND + i]
    }
    fn vec2(&self, at: usize) -> Vec2 {
        Vec2::new(self.0[at], self.0[at + 1])
    }
    fn vec3(&self, at: usize) -> Vec3 {
        Vec3::new(self.0[at], self.0[at + 1], self.0[at + 2])
    }
    fn vec4(&self, at: usize) -> Vec4 {
        Vec4::new(self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3])
    }
    fn mat3(&self) -> Mat3 {
        Mat3::from_cols(self.vec3(0), self.vec3(3), self.vec3(6))
    }
    fn mat4(&self) -> Mat4 {
        Mat4::from_cols(self.vec4(0), self.vec4(4), self.vec4(8), self.vec4(12))
    }
}

/// The result the Rust reference gives, as the probe writes it: up to four words, and whether
/// each word is a float (NaN compares as "both NaN") or an integer.
pub struct Expected {
    /// The result's words.
    pub words: Vec<u32>,
    /// Whether the words are floats (NaN compares as "both NaN") rather than an integer.
    pub floats: bool,
}

fn floats(values: &[f32]) -> Expected {
    Expected {
        words: values.iter().map(|v| v.to_bits()).collect(),
        floats: true,
    }
}

/// What the Rust reference (`runtime::sim_math`) gives for `routine` on `case`.
pub fn reference(routine: Routine, case: &Case) -> Expected {
    match routine {
        Routine::Recip => floats(&[sim_math::recip(case.a(0))]),
        Routine::Div => floats(&[sim_math::div(case.a(0), case.b(0))]),
        Routine::Sqrt => floats(&[sim_math::sqrt(case.a(0))]),
        Routine::Rsqrt => floats(&[sim_math::inv_sqrt(case.a(0))]),
        Routine::ToInt => Expected {
            words: vec![sim_math::to_int(case.a(0)) as u32],
            floats: false,
        },
        Routine::Dot2 => floats(&[sim_math::dot2(case.vec2(0), case.vec2(SECOND))]),
        Routine::Dot3 => floats(&[sim_math::dot3(case.vec3(0), case.vec3(SECOND))]),
        Routine::Dot4 => floats(&[sim_math::dot4(case.vec4(0), case.vec4(SECOND))]),
        Routine::Length => floats(&[sim_math::length(case.vec3(0))]),
        Routine::Normalize => floats(&sim_math::normalize(case.vec3(0)).to_array()),
        Routine::Mat3MulVec3 => {
            floats(&sim_math::mat3_mul_vec3(&case.mat3(), case.vec3(SECOND)).to_array())
        }
        Routine::Mat4MulVec4 => {
            floats(&sim_math::mat4_mul_vec4(&case.mat4(), case.vec4(SECOND)).to_array())
        }
        Routine::Mat4TransformPoint => {
            floats(&sim_math::mat4_transform_point(&case.mat4(), case.vec3(SECOND)).to_array())
        }
    }
}

fn is_subnormal(x: f32) -> bool {
    x != 0.0 && x.is_finite() && x.abs() < f32::MIN_POSITIVE
}

/// Whether a vector routine's result on `case` depends on the device's subnormal handling: an
/// input or an output is subnormal, or two inputs multiply to a non-zero value below `2^-100`
/// (a product, or a sum of products, that could become subnormal). Products of at least `2^-100`
/// are multiples of `2^-123`, so no sum of them is subnormal either.
///
/// The division and square-root routines and `sim_to_int` never compute on a subnormal (they
/// classify their input by its bits), so every one of their cases is compared on every device.
pub fn depends_on_subnormals(routine: Routine, case: &Case, expected: &Expected) -> bool {
    let (first, second): (usize, usize) = match routine {
        Routine::Recip | Routine::Div | Routine::Sqrt | Routine::Rsqrt | Routine::ToInt => {
            return false;
        }
        Routine::Dot2 => (2, 2),
        Routine::Dot3 => (3, 3),
        Routine::Dot4 => (4, 4),
        Routine::Length | Routine::Normalize => (3, 0),
        Routine::Mat3MulVec3 => (9, 3),
        Routine::Mat4MulVec4 => (16, 4),
        Routine::Mat4TransformPoint => (16, 3),
    };
    let inputs: Vec<f32> = case.0[..first]
        .iter()
        .chain(&case.0[SECOND..SECOND + second])
        .copied()
        .collect();
    let tiny_product = inputs.iter().enumerate().any(|(i, &x)| {
        inputs[i..].iter().any(|&y| {
            let p = (x as f64 * y as f64).abs();
            p != 0.0 && p < TWO_TO_MINUS_100
        })
    });
    tiny_product
        || inputs.iter().any(|&x| is_subnormal(x))
        || expected
            .words
            .iter()
            .any(|&w| is_subnormal(f32::from_bits(w)))
}

/// Any 32-bit pattern: every class, every exponent (for the routines that classify by bits).
fn random_bits(index: u64) -> f32 {
    f32::from_bits(counter(index) as u32)
}

/// A float of either sign with magnitude in `[2^-30, 2^31)`: vector routines on these never meet
/// a subnormal or an overflow.
fn random_moderate(index: u64) -> f32 {
    let r = counter(index);
    let exponent = 97 + (r % 61) as u32; // 2^-30 ..= 2^30
    f32::from_bits((r >> 8) as u32 & 0x807f_ffff | (exponent << 23))
}

/// `1 + 2^-12`: `x * x = 1 + 2^-11 + 2^-24` rounds to `1 + 2^-11`, so `x*x - x*x` is 0 when each
/// product is rounded and `±2^-24` when one of them is fused into the subtraction.
pub fn fma_witness() -> f32 {
    1.0 + f32::from_bits(0x3980_0000) // 2^-12
}

/// Hand-picked scalars: signed zeros, subnormals, the normal range's edges, infinities, NaN with
/// several payloads, round values, values near powers of two, and the `i32` range edges and halves.
pub fn special_scalars() -> Vec<f32> {
    let mut values = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        3.0,
        4.0,
        9.0,
        0.5,
        0.25,
        0.1,
        -0.1,
        1.0 / 3.0,
        std::f32::consts::PI,
        -std::f32::consts::E,
        123_456.79,
        85_769.56,
        1.076_274_3,
        16_777_216.0,
        16_777_215.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7fc0_0000),
        f32::from_bits(0xffc0_0000),
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0x7fff_ffff),
        f32::from_bits(0x0000_0001),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::from_bits(0x0040_0000),
        f32::from_bits(0x8040_0000),
        f32::from_bits(0x7f00_0000), // 2^127
        f32::from_bits(0x7e80_0000), // 2^126
        f32::from_bits(0x7ec0_0000), // 1.5 * 2^126: its reciprocal is subnormal
        f32::from_bits(0x0100_0000), // 2^-125
        f32::from_bits(0x3f80_0001), // next float above 1
        f32::from_bits(0x3f7f_ffff), // next float below 1
        f32::from_bits(0x407f_ffff), // next float below 4
        1e-30,
        -1e30,
        1e20,
        -1e-20,
        fma_witness(),
        2_147_483_648.0,  // 2^31
        -2_147_483_648.0, // -2^31
        2_147_483_520.0,  // the float below 2^31
        -2_147_483_904.0, // the float below -2^31
        3e9,
        -3e9,
        4_294_967_296.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.499_999_97,
        -0.499_999_97,
        8_388_607.5,
        -8_388_607.5,
        16_777_217.0,
        -1e10,
        65_535.5,
        -65_536.5,
        1e-7,
        7.0,
        10.0,
        100.0,
    ];
    for k in [-126i32, -100, -64, -1, 1, 23, 24, 31, 64, 100, 126] {
        let p = power_of_two(k);
        values.push(p);
        values.push(-f32::from_bits(p.to_bits() + 1));
    }
    values
}

/// At least 64 hand-picked cases for `routine`, the fused-multiply-add witness first for the
/// vector routines.
pub fn hand_picked(routine: Routine) -> Vec<Case> {
    let s = special_scalars();
    let n = s.len();
    let x = fma_witness();
    let window = |start: usize, len: usize| -> Vec<f32> {
        (0..len).map(|k| s[(start + k * 7) % n]).collect()
    };
    let mut cases = Vec::new();
    match routine {
        Routine::Recip | Routine::Sqrt | Routine::Rsqrt | Routine::ToInt => {
            cases.extend(s.iter().map(|&v| Case::new(&[v], &[])));
        }
        Routine::Div => {
            cases.push(Case::new(&[85_769.56], &[1.076_274_3]));
            cases.push(Case::new(&[1.0], &[1.0]));
            cases.push(Case::new(&[9.0], &[3.0]));
            for (i, &a) in s.iter().enumerate() {
                for step in [0, 3, 17, 41] {
                    cases.push(Case::new(&[a], &[s[(i + step) % n]]));
                }
            }
        }
        Routine::Dot2 => {
            cases.push(Case::new(&[x, x], &[x, -x]));
            cases.push(Case::new(&[-x, x], &[x, x]));
        }
        Routine::Dot3 => {
            cases.push(Case::new(&[x, x, 0.0], &[x, -x, 0.0]));
            cases.push(Case::new(&[x, 0.0, x], &[x, 0.0, -x]));
        }
        Routine::Dot4 => {
            cases.push(Case::new(&[x, x, 0.0, 0.0], &[x, -x, 0.0, 0.0]));
            cases.push(Case::new(&[1.0, 0.0, x, x], &[0.0, 1.0, x, -x]));
        }
        Routine::Length | Routine::Normalize => {
            cases.push(Case::new(&[x, x, x], &[]));
        }
        Routine::Mat3MulVec3 => {
            // Row 0 is (x, x, 0) against (x, -x, 0): the fused result differs.
            cases.push(Case::new(
                &[x, 0.0, 0.0, x, 0.0, 0.0, 0.0, 0.0, 1.0],
                &[x, -x, 0.0],
            ));
            cases.push(Case::new(
                &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                &[1.0, 2.0, 3.0],
            ));
        }
        Routine::Mat4MulVec4 | Routine::Mat4TransformPoint => {
            let mut m = [0.0f32; 16];
            m[0] = x;
            m[4] = x;
            m[10] = 1.0;
            m[15] = 1.0;
            cases.push(Case::new(&m, &[x, -x, 0.0, 0.0]));
            let identity: Vec<f32> = Mat4::IDENTITY.to_cols_array().to_vec();
            cases.push(Case::new(&identity, &[1.0, -2.0, 3.5, 1.0]));
        }
    }
    if matches!(
        routine,
        Routine::Dot2
            | Routine::Dot3
            | Routine::Dot4
            | Routine::Length
            | Routine::Normalize
            | Routine::Mat3MulVec3
            | Routine::Mat4MulVec4
            | Routine::Mat4TransformPoint
    ) {
        // Windows over the special scalars (zeros, infinities, NaN, subnormals, huge and tiny
        // values side by side), and the same windows against each other.
        for start in 0..n {
            cases.push(Case::new(&window(start, 16), &window(start * 5 + 3, 4)));
        }
        for start in 0..32 {
            let v = window(start * 3, 4);
            cases.push(Case::new(&v, &v));
        }
        // The same over the values no device flushes (zero, NaN, infinities and magnitudes of at
        // least 2^-50), so that plenty of hand-picked cases are compared on lavapipe too.
        let kept: Vec<f32> = s
            .iter()
            .copied()
            .filter(|v| *v == 0.0 || !v.is_finite() || v.abs() >= power_of_two(-50))
            .collect();
        let m = kept.len();
        for start in 0..m {
            let first: Vec<f32> = (0..16).map(|k| kept[(start + k * 5) % m]).collect();
            let second: Vec<f32> = (0..4).map(|k| kept[(start * 3 + k * 11 + 1) % m]).collect();
            cases.push(Case::new(&first, &second));
        }
    }
    debug_assert!(cases.len() >= 64, "{routine:?}: only {} cases", cases.len());
    cases
}

/// Random cases: any bit pattern for the routines that classify their inputs, moderate
/// magnitudes (no subnormal can arise) for the vector routines.
pub fn random(routine: Routine, count: u64) -> Vec<Case> {
    let seed = (routine as u64) << 40;
    (0..count)
        .map(|i| {
            let mut words = [0.0f32; INPUT_STRIDE];
            for (k, word) in words.iter_mut().enumerate() {
                let index = seed + i * INPUT_STRIDE as u64 + k as u64;
                *word = match routine {
                    Routine::Recip
                    | Routine::Div
                    | Routine::Sqrt
                    | Routine::Rsqrt
                    | Routine::ToInt => random_bits(index),
                    _ => random_moderate(index),
                };
            }
            Case(words)
        })
        .collect()
}
