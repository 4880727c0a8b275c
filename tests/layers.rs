//! The engine's layers, read from its imports: every import between the folders of `src/` points
//! down the layers that docs/architecture.md draws, and no files of the engine, the CLI or the
//! lint import each other in a circle.

#[path = "support/imports.rs"]
mod imports;

use std::path::Path;

use imports::{ImportGraph, Module, read_crate};

/// The engine's layers, bottom up; the folders of one layer may not import each other. `lib.rs`
/// (the prelude) stands above them all.
const LAYERS: &[&[&str]] = &[
    &["state"],
    &["runtime"],
    &["jobs"],
    &["physics"],
    &["gameplay"],
    &["scene"],
    &["engine"],
    &["record"],
    &["determinism"],
    &["net", "window"],
    &["game"],
];

/// The layer of a module: its top folder's place in [`LAYERS`]; the crate root is above all.
fn layer_of(module: &Module) -> usize {
    let Some(top) = module.first() else {
        return LAYERS.len();
    };
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
        .unwrap_or_else(|| {
            panic!("src/{top} is in no layer: add it to LAYERS and to docs/architecture.md")
        })
}

fn name(module: &Module) -> String {
    if module.is_empty() {
        "lib".to_owned()
    } else {
        module.join("/")
    }
}

fn engine() -> ImportGraph {
    read_crate(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "rusting_engine",
        &["bin", "shaders"],
    )
}

/// No file imports a file of a higher layer, or of another folder in its own layer: data and
/// imports flow one way, bottom to top, and each folder's name says where it stands.
///
/// Fails if a lower layer names a higher one: for example `use crate::engine::App;` in
/// `src/state/snapshot.rs`, or the engine's frame stepper naming `record::Recorder` again.
#[test]
fn every_import_between_folders_points_down_the_layers() {
    let graph = engine();
    let mut upward = Vec::new();
    for (from, targets) in &graph.edges {
        for to in targets {
            let (a, b) = (layer_of(from), layer_of(to));
            if from.first() != to.first() && a <= b {
                upward.push(format!("src/{} imports src/{}", name(from), name(to)));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that run up or across the layers (see docs/architecture.md):\n{}",
        upward.join("\n")
    );
}

/// No set of files of the engine imports each other in a circle (a folder's `mod.rs` that
/// re-exports its files counts as the files it re-exports from).
///
/// Fails if two files name each other: for example `physics/cpu/contacts.rs` using a helper of
/// `box_box.rs` while `box_box.rs` builds `contacts.rs`'s manifolds.
#[test]
fn no_engine_files_import_each_other_in_a_circle() {
    assert_no_circles(&engine(), "src");
}

/// The same for the `rusting` command and the lint of `rusting validate`.
///
/// Fails if, for example, the lint's `report.rs` and `allow.rs` name each other's types again.
#[test]
fn no_files_of_the_cli_or_the_lint_import_each_other_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, crate_name) in [
        ("crates/rusting/src", "rusting"),
        ("crates/rusting_lint/src", "rusting_lint"),
    ] {
        assert_no_circles(&read_crate(&root.join(dir), crate_name, &[]), dir);
    }
}

fn assert_no_circles(graph: &ImportGraph, dir: &str) {
    let circles: Vec<String> = graph
        .circles()
        .iter()
        .map(|c| {
            let files: Vec<String> = c.iter().map(|m| format!("{dir}/{}", name(m))).collect();
            files.join(" <-> ")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "files that import each other in a circle:\n{}",
        circles.join("\n")
    );
}

/// The reader itself: a `use` tree with groups, `self` and an alias, `super::` paths, comments
/// and strings are read as the compiler would.
#[test]
fn the_import_reader_reads_use_trees_paths_and_re_exports() {
    let dir = std::env::temp_dir().join(format!("rusting-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "pub mod x;\npub use x::Thing;\n").unwrap();
    std::fs::write(src.join("a/x.rs"), "pub struct Thing;\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "use crate::a::{self as alias, Thing};\n// use crate::c::Gone;\nconst S: &str = \"crate::c::X\";\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "fn f() { super::b::g(); }\n#[cfg(test)]\nmod tests { use crate::a::x::Thing; }\n",
    )
    .unwrap();
    let graph = read_crate(&src, "demo", &[]);
    let of = |m: &str| -> Module { m.split('/').map(str::to_owned).collect() };
    let edges = |m: &str| -> Vec<String> { graph.edges[&of(m)].iter().map(name).collect() };
    assert_eq!(
        edges("b"),
        ["a", "a/x"],
        "`Thing` through a's re-export is a/x's"
    );
    assert_eq!(edges("c"), ["b"], "test modules are left out");
    assert!(graph.circles().is_empty());
    std::fs::write(
        src.join("a/x.rs"),
        "use crate::b::Other;\npub struct Thing;\n",
    )
    .unwrap();
    let graph = read_crate(&src, "demo", &[]);
    assert_eq!(graph.circles(), vec![vec![of("a/x"), of("b")]]);
    std::fs::remove_dir_all(&dir).unwrap();
}
