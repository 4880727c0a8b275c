//! `rusting run <project> --net N` and `--net-peers LIST --net-player H`: multiplayer runs.
//!
//! The game is built headless with the engine's `net` feature. With `--net N`, N peers of the
//! session start on this machine, each its own process on a free loopback port, every one with
//! the same input script unless `--peer-script HANDLE=FILE` gives a peer its own; when all have
//! confirmed `--ticks` ticks their hash reports are compared
//! tick by tick (the session itself compares every tenth), and the run passes only if every peer
//! ended well and all agree. With `--net-peers` and `--net-player` this machine plays one peer of
//! a session whose other peers run elsewhere (each started the same way with its own handle).
//! A desync is `NET_DESYNC`, named to the field by the peers; a peer that never answers or a
//! session that breaks is `NET_FAILED`. This module must never write inside the project except
//! through cargo's target directory.

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};

use rusting_engine::record::{StateHashReport, compare_reports};

use crate::exit::{Failure, Outcome};
use crate::game_build::{
    Build, Profile, check_project, check_script, result_path, run_for_summary,
};

/// Who plays the session.
pub enum Peers<'a> {
    /// This many peers, all on this machine.
    Local(usize),
    /// One peer of a session across machines: every player's address, and the handle played here.
    One {
        /// Addresses in handle order, comma-separated.
        peers: &'a str,
        /// The handle played here.
        player: usize,
    },
}

/// One multiplayer `rusting run`.
pub struct Request<'a> {
    /// The project directory.
    pub project: &'a Path,
    /// Confirmed ticks to play.
    pub ticks: Option<u64>,
    /// Every local peer's input script.
    pub script: Option<&'a Path>,
    /// `HANDLE=FILE`: a local peer's own script, in place of `script`.
    pub peer_scripts: &'a [String],
    /// Who plays.
    pub peers: Peers<'a>,
    /// Where to write the session replay (peer 0's with `Local`).
    pub session_out: Option<&'a Path>,
    /// Build in debug.
    pub debug: bool,
    /// The cargo target directory.
    pub target_dir: Option<&'a Path>,
}

/// Checks the request, builds the game and runs the session; `Ok` with what each peer said.
pub fn run(request: &Request) -> Result<String, Failure> {
    check_project(request.project)?;
    let Some(ticks) = request.ticks else {
        return Err(Failure::bad_input(
            "TICKS_REQUIRED",
            "a multiplayer run is headless and needs --ticks <n> (the confirmed ticks to play)",
        ));
    };
    check_script(request.script)?;
    match request.peers {
        Peers::Local(n) if !(2..=8).contains(&n) => {
            return Err(Failure::bad_input(
                "NET_INVALID",
                format!("--net {n}: a session on this machine has 2 to 8 peers"),
            ));
        }
        Peers::One { peers, player } => {
            let addresses: Option<Vec<SocketAddr>> = peers
                .split(',')
                .map(|address| address.trim().parse().ok())
                .collect();
            match addresses {
                Some(addresses) if (2..=8).contains(&addresses.len()) => {
                    if player >= addresses.len() {
                        return Err(Failure::bad_input(
                            "NET_INVALID",
                            format!(
                                "--net-player {player}: the session's {} players have handles 0 \
                                 to {}",
                                addresses.len(),
                                addresses.len() - 1
                            ),
                        ));
                    }
                }
                _ => {
                    return Err(Failure::bad_input(
                        "NET_INVALID",
                        format!(
                            "--net-peers {peers}: expected 2 to 8 addresses `ip:port`, \
                             comma-separated, in player order"
                        ),
                    ));
                }
            }
        }
        Peers::Local(_) => {}
    }
    let peer_scripts = peer_scripts(request)?;
    let build = Build {
        project: request.project,
        target_dir: request.target_dir,
        window: false,
        net: true,
    };
    let executable = crate::game_identity::build(&build, Profile::of(request.debug))?;
    let peer = |peers: String, player: usize, report: Option<PathBuf>| PeerRun {
        executable: executable.clone(),
        project: request.project.to_owned(),
        ticks,
        script: request.script.map(Path::to_owned),
        peers,
        player,
        report,
        session_out: request.session_out.map(Path::to_owned),
    };
    match request.peers {
        Peers::One { peers, player } => peer(peers.to_owned(), player, None).run(),
        Peers::Local(n) => {
            let addresses = free_loopback_addresses(n).map_err(|e| {
                Failure::new(
                    "NET_FAILED",
                    Outcome::BuildOrRun,
                    format!("cannot find {n} free loopback ports: {e}"),
                )
            })?;
            let list = addresses
                .iter()
                .map(SocketAddr::to_string)
                .collect::<Vec<_>>()
                .join(",");
            // Every peer of a deterministic game records the same replay: peer 0 writes it.
            let runs: Vec<PeerRun> = (0..n)
                .map(|k| PeerRun {
                    session_out: request.session_out.filter(|_| k == 0).map(Path::to_owned),
                    script: peer_scripts
                        .iter()
                        .find(|(handle, _)| *handle == k)
                        .map(|(_, script)| script.clone())
                        .or_else(|| request.script.map(Path::to_owned)),
                    ..peer(
                        list.clone(),
                        k,
                        Some(result_path(&format!("net-report-{k}"))),
                    )
                })
                .collect();
            let outcomes: Vec<Result<String, Failure>> = std::thread::scope(|scope| {
                let handles: Vec<_> = runs
                    .iter()
                    .map(|run| scope.spawn(move || run.run()))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle.join().unwrap_or_else(|_| {
                            Err(Failure::new(
                                "NET_FAILED",
                                Outcome::BuildOrRun,
                                "a peer's runner panicked",
                            ))
                        })
                    })
                    .collect()
            });
            let reports: Vec<Option<StateHashReport>> = runs
                .iter()
                .map(|run| {
                    let path = run.report.as_ref()?;
                    let report = StateHashReport::load(path).ok();
                    let _ = std::fs::remove_file(path);
                    report
                })
                .collect();
            let mut said = Vec::new();
            for (k, outcome) in outcomes.into_iter().enumerate() {
                match outcome {
                    Ok(summary) => said.push(summary),
                    Err(failure) => {
                        return Err(Failure {
                            message: format!("peer {k}: {}", failure.message),
                            ..failure
                        });
                    }
                }
            }
            agree(&reports, ticks)?;
            said.push(format!(
                "net: {n} peers on this machine agree on all {ticks} confirmed ticks"
            ));
            Ok(said.join("\n"))
        }
    }
}

/// The `--peer-script HANDLE=FILE` arguments, each checked: a handle of the session's (given once)
/// and a script that loads.
fn peer_scripts(request: &Request) -> Result<Vec<(usize, PathBuf)>, Failure> {
    let players = match request.peers {
        Peers::Local(n) => n,
        Peers::One { .. } if request.peer_scripts.is_empty() => return Ok(Vec::new()),
        Peers::One { .. } => {
            return Err(Failure::bad_input(
                "NET_INVALID",
                "--peer-script gives a script to a peer on this machine (with --net); a peer of \
                 --net-peers plays --script",
            ));
        }
    };
    let mut scripts: Vec<(usize, PathBuf)> = Vec::new();
    for argument in request.peer_scripts {
        let parsed = argument
            .split_once('=')
            .and_then(|(handle, file)| Some((handle.trim().parse::<usize>().ok()?, file)));
        let Some((handle, file)) = parsed.filter(|(_, file)| !file.is_empty()) else {
            return Err(Failure::bad_input(
                "NET_INVALID",
                format!(
                    "--peer-script {argument}: expected HANDLE=FILE, a player handle and an input \
                     script (`--peer-script 1=input/player2.json`)"
                ),
            ));
        };
        if handle >= players {
            return Err(Failure::bad_input(
                "NET_INVALID",
                format!(
                    "--peer-script {argument}: the session's {players} players have handles 0 to {}",
                    players - 1
                ),
            ));
        }
        if scripts.iter().any(|(given, _)| *given == handle) {
            return Err(Failure::bad_input(
                "NET_INVALID",
                format!("--peer-script {argument}: player {handle} already has a script"),
            ));
        }
        let file = PathBuf::from(file);
        check_script(Some(&file))?;
        scripts.push((handle, file));
    }
    Ok(scripts)
}

/// Fails unless every peer's report holds the same hashes.
fn agree(reports: &[Option<StateHashReport>], ticks: u64) -> Result<(), Failure> {
    let missing = |k: usize| {
        Failure::new(
            "NET_FAILED",
            Outcome::BuildOrRun,
            format!("peer {k} ended well but wrote no hash report"),
        )
    };
    let first = reports[0].as_ref().ok_or_else(|| missing(0))?;
    for (k, report) in reports.iter().enumerate().skip(1) {
        let report = report.as_ref().ok_or_else(|| missing(k))?;
        // Each peer's report ends with its world as it stopped, a few ticks past the last one
        // compared: only the ticks' hashes count.
        if let Some(tick) = compare_reports(first, report).and_then(|difference| difference.tick) {
            return Err(Failure::new(
                "NET_DESYNC",
                Outcome::Failed,
                format!(
                    "peers 0 and {k} hold different states after confirmed tick {tick} of \
                     {ticks} (the session compares every tenth tick, and reported nothing): \
                     compare their state with `rusting determinism` on this project"
                ),
            ));
        }
    }
    Ok(())
}

/// `n` loopback addresses whose ports were free a moment ago.
fn free_loopback_addresses(n: usize) -> std::io::Result<Vec<SocketAddr>> {
    let sockets = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()?;
    sockets.iter().map(UdpSocket::local_addr).collect()
}

/// One peer's process.
struct PeerRun {
    executable: PathBuf,
    project: PathBuf,
    ticks: u64,
    script: Option<PathBuf>,
    peers: String,
    player: usize,
    report: Option<PathBuf>,
    session_out: Option<PathBuf>,
}

impl PeerRun {
    fn run(&self) -> Result<String, Failure> {
        let path = |p: &Path| p.display().to_string();
        let mut env = vec![
            ("RUSTING_HEADLESS_TICKS", self.ticks.to_string()),
            ("RUSTING_NET_PEERS", self.peers.clone()),
            ("RUSTING_NET_PLAYER", self.player.to_string()),
        ];
        if let Some(script) = &self.script {
            env.push(("RUSTING_INPUT_SCRIPT", path(script)));
        }
        if let Some(report) = &self.report {
            env.push(("RUSTING_STATE_HASH_OUT", path(report)));
        }
        if let Some(out) = &self.session_out {
            env.push(("RUSTING_NET_SESSION_OUT", path(out)));
        }
        run_for_summary(
            &self.executable,
            &self.project,
            env,
            &format!("net-{}", self.player),
        )
    }
}
