//! Where a system's function is in the game's own sources, for a failure that happened in bevy's
//! code on the system's behalf (a parameter that failed validation, such as a `Res<Time>` whose
//! resource does not exist, panics in bevy's error handler, never in the game's file).
//!
//! A system's name is its function's path (`my_game::enemies::steer`): the crate, the modules,
//! the function. The module path leads to `src/enemies.rs` or `src/enemies/mod.rs` (the crate root
//! `src/main.rs` or `src/lib.rs` without modules), and the first line declaring `fn steer` there is
//! the place. This module only reads files under the crate directory; it must never write.

use std::path::Path;

/// The system bevy names in a message such as "Encountered an error in system `a::b::c`: ...".
pub fn system_in_message(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("in system `")?;
    let (system, _) = rest.split_once('`')?;
    (!system.is_empty()).then(|| system.to_owned())
}

/// A panic message as a game developer needs it: bevy's error for a system parameter keeps its
/// text but not the stack frames it appends (the result names the system and place already), and
/// a missing `Time` says what a Rusting game reads instead.
pub fn explained(message: &str) -> String {
    let frame = |line: &str| {
        let trimmed = line.trim_start();
        trimmed.starts_with("note: Some \"noisy\" backtrace lines")
            || trimmed
                .split_once(": ")
                .is_some_and(|(index, _)| index.parse::<usize>().is_ok() && line.starts_with(' '))
    };
    let mut kept: Vec<&str> = message.lines().filter(|line| !frame(line)).collect();
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    let mut text = kept.join("\n");
    if text.contains("Parameter `Res<Time") && text.contains("Resource does not exist") {
        text.push_str(
            "\nA Rusting app has no bevy `Time`: fixed systems read `Res<FrameTime>` \
             (`fixed_tick`, `fixed_delta`, `fixed_elapsed()`), which is the same on every run",
        );
    }
    text
}

/// `src/<module path>.rs:<line>:<column>` of the function `system` names, relative to
/// `crate_dir`, when the game's sources declare it there.
pub fn source_of_system(crate_dir: &Path, system: &str) -> Option<String> {
    // Generic arguments and closures do not change where the function is.
    let path = system.split('<').next()?.trim_end_matches("::{{closure}}");
    let mut segments: Vec<&str> = path.split("::").collect();
    if segments.len() < 2 {
        return None;
    }
    let function = segments.pop()?;
    let modules = &segments[1..];
    let candidates: Vec<String> = if modules.is_empty() {
        vec!["src/main.rs".to_owned(), "src/lib.rs".to_owned()]
    } else {
        let joined = modules.join("/");
        vec![format!("src/{joined}.rs"), format!("src/{joined}/mod.rs")]
    };
    let needle = format!("fn {function}");
    candidates.into_iter().find_map(|file| {
        let text = std::fs::read_to_string(crate_dir.join(&file)).ok()?;
        text.lines().enumerate().find_map(|(k, line)| {
            let at = line.find(&needle)?;
            let after = line[at + needle.len()..].chars().next();
            matches!(after, Some('(' | '<' | ' ')).then(|| format!("{file}:{}:{}", k + 1, at + 4))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if the module path stops leading to the file, a function whose name starts with the
    /// system's is taken for it, or bevy's message stops giving the system.
    #[test]
    fn a_system_is_found_by_its_module_path() {
        let dir =
            std::env::temp_dir().join(format!("rusting-system-source-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/enemies")).unwrap();
        std::fs::write(
            dir.join("src/enemies/mod.rs"),
            "use x;\n\nfn steer_all() {}\n\npub fn steer(time: Res<Time>) {}\n",
        )
        .unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {}\nfn tick() {}\n").unwrap();
        assert_eq!(
            source_of_system(&dir, "game::enemies::steer").as_deref(),
            Some("src/enemies/mod.rs:5:8")
        );
        assert_eq!(
            source_of_system(&dir, "game::tick").as_deref(),
            Some("src/main.rs:2:4")
        );
        assert_eq!(source_of_system(&dir, "game::enemies::flee"), None);
        assert_eq!(
            system_in_message(
                "Encountered an error in system `game::enemies::steer`: Parameter `Res<Time>` \
                 failed validation: Resource does not exist"
            )
            .as_deref(),
            Some("game::enemies::steer")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Fails if bevy's stack lines stay in the message, or the missing `Time` gets no advice.
    #[test]
    fn a_missing_time_is_explained_without_stack_lines() {
        let bevy = "Encountered an error in system `game::steer`: Parameter `Res<Time>` failed \
                    validation: Resource does not exist\nIf this is an expected state, wrap it.\n   \
                    1: bevy_ecs::system::system::System::run_without_applying_deferred\nnote: Some \
                    \"noisy\" backtrace lines have been filtered out.\n";
        let text = explained(bevy);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "Encountered an error in system `game::steer`: Parameter `Res<Time>` failed \
                 validation: Resource does not exist",
                "If this is an expected state, wrap it.",
                "A Rusting app has no bevy `Time`: fixed systems read `Res<FrameTime>` \
                 (`fixed_tick`, `fixed_delta`, `fixed_elapsed()`), which is the same on every run",
            ]
        );
        assert_eq!(explained("plain"), "plain");
    }
}
