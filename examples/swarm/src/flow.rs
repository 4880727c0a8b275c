//! A flow field built as a sliced task: a breadth-first search from a rally point that does a
//! fixed number of cells a tick, its whole state in the simulation.

use std::collections::VecDeque;
use std::sync::Arc;

use bevy::prelude::IVec2;
use rusting_engine::prelude::*;

use crate::map::GridMap;

/// Steps from every cell to the rally point (`u16::MAX`: not reached yet, or walled off).
#[derive(Clone, Debug, PartialEq, SimState)]
pub struct FlowField {
    /// The map it covers.
    pub map: Arc<GridMap>,
    /// The rally point.
    pub goal: IVec2,
    /// Steps to the goal, per cell in row order.
    pub steps: Vec<u16>,
    /// Cells reached whose neighbours are still to look at, in the order reached.
    pub frontier: VecDeque<u32>,
}

impl FlowField {
    /// A field about to spread from `goal`.
    pub fn new(map: Arc<GridMap>, goal: IVec2) -> Self {
        let mut steps = vec![u16::MAX; map.cells()];
        let mut frontier = VecDeque::new();
        if map.open(goal) {
            steps[map.index(goal)] = 0;
            frontier.push_back(map.index(goal) as u32);
        }
        FlowField {
            map,
            goal,
            steps,
            frontier,
        }
    }

    /// Cells the field reached.
    pub fn reached(&self) -> usize {
        self.steps.iter().filter(|&&s| s != u16::MAX).count()
    }
}

impl SlicedTask for FlowField {
    /// One cell of the search: its neighbours get their step counts.
    fn work(&mut self) -> Progress {
        let Some(index) = self.frontier.pop_front() else {
            return Progress::Done;
        };
        let cell = self.map.cell(index as usize);
        let here = self.steps[index as usize];
        let next: Vec<IVec2> = self.map.neighbours(cell).collect();
        for neighbour in next {
            let k = self.map.index(neighbour);
            if self.steps[k] == u16::MAX {
                self.steps[k] = here + 1;
                self.frontier.push_back(k as u32);
            }
        }
        if self.frontier.is_empty() {
            Progress::Done
        } else {
            Progress::More
        }
    }
}
