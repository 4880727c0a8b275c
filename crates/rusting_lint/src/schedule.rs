//! Finding the fixed systems: what `add_systems` puts into a fixed schedule.
//!
//! A call `add_systems(L, systems)` on anything (bevy's `App`, the engine's `App`, a sub-app)
//! where `L` is a path ending in `FixedFirst`, `FixedPreUpdate`, `FixedUpdate`,
//! `FixedPostUpdate`, `FixedLast` or `FixedMain` registers fixed systems, and so does a
//! one-argument `add_systems(systems)` inside the closure of `edit_schedule(L, ..)` or
//! `schedule_scope(L, ..)`. In `systems`, tuples are looked into, ordering and set methods
//! (`.after(..)`, `.before(..)`, `.in_set(..)`, `.chain()`, `.ambiguous_with(..)`) keep their
//! receiver and drop their arguments (labels, not systems), run conditions and pipes
//! (`.run_if(cond)`, `.pipe(next)`, `.map(f)`) keep both, paths name systems and closures are
//! systems themselves. A game's `rusting_game!(Plugin)` adds the game's plugin, whose `build`
//! makes these calls, so no other pattern is needed. Code under `#[cfg(test)]` is skipped. This
//! module must never lint code.

use syn::visit::Visit;
use syn::{Expr, ExprClosure, FnArg};

use crate::index::{is_test_only, type_name};
use crate::source::SourceFile;

/// Schedules whose systems run once per fixed tick.
pub(crate) const FIXED_SCHEDULES: [&str; 6] = [
    "FixedFirst",
    "FixedPreUpdate",
    "FixedUpdate",
    "FixedPostUpdate",
    "FixedLast",
    "FixedMain",
];

/// Methods on system configs whose arguments are labels or sets, not systems.
const LABEL_METHODS: [&str; 11] = [
    "after",
    "before",
    "after_ignore_deferred",
    "before_ignore_deferred",
    "in_set",
    "ambiguous_with",
    "ambiguous_with_all",
    "chain",
    "chain_ignore_deferred",
    "into_configs",
    "with_name",
];

/// A system that some `add_systems` puts into a fixed schedule.
#[derive(Clone, Debug)]
pub(crate) struct FixedRoot {
    /// Index of the file that registers it.
    pub file: usize,
    /// The `impl`/`trait` type around the registration, for `Self::system`.
    pub owner: Option<String>,
    /// The schedule it goes into.
    pub schedule: String,
    /// The system.
    pub target: RootTarget,
}

/// What a fixed root is.
#[derive(Clone, Debug)]
pub(crate) enum RootTarget {
    /// A path to a function (imports expanded).
    Path(Vec<String>),
    /// A closure written in place, with the line it starts on.
    Closure(Box<ExprClosure>, usize),
}

/// Every fixed root registered in `files`, in file order then source order.
pub(crate) fn fixed_roots(files: &[SourceFile]) -> Vec<FixedRoot> {
    let mut roots = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let mut finder = RootFinder {
            file,
            file_index: index,
            owner: None,
            scoped_schedule: None,
            roots: &mut roots,
        };
        finder.visit_file(&file.ast);
    }
    roots
}

/// The closure's typed parameters, as a body's inputs.
pub(crate) fn closure_inputs(closure: &ExprClosure) -> Vec<(syn::Pat, syn::Type)> {
    closure
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::Pat::Type(typed) => Some(((*typed.pat).clone(), (*typed.ty).clone())),
            _ => None,
        })
        .collect()
}

struct RootFinder<'a> {
    file: &'a SourceFile,
    file_index: usize,
    owner: Option<String>,
    scoped_schedule: Option<String>,
    roots: &'a mut Vec<FixedRoot>,
}

/// The fixed schedule an expression names, if it names one.
fn fixed_schedule(expr: &Expr) -> Option<String> {
    let Expr::Path(path) = expr else {
        return None;
    };
    let last = path.path.segments.last()?.ident.to_string();
    FIXED_SCHEDULES.contains(&last.as_str()).then_some(last)
}

impl RootFinder<'_> {
    fn collect(&mut self, schedule: &str, systems: &Expr) {
        match systems {
            Expr::Tuple(tuple) => {
                for element in &tuple.elems {
                    self.collect(schedule, element);
                }
            }
            Expr::Paren(inner) => self.collect(schedule, &inner.expr),
            Expr::Group(inner) => self.collect(schedule, &inner.expr),
            Expr::Reference(inner) => self.collect(schedule, &inner.expr),
            Expr::Path(path) if path.qself.is_none() => {
                let raw = path
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                self.push(schedule, RootTarget::Path(self.file.imports.expand(raw)));
            }
            Expr::Closure(closure) => {
                let line = closure.or1_token.span.start().line;
                self.push(
                    schedule,
                    RootTarget::Closure(Box::new(closure.clone()), line),
                );
            }
            Expr::MethodCall(call) => {
                self.collect(schedule, &call.receiver);
                if !LABEL_METHODS.contains(&call.method.to_string().as_str()) {
                    for arg in &call.args {
                        self.collect(schedule, arg);
                    }
                }
            }
            Expr::Call(call) => {
                self.collect(schedule, &call.func);
                for arg in &call.args {
                    self.collect(schedule, arg);
                }
            }
            Expr::Block(block) => {
                if let Some(syn::Stmt::Expr(last, None)) = block.block.stmts.last() {
                    self.collect(schedule, last);
                }
            }
            _ => {}
        }
    }

    fn push(&mut self, schedule: &str, target: RootTarget) {
        self.roots.push(FixedRoot {
            file: self.file_index,
            owner: self.owner.clone(),
            schedule: schedule.to_owned(),
            target,
        });
    }
}

impl<'ast> Visit<'ast> for RootFinder<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Trait(item) => &item.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let outer = std::mem::replace(&mut self.owner, type_name(&item.self_ty));
        syn::visit::visit_item_impl(self, item);
        self.owner = outer;
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_only(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_fn_arg(&mut self, _arg: &'ast FnArg) {}

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        let args: Vec<&Expr> = call.args.iter().collect();
        match (method.as_str(), args.as_slice()) {
            ("add_systems", [label, systems]) => {
                if let Some(schedule) = fixed_schedule(label) {
                    self.collect(&schedule, systems);
                }
            }
            ("add_systems", [systems]) => {
                if let Some(schedule) = self.scoped_schedule.clone() {
                    self.collect(&schedule, systems);
                }
            }
            ("edit_schedule" | "schedule_scope" | "try_schedule_scope", [label, rest @ ..]) => {
                if let Some(schedule) = fixed_schedule(label) {
                    let outer = self.scoped_schedule.replace(schedule);
                    self.visit_expr(&call.receiver);
                    for arg in rest {
                        self.visit_expr(arg);
                    }
                    self.scoped_schedule = outer;
                    return;
                }
            }
            _ => {}
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}
