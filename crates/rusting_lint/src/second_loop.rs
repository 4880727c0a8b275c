//! `LINT_SECOND_FIXED_LOOP`: bevy's own fixed-timestep driver added to a game.
//!
//! bevy's `TimePlugin` runs `FixedMain` from the wall clock (`run_fixed_main_schedule`), on top of
//! the engine's own ticks: the whole fixed chain then runs a few extra times, with no tick counted
//! and no hash recorded. It arrives on its own or inside `MinimalPlugins` and `DefaultPlugins`.
//! This check looks at every expression in every file (plugins are added in `Plugin::build` and
//! `main`, not in fixed code): a `TimePlugin`, `MinimalPlugins` or `DefaultPlugins` value is a
//! finding unless the method chain it starts also calls `.disable::<TimePlugin>()`. The engine
//! refuses such an app at startup too; this finds it without building the game. It approximates
//! without a type checker: a type of the game's own with one of these names is reported too.

use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, GenericArgument, Type};

use crate::finding::LintCode;
use crate::report::Hit;

/// The plugin types that bring bevy's fixed loop.
const LOOP_PLUGINS: [&str; 3] = ["TimePlugin", "MinimalPlugins", "DefaultPlugins"];

/// Every place in `ast` that adds bevy's fixed loop.
pub(crate) fn find(ast: &syn::File) -> Vec<Hit> {
    let mut finder = Finder { hits: Vec::new() };
    finder.visit_file(ast);
    finder.hits
}

struct Finder {
    hits: Vec<Hit>,
}

/// Whether a method chain calls `.disable::<TimePlugin>()` anywhere along it.
fn disables_time(call: &ExprMethodCall) -> bool {
    let here = call.method == "disable"
        && call.turbofish.as_ref().is_some_and(|fish| {
            fish.args.iter().any(|arg| match arg {
                GenericArgument::Type(Type::Path(path)) => path
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "TimePlugin"),
                _ => false,
            })
        });
    here || matches!(&*call.receiver, Expr::MethodCall(inner) if disables_time(inner))
}

/// The start of a method chain.
fn chain_root(mut expr: &Expr) -> &Expr {
    while let Expr::MethodCall(call) = expr {
        expr = &call.receiver;
    }
    expr
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if disables_time(call) {
            // The chain's plugin group is fine; its arguments may still hold others.
            let mut expr: &Expr = &Expr::MethodCall(call.clone());
            while let Expr::MethodCall(link) = expr {
                for arg in &link.args {
                    self.visit_expr(arg);
                }
                expr = &link.receiver;
            }
            if !matches!(chain_root(expr), Expr::Path(_)) {
                self.visit_expr(expr);
            }
            return;
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if let Some(last) = path.path.segments.last()
            && LOOP_PLUGINS.iter().any(|name| last.ident == name)
        {
            self.hits.push(Hit::at(
                LintCode::SecondFixedLoop,
                last.ident.span(),
                format!(
                    "`{}` brings bevy's TimePlugin, which runs `FixedMain` a second time from the \
                     wall clock, outside the engine's ticks (no tick counted, no hash recorded); \
                     leave it out, or add `.build().disable::<TimePlugin>()`",
                    last.ident
                ),
            ));
        }
        syn::visit::visit_expr_path(self, path);
    }
}
