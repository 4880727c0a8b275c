//! What `rusting validate` reports: [`Finding`], its [`Severity`] and its [`Place`], printed as one
//! line (`file:line:col: error CODE: message`) or as a JSON object.
//!
//! Codes are stable strings listed in `docs/validate.md`; a code never changes meaning once
//! released and always has the same severity. This module owns the vocabulary and its rendering;
//! it must never decide what is a finding.

use serde_json::{Map, Value, json};

/// How bad a finding is: an error fails validation, a warning does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Reported; the project still validates.
    Warning,
    /// The project does not validate.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A scene entity a finding is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneEntity {
    /// JSON pointer of the entity in the scene source (`/entities/3`).
    pub pointer: String,
    /// Its `SceneId`.
    pub scene_id: u64,
    /// Its `Name` (may be empty).
    pub name: String,
}

impl From<&rusting_engine::runtime::PartUser> for SceneEntity {
    fn from(user: &rusting_engine::runtime::PartUser) -> Self {
        SceneEntity {
            pointer: user.pointer.clone(),
            scene_id: user.scene_id,
            name: user.name.clone(),
        }
    }
}

/// Where a finding is. Files are relative to the project directory, with `/` separators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A file as a whole (or a file that should exist).
    File {
        /// The file.
        file: String,
    },
    /// A line and column of a text file (source, shader, JSON syntax).
    Text {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// A value inside a scene, as a JSON pointer, and the entity it belongs to when there is one.
    Scene {
        /// The scene file.
        file: String,
        /// JSON pointer of the value.
        pointer: String,
        /// The entity.
        entity: Option<SceneEntity>,
    },
}

impl Place {
    /// The place of a scene entity, as the scene names it.
    pub fn entity(user: &rusting_engine::runtime::PartUser) -> Place {
        Place::Scene {
            file: user.scene.clone(),
            pointer: user.pointer.clone(),
            entity: Some(SceneEntity::from(user)),
        }
    }

    /// The place as printed at the start of a line: `file`, `file:line:column` or `file#pointer`.
    pub fn render(&self) -> String {
        match self {
            Place::File { file } => file.clone(),
            Place::Text { file, line, column } => format!("{file}:{line}:{column}"),
            Place::Scene { file, pointer, .. } => format!("{file}#{pointer}"),
        }
    }

    fn fields(&self, object: &mut Map<String, Value>) {
        match self {
            Place::File { file } => {
                object.insert("file".into(), json!(file));
            }
            Place::Text { file, line, column } => {
                object.insert("file".into(), json!(file));
                object.insert("line".into(), json!(line));
                object.insert("column".into(), json!(column));
            }
            Place::Scene {
                file,
                pointer,
                entity,
            } => {
                object.insert("file".into(), json!(file));
                object.insert("pointer".into(), json!(pointer));
                if let Some(entity) = entity {
                    object.insert("scene_id".into(), json!(entity.scene_id));
                    object.insert("name".into(), json!(entity.name));
                }
            }
        }
    }
}

/// One problem, at one place.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The stable code, e.g. `SCENE_BODIES_OVERLAP`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// Where it is.
    pub place: Place,
    /// A second scene entity the finding names (the other body of an overlap).
    pub other: Option<SceneEntity>,
    /// What is wrong.
    pub message: String,
}

impl Finding {
    /// An error at `place`.
    pub fn error(code: &'static str, place: Place, message: impl Into<String>) -> Self {
        Finding {
            code,
            severity: Severity::Error,
            place,
            other: None,
            message: message.into(),
        }
    }

    /// A warning at `place`.
    pub fn warning(code: &'static str, place: Place, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(code, place, message)
        }
    }

    /// One line: `place: severity CODE: message`.
    pub fn line(&self) -> String {
        format!(
            "{}: {} {}: {}",
            self.place.render(),
            self.severity.as_str(),
            self.code,
            self.message
        )
    }

    /// The finding as a JSON object: code, severity, message and the place's fields (`file`,
    /// `line`/`column` or `pointer`/`scene_id`/`name`, and `other` for a second entity).
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("code".into(), json!(self.code));
        object.insert("severity".into(), json!(self.severity.as_str()));
        self.place.fields(&mut object);
        if let Some(other) = &self.other {
            object.insert(
                "other".into(),
                json!({ "pointer": other.pointer, "scene_id": other.scene_id, "name": other.name }),
            );
        }
        object.insert("message".into(), json!(self.message));
        Value::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_render_their_place_first() {
        let source = Finding::error(
            "LINT_MUL_ADD",
            Place::Text {
                file: "src/game.rs".into(),
                line: 4,
                column: 9,
            },
            "`mul_add`",
        );
        assert_eq!(
            source.line(),
            "src/game.rs:4:9: error LINT_MUL_ADD: `mul_add`"
        );
        let scene = Finding::warning(
            "X",
            Place::Scene {
                file: "scenes/a.scene.json".into(),
                pointer: "/entities/2".into(),
                entity: Some(SceneEntity {
                    pointer: "/entities/2".into(),
                    scene_id: 7,
                    name: "Crate".into(),
                }),
            },
            "m",
        );
        assert_eq!(
            scene.line(),
            "scenes/a.scene.json#/entities/2: warning X: m"
        );
        let value = scene.to_json();
        assert_eq!(value["scene_id"], 7);
        assert_eq!(value["pointer"], "/entities/2");
        assert_eq!(value["severity"], "warning");
    }
}
