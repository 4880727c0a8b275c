//! `rusting new <dir>`: a new game project from the starter.
//!
//! Writes the starter's files (its `Cargo.toml`, `Cargo.lock` with the engine's dependency
//! versions, `rust-toolchain.toml` pinning the engine's Rust release, `rusting.json`, scene,
//! walkthrough script, sources) and a GitHub workflow that runs
//! `rusting determinism` on the project. The engine dependency is a path to this engine checkout,
//! or a crates.io version with `--engine-version`. It never writes into a directory that holds
//! anything.

use std::path::Path;

use crate::exit::{Failure, Outcome};

/// The starter's files, embedded when the CLI is built, as `(path, contents)`.
const STARTER: &[(&str, &str)] = &[
    (
        "rusting.json",
        include_str!("../templates/starter/rusting.json"),
    ),
    (
        "Cargo.lock",
        include_str!("../templates/starter/Cargo.lock"),
    ),
    (
        "rust-toolchain.toml",
        include_str!("../templates/starter/rust-toolchain.toml"),
    ),
    (
        "src/main.rs",
        include_str!("../templates/starter/src/main.rs"),
    ),
    (
        "src/game.rs",
        include_str!("../templates/starter/src/game.rs"),
    ),
    (
        "scenes/main.scene.json",
        include_str!("../templates/starter/scenes/main.scene.json"),
    ),
    (
        "input/walkthrough.json",
        include_str!("../templates/starter/input/walkthrough.json"),
    ),
];

/// The starter's manifest, whose engine dependency is rewritten for the new project.
const STARTER_MANIFEST: &str = include_str!("../templates/starter/Cargo.toml");

/// The CI workflow a new project gets.
const WORKFLOW: &str = r#"name: determinism
on:
  push:
  pull_request:
jobs:
  determinism:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@1.95.0
      - run: cargo install --locked --git https://github.com/rusting-engine/rusting rusting
      - run: rusting determinism . --ticks 600 --script input/walkthrough.json
"#;

/// Writes a new project into `dir`.
pub fn new_project(dir: &Path, engine_version: Option<&str>) -> Result<String, Failure> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(Failure::new(
                "DIRECTORY_NOT_EMPTY",
                Outcome::BadInput,
                format!(
                    "{}: exists and is not empty; choose a new directory",
                    dir.display()
                ),
            ));
        }
    }
    let engine_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let engine_path = std::fs::canonicalize(&engine_path).unwrap_or(engine_path);
    let dependency = match engine_version {
        Some(version) => format!("rusting_engine = \"{version}\""),
        None => format!(
            "rusting_engine = {{ path = {:?} }}",
            engine_path.to_string_lossy()
        ),
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().replace(['-', ' '], "_"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "game".into());
    let manifest = STARTER_MANIFEST
        .replace("rusting_engine = { path = \"../../../..\" }", &dependency)
        .replace("name = \"starter\"", &format!("name = \"{name}\""));
    let write = |relative: &str, contents: &str| -> Result<(), Failure> {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_failure(parent, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| io_failure(&path, e))
    };
    write("Cargo.toml", &manifest)?;
    for (relative, contents) in STARTER {
        let contents = if *relative == "rusting.json" {
            contents.replace("\"name\": \"starter\"", &format!("\"name\": \"{name}\""))
        } else if *relative == "Cargo.lock" {
            contents.replace("name = \"starter\"", &format!("name = \"{name}\""))
        } else {
            (*contents).to_owned()
        };
        write(relative, &contents)?;
    }
    write(".github/workflows/determinism.yml", WORKFLOW)?;
    write(".gitignore", "target/\ncooked/\n")?;
    Ok(format!(
        "created {} ({name}); try: cd {} && rusting determinism . --ticks 120 --script input/walkthrough.json",
        dir.display(),
        dir.display()
    ))
}

fn io_failure(path: &Path, error: std::io::Error) -> Failure {
    Failure::new(
        "WRITE_FAILED",
        Outcome::BuildOrRun,
        format!("{}: {error}", path.display()),
    )
}
