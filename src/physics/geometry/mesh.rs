//! [`TriangleMesh`]: a static level's triangles (from a mesh or a height grid), checked once, with
//! a bounding-volume hierarchy over them, and the questions the solver and the queries ask of it:
//! which triangles are near a box, the first triangle a ray or a swept shape meets.
//!
//! A mesh is a surface, not a solid: rays and shapes meet its triangles from either side, and no
//! point is inside it. Its identity is the XXH3-64 hash of its canonical bytes (vertex bits and
//! indices in order), so two scenes holding the same triangles hold the same mesh, and a cooked
//! scene's identity covers every vertex. All coordinates here are in the mesh's own frame.
//!
//! This module must never read the world.

use bevy::math::{Vec2, Vec3};

use super::bvh::{Bounds, Bvh};
use super::convex::{Convex, Core};
use super::gjk::{CastHit, cast};
use crate::runtime::sim_math::{cross, dot3};

/// Most vertices, and most triangles, one mesh may hold.
pub const MAX_MESH_ELEMENTS: usize = 4_000_000;

/// Why mesh data cannot make a mesh. Each names the vertex, triangle or cell it found wrong.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MeshError {
    /// No triangles at all.
    #[error("the mesh has no triangles")]
    Empty,
    /// More vertices or triangles than [`MAX_MESH_ELEMENTS`].
    #[error("the mesh has {count} {what}, more than the {MAX_MESH_ELEMENTS} allowed")]
    TooLarge {
        /// `vertices` or `triangles`.
        what: &'static str,
        /// How many it has.
        count: usize,
    },
    /// A vertex holds a NaN or an infinity.
    #[error("vertex {index} is not finite")]
    NonFinite {
        /// Its index.
        index: usize,
    },
    /// A triangle names a vertex the mesh does not have.
    #[error("triangle {triangle} names vertex {vertex}, but the mesh has {vertices} vertices")]
    IndexOutOfRange {
        /// The triangle's index.
        triangle: usize,
        /// The vertex index it names.
        vertex: u32,
        /// How many vertices there are.
        vertices: usize,
    },
    /// A triangle with no area (two corners the same, or all three on a line).
    #[error("triangle {triangle} is degenerate: its corners are on one line")]
    Degenerate {
        /// The triangle's index.
        triangle: usize,
    },
    /// A height grid whose heights do not fill it.
    #[error("the grid is {rows} by {columns}, so it needs {expected} heights, but it has {found}")]
    GridSize {
        /// Rows of the grid.
        rows: usize,
        /// Columns of the grid.
        columns: usize,
        /// `rows * columns`.
        expected: usize,
        /// Heights given.
        found: usize,
    },
    /// A height grid of fewer than two rows or columns, or whose cells are not positive.
    #[error("a height grid needs at least 2 rows and 2 columns and cells of positive size")]
    GridShape,
    /// A height holds a NaN or an infinity.
    #[error("height {index} is not finite")]
    NonFiniteHeight {
        /// Its index, row by row.
        index: usize,
    },
}

/// A static triangle mesh, checked, with its tree.
#[derive(Clone, Debug)]
pub struct TriangleMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    triangle_bounds: Vec<Bounds>,
    tree: Bvh,
    bounds: Bounds,
    id: u64,
}

impl PartialEq for TriangleMesh {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.vertices == other.vertices && self.triangles == other.triangles
    }
}

impl TriangleMesh {
    /// A mesh of `triangles` over `vertices`, after checking both.
    pub fn new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<TriangleMesh, MeshError> {
        if triangles.is_empty() {
            return Err(MeshError::Empty);
        }
        for (what, count) in [("vertices", vertices.len()), ("triangles", triangles.len())] {
            if count > MAX_MESH_ELEMENTS {
                return Err(MeshError::TooLarge { what, count });
            }
        }
        if let Some(index) = vertices.iter().position(|v| !v.is_finite()) {
            return Err(MeshError::NonFinite { index });
        }
        for (triangle, corners) in triangles.iter().enumerate() {
            if let Some(&vertex) = corners.iter().find(|&&i| i as usize >= vertices.len()) {
                return Err(MeshError::IndexOutOfRange {
                    triangle,
                    vertex,
                    vertices: vertices.len(),
                });
            }
            let [a, b, c] = corners.map(|i| vertices[i as usize]);
            let normal = cross(b - a, c - a);
            if dot3(normal, normal) <= 0.0 {
                return Err(MeshError::Degenerate { triangle });
            }
        }
        let triangle_bounds: Vec<Bounds> = triangles
            .iter()
            .map(|corners| {
                let [a, b, c] = corners.map(|i| vertices[i as usize]);
                Bounds {
                    min: a.min(b).min(c),
                    max: a.max(b).max(c),
                }
            })
            .collect();
        let bounds = triangle_bounds
            .iter()
            .fold(Bounds::EMPTY, |all, b| all.join(b));
        let tree = Bvh::build(&triangle_bounds);
        let id = content_id(&vertices, &triangles);
        Ok(TriangleMesh {
            vertices,
            triangles,
            triangle_bounds,
            tree,
            bounds,
            id,
        })
    }

    /// The mesh of a height grid: `rows` by `columns` heights, row by row, `cell` apart (along X
    /// between columns, along Z between rows), centred on the origin; two triangles a cell,
    /// facing up.
    pub fn height_grid(
        rows: usize,
        columns: usize,
        cell: Vec2,
        heights: &[f32],
    ) -> Result<TriangleMesh, MeshError> {
        if rows < 2 || columns < 2 || !(cell.x > 0.0 && cell.y > 0.0 && cell.is_finite()) {
            return Err(MeshError::GridShape);
        }
        let expected = rows.saturating_mul(columns);
        if heights.len() != expected {
            return Err(MeshError::GridSize {
                rows,
                columns,
                expected,
                found: heights.len(),
            });
        }
        if let Some(index) = heights.iter().position(|h| !h.is_finite()) {
            return Err(MeshError::NonFiniteHeight { index });
        }
        let (width, depth) = ((columns - 1) as f32 * cell.x, (rows - 1) as f32 * cell.y);
        let mut vertices = Vec::with_capacity(expected);
        for row in 0..rows {
            for column in 0..columns {
                vertices.push(Vec3::new(
                    column as f32 * cell.x - 0.5 * width,
                    heights[row * columns + column],
                    row as f32 * cell.y - 0.5 * depth,
                ));
            }
        }
        let mut triangles = Vec::with_capacity(2 * (rows - 1) * (columns - 1));
        for row in 0..rows - 1 {
            for column in 0..columns - 1 {
                let at = |r: usize, c: usize| (r * columns + c) as u32;
                let (a, b) = (at(row, column), at(row, column + 1));
                let (c, d) = (at(row + 1, column), at(row + 1, column + 1));
                // Counter-clockwise seen from above: normals point up (+Y).
                triangles.push([a, c, b]);
                triangles.push([b, c, d]);
            }
        }
        TriangleMesh::new(vertices, triangles)
    }

    /// The mesh's identity: XXH3-64 of its vertices' bits and its indices.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its vertices.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// Its triangles, as vertex indices.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The box around every triangle.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// Triangle `index`'s corners.
    pub fn triangle(&self, index: u32) -> [Vec3; 3] {
        self.triangles[index as usize].map(|i| self.vertices[i as usize])
    }

    /// The triangle's unit normal (by its winding: counter-clockwise seen from its front).
    pub fn normal(&self, index: u32) -> Vec3 {
        let [a, b, c] = self.triangle(index);
        crate::physics::cpu::math::direction_or(cross(b - a, c - a), Vec3::Y).0
    }

    /// Calls `visit` with every triangle whose box `probe` accepts, until it returns false.
    pub fn visit(&self, probe: impl FnMut(&Bounds) -> bool, visit: impl FnMut(u32) -> bool) {
        self.tree.visit(&self.triangle_bounds, probe, visit);
    }

    /// The triangles whose boxes meet `near`, in triangle order.
    pub fn triangles_near(&self, near: &Bounds, out: &mut Vec<u32>) {
        out.clear();
        self.visit(
            |b| b.overlaps(near),
            |t| {
                out.push(t);
                true
            },
        );
        out.sort_unstable();
    }

    /// The first triangle the ray from `origin` along unit `direction` meets within `max`, with
    /// its distance and the triangle's normal turned against the ray (ties to the lower
    /// triangle index).
    pub fn cast_ray(&self, origin: Vec3, direction: Vec3, max: f32) -> Option<(f32, Vec3, u32)> {
        let mut best: Option<(f32, u32)> = None;
        let reach = std::cell::Cell::new(max);
        self.visit(
            |b| {
                b.grown(Vec3::splat(1.0e-4))
                    .ray_entry(origin, direction, reach.get())
                    .is_some()
            },
            |t| {
                if let Some(d) = ray_triangle(origin, direction, self.triangle(t))
                    && d <= max
                    && best.is_none_or(|(bd, bt)| d < bd || (d == bd && t < bt))
                {
                    best = Some((d, t));
                    reach.set(d);
                }
                true
            },
        );
        best.map(|(d, t)| {
            let n = self.normal(t);
            let facing = if dot3(n, direction) > 0.0 { -n } else { n };
            (d, facing, t)
        })
    }

    /// Where `moving` (in the mesh's frame), swept along unit `direction` for at most `max`,
    /// first touches a triangle (ties to the lower triangle index).
    pub fn cast_shape(
        &self,
        moving: &Convex,
        centre: Vec3,
        direction: Vec3,
        max: f32,
    ) -> Option<CastHit> {
        let (low, high) = moving.bounds();
        let (middle, half) = ((low + high) * 0.5, (high - low) * 0.5 + Vec3::splat(1.0e-3));
        let mut best: Option<(CastHit, u32)> = None;
        let reach = std::cell::Cell::new(max);
        self.visit(
            |b| {
                b.grown(half)
                    .ray_entry(middle, direction, reach.get())
                    .is_some()
            },
            |t| {
                let triangle = Convex {
                    core: Core::Triangle(self.triangle(t)),
                    radius: 0.0,
                };
                if let Some(hit) = cast(moving, centre, direction, max, &triangle)
                    && best.is_none_or(|(b, bt)| {
                        hit.distance < b.distance || (hit.distance == b.distance && t < bt)
                    })
                {
                    reach.set(hit.distance);
                    best = Some((hit, t));
                }
                true
            },
        );
        best.map(|(hit, _)| hit)
    }

    /// Whether `shape` (in the mesh's frame) meets any triangle.
    pub fn overlaps(&self, shape: &Convex) -> bool {
        let (min, max) = shape.bounds();
        let near = Bounds { min, max }.grown(Vec3::splat(1.0e-3));
        let mut found = false;
        self.visit(
            |b| b.overlaps(&near),
            |t| {
                let triangle = Convex {
                    core: Core::Triangle(self.triangle(t)),
                    radius: 0.0,
                };
                found = super::gjk::overlap(shape, &triangle);
                !found
            },
        );
        found
    }
}

/// The distance along unit `d` from `o` at which the ray meets triangle `[a, b, c]` from either
/// side (Möller and Trumbore), or `None`.
pub fn ray_triangle(o: Vec3, d: Vec3, [a, b, c]: [Vec3; 3]) -> Option<f32> {
    let (e1, e2) = (b - a, c - a);
    let p = cross(d, e2);
    let det = dot3(e1, p);
    if det == 0.0 {
        return None; // parallel to the triangle's plane
    }
    let inverse = 1.0 / det;
    let s = o - a;
    let u = dot3(s, p) * inverse;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = cross(s, e1);
    let v = dot3(d, q) * inverse;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = dot3(e2, q) * inverse;
    (t >= 0.0).then_some(t)
}

/// The point of triangle `[a, b, c]` nearest `p` (Ericson, *Real-Time Collision Detection*,
/// 5.1.5), and whether it lies inside the face (not on an edge or a corner).
pub fn closest_on_triangle(p: Vec3, [a, b, c]: [Vec3; 3]) -> (Vec3, bool) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (dot3(ab, ap), dot3(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, false);
    }
    let bp = p - b;
    let (d3, d4) = (dot3(ab, bp), dot3(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, false);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return (a + ab * (d1 / (d1 - d3)), false);
    }
    let cp = p - c;
    let (d5, d6) = (dot3(ab, cp), dot3(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, false);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return (a + ac * (d2 / (d2 - d6)), false);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), false);
    }
    let sum = (va + vb) + vc;
    let (v, w) = (vb / sum, vc / sum);
    ((a + ab * v) + ac * w, true)
}

/// XXH3-64 over the vertex count, every vertex's bits, the triangle count and every index.
fn content_id(vertices: &[Vec3], triangles: &[[u32; 3]]) -> u64 {
    let mut bytes = Vec::with_capacity(16 + vertices.len() * 12 + triangles.len() * 12);
    bytes.extend_from_slice(&(vertices.len() as u64).to_le_bytes());
    for v in vertices {
        for c in [v.x, v.y, v.z] {
            bytes.extend_from_slice(&c.to_bits().to_le_bytes());
        }
    }
    bytes.extend_from_slice(&(triangles.len() as u64).to_le_bytes());
    for t in triangles {
        for i in t {
            bytes.extend_from_slice(&i.to_le_bytes());
        }
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a bad mesh or grid is accepted, or a good one refused.
    #[test]
    fn bad_mesh_data_is_refused_by_name() {
        let v = vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(2.0, 0.0, 0.0)];
        assert!(TriangleMesh::new(v.clone(), vec![[0, 2, 1]]).is_ok());
        assert_eq!(TriangleMesh::new(v.clone(), vec![]), Err(MeshError::Empty));
        assert_eq!(
            TriangleMesh::new(v.clone(), vec![[0, 2, 7]]),
            Err(MeshError::IndexOutOfRange {
                triangle: 0,
                vertex: 7,
                vertices: 4
            })
        );
        assert_eq!(
            TriangleMesh::new(v.clone(), vec![[0, 2, 1], [0, 1, 3]]),
            Err(MeshError::Degenerate { triangle: 1 })
        );
        let mut nan = v;
        nan[2].y = f32::NAN;
        assert_eq!(
            TriangleMesh::new(nan, vec![[0, 2, 1]]),
            Err(MeshError::NonFinite { index: 2 })
        );
        assert!(matches!(
            TriangleMesh::height_grid(3, 3, Vec2::ONE, &[0.0; 8]),
            Err(MeshError::GridSize {
                expected: 9,
                found: 8,
                ..
            })
        ));
        let grid = TriangleMesh::height_grid(3, 4, Vec2::new(1.0, 2.0), &[0.5; 12]).unwrap();
        assert_eq!(grid.triangles().len(), 12);
        assert_eq!(grid.normal(0), Vec3::Y);
        assert_eq!(grid.bounds().min, Vec3::new(-1.5, 0.5, -2.0));
    }

    /// Fails if a ray or a swept ball misses the grid it falls on, or meets it elsewhere.
    #[test]
    fn rays_and_shapes_meet_a_height_grid() {
        let grid = TriangleMesh::height_grid(11, 11, Vec2::ONE, &[1.0; 121]).unwrap();
        let (d, n, _) = grid
            .cast_ray(Vec3::new(0.3, 5.0, -0.2), Vec3::NEG_Y, 10.0)
            .unwrap();
        assert_eq!((d, n), (4.0, Vec3::Y));
        let ball = Convex {
            core: Core::Point(Vec3::new(1.3, 5.0, 2.2)),
            radius: 0.5,
        };
        let hit = grid
            .cast_shape(&ball, ball.any_point(), Vec3::NEG_Y, 10.0)
            .unwrap();
        assert!((hit.distance - 3.5).abs() < 2.0e-4, "{hit:?}");
        assert!(
            grid.cast_ray(Vec3::new(9.0, 5.0, 0.0), Vec3::NEG_Y, 10.0)
                .is_none()
        );
        assert!(closest_on_triangle(Vec3::new(-4.8, 3.0, -4.8), grid.triangle(0)).1);
    }
}
