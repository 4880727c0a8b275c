//! Swarm: 500 agents walking a grid on A* paths computed as deadline jobs, a rally point's flow
//! field built a slice at a time, and a crowd measure summed in parallel in job order. The
//! example docs/jobs.md walks through; copy it for a game whose work outlasts a tick.
//!
//! Check it from this directory: `rusting determinism . --ticks 600 --repeat 2`

mod flow;
mod map;
mod paths;
mod swarm;

rusting_engine::rusting_game!(swarm::Swarm);
