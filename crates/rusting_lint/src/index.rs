//! The crate index: every function body the lint may walk ([`Body`]), and the crate-wide facts the
//! rules use to guess types (fields and type aliases that hold hash collections, fields that hold
//! float atomics).
//!
//! Functions are known by their simple name and, for methods and associated functions, the last
//! segment of their `impl` or `trait` type. Items under `#[cfg(test)]` and `#[test]` functions are
//! left out: tests are not simulation code. This module must never report findings.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;
use syn::{Attribute, Expr, FnArg, Pat, Type};

use crate::source::SourceFile;
use crate::types::{TypeKind, classify, names_atomic_float};

/// Index of a body in [`CrateIndex::bodies`].
pub(crate) type BodyId = usize;

/// A function or a closure whose code the lint can walk.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    /// Index of its file.
    pub file: usize,
    /// Its simple name (`step`), or `closure` for a closure.
    pub name: String,
    /// The last segment of its `impl`/`trait` type, for methods and associated functions.
    pub owner: Option<String>,
    /// Whether it takes `self`.
    pub has_receiver: bool,
    /// How messages name it (`Player::step`, `respawn`, `the closure at src/game.rs:12`).
    pub display: String,
    /// Its typed inputs (the `self` receiver is left out).
    pub inputs: Vec<(Pat, Type)>,
    /// Its code.
    pub code: Expr,
}

/// What the lint knows about a crate before walking any code.
#[derive(Clone, Debug, Default)]
pub(crate) struct CrateIndex {
    /// Every function with a body, in file order then source order; fixed closures are appended.
    pub bodies: Vec<Body>,
    /// Struct fields declared with a hash collection type: field name to the collection's type
    /// name (as written: `HashMap`, or the crate's alias).
    pub hash_fields: BTreeMap<String, String>,
    /// Names of struct fields declared with a float atomic type (`AtomicF32`, `AtomicF64`).
    pub atomic_float_fields: BTreeSet<String>,
    /// Names of type aliases of hash collections.
    pub hash_aliases: BTreeSet<String>,
    /// Names of methods (functions taking `self`) the crate defines.
    pub method_names: BTreeSet<String>,
    /// Names of the structs and enums the crate defines.
    pub type_names: BTreeSet<String>,
    /// The crate's functions and methods that return a hash collection: name to the
    /// collection's type name.
    pub hash_returning: BTreeMap<String, String>,
}

impl CrateIndex {
    /// Indexes `files`.
    pub fn build(files: &[SourceFile]) -> CrateIndex {
        let mut index = CrateIndex::default();
        for file in files {
            let mut aliases = AliasCollector {
                aliases: &mut index.hash_aliases,
            };
            aliases.visit_file(&file.ast);
        }
        for (file_index, file) in files.iter().enumerate() {
            let mut collector = Collector {
                index: &mut index,
                file: file_index,
                owner: None,
            };
            collector.visit_file(&file.ast);
        }
        index.method_names = index
            .bodies
            .iter()
            .filter(|body| body.has_receiver)
            .map(|body| body.name.clone())
            .collect();
        index
    }

    /// Bodies named `name` that are free functions.
    pub fn free_functions<'a>(&'a self, name: &'a str) -> impl Iterator<Item = BodyId> + 'a {
        self.bodies
            .iter()
            .enumerate()
            .filter(move |(_, body)| body.owner.is_none() && body.name == name)
            .map(|(id, _)| id)
    }

    /// Bodies named `name` in an `impl` or `trait` of `owner`.
    pub fn associated<'a>(
        &'a self,
        owner: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = BodyId> + 'a {
        self.bodies
            .iter()
            .enumerate()
            .filter(move |(_, body)| body.owner.as_deref() == Some(owner) && body.name == name)
            .map(|(id, _)| id)
    }

    /// Bodies named `name` that take `self`, whatever their type.
    pub fn methods<'a>(&'a self, name: &'a str) -> impl Iterator<Item = BodyId> + 'a {
        self.bodies
            .iter()
            .enumerate()
            .filter(move |(_, body)| body.has_receiver && body.name == name)
            .map(|(id, _)| id)
    }
}

/// Whether attributes put an item out of normal builds (`#[cfg(test)]`) or make it a test.
pub(crate) fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        if path.is_ident("test") {
            return true;
        }
        if !path.is_ident("cfg") {
            return false;
        }
        attr.parse_args::<syn::Meta>()
            .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// The last segment of a type's path (`Player` for `crate::game::Player<T>`).
pub(crate) fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        Type::Reference(reference) => type_name(&reference.elem),
        Type::Paren(paren) => type_name(&paren.elem),
        Type::Group(group) => type_name(&group.elem),
        _ => None,
    }
}

struct AliasCollector<'a> {
    aliases: &'a mut BTreeSet<String>,
}

impl<'ast> Visit<'ast> for AliasCollector<'_> {
    fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
        if matches!(classify(&item.ty, self.aliases), TypeKind::Hash(_)) {
            self.aliases.insert(item.ident.to_string());
        }
    }
}

struct Collector<'a> {
    index: &'a mut CrateIndex,
    file: usize,
    owner: Option<String>,
}

impl Collector<'_> {
    fn add(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let name = sig.ident.to_string();
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && let TypeKind::Hash(collection) = classify(ty, &self.index.hash_aliases)
        {
            self.index.hash_returning.insert(name.clone(), collection);
        }
        let has_receiver = sig.receiver().is_some();
        let inputs = sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Typed(typed) => Some(((*typed.pat).clone(), (*typed.ty).clone())),
                FnArg::Receiver(_) => None,
            })
            .collect();
        let display = match &self.owner {
            Some(owner) => format!("{owner}::{name}"),
            None => name.clone(),
        };
        self.index.bodies.push(Body {
            file: self.file,
            name,
            owner: self.owner.clone(),
            has_receiver,
            display,
            inputs,
            code: Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: block.clone(),
            }),
        });
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[Attribute] = match item {
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Trait(item) => &item.attrs,
            syn::Item::Struct(item) => &item.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        let outer = self.owner.take();
        self.add(&item.sig, &item.block);
        syn::visit::visit_item_fn(self, item);
        self.owner = outer;
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let outer = std::mem::replace(&mut self.owner, type_name(&item.self_ty));
        syn::visit::visit_item_impl(self, item);
        self.owner = outer;
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let outer = self.owner.replace(item.ident.to_string());
        syn::visit::visit_item_trait(self, item);
        self.owner = outer;
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if is_test_only(&item.attrs) {
            return;
        }
        self.add(&item.sig, &item.block);
        let outer = self.owner.take();
        syn::visit::visit_impl_item_fn(self, item);
        self.owner = outer;
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.add(&item.sig, block);
        }
        let outer = self.owner.take();
        syn::visit::visit_trait_item_fn(self, item);
        self.owner = outer;
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.index.type_names.insert(item.ident.to_string());
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        self.index.type_names.insert(item.ident.to_string());
        syn::visit::visit_item_enum(self, item);
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if let Some(ident) = &field.ident
            && let TypeKind::Hash(collection) = classify(&field.ty, &self.index.hash_aliases)
        {
            self.index.hash_fields.insert(ident.to_string(), collection);
        }
        if let Some(ident) = &field.ident
            && names_atomic_float(&field.ty)
        {
            self.index.atomic_float_fields.insert(ident.to_string());
        }
    }
}
