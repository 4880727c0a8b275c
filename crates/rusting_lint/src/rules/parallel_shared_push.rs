//! `LINT_SHARED_PUSH_IN_PARALLEL`: a parallel closure that pushes into state shared by every
//! thread.
//!
//! rayon runs the closures of a parallel iterator on whichever threads are free, and work stealing
//! changes which items each thread takes from one run to the next. When every closure pushes into
//! the same collection (through a `Mutex`, an `RwLock`, a `RefCell`, a lock-free queue) or sends
//! into the same channel, the items come out in the order the threads got there, not in the order
//! of the input, so anything that later walks that collection sees a different order on every
//! run. The fix is to give each job its own output and merge the outputs in job order:
//! `.map(..).collect::<Vec<_>>()` keeps the input order, and the engine's
//! `rusting_engine::jobs::parallel_jobs` / `parallel_chunks` hand back per-job buffers in job
//! order.
//!
//! Caught, inside a closure passed to any method of a chain that starts at one of the parallel
//! sources of [`crate::rules::PARALLEL_SOURCES`] (`for_each`, `map`, `for_each_with`,
//! `flat_map`, `filter_map`, `try_for_each`, `inspect`, ...; a `collect` in between makes the
//! rest sequential):
//! - `push`, `push_back`, `push_front`, `insert`, `extend` or `append` on the result of a
//!   `.lock()`, `.try_lock()`, `.write()`, `.try_write()`, `.borrow_mut()` or
//!   `.try_borrow_mut()` call (through `unwrap`, `expect`, `?`, fields and indexing), or on a
//!   guard a `let`, `if let` or `match` took from one;
//! - those methods on a name the closure captures from outside (a parallel closure is `Fn`, so
//!   such a call compiles only on a concurrent collection such as a lock-free queue);
//! - `send` and `try_send` with an argument (a channel), unless the crate defines its own method
//!   of that name.
//!
//! Not reported: the same calls on a closure parameter (each item's own lock or channel) or on a
//! name bound inside the closure (a job's own buffer). The first parameter of a `*_with` method
//! (`for_each_with(sender, ..)`) is the value every split clones, so it counts as shared. The
//! finding is reported once per parallel call, at its method name.

use std::collections::BTreeSet;

use syn::visit::Visit;
use syn::{Expr, ExprClosure, ExprMethodCall};

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext, parallel_source, strip, visit_macro_args};

/// The rule.
pub(crate) struct ParallelSharedPush;

/// Methods that add to a collection.
const PUSHES: [&str; 6] = [
    "push",
    "push_back",
    "push_front",
    "insert",
    "extend",
    "append",
];

/// Methods that hand out a guard of shared, interior-mutable state.
const LOCKS: [&str; 6] = [
    "lock",
    "try_lock",
    "write",
    "try_write",
    "borrow_mut",
    "try_borrow_mut",
];

/// Methods that send into a channel.
const SENDS: [&str; 2] = ["send", "try_send"];

impl Rule for ParallelSharedPush {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let Expr::MethodCall(call) = expr else {
            return;
        };
        let closures: Vec<&ExprClosure> = call
            .args
            .iter()
            .filter_map(|arg| match strip(arg) {
                Expr::Closure(closure) => Some(closure),
                _ => None,
            })
            .collect();
        if closures.is_empty() {
            return;
        }
        let Some(source) = parallel_source(&call.receiver) else {
            return;
        };
        let Some(what) = closures
            .iter()
            .find_map(|closure| shared_push(call, closure, cx))
        else {
            return;
        };
        let method = &call.method;
        out.push(Hit::at(
            LintCode::SharedPushInParallel,
            method.span(),
            format!(
                "the closure of `.{method}(..)` over `.{source}()` {what} from every thread, so \
                 the items land in the order the threads get there, which changes from run to \
                 run; give each job its own output: `.map(..).collect::<Vec<_>>()` keeps the \
                 input order, and `rusting_engine::jobs::parallel_jobs` / `parallel_chunks` \
                 merge per-job buffers in job order"
            ),
        ));
    }
}

/// What the closure does to shared state, if it pushes or sends into some.
fn shared_push(
    call: &ExprMethodCall,
    closure: &ExprClosure,
    cx: &RuleContext<'_>,
) -> Option<String> {
    let mut names = Names::default();
    let shared_first = call.method.to_string().ends_with("_with");
    for (position, input) in closure.inputs.iter().enumerate() {
        let mut idents = Idents::default();
        idents.visit_pat(input);
        if shared_first && position == 0 {
            names.shared_params.extend(idents.0);
        } else {
            names.per_item.extend(idents.0);
        }
    }
    let mut collector = Collector { names: &mut names };
    collector.visit_expr(&closure.body);
    let mut finder = PushFinder {
        names: &names,
        cx,
        found: None,
    };
    finder.visit_expr(&closure.body);
    finder.found
}

/// The names a closure binds, and which of them hold a guard of shared state.
#[derive(Default)]
struct Names {
    /// Parameters that stand for one item (its own lock or channel is not shared).
    per_item: BTreeSet<String>,
    /// Parameters every split shares (the first of a `*_with` method).
    shared_params: BTreeSet<String>,
    /// Names bound inside the body.
    bound: BTreeSet<String>,
    /// Names bound to a guard of shared state.
    guards: BTreeSet<String>,
}

impl Names {
    /// Whether `root` is a name the closure owns: a per-item parameter, or bound in the body and
    /// not a guard of shared state.
    fn is_own(&self, root: &str) -> bool {
        self.per_item.contains(root) || (self.bound.contains(root) && !self.guards.contains(root))
    }
}

/// What a receiver chain starts from and whether it takes a guard on the way.
struct Chain {
    /// The name at its root (`shared` in `shared.lock().unwrap().items`), if any.
    root: Option<String>,
    /// The first guard-taking method met, going from the outside in.
    lock: Option<String>,
}

fn chain(mut expr: &Expr) -> Chain {
    let mut lock = None;
    loop {
        expr = strip(expr);
        match expr {
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                if lock.is_none() && call.args.is_empty() && LOCKS.contains(&method.as_str()) {
                    lock = Some(method);
                }
                expr = &call.receiver;
            }
            Expr::Field(field) => expr = &field.base,
            Expr::Index(index) => expr = &index.expr,
            Expr::Try(tried) => expr = &tried.expr,
            Expr::Path(path) if path.qself.is_none() => {
                return Chain {
                    root: path.path.get_ident().map(ToString::to_string),
                    lock,
                };
            }
            _ => return Chain { root: None, lock },
        }
    }
}

/// Whether `expr` takes a guard of shared state (not of a per-item parameter).
fn takes_shared_guard(expr: &Expr, names: &Names) -> bool {
    let chain = chain(expr);
    chain.lock.is_some()
        && !chain
            .root
            .is_some_and(|root| names.per_item.contains(&root))
}

/// Collects the identifiers a pattern binds.
#[derive(Default)]
struct Idents(BTreeSet<String>);

impl<'ast> Visit<'ast> for Idents {
    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.0.insert(pat.ident.to_string());
        syn::visit::visit_pat_ident(self, pat);
    }
}

/// First pass over a closure body: the names it binds and the guards among them.
struct Collector<'n> {
    names: &'n mut Names,
}

impl Collector<'_> {
    fn bind(&mut self, pat: &syn::Pat, guard: bool) {
        let mut idents = Idents::default();
        idents.visit_pat(pat);
        if guard {
            self.names.guards.extend(idents.0.iter().cloned());
        }
        self.names.bound.extend(idents.0);
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let guard = local
            .init
            .as_ref()
            .is_some_and(|init| takes_shared_guard(&init.expr, self.names));
        self.bind(&local.pat, guard);
        syn::visit::visit_local(self, local);
    }

    fn visit_expr_let(&mut self, expr: &'ast syn::ExprLet) {
        let guard = takes_shared_guard(&expr.expr, self.names);
        self.bind(&expr.pat, guard);
        syn::visit::visit_expr_let(self, expr);
    }

    fn visit_expr_match(&mut self, expr: &'ast syn::ExprMatch) {
        let guard = takes_shared_guard(&expr.expr, self.names);
        for arm in &expr.arms {
            self.bind(&arm.pat, guard);
        }
        syn::visit::visit_expr_match(self, expr);
    }

    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.names.bound.insert(pat.ident.to_string());
        syn::visit::visit_pat_ident(self, pat);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit_macro_args(self, mac);
    }
}

/// Second pass: the first push or send into shared state.
struct PushFinder<'n, 'c> {
    names: &'n Names,
    cx: &'n RuleContext<'c>,
    found: Option<String>,
}

impl PushFinder<'_, '_> {
    fn judge(&self, call: &ExprMethodCall) -> Option<String> {
        let method = call.method.to_string();
        let chain = chain(&call.receiver);
        let root = chain.root.as_deref();
        if root.is_some_and(|root| self.names.per_item.contains(root)) {
            return None;
        }
        if SENDS.contains(&method.as_str()) {
            if call.args.is_empty()
                || self.cx.crate_defines_method(&method)
                || root.is_some_and(|root| self.names.is_own(root))
            {
                return None;
            }
            return Some(format!("sends into a shared channel (`.{method}(..)`)"));
        }
        if !PUSHES.contains(&method.as_str()) {
            return None;
        }
        if let Some(lock) = chain.lock {
            return Some(format!(
                "pushes into shared state (`.{lock}()` then `.{method}(..)`)"
            ));
        }
        let root = root?;
        if self.names.guards.contains(root) {
            Some(format!(
                "pushes into shared state (`.{method}(..)` on the guard `{root}`)"
            ))
        } else if self.names.is_own(root) {
            None
        } else {
            Some(format!(
                "pushes into shared state (`.{method}(..)` on the captured `{root}`)"
            ))
        }
    }
}

impl<'ast> Visit<'ast> for PushFinder<'_, '_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if self.found.is_some() {
            return;
        }
        if let Expr::MethodCall(call) = expr
            && let Some(what) = self.judge(call)
        {
            self.found = Some(what);
            return;
        }
        syn::visit::visit_expr(self, expr);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit_macro_args(self, mac);
    }
}
