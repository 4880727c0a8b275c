//! `LINT_TRANSCENDENTAL`: platform transcendentals on `f32`/`f64` in fixed code.
//!
//! IEEE 754 rounds `+ - * /` and `sqrt` correctly, so they give the same bits everywhere. `sin`,
//! `exp`, `powf` and the rest call the platform's math library (or an LLVM intrinsic that constant
//! folding may evaluate differently), whose last bits differ between targets, C libraries and
//! compiler versions. Caught as method calls (`x.sin()`) and as paths (`f32::sin(x)`,
//! `f64::powi`, `num_traits::Float::exp`).
//!
//! Approximation: without types, a method call counts whatever its receiver, unless the crate
//! defines a method of that name itself (a fixed-point type's own `sin`, say).

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, expr_path, owner_segment};
use syn::Expr;

/// The rule.
pub(crate) struct Transcendental;

/// Float methods whose result depends on the platform's math library.
pub(crate) const TRANSCENDENTALS: [&str; 26] = [
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sin_cos", "exp", "exp2", "exp_m1", "ln",
    "ln_1p", "log", "log2", "log10", "powf", "powi", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "hypot", "cbrt",
];

/// Types whose associated functions of those names are the platform's.
const FLOAT_OWNERS: [&str; 4] = ["f32", "f64", "Float", "Real"];

impl Rule for Transcendental {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        if let Expr::MethodCall(call) = expr {
            let name = call.method.to_string();
            if TRANSCENDENTALS.contains(&name.as_str()) && !cx.crate_defines_method(&name) {
                out.push(Hit::at(
                    LintCode::Transcendental,
                    call.method.span(),
                    format!(
                        "`.{name}()` calls the platform's `{name}`, whose last bits differ between \
                         targets and library versions; {}",
                        replacement(&name)
                    ),
                ));
            }
        } else if let Some((path, span)) = expr_path(expr) {
            let segments = cx.segments(path);
            let Some(name) = segments.last() else {
                return;
            };
            if TRANSCENDENTALS.contains(&name.as_str())
                && owner_segment(&segments).is_some_and(|owner| FLOAT_OWNERS.contains(&owner))
            {
                let owner = owner_segment(&segments).unwrap_or_default();
                out.push(Hit::at(
                    LintCode::Transcendental,
                    span,
                    format!(
                        "`{owner}::{name}` is the platform's `{name}`, whose last bits differ \
                         between targets and library versions; {}",
                        replacement(name)
                    ),
                ));
            }
        }
    }
}

/// What to use instead of the transcendental `name`.
fn replacement(name: &str) -> String {
    let sim_math = "rusting_engine::runtime::sim_math";
    match name {
        "sin" | "cos" | "sin_cos" => {
            format!("use `{sim_math}::sin_cos` (bit-identical everywhere)")
        }
        "tan" => format!("use `{sim_math}::sin_cos` and divide the sine by the cosine"),
        "atan" | "atan2" | "asin" | "acos" => {
            format!("use `{sim_math}::{name}` (bit-identical everywhere)")
        }
        "powi" => "multiply the value by itself in a fixed order instead".to_owned(),
        _ => format!(
            "`{sim_math}` has no `{name}` yet: compute it from `+ - * /` and `sqrt` in a fixed \
             order (a polynomial or a table), or use a pure-Rust software implementation such as \
             the `libm` crate"
        ),
    }
}
