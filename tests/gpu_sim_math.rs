//! `src/shaders/sim_math.glsl` on a Vulkan device against the Rust reference `runtime::sim_math`,
//! bit for bit. Feature `gpu-tests`; in CI the device is Mesa's lavapipe.
//!
//! Run with `--test-threads=1` (one device per test binary, see `docs/gpu.md`).

use bevy::math::{Mat3, Mat4, Vec2, Vec3, Vec4};
use rusting_engine::physics::gpu::compile::compile;
use rusting_engine::physics::gpu::shaders::SIM_MATH_PROBE;
use rusting_engine::physics::gpu::{ComputePipeline, GpuContext};
use rusting_engine::runtime::sim_math;

#[path = "support/splitmix.rs"]
mod splitmix;
use splitmix::mix;

/// Words per case in the probe's input buffer, and where the second operand starts.
const INPUT_STRIDE: usize = 20;
const SECOND: usize = 16;
/// Words per case in the output buffer.
const OUTPUT_STRIDE: usize = 4;
/// Invocations per work group (`local_size_x` in the probe).
const GROUP: usize = 64;

/// The probe's routines, numbered as its `ROUTINE_*` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Routine {
    Recip = 0,
    Div = 1,
    Sqrt = 2,
    Rsqrt = 3,
    ToInt = 4,
    Dot2 = 5,
    Dot3 = 6,
    Dot4 = 7,
    Length = 8,
    Normalize = 9,
    Mat3MulVec3 = 10,
    Mat4MulVec4 = 11,
    Mat4TransformPoint = 12,
}

const ROUTINES: [Routine; 13] = [
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
struct Case([f32; INPUT_STRIDE]);

impl Case {
    fn new(first: &[f32], second: &[f32]) -> Self {
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
struct Expected {
    words: Vec<u32>,
    floats: bool,
}

fn floats(values: &[f32]) -> Expected {
    Expected {
        words: values.iter().map(|v| v.to_bits()).collect(),
        floats: true,
    }
}

fn reference(routine: Routine, case: &Case) -> Expected {
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
fn depends_on_subnormals(routine: Routine, case: &Case, expected: &Expected) -> bool {
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
            p != 0.0 && p < 2f64.powi(-100)
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
    f32::from_bits(mix(index) as u32)
}

/// A float of either sign with magnitude in `[2^-30, 2^31)`: vector routines on these never meet
/// a subnormal or an overflow.
fn random_moderate(index: u64) -> f32 {
    let r = mix(index);
    let exponent = 97 + (r % 61) as u32; // 2^-30 ..= 2^30
    f32::from_bits((r >> 8) as u32 & 0x807f_ffff | (exponent << 23))
}

/// `1 + 2^-12`: `x * x = 1 + 2^-11 + 2^-24` rounds to `1 + 2^-11`, so `x*x - x*x` is 0 when each
/// product is rounded and `±2^-24` when one of them is fused into the subtraction.
fn fma_witness() -> f32 {
    1.0 + f32::from_bits(0x3980_0000) // 2^-12
}

/// Hand-picked scalars: signed zeros, subnormals, the normal range's edges, infinities, NaN with
/// several payloads, round values, values near powers of two, and the `i32` range edges and halves.
fn special_scalars() -> Vec<f32> {
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
        let p = 2f32.powi(k);
        values.push(p);
        values.push(-f32::from_bits(p.to_bits() + 1));
    }
    values
}

/// At least 64 hand-picked cases for `routine`, the fused-multiply-add witness first for the
/// vector routines.
fn hand_picked(routine: Routine) -> Vec<Case> {
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
            .filter(|v| *v == 0.0 || !v.is_finite() || v.abs() >= 2f32.powi(-50))
            .collect();
        let m = kept.len();
        for start in 0..m {
            let first: Vec<f32> = (0..16).map(|k| kept[(start + k * 5) % m]).collect();
            let second: Vec<f32> = (0..4).map(|k| kept[(start * 3 + k * 11 + 1) % m]).collect();
            cases.push(Case::new(&first, &second));
        }
    }
    assert!(cases.len() >= 64, "{routine:?}: only {} cases", cases.len());
    cases
}

/// Random cases: any bit pattern for the routines that classify their inputs, moderate
/// magnitudes (no subnormal can arise) for the vector routines.
fn random(routine: Routine, count: u64) -> Vec<Case> {
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

/// Runs `routine` over `cases` on the device; one `[u32; 4]` of output per case.
fn run(
    context: &GpuContext,
    pipeline: &ComputePipeline<'_>,
    routine: Routine,
    cases: &[Case],
) -> Vec<[u32; OUTPUT_STRIDE]> {
    let input_words: Vec<u32> = cases
        .iter()
        .flat_map(|case| case.0.iter().map(|v| v.to_bits()))
        .collect();
    let mut inputs = context
        .storage_buffer(input_words.len())
        .expect("input buffer");
    inputs.write(0, &input_words).expect("inputs fit");
    let outputs = context
        .storage_buffer(cases.len() * OUTPUT_STRIDE)
        .expect("output buffer");
    let push: Vec<u8> = [routine as u32, cases.len() as u32]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let groups = cases.len().div_ceil(GROUP) as u32;
    context
        .dispatch(pipeline, &[&inputs, &outputs], &push, [groups, 1, 1])
        .expect("dispatch");
    let words = outputs
        .read(0, cases.len() * OUTPUT_STRIDE)
        .expect("outputs fit");
    words
        .chunks_exact(OUTPUT_STRIDE)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect()
}

/// Every `sim_math.glsl` routine gives the Rust reference's bits on the device.
///
/// Per routine: at least 64 hand-picked cases (signed zeros, subnormals, `MIN_POSITIVE`, `MAX`,
/// infinities, NaN with several payloads, round values such as `1 / 1` and `sqrt(9)`, a
/// near-tie division, `+-2^31`, `+-3e9` and halves for `sim_to_int`), then 3000 random ones. Every
/// output bit is compared, with two exceptions:
///
/// - NaN compares as "both NaN": devices and constant folding produce different NaN payloads,
///   and a NaN in simulation state is a bug to report, not a value to carry.
/// - Cases of the vector routines whose result depends on subnormal handling (see
///   `depends_on_subnormals`) are compared only where the device reports
///   `shaderDenormPreserveFloat32`; the Rust reference (a CPU, which keeps subnormals) is the
///   specification. lavapipe flushes subnormals, so there they are counted and skipped. The
///   division, square-root and `sim_to_int` routines classify their inputs by their bits and never
///   compute on a subnormal, so their subnormal cases are compared on every device.
///
/// The first vector case of each routine is the fused-multiply-add witness: its result differs
/// if the driver fuses a multiply into the following add (lavapipe never fuses, even without
/// `precise`; the SPIR-V check guards that on every device).
///
/// Fails if a step or an order in `sim_math.glsl` departs from `runtime::sim_math`. Seen failing:
/// `sim_round_quotient` returning `q` without the final rounding (19 mismatches in `Recip` and
/// `Div`), `sim_dot(vec3, vec3)` summing `a.x*b.x + (a.y*b.y + a.z*b.z)` (248 mismatches), and
/// `sim_to_int` saturating on `x > 2147483648.0` instead of `>=` (`2^31` gives `INT_MIN`). The
/// bit-trick seeds are not pinned by it: the Newton steps and the rounding test reach the correctly
/// rounded result from any nearby seed, which is the design. A missing `precise` does not fail it
/// on lavapipe, which never fuses; `simulation_shaders_are_precise_and_never_relaxed` catches that.
#[test]
fn shader_sim_math_matches_the_rust_reference_bit_for_bit() {
    let context = GpuContext::new().unwrap_or_else(|err| {
        panic!("the gpu-tests feature needs a Vulkan device (lavapipe in CI): {err}")
    });
    let info = context.info().clone();
    let preserves_subnormals = info.float_controls.denorm_preserve_f32;
    println!("device: {info}");
    println!("float controls: {:?}", info.float_controls);
    match info.cross_platform() {
        Ok(()) => println!("this device can run CrossPlatform"),
        Err(refusal) => println!("{refusal}"),
    }
    let spirv = compile(&SIM_MATH_PROBE).unwrap_or_else(|err| panic!("{err}"));
    let pipeline = context
        .compute_pipeline(SIM_MATH_PROBE.name, &spirv, 2, 8)
        .expect("probe pipeline");

    // The witness really is one: fused, x*x - x*x is the rounding error of x*x, not zero.
    let x = fma_witness() as f64;
    let rounded = (x * x) as f32 as f64;
    assert_ne!(x * x - rounded, 0.0);

    let mut mismatches = Vec::new();
    for routine in ROUTINES {
        let hand = hand_picked(routine);
        let hand_count = hand.len();
        let cases: Vec<Case> = hand.into_iter().chain(random(routine, 3000)).collect();
        let outputs = run(&context, &pipeline, routine, &cases);
        let mut skipped = 0;
        for (index, (case, got)) in cases.iter().zip(&outputs).enumerate() {
            let expected = reference(routine, case);
            if !preserves_subnormals && depends_on_subnormals(routine, case, &expected) {
                skipped += 1;
                continue;
            }
            let same = expected.words.iter().zip(got).all(|(&want, &have)| {
                let (w, h) = (f32::from_bits(want), f32::from_bits(have));
                want == have || (expected.floats && w.is_nan() && h.is_nan())
            });
            if !same {
                let kind = if index < hand_count {
                    "hand-picked"
                } else {
                    "random"
                };
                mismatches.push(format!(
                    "{routine:?} {kind} case {index}: inputs {:?} ({:08x?}): expected {:08x?}, \
                     device gave {:08x?}",
                    case.0,
                    case.0.map(f32::to_bits),
                    expected.words,
                    &got[..expected.words.len()]
                ));
            }
        }
        println!(
            "{routine:?}: {} cases ({hand_count} hand-picked), {skipped} skipped for subnormals",
            cases.len()
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches, the first ones:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
}

/// Misuse of the context is an error, never undefined behaviour or a panic: words that are not
/// SPIR-V, the wrong number of buffers or bytes of push constants, a buffer from another context,
/// and reads and writes outside a buffer.
#[test]
fn the_context_refuses_bad_dispatches_with_typed_errors() {
    use rusting_engine::physics::gpu::GpuError;

    let context = GpuContext::new().unwrap_or_else(|err| panic!("{err}"));
    let spirv = compile(&SIM_MATH_PROBE).unwrap_or_else(|err| panic!("{err}"));
    assert!(matches!(
        context.compute_pipeline("words.spv", &[1, 2, 3], 2, 8),
        Err(GpuError::NotSpirv { words: 3, .. })
    ));
    assert!(matches!(
        context.compute_pipeline("probe", &spirv, 2, 6),
        Err(GpuError::PushConstantLimit { bytes: 6, .. })
    ));
    assert!(matches!(
        context.storage_buffer(0),
        Err(GpuError::EmptyBuffer)
    ));
    let pipeline = context
        .compute_pipeline(SIM_MATH_PROBE.name, &spirv, 2, 8)
        .expect("probe pipeline");
    let mut inputs = context.storage_buffer(INPUT_STRIDE).expect("buffer");
    let outputs = context.storage_buffer(OUTPUT_STRIDE).expect("buffer");
    assert!(matches!(
        inputs.write(INPUT_STRIDE - 1, &[0, 0]),
        Err(GpuError::OutOfBounds { .. })
    ));
    assert!(matches!(
        outputs.read(usize::MAX, 2),
        Err(GpuError::OutOfBounds { .. })
    ));
    let push = [0u8; 8];
    assert!(matches!(
        context.dispatch(&pipeline, &[&inputs], &push, [1, 1, 1]),
        Err(GpuError::BindingCount {
            expected: 2,
            bound: 1,
            ..
        })
    ));
    assert!(matches!(
        context.dispatch(&pipeline, &[&inputs, &outputs], &push[..4], [1, 1, 1]),
        Err(GpuError::PushConstantSize {
            expected: 8,
            passed: 4,
            ..
        })
    ));
    let other = GpuContext::new().unwrap_or_else(|err| panic!("{err}"));
    let foreign = other.storage_buffer(OUTPUT_STRIDE).expect("buffer");
    assert!(matches!(
        context.dispatch(&pipeline, &[&inputs, &foreign], &push, [1, 1, 1]),
        Err(GpuError::ForeignObject)
    ));
    // And a correct dispatch still works afterwards: recip(0) is +inf.
    let mut push = [0u8; 8];
    push[4..].copy_from_slice(&1u32.to_le_bytes());
    context
        .dispatch(&pipeline, &[&inputs, &outputs], &push, [1, 1, 1])
        .expect("dispatch");
    assert_eq!(
        outputs.read(0, 1).expect("in bounds"),
        [f32::INFINITY.to_bits()]
    );
}
