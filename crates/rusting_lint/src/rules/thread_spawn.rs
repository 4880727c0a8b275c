//! `LINT_THREAD_SPAWN`: starting a thread from fixed code.
//!
//! A thread the simulation starts runs and finishes whenever the operating system schedules it:
//! on a loaded or slower machine its result is ready a tick later, or later still, and threads
//! in a scope touch shared state in an interleaving that differs from run to run. Nothing about
//! that timing is part of the simulation state, so two runs of the same inputs drift apart. The
//! fix is the engine's jobs: a deadline job (`Jobs<K>`) hands its result back at a fixed tick
//! whatever the thread's speed, and `rusting_engine::jobs::parallel_jobs` splits work inside one
//! tick and merges the results in job order.
//!
//! Caught (paths are matched after the file's `use` declarations, so `thread::spawn` after
//! `use std::thread;` and a bare `spawn` imported from `std::thread` count): `thread::spawn`,
//! `thread::scope`, the `spawn` / `spawn_scoped` of a `thread::Builder::new()` chain, and rayon's
//! fire-and-forget `rayon::spawn` / `rayon::spawn_fifo`.

use syn::Expr;

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, ends_with, expr_path, strip};

/// The rule.
pub(crate) struct ThreadSpawn;

const ADVICE: &str = "use a deadline job (`Jobs<K>`, whose result arrives at a fixed tick) or \
                      `rusting_engine::jobs::parallel_jobs` inside the tick";

impl Rule for ThreadSpawn {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            let method = call.method.to_string();
            if matches!(method.as_str(), "spawn" | "spawn_scoped")
                && starts_at_builder(&call.receiver, cx)
            {
                out.push(Hit::at(
                    LintCode::ThreadSpawn,
                    call.method.span(),
                    format!(
                        "`thread::Builder::{method}` starts a thread that finishes whenever the \
                         OS schedules it, so its result reaches the simulation at a tick that \
                         changes from run to run; {ADVICE}"
                    ),
                ));
            }
            return;
        }
        let Some((path, span)) = expr_path(expr) else {
            return;
        };
        let segments = cx.segments(path);
        let hit = ends_with(&segments, &["thread", "spawn"])
            || ends_with(&segments, &["thread", "scope"])
            || ends_with(&segments, &["rayon", "spawn"])
            || ends_with(&segments, &["rayon", "spawn_fifo"]);
        if hit {
            out.push(Hit::at(
                LintCode::ThreadSpawn,
                span,
                format!(
                    "`{}` runs code on threads that finish whenever the OS schedules them, so \
                     what they produce reaches the simulation at a tick (and in an order) that \
                     changes from run to run; {ADVICE}",
                    segments.join("::")
                ),
            ));
        }
    }
}

/// Whether the method chain `expr` starts at a call of `thread::Builder::new`.
fn starts_at_builder(mut expr: &Expr, cx: &RuleContext<'_>) -> bool {
    loop {
        match strip(expr) {
            Expr::MethodCall(call) => expr = &call.receiver,
            Expr::Try(tried) => expr = &tried.expr,
            Expr::Call(call) => {
                return expr_path(&call.func).is_some_and(|(path, _)| {
                    ends_with(&cx.segments(path), &["thread", "Builder", "new"])
                });
            }
            _ => return false,
        }
    }
}
