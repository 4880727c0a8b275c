//! The `rusting` binary as a user runs it.

use std::process::Command;

fn rusting(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rusting"))
        .args(args)
        .output()
        .expect("the rusting binary runs")
}

#[test]
fn help_and_version_succeed_and_no_arguments_is_a_usage_error() {
    let help = rusting(&["--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: rusting"));

    let version = rusting(&["--version"]);
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("rusting {}", env!("CARGO_PKG_VERSION"))
    );

    let bare = rusting(&[]);
    assert_eq!(bare.status.code(), Some(2));
}
