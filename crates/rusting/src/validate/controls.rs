//! Controllers whose input names the project does not bind.
//!
//! The engine's controllers read input by name only: a `PlatformerController` jumps on the `jump`
//! action and runs from the `move_x` / `move_y` axes, a `PlayerController` walks from `move_x` /
//! `move_y`. A scene entity with one of them in a project whose `rusting.json` binds none of a
//! name it reads would stand still when that input is pressed, so each such entity is a warning
//! (`CONTROLLER_INPUT_UNBOUND`) naming what is missing. An axis may be driven by an analog source
//! without keys, so an axis declared with no keys counts as bound; an action with no key does
//! not. Bindings with more actions or axes than a player's input carries are a warning too
//! (`INPUT_BINDINGS_TOO_MANY`). This module must never run the game.

use rusting_engine::gameplay::{JUMP_ACTION, MOVE_X_AXIS, MOVE_Y_AXIS};
use rusting_engine::runtime::{InputBindings, PlayerTickInput};
use rusting_engine::scene::LocatedScene;

use super::finding::{Finding, Place};

/// Warns when `bindings` hold more actions or axes than a player's input carries
/// (`INPUT_BINDINGS_TOO_MANY`): `PlayerActions` offline and every session read a player's input
/// through its fixed form, so the names past the limit would read as never pressed.
pub fn check_bindings_fit(bindings: &InputBindings, findings: &mut Vec<Finding>) {
    if let Err(error) = PlayerTickInput::check_fits(bindings) {
        findings.push(Finding::warning(
            "INPUT_BINDINGS_TOO_MANY",
            Place::File {
                file: "rusting.json".to_owned(),
            },
            format!(
                "{error} (`PlayerActions` reads them as never pressed offline too, and \
                 `rusting run --net` refuses to start)"
            ),
        ));
    }
}

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
            let missing_actions: Vec<&str> = actions
                .iter()
                .copied()
                // An action bound to no key can never be pressed.
                .filter(|name| {
                    bindings
                        .actions
                        .get(*name)
                        .is_none_or(|keys| keys.is_empty())
                })
                .collect();
            let missing_axes: Vec<&str> = axes
                .iter()
                .copied()
                .filter(|name| !bindings.axes.contains_key(*name))
                .collect();
            let missing: Vec<String> = missing_actions
                .iter()
                .map(|name| format!("the action `{name}`"))
                .chain(missing_axes.iter().map(|name| format!("the axis `{name}`")))
                .collect();
            if missing.is_empty() {
                continue;
            }
            let user = scene.user(entity);
            let named = if user.name.is_empty() {
                format!("entity {}", user.scene_id)
            } else {
                format!("entity {} `{}`", user.scene_id, user.name)
            };
            let listed = match missing.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            findings.push(Finding::warning(
                "CONTROLLER_INPUT_UNBOUND",
                Place::entity(&user),
                format!(
                    "{named}: this {controller} reads {listed}, which rusting.json's `input` \
                     does not declare, so that input never moves it; add {} to `input`, for \
                     example `\"input\": {}` (docs/input.md)",
                    if missing.len() == 1 { "it" } else { "them" },
                    example(&missing_actions, &missing_axes)
                ),
            ));
        }
    }
}

/// The `input` section that binds `actions` and `axes` to the keys the starter uses.
fn example(actions: &[&str], axes: &[&str]) -> String {
    let keys = |name: &str| match name {
        MOVE_X_AXIS => r#"{"negative": ["ArrowLeft"], "positive": ["ArrowRight"]}"#,
        MOVE_Y_AXIS => r#"{"negative": ["ArrowDown"], "positive": ["ArrowUp"]}"#,
        _ => r#"["Space"]"#,
    };
    let section = |names: &[&str]| {
        names
            .iter()
            .map(|name| format!("\"{name}\": {}", keys(name)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !actions.is_empty() {
        parts.push(format!("\"actions\": {{{}}}", section(actions)));
    }
    if !axes.is_empty() {
        parts.push(format!("\"axes\": {{{}}}", section(axes)));
    }
    format!("{{{}}}", parts.join(", "))
}
