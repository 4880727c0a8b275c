//! Helpers shared by the lint's integration tests.

#![allow(dead_code)]

use rusting_lint::{Finding, lint_source};

/// A game file whose plugin puts `fixed_step` into `FixedUpdate` and `frame_step` into `Update`,
/// followed by `systems` (which define both).
pub fn game(systems: &str) -> String {
    format!(
        "use bevy::prelude::*;\n\
         pub struct Game;\n\
         impl Plugin for Game {{\n\
         \x20   fn build(&self, app: &mut App) {{\n\
         \x20       app.add_systems(FixedUpdate, fixed_step)\n\
         \x20           .add_systems(Update, frame_step);\n\
         \x20   }}\n\
         }}\n\
         {systems}\n"
    )
}

/// The findings for one file.
pub fn lint(source: &str) -> Vec<Finding> {
    match lint_source("src/game.rs", source) {
        Ok(findings) => findings,
        Err(error) => panic!("{error}"),
    }
}

/// The codes found in one file, in order.
pub fn codes(source: &str) -> Vec<String> {
    lint(source)
        .iter()
        .map(|finding| finding.code.to_string())
        .collect()
}

/// The (code, line) pairs found in one file, in order.
pub fn codes_at(source: &str) -> Vec<(String, usize)> {
    lint(source)
        .iter()
        .map(|finding| (finding.code.to_string(), finding.line))
        .collect()
}
