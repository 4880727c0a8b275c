//! `LINT_MUL_ADD`: fused multiply-add in fixed code.
//!
//! `a.mul_add(b, c)` rounds once where `a * b + c` rounds twice, and it compiles to a hardware FMA
//! on some targets and a software routine on others, so the same simulation would differ between
//! builds that chose differently. Rust never fuses `a * b + c` on its own, so plain arithmetic is
//! the fix. Caught as method calls (any receiver, including glam vectors) and as paths
//! (`f32::mul_add`).
//!
//! Approximation: a method call counts whatever its receiver, unless the crate defines its own
//! `mul_add` method.

use syn::Expr;

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, expr_path};

/// The rule.
pub(crate) struct MulAdd;

const MESSAGE: &str = "is a fused multiply-add, which rounds once and runs as hardware FMA on some \
                       targets only; write `a * b + c` (two roundings, the same everywhere)";

impl Rule for MulAdd {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            if call.method == "mul_add" && !cx.crate_defines_method("mul_add") {
                out.push(Hit::at(
                    LintCode::MulAdd,
                    call.method.span(),
                    format!("`.mul_add()` {MESSAGE}"),
                ));
            }
        } else if let Some((path, span)) = expr_path(expr) {
            let segments = cx.segments(path);
            if segments.len() >= 2 && segments.last().is_some_and(|name| name == "mul_add") {
                out.push(Hit::at(
                    LintCode::MulAdd,
                    span,
                    format!("`{}` {MESSAGE}", segments.join("::")),
                ));
            }
        }
    }
}
