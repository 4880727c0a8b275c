//! After the tick: which pairs started or stopped touching, and the impulses kept for warm starts.
//!
//! A pair touches when one of its points is within `linear_slop` of contact. Pairs the narrow
//! phase skipped this tick (both bodies asleep or unmovable) keep what they had, as long as both
//! bodies still exist: their touching state, warm starts and contact report (last tick's normal),
//! so a body asleep on the ground is still reported standing on it. Events are ordered by the
//! pair's `SimId`s and numbered from `PhysicsWorld::next_event_id`, so their order never depends
//! on iteration order or on which `Entity` a body happens to have. An event's entities are
//! handles resolved from this tick's bodies (`Entity::PLACEHOLDER` for a body that is gone). The
//! lists a tick builds are kept between ticks in [`EventBuffers`] (scratch: nothing there is read
//! before it is rebuilt).
//!
//! This module must never change bodies.

use bevy::prelude::Entity;

use super::manifold::Manifold;
use super::solver::PointResult;
use super::{SolverBody, StepParams};
use crate::physics::resources::{CollisionEvent, CollisionEventKind, ContactReport};
use crate::physics::world::{PhysicsWorld, Touching, WarmStart};
use crate::state::SimId;

/// Answers "did the narrow phase look at pair `(a, b)` this tick?" for pairs asked in ascending
/// order, walking the manifolds (which are in the same order) once.
struct Evaluated<'a> {
    bodies: &'a [SolverBody],
    manifolds: &'a [Manifold],
    next: usize,
    /// The last pair `kept` answered, and its answer.
    last: Option<((SimId, SimId), bool)>,
    /// Which bodies are here.
    roster: &'a Roster,
}

impl<'a> Evaluated<'a> {
    fn new(bodies: &'a [SolverBody], manifolds: &'a [Manifold], roster: &'a Roster) -> Self {
        Evaluated {
            bodies,
            manifolds,
            next: 0,
            last: None,
            roster,
        }
    }

    fn pair(&self, m: &Manifold) -> (SimId, SimId) {
        (
            self.bodies[m.a as usize].sim_id,
            self.bodies[m.b as usize].sim_id,
        )
    }

    /// Whether pair `(a, b)` has a manifold this tick, and if so whether it was evaluated;
    /// `(a, b)` must not be below the previous question.
    fn lookup(&mut self, a: SimId, b: SimId) -> Option<bool> {
        while self.next < self.manifolds.len() && self.pair(&self.manifolds[self.next]) < (a, b) {
            self.next += 1;
        }
        self.manifolds
            .get(self.next)
            .filter(|m| self.pair(m) == (a, b))
            .map(|m| m.evaluated)
    }

    /// Whether what was stored for pair `(a, b)` is kept as it is: the narrow phase skipped the
    /// pair and both bodies still exist. A pair with a manifold this tick has both bodies, so only
    /// pairs without one are looked up among the bodies. Asked in ascending order, and the same
    /// pair several times in a row (one question per stored point) is answered once.
    fn kept(&mut self, a: SimId, b: SimId) -> bool {
        if let Some((pair, kept)) = self.last
            && pair == (a, b)
        {
            return kept;
        }
        let kept = match self.lookup(a, b) {
            Some(evaluated) => !evaluated,
            None => self.roster.has(self.bodies, a) && self.roster.has(self.bodies, b),
        };
        self.last = Some(((a, b), kept));
        kept
    }
}

/// Which ids are among this tick's bodies, and where each one is. Ids are handed out in order, so
/// a tick's bodies usually cover a range not much wider than their count: then a table with one
/// slot per id in that range answers each question in one step. Otherwise the bodies (sorted by
/// id) are searched. Its buffers are kept between ticks ([`EventBuffers`]).
#[derive(Debug, Default)]
struct Roster {
    /// Whether `index` answers (else the bodies are searched).
    dense: bool,
    /// The id of slot 0 of `index`.
    first: u64,
    /// One slot per id from `first`: the body's place in the tick's bodies, or `u32::MAX`.
    index: Vec<u32>,
    /// One slot per id from `first`: the body's entity, or `Entity::PLACEHOLDER` (so a carried
    /// report finds its entities in this table, not in the bodies' records).
    entities: Vec<Entity>,
}

impl Roster {
    /// Sets the roster to this tick's `bodies` (sorted by `sim_id`).
    fn fill(&mut self, bodies: &[SolverBody]) {
        self.index.clear();
        self.entities.clear();
        self.dense = false;
        let (Some(first), Some(last)) = (bodies.first(), bodies.last()) else {
            return;
        };
        let (first, span) = (first.sim_id.0, last.sim_id.0 - first.sim_id.0);
        if span / 8 > bodies.len() as u64 {
            return;
        }
        self.dense = true;
        self.first = first;
        self.index.resize(span as usize + 1, u32::MAX);
        self.entities.resize(span as usize + 1, Entity::PLACEHOLDER);
        for (i, body) in bodies.iter().enumerate() {
            let slot = (body.sim_id.0 - first) as usize;
            self.index[slot] = i as u32;
            self.entities[slot] = body.entity;
        }
    }

    /// Where body `id` is in `bodies` (the tick's bodies the roster was filled from), if here.
    fn find(&self, bodies: &[SolverBody], id: SimId) -> Option<usize> {
        if !self.dense {
            return bodies.binary_search_by_key(&id, |body| body.sim_id).ok();
        }
        let index = *self.index.get(self.slot(id)?)?;
        (index != u32::MAX).then_some(index as usize)
    }

    /// Body `id`'s slot in the dense tables, if its id is at or past `first`.
    fn slot(&self, id: SimId) -> Option<usize> {
        usize::try_from(id.0.checked_sub(self.first)?).ok()
    }

    /// Whether body `id` is here.
    fn has(&self, bodies: &[SolverBody], id: SimId) -> bool {
        self.find(bodies, id).is_some()
    }

    /// The entity of body `id` this tick, or `Entity::PLACEHOLDER` when it is gone.
    fn entity(&self, bodies: &[SolverBody], id: SimId) -> Entity {
        if self.dense {
            let entity = self.slot(id).and_then(|slot| self.entities.get(slot));
            return entity.copied().unwrap_or(Entity::PLACEHOLDER);
        }
        self.find(bodies, id)
            .map_or(Entity::PLACEHOLDER, |i| bodies[i].entity)
    }
}

/// The lists [`update`] builds each tick, kept between ticks so that a tick allocates nothing once
/// they have grown to the scene's size. Scratch: each list is cleared before use, and the stored
/// pairs and warm starts are swapped in and out of `PhysicsWorld`, never read from here.
#[derive(Debug, Default)]
pub struct EventBuffers {
    roster: Roster,
    pairs: PairLists,
    warm_starts: WarmStartLists,
}

/// The lists that the touching pairs, their reports and the events are built in.
#[derive(Debug, Default)]
struct PairLists {
    /// This tick's touching pairs, in body order.
    touching: Vec<Touching>,
    /// Stored touching pairs of pairs the narrow phase skipped.
    kept: Vec<Touching>,
    /// Pairs that started or stopped touching.
    changes: Vec<(SimId, SimId, CollisionEventKind)>,
    /// The touching pairs stored before this tick (swapped out of the world).
    spare_touching: Vec<Touching>,
    /// Last tick's contact reports (swapped out of the reports given to [`update`]).
    previous_reports: Vec<ContactReport>,
    /// This tick's reports of the pairs the narrow phase looked at.
    fresh_reports: Vec<ContactReport>,
    /// Last tick's reports of the pairs kept as they were.
    carried_reports: Vec<ContactReport>,
}

/// The lists that the stored warm starts are built in.
#[derive(Debug, Default)]
struct WarmStartLists {
    /// This tick's impulses.
    next: Vec<WarmStart>,
    /// Stored impulses of pairs the narrow phase skipped.
    carried: Vec<WarmStart>,
    /// The warm starts stored before this tick (swapped out of the world).
    spare: Vec<WarmStart>,
}

/// What one tick's contacts leave behind, read by the events' two halves.
#[derive(Clone, Copy)]
struct TickContacts<'a> {
    bodies: &'a [SolverBody],
    manifolds: &'a [Manifold],
    points: &'a [PointResult],
    roster: &'a Roster,
}

/// Updates `world.touching`, `world.warm_starts` and `world.next_event_id`; writes this tick's
/// events into `events` and its touching pairs into `reports`, building its lists in `buffers`.
/// `reports` comes in holding last tick's reports (`CollisionEvents::contacts`), which give the
/// pairs the narrow phase skipped their normal. The touching pairs and events, and the stored
/// warm starts, share nothing they write: on `parallel` they are built on two of the pool's
/// threads, with the same result.
#[allow(clippy::too_many_arguments)]
pub fn update(
    params: &StepParams,
    bodies: &[SolverBody],
    manifolds: &[Manifold],
    points: &[PointResult],
    world: &mut PhysicsWorld,
    events: &mut Vec<CollisionEvent>,
    reports: &mut Vec<ContactReport>,
    buffers: &mut EventBuffers,
    parallel: bool,
) {
    events.clear();
    let EventBuffers {
        roster,
        pairs,
        warm_starts,
    } = buffers;
    std::mem::swap(&mut pairs.previous_reports, reports);
    reports.clear();
    // Nothing looked at this tick (every body at rest): what was stored stays exactly as it is
    // while every stored pair's bodies are still here.
    roster.fill(bodies);
    let roster = &*roster;
    if !manifolds.iter().any(|m| m.evaluated) && all_kept(bodies, roster, world) {
        carry_reports(
            bodies,
            roster,
            &world.touching,
            &pairs.previous_reports,
            reports,
        );
        return;
    }
    let tick = TickContacts {
        bodies,
        manifolds,
        points,
        roster,
    };
    let PhysicsWorld {
        touching,
        warm_starts: stored_warm_starts,
        next_event_id,
        ..
    } = world;
    let stored = StoredPairs {
        touching,
        next_event_id,
    };
    super::both(
        parallel,
        "before the contact events",
        || touching_and_events(params, &tick, stored, events, reports, pairs),
        || store_warm_starts(&tick, stored_warm_starts, warm_starts),
    );
}

impl<'a> TickContacts<'a> {
    /// Answers which stored pairs are kept as they are, asked in pair order.
    fn evaluated(&self) -> Evaluated<'a> {
        Evaluated::new(self.bodies, self.manifolds, self.roster)
    }
}

/// The stored touching pairs and the next event's id, which the events update.
struct StoredPairs<'a> {
    touching: &'a mut Vec<Touching>,
    next_event_id: &'a mut u64,
}

/// This tick's touching pairs and reports, and the events of the pairs that started or stopped
/// touching; replaces the stored touching pairs.
fn touching_and_events(
    params: &StepParams,
    tick: &TickContacts<'_>,
    stored: StoredPairs<'_>,
    events: &mut Vec<CollisionEvent>,
    reports: &mut Vec<ContactReport>,
    lists: &mut PairLists,
) {
    let TickContacts {
        bodies,
        manifolds,
        points,
        roster,
    } = *tick;
    let PairLists {
        touching,
        kept,
        changes,
        spare_touching,
        previous_reports,
        fresh_reports,
        carried_reports,
    } = lists;
    // A pair touches when a point is within `linear_slop`, or when the solver had to push it this
    // tick (a speculative contact that closed during the tick).
    let slop = params.settings.linear_slop;
    touching.clear();
    fresh_reports.clear();
    let mut cursor = 0;
    for m in manifolds {
        let results = &points[cursor..cursor + m.len as usize];
        cursor += m.len as usize;
        let touches = results
            .iter()
            .any(|c| c.separation <= slop || c.max_normal_impulse > 0.0);
        if m.evaluated && touches {
            let (a, b) = (&bodies[m.a as usize], &bodies[m.b as usize]);
            fresh_reports.push(ContactReport {
                a: a.sim_id,
                b: b.sim_id,
                entity_a: a.entity,
                entity_b: b.entity,
                normal: m.points[0].normal,
            });
            touching.push(Touching {
                a: a.sim_id,
                b: b.sim_id,
            });
        }
    }
    changes.clear();
    let mut evaluated = tick.evaluated();
    kept.clear();
    kept.extend(
        stored
            .touching
            .iter()
            .filter(|t| evaluated.kept(t.a, t.b))
            .copied(),
    );
    carry_reports(bodies, roster, kept, previous_reports, carried_reports);
    merge_by_key(fresh_reports, carried_reports, reports, |r| (r.a, r.b));
    // The pairs touching after this tick: this tick's and the kept ones. Every list here is in
    // pair order, so one walk along each answers whether a pair is in the other.
    merge_by_key(touching, kept, spare_touching, |t| (t.a, t.b));
    let pair = |t: &Touching| (t.a, t.b);
    let mut after = spare_touching.iter().map(pair).peekable();
    for t in stored.touching.iter() {
        while after.next_if(|&p| p < pair(t)).is_some() {}
        if after.peek() != Some(&pair(t)) {
            changes.push((t.a, t.b, CollisionEventKind::Ended));
        }
    }
    let mut before = stored.touching.iter().map(pair).peekable();
    for t in touching.iter() {
        while before.next_if(|&p| p < pair(t)).is_some() {}
        if before.peek() != Some(&pair(t)) {
            changes.push((t.a, t.b, CollisionEventKind::Started));
        }
    }
    std::mem::swap(stored.touching, spare_touching);

    changes.sort_unstable();
    for &(a, b, kind) in changes.iter() {
        events.push(CollisionEvent {
            tick: params.tick,
            a,
            b,
            entity_a: roster.entity(bodies, a),
            entity_b: roster.entity(bodies, b),
            kind,
            id: *stored.next_event_id,
        });
        *stored.next_event_id += 1;
    }
}

/// Last tick's reports (`previous`, in pair order) of the touching pairs `kept` (in pair order),
/// with their entities resolved from this tick's bodies, into `out`. A kept pair has a report
/// from the tick that last looked at it, carried every tick since; one without is left out. A
/// pair listed twice (two manifolds) takes its reports in order.
fn carry_reports(
    bodies: &[SolverBody],
    roster: &Roster,
    kept: &[Touching],
    previous: &[ContactReport],
    out: &mut Vec<ContactReport>,
) {
    out.clear();
    let mut reports = previous.iter().peekable();
    for t in kept {
        while reports.next_if(|r| (r.a, r.b) < (t.a, t.b)).is_some() {}
        if let Some(&report) = reports.next_if(|r| (r.a, r.b) == (t.a, t.b)) {
            out.push(ContactReport {
                entity_a: roster.entity(bodies, report.a),
                entity_b: roster.entity(bodies, report.b),
                ..report
            });
        }
    }
}

/// Whether every stored touching pair and warm start is kept as it is, on a tick whose narrow
/// phase evaluated nothing: then a pair is kept exactly when both its bodies are still here (a
/// pair with a manifold has both), so this asks only that, once per pair.
fn all_kept(bodies: &[SolverBody], roster: &Roster, world: &PhysicsWorld) -> bool {
    let pairs = world.touching.iter().map(|t| (t.a, t.b));
    let mut last = None;
    pairs
        .chain(world.warm_starts.iter().map(|w| (w.a, w.b)))
        .all(|pair| {
            if last == Some(pair) {
                return true;
            }
            last = Some(pair);
            roster.has(bodies, pair.0) && roster.has(bodies, pair.1)
        })
}

/// Keeps this tick's impulses, plus the stored ones of pairs the narrow phase skipped, in
/// `stored` (`PhysicsWorld::warm_starts`), built in `lists`.
fn store_warm_starts(
    tick: &TickContacts<'_>,
    stored: &mut Vec<WarmStart>,
    lists: &mut WarmStartLists,
) {
    let bodies = tick.bodies;
    let WarmStartLists {
        next,
        carried,
        spare,
    } = lists;
    next.clear();
    next.extend(tick.points.iter().map(|c| WarmStart {
        a: bodies[c.a as usize].sim_id,
        b: bodies[c.b as usize].sim_id,
        feature: c.feature,
        normal: c.normal_impulse,
        tangent: c.tangent_impulse,
    }));
    let mut evaluated = tick.evaluated();
    carried.clear();
    carried.extend(stored.iter().filter(|w| evaluated.kept(w.a, w.b)).copied());
    merge_by_key(next, carried, spare, |w| (w.a, w.b, w.feature));
    std::mem::swap(stored, spare);
}

/// `a` and `b` together into `out` (cleared first), sorted by `key`, in one merging pass. Both
/// must come sorted (this tick's pairs in body order, and the kept ones in the stored order).
fn merge_by_key<T: Copy, K: Ord>(a: &[T], b: &[T], out: &mut Vec<T>, key: impl Fn(&T) -> K) {
    debug_assert!(a.is_sorted_by_key(&key) && b.is_sorted_by_key(&key));
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if key(&b[j]) < key(&a[i]) {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}
