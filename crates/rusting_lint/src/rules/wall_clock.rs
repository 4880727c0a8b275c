//! `LINT_WALL_CLOCK`: reading a wall clock in fixed code.
//!
//! A tick's result must depend on the tick, never on when it ran: time in simulation is
//! `fixed_tick * fixed_delta` (`FrameTime::fixed_elapsed()`). Caught: `Instant::now`, anything on
//! `SystemTime` (`now`, `UNIX_EPOCH`), `UNIX_EPOCH` itself, chrono's `Utc::now` / `Local::now`,
//! time's `OffsetDateTime::now_utc` / `now_local`, and `.elapsed()` / `.duration_since()` on a
//! value declared as an `Instant` or `SystemTime`.

use syn::Expr;

use crate::finding::LintCode;
use crate::infer::kind_of;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, ends_with, expr_path, owner_segment};
use crate::types::TypeKind;

/// The rule.
pub(crate) struct WallClock;

const ADVICE: &str = "simulation time is `FrameTime::fixed_elapsed()` (`fixed_tick * fixed_delta`)";

impl Rule for WallClock {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            if matches!(
                call.method.to_string().as_str(),
                "elapsed" | "duration_since"
            ) && kind_of(&call.receiver, cx.bindings, cx.index) == TypeKind::WallClock
            {
                out.push(Hit::at(
                    LintCode::WallClock,
                    call.method.span(),
                    format!(
                        "`.{}()` on an `Instant`/`SystemTime` reads the wall clock; {ADVICE}",
                        call.method
                    ),
                ));
            }
            return;
        }
        let Some((path, span)) = expr_path(expr) else {
            return;
        };
        let segments = cx.segments(path);
        let owner = owner_segment(&segments);
        let hit = ends_with(&segments, &["Instant", "now"])
            || owner == Some("SystemTime")
            || segments.last().is_some_and(|last| last == "UNIX_EPOCH")
            || ends_with(&segments, &["Utc", "now"])
            || ends_with(&segments, &["Local", "now"])
            || ends_with(&segments, &["OffsetDateTime", "now_utc"])
            || ends_with(&segments, &["OffsetDateTime", "now_local"]);
        if hit {
            out.push(Hit::at(
                LintCode::WallClock,
                span,
                format!(
                    "`{}` reads the wall clock, which differs on every run; {ADVICE}",
                    segments.join("::")
                ),
            ));
        }
    }
}
