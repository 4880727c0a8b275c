//! `src/shaders/sim_math.glsl` on a Vulkan device against the Rust reference `runtime::sim_math`,
//! bit for bit. Feature `gpu-tests`; in CI the device is Mesa's lavapipe.
//!
//! Run with `--test-threads=1` (one device per test binary, see `docs/gpu.md`).

use rusting_engine::physics::gpu::GpuContext;
use rusting_engine::physics::gpu::compile::compile;
use rusting_engine::physics::gpu::shaders::SIM_MATH_PROBE;

use rusting_engine::physics::gpu::conformance::run_cases;
use rusting_engine::physics::gpu::probe_cases::{
    Case, INPUT_STRIDE, OUTPUT_STRIDE, ROUTINES, depends_on_subnormals, fma_witness, hand_picked,
    random, reference,
};

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
    match info.declared_float_controls() {
        Ok(()) => println!("this device declares every float control"),
        Err(missing) => println!("missing float controls: {missing:?}"),
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
        let outputs = run_cases(&context, &pipeline, routine, &cases).expect("dispatch");
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
