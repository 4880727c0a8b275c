//! Paths as deadline jobs: A* on the grid, requested by agents and delivered three ticks later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use bevy::prelude::IVec2;
use rusting_engine::prelude::*;

use crate::map::GridMap;

/// What an agent asks for: a path on `map` from `from` to `to`.
#[derive(Clone, Debug, PartialEq, SimState)]
pub struct PathQuery {
    /// The map (shared, immutable).
    pub map: Arc<GridMap>,
    /// Where the agent stands.
    pub from: IVec2,
    /// Where it wants to go.
    pub to: IVec2,
}

/// A* on the grid: a pure function of its query, so it may run on any thread at any time.
pub struct FindPath;

impl JobKind for FindPath {
    const NAME: &'static str = "FindPath";
    type Input = PathQuery;
    /// The cells after `from` up to `to`; empty when `to` cannot be reached.
    type Output = Vec<IVec2>;

    fn run(query: &PathQuery) -> Vec<IVec2> {
        a_star(&query.map, query.from, query.to)
    }
}

/// The shortest 4-connected path from `from` to `to` (excluding `from`), ties broken by cell
/// index so the same query always gives the same path.
pub fn a_star(map: &GridMap, from: IVec2, to: IVec2) -> Vec<IVec2> {
    if !map.open(from) || !map.open(to) {
        return Vec::new();
    }
    let n = map.cells();
    let mut cost = vec![u32::MAX; n];
    let mut came = vec![usize::MAX; n];
    let mut open = BinaryHeap::new();
    let estimate = |cell: IVec2| (cell - to).abs().element_sum() as u32;
    let start = map.index(from);
    cost[start] = 0;
    open.push(Reverse((estimate(from), 0u32, start)));
    while let Some(Reverse((_, spent, index))) = open.pop() {
        if spent > cost[index] {
            continue;
        }
        let cell = map.cell(index);
        if cell == to {
            let mut path = Vec::new();
            let mut at = index;
            while at != start {
                path.push(map.cell(at));
                at = came[at];
            }
            path.reverse();
            return path;
        }
        for next in map.neighbours(cell) {
            let k = map.index(next);
            let through = spent + 1;
            if through < cost[k] {
                cost[k] = through;
                came[k] = index;
                open.push(Reverse((through + estimate(next), through, k)));
            }
        }
    }
    Vec::new()
}
