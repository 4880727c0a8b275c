//! Broad phase: which pairs of bodies are close enough to need the narrow phase.
//!
//! Sweep and prune: bounding boxes (grown by the speculative distance and by how far the body
//! moves this tick) are sorted by their minimum on the axis along which their centres spread
//! most, then swept; each box is compared only with the boxes that start before it ends. The
//! boxes are cut into strips across the second axis of spread first, and each strip is swept on
//! its own (in a large world, groups of strips on the pool's threads). Half-spaces
//! have no finite box and are tested against every other box directly. Whatever axis is picked,
//! the pairs come out as `(lower index, higher index)` sorted, which is body order (a long list is
//! sorted on the pool's threads; the pairs are distinct, so any sort gives the same order): the
//! axis changes the work, never the result.
//!
//! This module must never look at shapes beyond their bounds.

use bevy::math::Vec3;
use rayon::prelude::*;

use super::{SolverBody, StepParams};
use crate::physics::components::{BodyKind, Shape};
use crate::physics::geometry::bvh::turned_extent;
use crate::physics::level::LevelMeshes;
use crate::runtime::{guard_worker, sim_math};

/// An axis-aligned bounding box (the geometry layer's [`Bounds`]).
pub use crate::physics::geometry::bvh::Bounds as Aabb;

/// Broad-phase buffers and results.
#[derive(Default)]
pub struct BroadPhase {
    /// Candidate pairs `(i, j)` with `i < j`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// Bounds of each body, one slot per body: set for every body the sweep or a half-space
    /// looked at (with [`Scope::NearMovers`], a body at rest far from the movers has an empty
    /// box; a half-space's is never read).
    pub bounds: Vec<Aabb>,
    /// Bodies in the sweep, sorted by their minimum on the sweep axis.
    order: Vec<SweepEntry>,
    /// Indices of half-space bodies.
    half_spaces: Vec<u32>,
    /// Indices of every other body (the finite boxes the sweep sorts).
    finite: Vec<u32>,
    /// Indices of the bodies that move this tick (awake dynamic, or kinematic with a velocity).
    movers: Vec<u32>,
    /// Where each strip's entries start in `order`, and one past the last.
    strip_starts: Vec<usize>,
    /// The next free entry of each strip while filling.
    strip_fill: Vec<usize>,
    /// The axis the last sweep used (0, 1, 2).
    pub axis: usize,
    /// Box-box overlap tests the last sweep made.
    pub tests: usize,
    /// Where each group of strips starts (a strip index), and one past the last, when the sweep
    /// runs on several threads.
    group_starts: Vec<usize>,
    /// Each group's pairs and tests, when the sweep runs on several threads.
    group_pairs: Vec<GroupPairs>,
}

/// What one group of strips found, swept on its own thread.
#[derive(Default)]
struct GroupPairs {
    pairs: Vec<(u32, u32)>,
    tests: usize,
}

/// A box as the sweep sees it: its extent on the sweep axis and on the two others, kept together
/// so the scan reads memory in order.
#[derive(Clone, Copy, Debug, Default)]
struct SweepEntry {
    min: f32,
    max: f32,
    other_min: [f32; 2],
    other_max: [f32; 2],
    index: u32,
}

/// How two bodies may interact, by what they are doing.
fn wants_pair(a: &SolverBody, b: &SolverBody) -> bool {
    let class = |body: &SolverBody| match body.kind {
        BodyKind::Dynamic if body.sleeping => 1, // sleeping
        BodyKind::Dynamic => 0,                  // awake
        BodyKind::Kinematic => 2,
        BodyKind::Static => 3,
    };
    // Awake with anything; sleeping with sleeping (to wake stacks together) or with kinematic
    // (which may wake them). Nothing else can start moving.
    let pair_allowed = matches!(
        (class(a).min(class(b)), class(a).max(class(b))),
        (0, _) | (1, 1) | (1, 2)
    );
    pair_allowed && a.layers.interacts_with(&b.layers)
}

/// The bounds of a body's shape, grown by `margin` (a mesh missing from `meshes` has none).
pub fn shape_bounds(body: &SolverBody, margin: f32, meshes: &LevelMeshes) -> Aabb {
    let m = sim_math::rotation_matrix(body.rotation);
    let axes = [m.x_axis, m.y_axis, m.z_axis];
    if let Shape::Mesh { mesh } = body.collider.shape {
        return match meshes.get(mesh) {
            Some(mesh) => mesh
                .bounds()
                .placed(body.position, &axes)
                .grown(Vec3::splat(margin)),
            None => Aabb::EMPTY,
        };
    }
    let grow = shape_extent(&body.collider.shape, &axes) + Vec3::splat(margin);
    Aabb {
        min: body.position - grow,
        max: body.position + grow,
    }
}

/// How far a sphere, box or capsule turned to `axes` reaches from its centre along each world
/// axis (zero for a half-space or a mesh, whose bounds are not around their position).
pub fn shape_extent(shape: &Shape, axes: &[Vec3; 3]) -> Vec3 {
    match *shape {
        Shape::Sphere { radius } => Vec3::splat(radius),
        Shape::Box { half_extents } => turned_extent(axes, half_extents),
        Shape::Capsule {
            half_height,
            radius,
        } => Vec3::new(
            axes[1].x.abs() * half_height + radius,
            axes[1].y.abs() * half_height + radius,
            axes[1].z.abs() * half_height + radius,
        ),
        Shape::HalfSpace { .. } | Shape::Mesh { .. } => Vec3::ZERO,
    }
}

/// How far a body may move this tick, for growing its bounds.
fn reach(body: &SolverBody, dt: f32) -> f32 {
    if body.is_awake_dynamic() || body.kind == BodyKind::Kinematic {
        super::math::length(body.linear_velocity) * dt
    } else {
        0.0
    }
}

/// Which bodies a broad phase looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every body: every wanted pair, sleeping ones among themselves included.
    All,
    /// Only the bodies whose bounds reach the box around everything that moves (awake dynamic
    /// bodies and moving kinematic ones). Every pair with a moving body is found, exactly as
    /// [`Scope::All`] finds it; pairs of two bodies at rest far from anything moving are not,
    /// and those pairs give the narrow phase nothing to do. A scene at rest sweeps nothing.
    NearMovers,
}

/// Whether `bounds` has its minimum at or below its maximum on every axis (false with a NaN).
fn well_formed(bounds: &Aabb) -> bool {
    bounds.min.x <= bounds.max.x && bounds.min.y <= bounds.max.y && bounds.min.z <= bounds.max.z
}

/// Finds the candidate pairs of this tick into `broad.pairs`, looking at every body.
pub fn find_pairs(params: &StepParams, bodies: &[SolverBody], broad: &mut BroadPhase) {
    find_pairs_in(params, bodies, Scope::All, broad);
}

/// Finds the candidate pairs of this tick into `broad.pairs` among the bodies `scope` names.
///
/// With [`Scope::NearMovers`], the movers' bounds come first, and a body at rest gets its exact
/// bounds only when a box around it, wide enough for any turn of its shape, reaches the movers'
/// box ([`surely_apart`]): a heap asleep far from the one thing moving costs a comparison per body,
/// not a rotation. The pairs are exactly those of working out every body's bounds.
pub fn find_pairs_in(
    params: &StepParams,
    bodies: &[SolverBody],
    scope: Scope,
    broad: &mut BroadPhase,
) {
    let margin = params.settings.speculative_distance;
    broad.bounds.clear();
    broad.half_spaces.clear();
    broad.finite.clear();
    broad.pairs.clear();
    broad.movers.clear();
    let count = bodies.len() as u32;
    broad
        .movers
        .extend((0..count).filter(|&i| bodies[i as usize].moves()));
    if scope == Scope::NearMovers && broad.movers.is_empty() {
        // Nothing moves: no pair has anything to do this tick.
        return;
    }
    let grow_of = |body: &SolverBody| margin + reach(body, params.dt);
    let bounds_of = |body: &SolverBody| shape_bounds(body, grow_of(body), &params.meshes);
    // The bounds every body needs whatever the others do: all of them when every body is swept,
    // else the movers'. A slot left out is filled below if the body turns out to need it.
    let all = scope == Scope::All;
    broad.bounds.resize(bodies.len(), Aabb::EMPTY);
    if rayon::current_num_threads() > 1 && bodies.len() >= PARALLEL_ENTRIES {
        // Each body's bounds depend on that body alone, so which thread works one out changes no
        // bit.
        let guard = || guard_worker(|| "before the broad phase's bounds".to_owned());
        broad
            .bounds
            .par_iter_mut()
            .zip(bodies.par_iter())
            .for_each_init(guard, |_, (bounds, body)| {
                if all || body.moves() {
                    *bounds = bounds_of(body);
                }
            });
    } else if all {
        for (bounds, body) in broad.bounds.iter_mut().zip(bodies) {
            *bounds = bounds_of(body);
        }
    } else {
        for &i in &broad.movers {
            broad.bounds[i as usize] = bounds_of(&bodies[i as usize]);
        }
    }
    // The box around everything that moves, joined in body order. A mover whose box is not a
    // box (a negative size or a NaN from bad input) could pair with anything, so then every body
    // is swept.
    let mut scope = scope;
    let mut reach_of_movers = Aabb::EMPTY;
    for &i in &broad.movers {
        let body = &bodies[i as usize];
        if scope == Scope::NearMovers && !matches!(body.collider.shape, Shape::HalfSpace { .. }) {
            let bounds = &broad.bounds[i as usize];
            if well_formed(bounds) {
                reach_of_movers = reach_of_movers.join(bounds);
            } else {
                scope = Scope::All;
            }
        }
    }
    for (index, body) in bodies.iter().enumerate() {
        if matches!(body.collider.shape, Shape::HalfSpace { .. }) {
            broad.half_spaces.push(index as u32);
            continue;
        }
        if !(all || body.moves()) {
            // At rest, its bounds not yet worked out.
            if scope == Scope::NearMovers && surely_apart(body, grow_of(body), &reach_of_movers) {
                continue;
            }
            broad.bounds[index] = bounds_of(body);
        }
        let bounds = &broad.bounds[index];
        if scope == Scope::All
            || body.moves()
            || !well_formed(bounds)
            || bounds.overlaps(&reach_of_movers)
        {
            broad.finite.push(index as u32);
        }
    }
    sweep(bodies, broad);
    for &h in &broad.half_spaces {
        let plane = &bodies[h as usize];
        let Shape::HalfSpace { normal } = plane.collider.shape else {
            continue;
        };
        let n = sim_math::quat_rotate(plane.rotation, normal);
        // A fixed plane pairs only with awake bodies, which are among the movers; any other
        // plane is tested against every body.
        let fixed = plane.kind == BodyKind::Static;
        let movers = &broad.movers;
        let candidates = movers.iter().copied().filter(|_| fixed);
        for i in candidates.chain((0..count).filter(|_| !fixed)) {
            let body = &bodies[i as usize];
            if i == h
                || matches!(body.collider.shape, Shape::HalfSpace { .. })
                || !wants_pair(plane, body)
            {
                continue;
            }
            // A body at rest far from the movers has no bounds worked out this tick.
            let b = if all || body.moves() {
                broad.bounds[i as usize]
            } else {
                bounds_of(body)
            };
            let centre = (b.min + b.max) * 0.5;
            let half = (b.max - b.min) * 0.5;
            let lowest = sim_math::dot3(centre - plane.position, n)
                - ((half.x * n.x.abs() + half.y * n.y.abs()) + half.z * n.z.abs());
            if lowest <= 0.0 {
                broad.pairs.push((i.min(h), i.max(h)));
            }
        }
    }
    // The pairs are distinct, so every sort leaves them in the same order: a large list is
    // sorted on the pool's threads.
    if rayon::current_num_threads() > 1 && broad.pairs.len() >= PARALLEL_PAIRS {
        broad.pairs.par_sort_unstable();
    } else {
        broad.pairs.sort_unstable();
    }
}

/// Whether a body's bounds, grown by `grow`, surely miss `region`, found without turning its
/// shape: a box around its position as wide as the shape's half extents summed (no turn reaches
/// further along any world axis; 1% more covers the rounding and a rotation a little off unit
/// length) misses it. False whenever it cannot be sure (a mesh, a rotation far from unit length,
/// a negative, infinite or NaN size or position), and the exact bounds then decide. Rounding
/// keeps order, so the exact box lies inside the wide one, and missing the wide one means
/// missing with the exact one.
fn surely_apart(body: &SolverBody, grow: f32, region: &Aabb) -> bool {
    let reach = match body.collider.shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { half_extents: h } if h.x >= 0.0 && h.y >= 0.0 && h.z >= 0.0 => {
            (h.x + h.y) + h.z
        }
        Shape::Capsule {
            half_height,
            radius,
        } if half_height >= 0.0 && radius >= 0.0 => half_height + radius,
        _ => return false,
    };
    let q = body.rotation;
    let length2 = (q.x * q.x + q.y * q.y) + (q.z * q.z + q.w * q.w);
    if !(reach >= 0.0 && grow >= 0.0 && (0.999..=1.001).contains(&length2)) {
        return false;
    }
    let wide = Vec3::splat(reach * 1.01 + grow);
    let bounds = Aabb {
        min: body.position - wide,
        max: body.position + wide,
    };
    well_formed(&bounds)
        && bounds.min.is_finite()
        && bounds.max.is_finite()
        && !bounds.overlaps(region)
}

/// Most strips a sweep uses.
const MAX_STRIPS: usize = 4096;
/// Fewest sweep entries for which the strips are swept on several threads (below it, handing
/// the groups to the pool costs more than it saves).
const PARALLEL_ENTRIES: usize = 4096;

/// Fewest pairs sorted on the pool's threads.
const PARALLEL_PAIRS: usize = 2048;

/// Groups of strips per pool thread, so that a thread that finishes early takes another.
const GROUPS_PER_THREAD: usize = 4;

/// Sweep and prune over the finite boxes, in strips.
///
/// The boxes are also cut into strips across the second axis of greatest spread, each strip about
/// twice as wide as an average box, and each strip is swept on its own: a heap that lies wide on
/// the ground is swept as many narrow rows instead of one wide slab, so a box is compared with the
/// boxes near it rather than with every box at the same height. A box is entered in every strip it
/// reaches, and a pair found in two strips is kept only in the strip that holds the lower edge of
/// their overlap, so every overlapping pair is reported once. The set of pairs is exactly what one
/// sweep finds; the strips change the work, never the result.
fn sweep(bodies: &[SolverBody], broad: &mut BroadPhase) {
    broad.order.clear();
    broad.tests = 0;
    // The axes of greatest spread: variance of box centres, summed in body order.
    let finite = &broad.finite;
    if finite.is_empty() {
        return;
    }
    let count = finite.len() as f32;
    let mut mean = Vec3::ZERO;
    let mut size = Vec3::ZERO;
    for &i in finite {
        let b = &broad.bounds[i as usize];
        mean += (b.min + b.max) * 0.5;
        size += b.max - b.min;
    }
    mean /= count;
    size /= count;
    let mut spread = Vec3::ZERO;
    for &i in finite {
        let b = &broad.bounds[i as usize];
        let d = (b.min + b.max) * 0.5 - mean;
        spread += d * d;
    }
    broad.axis = if spread.x >= spread.y && spread.x >= spread.z {
        0
    } else if spread.y >= spread.z {
        1
    } else {
        2
    };
    let axis = broad.axis;
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    // Strips run across `u`, the wider of the two other axes (entries keep it as `other_*[0]`).
    let (u, v) = if spread[v] > spread[u] {
        (v, u)
    } else {
        (u, v)
    };
    let mut low = f32::INFINITY;
    let mut high = f32::NEG_INFINITY;
    for &i in finite {
        let b = &broad.bounds[i as usize];
        low = low.min(b.min[u]);
        high = high.max(b.max[u]);
    }
    let width = 2.0 * size[u];
    let strips = if width > 0.0 && (high - low).is_finite() {
        (((high - low) / width) as usize).clamp(1, MAX_STRIPS)
    } else {
        1
    };
    let scale = strips as f32 / (high - low).max(f32::MIN_POSITIVE);
    let strip_of = |x: f32| (((x - low) * scale) as usize).min(strips - 1);
    // The strips a box reaches, from whichever of its ends is lower (a shape with a negative size
    // has its ends the other way round, and must still be swept).
    let reach = |b: &Aabb| {
        let (first, last) = (strip_of(b.min[u]), strip_of(b.max[u]));
        first.min(last)..=first.max(last)
    };
    // Entries grouped by strip (a counting sort), then each strip sorted by its minimum.
    let starts = &mut broad.strip_starts;
    starts.clear();
    starts.resize(strips + 1, 0);
    for &i in finite {
        let b = &broad.bounds[i as usize];
        for s in reach(b) {
            starts[s + 1] += 1;
        }
    }
    for s in 0..strips {
        starts[s + 1] += starts[s];
    }
    broad.order.resize(starts[strips], SweepEntry::default());
    let fill = &mut broad.strip_fill;
    fill.clear();
    fill.extend_from_slice(&starts[..strips]);
    for &i in finite {
        let b = &broad.bounds[i as usize];
        let entry = SweepEntry {
            min: b.min[axis],
            max: b.max[axis],
            other_min: [b.min[u], b.min[v]],
            other_max: [b.max[u], b.max[v]],
            index: i,
        };
        for next in &mut fill[reach(b)] {
            broad.order[*next] = entry;
            *next += 1;
        }
    }
    let strip_of = &strip_of;
    let parallel =
        rayon::current_num_threads() > 1 && strips > 1 && broad.order.len() >= PARALLEL_ENTRIES;
    if !parallel {
        broad.tests = sweep_strips(
            &mut broad.order,
            0,
            0..strips,
            starts,
            bodies,
            strip_of,
            &mut broad.pairs,
        );
        return;
    }
    // The strips are independent: groups of them, about equal in entries, are swept on the
    // pool's threads, each into its own list. The lists are joined in group order and the pairs
    // sorted afterwards (`find_pairs_in`), so how many groups there are changes no result.
    let groups = (rayon::current_num_threads() * GROUPS_PER_THREAD).min(strips);
    let total = broad.order.len();
    let bounds = &mut broad.group_starts;
    bounds.clear();
    bounds.push(0);
    for g in 1..groups {
        let at = starts[..strips].partition_point(|&start| start < total * g / groups);
        bounds.push(at.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(strips);
    broad.group_pairs.resize_with(groups, GroupPairs::default);
    let outs = &mut broad.group_pairs[..groups];
    sweep_groups(&mut broad.order, 0, bounds, outs, starts, bodies, strip_of);
    broad.tests = outs.iter().map(|out| out.tests).sum();
    for out in outs.iter() {
        broad.pairs.extend_from_slice(&out.pairs);
    }
}

/// Sweeps the strip groups `groups` (boundaries: group `g` is strips `groups[g]..groups[g + 1]`)
/// into `outs`, one list a group, splitting the work in two halves run with `rayon::join`.
/// `order` holds the entries of these strips, from entry `offset` of the whole list.
fn sweep_groups(
    order: &mut [SweepEntry],
    offset: usize,
    groups: &[usize],
    outs: &mut [GroupPairs],
    starts: &[usize],
    bodies: &[SolverBody],
    strip_of: &(impl Fn(f32) -> usize + Sync),
) {
    if let [out] = outs {
        guard_worker(|| "before the broad phase's sweep".to_owned());
        out.pairs.clear();
        out.tests = sweep_strips(
            order,
            offset,
            groups[0]..groups[1],
            starts,
            bodies,
            strip_of,
            &mut out.pairs,
        );
        return;
    }
    let half = outs.len() / 2;
    let split = starts[groups[half]] - offset;
    let (left, right) = order.split_at_mut(split);
    let (outs_left, outs_right) = outs.split_at_mut(half);
    rayon::join(
        || {
            sweep_groups(
                left,
                offset,
                &groups[..=half],
                outs_left,
                starts,
                bodies,
                strip_of,
            )
        },
        || {
            sweep_groups(
                right,
                offset + split,
                &groups[half..],
                outs_right,
                starts,
                bodies,
                strip_of,
            )
        },
    );
}

/// Sorts and sweeps the strips `strips`, whose entries `order` holds from entry `offset` of the
/// whole list, pushing the pairs found to `pairs`; returns how many box-box tests it made.
fn sweep_strips(
    order: &mut [SweepEntry],
    offset: usize,
    strips: std::ops::Range<usize>,
    starts: &[usize],
    bodies: &[SolverBody],
    strip_of: &impl Fn(f32) -> usize,
    pairs: &mut Vec<(u32, u32)>,
) -> usize {
    let mut tests = 0;
    for s in strips {
        let strip = &mut order[starts[s] - offset..starts[s + 1] - offset];
        strip.sort_unstable_by(|a, b| a.min.total_cmp(&b.min).then(a.index.cmp(&b.index)));
        for (k, current) in strip.iter().enumerate() {
            for next in &strip[k + 1..] {
                if next.min > current.max {
                    break;
                }
                tests += 1;
                let overlaps = current.other_min[0] <= next.other_max[0]
                    && next.other_min[0] <= current.other_max[0]
                    && current.other_min[1] <= next.other_max[1]
                    && next.other_min[1] <= current.other_max[1];
                if !overlaps {
                    continue;
                }
                // Kept only in the strip holding the lower edge of the overlap.
                if strip_of(current.other_min[0].max(next.other_min[0])) != s {
                    continue;
                }
                let (i, j) = (current.index, next.index);
                if wants_pair(&bodies[i as usize], &bodies[j as usize]) {
                    pairs.push((i.min(j), i.max(j)));
                }
            }
        }
    }
    tests
}
