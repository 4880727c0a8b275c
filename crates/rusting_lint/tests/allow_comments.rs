//! Allow comments: one line silenced with a reason; no reason, unknown codes and unused allows
//! reported.

mod common;

use common::{codes_at, game, lint};
use rusting_lint::Severity;

fn at(code: &str, line: usize) -> (String, usize) {
    (code.to_owned(), line)
}

/// Fails if an allow with a reason, above the line or after the code, stops silencing it.
#[test]
fn an_allow_with_a_reason_silences_its_line() {
    let source = game(
        "fn fixed_step(a: Res<Angle>) {
    // rusting: allow(LINT_TRANSCENDENTAL) reason: only feeds the debug overlay, never state
    let overlay = a.0.sin();
    let shade = a.0.cos(); // rusting: allow(LINT_TRANSCENDENTAL, LINT_MUL_ADD) reason: same
    let next = a.0.tan();
}
fn frame_step() {}",
    );
    assert_eq!(codes_at(&source), [at("LINT_TRANSCENDENTAL", 13)]);
}

/// Fails if an allow without a reason silences anything or goes unreported.
#[test]
fn an_allow_without_a_reason_is_itself_a_finding() {
    let source = game(
        "fn fixed_step(a: Res<Angle>) {
    // rusting: allow(LINT_TRANSCENDENTAL)
    let overlay = a.0.sin();
    // rusting: allow(LINT_SINE) reason: not a code
    let shade = a.0.cos();
}
fn frame_step() {}",
    );
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_ALLOW_INVALID", 10),
            at("LINT_TRANSCENDENTAL", 11),
            at("LINT_ALLOW_INVALID", 12),
            at("LINT_TRANSCENDENTAL", 13),
        ]
    );
    let found = lint(&source);
    assert!(found[0].message.contains("no reason"), "{}", found[0]);
    assert!(found[2].message.contains("`LINT_SINE` is not a lint code"));
}

/// Fails if an allow that silences nothing (a wrong code, or code that is not fixed) is not
/// warned about, or if the warning fails validation.
#[test]
fn an_unused_allow_is_a_warning() {
    let source = game(
        "fn fixed_step(a: Res<Angle>) {
    // rusting: allow(LINT_MUL_ADD) reason: wrong code for this line
    let overlay = a.0.sin();
}
fn frame_step(a: Res<Angle>) {
    // rusting: allow(LINT_TRANSCENDENTAL) reason: presentation
    let _ = a.0.sin();
}",
    );
    let found = lint(&source);
    assert_eq!(
        codes_at(&source),
        [
            at("LINT_ALLOW_UNUSED", 10),
            at("LINT_TRANSCENDENTAL", 11),
            at("LINT_ALLOW_UNUSED", 14),
        ]
    );
    assert_eq!(found[0].severity, Severity::Warning);
    assert_eq!(found[1].severity, Severity::Error);
}
