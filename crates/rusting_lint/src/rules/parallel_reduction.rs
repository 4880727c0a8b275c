//! `LINT_PARALLEL_FLOAT_REDUCTION`: a reduction over a parallel iterator in fixed code.
//!
//! rayon splits a parallel iterator by the number of threads and work stealing, and combines the
//! parts in whatever tree that gives, so a float `sum`, `product`, `reduce` or `fold` rounds
//! differently from run to run and machine to machine. Integer reductions are exact in any order.
//! The fix is to collect in order (`.collect::<Vec<_>>()` keeps the input order) and reduce that
//! sequentially, or to accumulate integers (fixed point).
//!
//! Caught: `sum`, `product`, `reduce`, `reduce_with`, `fold`, `fold_with`, `try_fold`,
//! `try_reduce`, `try_reduce_with` whose receiver chain starts at one of the parallel sources of
//! [`crate::rules::PARALLEL_SOURCES`] (`par_iter`, `par_iter_mut`, `into_par_iter`,
//! `par_chunks`, `par_chunks_mut`, `par_windows`, `par_bridge`, `par_drain`; a `collect` in
//! between makes it sequential). Not reported when the reduction is provably integer: an integer
//! turbofish (`sum::<u64>()`), a `let` with an integer type, an integer literal as the fold or
//! reduce identity, or a last `map` whose closure ends in `as <integer>`.

use syn::{Expr, ExprMethodCall, Lit};

use crate::finding::LintCode;
use crate::infer::turbofish_type;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, parallel_source, strip};
use crate::types::{is_integer_name, is_integer_type};

/// The rule.
pub(crate) struct ParallelFloatReduction;

const REDUCTIONS: [&str; 9] = [
    "sum",
    "product",
    "reduce",
    "reduce_with",
    "fold",
    "fold_with",
    "try_fold",
    "try_reduce",
    "try_reduce_with",
];

impl Rule for ParallelFloatReduction {
    fn check_local(&self, local: &syn::Local, cx: &RuleContext<'_>, _out: &mut Vec<Hit>) {
        let (syn::Pat::Type(typed), Some(init)) = (&local.pat, &local.init) else {
            return;
        };
        if is_integer_type(&typed.ty)
            && let Expr::MethodCall(call) = strip(&init.expr)
        {
            cx.exempt(call.method.span());
        }
    }

    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let Expr::MethodCall(call) = expr else {
            return;
        };
        let method = call.method.to_string();
        if !REDUCTIONS.contains(&method.as_str())
            || cx.is_exempt(call.method.span())
            || provably_integer(call)
        {
            return;
        }
        let Some(source) = parallel_source(&call.receiver) else {
            return;
        };
        out.push(Hit::at(
            LintCode::ParallelFloatReduction,
            call.method.span(),
            format!(
                "`.{method}()` over `.{source}()` combines the parts in an order that depends on \
                 the threads, so a float result changes from run to run; collect in order \
                 (`.collect::<Vec<_>>()`) and reduce sequentially, or accumulate integers (an \
                 integer reduction is not reported when its type is written, as in \
                 `sum::<i64>()`)"
            ),
        ));
    }
}

/// Whether the reduction's type is shown to be an integer.
fn provably_integer(call: &ExprMethodCall) -> bool {
    if turbofish_type(call).is_some_and(is_integer_type) {
        return true;
    }
    if let Some(identity) = call.args.first()
        && is_integer_value(identity)
    {
        return true;
    }
    match strip(&call.receiver) {
        Expr::MethodCall(previous) if previous.method == "map" => previous
            .args
            .first()
            .is_some_and(|closure| match strip(closure) {
                Expr::Closure(closure) => is_integer_value(&closure.body),
                _ => false,
            }),
        _ => false,
    }
}

/// Whether `expr` is an integer literal, a cast to an integer type, or a closure or block that
/// ends in one.
fn is_integer_value(expr: &Expr) -> bool {
    match strip(expr) {
        Expr::Lit(lit) => {
            matches!(&lit.lit, Lit::Int(int) if int.suffix().is_empty() || is_integer_name(int.suffix()))
        }
        Expr::Cast(cast) => is_integer_type(&cast.ty),
        Expr::Closure(closure) => is_integer_value(&closure.body),
        Expr::Block(block) => match block.block.stmts.last() {
            Some(syn::Stmt::Expr(last, None)) => is_integer_value(last),
            _ => false,
        },
        _ => false,
    }
}
