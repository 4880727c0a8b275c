//! Controllers whose input names the project does not bind.
//!
//! The engine's controllers read input by name only: a `PlatformerController` jumps on the `jump`
//! action and runs from the `move_x` / `move_y` axes, a `PlayerController` walks from `move_x` /
//! `move_y`. A scene entity with one of them in a project whose `rusting.json` binds none of a
//! name it reads would stand still when that input is pressed, so each such entity is a warning
//! (`CONTROLLER_INPUT_UNBOUND`) naming what is missing. An axis may be driven by an analog source
//! without keys, so an axis declared with no keys counts as bound. This module must never run the
//! game.

use rusting_engine::gameplay::{JUMP_ACTION, MOVE_X_AXIS, MOVE_Y_AXIS};
use rusting_engine::runtime::InputBindings;
use rusting_engine::scene::LocatedScene;

use super::finding::{Finding, Place};

/// Warns for every controller in `scenes` that reads an action or axis `bindings` lacks.
pub fn check(bindings: &InputBindings, scenes: &[LocatedScene], findings: &mut Vec<Finding>) {
    for scene in scenes {
        for entity in &scene.cooked.entities {
            let components = &entity.components;
            let (controller, actions, axes): (&str, &[&str], &[&str]) =
                if components.platformer_controller.is_some() {
                    (
                        "PlatformerController",
                        &[JUMP_ACTION],
                        &[MOVE_X_AXIS, MOVE_Y_AXIS],
                    )
                } else if components.player_controller.is_some() {
                    ("PlayerController", &[], &[MOVE_X_AXIS, MOVE_Y_AXIS])
                } else {
                    continue;
                };
            let missing: Vec<String> = actions
                .iter()
                .filter(|name| !bindings.actions.contains_key(**name))
                .map(|name| format!("the action `{name}`"))
                .chain(
                    axes.iter()
                        .filter(|name| !bindings.axes.contains_key(**name))
                        .map(|name| format!("the axis `{name}`")),
                )
                .collect();
            if missing.is_empty() {
                continue;
            }
            findings.push(Finding::warning(
                "CONTROLLER_INPUT_UNBOUND",
                Place::entity(&scene.user(entity)),
                format!(
                    "this {controller} reads {}, which rusting.json's `input` does not bind, so \
                     nothing moves it that way; bind keys to them there, for example \
                     {{\"actions\": {{\"jump\": [\"Space\"]}}, \"axes\": {{\"move_x\": \
                     {{\"negative\": [\"ArrowLeft\"], \"positive\": [\"ArrowRight\"]}}}}}} \
                     (docs/input.md)",
                    missing.join(", ")
                ),
            ));
        }
    }
}
