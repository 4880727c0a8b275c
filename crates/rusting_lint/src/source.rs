//! Reading a crate's sources: listing `src/**/*.rs` in a fixed order, parsing each file, and the
//! names its `use` declarations bring in ([`Imports`]).
//!
//! Files are listed by their path relative to the crate, compared as strings, so the lint reads
//! them in the same order on every machine. A file that is not valid Rust is a
//! [`LintError::Parse`] with its line and column. This module must never report findings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::{UseTree, visit::Visit};

use crate::error::LintError;

/// One parsed source file.
pub(crate) struct SourceFile {
    /// The name findings use (`src/game.rs`).
    pub name: String,
    /// Its text.
    pub text: String,
    /// Its syntax tree.
    pub ast: syn::File,
    /// The names its `use` declarations bring in.
    pub imports: Imports,
}

impl SourceFile {
    /// Parses `text` as the file `name`.
    pub fn parse(name: &str, text: String) -> Result<SourceFile, LintError> {
        let ast = syn::parse_file(&text).map_err(|error| {
            let start = error.span().start();
            LintError::Parse {
                file: name.to_owned(),
                line: start.line.max(1),
                column: start.column + 1,
                message: error.to_string(),
            }
        })?;
        let imports = Imports::of(&ast);
        Ok(SourceFile {
            name: name.to_owned(),
            text,
            ast,
            imports,
        })
    }
}

/// Every `.rs` file under `crate_dir/src`, as (name relative to `crate_dir`, path), sorted by name.
pub(crate) fn list_sources(crate_dir: &Path) -> Result<Vec<(String, PathBuf)>, LintError> {
    let mut files = Vec::new();
    let mut pending = vec![crate_dir.join("src")];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| LintError::ListSources {
            dir: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| LintError::ListSources {
                dir: dir.clone(),
                source,
            })?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|source| LintError::ListSources {
                dir: dir.clone(),
                source,
            })?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(crate_dir).unwrap_or(&path);
                let name = relative
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                files.push((name, path));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Reads a listed file.
pub(crate) fn read_source(path: &Path) -> Result<String, LintError> {
    std::fs::read_to_string(path).map_err(|source| LintError::Read {
        file: path.to_owned(),
        source,
    })
}

/// The names a file's `use` declarations bring in, each with the path it stands for
/// (`random` → `rand::random`). Glob imports bring in nothing the lint can see; a name imported
/// twice (in different modules of one file) keeps the first path.
#[derive(Clone, Debug, Default)]
pub(crate) struct Imports {
    names: BTreeMap<String, Vec<String>>,
}

impl Imports {
    fn of(file: &syn::File) -> Imports {
        let mut imports = Imports::default();
        imports.visit_file(file);
        imports
    }

    /// `segments` with its first segment replaced by the path it was imported as, if any.
    pub fn expand(&self, segments: Vec<String>) -> Vec<String> {
        let Some(first) = segments.first() else {
            return segments;
        };
        match self.names.get(first) {
            Some(full) if full.last() != Some(first) || full.len() > 1 => {
                let mut expanded = full.clone();
                expanded.extend(segments.into_iter().skip(1));
                expanded
            }
            _ => segments,
        }
    }

    fn add_tree(&mut self, prefix: &mut Vec<String>, tree: &UseTree) {
        match tree {
            UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.add_tree(prefix, &path.tree);
                prefix.pop();
            }
            UseTree::Name(name) => {
                let ident = name.ident.to_string();
                if ident == "self" {
                    if let Some(last) = prefix.last() {
                        self.names
                            .entry(last.clone())
                            .or_insert_with(|| prefix.clone());
                    }
                } else {
                    let mut full = prefix.clone();
                    full.push(ident.clone());
                    self.names.entry(ident).or_insert(full);
                }
            }
            UseTree::Rename(rename) => {
                let alias = rename.rename.to_string();
                if alias != "_" {
                    let mut full = prefix.clone();
                    full.push(rename.ident.to_string());
                    self.names.entry(alias).or_insert(full);
                }
            }
            UseTree::Group(group) => {
                for item in &group.items {
                    self.add_tree(prefix, item);
                }
            }
            UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.add_tree(&mut Vec::new(), &item.tree);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_expand_first_segments() {
        let file = syn::parse_file(
            "use rand::{random, thread_rng as rng}; use std::time::{self, Instant};",
        )
        .unwrap();
        let imports = Imports::of(&file);
        let expand = |s: &[&str]| imports.expand(s.iter().map(|s| s.to_string()).collect());
        assert_eq!(expand(&["random"]), ["rand", "random"]);
        assert_eq!(expand(&["rng"]), ["rand", "thread_rng"]);
        assert_eq!(
            expand(&["Instant", "now"]),
            ["std", "time", "Instant", "now"]
        );
        assert_eq!(
            expand(&["time", "SystemTime"]),
            ["std", "time", "SystemTime"]
        );
        assert_eq!(expand(&["other"]), ["other"]);
    }
}
