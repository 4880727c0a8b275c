//! Walking one body of fixed code: every expression goes through every rule, macro arguments
//! included, and every call the body makes is noted as a [`Callee`] for the reachability pass.
//!
//! syn keeps a macro's arguments as raw tokens; the walker parses them as comma-separated
//! expressions (`println!`, `vec!`, `assert_eq!`, `format!`) or else as statements, and skips a
//! macro whose arguments are neither. Nested items (a `fn` inside a `fn`) are not part of the
//! body: they are bodies of their own, walked when something calls them. This module must never
//! decide what is fixed code.

use std::cell::RefCell;

use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::{Expr, Token};

use crate::index::{Body, CrateIndex};
use crate::infer::Bindings;
use crate::report::Hit;
use crate::rules::{self, Rule, RuleContext};
use crate::source::SourceFile;

/// Something a body calls or names that may be a function of the crate.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Callee {
    /// A path (`helper`, `physics::step`, `Self::advance`), imports expanded.
    Path(Vec<String>),
    /// A method call `receiver.name(..)`.
    Method(String),
}

/// What walking one body found.
pub(crate) struct Walked {
    /// The rules' hits.
    pub hits: Vec<Hit>,
    /// The calls it makes, in source order.
    pub callees: Vec<Callee>,
}

/// Walks `body` (from `file`) through every rule.
pub(crate) fn walk_body(body: &Body, file: &SourceFile, index: &CrateIndex) -> Walked {
    let bindings = Bindings::of(&body.inputs, &body.code, index);
    let cx = RuleContext {
        index,
        imports: &file.imports,
        bindings: &bindings,
        exempt: RefCell::new(Default::default()),
    };
    let rules = rules::all();
    let mut walker = Walker {
        cx: &cx,
        rules: &rules,
        walked: Walked {
            hits: Vec::new(),
            callees: Vec::new(),
        },
    };
    for (pat, ty) in &body.inputs {
        for rule in rules {
            rule.check_input(pat, ty, &cx, &mut walker.walked.hits);
        }
    }
    walker.visit_expr(&body.code);
    walker.walked
}

struct Walker<'a> {
    cx: &'a RuleContext<'a>,
    rules: &'a [&'static dyn Rule],
    walked: Walked,
}

impl Walker<'_> {
    fn note_callee(&mut self, expr: &Expr) {
        match expr {
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident()
                    && self.cx.bindings.is_bound(&ident.to_string())
                {
                    return;
                }
                let segments = self.cx.segments(&path.path);
                self.walked.callees.push(Callee::Path(segments));
            }
            Expr::Path(path) => {
                if let Some(last) = path.path.segments.last() {
                    self.walked
                        .callees
                        .push(Callee::Method(last.ident.to_string()));
                }
            }
            Expr::MethodCall(call) => {
                self.walked
                    .callees
                    .push(Callee::Method(call.method.to_string()));
            }
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        for rule in self.rules {
            rule.check_expr(expr, self.cx, &mut self.walked.hits);
        }
        self.note_callee(expr);
        syn::visit::visit_expr(self, expr);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        for rule in self.rules {
            rule.check_local(local, self.cx, &mut self.walked.hits);
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let parse_exprs = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(exprs) = parse_exprs.parse2(mac.tokens.clone()) {
            for expr in &exprs {
                self.visit_expr(expr);
            }
        } else if let Ok(stmts) = syn::Block::parse_within.parse2(mac.tokens.clone()) {
            for stmt in &stmts {
                self.visit_stmt(stmt);
            }
        }
    }
}
