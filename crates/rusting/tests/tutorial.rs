//! `docs/tutorial.md` never rots: its code is the example game's code, and every command it shows
//! prints what it shows.
//!
//! The tutorial marks what is checked with HTML comments (invisible when the page is rendered),
//! each followed by a fenced block:
//!
//! - `<!-- include: PATH#NAME -->`: the block is the region of `examples/coin-rush/PATH` between
//!   `// ANCHOR: NAME` and `// ANCHOR_END: NAME` (without `#NAME`: the whole file), anchor lines
//!   left out and the common indentation removed;
//! - `<!-- edit: PATH#NAME -->`: the block replaces that region in an edited copy of the game;
//! - `<!-- run -->` (on the game as it stands) or `<!-- run edited -->` (on the edited copy) or
//!   `<!-- run fresh -->` (in an empty directory): a `console` block whose `$ rusting ...` lines
//!   are run there, each followed by what it prints (standard output and error together, in the
//!   order they are written). In an expected line, `...` stands for any text.
//!
//! With `RUSTING_BLESS=1`, the test writes the files' regions and the commands' actual output into
//! the tutorial instead of failing (a block that already matches is left alone).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tutorial, from the workspace root.
const TUTORIAL: &str = "docs/tutorial.md";

/// The tutorial's game, from the workspace root.
const EXAMPLE: &str = "examples/coin-rush";

/// What one marker asks for.
#[derive(Clone, Debug, PartialEq)]
enum Marker {
    Include {
        path: String,
        anchor: Option<String>,
    },
    Edit {
        path: String,
        anchor: String,
    },
    Run(Place),
}

/// Where a `run` block's commands run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    Game,
    Edited,
    Fresh,
}

/// A marker and the fenced block after it: the block's lines `body` (0-based, into the tutorial's
/// lines) and their text.
struct Block {
    marker: Marker,
    marker_line: usize,
    body: std::ops::Range<usize>,
    text: String,
}

fn workspace() -> PathBuf {
    support::engine_checkout()
}

fn parse_marker(line: &str) -> Option<Result<Marker, String>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let split = |rest: &str| -> (String, Option<String>) {
        match rest.trim().split_once('#') {
            Some((path, anchor)) => (path.to_owned(), Some(anchor.to_owned())),
            None => (rest.trim().to_owned(), None),
        }
    };
    if let Some(rest) = inner.strip_prefix("include:") {
        let (path, anchor) = split(rest);
        return Some(Ok(Marker::Include { path, anchor }));
    }
    if let Some(rest) = inner.strip_prefix("edit:") {
        let (path, anchor) = split(rest);
        return Some(match anchor {
            Some(anchor) => Ok(Marker::Edit { path, anchor }),
            None => Err(format!("`{line}`: an edit names a region (PATH#NAME)")),
        });
    }
    match inner {
        "run" => Some(Ok(Marker::Run(Place::Game))),
        "run edited" => Some(Ok(Marker::Run(Place::Edited))),
        "run fresh" => Some(Ok(Marker::Run(Place::Fresh))),
        _ if inner.starts_with("run") => Some(Err(format!("`{line}`: unknown run marker"))),
        _ => None,
    }
}

/// Every marked block of the tutorial, in order.
fn blocks(tutorial: &str) -> Vec<Block> {
    let lines: Vec<&str> = tutorial.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(marker) = parse_marker(lines[i]) else {
            i += 1;
            continue;
        };
        let marker = marker.unwrap_or_else(|e| panic!("{TUTORIAL}:{}: {e}", i + 1));
        let fence = (i + 1..lines.len())
            .find(|&j| !lines[j].trim().is_empty())
            .filter(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("{TUTORIAL}:{}: a marker is followed by a block", i + 1));
        let end = (fence + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("{TUTORIAL}:{}: the block is closed", fence + 1));
        let body = fence + 1..end;
        let text = lines[body.clone()]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        found.push(Block {
            marker,
            marker_line: i + 1,
            body,
            text,
        });
        i = end + 1;
    }
    found
}

fn is_anchor(line: &str) -> bool {
    line.trim_start().starts_with("// ANCHOR")
}

/// The lines of `file` (0-based, half-open) between the anchor lines of `name`.
fn region(file: &str, name: &str, source: &str) -> std::ops::Range<usize> {
    let lines: Vec<&str> = source.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == format!("// ANCHOR: {name}"))
        .unwrap_or_else(|| panic!("{file} has no `// ANCHOR: {name}`"));
    let end = (start..lines.len())
        .find(|&j| lines[j].trim() == format!("// ANCHOR_END: {name}"))
        .unwrap_or_else(|| panic!("{file} has no `// ANCHOR_END: {name}`"));
    start + 1..end
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// What an include of `anchor` (or the whole file) in `source` shows.
fn included(file: &str, source: &str, anchor: Option<&str>) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let range = anchor.map_or(0..lines.len(), |name| region(file, name, source));
    let kept: Vec<&str> = lines[range]
        .iter()
        .copied()
        .filter(|l| !is_anchor(l))
        .collect();
    let indent = kept
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indentation(l))
        .min()
        .unwrap_or(0);
    kept.iter()
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or("").trim_end()))
        .collect()
}

/// `source` with the region `anchor` replaced by `text`, indented as the region was.
fn edited(file: &str, source: &str, anchor: &str, text: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let range = region(file, anchor, source);
    let indent = lines[range.clone()]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indentation(l))
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines[..range.start].iter().map(|l| l.to_string()).collect();
    out.extend(text.lines().map(|l| {
        if l.is_empty() {
            String::new()
        } else {
            format!("{}{l}", " ".repeat(indent))
        }
    }));
    out.extend(lines[range.end..].iter().map(|l| l.to_string()));
    out.join("\n") + "\n"
}

/// Whether `actual` is what `expected` shows, where `...` in an expected line stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let pieces: Vec<&str> = expected.split("...").collect();
    if pieces.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

fn output_matches(expected: &str, actual: &str) -> bool {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    expected.len() == actual.len()
        && expected
            .iter()
            .zip(&actual)
            .all(|(e, a)| line_matches(e, a))
}

/// The `(command, expected output)` pairs of a console block.
fn commands(block: &Block) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for line in block.text.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            pairs.push((command.to_owned(), String::new()));
        } else {
            let (_, expected) = pairs.last_mut().unwrap_or_else(|| {
                panic!(
                    "{TUTORIAL}:{}: a console block starts with `$ `",
                    block.marker_line
                )
            });
            expected.push_str(line);
            expected.push('\n');
        }
    }
    pairs
}

/// Runs `command` (a `rusting ...` line) in `dir`, with standard output and error going to one
/// file, as they would to one terminal. Returns what it printed, trailing spaces removed.
fn run(command: &str, dir: &Path) -> String {
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(
        args.first(),
        Some(&"rusting"),
        "{TUTORIAL}: only `rusting` commands run: `{command}`"
    );
    let log = dir.join("..").join(format!(
        "output-{}.txt",
        dir.file_name().unwrap().to_string_lossy()
    ));
    let file = std::fs::File::create(&log).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args(&args[1..])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", support::shared_target())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .status()
        .expect("the rusting binary runs");
    let printed = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let _ = status;
    printed
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

/// A copy of the game at `to` that builds against this checkout, committed to a new git
/// repository (as a developer's project is, so `rusting validate` can see `Cargo.lock` tracked).
fn copy_game(to: &Path) {
    let from = workspace().join(EXAMPLE);
    copy_dir(&from, to);
    let manifest = to.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let engine = workspace().canonicalize().unwrap();
    let rewritten = text.replace(
        "path = \"../..\"",
        &format!("path = \"{}\"", engine.display()),
    );
    assert_ne!(
        text, rewritten,
        "{EXAMPLE}/Cargo.toml names the engine by `path = \"../..\"`"
    );
    std::fs::write(&manifest, rewritten).unwrap();
    commit(to);
}

fn commit(dir: &Path) {
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=Tutorial",
            "-c",
            "user.email=tutorial@example.com",
            "commit",
            "-q",
            "-m",
            "the tutorial's game",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?} in {}", dir.display());
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "target" || name == "cooked" || name.ends_with(".rply") {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&*name));
        } else {
            std::fs::copy(entry.path(), to.join(&*name)).unwrap();
        }
    }
}

/// `tutorial` with the bodies of its marked blocks `(index, text)` replaced.
fn rewritten(tutorial: &str, mut replacements: Vec<(usize, String)>) -> String {
    let found = blocks(tutorial);
    let mut lines: Vec<String> = tutorial.lines().map(str::to_owned).collect();
    replacements.sort_by_key(|(index, _)| std::cmp::Reverse(*index));
    for (index, text) in replacements {
        lines.splice(found[index].body.clone(), text.lines().map(str::to_owned));
    }
    lines.join("\n") + "\n"
}

fn blessing() -> bool {
    std::env::var("RUSTING_BLESS").is_ok_and(|v| v == "1")
}

/// Writes `replacements` (marked blocks by index, and their new bodies) into the tutorial, one
/// test at a time, through a temporary file.
fn bless(replacements: Vec<(usize, String)>) {
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let path = workspace().join(TUTORIAL);
    let tutorial = std::fs::read_to_string(&path).unwrap();
    let temporary = path.with_extension("md.tmp");
    std::fs::write(&temporary, rewritten(&tutorial, replacements)).unwrap();
    std::fs::rename(&temporary, &path).unwrap();
}

/// Every `include` block of the tutorial is its file's region, and every `edit` names a region
/// that exists. Fails when a line of the example's code changes and the tutorial does not (or the
/// other way round), or when an anchor is renamed.
#[test]
fn the_tutorials_code_is_the_example_games_code() {
    let tutorial = std::fs::read_to_string(workspace().join(TUTORIAL)).unwrap();
    let blocks = blocks(&tutorial);
    let mut replacements = Vec::new();
    let mut problems = Vec::new();
    let mut includes = 0;
    for (index, block) in blocks.iter().enumerate() {
        match &block.marker {
            Marker::Include { path, anchor } => {
                includes += 1;
                let file = format!("{EXAMPLE}/{path}");
                let source = std::fs::read_to_string(workspace().join(&file))
                    .unwrap_or_else(|e| panic!("{TUTORIAL}:{}: {file}: {e}", block.marker_line));
                let want = included(&file, &source, anchor.as_deref());
                if want != block.text {
                    problems.push(format!(
                        "{TUTORIAL}:{}: the block differs from {file}{}:\n--- tutorial\n{}--- file\n{want}",
                        block.marker_line,
                        anchor.as_ref().map(|a| format!("#{a}")).unwrap_or_default(),
                        block.text
                    ));
                    replacements.push((index, want));
                }
            }
            Marker::Edit { path, anchor } => {
                let file = format!("{EXAMPLE}/{path}");
                let source = std::fs::read_to_string(workspace().join(&file)).unwrap();
                region(&file, anchor, &source);
            }
            Marker::Run(_) => {}
        }
    }
    assert!(includes >= 8, "the tutorial shows the game's code");
    if blessing() && !replacements.is_empty() {
        bless(replacements);
        return;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every command the tutorial shows prints what the tutorial says it prints, on a copy of the
/// example game: `rusting run`, `determinism` (which must pass), `validate`, a recording, its
/// `replay info` and playback, a SyncTest (which must pass), and, on a copy broken as the tutorial
/// shows, `validate` and `determinism` naming the fault. Fails when any of these prints something
/// else, for instance when the game stops passing `rusting determinism`.
#[test]
fn the_tutorials_commands_print_what_it_shows() {
    let tutorial = std::fs::read_to_string(workspace().join(TUTORIAL)).unwrap();
    let blocks = blocks(&tutorial);
    let root = std::env::temp_dir().join(format!("rusting-tutorial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let game = root.join("game/coin-rush");
    let broken = root.join("edited/coin-rush");
    copy_game(&game);
    copy_game(&broken);
    let fresh = root.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let mut edits = false;
    let mut ran = Vec::new();
    let mut replacements = Vec::new();
    let mut problems = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let dir = match &block.marker {
            Marker::Edit { path, anchor } => {
                let file = broken.join(path);
                let source = std::fs::read_to_string(&file).unwrap();
                std::fs::write(&file, edited(path, &source, anchor, &block.text)).unwrap();
                edits = true;
                continue;
            }
            Marker::Include { .. } => continue,
            Marker::Run(Place::Game) => &game,
            Marker::Run(Place::Fresh) => &fresh,
            Marker::Run(Place::Edited) => {
                assert!(edits, "{TUTORIAL}:{}: edits come first", block.marker_line);
                &broken
            }
        };
        let mut actual = String::new();
        let mut matches = true;
        for (command, expected) in commands(block) {
            let printed = run(&command, dir);
            matches &= output_matches(&expected, &printed);
            if !output_matches(&expected, &printed) {
                problems.push(format!(
                    "{TUTORIAL}:{}: `{command}` printed\n{printed}instead of\n{expected}",
                    block.marker_line
                ));
            }
            actual.push_str(&format!("$ {command}\n{printed}"));
            ran.push((block.marker.clone(), command));
        }
        if !matches {
            replacements.push((index, actual));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let shown = |place: Place, start: &str| {
        ran.iter()
            .any(|(m, c)| *m == Marker::Run(place) && c.starts_with(start))
    };
    assert!(shown(Place::Game, "rusting determinism ."));
    assert!(shown(Place::Game, "rusting validate ."));
    assert!(shown(Place::Edited, "rusting determinism ."));
    assert!(ran.iter().any(|(m, c)| *m == Marker::Run(Place::Game)
        && c.starts_with("rusting run .")
        && c.contains("--synctest")));
    if blessing() && !replacements.is_empty() {
        bless(replacements);
        return;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_expected_line_may_elide_text() {
    assert!(line_matches("tick ... differs", "tick 31 differs"));
    assert!(line_matches("a ... b ... c", "a 1 b 2 c"));
    assert!(!line_matches("a ... b ... c", "a 1 c 2 b"));
    assert!(!line_matches("tick ... differs", "tick 31 agrees"));
    assert!(line_matches("exact", "exact"));
    assert!(!line_matches("exact", "exactly"));
}
