//! How many rounds of runs `rusting determinism` makes: a race that shows in one run of several
//! slips through a check that runs each configuration once, so the runs are repeated, as often as
//! a time budget allows.
//!
//! A round runs every configuration at once, in lockstep. The first round runs the debug build
//! twice (its first run is the reference every run is held to); each later round runs every
//! configuration once more, held to the first round's reference lane. Without `--repeat`, rounds
//! go on while the rounds so far, plus one more of the same length, fit in [`TIME_BUDGET`], up to
//! [`MAX_ROUNDS`]: a game whose round takes two seconds gets all eight rounds (33 runs), one whose
//! round takes a minute gets one. With `--repeat N`, exactly `N` rounds run.
//!
//! Why these numbers: a race that shows in one run in four escapes `n` runs with probability about
//! `(3/4)^n`; one round (5 runs) misses it one time in four, four rounds (17 runs) one time in
//! 130, eight (33 runs) one time in 13,000. This module must never start a process.

use std::time::Duration;

/// The running time the repeated rounds may take, in all.
pub const TIME_BUDGET: Duration = Duration::from_secs(20);

/// The most rounds without `--repeat`.
pub const MAX_ROUNDS: u32 = 8;

/// How many rounds to run: fixed, or as the budget allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounds {
    /// Exactly this many (`--repeat N`).
    Fixed(u32),
    /// As many as fit in [`TIME_BUDGET`], at most [`MAX_ROUNDS`].
    Budgeted,
}

impl Rounds {
    /// Whether another round runs after `done` rounds that took `spent` in all, the last of
    /// them `last`.
    pub fn another(self, done: u32, spent: Duration, last: Duration) -> bool {
        match self {
            Rounds::Fixed(n) => done < n,
            Rounds::Budgeted => done < MAX_ROUNDS && spent + last <= TIME_BUDGET,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if a cheap round stops being repeated, or an expensive one is.
    #[test]
    fn cheap_rounds_repeat_within_the_budget() {
        let s = Duration::from_secs;
        assert!(Rounds::Budgeted.another(1, s(2), s(2)));
        assert!(Rounds::Budgeted.another(7, s(14), s(2)));
        assert!(!Rounds::Budgeted.another(8, s(16), s(2)));
        assert!(!Rounds::Budgeted.another(1, s(60), s(60)));
        assert!(!Rounds::Budgeted.another(4, s(18), s(4)));
        assert!(Rounds::Fixed(3).another(2, s(600), s(600)));
        assert!(!Rounds::Fixed(3).another(3, s(0), s(0)));
    }
}
