//! The starter game's debug build reuses what building the `rusting` command compiled.
//!
//! The README's first command builds the command (`cargo run -p rusting-cli`), then the starter's
//! debug and release games in the same target folder. Cargo reuses a compiled dependency only
//! when its package, version, features and profile settings are all the same, so one feature
//! asked for on one side only (syn's `full` for a derive macro, say) makes serde, bevy and
//! everything above them compile twice. These checks keep the two graphs together.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every package of a dependency graph (normal and build dependencies, as they compile) with
/// the features it resolves with, one `name version|features` line each; path packages (the
/// workspace's own crates and the game) are left out, as cargo never shares them across
/// workspaces.
fn compiled_units(args: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["tree", "--locked", "-e", "normal,build", "--prefix", "none"])
        .args(["--no-dedupe", "-f", "{p}|{f}"])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|line| !line.is_empty() && !line.contains(" (/"))
        .map(str::to_owned)
        .collect()
}

/// The `key = value` lines of one profile section of a manifest, comments left out.
fn profile_section(manifest: &Path, header: &str) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut lines = text.lines().map(str::trim);
    assert!(
        lines.any(|line| line == header),
        "{} has no {header} section",
        manifest.display()
    );
    lines
        .take_while(|line| !line.starts_with('['))
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Every registry package the starter's headless game compiles, with its features, is one the
/// command already compiled. Fails if a crate of the engine or the starter asks a shared
/// dependency for a feature the command's graph lacks (the macros crate asking syn 3 without
/// `full`, or syn 2 where clap's derive uses syn 3, made the game rebuild about 100 crates).
#[test]
fn the_starter_compiles_nothing_the_command_did_not() {
    let command = compiled_units(&["-p", "rusting-cli"]);
    let starter = compiled_units(&[
        "--manifest-path",
        "crates/rusting/templates/starter/Cargo.toml",
        "--no-default-features",
    ]);
    let missing: Vec<_> = starter.difference(&command).collect();
    assert!(
        missing.is_empty(),
        "the starter's debug build compiles these anew (package|features):\n{missing:#?}"
    );
}

/// The starter builds its dependencies with the workspace's settings. Fails if the template's
/// `[profile.dev.package."*"]` differs from the workspace's (an `opt-level` on one side only
/// compiled every dependency a second time).
#[test]
fn the_starter_builds_dependencies_with_the_command_settings() {
    let header = r#"[profile.dev.package."*"]"#;
    let mut workspace = profile_section(&root().join("Cargo.toml"), header);
    let mut starter = profile_section(
        &root().join("crates/rusting/templates/starter/Cargo.toml"),
        header,
    );
    workspace.sort();
    starter.sort();
    assert_eq!(starter, workspace);
}
