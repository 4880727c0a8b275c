//! `LINT_HASH_ITERATION`: iterating a `HashMap` or `HashSet` in fixed code.
//!
//! A hash collection's iteration order depends on its hasher and its insertion and growth history,
//! not on its contents' order, so anything that runs per element (spawning, accumulating floats,
//! emitting events) runs in an order that is not part of the simulation state. Use a `BTreeMap`,
//! a `BTreeSet`, a sorted `Vec` or an insertion-ordered map. Caught: `.iter()`, `.iter_mut()`,
//! `.keys()`, `.values()`, `.values_mut()`, `.into_iter()`, `.into_keys()`, `.into_values()`,
//! `.drain()`, `.extract_if()` and `for _ in map` / `&map` / `&mut map`.
//!
//! Approximation (no type checker): the receiver must be a name whose declared type or
//! initializer is a hash collection (parameters, `let` with a type or `HashMap::new()`-like
//! initializer, `Res`/`Local`/references around them, crate type aliases of one), a field whose
//! name some struct of the crate declares as a hash collection, or `world.resource::<T>()` of one.
//! A chain that only counts or tests its elements (`.count()`, `.any()`, `.all()`, `.min()`,
//! `.max()`), or collects them into a `BTreeMap`/`BTreeSet`, is order-independent and not
//! reported; closures in such a chain are assumed to have no side effects.

use syn::{Expr, ExprMethodCall};

use crate::finding::LintCode;
use crate::infer::{kind_of, turbofish_type};
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, span_of, strip};
use crate::types::TypeKind;

/// The rule.
pub(crate) struct HashIteration;

/// Methods that visit a hash collection's elements in its internal order.
const ITERATING: [&str; 10] = [
    "iter",
    "iter_mut",
    "keys",
    "values",
    "values_mut",
    "into_iter",
    "into_keys",
    "into_values",
    "drain",
    "extract_if",
];

/// Iterator adapters a chain may pass through and stay order-independent at its end.
const ADAPTERS: [&str; 8] = [
    "map",
    "filter",
    "filter_map",
    "copied",
    "cloned",
    "flat_map",
    "flatten",
    "by_ref",
];

/// Consumers whose result does not depend on the order of the elements.
const ORDER_FREE_ENDS: [&str; 5] = ["count", "any", "all", "min", "max"];

impl Rule for HashIteration {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        match expr {
            Expr::MethodCall(call) => {
                if is_order_free_end(call) {
                    exempt_chain(&call.receiver, cx);
                }
                let method = call.method.to_string();
                if !ITERATING.contains(&method.as_str()) || cx.is_exempt(call.method.span()) {
                    return;
                }
                if let TypeKind::Hash(kind) = kind_of(&call.receiver, cx.bindings, cx.index) {
                    out.push(Hit::at(
                        LintCode::HashIteration,
                        call.method.span(),
                        format!(
                            "`.{method}()` visits a `{kind}` in hash order, which is not part of \
                             the simulation state; {ADVICE}"
                        ),
                    ));
                }
            }
            Expr::ForLoop(for_loop) => {
                if let TypeKind::Hash(kind) = kind_of(&for_loop.expr, cx.bindings, cx.index) {
                    out.push(Hit::at(
                        LintCode::HashIteration,
                        span_of(strip(&for_loop.expr)),
                        format!(
                            "this `for` loop visits a `{kind}` in hash order, which is not part \
                             of the simulation state; {ADVICE}"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
}

const ADVICE: &str = "use a `BTreeMap`/`BTreeSet` or a sorted `Vec`, or sort the elements first";

/// Whether a call ends a chain in an order-independent way.
fn is_order_free_end(call: &ExprMethodCall) -> bool {
    let method = call.method.to_string();
    if ORDER_FREE_ENDS.contains(&method.as_str()) {
        return true;
    }
    method == "collect"
        && turbofish_type(call).is_some_and(|ty| {
            crate::index::type_name(ty).is_some_and(|name| name == "BTreeMap" || name == "BTreeSet")
        })
}

/// Marks the iterating call at the bottom of an adapter chain as harmless.
fn exempt_chain(mut expr: &Expr, cx: &RuleContext<'_>) {
    while let Expr::MethodCall(call) = strip(expr) {
        let method = call.method.to_string();
        if ITERATING.contains(&method.as_str()) {
            cx.exempt(call.method.span());
            return;
        }
        if !ADAPTERS.contains(&method.as_str()) {
            return;
        }
        expr = &call.receiver;
    }
}
