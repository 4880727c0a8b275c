//! `rusting new <dir>`: a new game project from the starter.
//!
//! Writes the starter's files (its `Cargo.toml`, `Cargo.lock` with the engine's dependency
//! versions, `rust-toolchain.toml` pinning the engine's Rust release, `rusting.json`, scene,
//! walkthrough script, sources) and a GitHub workflow that installs the `rusting` command and runs
//! `rusting determinism` on the project. The engine dependency is one a fresh CI runner can
//! fetch: by default the crates.io release equal to this command's own version (the engine and
//! the command are released together), another release with `--engine-version`, or a git
//! repository with `--engine-git`; a path to an engine checkout (`--engine-path`) is for working
//! on the engine itself. Any directory name becomes a valid crate name. It never writes into a
//! directory that holds anything.

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

/// The engine's package name on crates.io. Its library keeps the name `rusting_engine`, and a
/// game names the dependency `rusting_engine` too (`package = ...` in its manifest), so games
/// write `use rusting_engine::...` and `rusting_engine/window` whichever source they build from.
/// `rusting_engine` on crates.io belongs to another publisher (docs/releasing.md).
pub const ENGINE_PACKAGE: &str = "rusting_game_engine";

/// The command's package name on crates.io; the binary it installs is `rusting`. `rusting` on
/// crates.io belongs to another project (docs/releasing.md).
pub const CLI_PACKAGE: &str = "rusting-cli";

/// The index that crates.io's packages name as their source in a `Cargo.lock`.
const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

/// Where a new project's engine dependency comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A git repository.
    Git(String),
    /// A crates.io release, pinned exactly (the default: this command's own version).
    Version(String),
    /// An engine checkout on this machine: for working on the engine, not for CI.
    Path(std::path::PathBuf),
}

impl Engine {
    /// The default: the crates.io release of the engine equal to this command's version.
    pub fn released() -> Engine {
        Engine::Version(env!("CARGO_PKG_VERSION").to_owned())
    }

    /// The CI workflow's step that installs `rusting` to match this engine: the same release from
    /// crates.io, or the same git repository. A project on an engine checkout gets this command's
    /// own release (a CI runner cannot reach a path on this machine).
    fn install_step(&self) -> String {
        match self {
            Engine::Git(url) => format!("cargo install --locked --git {url} {CLI_PACKAGE}"),
            Engine::Version(version) => {
                format!("cargo install {CLI_PACKAGE} --version {version} --locked")
            }
            Engine::Path(_) => Engine::released().install_step(),
        }
    }
}

/// Whether `version` is a plain semantic version (`1.2.3`, `0.2.0-beta.1`): what
/// `--engine-version` pins the engine and the workflow's `rusting` to.
pub fn parse_version(version: &str) -> Result<String, String> {
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    // A number has no leading zero (semantic versioning; cargo refuses `01.2.3`).
    let numeric = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    let pre_ok = pre.is_none_or(|pre| {
        !pre.is_empty()
            && pre.split('.').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && (!part.bytes().all(|b| b.is_ascii_digit()) || numeric(part))
            })
    });
    if numbers.len() == 3 && numbers.iter().all(|part| numeric(part)) && pre_ok {
        Ok(version.to_owned())
    } else {
        Err(format!(
            "`{version}` is not a release version such as {}: the engine and the workflow's `rusting` are pinned to one release",
            env!("CARGO_PKG_VERSION")
        ))
    }
}

/// The CI workflow a new project gets: on Linux x86-64 and ARM64, macOS ARM64 and Windows x86-64,
/// install `rusting` with `install` (the engine's release, or its git repository), check the
/// project with `rusting determinism`, and keep a state-hash report of its walkthrough; then
/// compare every machine's report with `rusting hashes diff`, failing on any difference.
fn workflow(install: &str) -> String {
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
      - run: {install}
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
      - run: {install}
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
        Engine::Git(url) => {
            format!("rusting_engine = {{ package = {ENGINE_PACKAGE:?}, git = {url:?} }}")
        }
        Engine::Version(version) => {
            format!("rusting_engine = {{ package = {ENGINE_PACKAGE:?}, version = \"={version}\" }}")
        }
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
            format!(
                "rusting_engine = {{ package = {ENGINE_PACKAGE:?}, path = {:?} }}",
                path.to_string_lossy()
            )
        }
    };
    let name = crate_name(
        &dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let manifest = STARTER_MANIFEST
        .replace(
            &format!("rusting_engine = {{ package = {ENGINE_PACKAGE:?}, path = \"../../../..\" }}"),
            &dependency,
        )
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
            lock_for(contents, &name, engine)
        } else {
            (*contents).to_owned()
        };
        write(relative, &contents)?;
    }
    write(
        ".github/workflows/determinism.yml",
        &workflow(&engine.install_step()),
    )?;
    write(".gitignore", "target/\ncooked/\nreports/\n")?;
    write(".gitattributes", GIT_ATTRIBUTES)?;
    complete_lock(dir);
    Ok(format!(
        "created {} ({name}); play it: cd {} && rusting run . (check it: rusting determinism . --ticks 120 --script input/walkthrough.json)",
        dir.display(),
        dir.display()
    ))
}

/// Completes the new project's lock without changing a locked version: `cargo update
/// --workspace` records the engine's checksums (a release) or commit (a git repository), so
/// `rusting validate` and `cargo build --locked` accept the project before its first build.
/// Offline first, from what this machine's cargo already holds; where that is not enough (the
/// window's crates are in the starter's lock, and installing `rusting` never read their index
/// entries), online. Where neither can (no network, a release not yet published), the lock stays
/// as written and the project's first build completes it (`rusting validate` says to run `cargo
/// update --workspace` until then). Run from where `rusting` was started, with
/// `--manifest-path`, so the project's pinned toolchain is not installed just for this.
fn complete_lock(dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let update = |offline: bool| {
        let mut command = std::process::Command::new(&cargo);
        command
            .args(["update", "--workspace", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if offline {
            command.arg("--offline");
        }
        command.status().is_ok_and(|status| status.success())
    };
    let _completed = update(true) || update(false);
}

/// The starter's lock for a project named `name` on `engine`: every dependency at the version
/// the engine was tested with. The engine's own packages (the engine and its macros, which the
/// template takes from the checkout) are marked as coming from crates.io for the release they
/// are (this command's), and left out for another release or a git repository; a path keeps
/// them as they are. [`complete_lock`] then adds what
/// only cargo knows (a release's checksums, a repository's commit).
fn lock_for(template: &str, name: &str, engine: &Engine) -> String {
    let renamed = template.replace("name = \"starter\"", &format!("name = \"{name}\""));
    if matches!(engine, Engine::Path(_)) {
        return renamed;
    }
    let mut out = String::with_capacity(renamed.len());
    for (index, block) in renamed.split("\n[[package]]\n").enumerate() {
        if index == 0 {
            out.push_str(block);
            continue;
        }
        let mut fields = block.lines();
        let package = fields
            .next()
            .and_then(|line| line.strip_prefix("name = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or_default();
        let from_checkout = !block.contains("\nsource = ");
        let ours = [ENGINE_PACKAGE, "rusting_macros"].contains(&package);
        out.push_str("\n[[package]]\n");
        match engine {
            Engine::Version(version)
                if from_checkout && ours && template_version(block) == version =>
            {
                let mut lines: Vec<&str> = block.lines().collect();
                let source = format!("source = \"{CRATES_IO}\"");
                lines.insert(2, &source);
                out.push_str(&lines.join("\n"));
                if block.ends_with('\n') {
                    out.push('\n');
                }
            }
            Engine::Git(_) | Engine::Version(_) if from_checkout && ours => {
                // Dropped: the block ends the previous one's blank line, which stays.
                out.truncate(out.len() - "\n[[package]]\n".len());
            }
            _ => out.push_str(block),
        }
    }
    out
}

/// The `version` of a lock block.
fn template_version(block: &str) -> &str {
    block
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_default()
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
    use super::{CRATES_IO, ENGINE_PACKAGE, Engine, crate_name, lock_for, parse_version};

    /// Fails if `--engine-version` takes a requirement (`^0.1`, `1.x`) where the engine and the
    /// workflow's command must be one release, or refuses a pre-release.
    #[test]
    fn an_engine_version_is_one_release() {
        for good in ["0.1.0", "12.0.3", "0.2.0-beta.1", "1.0.0-rc-2"] {
            assert_eq!(parse_version(good).as_deref(), Ok(good));
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.x.0",
            "^0.1.0",
            "=0.1.0",
            "0.1.0-",
            "0.1.0-a..b",
            "v1.0.0",
        ] {
            assert!(parse_version(bad).is_err(), "{bad:?}");
        }
    }

    /// The starter's lock for each engine source: the game renamed; for a release the engine's
    /// two packages marked as crates.io's and nothing else touched; for a git repository those
    /// two left out; for a path the template as it is. Fails if a block is lost or joined to its
    /// neighbour, or another package's source changes.
    #[test]
    fn the_lock_names_the_engine_source() {
        let template = include_str!("../starter/Cargo.lock.template");
        let count = |text: &str, what: &str| text.matches(what).count();
        let release = lock_for(template, "g", &Engine::released());
        let git = lock_for(template, "g", &Engine::Git("file:///e".into()));
        let path = lock_for(template, "g", &Engine::Path("/e".into()));
        let other = lock_for(template, "g", &Engine::Version("999.0.0".into()));
        assert_eq!(other, git, "another release: cargo adds its own entries");
        assert_eq!(path, template.replace("name = \"starter\"", "name = \"g\""));
        let blocks = count(template, "[[package]]");
        assert_eq!(count(&release, "[[package]]"), blocks);
        assert_eq!(count(&git, "[[package]]"), blocks - 2);
        let source = format!("source = \"{CRATES_IO}\"");
        assert_eq!(count(&release, &source), count(template, &source) + 2);
        for ours in [ENGINE_PACKAGE, "rusting_macros"] {
            let entry = format!(
                "[[package]]\nname = \"{ours}\"\nversion = \"{}\"\n{source}\n",
                env!("CARGO_PKG_VERSION")
            );
            assert!(release.contains(&entry), "{ours}");
            assert!(!git.contains(&format!("name = \"{ours}\"\n")), "{ours}");
        }
        assert_eq!(
            release.replace(&format!("{source}\n"), ""),
            path.replace(&format!("{source}\n"), "")
        );
        assert!(git.contains("\n\n[[package]]\nname = \"g\""));
        assert!(!git.contains("\n\n\n"));
    }

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
