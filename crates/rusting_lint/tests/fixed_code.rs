//! Which code counts as fixed: the registration patterns of bevy and the engine, calls followed
//! through the crate, and what is left out.

mod common;

use common::codes_at;
use rusting_lint::{LintError, lint_source, lint_sources};

fn at(code: &str, line: usize) -> (String, usize) {
    (code.to_owned(), line)
}

/// Fails if tuples, `.chain()`, `.in_set()`, `.after()`, `.run_if()`, module paths, `Self::`
/// paths, closures, other fixed schedules or `edit_schedule` stop registering fixed systems, or
/// if a label in `.after(..)` is taken for a fixed system.
#[test]
fn registration_patterns_are_followed() {
    let source = "use bevy::prelude::*;
pub struct Game;
impl Plugin for Game {
    fn build(&self, app: &mut App) {
        app.add_systems(
            FixedUpdate,
            (
                (motion::integrate, Self::steer).chain().in_set(SimSet::Player),
                spin.after(frame_only).run_if(ready),
            ),
        )
        .add_systems(FixedPostUpdate, |q: Query<&Spin>| { let _ = 1.0f32.exp(); })
        .add_systems(Update, frame_only);
        app.edit_schedule(FixedFirst, |schedule| { schedule.add_systems(early); });
    }
}
impl Game { fn steer() { let _ = 2.0f32.cos(); } }
mod motion { pub fn integrate() { let _ = 3.0f32.sin(); } }
fn spin() { let _ = 4.0f32.tan(); }
fn ready() -> bool { 5.0f32.ln() > 0.0 }
fn early() { let _ = 6.0f32.log2(); }
fn frame_only() { let _ = 7.0f32.atan(); }
";
    assert_eq!(
        codes_at(source),
        [
            at("LINT_TRANSCENDENTAL", 12),
            at("LINT_TRANSCENDENTAL", 17),
            at("LINT_TRANSCENDENTAL", 18),
            at("LINT_TRANSCENDENTAL", 19),
            at("LINT_TRANSCENDENTAL", 20),
            at("LINT_TRANSCENDENTAL", 21),
        ]
    );
}

/// Fails if test-only registrations make code fixed, or test code is linted.
#[test]
fn test_code_is_left_out() {
    let source = "fn plain() { let _ = 1.0f32.sin(); }
#[cfg(test)]
mod tests {
    #[test]
    fn registers() { App::new().add_systems(FixedUpdate, super::plain); }
}
";
    assert!(codes_at(source).is_empty());
}

/// Fails if the report stops naming the fixed systems and functions, or stops resolving calls
/// across files of one crate.
#[test]
fn a_crate_of_several_files_is_one_call_graph() {
    let report = lint_sources(&[
        (
            "src/lib.rs",
            "mod motion;\nfn build(app: &mut App) { app.add_systems(FixedUpdate, motion::step); }\n",
        ),
        (
            "src/motion.rs",
            "pub fn step(q: Query<&Body>) { for b in &q { b.advance(); } }\nimpl Body { fn advance(&self) { let _ = self.v.powi(2); } }\n",
        ),
    ])
    .unwrap();
    assert_eq!(report.fixed_systems, ["src/motion.rs: step"]);
    assert_eq!(
        report.fixed_functions,
        ["src/motion.rs: Body::advance", "src/motion.rs: step"]
    );
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].file, "src/motion.rs");
    assert_eq!(report.findings[0].line, 2);
    assert!(report.has_errors());
}

/// Fails if a syntax error panics or loses its place.
#[test]
fn a_file_that_does_not_parse_is_an_error_with_its_place() {
    let error = lint_source("src/broken.rs", "fn ok() {}\nfn broken( {\n").unwrap_err();
    let LintError::Parse { file, line, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(file, "src/broken.rs");
    assert_eq!(*line, 2);
    assert!(error.to_string().starts_with("src/broken.rs:2:"), "{error}");
}

/// Fails if the JSON form of a finding loses the stable code or the severity word.
#[test]
fn findings_serialize_with_their_stable_codes() {
    let source = "fn f(app: &mut App) { app.add_systems(FixedUpdate, g); }\nfn g() { let _ = 1.0f32.mul_add(2.0, 3.0); }\n";
    let findings = lint_source("src/lib.rs", source).unwrap();
    let json = serde_json::to_value(&findings[0]).unwrap();
    assert_eq!(json["code"], "LINT_MUL_ADD");
    assert_eq!(json["severity"], "error");
    assert_eq!(json["file"], "src/lib.rs");
    assert_eq!(json["line"], 2);
    assert_eq!(json["column"], 25);
}
