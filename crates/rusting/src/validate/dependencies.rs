//! The dependency checks of `rusting validate`: `Cargo.lock` present and committed, and no
//! dependency feature that seeds hashing or randomness from the process or the build.
//!
//! Features come from `cargo metadata --locked` (offline first), which resolves the graph without
//! building anything and, with `--locked`, never writes the lock file. Only the game's runtime
//! graph counts: normal dependencies, not build or dev dependencies, and not the dependencies of
//! procedural macros, which run in the compiler.
//!
//! - `DEPENDENCY_PROCESS_SEED` (error): a crate in the runtime graph whose *default* hasher takes a
//!   seed from the process or the build, so code that never asks for randomness still changes from
//!   run to run or build to build: ahash's `runtime-rng` and `compile-time-rng`, hashbrown's
//!   `ahash-compile-time-rng`, and the `const-random` crate.
//! - `DEPENDENCY_PROCESS_RANDOMNESS` (warning): a direct dependency of the game that offers a
//!   generator seeded by the process (rand's `thread_rng`/`os_rng`/`sys_rng`/`getrandom`, uuid's
//!   `v4`, fastrand's `std`, getrandom itself). The game may use it for presentation; the source
//!   lint reports calls from fixed code. The same features enabled only for bevy or the engine are
//!   not reported: the game cannot call them without depending on the crate.
//!
//! This module runs `cargo` and `git` read-only; it must never write into the project.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::finding::{Finding, Place};

/// `(crate, feature)` pairs that seed a default hasher from the process or the build.
const SEEDED_HASHING: [(&str, &str); 3] = [
    ("ahash", "runtime-rng"),
    ("ahash", "compile-time-rng"),
    ("hashbrown", "ahash-compile-time-rng"),
];

/// Crates whose presence means random values chosen when the game is built.
const BUILD_RANDOM_CRATES: [&str; 1] = ["const-random"];

/// `(crate, feature)` pairs that offer a generator seeded by the process; `*` means the crate
/// itself.
const PROCESS_GENERATORS: [(&str, &str); 9] = [
    ("rand", "thread_rng"),
    ("rand", "os_rng"),
    ("rand", "sys_rng"),
    ("rand", "getrandom"),
    ("rand_core", "os_rng"),
    ("rand_core", "getrandom"),
    ("uuid", "v4"),
    ("fastrand", "std"),
    ("getrandom", "*"),
];

/// Runs `cargo metadata` in `dir` with `args`, offline first, then online if offline fails for
/// another reason than a stale lock file.
fn cargo_metadata(dir: &Path, args: &[&str]) -> Result<Value, String> {
    let mut last_error = String::new();
    for offline in [true, false] {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command
            .current_dir(dir)
            .args(["metadata", "--format-version", "1"])
            .args(args);
        if offline {
            command.arg("--offline");
        }
        let output = command
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if output.status.success() {
            return serde_json::from_slice(&output.stdout)
                .map_err(|e| format!("cargo metadata printed something that is not JSON: {e}"));
        }
        last_error = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if last_error.contains("--locked") {
            break;
        }
    }
    Err(last_error)
}

/// Cargo's error on one line: the error and its causes, without the `error: ` and `Caused by:`
/// labels, joined by `: `.
fn first_line(text: &str) -> String {
    let start = text
        .lines()
        .position(|l| l.starts_with("error"))
        .unwrap_or(0);
    text.lines()
        .skip(start)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && *l != "Caused by:")
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(": ")
}

/// `Cargo.lock` present and committed, then the features of the resolved graph.
pub fn check(root: &Path, findings: &mut Vec<Finding>) {
    let manifest = Place::File {
        file: "Cargo.toml".into(),
    };
    let shallow = match cargo_metadata(root, &["--no-deps"]) {
        Ok(value) => value,
        Err(error) => {
            findings.push(Finding::error(
                "DEPENDENCY_METADATA_FAILED",
                manifest,
                format!("cargo metadata failed: {}", first_line(&error)),
            ));
            return;
        }
    };
    let workspace_root = shallow["workspace_root"]
        .as_str()
        .map(Path::new)
        .unwrap_or(root);
    let lock = workspace_root.join("Cargo.lock");
    let lock_name = relative_name(root, &lock);
    let lock_place = Place::File {
        file: lock_name.clone(),
    };
    if !lock.is_file() {
        findings.push(Finding::error(
            "DEPENDENCY_LOCK_MISSING",
            lock_place,
            "no Cargo.lock: every build may resolve other dependency versions; run \
             `cargo generate-lockfile` and commit the file",
        ));
        return;
    }
    lock_committed(workspace_root, lock_place.clone(), findings);
    let metadata = match cargo_metadata(root, &["--locked"]) {
        Ok(value) => value,
        Err(error) if error.contains("--locked") => {
            findings.push(Finding::error(
                "DEPENDENCY_LOCK_STALE",
                lock_place,
                format!(
                    "Cargo.lock does not match Cargo.toml ({}); run `cargo update --workspace` and \
                     commit the file",
                    first_line(&error)
                ),
            ));
            return;
        }
        Err(error) => {
            findings.push(Finding::error(
                "DEPENDENCY_METADATA_FAILED",
                manifest,
                format!("cargo metadata failed: {}", first_line(&error)),
            ));
            return;
        }
    };
    features(root, &metadata, lock_place, findings);
}

/// `path` relative to `root` when it is inside it, with `/` separators.
fn relative_name(root: &Path, path: &Path) -> String {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let (root, path) = (canonical(root), canonical(path));
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// `DEPENDENCY_LOCK_UNCOMMITTED` when the workspace is a git repository that does not track
/// `Cargo.lock`; `DEPENDENCY_LOCK_UNVERIFIED` (warning) when it is not a git repository.
fn lock_committed(workspace_root: &Path, place: Place, findings: &mut Vec<Finding>) {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(workspace_root)
            .args(args)
            .output()
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"])
        .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"true"));
    if !inside {
        findings.push(Finding::warning(
            "DEPENDENCY_LOCK_UNVERIFIED",
            place,
            "the project is not in a git repository (or git is not installed), so whether \
             Cargo.lock is committed cannot be checked",
        ));
        return;
    }
    let tracked =
        git(&["ls-files", "--error-unmatch", "Cargo.lock"]).is_ok_and(|o| o.status.success());
    if !tracked {
        findings.push(Finding::error(
            "DEPENDENCY_LOCK_UNCOMMITTED",
            place,
            "Cargo.lock is not committed: a fresh checkout would resolve other dependency \
             versions; `git add Cargo.lock` and commit it",
        ));
    }
}

/// A package of the resolved graph.
struct Package<'a> {
    name: &'a str,
    version: &'a str,
    proc_macro: bool,
}

/// Feature findings over the game's runtime graph.
fn features(root: &Path, metadata: &Value, place: Place, findings: &mut Vec<Finding>) {
    let packages: BTreeMap<&str, Package> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let proc_macro = p["targets"].as_array().into_iter().flatten().any(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "proc-macro"))
            });
            Some((
                p["id"].as_str()?,
                Package {
                    name: p["name"].as_str()?,
                    version: p["version"].as_str().unwrap_or("?"),
                    proc_macro,
                },
            ))
        })
        .collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let Some(game) = game_package(root, metadata) else {
        return;
    };
    // Breadth-first over normal edges: each package with the path that first reached it.
    let mut reached: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    reached.insert(game, Vec::new());
    let mut queue = VecDeque::from([game]);
    while let Some(id) = queue.pop_front() {
        let Some(node) = nodes.get(id) else { continue };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null());
            let Some(dep_id) = dep["pkg"].as_str() else {
                continue;
            };
            if !normal || reached.contains_key(dep_id) {
                continue;
            }
            if packages.get(dep_id).is_some_and(|p| p.proc_macro) {
                continue;
            }
            let mut path = reached[id].clone();
            path.push(dep_id);
            reached.insert(dep_id, path);
            queue.push_back(dep_id);
        }
    }
    for (id, path) in &reached {
        let (Some(package), Some(node)) = (packages.get(id), nodes.get(id)) else {
            continue;
        };
        let enabled: Vec<&str> = node["features"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let through = std::iter::once(&game)
            .chain(path)
            .map(|p| packages.get(p).map_or(*p, |p| p.name))
            .collect::<Vec<_>>()
            .join(" -> ");
        let label = format!("`{} {}`", package.name, package.version);
        for (name, feature) in SEEDED_HASHING {
            if package.name == name && enabled.contains(&feature) {
                findings.push(Finding::error(
                    "DEPENDENCY_PROCESS_SEED",
                    place.clone(),
                    format!(
                        "{label} has feature `{feature}`, which seeds its default hasher from the \
                         process or the build (reached through {through}); disable it (for ahash: \
                         `default-features = false`)"
                    ),
                ));
            }
        }
        if BUILD_RANDOM_CRATES.contains(&package.name) {
            findings.push(Finding::error(
                "DEPENDENCY_PROCESS_SEED",
                place.clone(),
                format!(
                    "{label} chooses random values when the game is built (reached through \
                     {through}); builds of the same source would differ"
                ),
            ));
        }
        if path.len() == 1 {
            for (name, feature) in PROCESS_GENERATORS {
                if package.name == name && (feature == "*" || enabled.contains(&feature)) {
                    let what = if feature == "*" {
                        String::new()
                    } else {
                        format!(" with feature `{feature}`")
                    };
                    findings.push(Finding::warning(
                        "DEPENDENCY_PROCESS_RANDOMNESS",
                        Place::File {
                            file: "Cargo.toml".into(),
                        },
                        format!(
                            "the game depends on {label}{what}, which offers a generator seeded by \
                             the process; keep it out of simulation code (the source lint reports \
                             calls from fixed systems) and draw from `RandomSeed` there"
                        ),
                    ));
                }
            }
        }
    }
}

/// The id of the package whose manifest is `root/Cargo.toml`.
fn game_package<'a>(root: &Path, metadata: &'a Value) -> Option<&'a str> {
    let manifest = std::fs::canonicalize(root.join("Cargo.toml")).ok()?;
    metadata["packages"]
        .as_array()?
        .iter()
        .find(|p| {
            p["manifest_path"]
                .as_str()
                .and_then(|m| std::fs::canonicalize(m).ok())
                .is_some_and(|m| m == manifest)
        })
        .and_then(|p| p["id"].as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A resolved graph in `cargo metadata`'s format: `game` depends on `bevy` and `rand`; `bevy`
    /// on `ahash` and `uuid`; a proc macro and a build dependency on `const-random`.
    fn metadata(dir: &Path, ahash_features: &[&str]) -> Value {
        let manifest = dir.join("Cargo.toml").display().to_string();
        let package = |id: &str, proc_macro: bool| {
            json!({
                "id": id, "name": id, "version": "1.0.0",
                "manifest_path": if id == "game" { manifest.clone() } else { format!("/registry/{id}/Cargo.toml") },
                "targets": [{ "kind": [if proc_macro { "proc-macro" } else { "lib" }] }],
            })
        };
        let normal = |pkg: &str| json!({ "pkg": pkg, "dep_kinds": [{ "kind": null }] });
        let build = |pkg: &str| json!({ "pkg": pkg, "dep_kinds": [{ "kind": "build" }] });
        json!({
            "packages": [
                package("game", false), package("bevy", false), package("rand", false),
                package("ahash", false), package("uuid", false), package("derive", true),
                package("const-random", false),
            ],
            "resolve": { "root": "game", "nodes": [
                { "id": "game", "deps": [normal("bevy"), normal("rand"), normal("derive"), build("const-random")], "features": [] },
                { "id": "bevy", "deps": [normal("ahash"), normal("uuid")], "features": [] },
                { "id": "rand", "deps": [], "features": ["std", "thread_rng"] },
                { "id": "ahash", "deps": [], "features": ahash_features },
                { "id": "uuid", "deps": [], "features": ["v4"] },
                { "id": "derive", "deps": [normal("const-random")], "features": [] },
                { "id": "const-random", "deps": [], "features": [] },
            ]},
        })
    }

    #[test]
    fn seeded_hashing_anywhere_is_an_error_and_direct_generators_a_warning() {
        let dir = std::env::temp_dir().join(format!("rusting-deps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "").unwrap();
        let place = Place::File {
            file: "Cargo.lock".into(),
        };

        let mut findings = Vec::new();
        features(
            &dir,
            &metadata(&dir, &["std"]),
            place.clone(),
            &mut findings,
        );
        // rand's thread_rng is the game's own dependency: a warning. uuid's v4 reaches the game
        // only through bevy, and const-random only through a proc macro and a build dependency.
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].code, "DEPENDENCY_PROCESS_RANDOMNESS");
        assert!(
            findings[0]
                .message
                .contains("`rand 1.0.0` with feature `thread_rng`")
        );

        let mut findings = Vec::new();
        features(
            &dir,
            &metadata(&dir, &["std", "runtime-rng"]),
            place,
            &mut findings,
        );
        let seeded: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.code == "DEPENDENCY_PROCESS_SEED")
            .collect();
        assert_eq!(seeded.len(), 1, "{findings:?}");
        assert_eq!(seeded[0].severity, super::super::finding::Severity::Error);
        assert!(
            seeded[0]
                .message
                .contains("`ahash 1.0.0` has feature `runtime-rng`")
                && seeded[0].message.contains("game -> bevy -> ahash"),
            "{}",
            seeded[0].message
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
