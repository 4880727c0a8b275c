//! The rules, one file each, and what they share: the [`Rule`] trait, the [`RuleContext`] a rule
//! sees, and helpers to read paths and method chains.
//!
//! A rule only ever sees code that runs in the fixed schedules (the walker decides that); it looks
//! at one expression, `let` or typed input at a time and pushes [`Hit`]s. Rules must never walk
//! into sub-expressions on their own to report (the walker visits every node, macros included),
//! only to inspect the shape of the node they were given.

pub(crate) mod frame_time;
pub(crate) mod glam_transcendental;
pub(crate) mod hash_iteration;
pub(crate) mod mul_add;
pub(crate) mod parallel_reduction;
pub(crate) mod pointer_address;
pub(crate) mod process_randomness;
pub(crate) mod transcendental;
pub(crate) mod wall_clock;

use std::cell::RefCell;
use std::collections::BTreeSet;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Type};

use crate::index::CrateIndex;
use crate::infer::Bindings;
use crate::report::Hit;
use crate::source::Imports;

/// What a rule sees besides the node it checks.
pub(crate) struct RuleContext<'a> {
    /// The crate's index.
    pub index: &'a CrateIndex,
    /// The file's imports.
    pub imports: &'a Imports,
    /// The body's bindings.
    pub bindings: &'a Bindings,
    /// Method calls (by the position of their method name) that an enclosing node showed to be
    /// harmless, such as a hash iteration that is only counted.
    pub exempt: RefCell<BTreeSet<(usize, usize)>>,
}

impl RuleContext<'_> {
    /// Marks the node whose name token starts at `span` as harmless.
    pub fn exempt(&self, span: Span) {
        self.exempt.borrow_mut().insert(position(span));
    }

    /// Whether the node whose name token starts at `span` was marked harmless.
    pub fn is_exempt(&self, span: Span) -> bool {
        self.exempt.borrow().contains(&position(span))
    }

    /// A path's segments, its first segment expanded through the file's imports.
    pub fn segments(&self, path: &syn::Path) -> Vec<String> {
        let raw = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        if path.leading_colon.is_some() {
            raw
        } else {
            self.imports.expand(raw)
        }
    }

    /// Whether the crate defines its own method called `name`, so a call of that name may be the
    /// crate's rather than the standard library's.
    pub fn crate_defines_method(&self, name: &str) -> bool {
        self.index.method_names.contains(name)
    }
}

/// One determinism rule.
pub(crate) trait Rule {
    /// Checks one expression (every expression of fixed code is given, outermost first).
    fn check_expr(&self, _expr: &Expr, _cx: &RuleContext<'_>, _out: &mut Vec<Hit>) {}

    /// Checks one `let` before its initializer is checked.
    fn check_local(&self, _local: &syn::Local, _cx: &RuleContext<'_>, _out: &mut Vec<Hit>) {}

    /// Checks one typed input of a fixed function or closure.
    fn check_input(&self, _pat: &Pat, _ty: &Type, _cx: &RuleContext<'_>, _out: &mut Vec<Hit>) {}
}

/// Every rule, in a fixed order.
pub(crate) fn all() -> [&'static dyn Rule; 9] {
    [
        &transcendental::Transcendental,
        &glam_transcendental::GlamTranscendental,
        &mul_add::MulAdd,
        &hash_iteration::HashIteration,
        &wall_clock::WallClock,
        &process_randomness::ProcessRandomness,
        &frame_time::FrameTime,
        &parallel_reduction::ParallelFloatReduction,
        &pointer_address::PointerAddress,
    ]
}

/// The (line, column) where `span` starts.
fn position(span: Span) -> (usize, usize) {
    let start = span.start();
    (start.line, start.column)
}

/// Whether `segments` ends with `tail`.
pub(crate) fn ends_with(segments: &[String], tail: &[&str]) -> bool {
    segments.len() >= tail.len()
        && segments[segments.len() - tail.len()..]
            .iter()
            .zip(tail)
            .all(|(a, b)| a == b)
}

/// The segment before the last, if any.
pub(crate) fn owner_segment(segments: &[String]) -> Option<&str> {
    segments
        .len()
        .checked_sub(2)
        .map(|index| segments[index].as_str())
}

/// The path of a path expression, with the span of its last segment.
pub(crate) fn expr_path(expr: &Expr) -> Option<(&syn::Path, Span)> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => {
            let span = path.path.segments.last()?.ident.span();
            Some((&path.path, span))
        }
        _ => None,
    }
}

/// `expr` without parentheses, groups, references and derefs around it.
pub(crate) fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(inner) => strip(&inner.expr),
        Expr::Group(inner) => strip(&inner.expr),
        Expr::Reference(inner) => strip(&inner.expr),
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => strip(&unary.expr),
        other => other,
    }
}

/// The span to report a whole expression at.
pub(crate) fn span_of(expr: &impl Spanned) -> Span {
    expr.span()
}
