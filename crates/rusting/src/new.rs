//! `rusting new <dir>`: a new game project from the starter.
//!
//! Writes the starter's files (its `Cargo.toml`, `Cargo.lock` with the engine's dependency
//! versions, `rust-toolchain.toml` pinning the engine's Rust release, `rusting.json`, scene,
//! walkthrough script, sources) and a GitHub workflow that installs the `rusting` command from
//! the engine's git repository and runs `rusting determinism` on the project. The engine
//! dependency is one a fresh CI runner can fetch: the engine's public git repository (or another
//! with `--engine-git`), or a crates.io version with `--engine-version`; a path to an engine
//! checkout (`--engine-path`) is for working on the engine itself. Any directory name becomes a
//! valid crate name. It never writes into a directory that holds anything.

use std::path::Path;

use crate::exit::{Failure, Outcome};

/// The starter's files, embedded when the CLI is built, as `(path, contents)`.
///
/// They come from `starter/`, whose entries link to the working starter project in
/// `templates/starter/`: cargo leaves a directory holding a `Cargo.toml` out of a package, so
/// the published command carries the template through these links (its manifest and lock under
/// other names), and the two can never differ.
const STARTER: &[(&str, &str)] = &[
    ("rusting.json", include_str!("../starter/rusting.json")),
    ("Cargo.lock", include_str!("../starter/Cargo.lock.template")),
    (
        "rust-toolchain.toml",
        include_str!("../starter/rust-toolchain.toml"),
    ),
    ("src/main.rs", include_str!("../starter/src/main.rs")),
    ("src/game.rs", include_str!("../starter/src/game.rs")),
    (
        "scenes/main.scene.json",
        include_str!("../starter/scenes/main.scene.json"),
    ),
    (
        "input/walkthrough.json",
        include_str!("../starter/input/walkthrough.json"),
    ),
];

/// Line endings: the same bytes in every checkout, Windows included, so the project's scenes and
/// scripts are the same files on every machine of the workflow's matrix.
const GIT_ATTRIBUTES: &str = "* text=auto eol=lf\n*.png binary\n*.jpg binary\n*.rply binary\n";

/// The starter's manifest, whose engine dependency is rewritten for the new project.
const STARTER_MANIFEST: &str = include_str!("../starter/Cargo.toml.template");

/// The engine's public git repository: where a new project's engine and `rusting` come from.
pub const ENGINE_GIT: &str = "https://github.com/rusting-engine/rusting";

/// Where a new project's engine dependency comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A git repository (the default: [`ENGINE_GIT`]).
    Git(String),
    /// A crates.io version.
    Version(String),
    /// An engine checkout on this machine: for working on the engine, not for CI.
    Path(std::path::PathBuf),
}

/// The CI workflow a new project gets: on Linux x86-64 and ARM64, macOS ARM64 and Windows x86-64,
/// install `rusting` from `git`, check the project with `rusting determinism`, and keep a
/// state-hash report of its walkthrough; then compare every machine's report with
/// `rusting hashes diff`, failing on any difference.
fn workflow(git: &str) -> String {
    format!(
        r#"# The game's determinism on every machine of the matrix: `rusting determinism` on each, then
# each machine's state-hash report of the walkthrough compared with the others'. The final job
# fails on any difference, naming the first divergent tick, entity, component and field.
name: determinism
on:
  push:
  pull_request:
jobs:
  machine:
    strategy:
      fail-fast: false
      matrix:
        include:
          - {{ name: linux-x86-64, os: ubuntu-24.04 }}
          - {{ name: linux-arm64, os: ubuntu-24.04-arm }}
          - {{ name: macos-arm64, os: macos-15 }}
          - {{ name: windows-x86-64, os: windows-2025 }}
    name: ${{{{ matrix.name }}}}
    runs-on: ${{{{ matrix.os }}}}
    defaults:
      run:
        shell: bash
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@1.95.0
      - run: cargo install --locked --git {git} rusting
      - run: rusting determinism . --ticks 600 --script input/walkthrough.json
      # Written and uploaded even when the check above failed here, for the comparison.
      - if: ${{{{ !cancelled() }}}}
        run: mkdir -p reports && rusting run . --headless --ticks 600 --script input/walkthrough.json --hashes-out reports/game.json --detail-ticks 1-120
      - if: ${{{{ !cancelled() }}}}
        uses: actions/upload-artifact@v4
        with:
          name: reports-${{{{ matrix.name }}}}
          path: reports/
          if-no-files-found: error
  compare:
    needs: machine
    if: ${{{{ !cancelled() }}}}
    runs-on: ubuntu-24.04
    steps:
      - uses: dtolnay/rust-toolchain@1.95.0
      - run: cargo install --locked --git {git} rusting
      - uses: actions/download-artifact@v4
        with:
          pattern: reports-*
          path: reports
      # Every machine named: one that uploaded nothing fails the comparison too.
      - run: rusting hashes diff reports/reports-linux-x86-64 reports/reports-linux-arm64 reports/reports-macos-arm64 reports/reports-windows-x86-64
"#
    )
}

/// Rust keywords and names cargo keeps for itself: not usable as a package name.
const RESERVED: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "gen",
    "macro",
    "override",
    "priv",
    "try",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "alloc",
    "core",
    "std",
    "proc_macro",
    "test",
    "build",
    "deps",
    "examples",
    "incremental",
    "nul",
    "con",
    "aux",
    "prn",
];

/// A valid crate name for a project in a directory called `name`: letters, digits and `_` only
/// (anything else becomes `_`), lower case, starting with a letter, not a keyword or a name cargo
/// reserves, at most 64 characters.
pub fn crate_name(name: &str) -> String {
    let mut crate_name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    crate_name.truncate(64);
    let crate_name = crate_name.trim_matches('_').to_owned();
    if crate_name.is_empty() {
        return "game".to_owned();
    }
    let crate_name = if crate_name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("game_{crate_name}")
    } else {
        crate_name
    };
    if RESERVED.contains(&crate_name.as_str()) {
        format!("{crate_name}_game")
    } else {
        crate_name
    }
}

/// Writes a new project into `dir`, its engine from `engine`.
pub fn new_project(dir: &Path, engine: &Engine) -> Result<String, Failure> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(Failure::bad_input(
                "DIRECTORY_NOT_EMPTY",
                format!(
                    "{}: exists and is not empty; choose a new directory",
                    dir.display()
                ),
            ));
        }
    }
    let dependency = match engine {
        Engine::Git(url) => format!("rusting_engine = {{ git = {url:?} }}"),
        Engine::Version(version) => format!("rusting_engine = {version:?}"),
        Engine::Path(path) => {
            let path = std::fs::canonicalize(path).map_err(|e| {
                Failure::bad_input(
                    "PROJECT_INVALID",
                    format!("--engine-path {}: {e}", path.display()),
                )
            })?;
            if !path.join("Cargo.toml").is_file() {
                return Err(Failure::bad_input(
                    "PROJECT_INVALID",
                    format!(
                        "--engine-path {}: not an engine checkout (no Cargo.toml)",
                        path.display()
                    ),
                ));
            }
            format!("rusting_engine = {{ path = {:?} }}", path.to_string_lossy())
        }
    };
    let git = match engine {
        Engine::Git(url) => url.as_str(),
        _ => ENGINE_GIT,
    };
    let name = crate_name(
        &dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
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
    write(".github/workflows/determinism.yml", &workflow(git))?;
    write(".gitignore", "target/\ncooked/\nreports/\n")?;
    write(".gitattributes", GIT_ATTRIBUTES)?;
    Ok(format!(
        "created {} ({name}); play it: cd {} && rusting run . (check it: rusting determinism . --ticks 120 --script input/walkthrough.json)",
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

#[cfg(test)]
mod tests {
    use super::crate_name;

    /// Fails if a directory name can give a crate name cargo refuses.
    #[test]
    fn any_directory_name_gives_a_valid_crate_name() {
        for (dir, name) in [
            ("space-game", "space_game"),
            ("My Game!", "my_game"),
            ("2048", "game_2048"),
            ("fn", "fn_game"),
            ("test", "test_game"),
            ("été", "t"),
            ("---", "game"),
            ("", "game"),
            ("ünïcode wörld", "n_code_w_rld"),
        ] {
            assert_eq!(crate_name(dir), name, "{dir:?}");
        }
        let long = crate_name(&"a".repeat(300));
        assert_eq!(long.len(), 64);
    }
}
