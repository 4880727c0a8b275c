//! Guessing what an expression holds: [`Bindings`] (the typed names of one body) and
//! [`kind_of`].
//!
//! A name's kind comes from its declared type (a parameter, a `let` with a type, a closure
//! parameter with a type) or from its initializer (`HashMap::new()`, `.collect::<HashSet<_>>()`,
//! `world.resource::<FrameTime>()`). A field access counts as a hash collection when some struct
//! of the crate declares a field of that name with a hash collection type, whatever the receiver.
//! Names are not scoped: a name bound twice in one body keeps its first known kind. This module
//! must never report findings.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;
use syn::{Expr, GenericArgument, Member, Pat, Type};

use crate::index::CrateIndex;
use crate::types::{TypeKind, classify, is_hash_name};

/// The names bound in one body, and the kinds of those whose kind is known.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bindings {
    kinds: BTreeMap<String, TypeKind>,
    names: BTreeSet<String>,
}

impl Bindings {
    /// The bindings of a body with `inputs`, whose code is `code`.
    pub fn of(inputs: &[(Pat, Type)], code: &Expr, index: &CrateIndex) -> Bindings {
        let mut collector = BindingCollector {
            bindings: Bindings::default(),
            index,
        };
        for (pat, ty) in inputs {
            collector.bind(pat, classify(ty, &index.hash_aliases));
            collector.visit_pat(pat);
        }
        collector.visit_expr(code);
        collector.bindings
    }

    /// Whether `name` is bound in the body (a parameter or a local, not a function).
    pub fn is_bound(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The kind of the name, if known.
    pub fn kind(&self, name: &str) -> Option<&TypeKind> {
        self.kinds.get(name)
    }
}

struct BindingCollector<'a> {
    bindings: Bindings,
    index: &'a CrateIndex,
}

impl BindingCollector<'_> {
    fn bind(&mut self, pat: &Pat, kind: TypeKind) {
        if kind == TypeKind::Other {
            return;
        }
        let pat = match pat {
            Pat::Type(typed) => &*typed.pat,
            other => other,
        };
        if let Pat::Ident(ident) = pat {
            self.bindings
                .kinds
                .entry(ident.ident.to_string())
                .or_insert(kind);
        }
    }
}

impl<'ast> Visit<'ast> for BindingCollector<'_> {
    fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
        self.bindings.names.insert(pat.ident.to_string());
        syn::visit::visit_pat_ident(self, pat);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        let kind = match (&local.pat, &local.init) {
            (Pat::Type(typed), _) => classify(&typed.ty, &self.index.hash_aliases),
            (_, Some(init)) => kind_of(&init.expr, &self.bindings, self.index),
            _ => TypeKind::Other,
        };
        self.bind(&local.pat, kind);
        syn::visit::visit_local(self, local);
    }

    fn visit_pat_type(&mut self, pat: &'ast syn::PatType) {
        self.bind(&pat.pat, classify(&pat.ty, &self.index.hash_aliases));
        syn::visit::visit_pat_type(self, pat);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {}
}

/// The kind of a value built by `expr` (constructors, typed collects, and calls of the crate's
/// functions declared to return a hash collection).
fn initializer_kind(expr: &Expr, index: &CrateIndex) -> TypeKind {
    match expr {
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return TypeKind::Other;
            };
            let segments = &path.path.segments;
            if let Some(last) = segments.last()
                && let Some(collection) = index.hash_returning.get(&last.ident.to_string())
            {
                return TypeKind::Hash(collection.clone());
            }
            if segments.len() < 2 {
                return TypeKind::Other;
            }
            let owner = segments[segments.len() - 2].ident.to_string();
            if is_hash_name(&owner, &index.hash_aliases) {
                TypeKind::Hash(owner)
            } else {
                TypeKind::Other
            }
        }
        Expr::MethodCall(call) if call.method == "collect" => {
            turbofish_type(call).map_or(TypeKind::Other, |ty| classify(ty, &index.hash_aliases))
        }
        Expr::MethodCall(call) if index.hash_returning.contains_key(&call.method.to_string()) => {
            TypeKind::Hash(index.hash_returning[&call.method.to_string()].clone())
        }
        _ => TypeKind::Other,
    }
}

/// The first type in a method call's turbofish (`collect::<HashSet<_>>`).
pub(crate) fn turbofish_type(call: &syn::ExprMethodCall) -> Option<&Type> {
    call.turbofish
        .as_ref()?
        .args
        .iter()
        .find_map(|arg| match arg {
            GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
}

/// Methods that hand back (a view of) their receiver, for kind purposes: wrappers' accessors
/// (`Option<Instant>` in a `Local` gives its `Instant` through `get_or_insert_with`).
const PASS_THROUGH: [&str; 20] = [
    "clone",
    "get_or_insert_with",
    "get_or_insert",
    "get_or_insert_default",
    "unwrap_or",
    "unwrap_or_else",
    "unwrap_or_default",
    "copied",
    "cloned",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "unwrap",
    "expect",
    "lock",
    "read",
    "write",
    "into_inner",
    "deref",
];

/// Methods that fetch a resource by its type (`world.resource::<FrameTime>()`).
const RESOURCE_GETTERS: [&str; 6] = [
    "resource",
    "resource_mut",
    "get_resource",
    "get_resource_mut",
    "non_send_resource",
    "get_resource_ref",
];

/// What `expr` holds, as far as the lint can tell.
pub(crate) fn kind_of(expr: &Expr, bindings: &Bindings, index: &CrateIndex) -> TypeKind {
    match expr {
        Expr::Paren(inner) => kind_of(&inner.expr, bindings, index),
        Expr::Group(inner) => kind_of(&inner.expr, bindings, index),
        Expr::Reference(inner) => kind_of(&inner.expr, bindings, index),
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
            kind_of(&unary.expr, bindings, index)
        }
        Expr::Path(path) => path
            .path
            .get_ident()
            .and_then(|ident| bindings.kind(&ident.to_string()).cloned())
            .unwrap_or(TypeKind::Other),
        Expr::Field(field) => match &field.member {
            Member::Named(name) => index
                .hash_fields
                .get(&name.to_string())
                .map_or(TypeKind::Other, |collection| {
                    TypeKind::Hash(collection.clone())
                }),
            _ => TypeKind::Other,
        },
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            if RESOURCE_GETTERS.contains(&method.as_str()) {
                turbofish_type(call).map_or(TypeKind::Other, |ty| classify(ty, &index.hash_aliases))
            } else if PASS_THROUGH.contains(&method.as_str()) {
                kind_of(&call.receiver, bindings, index)
            } else {
                initializer_kind(expr, index)
            }
        }
        Expr::Call(_) => initializer_kind(expr, index),
        _ => TypeKind::Other,
    }
}
