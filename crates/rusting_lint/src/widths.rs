//! [`width_fields`]: the fields of a crate's declared simulation types whose width depends on the
//! platform (`usize`, `isize`).
//!
//! The engine hashes, compares and snapshots `usize` and `isize` as 8 bytes on every target, so a
//! value has one encoding everywhere. What it cannot make alike is the arithmetic: on a 32-bit
//! target a `usize` wraps or overflows at 2^32, and an index or counter past it gives another
//! result than on a 64-bit one. A `CrossPlatform` project promises the same bits on every device,
//! so `rusting validate` reports these fields there (with the type and field) and asks for `u32`
//! or `u64`. A `Local` project runs on one machine and may keep them.
//!
//! A declared type is a struct or enum whose `#[derive(...)]` names `SimState`; a field marked
//! `#[sim_state(skip = "...")]` is left out (it never reaches the hash). The type is matched by
//! name, without a type checker: a type alias of `usize` is not seen.
//!
//! This module must never report anything but platform widths in declared types.

use std::path::Path;

use proc_macro2::TokenTree;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Attribute, Fields, ItemEnum, ItemStruct, Type};

use crate::error::LintError;
use crate::source::{SourceFile, list_sources, read_source};

/// A field of a declared simulation type whose type holds `usize` or `isize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WidthField {
    /// The file (`src/game.rs`).
    pub file: String,
    /// 1-based line of the field.
    pub line: usize,
    /// 1-based column of the field.
    pub column: usize,
    /// The type's name.
    pub type_name: String,
    /// The field: its name, its index for a tuple field, `Variant.field` in an enum.
    pub field: String,
    /// The field's type as written (`Vec<usize>`).
    pub ty: String,
    /// `usize` or `isize`.
    pub width: &'static str,
}

/// Every platform-width field of a declared simulation type in the crate at `crate_dir`.
///
/// # Errors
///
/// [`LintError`] when the sources cannot be listed, read or parsed.
pub fn width_fields(crate_dir: &Path) -> Result<Vec<WidthField>, LintError> {
    let mut found = Vec::new();
    for (name, path) in list_sources(crate_dir)? {
        let file = SourceFile::parse(&name, read_source(&path)?)?;
        found.extend(width_fields_in(&file.name, &file.ast));
    }
    Ok(found)
}

/// [`width_fields`] of one parsed file.
pub fn width_fields_in(file: &str, ast: &syn::File) -> Vec<WidthField> {
    let mut finder = Finder {
        file,
        found: Vec::new(),
    };
    finder.visit_file(ast);
    finder.found
}

struct Finder<'a> {
    file: &'a str,
    found: Vec<WidthField>,
}

/// Whether one of `attrs` is `#[attribute(...)]` with `name` among its tokens.
fn has_attribute_naming(attrs: &[Attribute], attribute: &str, name: &str) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident(attribute)
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| mentions(list.tokens.clone(), name))
    })
}

/// Whether `attrs` derive `SimState`.
fn derives_sim_state(attrs: &[Attribute]) -> bool {
    has_attribute_naming(attrs, "derive", "SimState")
}

/// Whether `attrs` skip the field (`#[sim_state(skip = "...")]`).
fn skipped(attrs: &[Attribute]) -> bool {
    has_attribute_naming(attrs, "sim_state", "skip")
}

/// Whether the tokens hold the identifier `name` anywhere.
fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == name,
        TokenTree::Group(group) => mentions(group.stream(), name),
        _ => false,
    })
}

/// The platform width a type holds, if any.
fn width_of(ty: &Type) -> Option<&'static str> {
    let tokens = quote_tokens(ty);
    if mentions(tokens.clone(), "usize") {
        Some("usize")
    } else if mentions(tokens, "isize") {
        Some("isize")
    } else {
        None
    }
}

fn quote_tokens(ty: &Type) -> proc_macro2::TokenStream {
    let mut tokens = proc_macro2::TokenStream::new();
    quote::ToTokens::to_tokens(ty, &mut tokens);
    tokens
}

impl Finder<'_> {
    fn fields(&mut self, type_name: &str, prefix: &str, fields: &Fields) {
        for (k, field) in fields.iter().enumerate() {
            if skipped(&field.attrs) {
                continue;
            }
            let Some(width) = width_of(&field.ty) else {
                continue;
            };
            let name = field
                .ident
                .as_ref()
                .map_or_else(|| k.to_string(), ToString::to_string);
            let start = field.span().start();
            self.found.push(WidthField {
                file: self.file.to_owned(),
                line: start.line,
                column: start.column + 1,
                type_name: type_name.to_owned(),
                field: format!("{prefix}{name}"),
                ty: quote_tokens(&field.ty).to_string().replace(' ', ""),
                width,
            });
        }
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_struct(&mut self, item: &'ast ItemStruct) {
        if derives_sim_state(&item.attrs) {
            self.fields(&item.ident.to_string(), "", &item.fields);
        }
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast ItemEnum) {
        if derives_sim_state(&item.attrs) {
            for variant in &item.variants {
                let prefix = format!("{}.", variant.ident);
                self.fields(&item.ident.to_string(), &prefix, &variant.fields);
            }
        }
        syn::visit::visit_item_enum(self, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_widths_in_declared_types_are_found() {
        let source = "
#[derive(Component, Clone, SimState)]
struct Inventory {
    slots: Vec<usize>,
    gold: u64,
    #[sim_state(skip = \"a cache rebuilt every tick\")]
    cursor: usize,
}

#[derive(Clone)]
struct NotDeclared { index: usize }

#[derive(Clone, rusting_engine::prelude::SimState)]
enum Order {
    Idle,
    Walk { step: isize },
    Carry(u32, usize),
}
";
        let ast = syn::parse_file(source).unwrap();
        let found: Vec<_> = width_fields_in("src/main.rs", &ast)
            .into_iter()
            .map(|f| (f.type_name, f.field, f.ty, f.width, f.line))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "Inventory".into(),
                    "slots".into(),
                    "Vec<usize>".into(),
                    "usize",
                    4
                ),
                (
                    "Order".into(),
                    "Walk.step".into(),
                    "isize".into(),
                    "isize",
                    16
                ),
                (
                    "Order".into(),
                    "Carry.1".into(),
                    "usize".into(),
                    "usize",
                    17
                ),
            ]
        );
    }
}
