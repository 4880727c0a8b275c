//! `LINT_POINTER_ADDRESS`: values taken from where memory happens to be, in fixed code.
//!
//! Addresses differ from process to process (address-space layout randomisation, allocator
//! history, thread stacks), so any state derived from one differs between runs of the same build.
//! Caught: a pointer cast to an integer (`p as usize`, `&x as *const T as usize`,
//! `v.as_ptr() as u64`), `.addr()` and `.expose_provenance()`, and `{:p}` in a format string.
//! Give entities and objects an explicit id instead (`SimId`, a counter in simulation state).
//!
//! Approximation (no type checker): a cast counts when the value cast is itself a cast to a raw
//! pointer type or a call of `as_ptr`/`as_mut_ptr`; a cast of a plain name is not caught, since its
//! type is not known. `.addr()` counts unless the crate defines its own `addr` method. Any string
//! literal holding `:p}` counts as a pointer format.

use syn::{Expr, Lit, Type};

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, span_of, strip};

/// The rule.
pub(crate) struct PointerAddress;

const ADVICE: &str = "differs from process to process; give the thing an explicit id instead \
                      (`SimId`, or a counter kept in simulation state)";

/// Integer types an address can be cast to.
const INTEGERS: [&str; 10] = [
    "usize", "isize", "u64", "i64", "u128", "i128", "u32", "i32", "u16", "u8",
];

fn is_integer(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.path.get_ident().is_some_and(|i| INTEGERS.iter().any(|n| i == n)))
}

/// Whether `expr` is a raw pointer: a cast to `*const`/`*mut`, or `as_ptr()`/`as_mut_ptr()`.
fn is_pointer(expr: &Expr) -> bool {
    match strip(expr) {
        Expr::Cast(cast) => matches!(&*cast.ty, Type::Ptr(_)),
        Expr::MethodCall(call) => call.method == "as_ptr" || call.method == "as_mut_ptr",
        _ => false,
    }
}

impl Rule for PointerAddress {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        match expr {
            Expr::Cast(cast) if is_integer(&cast.ty) && is_pointer(&cast.expr) => {
                out.push(Hit::at(
                    LintCode::PointerAddress,
                    span_of(cast),
                    format!("a pointer cast to an integer is an address, which {ADVICE}"),
                ));
            }
            Expr::MethodCall(call)
                if (call.method == "addr" && !cx.crate_defines_method("addr"))
                    || call.method == "expose_provenance" =>
            {
                out.push(Hit::at(
                    LintCode::PointerAddress,
                    call.method.span(),
                    format!("`.{}()` is an address, which {ADVICE}", call.method),
                ));
            }
            Expr::Lit(lit) => {
                if let Lit::Str(text) = &lit.lit
                    && text.value().contains(":p}")
                {
                    out.push(Hit::at(
                        LintCode::PointerAddress,
                        text.span(),
                        format!("`{{:p}}` formats an address, which {ADVICE}"),
                    ));
                }
            }
            _ => {}
        }
    }
}
