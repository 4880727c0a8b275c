//! `LINT_ATOMIC_FLOAT`: accumulating floats through atomics.
//!
//! Threads that add into one atomic do so in the order they arrive, which the scheduler decides
//! anew on every run. Integer addition gives the same total in any order; float addition rounds
//! after every step, so `(a + b) + c` and `(a + c) + b` differ in the last bits, and the total
//! (and everything computed from it) changes from run to run and machine to machine. The fix is
//! per-job partial sums combined in job order (`rusting_engine::jobs::parallel_reduce`), or
//! accumulating integers (fixed point), whose atomic `fetch_add` is exact in any order.
//!
//! Caught:
//! - any path or type naming a float atomic, `AtomicF32` or `AtomicF64` (the `atomic_float`
//!   crate's): `AtomicF64::new(..)`, `Arc::<AtomicF32>::new(..)`, a `let` or an input declared
//!   with one (a `let` whose initializer names the type already is reported there, once);
//! - `fetch_add`, `fetch_sub`, `fetch_update`, `compare_exchange` and `compare_exchange_weak` on a
//!   field that some struct of the crate declares with a float atomic type (the declaration
//!   itself is usually outside fixed code);
//! - `fetch_update`, `compare_exchange` and `compare_exchange_weak` whose arguments (closures
//!   included) call `from_bits` or `to_bits`: a float kept in an `AtomicU32`/`AtomicU64` as bits.
//!
//! Not reported: integer atomics used with integers (`AtomicU64::fetch_add(1, ..)`), whose sum is
//! the same in any order.

use proc_macro2::Span;
use syn::visit::Visit;
use syn::{Expr, Member, Pat, Type};

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, any_expr, expr_path, strip};
use crate::types::{ATOMIC_FLOATS, names_atomic_float};

/// The rule.
pub(crate) struct AtomicFloat;

const ADVICE: &str = "combine per-job partial sums in job order \
                      (`rusting_engine::jobs::parallel_reduce`) or accumulate integers (fixed \
                      point)";

/// Read-modify-write methods that accumulate into an atomic.
const ACCUMULATING: [&str; 5] = [
    "fetch_add",
    "fetch_sub",
    "fetch_update",
    "compare_exchange",
    "compare_exchange_weak",
];

/// Read-modify-write methods whose new value the caller computes.
const COMPUTED: [&str; 3] = ["fetch_update", "compare_exchange", "compare_exchange_weak"];

impl Rule for AtomicFloat {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            let method = call.method.to_string();
            if ACCUMULATING.contains(&method.as_str())
                && let Some(field) = atomic_float_field(&call.receiver, cx)
            {
                out.push(Hit::at(
                    LintCode::AtomicFloat,
                    call.method.span(),
                    format!(
                        "`.{method}(..)` on `{field}`, a float atomic, adds floats in the order the \
                         threads arrive, and float addition rounds differently in each order, so \
                         the total changes from run to run; {ADVICE}"
                    ),
                ));
            } else if COMPUTED.contains(&method.as_str())
                && call
                    .args
                    .iter()
                    .any(|arg| any_expr(arg, true, &mut is_bits_call))
            {
                out.push(Hit::at(
                    LintCode::AtomicFloat,
                    call.method.span(),
                    format!(
                        "`.{method}(..)` with `from_bits`/`to_bits` keeps a float in an integer \
                         atomic; threads update it in the order they arrive, and float addition \
                         rounds differently in each order, so the result changes from run to run; \
                         {ADVICE}"
                    ),
                ));
            }
            return;
        }
        if let Expr::Path(path) = expr
            && let Some((name, span)) = path_atomic_float(path, cx)
        {
            out.push(hit_for_type(&name, span));
        }
    }

    fn check_local(&self, local: &syn::Local, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let Pat::Type(typed) = &local.pat else {
            return;
        };
        let named_by_init = local.init.as_ref().is_some_and(|init| {
            any_expr(&init.expr, false, &mut |expr| {
                matches!(expr, Expr::Path(path) if path_atomic_float(path, cx).is_some())
            })
        });
        if !named_by_init && let Some((name, span)) = type_atomic_float(&typed.ty) {
            out.push(hit_for_type(&name, span));
        }
    }

    fn check_input(&self, _pat: &Pat, ty: &Type, _cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Some((name, span)) = type_atomic_float(ty) {
            out.push(hit_for_type(&name, span));
        }
    }
}

fn hit_for_type(name: &str, span: Span) -> Hit {
    Hit::at(
        LintCode::AtomicFloat,
        span,
        format!(
            "`{name}` accumulates floats in the order the threads arrive, and float addition \
             rounds differently in each order, so the total changes from run to run; {ADVICE}"
        ),
    )
}

/// The float atomic a path names (in a segment or a generic argument, or through an import), with
/// the span to report at.
fn path_atomic_float(path: &syn::ExprPath, cx: &RuleContext<'_>) -> Option<(String, Span)> {
    let mut finder = SegmentFinder(None);
    finder.visit_expr_path(path);
    if finder.0.is_some() {
        return finder.0;
    }
    let span = path.path.segments.first()?.ident.span();
    cx.segments(&path.path)
        .into_iter()
        .find(|segment| ATOMIC_FLOATS.contains(&segment.as_str()))
        .map(|name| (name, span))
}

/// The float atomic a type names, with the span of its segment.
fn type_atomic_float(ty: &Type) -> Option<(String, Span)> {
    if !names_atomic_float(ty) {
        return None;
    }
    let mut finder = SegmentFinder(None);
    finder.visit_type(ty);
    finder.0
}

/// The first path segment (generic arguments included) naming a float atomic.
struct SegmentFinder(Option<(String, Span)>);

impl<'ast> Visit<'ast> for SegmentFinder {
    fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
        let name = segment.ident.to_string();
        if self.0.is_none() && ATOMIC_FLOATS.contains(&name.as_str()) {
            self.0 = Some((name, segment.ident.span()));
        }
        syn::visit::visit_path_segment(self, segment);
    }
}

/// The name of the field `receiver` reads, when some struct of the crate declares a field of that
/// name with a float atomic type (through indexing: `sums.lanes[i]`).
fn atomic_float_field(receiver: &Expr, cx: &RuleContext<'_>) -> Option<String> {
    let mut expr = strip(receiver);
    while let Expr::Index(index) = expr {
        expr = strip(&index.expr);
    }
    match expr {
        Expr::Field(field) => match &field.member {
            Member::Named(name) if cx.index.atomic_float_fields.contains(&name.to_string()) => {
                Some(name.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `expr` calls `from_bits` or `to_bits` (as a method or a path).
fn is_bits_call(expr: &Expr) -> bool {
    let is_bits = |name: &str| name == "from_bits" || name == "to_bits";
    match expr {
        Expr::MethodCall(call) => is_bits(&call.method.to_string()),
        Expr::Call(call) => expr_path(&call.func)
            .and_then(|(path, _)| path.segments.last())
            .is_some_and(|last| is_bits(&last.ident.to_string())),
        _ => false,
    }
}
