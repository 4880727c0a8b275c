//! `LINT_TIME_BUDGET`: a loop in fixed code that stops when time runs out.
//!
//! A loop bounded by a clock ("work until 2 ms have passed") does as much work as the machine
//! manages in that time: a fast machine finishes more units per tick than a slow one, a loaded
//! machine fewer than an idle one, so the state after the tick differs between runs and between
//! peers. The fix is a fixed number of work units per tick: the engine's sliced tasks
//! (`Sliced<T>`, added with `app.add_sliced_task::<T>(units_per_tick)`) run the same units at the
//! same ticks everywhere, however long each unit takes.
//!
//! Caught (reported at the `while`, `loop` or `for` keyword, or at `take_while`):
//! - a `while` whose condition reads a clock;
//! - a `loop`, `while` or `for` whose body has an `if` whose condition reads a clock and one of
//!   whose branches has a `break` or `return` (nested loops and closures are their own bodies);
//! - `.take_while(..)` whose closure reads a clock.
//!
//! A condition reads a clock when it has an `.elapsed()`, `.duration_since()`,
//! `.saturating_duration_since()` or `.checked_duration_since()` call, a path naming `Instant` or
//! `SystemTime` (after the file's imports), or a name declared as an `Instant`/`SystemTime`.
//! `LINT_WALL_CLOCK` reports the clock reads themselves; this rule reports the loop they bound,
//! so both may appear on one loop. A loop bounded by a count (`for _ in 0..units`) is not
//! reported.

use proc_macro2::Span;
use syn::visit::Visit;
use syn::{Expr, ExprIf};

use crate::finding::LintCode;
use crate::infer::kind_of;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, any_expr, strip};
use crate::types::TypeKind;

/// The rule.
pub(crate) struct TimeBudget;

const ADVICE: &str = "do a fixed number of work units per tick instead: a sliced task \
                      (`Sliced<T>`, `app.add_sliced_task::<T>(units_per_tick)`)";

impl Rule for TimeBudget {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let (keyword, span, why) = match expr {
            Expr::While(looped) if reads_clock(&looped.cond, cx) => {
                ("while", looped.while_token.span, "its condition reads a clock")
            }
            Expr::While(looped) if exits_on_clock(&looped.body, cx) => {
                ("while", looped.while_token.span, EXITS)
            }
            Expr::Loop(looped) if exits_on_clock(&looped.body, cx) => {
                ("loop", looped.loop_token.span, EXITS)
            }
            Expr::ForLoop(looped) if exits_on_clock(&looped.body, cx) => {
                ("for", looped.for_token.span, EXITS)
            }
            Expr::MethodCall(call)
                if call.method == "take_while"
                    && call.args.iter().any(|arg| {
                        matches!(strip(arg), Expr::Closure(closure) if reads_clock(&closure.body, cx))
                    }) =>
            {
                ("take_while", call.method.span(), "its closure reads a clock")
            }
            _ => return,
        };
        out.push(budget_hit(keyword, span, why));
    }
}

const EXITS: &str = "it leaves when a clock says time is up";

fn budget_hit(keyword: &str, span: Span, why: &str) -> Hit {
    Hit::at(
        LintCode::TimeBudget,
        span,
        format!(
            "this `{keyword}` is bounded by time ({why}), so a fast machine does more work per \
             tick than a slow one and their states diverge; {ADVICE}"
        ),
    )
}

/// Whether `expr` reads a clock anywhere inside it (closures included).
fn reads_clock(expr: &Expr, cx: &RuleContext<'_>) -> bool {
    any_expr(expr, true, &mut |inner| match inner {
        Expr::MethodCall(call) => matches!(
            call.method.to_string().as_str(),
            "elapsed" | "duration_since" | "saturating_duration_since" | "checked_duration_since"
        ),
        Expr::Path(path) if path.qself.is_none() => {
            cx.segments(&path.path)
                .iter()
                .any(|segment| segment == "Instant" || segment == "SystemTime")
                || kind_of(inner, cx.bindings, cx.index) == TypeKind::WallClock
        }
        _ => false,
    })
}

/// Whether a loop body has an `if` on a clock with a `break` or `return` in a branch.
fn exits_on_clock(body: &syn::Block, cx: &RuleContext<'_>) -> bool {
    let mut finder = ClockIf { cx, found: false };
    finder.visit_block(body);
    finder.found
}

/// Looks for an `if` on a clock that leaves the loop, outside nested loops and closures.
struct ClockIf<'a, 'c> {
    cx: &'a RuleContext<'c>,
    found: bool,
}

impl<'ast> Visit<'ast> for ClockIf<'_, '_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if self.found || is_own_body(expr) {
            return;
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_expr_if(&mut self, expr: &'ast ExprIf) {
        if reads_clock(&expr.cond, self.cx) && branch_exits(expr) {
            self.found = true;
            return;
        }
        syn::visit::visit_expr_if(self, expr);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}
}

/// Whether either branch of `expr` has a `break` or `return` of the loop around it.
fn branch_exits(expr: &ExprIf) -> bool {
    let mut finder = Exit(false);
    finder.visit_block(&expr.then_branch);
    if let Some((_, other)) = &expr.else_branch {
        finder.visit_expr(other);
    }
    finder.0
}

/// Looks for a `break` or `return`, outside nested loops and closures.
struct Exit(bool);

impl<'ast> Visit<'ast> for Exit {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if self.0 || is_own_body(expr) {
            return;
        }
        if matches!(expr, Expr::Break(_) | Expr::Return(_)) {
            self.0 = true;
            return;
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}
}

/// Whether `expr` is a body of its own for this rule: a nested loop (reported by itself) or a
/// closure or async block (whose `return` does not leave the loop).
fn is_own_body(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) | Expr::Async(_)
    )
}
