//! A Rusting project on disk: `rusting.json` next to a Cargo package, and its scenes.
//!
//! `rusting.json` names the project, its main scene, the determinism mode it requires, the seed and
//! the fixed tick rate:
//!
//! ```json
//! { "name": "starter", "main_scene": "scenes/main.scene.json",
//!   "determinism": "Local", "seed": 7, "fixed_rate_hz": 60 }
//! ```
//!
//! This module reads and checks that file; it must never write into the project.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runtime::{DeterminismMode, RuntimeSettings, json_file};

/// The project file's name.
pub const PROJECT_FILE: &str = "rusting.json";

/// The contents of `rusting.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectManifest {
    /// The project's name.
    pub name: String,
    /// The scene a run starts from, relative to the project directory.
    pub main_scene: PathBuf,
    /// The determinism the project requires (default `Local`).
    #[serde(default)]
    pub determinism: DeterminismMode,
    /// The simulation's random seed (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Fixed ticks per second (default 60).
    #[serde(default = "default_rate")]
    pub fixed_rate_hz: f32,
    /// Named actions and axes bound to keys (see `runtime::actions`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub input: crate::runtime::InputBindings,
}

fn is_default(bindings: &crate::runtime::InputBindings) -> bool {
    *bindings == crate::runtime::InputBindings::default()
}

fn default_rate() -> f32 {
    60.0
}

/// A project directory and its manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    /// The directory holding `rusting.json`.
    pub root: PathBuf,
    /// What `rusting.json` says.
    pub manifest: ProjectManifest,
}

/// Why a project cannot be opened.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProjectError {
    /// `rusting.json` could not be read.
    #[error("{file}: cannot read the project file: {message}", file = file.display())]
    Io {
        /// The project file.
        file: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// `rusting.json` is not valid JSON or has unknown or mistyped fields.
    #[error("{file}:{line}:{column}: {message}", file = file.display())]
    Json {
        /// The project file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A field has a value the engine cannot run with.
    #[error("{file}: `{field}`: {reason}", file = file.display())]
    BadValue {
        /// The project file.
        file: PathBuf,
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl Project {
    /// Opens the project in `root`.
    pub fn open(root: &Path) -> Result<Project, ProjectError> {
        let file = root.join(PROJECT_FILE);
        let manifest: ProjectManifest = json_file::read(&file).map_err(|e| {
            e.into(
                |message| ProjectError::Io {
                    file: file.clone(),
                    message,
                },
                |line, column, message| ProjectError::Json {
                    file: file.clone(),
                    line,
                    column,
                    message,
                },
            )
        })?;
        let bad = |field, reason: String| ProjectError::BadValue {
            file: file.clone(),
            field,
            reason,
        };
        if let Err(reason) = crate::runtime::time::check_tick_rate(manifest.fixed_rate_hz) {
            return Err(bad("fixed_rate_hz", reason));
        }
        if manifest.name.trim().is_empty() {
            return Err(bad("name", "cannot be empty".into()));
        }
        if manifest.main_scene.is_absolute()
            || manifest
                .main_scene
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(bad(
                "main_scene",
                format!(
                    "must be a path inside the project, not {}",
                    manifest.main_scene.display()
                ),
            ));
        }
        Ok(Project {
            root: root.to_owned(),
            manifest,
        })
    }

    /// The main scene's path.
    pub fn main_scene_path(&self) -> PathBuf {
        self.root.join(&self.manifest.main_scene)
    }

    /// The runtime settings the project asks for.
    pub fn runtime_settings(&self) -> RuntimeSettings {
        RuntimeSettings {
            fixed_rate_hz: self.manifest.fixed_rate_hz,
            seed: self.manifest.seed,
            mode: self.manifest.determinism,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with(text: &str) -> (tempdir::Dir, Result<Project, ProjectError>) {
        let dir = tempdir::Dir::new();
        std::fs::write(dir.path().join(PROJECT_FILE), text).unwrap();
        let result = Project::open(dir.path());
        (dir, result)
    }

    /// A throwaway directory under the system temp dir, removed on drop.
    mod tempdir {
        use std::path::{Path, PathBuf};
        use std::sync::atomic::{AtomicU32, Ordering};

        static NEXT: AtomicU32 = AtomicU32::new(0);

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn new() -> Self {
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                let path = std::env::temp_dir()
                    .join(format!("rusting-project-test-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&path).unwrap();
                Dir(path)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_project_file_gives_runtime_settings_with_defaults() {
        let (dir, project) =
            project_with(r#"{"name": "demo", "main_scene": "scenes/main.scene.json", "seed": 9}"#);
        let project = project.unwrap();
        assert_eq!(
            project.main_scene_path(),
            dir.path().join("scenes/main.scene.json")
        );
        let settings = project.runtime_settings();
        assert_eq!(settings.seed, 9);
        assert_eq!(settings.fixed_rate_hz, 60.0);
        assert_eq!(settings.mode, DeterminismMode::Local);
    }

    #[test]
    fn bad_project_files_name_the_file_and_field() {
        let (_dir, result) =
            project_with(r#"{"name": "x", "main_scene": "a.json", "fixed_rate_hz": 0}"#);
        assert!(matches!(
            result,
            Err(ProjectError::BadValue {
                field: "fixed_rate_hz",
                ..
            })
        ));
        let (_dir, result) = project_with(r#"{"name": "x", "main_scene": "../a.json"}"#);
        assert!(matches!(
            result,
            Err(ProjectError::BadValue {
                field: "main_scene",
                ..
            })
        ));
        let (_dir, result) =
            project_with(r#"{"name": "x", "main_scene": "a.json", "determinism": "Strict"}"#);
        let error = result.unwrap_err();
        assert!(
            matches!(error, ProjectError::Json { line: 1, .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("rusting.json:1:"), "{error}");
        let missing = Project::open(Path::new("/no/such/project")).unwrap_err();
        assert!(matches!(missing, ProjectError::Io { .. }));
    }
}
