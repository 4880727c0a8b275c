//! Building the app a project runs, the same in every mode: the engine's plugins with the
//! project's settings, then [`SimpleGamePlugin`] with its main scene.
//!
//! This module must never run a tick.

use bevy::app::{App as BevyApp, Plugin};

use super::error::GameError;
use super::project::Project;
use crate::engine::App;
use crate::scene;

/// What every game needs besides the engine's own plugins: the main scene, loaded when the app is
/// built (before any tick, in `SceneId` order).
pub struct SimpleGamePlugin {
    /// The cooked main scene.
    pub scene: scene::CookedScene,
    /// Its name and cooked hash, kept as a resource for replays.
    pub identity: scene::SceneIdentity,
}

impl Plugin for SimpleGamePlugin {
    fn build(&self, app: &mut BevyApp) {
        use crate::state::{SimStateAppExt, SnapshotAppExt};
        app.insert_resource(self.identity.clone())
            .copy_in_snapshots::<scene::SceneIdentity>()
            .insert_resource(scene::ScenePresentation {
                camera: self.scene.settings.camera.unwrap_or_default(),
            })
            .register_presentation_component::<scene::Appearance>("Appearance");
        scene::spawn_scene(app.world_mut(), &self.scene);
    }
}

/// Builds the app a project runs: engine plugins with the project's settings, then its main scene.
/// Add the game's own plugin to the result, then call `setup`. The startup determinism check names
/// the main scene's first entity that uses each part below the project's mode.
pub fn build_app(project: &Project) -> Result<App, GameError> {
    let located = scene::LocatedScene::load(&project.root, &project.manifest.main_scene)?;
    let identity = scene::SceneIdentity::of(located.name.clone(), &located.cooked);
    let users = scene::parts::first_users([&located]);
    let mut app = App::new(project.runtime_settings());
    app.set_part_users(users);
    app.world_mut()
        .insert_resource(project.manifest.input.clone());
    app.world_mut().insert_resource(scene::SceneSource {
        file: project.root.join(&project.manifest.main_scene),
        pointers: located
            .cooked
            .entities
            .iter()
            .map(|e| (e.id, located.pointer(e.id).to_owned()))
            .collect(),
    });
    app.add_plugins(SimpleGamePlugin {
        scene: located.cooked,
        identity,
    });
    Ok(app)
}
