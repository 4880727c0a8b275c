//! [`Softness`]: the coefficients of a soft constraint for one substep, shared by the contacts and
//! the joints.
//!
//! A soft constraint is a damped spring of a given frequency and damping ratio, solved implicitly
//! (Catto, *Solver2D*, 2024; Box2D v3's `b2MakeSoft`): the bias turns position error into a target
//! velocity, the mass scale softens the response, and the impulse scale lets part of the
//! accumulated impulse relax each pass. This module must never solve a constraint.

use std::f32::consts::TAU;

use super::batches::WideSoftness;
use super::lanes::Lanes;

/// A soft constraint's coefficients for one substep of length `h` (Box2D v3's `b2MakeSoft`).
#[derive(Clone, Copy, Debug)]
pub struct Softness {
    /// Bias velocity per unit of position error.
    pub bias_rate: f32,
    /// Scales the effective mass.
    pub mass_scale: f32,
    /// Scales the accumulated impulse that relaxes away.
    pub impulse_scale: f32,
}

impl Softness {
    /// The same coefficients in every lane.
    pub fn wide(self) -> WideSoftness {
        WideSoftness {
            bias_rate: Lanes::splat(self.bias_rate),
            mass_scale: Lanes::splat(self.mass_scale),
            impulse_scale: Lanes::splat(self.impulse_scale),
        }
    }

    /// The coefficients of a spring of `hertz` with `damping_ratio` for substeps of `h` seconds;
    /// a frequency of zero gives a rigid constraint without bias.
    pub fn new(hertz: f32, damping_ratio: f32, h: f32) -> Self {
        if hertz == 0.0 {
            // No spring: a rigid velocity constraint without bias.
            return Softness {
                bias_rate: 0.0,
                mass_scale: 1.0,
                impulse_scale: 0.0,
            };
        }
        let omega = TAU * hertz;
        let a1 = 2.0 * damping_ratio + h * omega;
        let a2 = h * omega * a1;
        let a3 = 1.0 / (1.0 + a2);
        Softness {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }
}
