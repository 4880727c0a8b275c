//! The level: a grid of open cells and walls, made once from a seed and shared, never changed,
//! by every path request (an immutable snapshot the jobs may read from any thread).

use std::sync::Arc;

use bevy::prelude::IVec2;
use rusting_engine::state::SimState;
use rusting_engine::state::StateHasher;

/// A grid map. Immutable once made: jobs hold it through an `Arc`, and its hash is a content id
/// computed once, so a request's input costs eight bytes to hash however large the map is.
#[derive(Clone, Debug)]
pub struct GridMap {
    /// Cells across.
    pub width: i32,
    /// Cells down.
    pub height: i32,
    walls: Vec<bool>,
    content: u64,
}

impl PartialEq for GridMap {
    fn eq(&self, other: &Self) -> bool {
        self.content == other.content
            && (self.width, self.height) == (other.width, other.height)
            && self.walls == other.walls
    }
}

impl SimState for GridMap {
    const NAME: &'static str = "GridMap";
    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u64(self.content);
    }
    fn visit_fields(&self, path: &str, out: &mut dyn FnMut(&str, String)) {
        out(path, format!("map {:016x}", self.content));
    }
}

impl GridMap {
    /// A `width` × `height` map with walls in broken rows and columns, the same for the same
    /// seed on every machine.
    pub fn generate(width: i32, height: i32, seed: u64) -> Arc<GridMap> {
        let mut walls = vec![false; (width * height) as usize];
        let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            // xorshift64*: a fixed sequence for a fixed seed.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        for y in (3..height - 3).step_by(6) {
            for x in 0..width {
                if next() % 7 != 0 {
                    walls[(y * width + x) as usize] = true;
                }
            }
        }
        for x in (5..width - 5).step_by(9) {
            for y in 0..height {
                if next() % 5 == 0 {
                    walls[(y * width + x) as usize] = true;
                }
            }
        }
        let mut hasher = StateHasher::new();
        hasher.u64(width as u64);
        hasher.u64(height as u64);
        for &wall in &walls {
            hasher.bool(wall);
        }
        Arc::new(GridMap {
            width,
            height,
            walls,
            content: hasher.finish(),
        })
    }

    /// Whether `cell` is on the map and not a wall.
    pub fn open(&self, cell: IVec2) -> bool {
        cell.x >= 0
            && cell.y >= 0
            && cell.x < self.width
            && cell.y < self.height
            && !self.walls[self.index(cell)]
    }

    /// The cell's index in row order.
    pub fn index(&self, cell: IVec2) -> usize {
        (cell.y * self.width + cell.x) as usize
    }

    /// The cell at row-order index `index`.
    pub fn cell(&self, index: usize) -> IVec2 {
        IVec2::new(index as i32 % self.width, index as i32 / self.width)
    }

    /// Cells on the map.
    pub fn cells(&self) -> usize {
        self.walls.len()
    }

    /// The open cell `k` steps (in row order, wrapping) from row-order index `from`.
    pub fn open_cell_near(&self, from: u64) -> IVec2 {
        let n = self.cells();
        let start = (from % n as u64) as usize;
        (0..n)
            .map(|k| self.cell((start + k) % n))
            .find(|&cell| self.open(cell))
            .unwrap_or(IVec2::ZERO)
    }

    /// The four neighbours of `cell` that are open, in a fixed order.
    pub fn neighbours(&self, cell: IVec2) -> impl Iterator<Item = IVec2> + '_ {
        [IVec2::X, IVec2::Y, IVec2::NEG_X, IVec2::NEG_Y]
            .into_iter()
            .map(move |step| cell + step)
            .filter(|&next| self.open(next))
    }
}
