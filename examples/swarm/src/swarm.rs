//! The swarm: agents that walk between random goals on paths computed as deadline jobs, a rally
//! point whose flow field is built a slice at a time, and a crowd measure computed in parallel
//! in job order.

use std::collections::BTreeMap;
use std::sync::Arc;

use bevy::prelude::*;
use rusting_engine::prelude::*;

use crate::flow::FlowField;
use crate::map::GridMap;
use crate::paths::{FindPath, PathQuery};

/// Agents in the swarm.
pub const AGENTS: usize = 500;
/// Ticks from a path request to its path: a simulation setting, the same on every machine.
pub const PATH_LATENCY: u64 = 3;
/// Flow-field cells searched each tick.
pub const FLOW_CELLS_PER_TICK: u32 = 48;
/// The most path requests the swarm makes in one tick.
pub const REQUESTS_PER_TICK: usize = 64;
/// Jobs the crowd measure is split into (a fixed number, never one per thread).
pub const CROWD_JOBS: usize = 8;

/// One agent: where it is, where it goes, its path and the request it waits for.
#[derive(Component, Clone, Debug, Default, PartialEq, SimState)]
pub struct Agent {
    /// Its cell.
    pub cell: IVec2,
    /// Its goal.
    pub goal: IVec2,
    /// The cells left to walk.
    pub path: Vec<IVec2>,
    /// The path request it waits for.
    pub waiting: Option<JobId>,
    /// Goals reached.
    pub arrivals: u32,
}

/// The level, shared with the jobs.
#[derive(Resource, Clone, Debug, PartialEq, SimState)]
pub struct Level {
    /// The map.
    pub map: Arc<GridMap>,
}

/// What the swarm did, as simulation state.
#[derive(Resource, Clone, Debug, Default, PartialEq, SimState)]
pub struct SwarmStats {
    /// Whether the agents were spawned.
    pub spawned: bool,
    /// Paths delivered.
    pub paths: u32,
    /// Goals no path reached.
    pub unreachable: u32,
    /// Flow fields finished.
    pub fields: u32,
    /// Cells the last flow field reached.
    pub reached: u32,
    /// The mean distance of the agents from their goals, in cells.
    pub spread: f32,
}

/// The swarm's plugin.
pub struct Swarm;

impl Plugin for Swarm {
    fn build(&self, app: &mut bevy::app::App) {
        app.insert_resource(Level {
            map: GridMap::generate(48, 48, 7),
        })
        .insert_resource(SwarmStats::default())
        .register_sim_resource::<Level>()
        .register_sim_resource::<SwarmStats>()
        .register_sim_component::<Agent>()
        .add_job_kind::<FindPath>(PATH_LATENCY)
        .add_sliced_task::<FlowField>(FLOW_CELLS_PER_TICK);
        app.add_systems(
            FixedUpdate,
            (spawn_agents, take_paths, walk, request_paths, rally, crowd)
                .chain()
                .after(SimSet::Tweens),
        );
    }
}

/// A random open cell, from the seed, the tick and a key (an agent's id).
fn random_cell(map: &GridMap, seed: &RandomSeed, tick: u64, key: u64) -> IVec2 {
    map.open_cell_near(seed.value(tick, RandomSeed::stream("swarm goal", key)))
}

/// Spawns the agents on the first tick.
fn spawn_agents(
    mut commands: Commands,
    mut stats: ResMut<SwarmStats>,
    level: Res<Level>,
    seed: Res<RandomSeed>,
) {
    if stats.spawned {
        return;
    }
    stats.spawned = true;
    for k in 0..AGENTS as u64 {
        let cell = random_cell(&level.map, &seed, 0, k);
        commands.spawn((
            Name::new(format!("Agent {k}")),
            Agent {
                cell,
                goal: cell,
                ..default()
            },
        ));
    }
}

/// The paths delivered this tick go to the agents that asked for them.
fn take_paths(
    jobs: Res<Jobs<FindPath>>,
    mut agents: Query<&mut Agent>,
    mut stats: ResMut<SwarmStats>,
) {
    if jobs.results().len() == 0 {
        return;
    }
    let delivered: BTreeMap<JobId, &Vec<IVec2>> = jobs.results().collect();
    for mut agent in &mut agents {
        let Some(path) = agent.waiting.and_then(|id| delivered.get(&id)) else {
            continue;
        };
        agent.path = (*path).clone();
        agent.waiting = None;
        stats.paths += 1;
        if agent.path.is_empty() {
            stats.unreachable += 1;
        }
    }
}

/// Agents step along their paths every other tick; one that arrives picks a new goal.
fn walk(
    time: Res<FrameTime>,
    seed: Res<RandomSeed>,
    level: Res<Level>,
    mut agents: Query<(&SimId, &mut Agent)>,
) {
    let tick = time.fixed_tick;
    if tick % 2 == 1 {
        return;
    }
    for (id, mut agent) in &mut agents {
        if agent.waiting.is_some() {
            continue;
        }
        if agent.path.is_empty() {
            if agent.cell == agent.goal {
                agent.arrivals += 1;
            }
            agent.goal = random_cell(&level.map, &seed, tick, id.0);
            continue;
        }
        let next = agent.path.remove(0);
        agent.cell = next;
    }
}

/// Agents with a goal and no path ask for one, at most [`REQUESTS_PER_TICK`] a tick, in
/// `SimId` order (never the query's order, which a restore that respawns entities may change):
/// which agents ask, and their requests' ids, are the same on every machine.
fn request_paths(
    level: Res<Level>,
    mut jobs: ResMut<Jobs<FindPath>>,
    mut agents: Query<(&SimId, &mut Agent)>,
) {
    let mut in_order: Vec<_> = agents.iter_mut().collect();
    in_order.sort_by_key(|(id, _)| **id);
    let mut asked = 0;
    for (_, mut agent) in in_order {
        if asked == REQUESTS_PER_TICK {
            break;
        }
        if agent.waiting.is_some() || !agent.path.is_empty() || agent.cell == agent.goal {
            continue;
        }
        let id = jobs.request(PathQuery {
            map: Arc::clone(&level.map),
            from: agent.cell,
            to: agent.goal,
        });
        agent.waiting = Some(id);
        asked += 1;
    }
}

/// The rally point's flow field: when one is finished, the next starts from a new point.
fn rally(
    time: Res<FrameTime>,
    seed: Res<RandomSeed>,
    level: Res<Level>,
    mut field: ResMut<Sliced<FlowField>>,
    mut stats: ResMut<SwarmStats>,
) {
    if let Some(done) = field.take_finished() {
        stats.fields += 1;
        stats.reached = done.reached() as u32;
    }
    if field.task().is_none() {
        let goal = random_cell(&level.map, &seed, time.fixed_tick, u64::MAX);
        field.start(FlowField::new(Arc::clone(&level.map), goal));
    }
}

/// The mean distance from agents to their goals, in `SimId` order, summed in [`CROWD_JOBS`]
/// parts combined in job order: the same bits on every thread count.
fn crowd(agents: Query<(&SimId, &Agent)>, mut stats: ResMut<SwarmStats>) {
    let mut in_order: Vec<_> = agents.iter().collect();
    in_order.sort_by_key(|(id, _)| **id);
    let distances: Vec<f32> = in_order
        .iter()
        .map(|(_, agent)| (agent.goal - agent.cell).as_vec2().length())
        .collect();
    if distances.is_empty() {
        return;
    }
    let total = parallel_reduce(
        CROWD_JOBS,
        |k| {
            let range = rusting_engine::jobs::job_range(distances.len(), CROWD_JOBS, k);
            distances[range].iter().sum::<f32>()
        },
        |a, b| a + b,
    )
    .unwrap_or(0.0);
    stats.spread = total / distances.len() as f32;
}
