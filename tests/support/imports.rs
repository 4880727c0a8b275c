//! The import graph of a crate's sources, for the layering tests: which file's code names which
//! other file's items, read from `use` declarations and `crate::`/`super::` paths.
//!
//! Deliberately small: comments, string literals and `#[cfg(test)] mod tests { .. }` blocks are
//! left out, a path is resolved to the longest module prefix that is a file, and a path that
//! reaches a `mod.rs` through one of its `pub use` re-exports is followed to the file that defines
//! the item (a folder's `mod.rs` re-exporting its files is the folder's front door, not a
//! dependency of theirs on it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside the crate, e.g. `["state", "hash"]`; the crate root is empty.
pub type Module = Vec<String>;

/// Every source file of a crate and what each imports.
pub struct ImportGraph {
    /// Each module's file, relative to the crate's source folder.
    pub files: BTreeMap<Module, PathBuf>,
    /// Each module's imports (modules other than itself).
    pub edges: BTreeMap<Module, BTreeSet<Module>>,
}

/// Reads every `.rs` file under `root` (a crate's `src/`), leaving out `skip` folders (binaries).
pub fn read_crate(root: &Path, crate_name: &str, skip: &[&str]) -> ImportGraph {
    let mut texts = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(root).unwrap().to_owned();
            if path.is_dir() {
                if !skip.iter().any(|s| relative == Path::new(s)) {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                texts.insert(module_of(&relative), (relative, code_only(&text)));
            }
        }
    }
    let files: BTreeMap<Module, PathBuf> = texts
        .iter()
        .map(|(m, (path, _))| (m.clone(), path.clone()))
        .collect();
    let reexports: BTreeMap<Module, BTreeMap<String, Module>> = texts
        .iter()
        .map(|(m, (_, text))| (m.clone(), reexports_of(m, text, crate_name, &files)))
        .collect();
    let mut edges = BTreeMap::new();
    for (module, (_, text)) in &texts {
        let mut targets = BTreeSet::new();
        for path in paths_in(text) {
            if let Some(target) = resolve(module, &path, crate_name, &files, &reexports)
                && &target != module
                // A folder's `mod.rs` declaring and re-exporting its files is not an import.
                && !(target.len() == module.len() + 1 && target.starts_with(module))
            {
                targets.insert(target);
            }
        }
        edges.insert(module.clone(), targets);
    }
    ImportGraph { files, edges }
}

impl ImportGraph {
    /// The circles: every set of two or more files that import each other, each sorted.
    pub fn circles(&self) -> Vec<Vec<Module>> {
        let nodes: Vec<&Module> = self.files.keys().collect();
        let index_of: BTreeMap<&Module, usize> =
            nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let adjacency: Vec<Vec<usize>> = nodes
            .iter()
            .map(|m| {
                self.edges[*m]
                    .iter()
                    .filter_map(|t| index_of.get(t).copied())
                    .collect()
            })
            .collect();
        strongly_connected(&adjacency)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut names: Vec<Module> = c.into_iter().map(|i| nodes[i].clone()).collect();
                names.sort();
                names
            })
            .collect()
    }
}

/// Tarjan's strongly connected components, iteratively.
fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adjacency.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut components, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = adjacency[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// `state/hash.rs` -> `["state", "hash"]`; `lib.rs`, `main.rs` and `mod.rs` name their folder.
fn module_of(relative: &Path) -> Module {
    let mut parts: Module = relative
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The text with comments, string and character literals and test modules blanked out.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some(raw) = rest.strip_prefix("r#\"") {
            i += 3 + raw.find("\"#").map_or(raw.len(), |e| e + 2);
            out.push_str("\"\"");
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
            out.push_str("\"\"");
        } else if rest.starts_with("'\\''") {
            i += 4;
        } else if bytes[i] == b'\''
            && rest.len() > 2
            && (bytes[i + 2] == b'\'' || bytes[i + 1] == b'\\')
        {
            // A character literal ('x' or '\n'); lifetimes are left as they are.
            i += rest[1..].find('\'').map_or(rest.len(), |e| e + 2);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    strip_test_modules(&out)
}

/// Removes `#[cfg(test)] mod name { .. }` blocks: tests may reach anywhere.
fn strip_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + 12..].trim_start();
        if !after.starts_with("mod ") {
            out.push_str(&rest[..at + 12]);
            rest = &rest[at + 12..];
            continue;
        }
        out.push_str(&rest[..at]);
        let Some(open) = after.find('{') else {
            rest = "";
            break;
        };
        let body = &after[open + 1..];
        let mut depth = 1;
        let mut end = body.len();
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// Every path the code names: each leaf of each `use` tree, and every `crate::`, `super::` and
/// `self::` path outside them.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for tree in use_trees(code) {
        paths.extend(expand(&tree).into_iter().map(|p| p.0));
    }
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .collect();
    for word in words {
        if word.starts_with("crate::") || word.starts_with("super::") || word.starts_with("self::")
        {
            paths.push(
                word.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
    }
    paths
}

/// The trees of the `use` declarations: `a::{b, c::d}` for `use a::{b, c::d};`.
fn use_trees(code: &str) -> Vec<String> {
    let mut trees = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let boundary = at == 0 || {
            let before = rest.as_bytes()[at - 1];
            !(before.is_ascii_alphanumeric() || before == b'_')
        };
        rest = &rest[at + 4..];
        if !boundary {
            continue;
        }
        if let Some(end) = rest.find(';') {
            trees.push(normalise(&rest[..end]));
            rest = &rest[end..];
        }
    }
    trees
}

/// A `use` tree on one line, with no space but the one before and after `as`.
fn normalise(tree: &str) -> String {
    tree.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ::", "::")
        .replace(":: ", "::")
        .replace("{ ", "{")
        .replace(" }", "}")
        .replace(", ", ",")
        .replace(" ,", ",")
}

/// The leaf paths of a `use` tree, with the name each leaf is imported as.
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    let Some(open) = tree.find('{') else {
        let (path, alias) = tree.split_once(" as ").unwrap_or((tree, ""));
        let segments: Vec<String> = path
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let name = match alias {
            "" => segments.last().cloned().unwrap_or_default(),
            alias => alias.to_owned(),
        };
        return vec![(segments, name)];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut leaves = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        if part == "self" {
            leaves.extend(expand(prefix.trim_end_matches("::")));
        } else {
            leaves.extend(expand(&format!("{prefix}{part}")));
        }
    }
    leaves
}

/// The `pub use` re-exports of a module: each name and the module that defines it.
fn reexports_of(
    module: &Module,
    code: &str,
    crate_name: &str,
    files: &BTreeMap<Module, PathBuf>,
) -> BTreeMap<String, Module> {
    let mut names = BTreeMap::new();
    let mut rest = code;
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + 8..];
        let Some(end) = rest.find(';') else { break };
        let tree = normalise(&rest[..end]);
        for (path, name) in expand(&tree) {
            if let Some(target) = module_path(module, &path, crate_name, files) {
                names.insert(name, target);
            }
        }
        rest = &rest[end..];
    }
    names
}

/// The longest prefix of `path` (seen from `module`) that is a file, and the rest of the path.
fn module_path(
    module: &Module,
    path: &[String],
    crate_name: &str,
    files: &BTreeMap<Module, PathBuf>,
) -> Option<Module> {
    resolve_prefix(module, path, crate_name, files).map(|(m, _)| m)
}

fn resolve_prefix(
    module: &Module,
    path: &[String],
    crate_name: &str,
    files: &BTreeMap<Module, PathBuf>,
) -> Option<(Module, Vec<String>)> {
    let first = path.first()?;
    let (mut current, rest): (Module, &[String]) = if first == "crate" || first == crate_name {
        (Vec::new(), &path[1..])
    } else if first == "super" {
        let mut current = module.clone();
        let mut k = 0;
        while path.get(k).is_some_and(|s| s == "super") {
            current.pop();
            k += 1;
        }
        (current, &path[k..])
    } else if first == "self" {
        (module.clone(), &path[1..])
    } else {
        let mut child = module.clone();
        child.push(first.clone());
        if !files.contains_key(&child) {
            return None;
        }
        (module.clone(), path)
    };
    let mut used = 0;
    for segment in rest {
        let mut next = current.clone();
        next.push(segment.clone());
        if !files.contains_key(&next) {
            break;
        }
        current = next;
        used += 1;
    }
    Some((current, rest[used..].to_vec()))
}

/// The file a path names, following one level of `pub use` re-exports out of a `mod.rs`.
fn resolve(
    module: &Module,
    path: &[String],
    crate_name: &str,
    files: &BTreeMap<Module, PathBuf>,
    reexports: &BTreeMap<Module, BTreeMap<String, Module>>,
) -> Option<Module> {
    let (target, rest) = resolve_prefix(module, path, crate_name, files)?;
    if let Some(item) = rest.first()
        && let Some(defined) = reexports.get(&target).and_then(|r| r.get(item))
    {
        return Some(defined.clone());
    }
    Some(target)
}
