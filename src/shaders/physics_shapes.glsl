// physics_shapes.glsl: contact tests between the GPU physics shapes.
//
// Shapes: SHAPE_SPHERE (params.x = radius), SHAPE_BOX (params = half extents), SHAPE_CAPSULE
// (params.x = half height along the local Y axis, params.y = radius) and SHAPE_HALF_SPACE
// (params = the plane's local normal; only CPU colliders are half-spaces). A pose is a rotation
// matrix (columns = the local axes in the world) and a centre.
//
// `shape_contact` answers for a GPU body A (sphere, box or capsule) against B (any shape): whether
// they overlap, the unit normal along which A must move to separate (pointing from B to A), the
// depth of the overlap, and the point the contact acts at (for the torque it gives). Spheres and capsules are both a segment with a radius (a sphere's
// segment is its centre); box-box uses the separating-axis test over the 15 axes and reports the
// axis of least overlap, preferring face axes; a sphere or capsule against a box pushes the
// segment's point nearest the box out of it. Everything is float math through sim_math.glsl, every
// value `precise`, and the same inputs always give the same bits.

#ifndef RUSTING_PHYSICS_SHAPES_GLSL
#define RUSTING_PHYSICS_SHAPES_GLSL

#include "sim_math.glsl"
#include "physics_layout.glsl"

// Cross axes shorter than this (squared, between unit axes) are parallel edges and skipped.
const float SHAPE_PARALLEL_EPSILON = 1.0e-6;
// An edge axis, or one of A's own face axes, wins over the best of B's face axes only when it
// overlaps less by this factor.
const float SHAPE_EDGE_BIAS = 0.95;
// Box corners up to this far outside the other shape along the normal still weigh in the contact
// point, their weight growing linearly with depth from zero here; without the band a box lying
// flat would move its contact point from edge to edge with the slightest tilt.
const float SHAPE_CORNER_BAND = 0.02;

vec3 shape_cross(vec3 a, vec3 b) {
    precise vec3 r = vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
    return r;
}

vec3 shape_scale(vec3 v, float s) {
    precise vec3 r = vec3(v.x * s, v.y * s, v.z * s);
    return r;
}

// The radius of the sphere around the centre that holds the whole shape.
float shape_bounding_radius(uint shape, vec3 params) {
    if (shape == SHAPE_SPHERE) {
        return params.x;
    }
    if (shape == SHAPE_BOX) {
        return sim_length(params);
    }
    precise float r = params.x + params.y;
    return r;
}

// Half the extent of the shape along the unit direction n.
float shape_support(uint shape, vec3 params, mat3 rotation, vec3 n) {
    if (shape == SHAPE_SPHERE) {
        return params.x;
    }
    if (shape == SHAPE_CAPSULE) {
        precise float along = abs(sim_dot(rotation[1], n));
        precise float r = along * params.x + params.y;
        return r;
    }
    precise float e0 = abs(sim_dot(rotation[0], n));
    precise float e1 = abs(sim_dot(rotation[1], n));
    precise float e2 = abs(sim_dot(rotation[2], n));
    precise float r = (e0 * params.x + e1 * params.y) + e2 * params.z;
    return r;
}

// The segment and radius of a sphere or capsule.
void shape_segment(uint shape, vec3 params, mat3 rotation, vec3 centre, out vec3 a, out vec3 b,
                   out float radius) {
    if (shape == SHAPE_SPHERE) {
        a = centre;
        b = centre;
        radius = params.x;
        return;
    }
    precise vec3 half_axis = shape_scale(rotation[1], params.x);
    precise vec3 top = centre + half_axis;
    precise vec3 bottom = centre - half_axis;
    a = bottom;
    b = top;
    radius = params.y;
}

// The point of segment [a, b] nearest p.
vec3 shape_closest_on_segment(vec3 a, vec3 b, vec3 p) {
    precise vec3 ab = b - a;
    precise float len2 = sim_dot(ab, ab);
    if (!(len2 > 0.0)) {
        return a;
    }
    precise vec3 ap = p - a;
    precise float along = sim_dot(ap, ab);
    precise float t = clamp(sim_div(along, len2), 0.0, 1.0);
    precise vec3 r = a + shape_scale(ab, t);
    return r;
}

// The nearest points of segments [p1, q1] and [p2, q2] (Ericson, Real-Time Collision Detection
// 5.1.9), written to c1 and c2.
void shape_closest_segments(vec3 p1, vec3 q1, vec3 p2, vec3 q2, out vec3 c1, out vec3 c2) {
    precise vec3 d1 = q1 - p1;
    precise vec3 d2 = q2 - p2;
    precise vec3 r = p1 - p2;
    precise float a = sim_dot(d1, d1);
    precise float e = sim_dot(d2, d2);
    precise float f = sim_dot(d2, r);
    precise float s = 0.0;
    precise float t = 0.0;
    if (!(a > 0.0) && !(e > 0.0)) {
        c1 = p1;
        c2 = p2;
        return;
    }
    if (!(a > 0.0)) {
        t = clamp(sim_div(f, e), 0.0, 1.0);
    } else {
        precise float c = sim_dot(d1, r);
        if (!(e > 0.0)) {
            precise float minus_c = -c;
            s = clamp(sim_div(minus_c, a), 0.0, 1.0);
        } else {
            precise float b = sim_dot(d1, d2);
            precise float denom = a * e - b * b;
            if (denom > 0.0) {
                precise float num = b * f - c * e;
                s = clamp(sim_div(num, denom), 0.0, 1.0);
            }
            precise float tnom = b * s + f;
            if (tnom < 0.0) {
                t = 0.0;
                precise float minus_c = -c;
                s = clamp(sim_div(minus_c, a), 0.0, 1.0);
            } else if (tnom > e) {
                t = 1.0;
                precise float bc = b - c;
                s = clamp(sim_div(bc, a), 0.0, 1.0);
            } else {
                t = sim_div(tnom, e);
            }
        }
    }
    precise vec3 r1 = p1 + shape_scale(d1, s);
    precise vec3 r2 = p2 + shape_scale(d2, t);
    c1 = r1;
    c2 = r2;
}

// The middle of the overlap of a ball (centre p, radius r) pushed out along normal by depth.
vec3 shape_ball_point(vec3 p, float r, vec3 normal, float depth) {
    precise float half_depth = depth * 0.5;
    precise float back = r - half_depth;
    precise vec3 q = p - shape_scale(normal, back);
    return q;
}

// Corner k (0..8) of a box: bits 0, 1, 2 of k pick the + side of the local x, y, z axis.
vec3 shape_corner(vec3 half_extents, mat3 rotation, vec3 centre, uint k) {
    precise vec3 local = vec3((k & 1u) != 0u ? half_extents.x : -half_extents.x,
                              (k & 2u) != 0u ? half_extents.y : -half_extents.y,
                              (k & 4u) != 0u ? half_extents.z : -half_extents.z);
    precise vec3 r = centre + sim_mat3_mul_vec3(rotation, local);
    return r;
}

// Two balls: A of radius ra at pa, B of radius rb at pb. Coincident centres separate along +Y.
bool shape_balls(vec3 pa, float ra, vec3 pb, float rb, out vec3 normal, out float depth,
                 out vec3 point) {
    precise vec3 d = pa - pb;
    precise float dist = sim_length(d);
    precise float reach = ra + rb;
    precise float overlap = reach - dist;
    normal = vec3(0.0, 1.0, 0.0);
    depth = 0.0;
    point = pa;
    if (!(overlap > 0.0)) {
        return false;
    }
    if (dist > 0.0) {
        precise float inv = sim_recip(dist);
        precise vec3 n = shape_scale(d, inv);
        normal = n;
    }
    depth = overlap;
    point = shape_ball_point(pa, ra, normal, overlap);
    return true;
}

// A ball (centre p, radius r) against a box; the normal pushes the ball out of the box.
bool shape_ball_box(vec3 p, float r, vec3 half_extents, mat3 rotation, vec3 centre,
                    out vec3 normal, out float depth, out vec3 point) {
    precise vec3 d = p - centre;
    precise vec3 local = vec3(sim_dot(d, rotation[0]), sim_dot(d, rotation[1]),
                              sim_dot(d, rotation[2]));
    precise vec3 clamped = clamp(local, -half_extents, half_extents);
    normal = vec3(0.0, 1.0, 0.0);
    depth = 0.0;
    point = p;
    if (clamped == local) {
        // The centre is inside: leave through the nearest face.
        precise vec3 gap = half_extents - abs(local);
        uint axis = 0u;
        precise float best = gap.x;
        if (gap.y < best) {
            axis = 1u;
            best = gap.y;
        }
        if (gap.z < best) {
            axis = 2u;
            best = gap.z;
        }
        precise float side = local[axis] < 0.0 ? -1.0 : 1.0;
        precise vec3 n = shape_scale(rotation[axis], side);
        precise float overlap = best + r;
        normal = n;
        depth = overlap;
        point = shape_ball_point(p, r, n, overlap);
        return true;
    }
    precise vec3 surface = centre + sim_mat3_mul_vec3(rotation, clamped);
    precise vec3 away = p - surface;
    precise float dist = sim_length(away);
    precise float overlap = r - dist;
    if (!(overlap > 0.0) || !(dist > 0.0)) {
        return false;
    }
    precise float inv = sim_recip(dist);
    precise vec3 n = shape_scale(away, inv);
    normal = n;
    depth = overlap;
    point = shape_ball_point(p, r, n, overlap);
    return true;
}

// The point of a box (in the world) nearest p.
vec3 shape_box_closest(vec3 p, vec3 half_extents, mat3 rotation, vec3 centre) {
    precise vec3 d = p - centre;
    precise vec3 local = vec3(sim_dot(d, rotation[0]), sim_dot(d, rotation[1]),
                              sim_dot(d, rotation[2]));
    precise vec3 clamped = clamp(local, -half_extents, half_extents);
    precise vec3 r = centre + sim_mat3_mul_vec3(rotation, clamped);
    return r;
}

// A sphere or capsule (segment [a, b], radius r) against a box: the segment point nearest the
// box (two alternations of nearest points) is pushed out as a ball.
bool shape_segment_box(vec3 a, vec3 b, float r, vec3 half_extents, mat3 rotation, vec3 centre,
                       out vec3 normal, out float depth, out vec3 point) {
    precise vec3 p = shape_closest_on_segment(a, b, centre);
    precise vec3 q = shape_box_closest(p, half_extents, rotation, centre);
    precise vec3 p2 = shape_closest_on_segment(a, b, q);
    return shape_ball_box(p2, r, half_extents, rotation, centre, normal, depth, point);
}

// Overlap of two boxes along the unit axis n; negative when n separates them.
float shape_box_overlap(vec3 n, vec3 d, vec3 ha, mat3 ra, vec3 hb, mat3 rb) {
    precise float ea = shape_support(SHAPE_BOX, ha, ra, n);
    precise float eb = shape_support(SHAPE_BOX, hb, rb, n);
    precise float dist = abs(sim_dot(d, n));
    precise float r = (ea + eb) - dist;
    return r;
}

// The point of a box pair's contact: each box's corners that are past (or within
// SHAPE_CORNER_BAND of) the other's face along the normal, moved to the nearest point of the other
// box (so a corner that overhangs counts where the faces still meet), weighted by how far past
// they are.
vec3 shape_box_pair_point(vec3 ha, mat3 ra, vec3 ca, vec3 hb, mat3 rb, vec3 cb, vec3 normal) {
    precise float face_b = sim_dot(cb, normal) + shape_support(SHAPE_BOX, hb, rb, normal);
    precise float face_a = sim_dot(ca, normal) - shape_support(SHAPE_BOX, ha, ra, normal);
    precise vec3 sum = vec3(0.0);
    precise float weight = 0.0;
    for (uint k = 0u; k < 8u; k++) {
        precise vec3 v = shape_corner(ha, ra, ca, k);
        precise float past_a = (face_b - sim_dot(v, normal)) + SHAPE_CORNER_BAND;
        if (past_a > 0.0) {
            precise vec3 held_a = shape_box_closest(v, hb, rb, cb);
            sum = sum + shape_scale(held_a, past_a);
            weight = weight + past_a;
        }
        precise vec3 w = shape_corner(hb, rb, cb, k);
        precise float past_b = (sim_dot(w, normal) - face_a) + SHAPE_CORNER_BAND;
        if (past_b > 0.0) {
            precise vec3 held_b = shape_box_closest(w, ha, ra, ca);
            sum = sum + shape_scale(held_b, past_b);
            weight = weight + past_b;
        }
    }
    if (weight > 0.0) {
        precise vec3 r = shape_scale(sum, sim_recip(weight));
        return r;
    }
    precise vec3 middle = shape_scale(ca + cb, 0.5);
    return middle;
}

// Two boxes, by the separating-axis test: the three face axes of each (B's first; A's win only
// when they overlap clearly less, so a box resting on another settles on the lower one's face),
// then the nine edge cross products (skipping parallel edges). The normal is the axis of least
// overlap, turned to point from B to A.
bool shape_boxes(vec3 ha, mat3 ra, vec3 ca, vec3 hb, mat3 rb, vec3 cb, out vec3 normal,
                 out float depth, out vec3 point) {
    precise vec3 d = ca - cb;
    normal = vec3(0.0, 1.0, 0.0);
    depth = 0.0;
    point = ca;
    precise vec3 best_axis = vec3(0.0, 1.0, 0.0);
    precise float best = 0.0;
    bool found = false;
    for (uint i = 0u; i < 6u; i++) {
        precise vec3 n = i < 3u ? rb[i] : ra[i - 3u];
        precise float overlap = shape_box_overlap(n, d, ha, ra, hb, rb);
        if (!(overlap > 0.0)) {
            return false;
        }
        precise float biased = best * SHAPE_EDGE_BIAS;
        bool wins = i < 3u ? (!found || overlap < best) : overlap < biased;
        if (wins) {
            found = true;
            best = overlap;
            best_axis = n;
        }
    }
    precise float face_best = best * SHAPE_EDGE_BIAS;
    for (uint i = 0u; i < 3u; i++) {
        for (uint j = 0u; j < 3u; j++) {
            precise vec3 c = shape_cross(ra[i], rb[j]);
            precise float len2 = sim_dot(c, c);
            if (!(len2 > SHAPE_PARALLEL_EPSILON)) {
                continue;
            }
            precise vec3 n = sim_normalize(c);
            precise float overlap = shape_box_overlap(n, d, ha, ra, hb, rb);
            if (!(overlap > 0.0)) {
                return false;
            }
            if (overlap < face_best && overlap < best) {
                best = overlap;
                best_axis = n;
            }
        }
    }
    precise float side = sim_dot(d, best_axis);
    precise vec3 n = side < 0.0 ? -best_axis : best_axis;
    normal = n;
    depth = best;
    point = shape_box_pair_point(ha, ra, ca, hb, rb, cb, n);
    return true;
}

// The point of a contact with a half-space: the middle of the overlap under a sphere; a box's
// corners and a capsule's end spheres' lowest points within SHAPE_CORNER_BAND of the plane or
// below it, weighted by their depth plus the band.
vec3 shape_half_space_point(uint shape, vec3 params, mat3 rotation, vec3 centre, vec3 plane,
                            vec3 origin, float extent, float overlap) {
    precise vec3 sum = vec3(0.0);
    precise float weight = 0.0;
    if (shape == SHAPE_BOX) {
        for (uint k = 0u; k < 8u; k++) {
            precise vec3 v = shape_corner(params, rotation, centre, k);
            precise float depth_v = SHAPE_CORNER_BAND - sim_dot(v - origin, plane);
            if (depth_v > 0.0) {
                sum = sum + shape_scale(v, depth_v);
                weight = weight + depth_v;
            }
        }
    } else if (shape == SHAPE_CAPSULE) {
        precise vec3 seg_a;
        precise vec3 seg_b;
        precise float radius;
        shape_segment(shape, params, rotation, centre, seg_a, seg_b, radius);
        for (uint e = 0u; e < 2u; e++) {
            precise vec3 end = e == 0u ? seg_a : seg_b;
            precise vec3 lowest = end - shape_scale(plane, radius);
            precise float depth_e = SHAPE_CORNER_BAND - sim_dot(lowest - origin, plane);
            if (depth_e > 0.0) {
                sum = sum + shape_scale(lowest, depth_e);
                weight = weight + depth_e;
            }
        }
    }
    if (weight > 0.0) {
        precise vec3 r = shape_scale(sum, sim_recip(weight));
        return r;
    }
    return shape_ball_point(centre, extent, plane, overlap);
}

// A shape against a half-space through `origin` with the world normal `plane`.
bool shape_half_space(uint shape, vec3 params, mat3 rotation, vec3 centre, vec3 plane,
                      vec3 origin, out vec3 normal, out float depth, out vec3 point) {
    precise vec3 offset = centre - origin;
    precise float height = sim_dot(offset, plane);
    precise float extent = shape_support(shape, params, rotation, plane);
    precise float overlap = extent - height;
    normal = plane;
    depth = 0.0;
    point = centre;
    if (!(overlap > 0.0)) {
        return false;
    }
    depth = overlap;
    point = shape_half_space_point(shape, params, rotation, centre, plane, origin, extent, overlap);
    return true;
}

// Whether GPU body A (sphere, box or capsule) overlaps B (any shape); the normal moves A out.
bool shape_contact(uint shape_a, vec3 params_a, mat3 rot_a, vec3 centre_a, uint shape_b,
                   vec3 params_b, mat3 rot_b, vec3 centre_b, out vec3 normal, out float depth,
                   out vec3 point) {
    normal = vec3(0.0, 1.0, 0.0);
    depth = 0.0;
    point = centre_a;
    if (shape_b == SHAPE_HALF_SPACE) {
        precise vec3 plane = sim_normalize(sim_mat3_mul_vec3(rot_b, params_b));
        return shape_half_space(shape_a, params_a, rot_a, centre_a, plane, centre_b, normal, depth,
                                point);
    }
    if (shape_a == SHAPE_BOX && shape_b == SHAPE_BOX) {
        return shape_boxes(params_a, rot_a, centre_a, params_b, rot_b, centre_b, normal, depth,
                           point);
    }
    precise vec3 a1;
    precise vec3 b1;
    precise float r1;
    if (shape_a == SHAPE_BOX || shape_b == SHAPE_BOX) {
        // One box and one sphere or capsule: the segment shape against the box, turned around
        // when A is the box.
        bool a_is_box = shape_a == SHAPE_BOX;
        uint round_shape = a_is_box ? shape_b : shape_a;
        precise vec3 round_params = a_is_box ? params_b : params_a;
        mat3 round_rot = a_is_box ? rot_b : rot_a;
        precise vec3 round_centre = a_is_box ? centre_b : centre_a;
        precise vec3 box_params = a_is_box ? params_a : params_b;
        mat3 box_rot = a_is_box ? rot_a : rot_b;
        precise vec3 box_centre = a_is_box ? centre_a : centre_b;
        shape_segment(round_shape, round_params, round_rot, round_centre, a1, b1, r1);
        precise vec3 n;
        bool hit = shape_segment_box(a1, b1, r1, box_params, box_rot, box_centre, n, depth, point);
        precise vec3 flipped = a_is_box ? -n : n;
        normal = flipped;
        return hit;
    }
    shape_segment(shape_a, params_a, rot_a, centre_a, a1, b1, r1);
    precise vec3 a2;
    precise vec3 b2;
    precise float r2;
    shape_segment(shape_b, params_b, rot_b, centre_b, a2, b2, r2);
    precise vec3 c1;
    precise vec3 c2;
    shape_closest_segments(a1, b1, a2, b2, c1, c2);
    return shape_balls(c1, r1, c2, r2, normal, depth, point);
}

#endif // RUSTING_PHYSICS_SHAPES_GLSL
