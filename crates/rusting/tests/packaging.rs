//! Every crate a game or a user installs packages cleanly, holds what it needs, and builds from
//! its `.crate` alone; and a new project builds against the packed crates as it would against
//! their crates.io release.
//!
//! `cargo package --workspace` packs the engine, its macros, the SPIR-V check, the lint and the
//! command, then builds each one from its unpacked `.crate` (the crates it depends on served from
//! the freshly packed ones), so a file a build needs but the package leaves out fails here and not
//! on a user's machine. The packed crates are then served, with every other crate from this
//! machine's cargo caches, by a local registry standing in for crates.io.

mod local_registry;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use local_registry::{LocalRegistry, Packed, lock_packages, sha256};
use support::shared_target;

/// The published crates, by package name, with their directories in the workspace.
fn published() -> [(&'static str, PathBuf); 5] {
    let root = root();
    [
        ("rusting_game_engine", root.clone()),
        ("rusting_macros", root.join("crates/rusting_macros")),
        ("rusting_spirv", root.join("crates/rusting_spirv")),
        ("rusting_lint", root.join("crates/rusting_lint")),
        ("rusting-cli", root.join("crates/rusting")),
    ]
}

/// `cargo package --workspace` with verification, in the shared target directory, run once for
/// both tests of this file.
fn packed() -> &'static Output {
    static PACKED: OnceLock<Output> = OnceLock::new();
    PACKED.get_or_init(|| {
        forget_earlier_packing();
        Command::new(env!("CARGO"))
            .current_dir(root())
            .args(["package", "--workspace", "--locked", "--allow-dirty"])
            // The verify builds use the workspace's dev settings (the engine's package keeps
            // them; the command's, a member's, has none), so they reuse the dependencies the
            // workspace's own builds compiled instead of compiling bevy and the rest again
            // without optimisation.
            .args(["--config", "profile.dev.debug=\"line-tables-only\""])
            .args(["--config", "profile.dev.package.\"*\".opt-level=1"])
            .args(["--config", "profile.dev.package.\"*\".debug=false"])
            .arg("--target-dir")
            .arg(shared_target())
            .output()
            .expect("cargo package runs")
    })
}

/// Removes what an earlier `cargo package` of the same version left for the verify builds to
/// reuse, so they build the crates as they are now.
///
/// The verify builds take the workspace's own crates from a temporary registry in
/// `target/package/tmp-registry`. Cargo unpacks a registry crate into
/// `$CARGO_HOME/registry/src/<registry>/<name>-<version>` once and, finding it there again,
/// never unpacks it anew; and it takes a registry crate's build of the same version as
/// unchanged. The registry's folder is named after its path, the same on every run from the same
/// checkout, so without this the command would be verified against the engine as it was packed
/// the first time (seen: `no method named plotted_entity` for a method added since). A local
/// registry's unpack folder is the one whose name starts with `-` (it has no host); crates.io's
/// starts with `index.crates.io-` and is left alone.
fn forget_earlier_packing() {
    let version = env!("CARGO_PKG_VERSION");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
    if let Some(unpacked) = cargo_home.map(|home| home.join("registry/src"))
        && let Ok(registries) = std::fs::read_dir(unpacked)
    {
        for registry in registries.flatten() {
            if !registry.file_name().to_string_lossy().starts_with('-') {
                continue;
            }
            for (name, _) in published() {
                let _ = std::fs::remove_dir_all(registry.path().join(format!("{name}-{version}")));
            }
        }
    }
    // The builds from a local registry, named by the metadata hash that ends their dep-info
    // file's name (`deps/<crate>-<hash>.d`, listing the unpacked sources it read).
    let deps = shared_target().join("debug/deps");
    let mut hashes = Vec::new();
    for entry in std::fs::read_dir(&deps).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = file.strip_suffix(".d") else {
            continue;
        };
        let from_local_registry = std::fs::read_to_string(entry.path())
            .is_ok_and(|listing| listing.contains("/registry/src/-"));
        if from_local_registry && let Some((_, hash)) = stem.rsplit_once('-') {
            hashes.push(format!("-{hash}"));
        }
    }
    support::forget_builds(&shared_target(), &["debug"], |name| {
        hashes
            .iter()
            .any(|hash| name.ends_with(hash.as_str()) || name.contains(&format!("{hash}.")))
    });
}

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
    let out = packed();
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
    for (name, dir) in published() {
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

    let engine = target.join(format!("package/rusting_game_engine-{version}"));
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

    let command = target.join(format!("package/rusting-cli-{version}"));
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
    // `cargo install rusting-cli --locked`, as a new project's workflow runs it, installs with
    // the lock the command was tested with.
    assert!(
        command.join("Cargo.lock").is_file(),
        "the command's package holds no Cargo.lock"
    );
}

/// The engine as a new project gets it by default: `rusting new` with no engine option depends on
/// the crates.io release equal to the command's version, and its workflow installs the same
/// release of the command; with crates.io replaced by a local registry serving the packed crates
/// (and every other crate from this machine's caches, no network), the new project's lock is
/// complete before any build (the engine's checksums in it), and `rusting determinism` passes,
/// building the game from the packed engine with the lock `rusting new` wrote: every other
/// package stays at its locked version, and the engine's entries name crates.io with the packed
/// files' checksums. Fails if the default engine is the git repository or a path, if
/// the manifest names the engine's package or version wrongly (the build then fails to resolve in
/// the registry), if the written lock does not build against a release (seen failing with a
/// wrong checksum for the macros in it), or if a file the game's build needs is missing from the
/// packed engine.
#[test]
fn a_new_project_builds_against_the_packaged_engine() {
    let out = packed();
    assert!(
        out.status.success(),
        "cargo package failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version = env!("CARGO_PKG_VERSION");
    let root = std::env::temp_dir().join(format!("rusting-packaged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let crates: Vec<Packed> = published()
        .into_iter()
        .map(|(name, _)| Packed {
            name: name.to_owned(),
            version: version.to_owned(),
            file: shared_target().join(format!("package/{name}-{version}.crate")),
        })
        .collect();
    // The game builds in a target folder of its own, with a cargo home of its own, both at fixed
    // places in the shared target so a second run reuses the first one's dependencies. Cargo
    // judges a registry crate's build by where its source was unpacked, and a replaced source
    // unpacks elsewhere than crates.io: built in the shared folder, every dependency would be
    // rebuilt there, and again for every other test after it. The registry sits at a fixed place
    // too (its path names the unpack folder), rebuilt each run; the packed crates' unpacked
    // sources and builds are removed first, as cargo takes a registry crate of the same version
    // as unchanged.
    let own = shared_target().join("packaged-engine");
    let (target, cargo_home) = (own.join("target"), own.join("cargo-home"));
    let _ = std::fs::remove_dir_all(own.join("registry"));
    let _ = std::fs::remove_dir_all(cargo_home.join("registry/src"));
    support::forget_builds(&target, &["debug", "release"], |name| {
        name.starts_with("rusting") || name.starts_with("librusting")
    });
    let starter_lock = support::starter().join("Cargo.lock");
    let registry = LocalRegistry::build(
        &own.join("registry"),
        &root.join("unpacked"),
        &crates,
        &[&crate::root().join("Cargo.lock"), &starter_lock],
    );
    std::fs::create_dir_all(&cargo_home).unwrap();
    std::fs::write(
        cargo_home.join("config.toml"),
        format!("{}\n[net]\noffline = true\n", registry.config()),
    )
    .unwrap();
    let rusting = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rusting"))
            .args(args)
            .env("CARGO_HOME", &cargo_home)
            .env("CARGO_NET_OFFLINE", "true")
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .expect("the rusting binary runs")
    };

    let project = root.join("Packaged Game");
    let made = rusting(&["new", project.to_str().unwrap()]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!(
            "rusting_engine = {{ package = \"rusting_game_engine\", version = \"={version}\" }}"
        )),
        "{manifest}"
    );
    let file = project.join(".github/workflows/determinism.yml");
    let workflow = support::workflow(&file);
    let install = format!("cargo install rusting-cli --version {version} --locked");
    for job in ["machine", "compare"] {
        assert_eq!(
            support::workflow_runs(&workflow, job)[0],
            install,
            "{}",
            file.display()
        );
    }
    let written = std::fs::read_to_string(project.join("Cargo.lock")).unwrap();
    // The lock is complete before the first build (what `rusting validate` and `cargo build
    // --locked` ask): the engine's packages carry the packed files' checksums already.
    let crates_io = Some("registry+https://github.com/rust-lang/crates.io-index");
    for ours in &crates[..2] {
        assert!(
            lock_packages(&written).iter().any(|p| p.name == ours.name
                && p.source.as_deref() == crates_io
                && p.checksum == Some(sha256(&ours.file))),
            "rusting new left {} incomplete in its lock:\n{written}",
            ours.name
        );
    }

    let checked = rusting(&[
        "determinism",
        project.to_str().unwrap(),
        "--ticks",
        "120",
        "--script",
        project.join("input/walkthrough.json").to_str().unwrap(),
        "--target-dir",
        target.to_str().unwrap(),
    ]);
    let printed = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success() && printed.contains("agree on all 120 ticks"),
        "{printed}\n{}",
        String::from_utf8_lossy(&checked.stderr)
    );

    let built = lock_packages(&std::fs::read_to_string(project.join("Cargo.lock")).unwrap());
    for package in lock_packages(&written) {
        if package.name == "packaged_game" {
            continue;
        }
        let now = built
            .iter()
            .find(|p| p.name == package.name && p.version == package.version)
            .unwrap_or_else(|| panic!("the build dropped {} {}", package.name, package.version));
        if let Some(ours) = crates.iter().find(|c| c.name == package.name) {
            assert_eq!(now.source.as_deref(), crates_io, "{}", now.block);
            assert_eq!(now.checksum, Some(sha256(&ours.file)), "{}", now.block);
        } else {
            assert_eq!(now.block, package.block, "the build moved a locked package");
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}
