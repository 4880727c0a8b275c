//! `LINT_PROCESS_RANDOMNESS`: randomness seeded by the process in fixed code.
//!
//! Simulation randomness is `RandomSeed::value(tick, RandomSeed::stream(subsystem, key))`: the
//! same tick and stream give the same value in every run. Caught: `thread_rng`, `rand::random`
//! (and rand 0.9's `random_range`, `random_bool`, ...), `rand::rng`, `Uuid::new_v4` (and the
//! time-based `now_v1`/`now_v6`/`now_v7`/`new_v7`), `OsRng`, anything from `fastrand` or
//! `getrandom`, `from_entropy` / `from_os_rng` constructors, and `RandomState::new`, whose
//! hashes differ per process. Paths are matched after the file's `use` declarations, so a
//! `random()` imported from `rand` is caught too.

use syn::Expr;

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, ends_with, expr_path, owner_segment};

/// The rule.
pub(crate) struct ProcessRandomness;

impl Rule for ProcessRandomness {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let Some((path, span)) = expr_path(expr) else {
            return;
        };
        let segments = cx.segments(path);
        let Some(last) = segments.last().map(String::as_str) else {
            return;
        };
        let owner = owner_segment(&segments);
        let hit = last == "thread_rng"
            || last == "OsRng"
            || (owner == Some("rand") && (last.starts_with("random") || last == "rng"))
            || (owner == Some("Uuid")
                && matches!(last, "new_v4" | "now_v1" | "now_v6" | "now_v7" | "new_v7"))
            || segments
                .first()
                .is_some_and(|first| first == "fastrand" || first == "getrandom")
            || matches!(last, "from_entropy" | "from_os_rng")
            || ends_with(&segments, &["RandomState", "new"]);
        if hit {
            out.push(Hit::at(
                LintCode::ProcessRandomness,
                span,
                format!(
                    "`{}` draws randomness seeded by the process, so every run differs; use \
                     `RandomSeed::value(tick, RandomSeed::stream(subsystem, key))`",
                    segments.join("::")
                ),
            ));
        }
    }
}
