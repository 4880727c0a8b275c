//! Every crate a game or a user installs packages cleanly, holds what it needs, and builds from
//! its `.crate` alone.
//!
//! `cargo package --workspace` packs the engine, its macros, the SPIR-V check, the lint and the
//! command, then builds each one from its unpacked `.crate` (the crates it depends on served from
//! the freshly packed ones), so a file a build needs but the package leaves out fails here and not
//! on a user's machine.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::shared_target;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(dir.join(&relative)).unwrap() {
            let entry = entry.unwrap();
            let path = relative.join(entry.file_name());
            if std::fs::metadata(entry.path()).unwrap().is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Asserts that `packaged` holds every file of `source` under `prefix`, byte for byte (names
/// mapped through `rename`).
fn holds_all(packaged: &Path, prefix: &str, source: &Path, rename: impl Fn(&Path) -> PathBuf) {
    for relative in files_under(source) {
        let inside = Path::new(prefix).join(rename(&relative));
        let bytes = std::fs::read(packaged.join(&inside)).unwrap_or_else(|e| {
            panic!(
                "{}: the package lacks {} ({e})",
                packaged.display(),
                inside.display()
            )
        });
        assert!(
            bytes == std::fs::read(source.join(&relative)).unwrap(),
            "{}: {} differs from {}",
            packaged.display(),
            inside.display(),
            source.join(&relative).display()
        );
    }
}

/// `cargo package --workspace` succeeds with verification (each crate built from its `.crate`
/// alone), warning only about the tests, benches and examples it leaves in the repository; each
/// package holds its sources, README and both licences; the engine's holds its shaders and the
/// committed SPIR-V beside its sources and no tests, docs or tools; and the command's holds the
/// whole starter template, the same bytes as the working project in `templates/starter`. Fails if
/// a crate's `include` list drops a file its build needs (the verify build fails), if a link under
/// `crates/rusting/starter` is missing or broken, if a licence or README is missing, or if an
/// internal dependency loses its exact version (the command then builds against another
/// publisher's `rusting_engine`).
#[test]
fn every_crate_packages() {
    let target = shared_target();
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["package", "--workspace", "--locked", "--allow-dirty"])
        // The verify builds use the workspace's dev settings (the engine's package keeps them;
        // the command's, a member's, has none), so they reuse the dependencies the workspace's
        // own builds compiled instead of compiling bevy and the rest again without optimisation.
        .args(["--config", "profile.dev.debug=\"line-tables-only\""])
        .args(["--config", "profile.dev.package.\"*\".opt-level=1"])
        .args(["--config", "profile.dev.package.\"*\".debug=false"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect("cargo package runs");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo package failed:\n{log}");
    let unexpected: Vec<&str> = log
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .filter(|line| !line.ends_with("is not included in the published package"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "cargo package warned:\n{}",
        unexpected.join("\n")
    );

    let version = env!("CARGO_PKG_VERSION");
    let root = root();
    for (name, dir) in [
        ("rusting_engine", root.clone()),
        ("rusting_macros", root.join("crates/rusting_macros")),
        ("rusting_spirv", root.join("crates/rusting_spirv")),
        ("rusting_lint", root.join("crates/rusting_lint")),
        ("rusting", root.join("crates/rusting")),
    ] {
        let packaged = target.join("package").join(format!("{name}-{version}"));
        assert!(
            target
                .join("package")
                .join(format!("{name}-{version}.crate"))
                .is_file(),
            "no .crate for {name}"
        );
        holds_all(&packaged, "src", &dir.join("src"), Path::to_path_buf);
        for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            let bytes = std::fs::read(packaged.join(file))
                .unwrap_or_else(|e| panic!("{name}: the package lacks {file} ({e})"));
            if file != "README.md" {
                assert_eq!(
                    bytes,
                    std::fs::read(root.join(file)).unwrap(),
                    "{name}: {file}"
                );
            }
        }
    }

    let engine = target.join(format!("package/rusting_engine-{version}"));
    assert!(engine.join("build.rs").is_file());
    let spirv = files_under(&engine.join("src/shaders/spirv"));
    assert!(spirv.len() >= 8, "the engine's committed SPIR-V: {spirv:?}");
    for left_out in [
        "tests", "benches", "examples", "docs", "tools", ".ci", ".github",
    ] {
        assert!(
            !engine.join(left_out).exists(),
            "the engine's package holds {left_out}/"
        );
    }

    let command = target.join(format!("package/rusting-{version}"));
    holds_all(
        &command,
        "starter",
        &root.join("crates/rusting/templates/starter"),
        |relative| match relative.to_str() {
            Some("Cargo.toml") => PathBuf::from("Cargo.toml.template"),
            Some("Cargo.lock") => PathBuf::from("Cargo.lock.template"),
            _ => relative.to_path_buf(),
        },
    );
    assert!(
        !command.join("tests").exists(),
        "the command's package holds its tests"
    );
}
