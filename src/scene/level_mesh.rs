//! Level meshes in scenes: a collider's `TriMesh` (vertices and triangles) or `Heightfield` (a
//! grid of heights), given inline or in a file beside the scene, read into a checked
//! [`TriangleMesh`]. The cooked scene keeps every mesh's vertices and triangles, so the scene's
//! identity covers them whichever file they came from, and the collider names its mesh by id.
//!
//! ```json
//! "Collider": { "shape": { "TriMesh": { "vertices": [[0, 0, 0], [1, 0, 0], [0, 0, 1]],
//!                                       "indices": [[0, 2, 1]] } } }
//! "Collider": { "shape": { "Heightfield": { "rows": 3, "columns": 3, "cell_size": [1, 1],
//!                                           "heights": [0, 0, 0, 0, 1, 0, 0, 0, 0] } } }
//! "Collider": { "shape": { "TriMesh": { "file": "levels/cave.mesh.json" } } }
//! ```
//!
//! Every problem names the file (the scene, or the mesh file it references) and the JSON pointer
//! of the vertex, triangle or height at fault. This module must never spawn anything.

use std::path::{Path, PathBuf};

use bevy::math::{Vec2, Vec3};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::SceneError;
use crate::physics::geometry::mesh::{MeshError, TriangleMesh};

/// The largest mesh file read, in bytes.
pub const MAX_MESH_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// A mesh as a cooked scene keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CookedMesh {
    /// Its content id (what `Shape::Mesh` names).
    pub id: u64,
    /// Its vertices.
    pub vertices: Vec<Vec3>,
    /// Its triangles, as vertex indices.
    pub triangles: Vec<[u32; 3]>,
}

impl CookedMesh {
    /// The cooked form of `mesh`.
    pub fn of(mesh: &TriangleMesh) -> CookedMesh {
        CookedMesh {
            id: mesh.id(),
            vertices: mesh.vertices().to_vec(),
            triangles: mesh.triangles().to_vec(),
        }
    }

    /// The mesh again (checked again, as a cooked scene may come from a file).
    pub fn mesh(&self) -> Result<TriangleMesh, MeshError> {
        TriangleMesh::new(self.vertices.clone(), self.triangles.clone())
    }
}

/// Where a mesh's data is: its file and the pointer of its object there.
struct Source {
    file: PathBuf,
    pointer: String,
}

impl Source {
    fn bad(&self, at: &str, reason: impl Into<String>) -> SceneError {
        let pointer = format!("{}{at}", self.pointer);
        SceneError::BadValue {
            file: self.file.clone(),
            pointer: if pointer.is_empty() {
                "/".into()
            } else {
                pointer
            },
            reason: reason.into(),
        }
    }
}

/// Reads the mesh a `TriMesh` or `Heightfield` shape (`kind`) declares in `spec`, found at
/// `pointer` in the scene `scene_file`.
pub fn read_level_mesh(
    kind: &str,
    spec: &Value,
    scene_file: &Path,
    pointer: &str,
) -> Result<TriangleMesh, SceneError> {
    let here = Source {
        file: scene_file.to_owned(),
        pointer: pointer.to_owned(),
    };
    let object = spec
        .as_object()
        .ok_or_else(|| here.bad("", "expected an object"))?;
    let owned;
    let (data, source) = match object.get("file") {
        Some(file) => {
            if object.len() != 1 {
                return Err(here.bad("", "a mesh given by `file` has no other fields"));
            }
            let name = file
                .as_str()
                .ok_or_else(|| here.bad("/file", "expected a path"))?;
            let path = lexically_normal(&scene_file.parent().unwrap_or(Path::new("")).join(name));
            owned = read_json(&path)?;
            (
                &owned,
                Source {
                    file: path,
                    pointer: String::new(),
                },
            )
        }
        None => (spec, here),
    };
    match kind {
        "TriMesh" => tri_mesh(data, &source),
        _ => height_grid(data, &source),
    }
}

/// `path` with its `.` and `dir/..` parts taken out, without asking the file system (so
/// `scenes/../levels/a.json` is named `levels/a.json`).
pub fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn read_json(path: &Path) -> Result<Value, SceneError> {
    let io = |message: String| SceneError::Io {
        file: path.to_owned(),
        message,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| io(e.to_string()))?
        .len();
    if size > MAX_MESH_FILE_BYTES {
        return Err(io(format!(
            "the mesh file is {size} bytes, more than the {MAX_MESH_FILE_BYTES} allowed"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| io(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| SceneError::Json {
        file: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

fn fields<'v>(
    data: &'v Value,
    source: &Source,
    allowed: &[&str],
) -> Result<&'v serde_json::Map<String, Value>, SceneError> {
    let object = data
        .as_object()
        .ok_or_else(|| source.bad("", "expected an object"))?;
    if let Some(key) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(source.bad(
            &format!("/{key}"),
            format!(
                "unknown field `{key}` (expected one of {})",
                allowed.join(", ")
            ),
        ));
    }
    for key in allowed {
        if !object.contains_key(*key) {
            return Err(source.bad("", format!("missing field `{key}`")));
        }
    }
    Ok(object)
}

fn array<'v>(value: &'v Value, source: &Source, at: &str) -> Result<&'v Vec<Value>, SceneError> {
    value
        .as_array()
        .ok_or_else(|| source.bad(at, "expected an array"))
}

/// A finite `f32`.
fn number(value: &Value, source: &Source, at: &str) -> Result<f32, SceneError> {
    let n = value
        .as_f64()
        .ok_or_else(|| source.bad(at, "expected a number"))? as f32;
    if n.is_finite() {
        Ok(n)
    } else {
        Err(source.bad(at, "numbers must be finite (this one overflows f32)"))
    }
}

fn count(value: &Value, source: &Source, at: &str) -> Result<usize, SceneError> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| source.bad(at, "expected a whole number"))
}

fn tri_mesh(data: &Value, source: &Source) -> Result<TriangleMesh, SceneError> {
    let object = fields(data, source, &["vertices", "indices"])?;
    let mut vertices = Vec::new();
    for (i, vertex) in array(&object["vertices"], source, "/vertices")?
        .iter()
        .enumerate()
    {
        let at = format!("/vertices/{i}");
        let xyz = array(vertex, source, &at)?;
        if xyz.len() != 3 {
            return Err(source.bad(&at, "a vertex is [x, y, z]"));
        }
        let c = |k: usize| number(&xyz[k], source, &format!("{at}/{k}"));
        vertices.push(Vec3::new(c(0)?, c(1)?, c(2)?));
    }
    let mut triangles = Vec::new();
    for (i, triangle) in array(&object["indices"], source, "/indices")?
        .iter()
        .enumerate()
    {
        let at = format!("/indices/{i}");
        let corners = array(triangle, source, &at)?;
        if corners.len() != 3 {
            return Err(source.bad(&at, "a triangle is three vertex indices [a, b, c]"));
        }
        let mut t = [0u32; 3];
        for (k, corner) in corners.iter().enumerate() {
            t[k] = corner
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| source.bad(&format!("{at}/{k}"), "expected a vertex index"))?;
        }
        triangles.push(t);
    }
    TriangleMesh::new(vertices, triangles).map_err(|e| mesh_error(&e, source))
}

fn height_grid(data: &Value, source: &Source) -> Result<TriangleMesh, SceneError> {
    let object = fields(data, source, &["rows", "columns", "cell_size", "heights"])?;
    let rows = count(&object["rows"], source, "/rows")?;
    let columns = count(&object["columns"], source, "/columns")?;
    let cell = array(&object["cell_size"], source, "/cell_size")?;
    if cell.len() != 2 {
        return Err(source.bad("/cell_size", "the cell size is [x, z]"));
    }
    let cell = Vec2::new(
        number(&cell[0], source, "/cell_size/0")?,
        number(&cell[1], source, "/cell_size/1")?,
    );
    let heights = array(&object["heights"], source, "/heights")?
        .iter()
        .enumerate()
        .map(|(i, h)| number(h, source, &format!("/heights/{i}")))
        .collect::<Result<Vec<f32>, _>>()?;
    TriangleMesh::height_grid(rows, columns, cell, &heights).map_err(|e| mesh_error(&e, source))
}

/// A mesh error at the place of the vertex, triangle or height it names.
fn mesh_error(error: &MeshError, source: &Source) -> SceneError {
    let at = match error {
        MeshError::NonFinite { index } => format!("/vertices/{index}"),
        MeshError::IndexOutOfRange { triangle, .. } | MeshError::Degenerate { triangle } => {
            format!("/indices/{triangle}")
        }
        MeshError::Empty => "/indices".to_owned(),
        MeshError::TooLarge { what, .. } if *what == "vertices" => "/vertices".to_owned(),
        MeshError::TooLarge { .. } => "/indices".to_owned(),
        MeshError::GridSize { .. } => "/heights".to_owned(),
        MeshError::NonFiniteHeight { index } => format!("/heights/{index}"),
        _ => String::new(),
    };
    source.bad(&at, error.to_string())
}
