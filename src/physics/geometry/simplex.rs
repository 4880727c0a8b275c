//! [`Simplex`]: GJK's working set of up to four points of a Minkowski difference, and the point of
//! their hull nearest a given point, found by Voronoi regions (Ericson, *Real-Time Collision
//! Detection*, 5.1.2 for segments, 5.1.5 for triangles, 5.1.6 for tetrahedra).
//!
//! Each region test is a fixed sequence of dot products; ties between regions go to the first in
//! the listed order, and a degenerate triangle or tetrahedron falls back to its edges or faces,
//! so the answer is the same on every machine and never a NaN. This module must never compute a
//! support point.

use bevy::math::Vec3;

use crate::runtime::sim_math::{cross, dot3};

/// A point of the Minkowski difference `B - A`, with the two support points that made it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vertex {
    /// `b - a`.
    pub w: Vec3,
    /// The point of shape A.
    pub a: Vec3,
    /// The point of shape B.
    pub b: Vec3,
}

/// Up to four vertices and, after [`Simplex::reduce`], the weights of the nearest point.
#[derive(Clone, Copy, Debug, Default)]
pub struct Simplex {
    vertices: [Vertex; 4],
    weights: [f32; 4],
    len: usize,
}

impl Simplex {
    /// How many vertices it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every vertex.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Whether `w` is already one of the vertices (GJK has stopped making progress).
    pub fn contains(&self, w: Vec3) -> bool {
        self.vertices[..self.len].iter().any(|v| v.w == w)
    }

    /// Adds a vertex (a full simplex must be reduced first).
    pub fn push(&mut self, vertex: Vertex) {
        debug_assert!(self.len < 4);
        self.vertices[self.len] = vertex;
        self.weights[self.len] = 0.0;
        self.len += 1;
    }

    /// Keeps only the vertices whose hull holds the point nearest `x`, weighted so that their
    /// combination is that point, and returns it. Four vertices remain only when `x` lies inside
    /// their tetrahedron.
    pub fn reduce(&mut self, x: Vec3) -> Vec3 {
        let p: [Vec3; 4] = std::array::from_fn(|i| self.vertices[i].w - x);
        let (kept, weights) = match self.len {
            1 => (Kept::of(&[0]), [1.0, 0.0, 0.0, 0.0]),
            2 => segment(&p, 0, 1),
            3 => triangle(&p, 0, 1, 2),
            _ => tetrahedron(&p),
        };
        let old = self.vertices;
        self.len = kept.len;
        for k in 0..kept.len {
            self.vertices[k] = old[kept.index[k]];
            self.weights[k] = weights[k];
        }
        self.combine(|v| v.w)
    }

    /// The weighted combination of a part of each vertex (`|v| v.a` gives the witness point on
    /// shape A).
    pub fn combine(&self, part: impl Fn(&Vertex) -> Vec3) -> Vec3 {
        let mut sum = part(&self.vertices[0]) * self.weights[0];
        for k in 1..self.len {
            sum += part(&self.vertices[k]) * self.weights[k];
        }
        sum
    }
}

/// Which vertices a region keeps, in order.
#[derive(Clone, Copy)]
struct Kept {
    index: [usize; 4],
    len: usize,
}

impl Kept {
    fn of(indices: &[usize]) -> Kept {
        let mut index = [0; 4];
        index[..indices.len()].copy_from_slice(indices);
        Kept {
            index,
            len: indices.len(),
        }
    }
}

type Region = (Kept, [f32; 4]);

/// The point of segment `p[i]..p[j]` nearest the origin.
fn segment(p: &[Vec3; 4], i: usize, j: usize) -> Region {
    let ab = p[j] - p[i];
    let t = -dot3(p[i], ab);
    if t <= 0.0 {
        return (Kept::of(&[i]), [1.0, 0.0, 0.0, 0.0]);
    }
    let denominator = dot3(ab, ab);
    if t >= denominator {
        return (Kept::of(&[j]), [1.0, 0.0, 0.0, 0.0]);
    }
    let v = t / denominator;
    (Kept::of(&[i, j]), [1.0 - v, v, 0.0, 0.0])
}

/// The point of triangle `p[i], p[j], p[k]` nearest the origin.
fn triangle(p: &[Vec3; 4], i: usize, j: usize, k: usize) -> Region {
    let (a, b, c) = (p[i], p[j], p[k]);
    let (ab, ac) = (b - a, c - a);
    let (d1, d2) = (-dot3(ab, a), -dot3(ac, a));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (Kept::of(&[i]), [1.0, 0.0, 0.0, 0.0]);
    }
    let (d3, d4) = (-dot3(ab, b), -dot3(ac, b));
    if d3 >= 0.0 && d4 <= d3 {
        return (Kept::of(&[j]), [1.0, 0.0, 0.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (Kept::of(&[i, j]), [1.0 - v, v, 0.0, 0.0]);
    }
    let (d5, d6) = (-dot3(ab, c), -dot3(ac, c));
    if d6 >= 0.0 && d5 <= d6 {
        return (Kept::of(&[k]), [1.0, 0.0, 0.0, 0.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (Kept::of(&[i, k]), [1.0 - w, w, 0.0, 0.0]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (Kept::of(&[j, k]), [1.0 - w, w, 0.0, 0.0]);
    }
    let sum = (va + vb) + vc;
    if sum.is_nan() || sum <= 0.0 {
        // A degenerate (flat) triangle: the nearest of its edges.
        return nearest(p, [segment(p, i, j), segment(p, i, k), segment(p, j, k)]);
    }
    let (v, w) = (vb / sum, vc / sum);
    (Kept::of(&[i, j, k]), [(1.0 - v) - w, v, w, 0.0])
}

/// The point of tetrahedron `p[0..4]` nearest the origin: the origin itself when it is inside,
/// else the nearest point of the faces it lies outside of.
fn tetrahedron(p: &[Vec3; 4]) -> Region {
    // Each face, with the vertex opposite it.
    const FACES: [([usize; 3], usize); 4] = [
        ([0, 1, 2], 3),
        ([0, 2, 3], 1),
        ([0, 3, 1], 2),
        ([1, 3, 2], 0),
    ];
    let mut best: Option<(f32, Region)> = None;
    for ([i, j, k], opposite) in FACES {
        let normal = cross(p[j] - p[i], p[k] - p[i]);
        let origin_side = -dot3(p[i], normal);
        let opposite_side = dot3(p[opposite] - p[i], normal);
        // Outside this face: the origin and the opposite vertex on different sides, or a flat
        // tetrahedron, whose faces are all tested.
        if opposite_side != 0.0 && origin_side * opposite_side >= 0.0 {
            continue;
        }
        let region = triangle(p, i, j, k);
        let distance = squared_length(point_of(p, &region));
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, region));
        }
    }
    match best {
        Some((_, region)) => region,
        None => {
            // Inside: the origin's barycentric coordinates, from the volumes it cuts off.
            let total = dot3(p[1] - p[0], cross(p[2] - p[0], p[3] - p[0]));
            let w0 = dot3(p[1], cross(p[2], p[3])) / total;
            let w1 = -dot3(p[0], cross(p[2] - p[0], p[3] - p[0])) / total;
            let w2 = -dot3(p[1] - p[0], cross(p[0], p[3] - p[0])) / total;
            (
                Kept::of(&[0, 1, 2, 3]),
                [w0, w1, w2, ((1.0 - w0) - w1) - w2],
            )
        }
    }
}

fn nearest(p: &[Vec3; 4], regions: [Region; 3]) -> Region {
    let mut best = regions[0];
    let mut best_distance = squared_length(point_of(p, &best));
    for region in &regions[1..] {
        let distance = squared_length(point_of(p, region));
        if distance < best_distance {
            (best, best_distance) = (*region, distance);
        }
    }
    best
}

fn point_of(p: &[Vec3; 4], (kept, weights): &Region) -> Vec3 {
    let mut sum = p[kept.index[0]] * weights[0];
    for k in 1..kept.len {
        sum += p[kept.index[k]] * weights[k];
    }
    sum
}

fn squared_length(v: Vec3) -> f32 {
    dot3(v, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vertex(w: Vec3) -> Vertex {
        Vertex {
            w,
            ..Vertex::default()
        }
    }

    /// Fails if a region test picks the wrong feature: a triangle's face, edge and vertex regions,
    /// and a tetrahedron holding the point.
    #[test]
    fn nearest_points_come_from_the_right_feature() {
        let mut s = Simplex::default();
        for w in [
            Vec3::new(-1.0, 1.0, -1.0),
            Vec3::new(1.0, 1.0, -1.0),
            Vec3::new(0.0, 1.0, 1.0),
        ] {
            s.push(vertex(w));
        }
        assert_eq!(s.reduce(Vec3::ZERO), Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(s.len(), 3);
        let mut edge = s;
        assert_eq!(
            edge.reduce(Vec3::new(0.0, 1.0, -5.0)),
            Vec3::new(0.0, 1.0, -1.0)
        );
        assert_eq!(edge.len(), 2);
        let mut corner = s;
        assert_eq!(
            corner.reduce(Vec3::new(5.0, 1.0, -5.0)),
            Vec3::new(1.0, 1.0, -1.0)
        );
        assert_eq!(corner.len(), 1);
        s.push(vertex(Vec3::new(0.0, -2.0, 0.0)));
        let mut inside = s;
        inside.reduce(Vec3::ZERO);
        assert_eq!(inside.len(), 4);
        let mut below = s;
        let point = below.reduce(Vec3::new(0.0, -5.0, 0.0));
        assert_eq!((point, below.len()), (Vec3::new(0.0, -2.0, 0.0), 1));
    }

    /// Fails if a flat triangle divides by zero instead of falling back to its edges.
    #[test]
    fn a_flat_triangle_falls_back_to_its_edges() {
        let mut s = Simplex::default();
        for w in [
            Vec3::new(-1.0, 1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        ] {
            s.push(vertex(w));
        }
        let point = s.reduce(Vec3::ZERO);
        assert!(point.is_finite());
        assert_eq!(point, Vec3::new(0.0, 1.0, 0.0));
    }
}
