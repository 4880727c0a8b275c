//! Lints a crate directory and prints its findings: `cargo run -p rusting_lint --example lint_dir -- <crate dir>`.

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    match rusting_lint::lint_crate(std::path::Path::new(&dir)) {
        Ok(report) => {
            for system in &report.fixed_systems {
                println!("fixed system: {system}");
            }
            if std::env::var_os("LINT_VERBOSE").is_some() {
                for function in &report.fixed_functions {
                    println!("fixed function: {function}");
                }
            }
            for finding in &report.findings {
                println!("{finding}");
            }
            println!(
                "{} files, {} findings",
                report.files.len(),
                report.findings.len()
            );
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    }
}
