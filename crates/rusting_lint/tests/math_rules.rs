//! The float math rules: `LINT_TRANSCENDENTAL`, `LINT_GLAM_TRANSCENDENTAL` and `LINT_MUL_ADD`,
//! each with code that must be caught and code that must not.

mod common;

use common::{codes, codes_at, game, lint};

/// Fails if method-call or path transcendentals in a fixed system go unreported.
#[test]
fn transcendentals_in_a_fixed_system_are_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Transform>) {
    for mut t in &mut q {
        let a = t.translation.x.sin();
        let b = f32::atan2(t.translation.y, a);
        t.translation.z = b.powf(2.0) + (b as f64).exp() as f32;
    }
}
fn frame_step() {}",
    );
    let found = lint(&source);
    let at: Vec<(String, usize, usize)> = found
        .iter()
        .map(|f| (f.code.to_string(), f.line, f.column))
        .collect();
    assert_eq!(
        at,
        [
            ("LINT_TRANSCENDENTAL".to_owned(), 11, 33),
            ("LINT_TRANSCENDENTAL".to_owned(), 12, 22),
            ("LINT_TRANSCENDENTAL".to_owned(), 13, 29),
            ("LINT_TRANSCENDENTAL".to_owned(), 13, 52),
        ]
    );
    assert!(
        found[0].message.contains("sim_math::sin_cos"),
        "{}",
        found[0]
    );
    assert!(found[1].message.contains("sim_math::atan2"), "{}", found[1]);
    assert!(found[0].message.contains("FixedUpdate system `fixed_step`"));
}

/// Fails if the lint stops following calls from a fixed system into the crate's functions.
#[test]
fn transcendentals_in_functions_a_fixed_system_calls_are_caught() {
    let source = game(
        "fn fixed_step(q: Query<&Spinner>) { for s in &q { let _ = helpers::angle(s.turns); } }
fn frame_step() {}
mod helpers {
    pub fn angle(turns: f32) -> f32 { Spin(turns).wrapped() }
    pub struct Spin(pub f32);
    impl Spin { pub fn wrapped(&self) -> f32 { self.0.cos() } }
}",
    );
    let found = lint(&source);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 14);
    assert!(
        found[0]
            .message
            .contains("in `Spin::wrapped`, called from the FixedUpdate system `fixed_step`"),
        "{}",
        found[0]
    );
}

/// Fails if presentation code, `sqrt` or `sim_math` calls are reported.
#[test]
fn sqrt_sim_math_and_frame_systems_are_not_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Transform>) {
    for mut t in &mut q {
        let (s, c) = sim_math::sin_cos(t.translation.x);
        t.translation.y = (s * s + c * c).sqrt() + sim_math::atan2(s, c);
    }
}
fn frame_step(mut q: Query<&mut Transform>) {
    for mut t in &mut q { t.translation.x = t.translation.y.sin().mul_add(2.0, 1.0); }
}
fn never_called(x: f32) -> f32 { x.tan() }",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if a crate that defines its own `sin` method (a fixed-point type) gets its calls
/// reported as platform math.
#[test]
fn a_crates_own_method_of_that_name_is_not_caught() {
    let source = game(
        "struct Fixed(i32);
impl Fixed { fn sin(&self) -> Fixed { Fixed(self.0) } }
fn fixed_step(a: Res<Angle>) { let _ = a.0.sin(); }
fn frame_step() {}",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if rotation helpers that hide platform trigonometry go unreported.
#[test]
fn glam_rotation_helpers_are_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Transform>) {
    for mut t in &mut q {
        t.rotation = Quat::from_rotation_y(0.5).slerp(t.rotation, 0.1);
        t.rotate_y(0.1);
    }
}
fn frame_step(mut q: Query<&mut Transform>) { for mut t in &mut q { t.rotate_x(1.0); } }",
    );
    assert_eq!(
        codes_at(&source),
        [
            ("LINT_GLAM_TRANSCENDENTAL".to_owned(), 11),
            ("LINT_GLAM_TRANSCENDENTAL".to_owned(), 11),
            ("LINT_GLAM_TRANSCENDENTAL".to_owned(), 12),
        ]
    );
    assert!(lint(&source)[0].message.contains("rotation_from_euler"));
}

/// Fails if `sim_math` rotation builders or glam calls without trigonometry are reported.
#[test]
fn sim_math_rotations_are_not_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Transform>) {
    for mut t in &mut q {
        let turn = sim_math::rotation_from_euler(EulerOrder::YXZ, 0.5, 0.0, 0.0);
        t.rotation = sim_math::quat_mul(turn, t.rotation).normalize();
        t.translation = t.translation.lerp(Vec3::ZERO, 0.5);
    }
}
fn frame_step() {}",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if `mul_add`, as a method or a path, goes unreported in fixed code.
#[test]
fn mul_add_is_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Body>) {
    for mut b in &mut q {
        b.x = b.v.mul_add(DT, b.x);
        b.y = f32::mul_add(b.w, DT, b.y);
    }
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            ("LINT_MUL_ADD".to_owned(), 11),
            ("LINT_MUL_ADD".to_owned(), 12)
        ]
    );
}

/// Fails if plain multiply-then-add is reported as a fused multiply-add.
#[test]
fn multiply_then_add_is_not_caught() {
    let source = game(
        "fn fixed_step(mut q: Query<&mut Body>) { for mut b in &mut q { b.x = b.v * DT + b.x; } }
fn frame_step(mut q: Query<&mut Body>) { for mut b in &mut q { b.s = b.v.mul_add(2.0, 1.0); } }",
    );
    assert!(codes(&source).is_empty());
}

/// Fails if calls inside macro arguments are skipped.
#[test]
fn calls_inside_macros_are_caught() {
    let source = game(
        "fn fixed_step(a: Res<Angle>) {
    let v = vec![a.0.cos(), 1.0];
    assert!(a.0.exp() > 0.0, \"{}\", a.0.ln());
    info!(\"{v:?}\");
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            ("LINT_TRANSCENDENTAL".to_owned(), 10),
            ("LINT_TRANSCENDENTAL".to_owned(), 11),
            ("LINT_TRANSCENDENTAL".to_owned(), 11),
        ]
    );
}
