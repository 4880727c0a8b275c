//! The contact solve four manifolds at a time: the SIMD layout of one tick's constraints and the
//! kernels that warm-start and solve them.
//!
//! [`Batches::build`] lays the tick's constraints out colour by colour (see `colouring`): each
//! [`Batch`] holds four manifolds of one colour with the same point count, one per lane, and its
//! [`WidePoint`]s hold point `k` of all four, every field as [`Lanes`]. A kernel gathers the two
//! bodies' velocities of every lane, runs the manifold's points in order (the normal, then in the
//! relaxing pass the two friction rows), and writes the velocities back. Lanes of a batch never
//! share a moving body, so the lanes are independent and the order of the batches within a colour
//! cannot change a bit: the batches of a large colour may run on several threads.
//!
//! Empty lanes point at a spare velocity slot past the last body and carry rows without mass, so
//! they change nothing. Bodies the contacts do not move (inverse mass 0: static, kinematic,
//! sleeping) are read and never written. The overflow (manifolds that found no colour) runs one
//! manifold per batch, in order, after every colour.
//!
//! All arithmetic is `lanes`' IEEE operations in a fixed order. This module must never decide
//! which pairs touch or in what order colours run; `colouring` does.

use std::ops::Range;

use rayon::prelude::*;

use crate::runtime::guard_worker;

use super::body_state::{Displacement, PointResult, Velocity};
use super::colouring::{COLOURS, Colouring, Group, OVERFLOW, UNPLACED};
use super::jacobians::Sources;
use super::lanes::{LANES, LaneVec3, Lanes};
use super::manifold::Manifold;
pub use super::rows::{Batch, WidePoint, WideRow};
use super::shared_velocities::SharedVelocities;

/// Batches handed to one parallel task.
const BATCHES_PER_TASK: usize = 16;

/// A colour with fewer batches than this runs on one thread.
const PARALLEL_BATCHES: usize = 32;

/// Fewest manifolds whose results are listed in parts on the pool's threads.
const PARALLEL_RESULTS: usize = 2048;

/// The batches of one colour and point count.
#[derive(Clone, Debug)]
struct Span {
    batches: Range<usize>,
    /// Points per batch.
    points: usize,
    /// The first batch's first point.
    first_point: usize,
    /// Whether its batches may run on several threads (never for the overflow).
    parallel: bool,
}

impl Span {
    /// Where its batches' points are in `Batches::points`.
    fn point_range(&self) -> Range<usize> {
        self.first_point..self.first_point + self.batches.len() * self.points
    }
}

/// Manifolds per batch in a colour group: one in the overflow (its manifolds may share bodies),
/// a full set of lanes elsewhere.
fn manifolds_per_batch(colour: usize) -> usize {
    if colour == OVERFLOW { 1 } else { LANES }
}

/// One tick's constraints in SIMD layout (scratch).
#[derive(Default)]
pub struct Batches {
    batches: Vec<Batch>,
    points: Vec<WidePoint>,
    spans: Vec<Span>,
    /// Per velocity slot, the last parallel span that writes it (plus one), for checking spans.
    written_by: Vec<u32>,
    /// Per colour (the overflow last), its spans: a range of `spans`.
    by_colour: Vec<Range<usize>>,
}

/// The soft-contact coefficients of a pass, for every lane.
#[derive(Clone, Copy, Debug)]
pub struct WideSoftness {
    /// Bias per metre of overlap.
    pub bias_rate: Lanes,
    /// Scales the effective mass.
    pub mass_scale: Lanes,
    /// Scales the accumulated impulse that relaxes away.
    pub impulse_scale: Lanes,
}

/// What a velocity pass does with the gap.
#[derive(Clone, Copy, Debug)]
pub enum Pass {
    /// The biased pass: overlap pushes apart through the contact spring (stiffer against a body
    /// that does not move). Normals only.
    Biased {
        /// The spring between two moving bodies.
        soft: WideSoftness,
        /// The spring against a body that does not move.
        fixed: WideSoftness,
    },
    /// The relaxing pass, after the bodies moved: gaps are refreshed from the displacements
    /// first, overlap is not pushed, and friction is solved.
    Relax,
}

/// Tolerances of a pass, for every lane.
#[derive(Clone, Copy, Debug)]
pub struct PassParams {
    /// `1 / h` for the substep.
    pub inv_h: Lanes,
    /// `-max_correction_speed`.
    pub min_push: Lanes,
    /// `linear_slop`.
    pub slop: Lanes,
}

/// The velocities of the two bodies of every lane of a batch, while the batch is solved.
struct PairVelocities {
    linear_a: LaneVec3,
    angular_a: LaneVec3,
    linear_b: LaneVec3,
    angular_b: LaneVec3,
}

impl PairVelocities {
    #[inline(always)]
    fn gather(v: SharedVelocities<'_>, batch: &Batch) -> PairVelocities {
        let (linear_a, angular_a) = v.gather(batch.a);
        let (linear_b, angular_b) = v.gather(batch.b);
        PairVelocities {
            linear_a,
            angular_a,
            linear_b,
            angular_b,
        }
    }

    #[inline(always)]
    fn scatter(&self, v: SharedVelocities<'_>, batch: &Batch) {
        v.scatter(batch.a, batch.inv_mass_a, self.linear_a, self.angular_a);
        v.scatter(batch.b, batch.inv_mass_b, self.linear_b, self.angular_b);
    }

    /// Applies impulse `lambda` along `row` (from `a` on `b`).
    #[inline(always)]
    fn push(&mut self, row: &WideRow, batch: &Batch, lambda: Lanes) {
        let linear_a = row.direction.scale(lambda * batch.inv_mass_a);
        let linear_b = row.direction.scale(lambda * batch.inv_mass_b);
        if batch.locked {
            // A locked axis takes no impulse: its velocity stays exactly zero.
            self.linear_a -= linear_a.times(batch.free_a);
            self.linear_b += linear_b.times(batch.free_b);
        } else {
            self.linear_a -= linear_a;
            self.linear_b += linear_b;
        }
        self.angular_a -= row.turn_a.scale(lambda);
        self.angular_b += row.turn_b.scale(lambda);
    }

    /// Velocity of `b` relative to `a` along `row`, at lever arms `ra` and `rb`.
    #[inline(always)]
    fn speed_along(&self, row: &WideRow, ra: LaneVec3, rb: LaneVec3) -> Lanes {
        let (arm_a, arm_b) = (ra.cross(row.direction), rb.cross(row.direction));
        (row.direction.dot(self.linear_b - self.linear_a) + arm_b.dot(self.angular_b))
            - arm_a.dot(self.angular_a)
    }
}

/// Where an anchor at `r` from a body's centre at the start of the tick is now, relative to that
/// centre, for four bodies whose displacements are `moved`.
#[inline(always)]
fn moved_anchor(position: LaneVec3, matrix: &[LaneVec3; 3], r: LaneVec3) -> LaneVec3 {
    position + ((matrix[0].scale(r.x) + matrix[1].scale(r.y)) + matrix[2].scale(r.z))
}

/// Displacement of four bodies: translation and rotation matrix columns.
#[inline(always)]
fn gather_displacements(
    displacements: &[Displacement],
    bodies: [u32; LANES],
) -> (LaneVec3, [LaneVec3; 3]) {
    let d = bodies.map(|i| &displacements[i as usize]);
    (
        LaneVec3::from_vecs(d.map(|d| d.position)),
        [
            LaneVec3::from_vecs(d.map(|d| d.matrix[0])),
            LaneVec3::from_vecs(d.map(|d| d.matrix[1])),
            LaneVec3::from_vecs(d.map(|d| d.matrix[2])),
        ],
    )
}

/// What filling the batches reads: the colouring they are laid out by and the tick's sources.
struct Fill<'a, 's> {
    colouring: &'a Colouring,
    sources: &'a Sources<'s>,
}

impl Fill<'_, '_> {
    /// Fills the batches and points of `spans` (the spans of `groups`; `batches` and `points`
    /// start at the first span's), in two parts of about equal batches on two of the pool's threads
    /// while `parallel` and a part holds more than one span and enough batches, and a large span's
    /// batches on the pool's threads. Every batch is built from its own lanes alone, so how the
    /// work is split changes no bit; splitting across spans keeps the many small ones from running
    /// one after another on one thread.
    fn spans(
        &self,
        spans: &[Span],
        groups: &[Group],
        batches: &mut [Batch],
        points: &mut [WidePoint],
        parallel: bool,
    ) {
        let Some(start) = spans.first() else {
            return;
        };
        let (first_batch, first_point) = (start.batches.start, start.first_point);
        if parallel && spans.len() > 1 && batches.len() >= 2 * BATCHES_PER_TASK {
            let half = batches.len() / 2;
            let cut = spans
                .partition_point(|span| span.batches.end - first_batch <= half)
                .clamp(1, spans.len() - 1);
            let (batch_cut, point_cut) = (
                spans[cut].batches.start - first_batch,
                spans[cut].first_point - first_point,
            );
            let (batches_a, batches_b) = batches.split_at_mut(batch_cut);
            let (points_a, points_b) = points.split_at_mut(point_cut);
            let (spans_a, spans_b) = spans.split_at(cut);
            let (groups_a, groups_b) = groups.split_at(cut);
            rayon::join(
                || self.spans(spans_a, groups_a, batches_a, points_a, parallel),
                || self.spans(spans_b, groups_b, batches_b, points_b, parallel),
            );
            return;
        }
        for (span, group) in spans.iter().zip(groups) {
            let range = span.batches.start - first_batch..span.batches.end - first_batch;
            let whole = span.point_range();
            let point_range = whole.start - first_point..whole.end - first_point;
            self.span(
                span,
                group,
                &mut batches[range],
                &mut points[point_range],
                parallel,
            );
        }
    }

    /// Fills one span's `batches` and `points`, on the pool's threads when it is large.
    fn span(
        &self,
        span: &Span,
        group: &Group,
        batches: &mut [Batch],
        points: &mut [WidePoint],
        parallel: bool,
    ) {
        let order = &self.colouring.order[group.manifolds.clone()];
        let (k, per) = (span.points, manifolds_per_batch(group.colour));
        let fill = |((batch, points), lanes): ((&mut Batch, &mut [WidePoint]), &[u32])| {
            self.sources.fill(lanes, batch, points);
        };
        guard_worker(|| "before filling the contact solver's batches".to_owned());
        if parallel && batches.len() >= 2 * BATCHES_PER_TASK {
            batches
                .par_iter_mut()
                .zip(points.par_chunks_exact_mut(k))
                .zip(order.par_chunks(per))
                .with_min_len(BATCHES_PER_TASK)
                .for_each(|item| {
                    guard_worker(|| "before filling the contact solver's batches".to_owned());
                    fill(item);
                });
        } else {
            batches
                .iter_mut()
                .zip(points.chunks_exact_mut(k))
                .zip(order.chunks(per))
                .for_each(fill);
        }
    }
}

impl Batches {
    /// Lays out the tick's constraints by the colouring, building each batch from `sources`.
    pub fn build(&mut self, colouring: &Colouring, sources: &Sources<'_>) {
        self.spans.clear();
        let (mut batches, mut points) = (0, 0);
        self.by_colour.clear();
        self.by_colour.resize(COLOURS + 1, 0..0);
        for group in &colouring.groups {
            let span = self.spans.len();
            let range = &mut self.by_colour[group.colour];
            if range.start == range.end {
                *range = span..span;
            }
            range.end = span + 1;
            let count = group
                .manifolds
                .len()
                .div_ceil(manifolds_per_batch(group.colour));
            self.spans.push(Span {
                batches: batches..batches + count,
                points: group.points,
                first_point: points,
                parallel: group.colour != OVERFLOW && count >= PARALLEL_BATCHES,
            });
            batches += count;
            points += count * group.points;
        }
        // Every batch and point is overwritten below, so the buffers keep their old contents
        // rather than being cleared each tick.
        self.batches.resize(batches, Batch::default());
        self.points.resize(points, WidePoint::default());
        let parallel = rayon::current_num_threads() > 1;
        let fill = Fill { colouring, sources };
        fill.spans(
            &self.spans,
            &colouring.groups,
            &mut self.batches,
            &mut self.points,
            parallel,
        );
        self.check_parallel_spans(sources.spare as usize + 1);
    }

    /// Makes sure no batch of a parallel span reads or writes a velocity another lane of the span
    /// writes, which is what makes the shared writes sound. The colouring guarantees it; a span
    /// built from a colouring and masses that disagree would break it, and then runs on one
    /// thread (a debug build stops: that is a bug in the caller).
    fn check_parallel_spans(&mut self, slots: usize) {
        self.written_by.clear();
        self.written_by.resize(slots, 0);
        for (index, span) in self.spans.iter_mut().enumerate() {
            if !span.parallel {
                continue;
            }
            let stamp = index as u32 + 1;
            let batches = &self.batches[span.batches.clone()];
            let lanes = |batch: &Batch| {
                let (ma, mb) = (batch.inv_mass_a.to_array(), batch.inv_mass_b.to_array());
                let (a, b) = (batch.a, batch.b);
                (0..LANES).flat_map(move |l| [(a[l], ma[l] > 0.0), (b[l], mb[l] > 0.0)])
            };
            let mut disjoint = true;
            for (body, writes) in batches.iter().flat_map(lanes) {
                if writes {
                    let slot = &mut self.written_by[body as usize];
                    disjoint &= *slot != stamp;
                    *slot = stamp;
                }
            }
            for (body, writes) in batches.iter().flat_map(lanes) {
                disjoint &= writes || self.written_by[body as usize] != stamp;
            }
            debug_assert!(
                disjoint,
                "two lanes of colour span {index} share a moving body"
            );
            span.parallel &= disjoint;
        }
    }

    /// How many batches are in colours large enough to be spread over threads (a measure for
    /// tests and benchmarks: that a scene exercises the parallel path).
    pub fn parallel_batches(&self) -> usize {
        self.spans
            .iter()
            .filter(|span| span.parallel)
            .map(|span| span.batches.len())
            .sum()
    }

    /// Whether `colour` holds any manifold this tick.
    pub fn has_colour(&self, colour: usize) -> bool {
        self.by_colour
            .get(colour)
            .is_some_and(|spans| !spans.is_empty())
    }

    /// Runs `kernel` on every batch of `colour`, the batches of a large colour on several
    /// threads.
    fn for_each_batch(
        &mut self,
        colour: usize,
        velocities: &mut [Velocity],
        kernel: impl Fn(&Batch, &mut [WidePoint], SharedVelocities<'_>) + Sync,
    ) {
        let shared = SharedVelocities::new(velocities);
        let run = |span: &Span, points: &mut [WidePoint]| {
            let k = span.points;
            let batches = &self.batches[span.batches.clone()];
            let points = &mut points[span.point_range()];
            if span.parallel && rayon::current_num_threads() > 1 {
                batches
                    .par_iter()
                    .zip(points.par_chunks_exact_mut(k))
                    .with_min_len(BATCHES_PER_TASK)
                    .for_each(|(batch, points)| {
                        guard_worker(|| "before a parallel pass of the contact solver".to_owned());
                        kernel(batch, points, shared);
                    });
            } else {
                for (batch, points) in batches.iter().zip(points.chunks_exact_mut(k)) {
                    kernel(batch, points, shared);
                }
            }
        };
        let spans = self.by_colour.get(colour).cloned().unwrap_or_default();
        for span in &self.spans[spans] {
            run(span, &mut self.points);
        }
    }

    /// Applies the accumulated impulses of every point of `colour` (warm starting).
    pub fn warm_start(&mut self, colour: usize, velocities: &mut [Velocity]) {
        self.for_each_batch(colour, velocities, |batch, points, v| {
            let mut pair = PairVelocities::gather(v, batch);
            for p in points.iter() {
                let impulses = [p.normal_impulse, p.tangent_impulse[0], p.tangent_impulse[1]];
                for (row, impulse) in p.rows.iter().zip(impulses) {
                    pair.push(row, batch, impulse);
                }
            }
            pair.scatter(v, batch);
        });
    }

    /// One velocity pass over every point of `colour`: the normal, then (relaxing pass only)
    /// friction.
    pub fn solve(
        &mut self,
        colour: usize,
        velocities: &mut [Velocity],
        displacements: &[Displacement],
        params: PassParams,
        pass: Pass,
    ) {
        self.for_each_batch(colour, velocities, |batch, points, v| {
            let mut pair = PairVelocities::gather(v, batch);
            let moved = match pass {
                Pass::Relax => Some((
                    gather_displacements(displacements, batch.a),
                    gather_displacements(displacements, batch.b),
                )),
                Pass::Biased { .. } => None,
            };
            for p in points.iter_mut() {
                let normal = p.rows[0];
                if let Some(((pa, ma), (pb, mb))) = &moved {
                    let offset = moved_anchor(*pb, mb, p.rb) - moved_anchor(*pa, ma, p.ra);
                    p.separation = offset.dot(normal.direction) + p.base_separation;
                }
                let separation = p.separation;
                let open = separation.gt(Lanes::ZERO);
                // Still open: approach by at most the gap, whatever the pass.
                let open_target = -(separation * params.inv_h);
                let (target, mass_scale, impulse_scale) = match pass {
                    Pass::Biased { soft, fixed } => {
                        let s = |f: fn(&WideSoftness) -> Lanes| {
                            batch.against_fixed.select(f(&fixed), f(&soft))
                        };
                        let push_speed = (s(|s| s.bias_rate)
                            * (separation + params.slop).min(Lanes::ZERO))
                        .max(params.min_push);
                        (
                            open.select(open_target, -push_speed),
                            open.select(Lanes::splat(1.0), s(|s| s.mass_scale)),
                            open.select(Lanes::ZERO, s(|s| s.impulse_scale)),
                        )
                    }
                    Pass::Relax => (
                        open.select(open_target, Lanes::ZERO),
                        Lanes::splat(1.0),
                        Lanes::ZERO,
                    ),
                };
                let vn = pair.speed_along(&normal, p.ra, p.rb);
                let lambda =
                    -normal.mass * mass_scale * (vn - target) - impulse_scale * p.normal_impulse;
                let old = p.normal_impulse;
                p.normal_impulse = (old + lambda).max(Lanes::ZERO);
                p.max_normal_impulse = p.max_normal_impulse.max(p.normal_impulse);
                pair.push(&normal, batch, p.normal_impulse - old);

                if matches!(pass, Pass::Biased { .. }) {
                    // Friction only in the relaxing pass: friction that reacts to the bias
                    // velocities pushes a stack's lean further every tick until it creeps.
                    continue;
                }
                let limit = batch.friction * p.normal_impulse;
                for k in 0..2 {
                    let tangent = p.rows[k + 1];
                    let lambda = -tangent.mass * pair.speed_along(&tangent, p.ra, p.rb);
                    let old = p.tangent_impulse[k];
                    p.tangent_impulse[k] = (old + lambda).clamp(-limit, limit);
                    let change = p.tangent_impulse[k] - old;
                    pair.push(&tangent, batch, change);
                }
            }
            pair.scatter(v, batch);
        });
    }

    /// Bounces: points that approached faster than `threshold` (a negative speed) and carried
    /// load leave at `-e * approach`.
    pub fn restitution(&mut self, colour: usize, velocities: &mut [Velocity], threshold: f32) {
        let threshold = Lanes::splat(threshold);
        self.for_each_batch(colour, velocities, |batch, points, v| {
            if !batch.bounces {
                return;
            }
            let mut pair = PairVelocities::gather(v, batch);
            for p in points.iter_mut() {
                let bounces = batch
                    .restitution
                    .gt(Lanes::ZERO)
                    .and(threshold.gt(p.approach))
                    .and(p.max_normal_impulse.gt(Lanes::ZERO));
                let normal = p.rows[0];
                let target = -(batch.restitution * p.approach);
                let lambda = -normal.mass * (pair.speed_along(&normal, p.ra, p.rb) - target);
                let old = p.normal_impulse;
                p.normal_impulse = bounces.select((old + lambda).max(Lanes::ZERO), old);
                pair.push(&normal, batch, p.normal_impulse - old);
            }
            pair.scatter(v, batch);
        });
    }

    /// Every point's result, in manifold and point order, from the manifolds and the impulses
    /// the solve left in the lanes (`colouring` is the one the batches were built from). Each
    /// manifold's results depend on that manifold alone, so a large list is filled in parts on
    /// the pool's threads with the same bits.
    pub fn results(
        &self,
        manifolds: &[Manifold],
        colouring: &Colouring,
        results: &mut Vec<PointResult>,
    ) {
        let total = colouring.first_point.last().map_or(0, |&end| end as usize);
        results.clear();
        results.resize(total, PointResult::default());
        let parallel = rayon::current_num_threads() > 1;
        self.fill_results(manifolds, 0, colouring, results, parallel);
    }

    /// The results of `manifolds`, which start at manifold `from`, into `out` (their points'
    /// slots), in halves on two of the pool's threads while a part is large and `parallel`.
    fn fill_results(
        &self,
        manifolds: &[Manifold],
        from: usize,
        colouring: &Colouring,
        out: &mut [PointResult],
        parallel: bool,
    ) {
        if parallel && manifolds.len() >= PARALLEL_RESULTS {
            let half = manifolds.len() / 2;
            let first = &colouring.first_point;
            let split = (first[from + half] - first[from]) as usize;
            let (left, right) = out.split_at_mut(split);
            let (first, second) = manifolds.split_at(half);
            rayon::join(
                || self.fill_results(first, from, colouring, left, parallel),
                || self.fill_results(second, from + half, colouring, right, parallel),
            );
            return;
        }
        let mut next = 0;
        for (i, m) in manifolds.iter().enumerate() {
            let place = colouring.place[from + i];
            let count = m.len as usize;
            let results = &mut out[next..next + count];
            next += count;
            for (r, point) in results.iter_mut().zip(m.points()) {
                *r = PointResult {
                    a: m.a,
                    b: m.b,
                    feature: point.feature,
                    separation: point.separation,
                    ..PointResult::default()
                };
            }
            if place == UNPLACED {
                continue;
            }
            // The group holding the manifold's place, and so its batch and lane.
            let place = place as usize;
            let g = colouring
                .groups
                .partition_point(|group| group.manifolds.end <= place);
            let (group, span) = (&colouring.groups[g], &self.spans[g]);
            let local = place - group.manifolds.start;
            let per = manifolds_per_batch(group.colour);
            let first = span.first_point + (local / per) * span.points;
            let lane = local % per;
            for (r, point) in results.iter_mut().zip(&self.points[first..]) {
                r.normal_impulse = point.normal_impulse.to_array()[lane];
                r.max_normal_impulse = point.max_normal_impulse.to_array()[lane];
                r.tangent_impulse = [
                    point.tangent_impulse[0].to_array()[lane],
                    point.tangent_impulse[1].to_array()[lane],
                ];
            }
        }
    }
}
