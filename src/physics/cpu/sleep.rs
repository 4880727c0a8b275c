//! Sleep: bodies at rest stop simulating until something disturbs them.
//!
//! A body's sleep counter (in [`PhysicsWorld`]) counts the ticks it has spent below both sleep
//! speeds. Bodies in contact or held by a joint form islands (union-find over the manifolds, in
//! pair order, and the joints' links); an island
//! falls asleep when every body in it has counted `SLEEP_STEPS`, so a stack sleeps as one and never
//! half of it. A sleeping body wakes when a moving body comes within its bounds, and then every
//! sleeping body whose bounds touch it wakes too, so the whole stack responds to the hit. Sleeping
//! bodies keep their place, with zero velocity.
//!
//! This module must never move a body.

use bevy::math::Vec3;

use super::contacts::Manifold;
use super::{SolverBody, StepParams};
use crate::physics::components::BodyKind;
use crate::physics::resources::SLEEP_STEPS;
use crate::physics::world::PhysicsWorld;
use crate::runtime::sim_math::dot3;
use crate::state::SimId;

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grand = parent[parent[i as usize] as usize];
        parent[i as usize] = grand;
        i = grand;
    }
    i
}

/// Joins the sets of `a` and `b`; the lower root becomes the parent, so the result does not
/// depend on the order of calls beyond the pair order itself.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (low, high) = (ra.min(rb), ra.max(rb));
        parent[high as usize] = low;
    }
}

/// Whether a moving body (awake dynamic, or kinematic and moving) is near, or joined to, a
/// sleeping one: whether this tick wakes anything. `pairs` needs only the pairs with a moving
/// body (`broad_phase::Scope::NearMovers`); [`wake_touched`] then needs every pair.
pub fn any_disturbed(bodies: &[SolverBody], pairs: &[(u32, u32)], links: &[(u32, u32)]) -> bool {
    pairs.iter().chain(links).any(|&(a, b)| {
        let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
        (ba.sleeping && bb.moves()) || (bb.sleeping && ba.moves())
    })
}

/// Wakes sleeping bodies that a moving body reaches, and everything sleeping that touches them;
/// returns their indices in `woken`, ascending.
///
/// The caller has already found, with [`any_disturbed`], that something wakes: this walks every
/// pair, so it is worth calling only then (on a tick that wakes nothing it would find nothing).
pub fn wake_touched(
    bodies: &mut [SolverBody],
    pairs: &[(u32, u32)],
    links: &[(u32, u32)],
    world: &mut PhysicsWorld,
    buffers: &mut IslandBuffers,
    woken: &mut Vec<u32>,
) {
    woken.clear();
    let IslandBuffers {
        parent, disturbed, ..
    } = buffers;
    parent.clear();
    parent.extend(0..bodies.len() as u32);
    // Sleeping bodies whose bounds touch, or that a joint holds together, form groups.
    for &(a, b) in pairs.iter().chain(links) {
        if bodies[a as usize].sleeping && bodies[b as usize].sleeping {
            union(parent, a, b);
        }
    }
    // A group is disturbed when one of its bodies is near, or joined to, an awake dynamic or moving
    // kinematic body.
    disturbed.clear();
    disturbed.resize(bodies.len(), false);
    for &(a, b) in pairs.iter().chain(links) {
        let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
        if ba.sleeping && bb.moves() {
            let root = find(parent, a);
            disturbed[root as usize] = true;
        }
        if bb.sleeping && ba.moves() {
            let root = find(parent, b);
            disturbed[root as usize] = true;
        }
    }
    for i in 0..bodies.len() as u32 {
        if bodies[i as usize].sleeping && disturbed[find(parent, i) as usize] {
            bodies[i as usize].sleeping = false;
            woken.push(i);
        }
    }
    for &i in woken.iter() {
        set_counter(world, bodies[i as usize].sim_id, 0);
    }
}

fn set_counter(world: &mut PhysicsWorld, body: SimId, value: u32) {
    match world
        .sleep_counters
        .binary_search_by_key(&body, |(id, _)| *id)
    {
        Ok(i) => world.sleep_counters[i].1 = value,
        Err(i) => world.sleep_counters.insert(i, (body, value)),
    }
}

/// The lists [`update`] and [`wake_touched`] build each tick, kept between ticks so that a tick
/// allocates nothing once they have grown (scratch: nothing here is read before it is rebuilt).
#[derive(Default)]
pub struct IslandBuffers {
    /// Union-find parents, one per body.
    parent: Vec<u32>,
    /// Whether each group (at its root) has a sleeping body that a moving one reaches.
    disturbed: Vec<bool>,
    /// The counters being built, swapped with `PhysicsWorld::sleep_counters` when done.
    counters: Vec<(SimId, u32)>,
    /// This tick's counter of each body, by body index.
    counts: Vec<u32>,
    /// The smallest counter of each island, at its root.
    island_min: Vec<u32>,
    /// The bodies that fall asleep this tick, ascending.
    falling: Vec<u32>,
}

/// Counts resting ticks and finds the islands that fall asleep, leaving their bodies in the
/// buffers for [`fall_asleep`]. Rebuilds `counters` (`PhysicsWorld::sleep_counters`) for the
/// dynamic bodies present, in `SimId` order. `involved` (ascending) holds every awake body: the
/// tick's involved bodies, or none on a tick at rest. It only reads the bodies, so it may run
/// beside the events' update.
pub fn update(
    params: &StepParams,
    bodies: &[SolverBody],
    involved: &[u32],
    manifolds: &[Manifold],
    links: &[(u32, u32)],
    counters: &mut Vec<(SimId, u32)>,
    buffers: &mut IslandBuffers,
) {
    let settings = &params.settings;
    let linear_limit = settings.sleep_linear_speed * settings.sleep_linear_speed;
    let angular_limit = settings.sleep_angular_speed * settings.sleep_angular_speed;
    let IslandBuffers {
        parent,
        counters: built,
        counts,
        island_min,
        falling,
        ..
    } = buffers;
    falling.clear();
    built.clear();
    let mut stored = counters.iter().peekable();
    counts.clear();
    counts.resize(bodies.len(), 0);
    for (index, body) in bodies.iter().enumerate() {
        while stored.peek().is_some_and(|(id, _)| *id < body.sim_id) {
            stored.next();
        }
        let previous = match stored.peek() {
            Some(&&(id, count)) if id == body.sim_id => count,
            _ => 0,
        };
        if body.kind != BodyKind::Dynamic {
            continue;
        }
        let count = if body.sleeping {
            previous
        } else if dot3(body.linear_velocity, body.linear_velocity) < linear_limit
            && dot3(body.angular_velocity, body.angular_velocity) < angular_limit
        {
            previous.saturating_add(1)
        } else {
            0
        };
        counts[index] = count;
        built.push((body.sim_id, count));
    }
    std::mem::swap(counters, built);
    if !settings.sleep_enabled {
        return;
    }

    parent.clear();
    parent.extend(0..bodies.len() as u32);
    let touching = manifolds.iter().filter(|m| m.len > 0).map(|m| (m.a, m.b));
    for (a, b) in touching.chain(links.iter().copied()) {
        if bodies[a as usize].is_awake_dynamic() && bodies[b as usize].is_awake_dynamic() {
            union(parent, a, b);
        }
    }
    // The smallest counter of each island, at its root.
    // Only awake bodies may fall asleep, and every one of them is involved in the tick.
    debug_assert_eq!(
        involved
            .iter()
            .filter(|&&i| bodies[i as usize].is_awake_dynamic())
            .count(),
        bodies.iter().filter(|b| b.is_awake_dynamic()).count(),
        "an awake body the tick did not involve"
    );
    island_min.clear();
    island_min.resize(bodies.len(), u32::MAX);
    for &i in involved {
        if bodies[i as usize].is_awake_dynamic() {
            let root = find(parent, i) as usize;
            island_min[root] = island_min[root].min(counts[i as usize]);
        }
    }
    falling.extend(involved.iter().copied().filter(|&i| {
        bodies[i as usize].is_awake_dynamic() && island_min[find(parent, i) as usize] >= SLEEP_STEPS
    }));
}

/// Puts to sleep, at rest, the bodies [`update`] found in islands that have all counted
/// `SLEEP_STEPS`.
pub fn fall_asleep(bodies: &mut [SolverBody], buffers: &IslandBuffers) {
    for &i in &buffers.falling {
        let body = &mut bodies[i as usize];
        body.sleeping = true;
        body.linear_velocity = Vec3::ZERO;
        body.angular_velocity = Vec3::ZERO;
    }
}
