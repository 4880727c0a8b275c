//! Graph colouring of the contact manifolds, so the solve can run several at once.
//!
//! Two manifolds of one colour never share a body the contacts move (an awake dynamic body), so
//! their impulses touch disjoint velocities: the manifolds of a colour can be solved in SIMD lanes
//! and on several threads with the same result as one after another, and the colours run in a
//! fixed order. This is Box2D v3's constraint graph colouring, recomputed each tick from the
//! manifolds, which come in body (`SimId`) order, so the colours depend on nothing but the scene.
//!
//! Greedy and in a fixed order: manifolds are taken in pair order, and each takes the lowest colour
//! that neither of its moving bodies holds yet. As in Box2D, a manifold against a
//! body that does not move never takes colour 0 (the largest), which keeps colour 0 for pairs of
//! moving bodies and puts ground contacts later in the pass; pairs of moving bodies use only the
//! first [`DYNAMIC_COLOURS`], so there is room left for the ground contacts of busy bodies. A
//! manifold that finds no free colour goes to the overflow, solved one manifold at a time after
//! every colour. Bodies that do not move are never a conflict: they are only read.
//!
//! Within a colour, manifolds are grouped by point count (so the four lanes of a batch have the
//! same number of points) and keep manifold order inside each group. This module decides order
//! only; it must never look at positions or velocities.

use std::ops::Range;

use super::Motion;
use super::manifold::{MAX_POINTS, Manifold};

/// How many colours there are (bits of a `u64`).
pub const COLOURS: usize = 64;

/// How many of them pairs of two moving bodies may use.
pub const DYNAMIC_COLOURS: usize = COLOURS - 8;

/// The colour index of the overflow.
pub const OVERFLOW: usize = COLOURS;

/// Manifolds of one colour with the same number of points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The colour, or [`OVERFLOW`].
    pub colour: usize,
    /// Points of every manifold in the group (1 to `MAX_POINTS`).
    pub points: usize,
    /// The group's manifolds: a range of [`Colouring::order`].
    pub manifolds: Range<usize>,
}

/// The colouring of one tick (scratch, rebuilt every tick).
#[derive(Default)]
pub struct Colouring {
    /// Per body, the colours that already hold a manifold of it.
    used: Vec<u64>,
    /// Per manifold, its counting-sort bucket (colour and point count), or [`NO_BUCKET`] without
    /// points: a compact copy of what the sort needs, so the manifolds themselves are read once.
    bucket_of: Vec<u32>,
    /// Manifold indices, grouped by colour, then by point count, in manifold order within a group.
    pub order: Vec<u32>,
    /// Per manifold, its place in `order` ([`UNPLACED`] for one without points).
    pub place: Vec<u32>,
    /// Per manifold, its first point in manifold and point order, and one past the last point
    /// (read here because the colouring reads every manifold's point count anyway).
    pub first_point: Vec<u32>,
    /// The non-empty groups, in solve order: colour 0 first, the overflow last.
    pub groups: Vec<Group>,
    /// Counting-sort buckets, one per colour and point count.
    counts: Vec<usize>,
    /// Joint indices grouped by colour, in joint order within a colour.
    pub joint_order: Vec<u32>,
    /// Per colour (the overflow last), its joints: a range of `joint_order`.
    pub joint_spans: Vec<Range<usize>>,
    /// Per joint, its colour, or `None` when neither body moves.
    joint_colour: Vec<Option<usize>>,
}

/// Whether body `i` moves (an index past the last body is the world, which never does).
fn moves(motion: &[Motion], i: usize) -> bool {
    motion.get(i).is_some_and(|m| m.inv_mass > 0.0)
}

/// The bucket of a colour and point count.
fn bucket(colour: usize, points: usize) -> usize {
    colour * MAX_POINTS + (points - 1)
}

/// The bucket of a manifold without points, which is not solved.
const NO_BUCKET: u32 = u32::MAX;

/// The place of a manifold without points in [`Colouring::place`].
pub const UNPLACED: u32 = u32::MAX;

impl Colouring {
    /// Colours the joints, then the manifolds, in one graph; a body moves when its `motion` has a
    /// positive inverse mass (a joint's body index past the last body is the world, which never
    /// moves).
    pub fn build(&mut self, manifolds: &[Manifold], joints: &[(u32, u32)], motion: &[Motion]) {
        self.used.clear();
        self.used.resize(motion.len(), 0);
        // Joints first: they persist from tick to tick, so they keep their colours while contacts
        // come and go around them.
        self.joint_colour.clear();
        for &(a, b) in joints {
            let (a, b) = (a as usize, b as usize);
            let still = !moves(motion, a) && !moves(motion, b);
            let colour = (!still).then(|| self.take(a, b, motion));
            self.joint_colour.push(colour);
        }
        self.sort_joints();
        self.bucket_of.clear();
        self.bucket_of.reserve(manifolds.len());
        self.first_point.clear();
        self.first_point.reserve(manifolds.len() + 1);
        let mut points = 0u32;
        for m in manifolds {
            self.first_point.push(points);
            points += m.len as u32;
            let bucket_of = if m.len == 0 {
                NO_BUCKET
            } else {
                let colour = self.take(m.a as usize, m.b as usize, motion);
                bucket(colour, m.len as usize) as u32
            };
            self.bucket_of.push(bucket_of);
        }
        self.first_point.push(points);
        self.sort();
    }

    /// The lowest colour free for an edge between bodies `a` and `b`, marked as taken by the ones
    /// that move; the overflow when none is free.
    fn take(&mut self, a: usize, b: usize, motion: &[Motion]) -> usize {
        let (moves_a, moves_b) = (moves(motion, a), moves(motion, b));
        let taken =
            (if moves_a { self.used[a] } else { 0 }) | (if moves_b { self.used[b] } else { 0 });
        // Colours this edge may take: the first `DYNAMIC_COLOURS` for two moving bodies, every
        // colour but 0 otherwise.
        let allowed: u64 = if moves_a && moves_b {
            (1u64 << DYNAMIC_COLOURS) - 1
        } else {
            !1u64
        };
        let free = allowed & !taken;
        if free == 0 {
            return OVERFLOW;
        }
        let c = free.trailing_zeros() as usize;
        if moves_a {
            self.used[a] |= 1 << c;
        }
        if moves_b {
            self.used[b] |= 1 << c;
        }
        c
    }

    /// Fills `joint_order` and `joint_spans` from `joint_colour`, stable in joint order.
    fn sort_joints(&mut self) {
        let mut starts = [0usize; COLOURS + 2];
        for colour in self.joint_colour.iter().flatten() {
            starts[colour + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        self.joint_spans.clear();
        self.joint_spans
            .extend((0..=COLOURS).map(|c| starts[c]..starts[c + 1]));
        self.joint_order.clear();
        self.joint_order.resize(starts[COLOURS + 1], 0);
        for (i, colour) in self.joint_colour.iter().enumerate() {
            if let Some(c) = *colour {
                self.joint_order[starts[c]] = i as u32;
                starts[c] += 1;
            }
        }
    }

    /// Fills `order` and `groups` from `bucket_of` by a counting sort, stable in manifold order.
    fn sort(&mut self) {
        self.counts.clear();
        self.counts.resize((COLOURS + 1) * MAX_POINTS + 1, 0);
        for &k in &self.bucket_of {
            if k != NO_BUCKET {
                self.counts[k as usize + 1] += 1;
            }
        }
        for i in 1..self.counts.len() {
            self.counts[i] += self.counts[i - 1];
        }
        self.groups.clear();
        for colour in 0..=COLOURS {
            for points in 1..=MAX_POINTS {
                let k = bucket(colour, points);
                let range = self.counts[k]..self.counts[k + 1];
                if !range.is_empty() {
                    self.groups.push(Group {
                        colour,
                        points,
                        manifolds: range,
                    });
                }
            }
        }
        let total = self.counts[self.counts.len() - 1];
        self.order.clear();
        self.order.resize(total, 0);
        self.place.clear();
        self.place.resize(self.bucket_of.len(), UNPLACED);
        for (i, &k) in self.bucket_of.iter().enumerate() {
            if k != NO_BUCKET {
                let slot = &mut self.counts[k as usize];
                self.order[*slot] = i as u32;
                self.place[i] = *slot as u32;
                *slot += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cpu::manifold::ContactPoint;

    fn manifold(a: u32, b: u32, points: usize) -> Manifold {
        let mut m = Manifold {
            a,
            b,
            points: [ContactPoint::default(); MAX_POINTS],
            len: 0,
            evaluated: true,
        };
        for _ in 0..points {
            m.push(ContactPoint::default());
        }
        m
    }

    fn moving(inv_mass: f32) -> Motion {
        Motion {
            inv_mass,
            ..Motion::default()
        }
    }

    /// No colour holds two manifolds that share a moving body, a ground shared by many is no
    /// conflict, and every manifold with points is placed exactly once. Fails if a body's colour
    /// bits are not set when it takes a colour (two contacts of one box would share a colour and
    /// race in the parallel solve).
    #[test]
    fn no_colour_shares_a_moving_body() {
        // Body 0 is the ground; 1..=40 form a chain, each touching the next and the ground.
        let mut manifolds = Vec::new();
        let mut motion = vec![moving(0.0)];
        for i in 1..=40u32 {
            motion.push(moving(1.0));
            manifolds.push(manifold(0, i, 4));
            if i > 1 {
                manifolds.push(manifold(i - 1, i, 1 + (i as usize % 4)));
            }
        }
        manifolds.push(manifold(3, 7, 0));
        let mut colouring = Colouring::default();
        colouring.build(&manifolds, &[], &motion);
        let mut seen = vec![0; manifolds.len()];
        let mut taken = std::collections::BTreeSet::new();
        for group in &colouring.groups {
            for &i in &colouring.order[group.manifolds.clone()] {
                seen[i as usize] += 1;
                let m = &manifolds[i as usize];
                assert_eq!(m.len as usize, group.points);
                for body in [m.a, m.b] {
                    if motion[body as usize].inv_mass > 0.0 && group.colour != OVERFLOW {
                        assert!(
                            taken.insert((group.colour, body)),
                            "body {body} twice in colour {}",
                            group.colour
                        );
                    }
                }
            }
        }
        for (i, &place) in colouring.place.iter().enumerate() {
            if place != UNPLACED {
                assert_eq!(colouring.order[place as usize], i as u32);
            }
        }
        let last = manifolds.len() - 1;
        assert_eq!(seen[last], 0, "a manifold without points is not solved");
        assert_eq!(colouring.place[last], UNPLACED);
        let mut first = 0;
        for (m, &point) in manifolds.iter().zip(&colouring.first_point) {
            assert_eq!(point, first);
            first += m.len as u32;
        }
        assert_eq!(colouring.first_point[manifolds.len()], first);
        assert!(seen[..last].iter().all(|&n| n == 1));
        // Ground contacts never take colour 0.
        for group in colouring.groups.iter().filter(|g| g.colour == 0) {
            for &i in &colouring.order[group.manifolds.clone()] {
                assert_ne!(manifolds[i as usize].a, 0);
            }
        }
    }
}
