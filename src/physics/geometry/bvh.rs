//! [`Bvh`]: a bounding-volume hierarchy of axis-aligned boxes, so a ray, a swept box or a box
//! overlap visits the items near it instead of every item.
//!
//! Built top down: each node's items are split at the median of their box centres along the
//! axis where those centres spread most (ties in centre broken by item index), down to leaves of
//! at most [`LEAF_SIZE`] items. [`Bvh::refit`] recomputes every node's box from new item boxes in
//! one pass from the leaves up, for items that moved but did not change.
//!
//! The tree only chooses which items a query tests: every answer built on it must depend on the
//! items' exact tests alone, never on the order the tree visits them in. Its box tests are
//! conservative (a box touching a ray at one point is visited). This module must never test an
//! item's shape.

use bevy::math::Vec3;

/// Most items a leaf holds.
pub const LEAF_SIZE: usize = 4;

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Bounds {
    /// The box holding nothing (grows to whatever it is joined with).
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// The smallest box holding both.
    pub fn join(&self, other: &Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// Whether the two boxes meet (touching counts).
    pub fn overlaps(&self, other: &Bounds) -> bool {
        self.min.x <= other.max.x
            && other.min.x <= self.max.x
            && self.min.y <= other.max.y
            && other.min.y <= self.max.y
            && self.min.z <= other.max.z
            && other.min.z <= self.max.z
    }

    /// The same box grown by `by` on every side.
    pub fn grown(&self, by: Vec3) -> Bounds {
        Bounds {
            min: self.min - by,
            max: self.max + by,
        }
    }

    /// The distance along unit-or-not `direction` at which the ray from `origin` enters the box,
    /// if it does within `[0, max]` (0 when it starts inside).
    pub fn ray_entry(&self, origin: Vec3, direction: Vec3, max: f32) -> Option<f32> {
        let (o, d) = (origin.to_array(), direction.to_array());
        let (lo, hi) = (self.min.to_array(), self.max.to_array());
        let (mut enter, mut leave) = (0.0f32, max);
        for k in 0..3 {
            if d[k] == 0.0 {
                if o[k] < lo[k] || o[k] > hi[k] {
                    return None;
                }
                continue;
            }
            let inverse = 1.0 / d[k];
            let (a, b) = ((lo[k] - o[k]) * inverse, (hi[k] - o[k]) * inverse);
            let (near, far) = if a <= b { (a, b) } else { (b, a) };
            enter = enter.max(near);
            leave = leave.min(far);
            if enter > leave {
                return None;
            }
        }
        Some(enter)
    }

    fn centre(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// The world box around this box of a frame placed at `position` with `axes` (the world
    /// directions of the frame's X, Y and Z): its centre moved, its half size taken along each
    /// world axis ([`turned_extent`]).
    pub fn placed(&self, position: Vec3, axes: &[Vec3; 3]) -> Bounds {
        let (centre, half) = (self.centre(), (self.max - self.min) * 0.5);
        let at = position + ((axes[0] * centre.x + axes[1] * centre.y) + axes[2] * centre.z);
        let extent = turned_extent(axes, half);
        Bounds {
            min: at - extent,
            max: at + extent,
        }
    }
}

/// The half size along each world axis of a box of half size `half` turned so that its local
/// axes point along `axes`: `sum_k |axes[k][c]| * half[k]`, summed in that order.
pub fn turned_extent(axes: &[Vec3; 3], half: Vec3) -> Vec3 {
    let e = |c: usize| {
        (axes[0][c].abs() * half.x + axes[1][c].abs() * half.y) + axes[2][c].abs() * half.z
    };
    Vec3::new(e(0), e(1), e(2))
}

/// One node: a leaf's items are `items[first..first + count]`; an inner node's children are
/// `first` and `first + 1` in `nodes`.
#[derive(Clone, Copy, Debug)]
struct Node {
    bounds: Bounds,
    first: u32,
    /// Items in a leaf; 0 for an inner node.
    count: u32,
}

/// A bounding-volume hierarchy over items `0..n`, each with a box.
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    nodes: Vec<Node>,
    items: Vec<u32>,
}

impl Bvh {
    /// A tree over `bounds` (item `i` has box `bounds[i]`).
    pub fn build(bounds: &[Bounds]) -> Bvh {
        let mut tree = Bvh {
            nodes: Vec::with_capacity(2 * bounds.len() / LEAF_SIZE + 1),
            items: (0..bounds.len() as u32).collect(),
        };
        if bounds.is_empty() {
            return tree;
        }
        tree.nodes.push(Node {
            bounds: Bounds::EMPTY,
            first: 0,
            count: 0,
        });
        // (node, first item, item count) still to split.
        let mut pending = vec![(0usize, 0usize, bounds.len())];
        while let Some((node, first, count)) = pending.pop() {
            let items = &mut tree.items[first..first + count];
            let mut all = Bounds::EMPTY;
            let mut centres = Bounds::EMPTY;
            for &item in items.iter() {
                let b = &bounds[item as usize];
                all = all.join(b);
                let c = b.centre();
                centres = centres.join(&Bounds { min: c, max: c });
            }
            if count <= LEAF_SIZE {
                tree.nodes[node] = Node {
                    bounds: all,
                    first: first as u32,
                    count: count as u32,
                };
                continue;
            }
            let spread = centres.max - centres.min;
            let axis = if spread.x >= spread.y && spread.x >= spread.z {
                0
            } else if spread.y >= spread.z {
                1
            } else {
                2
            };
            let half = count / 2;
            items.select_nth_unstable_by(half, |&a, &b| {
                let (ca, cb) = (
                    bounds[a as usize].centre()[axis],
                    bounds[b as usize].centre()[axis],
                );
                ca.total_cmp(&cb).then(a.cmp(&b))
            });
            let children = tree.nodes.len();
            tree.nodes[node] = Node {
                bounds: all,
                first: children as u32,
                count: 0,
            };
            for _ in 0..2 {
                tree.nodes.push(Node {
                    bounds: Bounds::EMPTY,
                    first: 0,
                    count: 0,
                });
            }
            pending.push((children, first, half));
            pending.push((children + 1, first + half, count - half));
        }
        tree
    }

    /// How many items the tree holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the tree holds no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Recomputes every node's box from `bounds`, the items' new boxes (the same items, moved).
    pub fn refit(&mut self, bounds: &[Bounds]) {
        // Children always come after their parent, so a pass from the last node up sees both
        // children of a node before the node.
        for index in (0..self.nodes.len()).rev() {
            let node = self.nodes[index];
            let joined = if node.count > 0 {
                let (first, count) = (node.first as usize, node.count as usize);
                self.items[first..first + count]
                    .iter()
                    .fold(Bounds::EMPTY, |all, &item| all.join(&bounds[item as usize]))
            } else {
                let first = node.first as usize;
                self.nodes[first].bounds.join(&self.nodes[first + 1].bounds)
            };
            self.nodes[index].bounds = joined;
        }
    }

    /// Calls `visit` with every item whose box `probe` says yes to, where `probe` is asked of
    /// every node's box on the way down and of each item's box at the leaves. `visit` returns
    /// whether to go on.
    pub fn visit(
        &self,
        item_bounds: &[Bounds],
        mut probe: impl FnMut(&Bounds) -> bool,
        mut visit: impl FnMut(u32) -> bool,
    ) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0usize];
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index];
            if !probe(&node.bounds) {
                continue;
            }
            if node.count > 0 {
                let (first, count) = (node.first as usize, node.count as usize);
                for &item in &self.items[first..first + count] {
                    if probe(&item_bounds[item as usize]) && !visit(item) {
                        return;
                    }
                }
            } else {
                stack.push(node.first as usize + 1);
                stack.push(node.first as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(at: Vec3) -> Bounds {
        Bounds {
            min: at - Vec3::splat(0.5),
            max: at + Vec3::splat(0.5),
        }
    }

    /// Fails if the tree loses an item, or visits fewer items than a brute-force box test finds.
    #[test]
    fn every_overlapping_item_is_visited() {
        let boxes: Vec<Bounds> = (0..500)
            .map(|i| {
                let f = i as f32;
                cube(Vec3::new(
                    (f * 7.3) % 40.0,
                    (f * 3.1) % 17.0,
                    (f * 5.7) % 23.0,
                ))
            })
            .collect();
        let mut tree = Bvh::build(&boxes);
        assert_eq!(tree.len(), 500);
        let probe = Bounds {
            min: Vec3::new(10.0, 2.0, 4.0),
            max: Vec3::new(20.0, 9.0, 12.0),
        };
        // What the tree visits for the probe, and what testing every box finds.
        let both = |tree: &Bvh, boxes: &[Bounds]| {
            let brute: Vec<u32> = (0..boxes.len() as u32)
                .filter(|&i| boxes[i as usize].overlaps(&probe))
                .collect();
            let mut seen = Vec::new();
            tree.visit(
                boxes,
                |b| b.overlaps(&probe),
                |i| {
                    seen.push(i);
                    true
                },
            );
            seen.sort_unstable();
            (seen, brute)
        };
        let (seen, brute) = both(&tree, &boxes);
        assert_eq!(seen, brute);
        assert!(!brute.is_empty());
        // Moved items: refitted, the tree still finds exactly the brute-force set.
        let moved: Vec<Bounds> = boxes
            .iter()
            .map(|b| Bounds {
                min: b.min + Vec3::X * 3.0,
                max: b.max + Vec3::X * 3.0,
            })
            .collect();
        tree.refit(&moved);
        let (seen, brute) = both(&tree, &moved);
        assert_eq!(seen, brute);
    }

    /// Fails if a ray along an axis (zero direction components) or one grazing a face misses a
    /// box it touches.
    #[test]
    fn rays_enter_boxes_they_touch() {
        let b = cube(Vec3::ZERO);
        assert_eq!(
            b.ray_entry(Vec3::new(-3.0, 0.0, 0.0), Vec3::X, 10.0),
            Some(2.5)
        );
        assert_eq!(
            b.ray_entry(Vec3::new(-3.0, 0.5, 0.0), Vec3::X, 10.0),
            Some(2.5)
        );
        assert_eq!(b.ray_entry(Vec3::new(-3.0, 0.6, 0.0), Vec3::X, 10.0), None);
        assert_eq!(b.ray_entry(Vec3::ZERO, Vec3::Y, 0.0), Some(0.0));
        assert_eq!(b.ray_entry(Vec3::new(-3.0, 0.0, 0.0), Vec3::X, 2.0), None);
    }
}
