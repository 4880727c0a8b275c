//! The lint on real code: the starter template and the engine itself must come out clean.

use std::path::Path;

use rusting_lint::lint_crate;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Fails if the starter project that `rusting new` writes has a finding, or if the lint stops
/// seeing its fixed systems.
#[test]
fn the_starter_template_is_clean() {
    let report = lint_crate(&repository().join("crates/rusting/templates/starter")).unwrap();
    assert_eq!(report.files, ["src/game.rs", "src/main.rs"]);
    assert_eq!(
        report.fixed_systems,
        ["src/game.rs: spin", "src/game.rs: respawn_fallen_players"]
    );
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
}

/// Fails if the engine's fixed code (gameplay systems, the CPU solver and what they call) has a
/// finding, or if the lint stops reaching the gameplay systems and the solver.
#[test]
fn the_engine_fixed_code_is_clean() {
    let report = lint_crate(repository()).unwrap();
    for system in [
        "src/gameplay/player.rs: player_move",
        "src/gameplay/platformer.rs: platformer_move",
        "src/gameplay/tween.rs: advance_tweens",
        "src/physics/plugin.rs: cpu_physics_step",
    ] {
        assert!(
            report.fixed_systems.iter().any(|s| s == system),
            "{system} not found in {:?}",
            report.fixed_systems
        );
    }
    assert!(
        report
            .fixed_functions
            .iter()
            .any(|f| f == "src/physics/cpu/mod.rs: step"),
        "{:?}",
        report.fixed_functions
    );
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
}

/// Fails if a missing source directory panics instead of naming the directory.
#[test]
fn a_missing_source_directory_is_an_error() {
    let error = lint_crate(&repository().join("no-such-crate")).unwrap_err();
    assert!(error.to_string().contains("no-such-crate"), "{error}");
}
