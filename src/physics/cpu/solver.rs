//! Contact constraints: preparation, the soft-step velocity passes, and restitution.
//!
//! The solver is Box2D v3's "soft step" (Catto, *Solver2D*, 2024) in 3D. A tick is split into
//! `SOLVER_SUBSTEPS` substeps; each substep applies gravity, warm-starts the contacts, runs one
//! biased velocity pass, moves the bodies, then runs one relaxing pass without bias. That is
//! `SOLVER_ITERATIONS` (8) velocity passes a tick, always, with no early exit.
//!
//! Position correction is a soft constraint: a contact that overlaps pushes apart at a rate set by
//! a spring of `CONTACT_HERTZ` with damping ratio `CONTACT_DAMPING_RATIO`, capped at
//! `max_correction_speed`. The spring acts only in the biased pass and is relaxed away afterwards,
//! so correcting overlap does not leave velocity behind (no jitter, no extra bounce). The contact's
//! current gap is tracked inside the tick from how far its two anchor points have moved, so the
//! contacts found once per tick stay accurate through the substeps. A contact that is still open
//! lets the bodies approach by exactly the gap (speculative contact).
//!
//! Each point has a normal constraint and two friction constraints bounded by `friction * normal
//! impulse`; friction is solved in the relaxing pass only (friction that reacts to the bias
//! velocities feeds a stack's lean until it creeps; rapier makes the same choice). Impulses start
//! from last tick's values for the same feature (warm starting). After the substeps, one
//! restitution pass gives points that approached faster than `restitution_threshold`, and carried
//! load, the bounce velocity `-e * approach`.
//!
//! The manifolds are coloured (`colouring`) so that no two of a colour share a moving body, then
//! built four at a time into SIMD lanes (`jacobians`, `batches`). Every pass takes the colours in
//! order; the batches of one colour are independent, so they may run on several threads without
//! changing a bit. This module must never change which pairs touch.

use std::ops::Range;

use super::batches::{Batches, Pass, PassParams};
pub use super::body_state::{Displacement, PointResult, Velocity};
use super::colouring::{COLOURS, Colouring};
use super::jacobians::Sources;
use super::joints::kernels::JointPass;
use super::joints::{JOINT_DAMPING_RATIO, JOINT_HERTZ, JointScratch};
use super::lanes::Lanes;
use super::manifold::Manifold;
use super::softness::Softness;
use super::{Motion, SolverBody, StepParams, both, integrate, side_by_side};
use crate::physics::resources::{SOLVER_ITERATIONS, SOLVER_SUBSTEPS};
use crate::physics::world::PhysicsWorld;

/// Stiffness of the contact spring that removes overlap (Hz).
pub const CONTACT_HERTZ: f32 = 60.0;
/// Damping ratio of the contact spring.
pub const CONTACT_DAMPING_RATIO: f32 = 10.0;

const _: () = assert!(SOLVER_ITERATIONS == 2 * SOLVER_SUBSTEPS);

/// Velocities and displacements of every body during the solve, and the constraints in SIMD
/// layout (scratch).
#[derive(Default)]
pub struct SolveState {
    /// One slot per body (set for the tick's involved bodies), and a spare slot past the last
    /// for empty SIMD lanes.
    pub velocities: Vec<Velocity>,
    /// One slot per body (set for the involved bodies), and a spare slot.
    pub displacements: Vec<Displacement>,
    /// Which manifolds may be solved together.
    pub colouring: Colouring,
    /// The constraints, colour by colour, four manifolds a batch.
    pub batches: Batches,
    /// Per manifold, its stored warm starts in `PhysicsWorld::warm_starts`.
    pub warm_starts: Vec<Range<usize>>,
    /// The colours that hold a manifold or a joint this tick, in ascending order: the passes
    /// visit only these (an empty colour changes nothing, so skipping it keeps every bit, and a
    /// small scene does not pay for the colours it leaves empty).
    pub colours: Vec<usize>,
    /// The bodies the substeps move (awake dynamic and kinematic), by index: a sleeping or fixed
    /// body is left alone, so a world of sleeping bodies does not loop over them every substep.
    pub moving: Vec<u32>,
}

/// Colours the joints (`joints`: each one's two velocity slots) and the manifolds, and builds the
/// manifolds' constraints in SIMD layout, each warm-started with last tick's impulses for the same
/// feature.
pub fn prepare(
    bodies: &[SolverBody],
    motion: &[Motion],
    manifolds: &[Manifold],
    world: &PhysicsWorld,
    state: &mut SolveState,
    joints: &[(u32, u32)],
) {
    // The colouring and each manifold's stored warm starts are found from what the tick has
    // already built, and neither reads what the other writes: in a large world they are found
    // side by side.
    let parallel = side_by_side(bodies.len());
    let (colouring, warm_starts) = (&mut state.colouring, &mut state.warm_starts);
    both(
        parallel,
        "before colouring the contacts",
        || colouring.build(manifolds, joints, motion),
        || warm_start_ranges(bodies, manifolds, world, warm_starts),
    );
    let sources = Sources {
        bodies,
        motion,
        manifolds,
        stored: &world.warm_starts,
        warm: &state.warm_starts,
        spare: bodies.len() as u32,
    };
    state.batches.build(&state.colouring, &sources);
}

/// For every manifold, its range of `world.warm_starts` (both are in pair order, so one merge walk
/// finds them all).
fn warm_start_ranges(
    bodies: &[SolverBody],
    manifolds: &[Manifold],
    world: &PhysicsWorld,
    ranges: &mut Vec<Range<usize>>,
) {
    let stored = &world.warm_starts;
    let mut next = 0;
    ranges.clear();
    ranges.extend(manifolds.iter().map(|m| {
        let pair = (bodies[m.a as usize].sim_id, bodies[m.b as usize].sim_id);
        while next < stored.len() && (stored[next].a, stored[next].b) < pair {
            next += 1;
        }
        let start = next;
        while next < stored.len() && (stored[next].a, stored[next].b) == pair {
            next += 1;
        }
        start..next
    }));
}

/// Runs the substeps: gravity, warm start, biased pass, positions, relaxing pass; then restitution.
/// Moves the bodies, leaves their solved velocities in `bodies` and every point's impulses in
/// `results` (in manifold and point order). Only the `involved` bodies' slots of the velocities
/// and displacements are set (every body a manifold, a joint or a substep reaches is one).
pub fn solve(
    params: &StepParams,
    bodies: &mut [SolverBody],
    involved: &[u32],
    manifolds: &[Manifold],
    state: &mut SolveState,
    joints: &mut JointScratch,
    results: &mut Vec<PointResult>,
) {
    let h = params.dt / SOLVER_SUBSTEPS as f32;
    let joint_soft = Softness::new(JOINT_HERTZ, JOINT_DAMPING_RATIO, h);
    let joint_pass = |use_bias| JointPass {
        h,
        inv_h: 1.0 / h,
        soft: joint_soft,
        use_bias,
    };
    let (biased, relaxing) = (joint_pass(true), joint_pass(false));
    let soft = Softness::new(CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h).wide();
    let fixed = Softness::new(2.0 * CONTACT_HERTZ, CONTACT_DAMPING_RATIO, h).wide();
    let pass_params = PassParams {
        inv_h: Lanes::splat(1.0 / h),
        min_push: Lanes::splat(-params.settings.max_correction_speed),
        slop: Lanes::splat(params.settings.linear_slop),
    };
    // One slot per body and a spare past the last (for empty SIMD lanes and a joint's world end),
    // set for the involved bodies and the spare; the other slots are never read.
    let spare = bodies.len();
    state.velocities.resize(spare + 1, Velocity::default());
    state
        .displacements
        .resize(spare + 1, Displacement::default());
    for &i in involved {
        let body = &bodies[i as usize];
        state.velocities[i as usize] = Velocity {
            linear: body.linear_velocity,
            angular: body.angular_velocity,
        };
        state.displacements[i as usize] = Displacement::default();
    }
    state.velocities[spare] = Velocity::default();
    state.displacements[spare] = Displacement::default();
    state.colours.clear();
    state
        .colours
        .extend((0..=COLOURS).filter(|&c| state.batches.has_colour(c) || joints.has_colour(c)));
    integrate::moving(bodies, involved, &mut state.moving);
    let (velocities, displacements) = (&mut state.velocities, &mut state.displacements);
    let (batches, colours, moving) = (&mut state.batches, &state.colours, &state.moving);
    let colouring = &state.colouring;
    for _ in 0..SOLVER_SUBSTEPS {
        integrate::gravity(params, h, bodies, moving, velocities);
        for &colour in colours {
            joints.warm_start(colour, velocities, displacements);
            batches.warm_start(colour, velocities);
        }
        for &colour in colours {
            joints.solve(colour, velocities, displacements, &biased);
            let pass = Pass::Biased { soft, fixed };
            batches.solve(colour, velocities, displacements, pass_params, pass);
        }
        integrate::positions(h, bodies, moving, velocities, displacements);
        for &colour in colours {
            joints.solve(colour, velocities, displacements, &relaxing);
            batches.solve(colour, velocities, displacements, pass_params, Pass::Relax);
        }
    }
    for &colour in colours {
        batches.restitution(colour, velocities, -params.settings.restitution_threshold);
    }
    batches.results(manifolds, colouring, results);
    integrate::finish(bodies, moving, velocities, displacements);
}
