//! The game's own components in scene files: cooked as canonical JSON, loaded and checked by the
//! game against its registered types.

use std::path::Path;

use bevy::prelude::*;
use rusting_engine::engine::AppError;
use rusting_engine::game::project::Project;
use rusting_engine::scene::{SceneError, cook};

#[path = "support/starter.rs"]
mod support;
use support::starter_game::Spin;

/// A project like the starter whose scene's `Spin` is `spin` (JSON).
fn project_with_spin(tag: &str, spin: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rusting-game-types-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenes")).unwrap();
    let starter = Path::new(support::STARTER);
    std::fs::copy(starter.join("rusting.json"), dir.join("rusting.json")).unwrap();
    let scene = std::fs::read_to_string(starter.join("scenes/main.scene.json")).unwrap();
    let scene = scene.replace(r#""Spin": { "radians_per_second": 2.0 }"#, spin);
    std::fs::write(dir.join("scenes/main.scene.json"), scene).unwrap();
    dir
}

fn setup(dir: &Path) -> Result<rusting_engine::App, AppError> {
    let project = Project::open(dir).unwrap();
    let mut app = rusting_engine::game::build_app(&project).unwrap();
    app.add_plugins(support::starter_game::StarterGame);
    app.setup().map(|()| app)
}

/// The starter's scene holds its own `Spin` component: `cook` writes it as canonical JSON under
/// the entity's `game` components (keys sorted, pinned bytes), the app loads it into the gem at
/// setup and the gem turns. A value the type refuses, or a name no type is registered under, stops
/// setup with `SceneError` naming the scene file and the component's JSON pointer; a name that
/// cannot be a type is refused by `cook` itself. Fails if cook drops or reorders game components,
/// or the game loads them without checking.
#[test]
fn game_components_load_from_scenes() {
    let text = r#"{"format_version": 1, "entities": [{"id": 1, "name": "Top",
        "components": {"Spin": {"z": [1, 2.50], "radians_per_second": 2.0}}}]}"#;
    let cooked = cook(text, Path::new("spin.scene.json")).unwrap();
    let bytes: String = String::from_utf8(cooked.to_bytes())
        .unwrap()
        .split_whitespace()
        .collect();
    assert!(
        bytes.contains(r#""game":{"Spin":{"radians_per_second":2.0,"z":[1,2.5]}}"#),
        "{bytes}"
    );
    let refused = cook(
        &text.replace("\"Spin\"", "\"my-spin\""),
        Path::new("spin.scene.json"),
    );
    assert!(
        matches!(refused, Err(SceneError::UnknownComponent { ref name, .. }) if name == "my-spin"),
        "{refused:?}"
    );

    let starter = project_with_spin("good", r#""Spin": { "radians_per_second": 2.0 }"#);
    let mut app = setup(&starter).unwrap();
    let step = app.fixed_step();
    for _ in 0..30 {
        app.update(step);
    }
    let world = app.world_mut();
    let (spin, transform) = world.query::<(&Spin, &Transform)>().single(world).unwrap();
    assert_eq!(spin.radians_per_second, 2.0);
    assert!(transform.rotation.y.abs() > 0.4, "{transform:?}");

    let bad = project_with_spin("bad", r#""Spin": { "radians_per_second": "fast" }"#);
    match setup(&bad) {
        Err(AppError::Scene(SceneError::BadValue {
            file,
            pointer,
            reason,
        })) => {
            assert!(file.ends_with("scenes/main.scene.json"), "{file:?}");
            assert!(pointer.ends_with("/components/Spin"), "{pointer}");
            assert!(reason.contains("invalid type"), "{reason}");
        }
        Err(other) => panic!("expected a bad value, got {other}"),
        Ok(_) => panic!("expected a bad value, the app started"),
    }
    let unknown = project_with_spin("unknown", r#""Spinn": { "radians_per_second": 2.0 }"#);
    match setup(&unknown) {
        Err(AppError::Scene(error @ SceneError::UnknownComponent { .. })) => {
            let text = error.to_string();
            assert!(
                text.contains("main.scene.json: /entities/") && text.contains("Spinn"),
                "{text}"
            );
        }
        Err(other) => panic!("expected an unknown component, got {other}"),
        Ok(_) => panic!("expected an unknown component, the app started"),
    }
    for dir in [starter, bad, unknown] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
