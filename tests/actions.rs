//! Named actions and axes from `rusting.json`, read per tick.

use std::path::Path;
use std::sync::Mutex;

use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use rusting_engine::game::project::Project;
use rusting_engine::runtime::{ActionName, Actions, RuntimeInput, SimSet};

#[path = "support/starter.rs"]
mod support;

/// A game's own action names.
enum Action {
    Jump,
}

impl ActionName for Action {
    fn action_name(&self) -> &str {
        match self {
            Action::Jump => "jump",
        }
    }
}

/// `(jump pressed, jump just pressed, jump just released, move_x)` per tick.
static SEEN: Mutex<Vec<(bool, bool, bool, f32)>> = Mutex::new(Vec::new());

fn watch(actions: Actions) {
    SEEN.lock().unwrap().push((
        actions.pressed(Action::Jump),
        actions.just_pressed("jump"),
        actions.just_released(Action::Jump),
        actions.axis("move_x"),
    ));
}

/// A project binding `jump` to Space and W, and `move_x` to A and D: an action is pressed while
/// any of its keys is down, just pressed on the tick the first goes down (not again when a second
/// joins), just released when the last comes up, and a key axis adds to the analog axis of the
/// same name, clamped. Unbound actions are never pressed; a key name `rusting.json` does not know
/// is refused with its line and column. Fails if actions read the frame instead of the tick, or
/// an action's second key counts as a new press.
#[test]
fn actions_read_bindings_from_the_project() {
    let dir = std::env::temp_dir().join(format!("rusting-actions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    let starter = Path::new(support::STARTER);
    std::fs::copy(
        starter.join("scenes/main.scene.json"),
        dir.join("scenes/main.scene.json"),
    )
    .unwrap();
    let manifest = r#"{"name": "actions", "main_scene": "scenes/main.scene.json", "input": {
        "actions": {"jump": ["Space", "KeyW"]},
        "axes": {"move_x": {"negative": ["KeyA"], "positive": ["KeyD"]}}}}"#;
    std::fs::write(dir.join("rusting.json"), manifest).unwrap();
    let project = Project::open(&dir).unwrap();
    let mut app = rusting_engine::game::build_app(&project).unwrap();
    app.add_plugins(support::starter_game::StarterGame);
    app.add_systems(
        FixedUpdate,
        watch.after(SimSet::Input).before(SimSet::Physics),
    );
    app.setup().unwrap();
    let step = app.fixed_step();
    let frames: [(&[KeyCode], f32); 5] = [
        (&[], 0.0),
        (&[KeyCode::KeyW], 0.0),
        (&[KeyCode::KeyW, KeyCode::Space, KeyCode::KeyD], -0.5),
        (&[KeyCode::Space, KeyCode::KeyA], -0.9),
        (&[], 0.0),
    ];
    for (keys, analog) in frames {
        let mut input = RuntimeInput::default();
        for key in keys {
            input.press(*key);
        }
        input.set_axis("move_x", analog);
        app.set_input(input);
        app.update(step);
    }
    let seen = SEEN.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            (false, false, false, 0.0),
            (true, true, false, 0.0),
            (true, false, false, 0.5),
            (true, false, false, -1.0),
            (false, false, true, 0.0),
        ]
    );

    std::fs::write(
        dir.join("rusting.json"),
        manifest.replace("\"KeyW\"", "\"KeyWW\""),
    )
    .unwrap();
    let error = Project::open(&dir).unwrap_err().to_string();
    assert!(
        error.contains("rusting.json:") && error.contains("KeyWW"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
