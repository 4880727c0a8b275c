//! A crates.io stand-in on this machine: cargo's `local-registry` source, serving freshly packed
//! crates beside every crates.io package that some lock file names, taken from this machine's
//! cargo caches.
//!
//! A game's build resolves against it exactly as against crates.io (source replacement keeps
//! crates.io as the packages' source in the lock), so a test proves that a project depending on
//! the published engine builds, without a network. The index entries of crates.io's packages are
//! the ones cargo cached when it last read the index; their `.crate` files come from cargo's
//! download cache. A package built only on other platforms (Windows' API crates) is in every lock
//! but may never have been downloaded here; the registry then lists it and holds no file for it,
//! which is enough for resolving and building, as a build downloads only what the host compiles
//! (not for `cargo metadata` without `--filter-platform`, which reads every package). This module
//! only reads cargo's caches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The source that crates.io's packages name in a lock file.
const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

/// A local registry in a directory: `index/` in crates.io's layout, and `<name>-<version>.crate`
/// files beside it.
pub struct LocalRegistry {
    dir: PathBuf,
}

/// A packed crate to publish into the registry: its `.crate` file.
pub struct Packed {
    /// The package's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The `.crate` file `cargo package` wrote.
    pub file: PathBuf,
}

impl LocalRegistry {
    /// Builds a registry in `dir` (which must not exist) holding `packed` and every crates.io
    /// package at the version the `locks` name; the packed crates are unpacked in `scratch` to
    /// read their manifests (outside any cargo workspace: cargo refuses a package that lies under
    /// a workspace which does not list it). Panics, naming the package, if this machine's cargo
    /// never read a locked package's index entry.
    pub fn build(dir: &Path, scratch: &Path, packed: &[Packed], locks: &[&Path]) -> LocalRegistry {
        std::fs::create_dir_all(dir.join("index")).unwrap();
        let registry = LocalRegistry {
            dir: dir.to_owned(),
        };
        let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for lock in locks {
            for (name, version) in locked_from_crates_io(lock) {
                if !packed.iter().any(|p| p.name == name) {
                    wanted.entry(name).or_default().insert(version);
                }
            }
        }
        let caches = cargo_registry_dirs("index");
        let downloads = cargo_registry_dirs("cache");
        for (name, versions) in &wanted {
            // Every folder cargo has cached the index in (one per index hash it has used).
            let entries: Vec<(String, String)> = caches
                .iter()
                .map(|cache| cache.join(".cache").join(index_path(name)))
                .filter(|path| path.is_file())
                .flat_map(|path| cached_index_entries(&path))
                .collect();
            let mut lines = Vec::new();
            for version in versions {
                let entry = entries
                    .iter()
                    .find(|(v, _)| v == version)
                    .unwrap_or_else(|| {
                        panic!("no cached index entry for {name} {version} in {caches:?}")
                    });
                lines.push(entry.1.clone());
                let file = format!("{name}-{version}.crate");
                if let Some(download) = downloads
                    .iter()
                    .map(|d| d.join(&file))
                    .find(|p| p.is_file())
                {
                    link_or_copy(&download, &dir.join(&file));
                }
            }
            registry.write_index(name, &lines);
        }
        for crate_file in packed {
            let entry = index_entry_of_packed(crate_file, scratch);
            registry.write_index(&crate_file.name, &[entry]);
            std::fs::copy(
                &crate_file.file,
                dir.join(format!("{}-{}.crate", crate_file.name, crate_file.version)),
            )
            .unwrap();
        }
        registry
    }

    /// The cargo configuration that replaces crates.io with this registry.
    pub fn config(&self) -> String {
        format!(
            "[source.crates-io]\nreplace-with = \"packed-crates\"\n\n[source.packed-crates]\nlocal-registry = {:?}\n",
            self.dir.display().to_string()
        )
    }

    fn write_index(&self, name: &str, lines: &[String]) {
        let path = self.dir.join("index").join(index_path(name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(path, text).unwrap();
    }
}

/// The SHA-256 of `file`, in hex: what a lock's `checksum` and an index's `cksum` hold.
pub fn sha256(file: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(file)
        .output()
        .expect("sha256sum runs");
    assert!(out.status.success(), "sha256sum {}", file.display());
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// The `(name, version)` of every package of the lock file at `lock` that comes from crates.io.
pub fn locked_from_crates_io(lock: &Path) -> Vec<(String, String)> {
    lock_packages(&std::fs::read_to_string(lock).unwrap())
        .into_iter()
        .filter(|p| p.source.as_deref() == Some(CRATES_IO))
        .map(|p| (p.name, p.version))
        .collect()
}

/// One `[[package]]` of a lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPackage {
    pub name: String,
    pub version: String,
    pub source: Option<String>,
    pub checksum: Option<String>,
    /// The whole block as written, for comparing two locks.
    pub block: String,
}

/// The packages of a lock file's text (cargo writes one `key = "value"` a line).
pub fn lock_packages(text: &str) -> Vec<LockedPackage> {
    text.split("[[package]]\n")
        .skip(1)
        .map(|block| {
            let field = |key: &str| {
                block.lines().find_map(|line| {
                    line.strip_prefix(key)
                        .and_then(|rest| rest.strip_prefix(" = \""))
                        .and_then(|rest| rest.strip_suffix('"'))
                        .map(str::to_owned)
                })
            };
            LockedPackage {
                name: field("name").expect("a lock package has a name"),
                version: field("version").expect("a lock package has a version"),
                source: field("source"),
                checksum: field("checksum"),
                block: block.trim_end().to_owned(),
            }
        })
        .collect()
}

/// Cargo's folders for crates.io under `$CARGO_HOME/registry/<kind>` (`index` or `cache`): one
/// per index hash cargo has used here.
fn cargo_registry_dirs(kind: &str) -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME is set");
    let base = home.join("registry").join(kind);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap_or_else(|e| panic!("{}: {e}", base.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index.crates.io-"))
        })
        .collect();
    dirs.sort();
    dirs
}

/// Where crates.io's index keeps `name`: `1/a`, `2/ab`, `3/a/abc`, `ab/cd/abcd...`, lower case.
fn index_path(name: &str) -> PathBuf {
    let name = name.to_ascii_lowercase();
    match name.len() {
        1 => Path::new("1").join(&name),
        2 => Path::new("2").join(&name),
        3 => Path::new("3").join(&name[..1]).join(&name),
        _ => Path::new(&name[..2]).join(&name[2..4]).join(&name),
    }
}

/// The `(version, JSON line)` entries of a file of cargo's sparse-index cache: a version byte, a
/// 4-byte index format version, the index file's version tag and a NUL, then pairs of a version
/// and its JSON entry, each ended by a NUL.
fn cached_index_entries(path: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(path).unwrap();
    let mut fields = bytes
        .get(5..)
        .unwrap_or_else(|| panic!("{}: too short for cargo's index cache", path.display()))
        .split(|&b| b == 0);
    fields.next(); // the index file's version tag
    let fields: Vec<&[u8]> = fields.filter(|f| !f.is_empty()).collect();
    fields
        .chunks(2)
        .filter(|pair| pair.len() == 2)
        .map(|pair| {
            (
                String::from_utf8_lossy(pair[0]).into_owned(),
                String::from_utf8_lossy(pair[1]).into_owned(),
            )
        })
        .collect()
}

/// The index entry crates.io would list for a packed crate: its manifest's dependencies and
/// features as `cargo metadata` reads them from the unpacked `.crate` (under `scratch`), and the
/// file's checksum.
fn index_entry_of_packed(packed: &Packed, scratch: &Path) -> String {
    std::fs::create_dir_all(scratch).unwrap();
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&packed.file)
        .arg("-C")
        .arg(scratch)
        .status()
        .expect("tar runs");
    assert!(status.success(), "tar -xzf {}", packed.file.display());
    let manifest = scratch
        .join(format!("{}-{}", packed.name, packed.version))
        .join("Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata {}: {}",
        manifest.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = &metadata["packages"][0];
    let deps: Vec<serde_json::Value> = package["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|dep| {
            let mut entry = serde_json::json!({
                "name": dep["rename"].as_str().unwrap_or(dep["name"].as_str().unwrap()),
                "req": dep["req"],
                "features": dep["features"],
                "optional": dep["optional"],
                "default_features": dep["uses_default_features"],
                "target": dep["target"],
                "kind": dep["kind"].as_str().unwrap_or("normal"),
            });
            if dep["rename"].is_string() {
                entry["package"] = dep["name"].clone();
            }
            entry
        })
        .collect();
    serde_json::json!({
        "name": packed.name,
        "vers": packed.version,
        "deps": deps,
        "cksum": sha256(&packed.file),
        "features": package["features"],
        "yanked": false,
        "links": package["links"],
        "rust_version": package["rust_version"],
    })
    .to_string()
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}
