//! `LINT_FLOAT_CONTROL`: a write to a thread's floating-point control register.
//!
//! Flush-to-zero, denormals-are-zero and the rounding mode live in a per-thread register (MXCSR
//! on x86-64, FPCR on aarch64) that every float operation on that thread obeys. A game that sets
//! them, for speed or because a snippet did, computes otherwise than every machine and build that
//! does not; the engine checks the register at every tick and names the change, but the write
//! is easiest to find in the source. Like `LINT_SECOND_FIXED_LOOP` this check reads every file
//! (a write in `main` or `Update` changes the simulation thread too).
//!
//! Caught: calls of `_mm_setcsr`, `_MM_SET_FLUSH_ZERO_MODE`, `_MM_SET_DENORMALS_ZERO_MODE`,
//! `_MM_SET_ROUNDING_MODE`, `_MM_SET_EXCEPTION_MASK`, and C's `fesetround`, `fesetenv` and
//! `feupdateenv`; an `asm!` or `global_asm!` whose template loads MXCSR (`ldmxcsr`), the x87
//! control word (`fldcw`) or writes FPCR (`msr fpcr`).

use syn::visit::Visit;
use syn::{Expr, Macro};

use crate::finding::LintCode;
use crate::report::Hit;

/// Functions that write the register.
const WRITERS: [&str; 8] = [
    "_mm_setcsr",
    "_MM_SET_FLUSH_ZERO_MODE",
    "_MM_SET_DENORMALS_ZERO_MODE",
    "_MM_SET_ROUNDING_MODE",
    "_MM_SET_EXCEPTION_MASK",
    "fesetround",
    "fesetenv",
    "feupdateenv",
];

/// Instructions that write it, as an `asm!` template spells them (lowercased, spaces squeezed).
const INSTRUCTIONS: [&str; 3] = ["ldmxcsr", "fldcw", "msr fpcr"];

const ADVICE: &str = "every float operation on the thread then rounds or flushes otherwise than \
                      on other machines and builds, and the engine fails the run \
                      (`FLOAT_ENV_CHANGED`); leave the register at its default";

/// Every place in `ast` that writes a floating-point control register.
pub(crate) fn find(ast: &syn::File) -> Vec<Hit> {
    let mut finder = Finder { hits: Vec::new() };
    finder.visit_file(ast);
    finder.hits
}

struct Finder {
    hits: Vec<Hit>,
}

impl Finder {
    fn check_macro(&mut self, mac: &Macro) {
        let Some(name) = mac.path.segments.last() else {
            return;
        };
        if name.ident != "asm" && name.ident != "global_asm" {
            return;
        }
        let template = mac
            .tokens
            .to_string()
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(instruction) = INSTRUCTIONS.iter().find(|i| template.contains(*i)) {
            self.hits.push(Hit::at(
                LintCode::FloatControl,
                name.ident.span(),
                format!(
                    "`{}!` runs `{instruction}`, which writes the thread's floating-point \
                     control register; {ADVICE}",
                    name.ident
                ),
            ));
        }
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Path(path) = &*call.func
            && let Some(last) = path.path.segments.last()
            && WRITERS.iter().any(|writer| last.ident == writer)
        {
            self.hits.push(Hit::at(
                LintCode::FloatControl,
                last.ident.span(),
                format!(
                    "`{}` writes the thread's floating-point control register (flush-to-zero, \
                     denormals, rounding); {ADVICE}",
                    last.ident
                ),
            ));
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.check_macro(mac);
        syn::visit::visit_macro(self, mac);
    }
}
