//! `LINT_FRAME_TIME`: reading the frame clock in fixed code.
//!
//! The engine runs a whole number of fixed ticks per frame, each simulating
//! `FrameTime::fixed_delta` seconds. The frame's own time (bevy's `Time`, real, virtual or fixed,
//! and `FrameTime`'s `delta`, `real_delta`, `elapsed` and `frame`) depends on frame pacing, pause
//! and time scale, which differ between a live run, a replay and a test. Caught: a fixed system
//! input of type `Res<Time>` / `Res<Time<Real>>` / `Res<Time<Virtual>>` / `Res<Time<Fixed>>`
//! (and `ResMut`, `Option`, references), `world.resource::<Time>()`, `.delta_secs()`,
//! `.delta_secs_f64()`, `.elapsed_secs()` and friends on anything (unless the crate defines a
//! method of that name), `.delta()` / `.elapsed()` on a value of type `Time`, and the presentation
//! fields of a value of type `FrameTime`. A crate that defines its own type called `Time` gets no
//! `Time` findings: the name is then probably its own.

use syn::{Expr, Member, Pat, Type};

use crate::finding::LintCode;
use crate::infer::{kind_of, turbofish_type};
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, span_of};
use crate::types::{TypeKind, classify};

/// The rule.
pub(crate) struct FrameTime;

const ADVICE: &str = "fixed code reads `Res<FrameTime>` and uses `fixed_delta` (seconds per \
                      tick), `fixed_tick` or `fixed_elapsed()`";

/// bevy `Time` methods that read the frame's clock, whatever the receiver.
const TIME_METHODS: [&str; 6] = [
    "delta_secs",
    "delta_secs_f64",
    "elapsed_secs",
    "elapsed_secs_f64",
    "elapsed_secs_wrapped",
    "elapsed_secs_wrapped_f64",
];

impl Rule for FrameTime {
    fn check_input(&self, _pat: &Pat, ty: &Type, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let TypeKind::BevyTime(clock) = classify(ty, &cx.index.hash_aliases)
            && !crate_has_own_time(cx)
        {
            out.push(Hit::at(
                LintCode::FrameTime,
                span_of(ty),
                format!("{}; {ADVICE}", time_problem(clock.as_deref())),
            ));
        }
    }

    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        match expr {
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                if let Some(TypeKind::BevyTime(clock)) =
                    turbofish_type(call).map(|ty| classify(ty, &cx.index.hash_aliases))
                    && !crate_has_own_time(cx)
                {
                    out.push(Hit::at(
                        LintCode::FrameTime,
                        call.method.span(),
                        format!("{}; {ADVICE}", time_problem(clock.as_deref())),
                    ));
                    return;
                }
                let receiver = kind_of(&call.receiver, cx.bindings, cx.index);
                let known_time =
                    matches!(receiver, TypeKind::BevyTime(_)) && !crate_has_own_time(cx);
                let reads = (TIME_METHODS.contains(&method.as_str())
                    && (known_time || !cx.crate_defines_method(&method)))
                    || (known_time && matches!(method.as_str(), "delta" | "elapsed"));
                if reads {
                    out.push(Hit::at(
                        LintCode::FrameTime,
                        call.method.span(),
                        format!("`.{method}()` reads the frame clock in fixed code; {ADVICE}"),
                    ));
                }
            }
            Expr::Field(field) => {
                let Member::Named(name) = &field.member else {
                    return;
                };
                let name = name.to_string();
                let instead = match name.as_str() {
                    "delta" | "real_delta" => "`fixed_delta`",
                    "elapsed" => "`fixed_elapsed()`",
                    "frame" => "`fixed_tick`",
                    _ => return,
                };
                if kind_of(&field.base, cx.bindings, cx.index) == TypeKind::FrameTime {
                    out.push(Hit::at(
                        LintCode::FrameTime,
                        span_of(&field.member),
                        format!(
                            "`FrameTime::{name}` is presentation time (frame pacing, pause, time \
                             scale); fixed code uses {instead}"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Whether the crate defines a type called `Time` of its own.
fn crate_has_own_time(cx: &RuleContext<'_>) -> bool {
    cx.index.type_names.contains("Time")
}

/// What is wrong with reading bevy's `Time<clock>`.
fn time_problem(clock: Option<&str>) -> String {
    match clock {
        Some("Fixed") => {
            "bevy's `Time<Fixed>` is not the engine's tick clock (the engine runs its \
                          own ticks)"
                .to_owned()
        }
        Some(clock) => {
            format!("bevy's `Time<{clock}>` is the frame clock, which depends on frame pacing")
        }
        None => "bevy's `Time` is the frame clock, which depends on frame pacing".to_owned(),
    }
}
