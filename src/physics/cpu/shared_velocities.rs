//! [`SharedVelocities`]: the body velocities that the constraints of one colour read and write
//! from several threads at once.
//!
//! The colouring (`colouring`) guarantees that within one colour no two constraints, contact
//! batches or joints, name the same moving body, and only moving bodies (inverse mass above 0) are
//! ever written; so no velocity is written by one constraint while another reads or writes it.
//! The contact batches (`batches`) and the joints (`joints`) share this one type so that both
//! stand on the same rule. This module must never decide which constraints run together.

use std::marker::PhantomData;

use super::body_state::Velocity;
use super::lanes::{LANES, LaneVec3, Lanes};

/// Velocities shared by the lanes and threads of one colour.
///
/// The colouring guarantees that within one span no two lanes, of one batch or of two, name the
/// same moving body, and only moving bodies (inverse mass above 0) are ever written, so no
/// velocity is written by one lane while another reads or writes it.
#[derive(Clone, Copy)]
pub struct SharedVelocities<'a> {
    ptr: *mut Velocity,
    len: usize,
    _borrow: PhantomData<&'a mut [Velocity]>,
}

// SAFETY: see the type's documentation; every access is bounds-checked, and every span that runs
// on several threads is checked for disjoint writes when it is built (`check_parallel_spans`).
unsafe impl Send for SharedVelocities<'_> {}
// SAFETY: as above.
unsafe impl Sync for SharedVelocities<'_> {}

impl<'a> SharedVelocities<'a> {
    /// Shares `velocities` for one colour's constraints.
    pub fn new(velocities: &'a mut [Velocity]) -> Self {
        SharedVelocities {
            ptr: velocities.as_mut_ptr(),
            len: velocities.len(),
            _borrow: PhantomData,
        }
    }

    /// Slot `i`'s velocity.
    #[inline(always)]
    pub fn get(self, i: u32) -> Velocity {
        let i = i as usize;
        assert!(i < self.len);
        // SAFETY: in bounds; no other lane writes this body during the span.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes slot `i`'s velocity; only the one constraint of the colour that moves the body may.
    #[inline(always)]
    pub fn set(self, i: u32, v: Velocity) {
        let i = i as usize;
        assert!(i < self.len);
        // SAFETY: in bounds; this lane is the only one naming this moving body in the span.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// The linear and angular velocities of four bodies.
    #[inline(always)]
    pub fn gather(self, bodies: [u32; LANES]) -> (LaneVec3, LaneVec3) {
        let v = bodies.map(|i| self.get(i));
        (
            LaneVec3::from_vecs(v.map(|v| v.linear)),
            LaneVec3::from_vecs(v.map(|v| v.angular)),
        )
    }

    /// Writes back the velocities of the lanes whose body moves.
    #[inline(always)]
    pub fn scatter(
        self,
        bodies: [u32; LANES],
        inv_mass: Lanes,
        linear: LaneVec3,
        angular: LaneVec3,
    ) {
        let (inv_mass, linear, angular) =
            (inv_mass.to_array(), linear.to_vecs(), angular.to_vecs());
        for lane in 0..LANES {
            if inv_mass[lane] > 0.0 {
                self.set(
                    bodies[lane],
                    Velocity {
                        linear: linear[lane],
                        angular: angular[lane],
                    },
                );
            }
        }
    }
}
