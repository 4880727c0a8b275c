//! The rules, one file each, and what they share: the [`Rule`] trait, the [`RuleContext`] a rule
//! sees, and helpers to read paths and method chains.
//!
//! A rule only ever sees code that runs in the fixed schedules (the walker decides that); it looks
//! at one expression, `let` or typed input at a time and pushes [`Hit`]s. Rules must never walk
//! into sub-expressions on their own to report (the walker visits every node, macros included),
//! only to inspect the shape of the node they were given.

pub(crate) mod atomic_float;
pub(crate) mod channel_receive;
pub(crate) mod frame_time;
pub(crate) mod glam_transcendental;
pub(crate) mod hash_iteration;
pub(crate) mod mul_add;
pub(crate) mod parallel_reduction;
pub(crate) mod parallel_shared_push;
pub(crate) mod pointer_address;
pub(crate) mod process_randomness;
pub(crate) mod thread_spawn;
pub(crate) mod time_budget;
pub(crate) mod transcendental;
pub(crate) mod wall_clock;

use std::cell::RefCell;
use std::collections::BTreeSet;

use proc_macro2::Span;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Token, Type};

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
pub(crate) fn all() -> [&'static dyn Rule; 14] {
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
        &parallel_shared_push::ParallelSharedPush,
        &thread_spawn::ThreadSpawn,
        &channel_receive::ChannelReceive,
        &atomic_float::AtomicFloat,
        &time_budget::TimeBudget,
    ]
}

/// The methods that start a rayon parallel iterator.
pub(crate) const PARALLEL_SOURCES: [&str; 8] = [
    "par_iter",
    "par_iter_mut",
    "into_par_iter",
    "par_chunks",
    "par_chunks_mut",
    "par_windows",
    "par_bridge",
    "par_drain",
];

/// The parallel source ([`PARALLEL_SOURCES`]) at the start of the method chain `expr`, unless a
/// `collect` comes first (which makes the rest of the chain sequential).
pub(crate) fn parallel_source(mut expr: &Expr) -> Option<String> {
    while let Expr::MethodCall(call) = strip(expr) {
        let method = call.method.to_string();
        if PARALLEL_SOURCES.contains(&method.as_str()) {
            return Some(method);
        }
        if method.starts_with("collect") {
            return None;
        }
        expr = &call.receiver;
    }
    None
}

/// Whether `found` holds for `expr` or any expression inside it, macro arguments included (parsed
/// as the walker does), nested items excluded. With `into_closures` false, closure bodies are not
/// looked into.
pub(crate) fn any_expr(
    expr: &Expr,
    into_closures: bool,
    found: &mut dyn FnMut(&Expr) -> bool,
) -> bool {
    let mut finder = Finder {
        found,
        into_closures,
        hit: false,
    };
    finder.visit_expr(expr);
    finder.hit
}

struct Finder<'f> {
    found: &'f mut dyn FnMut(&Expr) -> bool,
    into_closures: bool,
    hit: bool,
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if self.hit {
            return;
        }
        if (self.found)(expr) {
            self.hit = true;
            return;
        }
        if !self.into_closures && matches!(expr, Expr::Closure(_)) {
            return;
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit_macro_args(self, mac);
    }
}

/// Visits a macro's arguments the way the walker reads them: as comma-separated expressions, or
/// else as statements; a macro whose arguments are neither is skipped.
pub(crate) fn visit_macro_args<V: for<'a> Visit<'a>>(visitor: &mut V, mac: &syn::Macro) {
    let parse_exprs = Punctuated::<Expr, Token![,]>::parse_terminated;
    if let Ok(exprs) = parse_exprs.parse2(mac.tokens.clone()) {
        for expr in &exprs {
            visitor.visit_expr(expr);
        }
    } else if let Ok(stmts) = syn::Block::parse_within.parse2(mac.tokens.clone()) {
        for stmt in &stmts {
            visitor.visit_stmt(stmt);
        }
    }
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
