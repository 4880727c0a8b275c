//! Box against box: separating-axis test and a clipped manifold of up to four points.
//!
//! The 15 candidate axes (three face normals of each box and the nine cross products of their
//! edges) are tested; if any separates the boxes by more than the margin there is no contact.
//! Otherwise the axis of least penetration decides the contact type, with a small preference for
//! faces (they give stable multi-point manifolds):
//!
//! - a face axis: the face of the other box most opposed to it (the incident face) is clipped
//!   against the side planes of the reference face (Sutherland-Hodgman), and the clipped corners
//!   below the margin become the points, reduced to four (deepest, farthest from it, then the two
//!   that span the largest area);
//! - an edge axis: one point between the closest points of the two edges.
//!
//! Feature ids name the reference face, the incident face and the clipped edge or plane, so they
//! stay the same while the boxes rest on each other. This module must never allocate.

use bevy::math::Vec3;

use super::manifold::{ContactPoint, MAX_POINTS, Manifold, Placed, closest_between_segments};
use crate::physics::components::Shape;
use crate::runtime::sim_math::{cross, dot3};

/// A face axis of B replaces one of A only when it is better by this much (m), so two equal boxes
/// resting on each other keep the same reference face from tick to tick.
const FACE_B_TOLERANCE: f32 = 0.005;
/// The reference face's side planes are pushed out by this much (m), so an incident corner that
/// sits on the edge of the reference face stays a corner (and keeps its feature id) instead of
/// flickering between a corner and a clipped point as the boxes wobble.
const CLIP_TOLERANCE: f32 = 0.005;
/// An edge axis replaces the best face axis only when it is better by this much (m).
const EDGE_TOLERANCE: f32 = 0.005;
/// Edge pairs closer to parallel than this (sine of the angle) are left to the face axes.
const PARALLEL_SINE: f32 = 1.0e-3;

fn half(shape: Shape) -> [f32; 3] {
    match shape {
        Shape::Box { half_extents: h } => [h.x, h.y, h.z],
        _ => [0.0; 3],
    }
}

fn sign(x: f32) -> f32 {
    if x < 0.0 { -1.0 } else { 1.0 }
}

/// The contact points of box `a` against box `b`.
pub fn collide(a: &Placed, b: &Placed, margin: f32, out: &mut Manifold) {
    let (ha, hb) = (half(a.shape), half(b.shape));
    let t = b.position - a.position;
    let mut c = [[0.0f32; 3]; 3];
    let mut abs_c = [[0.0f32; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = dot3(a.axes[i], b.axes[j]);
            abs_c[i][j] = c[i][j].abs() + 1.0e-6;
        }
    }
    let ta = [dot3(t, a.axes[0]), dot3(t, a.axes[1]), dot3(t, a.axes[2])];
    let tb = [dot3(t, b.axes[0]), dot3(t, b.axes[1]), dot3(t, b.axes[2])];

    let mut face_a = (f32::NEG_INFINITY, 0);
    for i in 0..3 {
        let rb = (hb[0] * abs_c[i][0] + hb[1] * abs_c[i][1]) + hb[2] * abs_c[i][2];
        let separation = ta[i].abs() - (ha[i] + rb);
        if separation > margin {
            return;
        }
        if separation > face_a.0 {
            face_a = (separation, i);
        }
    }
    let mut face_b = (f32::NEG_INFINITY, 0);
    for j in 0..3 {
        let ra = (ha[0] * abs_c[0][j] + ha[1] * abs_c[1][j]) + ha[2] * abs_c[2][j];
        let separation = tb[j].abs() - (ra + hb[j]);
        if separation > margin {
            return;
        }
        if separation > face_b.0 {
            face_b = (separation, j);
        }
    }
    // Edge axes A_i x B_j, in A's frame through the rotation matrix C (Gottschalk's OBB test):
    // no cross product is formed until one wins.
    let mut edge = (f32::NEG_INFINITY, 0, 0, 1.0f32);
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let len = (1.0 - c[i][j] * c[i][j]).max(0.0).sqrt();
            if len < PARALLEL_SINE {
                continue;
            }
            let ra = ha[i1] * abs_c[i2][j] + ha[i2] * abs_c[i1][j];
            let rb = hb[j1] * abs_c[i][j2] + hb[j2] * abs_c[i][j1];
            let along = ta[i2] * c[i1][j] - ta[i1] * c[i2][j];
            let separation = (along.abs() - (ra + rb)) / len;
            if separation > margin {
                return;
            }
            if separation > edge.0 {
                edge = (separation, i, j, sign(along));
            }
        }
    }

    let use_b = face_b.0 > face_a.0 + FACE_B_TOLERANCE;
    let best_face = if use_b { face_b.0 } else { face_a.0 };
    if edge.0 > best_face + EDGE_TOLERANCE {
        let (i, j) = (edge.1, edge.2);
        let (n, _) = super::math::direction_or(cross(a.axes[i], b.axes[j]) * edge.3, t);
        edge_contact(a, &ha, b, &hb, i, j, n, out);
    } else if use_b {
        let j = face_b.1;
        let n = b.axes[j] * -sign(tb[j]);
        face_contact(b, &hb, j, a, &ha, n, margin, false, out);
    } else {
        let i = face_a.1;
        let n = a.axes[i] * sign(ta[i]);
        face_contact(a, &ha, i, b, &hb, n, margin, true, out);
    }
}

/// One vertex of the clipped polygon: position, feature id, and the origin of the edge that
/// starts at it (0-3: an incident-face edge, 4-7: a reference side plane).
type ClipVertex = (Vec3, u32, u32);

/// Contact points of the incident box against face `axis` of the reference box, whose outward
/// normal `n` points towards the incident box.
#[allow(clippy::too_many_arguments)]
fn face_contact(
    reference: &Placed,
    h_ref: &[f32; 3],
    axis: usize,
    incident: &Placed,
    h_inc: &[f32; 3],
    n: Vec3,
    margin: f32,
    reference_is_a: bool,
    out: &mut Manifold,
) {
    // The incident face: the one whose outward normal is most opposed to n.
    let alignment = [
        dot3(incident.axes[0], n),
        dot3(incident.axes[1], n),
        dot3(incident.axes[2], n),
    ];
    let j = if alignment[0].abs() >= alignment[1].abs() && alignment[0].abs() >= alignment[2].abs()
    {
        0
    } else if alignment[1].abs() >= alignment[2].abs() {
        1
    } else {
        2
    };
    let face_sign = -sign(alignment[j]);
    let centre = incident.position + incident.axes[j] * (face_sign * h_inc[j]);
    let (u, v) = ((j + 1) % 3, (j + 2) % 3);
    let eu = incident.axes[u] * h_inc[u];
    let ev = incident.axes[v] * h_inc[v];
    // The polygon is clipped from one buffer into the other, plane by plane.
    let mut first: [ClipVertex; 8] = [(Vec3::ZERO, 0, 0); 8];
    let mut second = first;
    first[0] = (centre + eu + ev, 0, 0);
    first[1] = (centre - eu + ev, 1, 1);
    first[2] = (centre - eu - ev, 2, 2);
    first[3] = (centre + eu - ev, 3, 3);
    let (mut polygon, mut spare) = (&mut first, &mut second);
    let mut len = 4;

    // The reference face's side planes: dot(axis, p) <= offset.
    let (ru, rv) = ((axis + 1) % 3, (axis + 2) % 3);
    let (reach_u, reach_v) = (h_ref[ru] + CLIP_TOLERANCE, h_ref[rv] + CLIP_TOLERANCE);
    let planes = [
        (
            reference.axes[ru],
            dot3(reference.axes[ru], reference.position) + reach_u,
        ),
        (
            -reference.axes[ru],
            -dot3(reference.axes[ru], reference.position) + reach_u,
        ),
        (
            reference.axes[rv],
            dot3(reference.axes[rv], reference.position) + reach_v,
        ),
        (
            -reference.axes[rv],
            -dot3(reference.axes[rv], reference.position) + reach_v,
        ),
    ];
    for (m, &(normal, offset)) in planes.iter().enumerate() {
        len = clip(&polygon[..len], spare, normal, offset, m as u32);
        std::mem::swap(&mut polygon, &mut spare);
        if len == 0 {
            return;
        }
    }

    let face_centre = reference.position + n * h_ref[axis];
    let face_id = |k: usize, s: f32| (k as u32) * 2 + (s > 0.0) as u32;
    let base = ((reference_is_a as u32) << 16)
        | (face_id(axis, dot3(n, reference.axes[axis])) << 12)
        | (face_id(j, face_sign) << 8);
    let normal = if reference_is_a { n } else { -n };
    let mut candidates = [ContactPoint::default(); 8];
    let mut count = 0;
    for &(p, id, _) in &polygon[..len] {
        let separation = dot3(p - face_centre, n);
        if separation <= margin {
            candidates[count] = ContactPoint {
                point: p - n * (0.5 * separation),
                normal,
                separation,
                feature: base | id,
            };
            count += 1;
        }
    }
    reduce(&candidates[..count], n, out);
}

/// Clips `input` to `dot(normal, p) <= offset` (plane number `plane`) into `polygon`; returns
/// how many vertices it holds.
fn clip(
    input: &[ClipVertex],
    polygon: &mut [ClipVertex; 8],
    normal: Vec3,
    offset: f32,
    plane: u32,
) -> usize {
    let len = input.len();
    let mut count = 0;
    let mut push = |vertex: ClipVertex, polygon: &mut [ClipVertex; 8]| {
        if count < 8 {
            polygon[count] = vertex;
            count += 1;
        }
    };
    for k in 0..len {
        let previous = input[(k + len - 1) % len];
        let current = input[k];
        let dp = dot3(normal, previous.0) - offset;
        let dc = dot3(normal, current.0) - offset;
        let crossing = || {
            let t = dp / (dp - dc);
            let point = previous.0 + (current.0 - previous.0) * t;
            (point, 4 + previous.2 * 4 + plane)
        };
        match (dp <= 0.0, dc <= 0.0) {
            (true, true) => push(current, polygon),
            (true, false) => {
                let (point, id) = crossing();
                push((point, id, 4 + plane), polygon);
            }
            (false, true) => {
                let (point, id) = crossing();
                push((point, id, previous.2), polygon);
                push(current, polygon);
            }
            (false, false) => {}
        }
    }
    count
}

/// Keeps at most four of `candidates`: the deepest, the one farthest from it, then the two that
/// span the largest area on either side of the line through those two.
fn reduce(candidates: &[ContactPoint], n: Vec3, out: &mut Manifold) {
    if candidates.len() <= MAX_POINTS {
        for &point in candidates {
            out.push(point);
        }
        return;
    }
    let mut first = 0;
    for (k, p) in candidates.iter().enumerate() {
        if p.separation < candidates[first].separation {
            first = k;
        }
    }
    let p1 = candidates[first].point;
    let mut second = if first == 0 { 1 } else { 0 };
    let mut farthest = -1.0f32;
    for (k, p) in candidates.iter().enumerate() {
        let d = p.point - p1;
        let distance = dot3(d, d);
        if k != first && distance > farthest {
            farthest = distance;
            second = k;
        }
    }
    let p2 = candidates[second].point;
    let area = |p: Vec3| dot3(cross(p2 - p1, p - p1), n);
    let (mut third, mut fourth) = (usize::MAX, usize::MAX);
    let (mut most, mut least) = (f32::NEG_INFINITY, f32::INFINITY);
    for (k, p) in candidates.iter().enumerate() {
        if k == first || k == second {
            continue;
        }
        let a = area(p.point);
        if a > most {
            most = a;
            third = k;
        }
        if a < least {
            least = a;
            fourth = k;
        }
    }
    for k in [first, second, third, fourth] {
        if k != usize::MAX && !(k == fourth && fourth == third) {
            out.push(candidates[k]);
        }
    }
}

/// One point between the closest points of edge `i` of `a` and edge `j` of `b`; `n` points from
/// `a` to `b`.
#[allow(clippy::too_many_arguments)]
fn edge_contact(
    a: &Placed,
    ha: &[f32; 3],
    b: &Placed,
    hb: &[f32; 3],
    i: usize,
    j: usize,
    n: Vec3,
    out: &mut Manifold,
) {
    let mut centre_a = a.position;
    let mut corner_a = 0u32;
    for k in (0..3).filter(|&k| k != i) {
        let s = sign(dot3(n, a.axes[k]));
        centre_a += a.axes[k] * (ha[k] * s);
        corner_a |= ((s > 0.0) as u32) << k;
    }
    let mut centre_b = b.position;
    let mut corner_b = 0u32;
    for k in (0..3).filter(|&k| k != j) {
        let s = -sign(dot3(n, b.axes[k]));
        centre_b += b.axes[k] * (hb[k] * s);
        corner_b |= ((s > 0.0) as u32) << k;
    }
    let (da, db) = (a.axes[i] * ha[i], b.axes[j] * hb[j]);
    let (on_a, on_b) =
        closest_between_segments(centre_a - da, centre_a + da, centre_b - db, centre_b + db);
    out.push(ContactPoint {
        point: (on_a + on_b) * 0.5,
        normal: n,
        separation: dot3(on_b - on_a, n),
        feature: (1 << 20) | ((i * 3 + j) as u32) << 8 | corner_a << 4 | corner_b,
    });
}

#[cfg(test)]
mod tests {
    use bevy::math::{Quat, Vec3};

    use super::*;
    use crate::runtime::sim_math;

    fn cube(position: Vec3, rotation: Quat) -> Placed {
        let m = sim_math::rotation_matrix(rotation);
        Placed {
            shape: Shape::Box {
                half_extents: Vec3::splat(0.5),
            },
            position,
            axes: [m.x_axis, m.y_axis, m.z_axis],
        }
    }

    #[test]
    fn a_box_resting_on_a_box_gets_four_points_on_the_overlap() {
        let a = cube(Vec3::ZERO, Quat::IDENTITY);
        let b = cube(Vec3::new(0.2, 0.99, 0.1), Quat::IDENTITY);
        let mut out = Manifold::default();
        collide(&a, &b, 0.02, &mut out);
        assert_eq!(out.len, 4);
        for p in out.points() {
            assert!((p.normal - Vec3::Y).length() < 1.0e-6);
            assert!((p.separation + 0.01).abs() < 1.0e-5, "{p:?}");
            assert!(
                p.point.x >= -0.3 - 1.0e-5 && p.point.x <= 0.5 + 0.005 + 1.0e-5,
                "{p:?}"
            );
            assert!(
                p.point.z >= -0.4 - 1.0e-5 && p.point.z <= 0.5 + 0.005 + 1.0e-5,
                "{p:?}"
            );
        }
        let mut features: Vec<u32> = out.points().iter().map(|p| p.feature).collect();
        features.dedup();
        assert_eq!(features.len(), 4, "feature ids must be distinct");
    }

    #[test]
    fn crossed_edges_touch_at_one_point() {
        let quarter = std::f32::consts::FRAC_PI_4;
        let a = cube(Vec3::ZERO, Quat::from_rotation_z(quarter));
        let reach = 0.5 * std::f32::consts::SQRT_2;
        let b = cube(
            Vec3::new(0.0, 2.0 * reach - 0.01, 0.0),
            Quat::from_rotation_x(quarter),
        );
        let mut out = Manifold::default();
        collide(&a, &b, 0.02, &mut out);
        assert_eq!(out.len, 1, "{:?}", out.points());
        let p = out.points()[0];
        assert!((p.normal - Vec3::Y).length() < 1.0e-4, "{p:?}");
        assert!((p.separation + 0.01).abs() < 1.0e-4, "{p:?}");
        assert!(
            (p.point - Vec3::new(0.0, reach - 0.005, 0.0)).length() < 1.0e-3,
            "{p:?}"
        );
    }

    #[test]
    fn boxes_apart_by_more_than_the_margin_do_not_touch() {
        let a = cube(Vec3::ZERO, Quat::IDENTITY);
        let b = cube(Vec3::new(0.0, 1.05, 0.0), Quat::from_rotation_y(0.3));
        let mut out = Manifold::default();
        collide(&a, &b, 0.02, &mut out);
        assert_eq!(out.len, 0);
    }
}
